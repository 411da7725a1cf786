#!/usr/bin/python3
"""DGL and PyTorch on a Saga graph file (.sgf): the out-of-core bench's peers.

Usage:
  ooc_baselines.py dgl|pytorch FILE [--threads N] [--epochs N]

Reads the file the way an in-memory system must: the whole in-edge CSR, the
features and the labels into RAM (the header and section table as
runtime/graph/GraphFileWriter.cpp writes them; checksums are not checked), then
trains the GCN of bench/models/gcn256.saga (features -> 64 -> classes,
dropout 0.5, ReLU, GCN normalisation D^-1/2 (A + I) D^-1/2, cross-entropy
over the train split, Adam lr 0.01) with
  dgl      dgl.nn.GraphConv (update_all), self loops added;
  pytorch  torch.sparse.mm with the normalised CSR adjacency.
It prints a `progress` line with the resident set after each stage, so that
when the process is killed for memory (bench/outofcore.sh runs it in a
memory cgroup the size of this machine's RAM) the last line says how far it
got; an epoch that completes ends in a `RESULT` line.
"""

import argparse
import resource
import struct
import sys
import time

import numpy as np

SECTIONS_AT, SECTION_BYTES = 96, 32
KINDS = {1: "in-offsets", 2: "in-sources", 3: "in-edge-ids", 4: "out-offsets",
         5: "out-targets", 6: "out-edge-ids", 7: "bounds", 8: "chunk-table",
         9: "chunk-edges", 10: "features", 11: "feature-crcs", 12: "labels",
         13: "train", 14: "val", 15: "test"}


def rss_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def progress(start, what):
    print(f"progress  {time.time() - start:7.1f} s  {what}  "
          f"(peak resident set {rss_gib():.2f} GiB)", flush=True)


def read_sgf(path, start):
    with open(path, "rb") as f:
        header = f.read(4096)
    if header[:8] != b"SAGAGRF1":
        sys.exit(f"{path}: not a Saga graph file")
    v, e, feats, classes = struct.unpack_from("<qqqq", header, 16)
    count = struct.unpack_from("<I", header, 80)[0]
    sections = {}
    for k in range(count):
        kind, offset, size = struct.unpack_from(
            "<I4xQQ", header, SECTIONS_AT + k * SECTION_BYTES)
        sections[KINDS[kind]] = (offset, size)

    def array(name, dtype, shape=None):
        offset, size = sections[name]
        a = np.fromfile(path, dtype=dtype, count=size // np.dtype(dtype).itemsize,
                        offset=offset)
        return a.reshape(shape) if shape else a

    indptr = array("in-offsets", np.int64)
    indices = array("in-sources", np.int32)
    progress(start, f"read the in-edge CSR: {v} vertices, {e} edges")
    x = array("features", np.float32, (v, feats))
    progress(start, f"read the features: {v} x {feats} float32 "
                    f"({x.nbytes / 2**30:.1f} GiB)")
    labels = array("labels", np.int32)
    train = array("train", np.int32)
    return v, e, classes, indptr, indices, x, labels, train


def load_for_torch(path, threads, start, system):
    """torch on `threads` threads, seeded; the file's graph, with its
    features, labels and training split as tensors."""
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    progress(start, f"{system}: torch {torch.__version__}")
    v, e, classes, indptr, indices, x, labels, train = read_sgf(path, start)
    return (v, e, classes, indptr, indices, torch.from_numpy(x),
            torch.from_numpy(labels.astype(np.int64)),
            torch.from_numpy(train.astype(np.int64)))


def dgl_graph(v, indptr, indices):
    """The DGL graph src -> dst of an in-edge CSR (by destination)."""
    import dgl
    import torch
    g = dgl.graph(("csr", (torch.from_numpy(indptr),
                           torch.from_numpy(indices.astype(np.int64)),
                           torch.tensor([], dtype=torch.int64))),
                  num_nodes=v)
    return dgl.reverse(g)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("system", choices=["dgl", "pytorch"])
    p.add_argument("file")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--epochs", type=int, default=1)
    a = p.parse_args()
    start = time.time()
    import torch
    v, e, classes, indptr, indices, x, y, train = load_for_torch(
        a.file, a.threads, start, a.system)
    hidden = 64
    if a.system == "dgl":
        import dgl
        from dgl.nn import GraphConv
        g = dgl.add_self_loop(dgl_graph(v, indptr, indices))
        progress(start, f"dgl graph with self loops: {g.num_edges()} edges")
        conv0 = GraphConv(x.shape[1], hidden, norm="both")
        conv1 = GraphConv(hidden, classes, norm="both")

        def forward(training):
            h = torch.nn.functional.dropout(x, 0.5, training)
            h = torch.relu(conv0(g, h))
            h = torch.nn.functional.dropout(h, 0.5, training)
            return conv1(g, h)
        params = list(conv0.parameters()) + list(conv1.parameters())
        w0 = conv0.weight
    else:
        rows = torch.repeat_interleave(
            torch.arange(v), torch.from_numpy(np.diff(indptr)))
        cols = torch.from_numpy(indices.astype(np.int64))
        loops = torch.arange(v)
        rows = torch.cat([rows, loops])
        cols = torch.cat([cols, loops])
        deg = torch.bincount(rows, minlength=v).float()
        w = deg[rows].rsqrt() * deg[cols].rsqrt()
        adj = torch.sparse_coo_tensor(torch.stack([rows, cols]), w,
                                      (v, v)).coalesce().to_sparse_csr()
        del rows, cols, w
        progress(start, f"normalised CSR adjacency: {adj.values().numel()} "
                        "entries")
        w0 = torch.nn.Parameter(torch.empty(x.shape[1], hidden))
        w1 = torch.nn.Parameter(torch.empty(hidden, classes))
        torch.nn.init.xavier_uniform_(w0)
        torch.nn.init.xavier_uniform_(w1)
        b0 = torch.nn.Parameter(torch.zeros(hidden))
        b1 = torch.nn.Parameter(torch.zeros(classes))

        def forward(training):
            h = torch.nn.functional.dropout(x, 0.5, training)
            h = torch.relu(torch.sparse.mm(adj, h @ w0) + b0)
            h = torch.nn.functional.dropout(h, 0.5, training)
            return torch.sparse.mm(adj, h @ w1) + b1
        params = [w0, w1, b0, b1]
    opt = torch.optim.Adam(params, lr=0.01)
    for epoch in range(a.epochs):
        t = time.time()
        opt.zero_grad()
        out = forward(True)
        progress(start, f"epoch {epoch + 1}: forward done")
        loss = torch.nn.functional.cross_entropy(out[train], y[train]) + \
            5e-4 * (w0 ** 2).sum() / 2
        loss.backward()
        opt.step()
        progress(start, f"epoch {epoch + 1}: backward and Adam done")
        with torch.no_grad():
            acc = (forward(False).argmax(1)[train] == y[train]).float().mean()
        ms = (time.time() - t) * 1e3
        progress(start, f"epoch {epoch + 1}: loss {loss.item():.4f}, train "
                        f"accuracy {acc.item():.4f}, {ms:.0f} ms")
        print(f"RESULT kind=ooc system={a.system} epoch_ms={ms:.1f} "
              f"peak_rss_gib={rss_gib():.2f}", flush=True)


if __name__ == "__main__":
    main()
