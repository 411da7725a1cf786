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

Needs torch and numpy (Debian's python3-torch with /usr/bin/python3, or a
peers venv: bench/forward.sh's PEERS). The dump is read and its shapes
checked with NumPy first; without torch the script then says so and exits
77 (skipped, bench/peers.py).
"""
import argparse
import json
import os
import statistics
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import need  # noqa: E402

torch = None  # imported by main() once the dump is read


def load(directory):
    """The dump as NumPy arrays, its shapes checked: the edges (int32, one
    source per destination), features [V, F], the parameters of a 2-layer
    GCN (W0 [F, H], b0 [H], W1 [H, C], b1 [C]) and Saga's prediction
    [V, C] when there is one."""
    with open(os.path.join(directory, "meta.json")) as f:
        meta = json.load(f)
    n = int(meta["num_vertices"])
    arrays = {name: np.load(os.path.join(directory, name + ".npy"))
              for name in ("src", "dst", "features")}
    params = {name: np.load(os.path.join(directory, file))
              for name, file in meta["params"].items()}
    prediction = None
    if meta.get("prediction"):
        prediction = np.load(os.path.join(directory, meta["prediction"]))

    def check(ok, what):
        if not ok:
            sys.exit(f"pytorch_gcn.py: {directory}: {what}")
    src, dst, x = arrays["src"], arrays["dst"], arrays["features"]
    check(src.ndim == 1 and src.shape == dst.shape, "src.npy and dst.npy "
          f"differ: {src.shape} and {dst.shape}")
    check(src.dtype == np.int32 and dst.dtype == np.int32,
          f"edges are {src.dtype}/{dst.dtype}, not int32")
    check(len(src) == 0 or (min(src.min(), dst.min()) >= 0 and
                            max(src.max(), dst.max()) < n),
          f"edge endpoints outside 0..{n - 1}")
    check(x.ndim == 2 and x.shape[0] == n and x.dtype == np.float32,
          f"features.npy is {x.dtype}{list(x.shape)}, not float32[{n}, F]")
    names = ("GCNConv#0.W", "GCNConv#0.b", "GCNConv#1.W", "GCNConv#1.b")
    check(all(k in params for k in names),
          f"meta.json's params lack one of {names}: {sorted(params)}")
    w0, b0, w1, b1 = (params[k] for k in names)
    check(w0.shape[0] == x.shape[1] and b0.shape == (w0.shape[1],) and
          w1.shape[0] == w0.shape[1] and b1.shape == (w1.shape[1],),
          "parameter shapes do not chain: " + ", ".join(
              f"{k} {list(params[k].shape)}" for k in names))
    check(prediction is None or prediction.shape == (n, w1.shape[1]),
          f"prediction is {list(prediction.shape)}, not [{n}, "
          f"{w1.shape[1]}]")
    print(f"read      {directory}: {n} vertices, {len(src)} edges, "
          f"{x.shape[1]} features, GCN {w0.shape[0]}-{w0.shape[1]}-"
          f"{w1.shape[1]}" + (", Saga's prediction" if prediction is not None
                              else ""), flush=True)
    return meta, arrays, params, prediction


def csr_arrays(n, rows, cols, values):
    """indptr, indices and data of the n x n CSR matrix with the entries
    (rows[i], cols[i], values[i]), columns sorted within a row and repeated
    entries summed (as scipy.sparse.csr_matrix builds it)."""
    order = np.lexsort((cols, rows))
    rows, cols, values = rows[order], cols[order], values[order]
    first = np.ones(len(rows), dtype=bool)
    first[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
    starts = np.flatnonzero(first)
    if len(starts) < len(rows):
        values = np.add.reduceat(values, starts)
        rows, cols = rows[starts], cols[starts]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    return indptr, cols, values


def normalized_adjacency(n, src, dst):
    """D^-1/2 (A + I) D^-1/2 as a torch CSR tensor, row v holding v's
    in-edges u -> v with value deg(v)^-1/2 deg(u)^-1/2."""
    loops = np.arange(n, dtype=np.int64)
    rows = np.concatenate([dst.astype(np.int64), loops])
    cols = np.concatenate([src.astype(np.int64), loops])
    deg = np.bincount(rows, minlength=n).astype(np.float32)
    inv_sqrt = 1.0 / np.sqrt(deg)
    values = inv_sqrt[rows] * inv_sqrt[cols]
    indptr, indices, data = csr_arrays(n, rows, cols, values)
    with warnings.catch_warnings():  # "Sparse CSR tensor support is in beta"
        warnings.simplefilter("ignore")
        return torch.sparse_csr_tensor(
            torch.from_numpy(indptr),
            torch.from_numpy(indices.astype(np.int64)),
            torch.from_numpy(data.astype(np.float32)),
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

    start = time.perf_counter()
    meta, arrays, params, saga_prediction = load(args.dir)
    loading = time.perf_counter() - start
    global torch
    torch = need("torch", "pytorch")  # its import is not timed
    torch.set_num_threads(args.threads)
    start = time.perf_counter() - loading
    params = {k: torch.from_numpy(v) for k, v in params.items()}
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
