#!/usr/bin/env python3
"""gpu/peers.py - the peer baselines of the GPU check, on the same graph as Saga.

Saga's numbers on a GPU mean little alone; this script measures what the
established libraries reach on the same R-MAT graph, so that the GPU check can
put `sagac run bench/models/agg64.saga` and `sagac train bench/models/gcn64.saga`
next to them:

  copy       device-to-device copy of a --copy-mib MiB float32 tensor
             (dst.copy_(src)); GB/s counts read + write. The roof any
             memory-bound kernel on this device can hope for.
  agg        out[v] = sum of x[u] over the edges u -> v, for each F in
             --features, by two peers: torch.sparse.mm with a CSR matrix
             (rows = dst, cols = src, values 1; cuSPARSE on CUDA) and PyG's
             MessagePassing(aggr='sum') propagation (what GCNConv runs, without
             the normalisation). GB/s counts the compulsory traffic
             E*F*4 (gathered rows) + N*F*4 (output) + E*8 (column ids,
             int64 in both peers) + (N+1)*8 (row pointers). The peers must agree with each other,
             and with Saga's output for this F where --saga-out F=out.npy gives
             it (then x must come from the file: --x-from-file), to
             max|a-b| <= 1e-4 * max(1, max|a|), a being the reference (Saga's
             output, or torch.sparse.mm's for the peer pair).
  gcn_epoch  one training epoch of PyG's example GCN 64-64-16 (GCNConv cached,
             self loops + symmetric normalisation, ReLU, dropout 0.5, Adam
             lr 0.01, weight decay 5e-4 on the first layer, cross-entropy on
             train_mask) on random [N, 64] features, then an evaluation
             forward pass and the accuracy (what an epoch of `sagac train`
             is); median of the epochs after the first (the first, a
             warm-up, also builds GCNConv's cache).

The graph is an .npz with src, dst (edges src -> dst), x [N, Fx] float32
(Fx may be 1) and optionally y, train_mask and num_vertices; only the members
needed are read. Each result is one JSON line appended to --out (flushed at
once) and one readable line on stdout; a table closes the run. Exit status:
0, or 1 when an output differs beyond the bound (the reasons on stderr, after
all lines are written), or 2 for a bad command line or graph. Without torch
the script prints one `peers: skipped: ...` line and exits 0; without
torch_geometric its measurements are skipped (`peers: skipped PyG: ...`).
A measurement that fails to run (say, out of memory) is reported with an
"error" key and does not stop the others. --copy-mib 0 or --epochs 0 skip
those checks.
"""
import argparse, json, math, os, statistics, sys, time, warnings, zipfile


def fail(msg, code=2):
    print(f"peers: error: {msg}", file=sys.stderr, flush=True)
    sys.exit(code)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--graph", required=True, help=".npz with src, dst, x[, y, train_mask, num_vertices]")
    p.add_argument("--features", required=True, help="comma-separated widths, e.g. 64,256")
    p.add_argument("--repeat", type=int, default=20, help="timed runs per measurement (after 3 warm-ups)")
    p.add_argument("--epochs", type=int, default=5, help="GCN epochs (the first is a warm-up); 0 skips")
    p.add_argument("--device", choices=["cuda", "cpu", "auto"], default="auto")
    p.add_argument("--saga-out", action="append", default=[], metavar="F=out.npy",
                   help="Saga's float32 [N, F] output for width F, computed from the file's x")
    p.add_argument("--x-from-file", action="store_true", help="use the file's x where its width is F")
    p.add_argument("--out", required=True, help="JSON lines are appended here")
    p.add_argument("--copy-mib", type=int, default=None, help="copy size (default 2048 on cuda, 64 on cpu); 0 skips")
    a = p.parse_args()
    widths = a.features.split(",")
    if not all(w.strip().isdigit() and int(w) > 0 for w in widths):
        p.error(f"--features {a.features!r}: expected positive integers separated by commas")
    a.features = [int(w) for w in widths]
    if a.repeat < 1 or a.epochs < 0:
        p.error("--repeat must be >= 1 and --epochs >= 0")
    saga = {}
    for s in a.saga_out:
        f, sep, path = s.partition("=")
        if not sep or not f.isdigit() or int(f) not in a.features:
            p.error(f"--saga-out {s!r}: expected F=path with F one of --features")
        saga.setdefault(int(f), []).append(path)
    a.saga_out = saga
    return a


