"""DGL's GIN for graph classification, the peer of bench/graphclass.sh:
the model of examples/gin-mutag.saga and gin-proteins.saga (4 GINConv
layers, 'sum' aggregation, eps fixed at 0, each an MLP of two linear layers
without bias, each followed by batch normalisation over the batch's
vertices and a ReLU; a SumPooling readout of every layer's output, the
input's too, each scored by its own linear layer, the scores summed after
dropout), as DGL's examples/pytorch/gin builds it, its BatchNorm1d with
track_running_stats=False as Saga's batch_norm (batch statistics in
evaluation too) and its linear layers before a batch norm without the bias
the norm cancels. Batches come from dgl.batch over per-graph DGLGraphs
(GraphDataLoader's collation), Adam with a step decay, and each epoch is
the same work as Saga's: the training steps, then train and test accuracy
in evaluation batches. Reads the TU folder itself (NumPy).

Prints one line per fold and a line
  RESULT system=dgl ... mean_ms=... median_ms=... acc_last=... acc_best=...
Usage: graphclass_dgl.py TU_FOLDER --epochs E --folds K --batch-size B
       [--hidden H] [--dropout P] [--lr-step N] [--threads T] [--seed S]
"""
import argparse
import glob
import os
import statistics
import sys
import time

import numpy as np


def load_tu(folder):
    (ind,) = glob.glob(os.path.join(folder, "*_graph_indicator.txt"))
    name = os.path.basename(ind)[:-len("_graph_indicator.txt")]
    p = lambda s: os.path.join(folder, f"{name}_{s}.txt")  # noqa: E731
    graph_of = np.loadtxt(ind, dtype=np.int64) - 1
    edges = np.loadtxt(p("A"), delimiter=",", dtype=np.int64) - 1
    labels = np.loadtxt(p("graph_labels"), dtype=np.int64)
    classes = np.unique(labels)
    y = np.searchsorted(classes, labels)
    node = np.loadtxt(p("node_labels"), dtype=np.int64)
    values = np.unique(node)
    x = np.eye(len(values), dtype=np.float32)[np.searchsorted(values, node)]
    offsets = np.concatenate([[0], np.cumsum(np.bincount(graph_of))])
    return name, offsets, edges, y, x


def folds_of(y, k, seed):
    rng = np.random.default_rng(seed)
    folds, nxt = [[] for _ in range(k)], 0
    for c in np.unique(y):
        members = np.flatnonzero(y == c)
        rng.shuffle(members)
        for g in members:
            folds[nxt].append(int(g))
            nxt = (nxt + 1) % k
    return [sorted(f) for f in folds]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--epochs", type=int, default=350)
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--lr-step", type=int, default=50)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    try:
        import dgl
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from dgl.nn import GINConv, SumPooling
    except ImportError as e:
        print(f"dgl skipped: {e}")
        return 0
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    name, offsets, edges, y, x = load_tu(args.folder)
    G = len(y)
    graph_of_edge = np.searchsorted(offsets, edges[:, 0], side="right") - 1
    order = np.argsort(graph_of_edge, kind="stable")
    edges, graph_of_edge = edges[order], graph_of_edge[order]
    edge_offsets = np.concatenate([[0], np.cumsum(np.bincount(graph_of_edge, minlength=G))])
    graphs = []
    for g in range(G):
        e = edges[edge_offsets[g]:edge_offsets[g + 1]] - offsets[g]
        d = dgl.graph((torch.from_numpy(e[:, 0]), torch.from_numpy(e[:, 1])),
                      num_nodes=int(offsets[g + 1] - offsets[g]))
        d.ndata["x"] = torch.from_numpy(x[offsets[g]:offsets[g + 1]])
        graphs.append(d)
    labels = torch.from_numpy(y)

    class MLP(nn.Module):
        def __init__(self, i, h):
            super().__init__()
            self.a = nn.Linear(i, h, bias=False)
            self.b = nn.Linear(h, h, bias=False)
            self.na = nn.BatchNorm1d(h, track_running_stats=False)
            self.nb = nn.BatchNorm1d(h, track_running_stats=False)

        def forward(self, h):
            return F.relu(self.nb(self.b(F.relu(self.na(self.a(h))))))

    class GIN(nn.Module):
        def __init__(self, i, h, c):
            super().__init__()
            self.convs = nn.ModuleList(
                [GINConv(MLP(i if k == 0 else h, h), "sum") for k in range(4)])
            self.scores = nn.ModuleList(
                [nn.Linear(i if k == 0 else h, c) for k in range(5)])
            self.pool = SumPooling()

        def forward(self, g, h):
            hs = [h]
            for conv in self.convs:
                hs.append(conv(g, hs[-1]))
            return sum(F.dropout(s(self.pool(g, v)), args.dropout, self.training)
                       for s, v in zip(self.scores, hs))

    def accuracy(model, ids):
        model.eval()
        right = 0
        with torch.no_grad():
            for lo in range(0, len(ids), 512):
                part = ids[lo:lo + 512]
                b = dgl.batch([graphs[i] for i in part])
                right += (model(b, b.ndata["x"]).argmax(1) ==
                          labels[part]).sum().item()
        return right / max(len(ids), 1)

    folds = folds_of(y, args.folds, args.seed)
    per_epoch, accs = [], []
    for k in range(args.folds):
        test = folds[k]
        train = sorted(g for j in range(args.folds) if j != k for g in folds[j])
        model = GIN(x.shape[1], args.hidden, int(y.max()) + 1)
        opt = torch.optim.Adam(model.parameters(), lr=args.lr)
        sched = torch.optim.lr_scheduler.StepLR(opt, args.lr_step, 0.5)
        rng = np.random.default_rng(args.seed + k)
        fold_acc = []
        for epoch in range(args.epochs):
            start = time.perf_counter()
            model.train()
            perm = rng.permutation(train)
            for lo in range(0, len(perm), args.batch_size):
                part = perm[lo:lo + args.batch_size]
                b = dgl.batch([graphs[i] for i in part])
                loss = F.cross_entropy(model(b, b.ndata["x"]), labels[part])
                opt.zero_grad()
                loss.backward()
                opt.step()
            sched.step()
            accuracy(model, train)
            fold_acc.append(accuracy(model, test))
            per_epoch.append(time.perf_counter() - start)
        accs.append(fold_acc)
        print(f"fold {k + 1}: test {fold_acc[-1]:.4f}", flush=True)
    mean = np.mean(np.array(accs), axis=0)
    print(f"RESULT system=dgl data={name} threads={args.threads} "
          f"epochs={args.epochs} folds={args.folds} "
          f"mean_ms={1e3 * statistics.mean(per_epoch):.3f} "
          f"median_ms={1e3 * statistics.median(per_epoch):.3f} "
          f"acc_last={mean[-1]:.4f} acc_best={mean.max():.4f} "
          f"best_epoch={int(mean.argmax()) + 1} dgl={dgl.__version__} "
          f"torch={torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
