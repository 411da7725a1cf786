#!/usr/bin/python3
"""DGL's link prediction on a Saga graph and edge split: the peer of
`sagac train examples/graphsage-link.saga --link-split SPLIT.npz`.

Usage:
  linkpred_dgl.py FILE SPLIT.npz [--threads 2] [--epochs 100] [--lr 0.01]
                  [--batch-size 0] [--fanout 10,25] [--max-batches 0]
                  [--negatives 1] [--seed 0]

FILE is a Planetoid-style text folder (examples/data/cora: meta.txt and
features.txt; the features row-normalised, each row divided by its sum, as
Saga does by default) or a Saga graph file (.sgf, ooc_baselines.read_sgf;
its features as they are). Only the vertex features are taken from FILE:
the graph messages pass over is the split's train_pos, both ways, no self
loops. SPLIT.npz is `sagac split-edges`'s: int32 [pairs, 2] arrays
train_pos, val_pos, val_neg, test_pos, test_neg (undirected pairs, stored
once with src < dst), num_nodes and undirected.

The model is examples/graphsage-link.saga's: two GraphSAGE-mean layers
(dgl.nn.SAGEConv 'mean': fc_self(h) + fc_neigh(mean of the in-neighbours)
+ bias, i.e. h Ws + mean(h) Wn + b; weights re-initialised Glorot uniform
with gain 1 and biases zero as Saga's `glorot`/`zeros`, where DGL's own
reset uses the ReLU gain), 128 units with ReLU then 64, no dropout; a
pair's score is the dot product of its ends' embeddings (fn.u_dot_v on
the pair graph), the loss binary cross-entropy with logits averaged over
the positives (label 1) and their negatives (label 0); Adam.

  full batch (--batch-size 0): each epoch draws --negatives negatives per
      training positive (u, v) with dgl.dataloading.negative_sampler.Uniform
      (u and a vertex drawn uniformly from all of them), then one step over
      every pair; val and test are scored after every epoch.
  mini-batch (--batch-size B): dgl.dataloading.DataLoader over the ids of
      the train_pos edges (one direction of each), shuffled, with
      as_edge_prediction_sampler(NeighborSampler(fanouts),
      negative_sampler=Uniform(negatives)) (no edges excluded from the
      neighbourhoods, DGL's default); at most --max-batches steps an epoch
      when it is > 0.

The fan-outs are per layer, input layer first, as sagac's --fanout.
Evaluation uses the whole graph (every neighbour, no sampling): each
vertex's embedding, the dot-product scores of the val and test pairs and
their ROC AUC (Mann-Whitney, ties counted one half). Prints
  RESULT epoch=E train_seconds=S loss=L       (each epoch: the sampling,
      forward, backward and optimiser time, no evaluation; the loss
      averaged over the epoch's pairs)
  RESULT val_auc=... test_auc=...             (after the last epoch)
  RESULT best_val_epoch=E test_auc_at_best_val=X   (full batch: the first
      epoch with the best val AUC)
A peer whose library (torch, dgl) is not installed is skipped after the
files are read: one line says so and the exit status is 77
(bench/peers.py).
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ooc_baselines import SgfError, read_sgf  # noqa: E402
from peers import need, need_spec  # noqa: E402

os.environ.setdefault("DGLBACKEND", "pytorch")

SPLIT_PAIRS = ("train_pos", "val_pos", "val_neg", "test_pos", "test_neg")


class InputError(Exception):
    """A FILE or SPLIT this script cannot read, with what is wrong."""


def read_text_features(folder):
    """The [V, F] float32 features of a Planetoid-style text folder
    (meta.txt's num_nodes and num_features; features.txt's `node col
    value` nonzeros), each row divided by its sum (all-zero rows stay
    zero)."""
    meta_path = os.path.join(folder, "meta.txt")
    feat_path = os.path.join(folder, "features.txt")
    meta = {}
    try:
        with open(meta_path) as f:
            for n, line in enumerate(f, 1):
                parts = line.split()
                if len(parts) != 2:
                    raise InputError(f"{meta_path}:{n}: expected `key value`")
                meta[parts[0]] = parts[1]
    except OSError as e:
        raise InputError(f"{meta_path}: cannot read: {e.strerror}") from e
    try:
        v, feats = int(meta["num_nodes"]), int(meta["num_features"])
    except KeyError as e:
        raise InputError(f"{meta_path}: no {e.args[0]}") from e
    except ValueError as e:
        raise InputError(f"{meta_path}: {e}") from e
    try:
        nz = np.loadtxt(feat_path, dtype=np.float64, ndmin=2)
    except OSError as e:
        raise InputError(f"{feat_path}: cannot read: {e.strerror}") from e
    except ValueError as e:
        raise InputError(f"{feat_path}: {e}") from e
    if nz.size and nz.shape[1] != 3:
        raise InputError(f"{feat_path}: expected `node col value` lines")
    x = np.zeros((v, feats), dtype=np.float32)
    if nz.size:
        rows, cols = nz[:, 0].astype(np.int64), nz[:, 1].astype(np.int64)
        if (rows.min() < 0 or rows.max() >= v or cols.min() < 0
                or cols.max() >= feats):
            raise InputError(f"{feat_path}: node or column out of range "
                             f"({v} nodes, {feats} features)")
        x[rows, cols] = nz[:, 2]
    sums = x.sum(axis=1, keepdims=True)
    np.divide(x, sums, out=x, where=sums != 0)
    return x


def read_features(path, start):
    if os.path.isdir(path):
        return read_text_features(path)
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file or folder")
    try:
        return read_sgf(path, start)[5]
    except SgfError as e:
        raise InputError(str(e)) from e


def scalar(d, key, path):
    a = np.asarray(d[key])
    if a.size != 1:
        raise InputError(f"{path}: {key} is not a scalar (shape {a.shape})")
    return int(a.reshape(()))


def read_split(path, v):
    """The split's pair arrays (int64 [pairs, 2]), checked against the
    graph's `v` vertices."""
    try:
        d = np.load(path)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e}") from e
    except ValueError as e:
        raise InputError(f"{path}: not an .npz file: {e}") from e
    if not hasattr(d, "files"):
        raise InputError(f"{path}: not an .npz file")
    missing = [k for k in SPLIT_PAIRS + ("num_nodes",) if k not in d.files]
    if missing:
        raise InputError(f"{path}: no {', '.join(missing)}")
    n = scalar(d, "num_nodes", path)
    if n != v:
        raise InputError(f"{path}: num_nodes is {n}, the graph has {v} "
                         "vertices")
    if "undirected" in d.files and scalar(d, "undirected", path) != 1:
        raise InputError(f"{path}: a directed split; this peer takes "
                         "undirected pairs")
    pairs = {}
    for k in SPLIT_PAIRS:
        a = d[k]
        if a.ndim != 2 or a.shape[1] != 2 or a.dtype.kind not in "iu":
            raise InputError(f"{path}: {k} is not an integer [pairs, 2] "
                             f"array ({a.dtype} {a.shape})")
        if a.size and (a.min() < 0 or a.max() >= v):
            raise InputError(f"{path}: {k} has vertices outside 0..{v - 1}")
        pairs[k] = a.astype(np.int64)
    if len(pairs["train_pos"]) == 0:
        raise InputError(f"{path}: no training pairs")
    return pairs


