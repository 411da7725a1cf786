#!/usr/bin/python3
"""bench/models/gat64.saga's GAT trained in plain PyTorch, the way PyG's
GATConv computes it without compiled extensions (torch-scatter,
torch-sparse, pyg-lib): the reference point of bench/fusion.sh.

Usage:
  gat_baseline.py DIR [--threads N] [--epochs N] [--memory-limit-gib G]
  gat_baseline.py --estimate VERTICES EDGES   (the estimated peak, GiB)

DIR is what `saga-bench-suite train --model bench/models/gat64.saga --dump
DIR` wrote: src.npy / dst.npy (the R-MAT edges, int32, without self loops;
both sides add one per vertex), features.npy, labels.npy, Saga's initial
parameters (param*.npy, named in meta.json) and Saga's initial evaluation
loss, so both systems train the same model on the same graph from the same
starting point. The script checks that its initial loss matches Saga's.

Each GATConv is PyG's (torch_geometric.nn.GATConv with its pure-PyTorch
fallbacks, as torch_geometric.utils.softmax and .scatter do on torch >=
1.12), with Saga's parameter layout (W: [in, heads, out]):

  z        = (h @ W).view(V, heads, out)
  s, d     = (z * as).sum(-1), (z * ad).sum(-1)             # [V, heads]
  x_j      = z.index_select(0, src)                         # [E, heads, out]
  alpha    = leaky_relu(s.index_select(0, src) + d.index_select(0, dst), 0.2)
  max      = zeros(V, heads).scatter_reduce_(0, dst, alpha.detach(), 'amax',
                                              include_self=False)
  alpha    = (alpha - max.index_select(0, dst)).exp()
  alpha    = alpha / (zeros(V, heads).index_add_(0, dst, alpha) + 1e-16)
                         .index_select(0, dst)
  alpha    = dropout(alpha, 0.6)                            # attention dropout
  out      = zeros(V, heads, out).index_add_(0, dst, x_j * alpha[..., None])
  return out.view(V, heads * out) + b

and the model is gat64.saga's: dropout(x, 0.6), GATConv(64, 8 heads x 8),
ELU, dropout 0.6, GATConv(64, 1 head x 16); loss = mean cross-entropy over
all vertices + 5e-4 * sum over the 8 parameters of sum(p^2) / 2; Adam, lr
0.01. An epoch is what saga::train does per epoch: forward (dropout on) and
backward, the Adam step, then an evaluation forward pass (no grad) and the
accuracy; the script times 1 warm-up + --epochs epochs and reports the
median, the median of the forward + backward part alone (step_ms), and the
peak resident set of the whole process (getrusage's ru_maxrss; run it in a
fresh process per measurement) and the resident set before the first epoch.
The last line is `RESULT kind=train system=pytorch-pyg-style ...` for
bench/fusion.sh.

Every edge tensor above is materialised (E rows), and autograd keeps several
for the backward pass: the peak grows by about 1.3-1.4 KB per edge (self
loops included) at these widths. Before it starts, the script estimates its
peak and exits (a `RESULT ... ms=skipped` line, status 3) when the estimate
exceeds --memory-limit-gib or 90 % of MemAvailable; bench/fusion.sh uses
--estimate to pick the largest scale that fits.

Needs torch and numpy: Debian's python3-torch and python3-numpy with
/usr/bin/python3, or a peers venv (bench/fusion.sh's PEERS). The dump is
read and its shapes checked with NumPy first; without torch the script
then says so and exits 77 (skipped, bench/peers.py).
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

# Fitted to this script's peaks at R-MAT scales 16, 17 and 18 (edge factor
# 16, 2 threads: 1961, 2998 and 5769 MiB for 1.09M, 2.21M and 4.46M edges
# with self loops; the estimate is 1912, 3469 and 6609; at scale 19 it
# peaked at 10848 MiB for 8.49M edges, estimate 12238), on the high side:
# BASE for Python and torch, PER_EDGE bytes per edge (self loops included),
# PER_VERTEX bytes per vertex.
PER_EDGE = 1400
PER_VERTEX = 1000
BASE = 400 * 2**20


def estimate_bytes(vertices, edges):
    return BASE + PER_EDGE * edges + PER_VERTEX * vertices


if len(sys.argv) == 4 and sys.argv[1] == "--estimate":
    # Before importing torch: bench/fusion.sh calls this once per scale.
    print(f"{estimate_bytes(int(sys.argv[2]), int(sys.argv[3])) / 2**30:.2f}")
    sys.exit(0)

import numpy as np  # noqa: E402
import warnings  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402

torch = F = None  # imported by main() once the dump is read and checked
warnings.filterwarnings("ignore", message=".*scatter_reduce.*is in beta.*")

NAMES = [f"GATConv#{layer}.{p}" for layer in (0, 1)
         for p in ("W", "as", "ad", "b")]


def read_dump(directory):
    """meta.json and the arrays of the dump, NumPy only, shapes checked:
    edges (int32), features [V, F], labels [V], and per GATConv W [in,
    heads, out], as and ad [heads, out], b [heads * out], chained."""
    def fail(what):
        sys.exit(f"gat_baseline.py: {directory}: {what}")
    with open(os.path.join(directory, "meta.json")) as f:
        meta = json.load(f)
    n = int(meta["num_vertices"])
    src = np.load(os.path.join(directory, "src.npy"))
    dst = np.load(os.path.join(directory, "dst.npy"))
    x = np.load(os.path.join(directory, "features.npy"))
    labels = np.load(os.path.join(directory, "labels.npy"))
    if not all(k in meta["params"] for k in NAMES):
        fail(f"meta.json's params lack one of {NAMES}")
    params = [np.load(os.path.join(directory, meta["params"][k]))
              for k in NAMES]
    if src.dtype != np.int32 or src.shape != dst.shape or src.ndim != 1:
        fail(f"edges: src {src.dtype}{list(src.shape)}, dst "
             f"{dst.dtype}{list(dst.shape)}")
    if len(src) and (min(src.min(), dst.min()) < 0 or
                     max(src.max(), dst.max()) >= n):
        fail(f"edge endpoints outside 0..{n - 1}")
    if x.ndim != 2 or x.shape[0] != n or labels.shape != (n,):
        fail(f"features {list(x.shape)} and labels {list(labels.shape)} "
             f"for {n} vertices")
    width = x.shape[1]
    for layer in (0, 1):
        W, a_s, a_d, b = params[4 * layer:4 * layer + 4]
        if not (W.ndim == 3 and W.shape[0] == width and
                a_s.shape == W.shape[1:] and a_d.shape == W.shape[1:] and
                b.shape == (W.shape[1] * W.shape[2],)):
            fail(f"GATConv#{layer}: W {list(W.shape)}, as "
                 f"{list(a_s.shape)}, ad {list(a_d.shape)}, b "
                 f"{list(b.shape)} for input width {width}")
        width = b.shape[0]
    print(f"read      {directory}: {n} vertices, {len(src)} edges, "
          f"features [{n}, {x.shape[1]}], GAT {x.shape[1]}-"
          f"{params[3].shape[0]}-{width}", flush=True)
    return meta, src, dst, x, labels, params


def progress(message):
    print(f"progress  {message}", flush=True)


def available_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def current_rss_mib():
    with open("/proc/self/statm") as f:
        resident = int(f.read().split()[1])
    return resident * os.sysconf("SC_PAGE_SIZE") / 2**20


def result(**fields):
    print("RESULT " + " ".join(f"{k}={v}" for k, v in fields.items()),
          flush=True)


def gat_conv(h, src, dst, n, W, att_src, att_dst, bias, training):
    """One GATConv as PyG computes it without compiled extensions."""
    heads, out = att_src.shape
    z = (h @ W.reshape(W.shape[0], heads * out)).view(n, heads, out)
    s = (z * att_src).sum(-1)                       # [V, heads]
    d = (z * att_dst).sum(-1)
    x_j = z.index_select(0, src)                    # [E, heads, out]
    alpha = F.leaky_relu(s.index_select(0, src) + d.index_select(0, dst),
                         0.2)                       # [E, heads]
    # torch_geometric.utils.softmax: the maximum per destination (detached),
    # exp, the sum per destination, and the division, edge by edge.
    index = dst.view(-1, 1).expand_as(alpha)
    amax = alpha.new_zeros(n, heads).scatter_reduce_(
        0, index, alpha.detach(), reduce="amax", include_self=False)
    alpha = (alpha - amax.index_select(0, dst)).exp()
    denom = alpha.new_zeros(n, heads).index_add_(0, dst, alpha) + 1e-16
    alpha = alpha / denom.index_select(0, dst)
    alpha = F.dropout(alpha, 0.6, training)
    messages = x_j * alpha.unsqueeze(-1)            # [E, heads, out]
    aggregated = z.new_zeros(n, heads, out).index_add_(0, dst, messages)
    return aggregated.view(n, heads * out) + bias


def run(args):
    with open(os.path.join(args.dir, "meta.json")) as f:
        meta = json.load(f)
    n = int(meta["num_vertices"])
    if not meta.get("self_loops", True):
        sys.exit("gat_baseline.py: gat64.saga adds self loops")
    edges = int(meta["num_edges"]) + n
    need = estimate_bytes(n, edges)
    allowed = min(args.memory_limit_gib * 2**30, 0.9 * available_bytes())
    _, scale, edge_factor = meta["graph"].split("-")
    common = dict(kind="train", system="pytorch-pyg-style", scale=scale[1:],
                  edge_factor=edge_factor[1:], vertices=n, edges=edges)
    print(f"memory    estimated peak {need / 2**30:.1f} GiB for {n} vertices "
          f"and {edges} edges (self loops included); allowed "
          f"{allowed / 2**30:.1f} GiB (--memory-limit-gib "
          f"{args.memory_limit_gib:g}, 90 % of MemAvailable)", flush=True)
    if need > allowed:
        print("train     pytorch-pyg-style: skipped, it would not fit",
              flush=True)
        result(**common, threads=args.threads, ms="skipped")
        sys.exit(3)

    meta, src, dst, x, labels, params = read_dump(args.dir)
    global torch, F
    torch = peers.need("torch", "pytorch-pyg-style")
    F = torch.nn.functional
    torch.set_num_threads(args.threads)
    print(f"torch     {torch.__version__}, {torch.get_num_threads()} threads",
          flush=True)
    progress("the graph, features, labels and Saga's parameters as tensors")
    loops = torch.arange(n, dtype=torch.int64)
    src = torch.cat([torch.from_numpy(src).long(), loops])
    dst = torch.cat([torch.from_numpy(dst).long(), loops])
    del loops
    x = torch.from_numpy(x)
    labels = torch.from_numpy(labels).long()
    params = [torch.from_numpy(p).requires_grad_() for p in params]
    layer0, layer1 = params[:4], params[4:]

    def forward(training):
        h = F.dropout(x, 0.6, training)
        h = F.elu(gat_conv(h, src, dst, n, *layer0, training))
        h = F.dropout(h, 0.6, training)
        return gat_conv(h, src, dst, n, *layer1, training)

    def loss_of(logits):
        return (F.cross_entropy(logits, labels) +
                5e-4 * sum((p * p).sum() / 2 for p in params))

    with torch.no_grad():
        initial = float(loss_of(forward(False)))
    saga_initial = float(meta["initial_loss"])
    diff = abs(initial - saga_initial)
    print(f"train     initial loss {initial:.6f}, Saga's {saga_initial:.6f} "
          f"(|diff| {diff:.2g})", flush=True)
    if diff > args.tolerance:
        sys.exit(f"gat_baseline.py: the initial loss differs from Saga's by "
                 f"{diff:.3g} (more than --tolerance {args.tolerance:g}): "
                 f"not the same model")

    optimizer = torch.optim.Adam(params, lr=0.01)
    base = current_rss_mib()
    setup_peak = peak_rss_mib()
    progress(f"training: 1 warm-up + {args.epochs} timed epochs")
    times, steps, evals = [], [], []
    for epoch in range(1 + args.epochs):
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = loss_of(forward(True))
        loss.backward()
        stepped = time.perf_counter()
        optimizer.step()
        evaluated = time.perf_counter()
        with torch.no_grad():
            accuracy = float(
                (forward(False).argmax(1) == labels).float().mean())
        end = time.perf_counter()
        if epoch:
            times.append(end - start)
            steps.append(stepped - start)
            evals.append(end - evaluated)
        print(f"progress  epoch {epoch + 1}/{1 + args.epochs}  loss "
              f"{float(loss):.4f}  train acc {accuracy:.4f}  "
              f"{(end - start) * 1e3:.1f} ms (forward + backward "
              f"{(stepped - start) * 1e3:.1f} ms)", flush=True)
    med = statistics.median(times)
    peak = peak_rss_mib()
    print(f"train     pytorch-pyg-style: epoch median {med * 1e3:.1f} ms over "
          f"{args.epochs} epochs (min {min(times) * 1e3:.1f}, max "
          f"{max(times) * 1e3:.1f}); forward + backward "
          f"{statistics.median(steps) * 1e3:.1f} ms, evaluation forward "
          f"{statistics.median(evals) * 1e3:.1f} ms; last loss "
          f"{float(loss):.4f}; {args.threads} threads", flush=True)
    print(f"memory    peak resident set {peak:.0f} MiB (estimated "
          f"{need / 2**20:.0f}); before the first epoch {base:.0f} MiB "
          f"resident, {setup_peak:.0f} MiB peak (with the loading and one "
          f"evaluation pass)", flush=True)
    result(**common, width=x.shape[1], threads=args.threads,
           ms=f"{med * 1e3:.3f}", initial_loss=f"{initial:.6f}",
           saga_initial_loss=f"{saga_initial:.6f}",
           last_loss=f"{float(loss):.6f}",
           step_ms=f"{statistics.median(steps) * 1e3:.3f}",
           eval_ms=f"{statistics.median(evals) * 1e3:.3f}",
           peak_rss_mib=f"{peak:.0f}", base_rss_mib=f"{base:.0f}",
           setup_peak_rss_mib=f"{setup_peak:.0f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", help="folder written by saga-bench-suite "
                                    "train --model bench/models/gat64.saga "
                                    "--dump")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--memory-limit-gib", type=float, default=20.0,
                        help="skip the run when the estimated peak is "
                             "larger (default 20)")
    parser.add_argument("--tolerance", type=float, default=1e-4,
                        help="largest allowed |initial loss - Saga's| "
                             "(default 1e-4)")
    args = parser.parse_args()
    run(args)


if __name__ == "__main__":
    main()
