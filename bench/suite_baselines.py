#!/usr/bin/python3
"""The baselines of bench/suite.sh: aggregation and GCN training in PyTorch.

Usage:
  suite_baselines.py agg DIR [--widths 16,64,256] [--threads N] [--repeat N]
  suite_baselines.py train DIR [--threads N] [--epochs N]

DIR is what `saga-bench-suite agg|train --dump DIR` wrote (src.npy / dst.npy:
the R-MAT edges, int32, no self loops; meta.json; for `agg` x{F}.npy and
Saga's out{F}.npy; for `train` features.npy, labels.npy and the initial
parameters), so every system runs on exactly the same graph and inputs.

`agg` times the sum over in-neighbours, out[v] = sum_{u->v} x[u], with
  pytorch-sparse  torch.sparse.mm(A, x), A a torch.sparse_csr_tensor (rows:
                  destinations, columns: sources, values 1);
  pyg-style       torch.zeros(V, F).index_add_(0, dst, x.index_select(0, src))
                  (PyG's message passing without torch-scatter/torch-sparse;
                  it materialises the E x F messages, so it is skipped when
                  they would not fit in --memory-fraction of the available
                  memory);
  dgl             g.update_all(fn.copy_u('x', 'm'), fn.sum('m', 'out')) when
                  `import dgl` works (otherwise a "skipped" line);
each the median of --repeat runs after one warm-up, the output's allocation
included (as in Saga's forward()), and reports the largest difference from
Saga's output; beyond AGREE (1e-5) times the largest output the run stops
with an error (the figure would compare different sums).

`train` times GCN epochs (2 layers as bench/models/gcn64.saga: dropout 0.5,
GCN normalisation D^-1/2 (A + I) D^-1/2, ReLU, cross-entropy over all
vertices + 5e-4 * sum(W0^2) / 2, Adam with lr 0.01) with the propagation as
  pytorch-sparse  torch.sparse.mm with the normalised CSR adjacency;
  pyg-style       x.index_select(0, src) * w[:, None] then index_add_ by dst
                  (PyG's GCNConv without torch-scatter/torch-sparse);
  dgl             update_all(u_mul_e, sum) with the edge weights, if
                  available;
and an epoch is what saga::train does per epoch: forward (dropout on) and
backward, the Adam step, then an evaluation forward pass (no grad) and the
accuracy. It also checks the evaluation loss at Saga's initial parameters
against Saga's. Each measurement ends in a `RESULT key=value ...` line for
bench/suite.sh.

Needs torch and numpy: Debian's python3-torch (/usr/bin/python3), or the
peers' venv (bench/suite.sh's PEERS: torch 2.2 and DGL 2.1 from PyPI). The
dump is read and its shapes checked with NumPy first; without torch the
script then says so and exits 77 (skipped, bench/peers.py). DGL is
optional; a DGL that is installed but fails to load is an error.
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

torch = None  # imported by main() once the dump is read and checked

# Float32 sums of the same terms in another order: the largest difference
# from Saga's output allowed, as a share of the largest output.
AGREE = 1e-5

warnings.filterwarnings("ignore", message=".*Sparse CSR tensor support.*")


def progress(message):
    print(f"progress  {message}", flush=True)


def available_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def timed(fn, repeat):
    """Median and minimum wall time of fn() over `repeat` runs after one
    warm-up, and fn's last result."""
    out = fn()
    times = []
    for _ in range(repeat):
        del out
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), out