args = parse_args()
for module in ("numpy", "torch"):
    try:
        globals()["np" if module == "numpy" else module] = __import__(module)
    except (ImportError, OSError) as e:
        print(f"peers: skipped: {module} is not importable ({e})", flush=True)
        sys.exit(0)
try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch_geometric
        from torch_geometric.nn import GCNConv, MessagePassing
    PYG_MISSING = None
except Exception as e:  # ImportError, or a broken install
    PYG_MISSING = f"torch_geometric is not importable ({type(e).__name__}: {e})"
    print(f"peers: skipped PyG: {PYG_MISSING}", flush=True)


# ---- the graph ------------------------------------------------------------
def npz_shape(npz, key):
    """The shape of member `key` from its .npy header, without reading the data."""
    with npz.zip.open(key + ".npy") as f:
        version = np.lib.format.read_magic(f)
        read = {(1, 0): np.lib.format.read_array_header_1_0,
                (2, 0): np.lib.format.read_array_header_2_0}.get(version)
        return read(f)[0] if read else npz[key].shape


def load_graph(path):
    """(npz, src, dst, N, width of x or None); a bad file ends the run with status 2."""
    def need(ok, what):
        if not ok:
            raise ValueError(what)
    try:
        need(os.path.isfile(path), "no such file")
        need(zipfile.is_zipfile(path), "not an .npz archive")
        npz = np.load(path)
        need("src" in npz.files and "dst" in npz.files, f"needs members src and dst (it has {npz.files})")
        src, dst = npz["src"].ravel(), npz["dst"].ravel()
        need(src.dtype.kind in "iu" and dst.dtype.kind in "iu", "src/dst are not integer arrays")
        need(src.shape == dst.shape, f"src has {src.size} ids, dst {dst.size}")
        x_shape = npz_shape(npz, "x") if "x" in npz.files else None
        if "num_vertices" in npz.files:
            n = int(np.asarray(npz["num_vertices"]).ravel()[0])
        elif x_shape is not None:
            n = x_shape[0]
        elif "y" in npz.files:
            n = npz_shape(npz, "y")[0]
        else:
            n = int(max(src.max(initial=-1), dst.max(initial=-1))) + 1
        need(n > 0, "no vertices")
        need(x_shape is None or (len(x_shape) in (1, 2) and x_shape[0] == n),
             f"x has shape {x_shape}, expected ({n}, F)")
        if src.size:
            lo, hi = min(src.min(), dst.min()), max(src.max(), dst.max())
            need(lo >= 0 and hi < n, f"vertex ids span [{lo}, {hi}], not within [0, {n})")
        fx = None if x_shape is None else x_shape[1] if len(x_shape) == 2 else 1
        return npz, src, dst, n, fx
    except Exception as e:  # ValueError, OSError, zipfile.BadZipFile, ...
        fail(f"{path}: {e if isinstance(e, (ValueError, OSError)) else f'{type(e).__name__}: {e}'}")


if args.device == "auto":
    args.device = "cuda" if torch.cuda.is_available() else "cpu"
if args.device == "cuda" and not torch.cuda.is_available():
    fail("--device cuda: CUDA is not available")
dev = torch.device(args.device)
dev_name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
npz, src_np, dst_np, N, Fx = load_graph(args.graph)
E = src_np.size
for f, paths in args.saga_out.items():
    if not (args.x_from_file and Fx == f):
        fail(f"--saga-out {f}=...: Saga's output comes from the file's x, so it needs "
             f"--x-from-file and x of width {f} in {args.graph} (its x has width {Fx})")
    for path in paths:
        try:
            shape = np.load(path, mmap_mode="r").shape
        except Exception as e:
            fail(f"{path}: {e}")
        if tuple(shape) != (N, f):
            fail(f"{path}: shape {tuple(shape)}, expected ({N}, {f})")
