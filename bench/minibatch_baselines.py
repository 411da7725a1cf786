#!/usr/bin/python3
"""DGL's and PyG's mini-batch training on a Saga graph file: the peers of
bench/minibatch.sh.

Usage:
  minibatch_baselines.py dgl|pyg FILE [--threads N] [--epochs N]
                         [--batch-size B] [--fanout 10,25]

Reads the graph (in-edge CSR), features, labels and training split of FILE
(ooc_baselines.read_sgf), then trains the GraphSAGE-mean of
bench/models/sage64.saga (64 -> 64 -> classes, ReLU, dropout 0.5 between
the layers, a self and a neighbour weight per layer, cross-entropy, Adam
lr 0.01) on sampled mini-batches of the training vertices, shuffled:

  dgl  dgl.dataloading.NeighborSampler(fanouts) + DataLoader, SAGEConv
       'mean' on the message-flow blocks;
  pyg  torch_geometric.loader.NeighborLoader (num_neighbors: the fan-outs
       from the seeds out, i.e. reversed), SAGEConv (mean), the seeds' rows.

The fan-outs are per layer, input layer first, as sagac's --fanout. Each
epoch prints a RESULT line with its training time (sampling, gathering,
forward, backward and the optimiser; no evaluation). A peer whose library
(torch, dgl, torch_geometric with pyg-lib or torch-sparse) is not
installed is skipped after the file is read: one line says so and the exit
status is 77 (bench/peers.py).
"""

import argparse
import importlib.util
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ooc_baselines import SgfError, as_torch, dgl_graph, read_sgf  # noqa: E402
from peers import need, need_spec, skip  # noqa: E402

os.environ.setdefault("DGLBACKEND", "pytorch")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("system", choices=["dgl", "pyg"])
    p.add_argument("file")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--fanout", default="10,25")
    a = p.parse_args()
    fanouts = [int(f) for f in a.fanout.split(",")]
    start = time.time()
    try:
        data = read_sgf(a.file, start)
    except SgfError as err:
        sys.exit(f"minibatch_baselines.py: {err}")
    # Whether the peer can run at all, before torch's seconds of loading.
    if a.system == "dgl":
        need_spec("dgl", "dgl")
    else:
        need_spec("torch_geometric", "pyg")
        if not any(importlib.util.find_spec(m)
                   for m in ("pyg_lib", "torch_sparse")):
            skip("pyg", "NeighborLoader needs pyg-lib or torch-sparse, and "
                        f"neither is installed for {sys.executable}")
    v, e, classes, indptr, indices, x, y, train = as_torch(
        data, a.threads, start, a.system)
    import torch
    import torch.nn.functional as F
    hidden = 64

    if a.system == "dgl":
        dgl = need("dgl", "dgl")
        from dgl.nn import SAGEConv
        g = dgl_graph(v, indptr, indices)
        convs = torch.nn.ModuleList([SAGEConv(x.shape[1], hidden, "mean"),
                                     SAGEConv(hidden, classes, "mean")])
        sampler = dgl.dataloading.NeighborSampler(fanouts)
        loader = dgl.dataloading.DataLoader(
            g, train, sampler, batch_size=a.batch_size, shuffle=True,
            drop_last=False, num_workers=0)

        def batches():
            for input_nodes, output_nodes, blocks in loader:
                h = x[input_nodes]
                h = F.relu(convs[0](blocks[0], h))
                h = F.dropout(h, 0.5, True)
                yield convs[1](blocks[1], h), y[output_nodes]
    else:
        from torch_geometric.data import Data
        from torch_geometric.loader import NeighborLoader
        from torch_geometric.nn import SAGEConv
        dst = torch.repeat_interleave(torch.arange(v),
                                      torch.from_numpy(np.diff(indptr)))
        src = torch.from_numpy(indices.astype(np.int64))
        data = Data(x=x, y=y, edge_index=torch.stack([src, dst]), num_nodes=v)
        convs = torch.nn.ModuleList([SAGEConv(x.shape[1], hidden, aggr="mean"),
                                     SAGEConv(hidden, classes, aggr="mean")])
        loader = NeighborLoader(data, num_neighbors=fanouts[::-1],
                                batch_size=a.batch_size, input_nodes=train,
                                shuffle=True)

        def batches():
            for b in loader:
                h = F.relu(convs[0](b.x, b.edge_index))
                h = F.dropout(h, 0.5, True)
                out = convs[1](h, b.edge_index)
                yield out[:b.batch_size], b.y[:b.batch_size]

    opt = torch.optim.Adam(convs.parameters(), lr=0.01)
    print(f"{a.system}: torch {torch.__version__}, {v} vertices, {e} edges, "
          f"{len(train)} training vertices, batches of {a.batch_size}, "
          f"fan-out {a.fanout}, {a.threads} threads", flush=True)
    for epoch in range(1, a.epochs + 1):
        t0 = time.time()
        n, total = 0, 0.0
        for out, target in batches():
            loss = F.cross_entropy(out, target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            n += 1
            total += float(loss)
        seconds = time.time() - t0
        print(f"RESULT system={a.system} epoch={epoch} batches={n} "
              f"seconds={seconds:.3f} loss={total / max(n, 1):.4f}",
              flush=True)


if __name__ == "__main__":
    main()
