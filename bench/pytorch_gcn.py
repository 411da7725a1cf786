#!/usr/bin/python3
"""The forward pass of bench/models/gcn64.saga / examples/gcn.saga in PyTorch.

Usage: pytorch_gcn.py DIR [--threads N] [--repeat N] [--graph NAME]

DIR is what `saga-bench-forward --dump-graph DIR` wrote: src.npy / dst.npy
(the input edges, int32), features.npy, the parameters (meta.json maps
"GCNConv#0.W" ... to files) and Saga's prediction.npy. So both systems run on
exactly the same graph, features and weights, and this script checks that
they compute the same logits.

The model (Kipf and Welling's GCN, inference: dropout is the identity):
    A_hat = D^-1/2 (A + I) D^-1/2,   D = in-degrees of A + I
    h     = relu(A_hat @ (X W0) + b0)
    out   = A_hat @ (h W1) + b1
with A_hat a CSR tensor (rows: destinations, columns: sources) multiplied by
torch.sparse.mm, under torch.no_grad() with torch.set_num_threads(N).
Reports the median forward time over --repeat runs after one warm-up; the
last line, `RESULT key=value ...`, is for bench/forward.sh.

Needs Debian's python3-torch, python3-numpy and python3-scipy; run it with
/usr/bin/python3.
"""
import argparse
import json
import os
import statistics
import sys
import time
import warnings

import numpy as np
import scipy.sparse
import torch


def load(directory):
    with open(os.path.join(directory, "meta.json")) as f:
        meta = json.load(f)
    arrays = {name: np.load(os.path.join(directory, name + ".npy"))
              for name in ("src", "dst", "features")}
    params = {name: torch.from_numpy(np.load(os.path.join(directory, file)))
              for name, file in meta["params"].items()}
    prediction = None
    if meta.get("prediction"):
        prediction = np.load(os.path.join(directory, meta["prediction"]))
    return meta, arrays, params, prediction


def normalized_adjacency(n, src, dst):
    """D^-1/2 (A + I) D^-1/2 as a torch CSR tensor, row v holding v's
    in-edges u -> v with value deg(v)^-1/2 deg(u)^-1/2."""
    loops = np.arange(n, dtype=np.int64)
    rows = np.concatenate([dst.astype(np.int64), loops])
    cols = np.concatenate([src.astype(np.int64), loops])
    deg = np.bincount(rows, minlength=n).astype(np.float32)
    inv_sqrt = 1.0 / np.sqrt(deg)
    values = inv_sqrt[rows] * inv_sqrt[cols]
    csr = scipy.sparse.csr_matrix((values, (rows, cols)), shape=(n, n))
    csr.sort_indices()
    with warnings.catch_warnings():  # "Sparse CSR tensor support is in beta"
        warnings.simplefilter("ignore")
        return torch.sparse_csr_tensor(
            torch.from_numpy(csr.indptr.astype(np.int64)),
            torch.from_numpy(csr.indices.astype(np.int64)),
            torch.from_numpy(csr.data.astype(np.float32)),
            size=(n, n))


def gcn_forward(adj, x, w0, b0, w1, b1):
    h = torch.relu(torch.sparse.mm(adj, x @ w0) + b0)
    return torch.sparse.mm(adj, h @ w1) + b1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", help="folder written by saga-bench-forward "
                                    "--dump-graph")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--graph", help="name in the RESULT line "
                                        "(default: from meta.json)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    start = time.perf_counter()
    meta, arrays, params, saga_prediction = load(args.dir)
    n = int(meta["num_vertices"])
    if not meta.get("self_loops", True):
        sys.exit("pytorch_gcn.py: the model must declare self_loops (GCN)")
    adj = normalized_adjacency(n, arrays["src"], arrays["dst"])
    x = torch.from_numpy(arrays["features"])
    weights = [params[name] for name in ("GCNConv#0.W", "GCNConv#0.b",
                                         "GCNConv#1.W", "GCNConv#1.b")]
    prepare = time.perf_counter() - start

    times = []
    with torch.no_grad():
        out = gcn_forward(adj, x, *weights)  # warm-up
        for _ in range(args.repeat):
            start = time.perf_counter()
            out = gcn_forward(adj, x, *weights)
            times.append(time.perf_counter() - start)
    forward = statistics.median(times)

    diff = float("nan")
    if saga_prediction is not None:
        diff = float(np.max(np.abs(out.numpy() - saga_prediction)))
    graph = args.graph or meta["graph"]
    print(f"torch     {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"graph     {graph}: {n} vertices, {adj._nnz()} nonzeros in A_hat "
          f"(self loops included), {x.shape[1]} features")
    print(f"prepare   load and build CSR {prepare * 1e3:.1f} ms")
    print(f"forward   median {forward * 1e3:.3f} ms over {args.repeat} runs "
          f"(min {min(times) * 1e3:.3f}, max {max(times) * 1e3:.3f})")
    print(f"check     max |PyTorch - Saga| over the logits: {diff:.3g}")
    print(f"RESULT system=pytorch graph={graph} vertices={n} "
          f"edges={adj._nnz()} threads={args.threads} "
          f"forward_ms={forward * 1e3:.3f} max_abs_diff={diff:.3g}")


if __name__ == "__main__":
    main()