src = torch.from_numpy(src_np).to(dev).long()
dst = torch.from_numpy(dst_np).to(dev).long()
del src_np, dst_np
print(f"peers: {args.graph}: {N} vertices, {E} edges, x width {Fx}; device {dev_name}; "
      f"torch {torch.__version__}" + ("" if PYG_MISSING else f", PyG {torch_geometric.__version__}"),
      flush=True)


# ---- timing and reporting ---------------------------------------------------
def sync():
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def time_ms(fn, repeat, warmup=3):
    """The median ms of `repeat` synchronised calls of fn after `warmup` calls; fn's last result."""
    for _ in range(warmup):
        out = fn()
    sync()
    times = []
    for _ in range(repeat):
        if dev.type == "cuda":
            t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0.record()
            out = fn()
            t1.record()
            t1.synchronize()
            times.append(t0.elapsed_time(t1))
        else:
            t0 = time.perf_counter()
            out = fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), out


results, differs = [], []
out_file = open(args.out, "a")


def record(rec, line):
    rec = {k: v for k, v in rec.items() if v is not None or k in ("max_diff", "agrees")}
    out_file.write(json.dumps(rec) + "\n")
    out_file.flush()
    results.append(rec)
    print(line, flush=True)


def failed(rec, what, e):
    msg = f"{type(e).__name__}: {(str(e).splitlines() or [''])[0]}"
    record(dict(rec, error=msg), f"{what}: error: {msg}")
    if dev.type == "cuda":
        torch.cuda.empty_cache()