def csr(n, rows, cols, values):
    """A torch CSR tensor with the entries (rows[i], cols[i], values[i])."""
    order = np.lexsort((cols, rows))
    counts = np.bincount(rows, minlength=n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return torch.sparse_csr_tensor(
        torch.from_numpy(indptr),
        torch.from_numpy(cols[order].astype(np.int64)),
        torch.from_numpy(np.ascontiguousarray(values[order], np.float32)),
        size=(n, n))


def try_dgl():
    """dgl, or None (and a line saying so) when it is not installed; a DGL
    that is installed but fails to load raises."""
    try:
        import dgl  # noqa: F401
        import dgl.function  # noqa: F401
        return dgl
    except ModuleNotFoundError as e:
        if e.name is None or e.name.split(".")[0] != "dgl":
            raise  # DGL is there, something it needs is not
        print(f"dgl       DGL not installed, skipped ({type(e).__name__}: "
              f"{e})")
        return None


def check_dump(args):
    """Reads the dump's index files and checks every array's shape and
    type with NumPy (the feature files memory-mapped, not loaded)."""
    def fail(what):
        sys.exit(f"suite_baselines.py: {args.dir}: {what}")

    def array(name, dtype, shape):
        path = os.path.join(args.dir, name)
        if not os.path.exists(path):
            fail(f"no {name}")
        a = np.load(path, mmap_mode="r")
        if a.dtype != dtype or (shape is not None and a.shape != shape):
            fail(f"{name} is {a.dtype}{list(a.shape)}, expected "
                 f"{np.dtype(dtype)}{list(shape) if shape else ''}")
        return a
    with open(os.path.join(args.dir, "meta.json")) as f:
        meta = json.load(f)
    n = int(meta["num_vertices"])
    src = array("src.npy", np.int32, None)
    dst = array("dst.npy", np.int32, src.shape)
    if src.ndim != 1:
        fail(f"src.npy has shape {list(src.shape)}")
    if len(src) and (min(src.min(), dst.min()) < 0 or
                     max(src.max(), dst.max()) >= n):
        fail(f"edge endpoints outside 0..{n - 1}")
    what = [f"{n} vertices, {len(src)} edges"]
    if args.mode == "agg":
        for width in args.widths:
            array(f"x{width}.npy", np.float32, (n, width))
            array(f"out{width}.npy", np.float32, (n, width))
        what.append(f"x and Saga's out at F={','.join(map(str, args.widths))}")
    else:
        x = array("features.npy", np.float32, None)
        if x.ndim != 2 or x.shape[0] != n:
            fail(f"features.npy has shape {list(x.shape)}, not [{n}, F]")
        labels = np.load(os.path.join(args.dir, "labels.npy"))
        if labels.shape != (n,):
            fail(f"labels.npy has shape {list(labels.shape)}, not [{n}]")
        names = ("GCNConv#0.W", "GCNConv#0.b", "GCNConv#1.W", "GCNConv#1.b")
        if not all(k in meta["params"] for k in names):
            fail(f"meta.json's params lack one of {names}")
        w0, b0, w1, b1 = (np.load(os.path.join(args.dir, meta["params"][k]))
                          for k in names)
        if not (w0.shape[0] == x.shape[1] and b0.shape == (w0.shape[1],) and
                w1.shape[0] == w0.shape[1] and b1.shape == (w1.shape[1],) and
                labels.max() < w1.shape[1]):
            fail(f"GCN parameters {list(w0.shape)} {list(b0.shape)} "
                 f"{list(w1.shape)} {list(b1.shape)} do not fit features "
                 f"[{n}, {x.shape[1]}] and labels up to {labels.max()}")
        what.append(f"features [{n}, {x.shape[1]}], labels, GCN "
                    f"{w0.shape[0]}-{w0.shape[1]}-{w1.shape[1]}")
    print(f"read      {args.dir}: {'; '.join(what)}", flush=True)


def result(**fields):
    print("RESULT " + " ".join(f"{k}={v}" for k, v in fields.items()),
          flush=True)


# --- agg ---------------------------------------------------------------------

def run_agg(args):
    with open(os.path.join(args.dir, "meta.json")) as f:
        meta = json.load(f)
    n = int(meta["num_vertices"])
    src = np.load(os.path.join(args.dir, "src.npy"))
    dst = np.load(os.path.join(args.dir, "dst.npy"))
    e = len(src)
    common = dict(kind="agg", scale=meta["scale"],
                  edge_factor=meta["edge_factor"], vertices=n, edges=e)
    progress(f"building the CSR adjacency ({n} vertices, {e} edges)")
    start = time.perf_counter()
    adj = csr(n, dst.astype(np.int64), src.astype(np.int64),
              np.ones(e, np.float32))
    src_t = torch.from_numpy(src.astype(np.int64))
    dst_t = torch.from_numpy(dst.astype(np.int64))
    print(f"prepare   CSR and index tensors "
          f"{1e3 * (time.perf_counter() - start):.1f} ms")
    dgl = try_dgl()
    graph = dgl.graph((src_t, dst_t), num_nodes=n) if dgl else None

    for width in args.widths:
        x = torch.from_numpy(np.load(os.path.join(args.dir, f"x{width}.npy")))
        saga = np.load(os.path.join(args.dir, f"out{width}.npy"))
        scale = float(np.max(np.abs(saga))) or 1.0
        assert x.shape == (n, width), x.shape

        def report(system, med, lo, out):
            diff = float(np.max(np.abs(out.numpy() - saga)))
            print(f"agg       F={width} {system}: median {med * 1e3:.3f} ms "
                  f"(min {lo * 1e3:.3f}) over {args.repeat} runs; max "
                  f"|diff| from Saga {diff:.3g} (outputs up to {scale:.3g})",
                  flush=True)
            # The same sum in float32, in another order: a figure is only
            # a comparison if the outputs agree.
            if not diff <= AGREE * scale:
                sys.exit(f"suite_baselines: agg F={width} {system} differs "
                         f"from Saga's output by {diff:.3g} (bound "
                         f"{AGREE:g} x the largest output, {scale:.3g})")
            result(system=system, **common, width=width,
                   threads=args.threads, ms=f"{med * 1e3:.3f}",
                   max_abs_diff=f"{diff:.3g}", max_abs_out=f"{scale:.4g}")

        with torch.no_grad():
            progress(f"width {width}: torch.sparse.mm")
            med, lo, out = timed(lambda: torch.sparse.mm(adj, x), args.repeat)
            report("pytorch-sparse", med, lo, out)
            del out

            need = e * width * 4 * 2  # the messages, plus slack for the rest
            have = available_bytes() * args.memory_fraction
            if need > have:
                print(f"agg       F={width} pyg-style: skipped, the {e} x "
                      f"{width} messages need {need / 2**30:.1f} GiB with "
                      f"slack, {have / 2**30:.1f} GiB allowed "
                      f"(--memory-fraction of MemAvailable)")
                result(system="pyg-style", **common, width=width,
                       threads=args.threads, ms="skipped",
                       max_abs_diff="-", max_abs_out="-")
            else:
                progress(f"width {width}: index_select + index_add_")
                med, lo, out = timed(
                    lambda: torch.zeros(n, width).index_add_(
                        0, dst_t, x.index_select(0, src_t)), args.repeat)
                report("pyg-style", med, lo, out)
                del out

            if graph is not None:
                import dgl.function as fn
                progress(f"width {width}: DGL update_all(copy_u, sum)")

                def dgl_sum():
                    graph.srcdata["x"] = x
                    graph.update_all(fn.copy_u("x", "m"), fn.sum("m", "out"))
                    return graph.dstdata.pop("out")
                med, lo, out = timed(dgl_sum, args.repeat)
                report("dgl", med, lo, out)
                del out
            else:
                result(system="dgl", **common, width=width,
                       threads=args.threads, ms="skipped", max_abs_diff="-",
                       max_abs_out="-")
        del x, saga


# --- train -------------------------------------------------------------------

def run_train(args):
    with open(os.path.join(args.dir, "meta.json")) as f:
        meta = json.load(f)
    n = int(meta["num_vertices"])
    if not meta.get("self_loops", True):
        sys.exit("suite_baselines.py: the GCN needs self loops")
    src = np.load(os.path.join(args.dir, "src.npy")).astype(np.int64)
    dst = np.load(os.path.join(args.dir, "dst.npy")).astype(np.int64)
    x = torch.from_numpy(np.load(os.path.join(args.dir, "features.npy")))
    labels = torch.from_numpy(
        np.load(os.path.join(args.dir, "labels.npy")).astype(np.int64))
    init = {name: torch.from_numpy(np.load(os.path.join(args.dir, file)))
            for name, file in meta["params"].items()}
    names = ("GCNConv#0.W", "GCNConv#0.b", "GCNConv#1.W", "GCNConv#1.b")

    progress("building the normalised adjacency")
    loops = np.arange(n, dtype=np.int64)
    rows = np.concatenate([dst, loops])
    cols = np.concatenate([src, loops])
    deg = np.bincount(rows, minlength=n).astype(np.float32)
    inv_sqrt = 1.0 / np.sqrt(deg)
    weight = (inv_sqrt[rows] * inv_sqrt[cols]).astype(np.float32)
    adj = csr(n, rows, cols, weight)
    rows_t, cols_t = torch.from_numpy(rows), torch.from_numpy(cols)
    weight_t = torch.from_numpy(weight)
    e = len(rows)
    common = dict(kind="train", scale=meta["graph"].split("-")[1][1:],
                  edge_factor=meta["graph"].split("-")[2][1:], vertices=n,
                  edges=e, width=x.shape[1])

    def propagate_sparse(h):
        return torch.sparse.mm(adj, h)

    def propagate_pyg(h):
        messages = h.index_select(0, cols_t) * weight_t.unsqueeze(1)
        return torch.zeros(n, h.shape[1]).index_add_(0, rows_t, messages)

    systems = [("pytorch-sparse", propagate_sparse),
               ("pyg-style", propagate_pyg)]
    dgl = try_dgl()
    if dgl:
        import dgl.function as fn
        graph = dgl.graph((cols_t, rows_t), num_nodes=n)
        graph.edata["w"] = weight_t

        def propagate_dgl(h):
            graph.srcdata["h"] = h
            graph.update_all(fn.u_mul_e("h", "w", "m"), fn.sum("m", "out"))
            return graph.dstdata.pop("out")
        systems.append(("dgl", propagate_dgl))
    else:
        result(system="dgl", **common, threads=args.threads, ms="skipped",
               initial_loss="-", last_loss="-")

    for system, propagate in systems:
        params = [init[name].clone().requires_grad_() for name in names]
        w0, b0, w1, b1 = params

        def forward(training):
            h = torch.nn.functional.dropout(x, 0.5, training)
            h = torch.relu(propagate(h @ w0) + b0)
            h = torch.nn.functional.dropout(h, 0.5, training)
            return propagate(h @ w1) + b1

        def loss_of(out):
            return (torch.nn.functional.cross_entropy(out, labels) +
                    5e-4 * (w0 * w0).sum() / 2)

        with torch.no_grad():
            initial = float(loss_of(forward(False)))
        optimizer = torch.optim.Adam(params, lr=0.01)
        progress(f"{system}: 1 warm-up + {args.epochs} timed epochs "
                 f"(initial loss {initial:.6f}, Saga's "
                 f"{meta['initial_loss']:.6f})")
        times = []
        for epoch in range(1 + args.epochs):
            start = time.perf_counter()
            optimizer.zero_grad()
            loss = loss_of(forward(True))
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                accuracy = float(
                    (forward(False).argmax(1) == labels).float().mean())
            seconds = time.perf_counter() - start
            if epoch:
                times.append(seconds)
            print(f"progress  {system} epoch {epoch + 1}/{1 + args.epochs}  "
                  f"loss {float(loss):.4f}  train acc {accuracy:.4f}  "
                  f"{seconds * 1e3:.1f} ms", flush=True)
        med = statistics.median(times)
        print(f"train     {system}: epoch median {med * 1e3:.1f} ms over "
              f"{args.epochs} epochs (min {min(times) * 1e3:.1f}, max "
              f"{max(times) * 1e3:.1f}); initial loss {initial:.6f} "
              f"(Saga {meta['initial_loss']:.6f}); last loss "
              f"{float(loss):.4f}", flush=True)
        result(system=system, **common, threads=args.threads,
               ms=f"{med * 1e3:.3f}", initial_loss=f"{initial:.6f}",
               last_loss=f"{float(loss):.6f}")
        del params, optimizer, loss


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("agg", "train"))
    parser.add_argument("dir", help="folder written by saga-bench-suite "
                                    "--dump")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--widths", default="16,64,256")
    parser.add_argument("--memory-fraction", type=float, default=0.6,
                        help="largest share of MemAvailable the PyG-style "
                             "messages may take (default 0.6)")
    args = parser.parse_args()
    args.widths = [int(w) for w in args.widths.split(",")]
    check_dump(args)
    global torch
    torch = need("torch", "pytorch")
    torch.set_num_threads(args.threads)
    print(f"torch     {torch.__version__}, {torch.get_num_threads()} threads",
          flush=True)
    run_agg(args) if args.mode == "agg" else run_train(args)


if __name__ == "__main__":
    main()
