#!/usr/bin/python3
"""The reference GCN of the Planetoid data's README, trained in PyTorch.

Usage: pytorch_reference.py [--data DIR] [--epochs N] [--lr X] [--seed S]
                            [--threads N] [--log FILE]

Kipf and Welling's 2-layer GCN as the reference results of the Planetoid
export describe it (and as examples/gcn.saga writes it, less the biases):
    A_hat = D^-1/2 (A + I) D^-1/2          (torch.sparse, COO)
    X     = row-normalised bag-of-words features
    h     = relu(A_hat @ (dropout(X, 0.5) @ W0))
    out   = A_hat @ (dropout(h, 0.5) @ W1)
    loss  = cross_entropy(out[train], y[train]) + 5e-4 * sum(W0^2) / 2
hidden 16, no bias, Glorot (uniform) weights, Adam lr 0.01, full batch.

--features dense (default) holds X as a dense [nodes, features] tensor, as
Saga does and as Kipf's PyTorch port (tkipf/pygcn) and PyG's gcn.py do:
dropout draws a mask over all of X and X @ W0 is a dense GEMM. --features
sparse holds X as a sparse COO tensor, as the original TensorFlow code
(tkipf/gcn) does: dropout acts on the stored nonzeros only (the same
distribution: a dropped zero stays zero) and X @ W0 is torch.sparse.mm.

Reads the Planetoid text form of examples/data/<name> (meta.txt, edges.txt,
features.txt, labels.txt, train/val/test.txt; examples/data/README.md).

An epoch is timed as `sagac train` times it (api/Trainer.cpp): the
training step (forward with dropout, loss, backward, Adam), then an
inference pass (dropout off, no autograd) and the train/val/test
accuracies. Prints the mean and median epoch time and the test accuracy of
the model after the last epoch; the last line, `RESULT key=value ...`, is
for bench/epoch.sh.

Needs torch and numpy: Debian's python3-torch and python3-numpy with
/usr/bin/python3, or a peers venv (bench/epoch.sh's PEERS). The data is
read and checked with NumPy first; without torch the script then says so
and exits 77 (skipped, bench/peers.py).
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import need  # noqa: E402

torch = None  # imported by main() once the data is read and checked


def read_ints(path):
    return np.loadtxt(path, dtype=np.int64, ndmin=1)


def load_planetoid(directory):
    meta = {}
    with open(os.path.join(directory, "meta.txt")) as f:
        for line in f:
            key, value = line.split()
            meta[key] = value
    n = int(meta["num_nodes"])
    nf = int(meta["num_features"])
    edges = np.loadtxt(os.path.join(directory, "edges.txt"), dtype=np.int64,
                       ndmin=2)
    feats = np.loadtxt(os.path.join(directory, "features.txt"), ndmin=2)
    x = np.zeros((n, nf), dtype=np.float32)
    x[feats[:, 0].astype(np.int64), feats[:, 1].astype(np.int64)] = feats[:, 2]
    labels = read_ints(os.path.join(directory, "labels.txt"))
    split = {name: read_ints(os.path.join(directory, name + ".txt"))
             for name in ("train", "val", "test")}
    nc = int(meta["num_classes"])

    def check(ok, what):
        if not ok:
            sys.exit(f"pytorch_reference.py: {directory}: {what}")
    check(edges.shape[1] == 2 and (len(edges) == 0 or (
        edges.min() >= 0 and edges.max() < n)),
        f"edges.txt: {edges.shape} endpoints outside 0..{n - 1}")
    check(labels.shape == (n,) and labels.min() >= 0 and labels.max() < nc,
          f"labels.txt: {labels.shape[0]} labels for {n} nodes, classes "
          f"{labels.min()}..{labels.max()} of {nc}")
    check(all(len(v) == 0 or (v.min() >= 0 and v.max() < n)
              for v in split.values()), "a split names a node outside "
          f"0..{n - 1}")
    print(f"read      {directory}: {n} nodes, {len(edges)} edges, {nf} "
          f"features ({len(feats)} nonzero), {nc} classes, "
          + ", ".join(f"{len(v)} {k}" for k, v in split.items()),
          flush=True)
    return meta, n, edges, x, labels, split


def normalized_adjacency(n, edges):
    """D^-1/2 (A + I) D^-1/2 with A symmetric (each line of edges.txt both
    ways), as a coalesced COO tensor."""
    loops = np.arange(n, dtype=np.int64)
    rows = np.concatenate([edges[:, 1], edges[:, 0], loops])
    cols = np.concatenate([edges[:, 0], edges[:, 1], loops])
    deg = np.bincount(rows, minlength=n).astype(np.float32)
    inv_sqrt = 1.0 / np.sqrt(deg)
    values = inv_sqrt[rows] * inv_sqrt[cols]
    return torch.sparse_coo_tensor(
        torch.from_numpy(np.stack([rows, cols])),
        torch.from_numpy(values.astype(np.float32)), (n, n)).coalesce()


def row_normalize(x):
    s = x.sum(axis=1, keepdims=True)
    s[s == 0] = 1
    return x / s


def gcn_class():
    """The model, a torch.nn.Module (made here: torch is imported only once
    the data is read)."""
    class GCN(torch.nn.Module):
        def __init__(self, nfeat, nhid, nclass, dropout):
            super().__init__()
            self.w0 = torch.nn.Parameter(torch.empty(nfeat, nhid))
            self.w1 = torch.nn.Parameter(torch.empty(nhid, nclass))
            torch.nn.init.xavier_uniform_(self.w0)
            torch.nn.init.xavier_uniform_(self.w1)
            self.dropout = dropout

        def forward(self, adj, x):
            if x.is_sparse:
                if self.training:
                    x = torch.sparse_coo_tensor(
                        x.indices(),
                        torch.nn.functional.dropout(x.values(), self.dropout),
                        x.shape)
                xw = torch.sparse.mm(x, self.w0)
            else:
                x = torch.nn.functional.dropout(x, self.dropout,
                                                self.training)
                xw = x @ self.w0
            h = torch.relu(torch.sparse.mm(adj, xw))
            h = torch.nn.functional.dropout(h, self.dropout, self.training)
            return torch.sparse.mm(adj, h @ self.w1)
    return GCN


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="examples/data/cora")
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--weight-decay", type=float, default=5e-4)
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--dropout", type=float, default=0.5)
    parser.add_argument("--features", choices=("dense", "sparse"),
                        default="dense")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--log", help="write one JSON line per epoch")
    args = parser.parse_args()

    t0 = time.perf_counter()
    meta, n, edges, x, labels, split = load_planetoid(args.data)
    reading = time.perf_counter() - t0
    global torch
    torch = need("torch", f"pytorch-{args.features}")  # not timed
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    t0 = time.perf_counter() - reading
    adj = normalized_adjacency(n, edges)
    x = torch.from_numpy(row_normalize(x))
    if args.features == "sparse":
        x = x.to_sparse().coalesce()
    y = torch.from_numpy(labels)
    idx = {k: torch.from_numpy(v) for k, v in split.items()}
    nclass = int(meta["num_classes"])
    load_s = time.perf_counter() - t0

    model = gcn_class()(x.shape[1], args.hidden, nclass, args.dropout)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)

    def accuracy(pred, which):
        return (pred[idx[which]] == y[idx[which]]).float().mean().item()

    log = open(args.log, "w") if args.log else None
    seconds = []
    for epoch in range(1, args.epochs + 1):
        start = time.perf_counter()
        model.train()
        opt.zero_grad()
        out = model(adj, x)
        loss = torch.nn.functional.cross_entropy(out[idx["train"]],
                                                 y[idx["train"]])
        loss = loss + args.weight_decay * model.w0.pow(2).sum() / 2
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            pred = model(adj, x).argmax(1)
        acc = {k: accuracy(pred, k) for k in ("train", "val", "test")}
        seconds.append(time.perf_counter() - start)
        if log:
            log.write(json.dumps({"epoch": epoch, "loss": round(loss.item(), 6),
                                  "train_acc": acc["train"],
                                  "val_acc": acc["val"],
                                  "test_acc": acc["test"],
                                  "seconds": round(seconds[-1], 6)}) + "\n")
    mean_ms = 1e3 * statistics.mean(seconds)
    median_ms = 1e3 * statistics.median(seconds)
    print(f"pytorch {torch.__version__}, {args.threads} thread(s), "
          f"{args.features} features; "
          f"data {args.data} loaded in {1e3 * load_s:.0f} ms")
    print(f"final (epoch {args.epochs}): loss {loss.item():.4f}  "
          f"train {acc['train']:.4f}  val {acc['val']:.4f}  "
          f"test accuracy {acc['test']:.4f}  ({mean_ms:.1f} ms/epoch, "
          f"median {median_ms:.1f})")
    print(f"RESULT system=pytorch-{args.features} threads={args.threads} "
          f"seed={args.seed} "
          f"epochs={args.epochs} mean_ms={mean_ms:.3f} "
          f"median_ms={median_ms:.3f} test_acc={acc['test']:.4f}")


if __name__ == "__main__":
    main()