def max_abs_diff(a, ref):
    """(max|a - ref|, max|ref|), row-chunked; ref is a device tensor or a numpy array (memory-mapped)."""
    d = m = 0.0
    step = max(1, (1 << 26) // max(1, a.shape[1]))
    for i in range(0, a.shape[0], step):
        r = ref[i:i + step]
        r = torch.from_numpy(np.array(r)).to(dev) if isinstance(r, np.ndarray) else r
        di, mi = (a[i:i + step] - r).abs().max().item(), r.abs().max().item()
        if math.isnan(di):  # max() would drop it
            return di, mi
        d, m = max(d, di), max(m, mi)
    return d, m


# ---- 1. copy bandwidth ------------------------------------------------------
copy_mib = args.copy_mib if args.copy_mib is not None else (2048 if dev.type == "cuda" else 64)
if copy_mib > 0:
    rec = dict(check="copy", bytes=copy_mib << 20, device=dev_name)
    try:
        a = torch.rand((copy_mib << 20) // 4, device=dev)
        b = torch.empty_like(a)
        ms, _ = time_ms(lambda: b.copy_(a), args.repeat)
        gbps = 2 * rec["bytes"] / (ms * 1e-3) / 1e9
        record(dict(rec, ms=ms, gbps=gbps), f"copy: {copy_mib} MiB on {dev_name}: {ms:.3f} ms, {gbps:.1f} GB/s")
    except (RuntimeError, MemoryError) as e:
        failed(rec, "copy", e)
    a = b = None


# ---- 2. aggregation ---------------------------------------------------------
if not PYG_MISSING:
    class SumPropagate(MessagePassing):
        """out[v] = sum of x[u] over the edges u -> v (edge_index[0] = u, [1] = v)."""
        def __init__(self):
            super().__init__(aggr="sum")

        def forward(self, x, edge_index):
            return self.propagate(edge_index, x=x)

        def message(self, x_j):
            return x_j

try:  # CSR: rows = dst, cols = src, sorted by dst then src; duplicate edges stay (both count)
    order = torch.argsort(dst * N + src)
    crow = torch.zeros(N + 1, dtype=torch.long, device=dev)
    crow[1:] = torch.cumsum(torch.bincount(dst, minlength=N), 0)
    with warnings.catch_warnings():  # "CSR support is in beta"
        warnings.simplefilter("ignore")
        A = torch.sparse_csr_tensor(crow, src[order], torch.ones(E, device=dev), size=(N, N),
                                    check_invariants=False)
    del order, crow
except (RuntimeError, MemoryError) as e:
    A = e  # reported as the torch.sparse.mm peer's error for each F
edge_index = torch.stack([src, dst])
del src, dst
x_file = None
for F in args.features:
    x_origin = "file" if args.x_from_file and Fx == F else "random"
    try:
        if x_origin == "random":
            gen = torch.Generator(device=dev).manual_seed(0)
            x = torch.rand(N, F, device=dev, generator=gen) * 2 - 1
        else:
            if x_file is None:
                x_file = torch.from_numpy(np.asarray(npz["x"], dtype=np.float32).reshape(N, F)).to(dev)
            x = x_file
    except (RuntimeError, MemoryError) as e:
        failed(dict(check="agg", F=F, N=N, E=E, x=x_origin, device=dev_name), f"agg F={F} x", e)
        continue
    nbytes = E * F * 4 + N * F * 4 + E * 8 + (N + 1) * 8  # int64 ids
    def spmm():
        if isinstance(A, Exception):
            raise A
        return torch.sparse.mm(A, x)
    peers = [("torch.sparse.mm", spmm)]
    if PYG_MISSING:
        print(f"peers: skipped PyG: agg F={F} pyg.propagate: {PYG_MISSING}", flush=True)
    else:
        prop = SumPropagate().to(dev)
        peers.append(("pyg.propagate", lambda: prop(x, edge_index)))
    outs, rows = {}, {}
    for name, fn in peers:
        rec = dict(check="agg", peer=name, F=F, N=N, E=E, bytes=nbytes, x=x_origin, device=dev_name)
        try:
            with torch.no_grad():
                ms, outs[name] = time_ms(fn, args.repeat)
            rows[name] = dict(rec, ms=ms, gbps=nbytes / (ms * 1e-3) / 1e9)
        except (RuntimeError, MemoryError) as e:
            failed(rec, f"agg F={F} {name}", e)
    # Compare the peers with each other (reference: torch.sparse.mm) and each with Saga.
    diffs = {name: {} for name in outs}
    bad = lambda d, m: not d <= 1e-4 * max(1.0, m)  # NaN is bad too
    if len(outs) == 2:
        a, b = outs
        d, m = max_abs_diff(outs[b], outs[a])
        diffs[a][b] = diffs[b][a] = (d, bad(d, m))
    for path in args.saga_out.get(F, []):
        saga = np.load(path, mmap_mode="r")
        for name in outs:
            d, m = max_abs_diff(outs[name], saga)
            diffs[name][f"saga:{path}"] = (d, bad(d, m))
    for name in outs:
        vs = diffs[name]
        for other, (d, is_bad) in vs.items():
            if is_bad and not (other in outs and other < name):  # the pair: say it once
                differs.append(f"agg F={F}: {name} differs from {other}: max|diff| {d:.3g}")
        ok = not any(is_bad for _, is_bad in vs.values())
        worst = max((d for d, _ in vs.values()), default=None, key=lambda d: math.inf if math.isnan(d) else d)
        finite = lambda d: d if d is not None and math.isfinite(d) else None  # JSON has no NaN
        r = dict(rows[name], max_diff=finite(worst), agrees=ok if vs else None,
                 vs={k: finite(d) for k, (d, _) in vs.items()})
        verdict = "; ".join(f"vs {k}: max|diff| {d:.3g} {'DIFFERS' if b else 'agrees'}" for k, (d, b) in vs.items())
        record(r, f"agg F={F} {name}: {r['ms']:.3f} ms, {r['gbps']:.1f} GB/s; {verdict or 'not compared'}")
    x = outs = None
    if dev.type == "cuda":
        torch.cuda.empty_cache()
del A, x_file


# ---- 3. a GCN training epoch ------------------------------------------------
if args.epochs > 0 and PYG_MISSING:
    print(f"peers: skipped PyG: gcn_epoch pyg.GCNConv: {PYG_MISSING}", flush=True)
elif args.epochs > 0:
    rec = dict(check="gcn_epoch", peer="pyg.GCNConv", N=N, E=E, device=dev_name)
    try:
        torch.manual_seed(0)
        gen = torch.Generator(device=dev).manual_seed(1)
        x = torch.rand(N, 64, device=dev, generator=gen) * 2 - 1
        y = (torch.from_numpy(np.asarray(npz["y"]).ravel().astype(np.int64)).to(dev) if "y" in npz.files
             else torch.randint(0, 16, (N,), device=dev, generator=gen))
        mask = (torch.from_numpy(np.asarray(npz["train_mask"]).ravel().astype(bool)).to(dev)
                if "train_mask" in npz.files else torch.rand(N, device=dev, generator=gen) < 0.1)
        classes = max(16, int(y.max().item()) + 1)

        class GCN(torch.nn.Module):  # PyG's examples/gcn.py
            def __init__(self):
                super().__init__()
                self.conv1 = GCNConv(64, 64, cached=True)
                self.conv2 = GCNConv(64, classes, cached=True)

            def forward(self, x, edge_index):
                x = torch.nn.functional.dropout(x, p=0.5, training=self.training)
                x = self.conv1(x, edge_index).relu()
                x = torch.nn.functional.dropout(x, p=0.5, training=self.training)
                return self.conv2(x, edge_index)

        model = GCN().to(dev)
        opt = torch.optim.Adam([dict(params=model.conv1.parameters(), weight_decay=5e-4),
                                dict(params=model.conv2.parameters(), weight_decay=0)], lr=0.01)

        def epoch():
            # What an epoch of saga::train is (its log's "seconds"): the
            # training step, then an evaluation forward pass and the
            # accuracy.
            model.train()
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x, edge_index)[mask], y[mask])
            loss.backward()
            opt.step()
            model.eval()
            with torch.no_grad():
                (model(x, edge_index).argmax(1) == y).float().mean().item()
            return loss

        times = []
        for _ in range(args.epochs):
            ms, loss = time_ms(epoch, 1, warmup=0)
            times.append(ms)
        ms = statistics.median(times[1:] or times)
        record(dict(rec, ms=ms, loss=loss.item(), epochs=args.epochs, classes=classes),
               f"gcn_epoch pyg.GCNConv: {ms:.3f} ms/epoch (median of {max(1, len(times) - 1)}), "
               f"final loss {loss.item():.4f}")
    except (RuntimeError, MemoryError, ValueError, IndexError) as e:
        failed(rec, "gcn_epoch pyg.GCNConv", e)
out_file.close()


# ---- the table --------------------------------------------------------------
def cell(r, key, fmt):
    return format(r[key], fmt) if r.get(key) is not None else "-"


print(f"\n{'check':<10} {'peer':<16} {'F':>4} {'ms':>10} {'GB/s':>8} {'max|diff|':>10}  status", flush=True)
for r in results:
    status = ("error" if "error" in r else {True: "agrees", False: "DIFFERS"}.get(r.get("agrees"), ""))
    md = "nan" if status == "DIFFERS" and r.get("max_diff") is None else cell(r, "max_diff", ".3g")
    print(f"{r['check']:<10} {r.get('peer', '-'):<16} {r.get('F', '-'):>4} {cell(r, 'ms', '.3f'):>10} "
          f"{cell(r, 'gbps', '.1f'):>8} {md:>10}  {status}", flush=True)
for reason in differs:
    print(f"peers: {reason}", file=sys.stderr, flush=True)
sys.exit(1 if differs else 0)