def roc_auc(pos, neg):
    """ROC AUC of positive scores `pos` against negative scores `neg`:
    the Mann-Whitney U over len(pos) * len(neg), a tie counting one half
    (NaN with no positives or no negatives)."""
    pos, neg = np.asarray(pos, np.float64), np.asarray(neg, np.float64)
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    s = np.concatenate([pos, neg])
    _, inverse, counts = np.unique(s, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)                 # 1-based rank of each group's last
    mid = ends - (counts - 1) / 2.0          # a tied group's mean rank
    rank_sum = mid[inverse[:len(pos)]].sum()
    u = rank_sum - len(pos) * (len(pos) + 1) / 2.0
    return float(u / (len(pos) * len(neg)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("split")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--batch-size", type=int, default=0)
    p.add_argument("--fanout", default="10,25")
    p.add_argument("--max-batches", type=int, default=0)
    p.add_argument("--negatives", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    me = os.path.basename(sys.argv[0])
    try:
        fanouts = [int(f) for f in a.fanout.split(",")]
    except ValueError:
        sys.exit(f"{me}: --fanout: not a comma-separated list of integers: "
                 f"{a.fanout}")
    if a.batch_size < 0 or a.negatives < 1 or a.epochs < 1 or a.threads < 1:
        sys.exit(f"{me}: --batch-size must be >= 0, --negatives, --epochs "
                 "and --threads >= 1")
    if a.batch_size and len(fanouts) != 2:
        sys.exit(f"{me}: --fanout: the model has 2 layers, {len(fanouts)} "
                 "fan-outs given")
    if a.max_batches and not a.batch_size:
        sys.exit(f"{me}: --max-batches needs --batch-size")
    start = time.time()
    try:
        x_np = read_features(a.file, start)
        pairs = read_split(a.split, x_np.shape[0])
    except InputError as e:
        sys.exit(f"{me}: {e}")
    need_spec("dgl", "dgl")  # before torch's seconds of loading
    # DGL's samplers run on its OpenMP threads: as many as torch's.
    os.environ.setdefault("OMP_NUM_THREADS", str(a.threads))
    torch = need("torch", "dgl")
    dgl = need("dgl", "dgl")
    import dgl.function as fn
    import torch.nn.functional as F
    from dgl.nn import SAGEConv
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)  # parameters; Uniform's torch.randint
    np.random.seed(a.seed)
    dgl.seed(a.seed)           # NeighborSampler (DGL's own generator)

    v = x_np.shape[0]
    x = torch.from_numpy(x_np)
    tp = torch.from_numpy(pairs["train_pos"])
    # Edges 0..P-1 are train_pos as stored (u -> v), P..2P-1 their reverses.
    g = dgl.graph((torch.cat([tp[:, 0], tp[:, 1]]),
                   torch.cat([tp[:, 1], tp[:, 0]])), num_nodes=v)
    train_eids = torch.arange(len(tp))

    convs = torch.nn.ModuleList([SAGEConv(x.shape[1], 128, "mean"),
                                 SAGEConv(128, 64, "mean")])
    for c in convs:  # Saga's glorot (gain 1) and zeros
        torch.nn.init.xavier_uniform_(c.fc_self.weight)
        torch.nn.init.xavier_uniform_(c.fc_neigh.weight)
        torch.nn.init.zeros_(c.fc_self.bias)
    opt = torch.optim.Adam(convs.parameters(), lr=a.lr)
    negative_sampler = dgl.dataloading.negative_sampler.Uniform(a.negatives)

    def embed(blocks, h):
        h = F.relu(convs[0](blocks[0], h))
        return convs[1](blocks[1], h)

    def score(pair_graph, h):
        with pair_graph.local_scope():
            pair_graph.ndata["h"] = h
            pair_graph.apply_edges(fn.u_dot_v("h", "h", "s"))
            return pair_graph.edata["s"][:, 0]

    def loss_of(pos, neg):
        logits = torch.cat([pos, neg])
        labels = torch.cat([torch.ones_like(pos), torch.zeros_like(neg)])
        return F.binary_cross_entropy_with_logits(logits, labels)

    def evaluate():
        with torch.no_grad():
            h = embed([g, g], x)

            def scores(k):
                e = torch.from_numpy(pairs[k])
                return (h[e[:, 0]] * h[e[:, 1]]).sum(1).numpy()
            return (roc_auc(scores("val_pos"), scores("val_neg")),
                    roc_auc(scores("test_pos"), scores("test_neg")))

    if a.batch_size:
        # NeighborSampler(fanouts): fanouts[i] is the i-th layer's, input
        # layer first (sample_blocks walks reversed(fanouts) from the seeds
        # and prepends each block, so blocks[0] gets fanouts[0]): sagac's
        # order, passed as is.
        sampler = dgl.dataloading.as_edge_prediction_sampler(
            dgl.dataloading.NeighborSampler(fanouts),
            negative_sampler=negative_sampler)
        loader = dgl.dataloading.DataLoader(
            g, train_eids, sampler, batch_size=a.batch_size, shuffle=True,
            drop_last=False, num_workers=0)
        mode = (f"batches of {a.batch_size} positives, fan-out {a.fanout}"
                + (f", at most {a.max_batches} an epoch" if a.max_batches
                   else ""))
    else:
        pos_graph = dgl.graph((tp[:, 0], tp[:, 1]), num_nodes=v)
        mode = "full batch"
    print(f"dgl: dgl {dgl.__version__}, torch {torch.__version__}, {v} "
          f"vertices, {len(tp)} training pairs ({g.num_edges()} message "
          f"edges), {a.negatives} negatives each, {mode}, {a.threads} "
          "threads", flush=True)

    best = (-1.0, 0, float("nan"))  # val AUC, epoch, test AUC
    for epoch in range(1, a.epochs + 1):
        convs.train()
        t0 = time.time()
        if a.batch_size:
            n, total = 0, 0.0
            for step, (input_nodes, pair_graph, neg_graph, blocks) in \
                    enumerate(loader):
                if a.max_batches and step >= a.max_batches:
                    break
                h = embed(blocks, x[input_nodes])
                pos, neg = score(pair_graph, h), score(neg_graph, h)
                loss = loss_of(pos, neg)
                opt.zero_grad()
                loss.backward()
                opt.step()
                k = len(pos) + len(neg)
                n += k
                total += float(loss) * k
            loss_value = total / max(n, 1)
        else:
            neg_src, neg_dst = negative_sampler(g, train_eids)
            neg_graph = dgl.graph((neg_src, neg_dst), num_nodes=v)
            h = embed([g, g], x)
            loss = loss_of(score(pos_graph, h), score(neg_graph, h))
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_value = float(loss)
        seconds = time.time() - t0
        print(f"RESULT epoch={epoch} train_seconds={seconds:.4f} "
              f"loss={loss_value:.4f}", flush=True)
        if not a.batch_size:
            convs.eval()
            val_auc, test_auc = evaluate()
            if val_auc > best[0]:
                best = (val_auc, epoch, test_auc)

    convs.eval()
    val_auc, test_auc = evaluate()
    print(f"RESULT val_auc={val_auc:.4f} test_auc={test_auc:.4f}", flush=True)
    if not a.batch_size:
        print(f"RESULT best_val_epoch={best[1]} "
              f"test_auc_at_best_val={best[2]:.4f}", flush=True)


if __name__ == "__main__":
    main()
