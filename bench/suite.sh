#!/usr/bin/env bash
# The benchmark suite: memory bandwidth, the GCN aggregation on an R-MAT sweep
# and a GCN training epoch, Saga against PyTorch baselines, in one run.
#
#   bench/suite.sh
#   SCALES="12 14 16 18 20 21" WIDTHS="16 64 256" bench/suite.sh   # full sweep
#
# 1. STREAM triad (bench/stream_triad.c, built here with
#    cc -O3 -march=native -fopenmp): the best of 10 passes of a = b + s*c,
#    24 bytes per element (STREAM's convention; no write-allocate), THREADS
#    OpenMP threads, arrays of max(80M, 4 x LLC / 8) doubles.
# 2. For each R-MAT scale in SCALES (edge factor EDGE_FACTOR, seed SEED; self
#    loops and repeated edges removed), saga-bench-suite agg times the sum
#    aggregation out[v] = sum_{u->v} x[u] (bench/models/agg{F}.saga) for each
#    width in WIDTHS and dumps the graph, features and its output; then
#    bench/suite_baselines.py agg times torch.sparse.mm (CSR), PyG-style
#    index_select + index_add_, and DGL's update_all when DGL imports, and
#    checks every output against Saga's.
# 3. On the TRAIN_SCALE graph, GCN training epochs (bench/models/gcn64.saga:
#    64 features, 64 hidden, 16 classes, Adam, cross-entropy over all
#    vertices): saga-bench-suite train (saga::train) against
#    suite_baselines.py train (torch.sparse.mm and PyG-style GCNs).
# Prints a table (times, effective bandwidth over the compulsory bytes
# 8(V+1) + 4E + 4VF + 4VF, % of STREAM triad, baseline / Saga ratios) and
# writes bench/results/suite.csv; the raw output goes to
# bench/results/suite.log.
#
# Settings (environment): THREADS (2), SCALES ("12 16 20"), WIDTHS
# ("16 64 256"), EDGE_FACTOR (16), SEED (1), REPEAT (timed runs per
# aggregation, 3), REPEAT_SMALL (for scales below 18, 20), TRAIN_SCALE (20;
# "none" skips training), TRAIN_EPOCHS (timed epochs after one warm-up, 2),
# STREAM_N (triad elements; default from the LLC), BUILD (build), JOBS (build
# jobs), BUILD_LOCK (a file to flock around the build), DATA (dumps;
# $BUILD/bench-suite, ~2.5 GB at scale 20, deleted per scale unless
# KEEP_DATA=1), RESULTS (bench/results: where suite.csv and suite.log go),
# PEERS (a venv whose bin/python3 runs the baselines), SAGA_NO_BUILD (set:
# use $BUILD's saga-bench-suite as it is), SAGA_NO_INSTALL (set: never
# apt-get; without torch the baselines are skipped with a line saying so,
# after reading Saga's dumps).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
THREADS="${THREADS:-2}"
SCALES="${SCALES:-12 16 20}"
WIDTHS="${WIDTHS:-16 64 256}"
EDGE_FACTOR="${EDGE_FACTOR:-16}"
SEED="${SEED:-1}"
REPEAT="${REPEAT:-3}"
REPEAT_SMALL="${REPEAT_SMALL:-20}"
TRAIN_SCALE="${TRAIN_SCALE:-20}"
TRAIN_EPOCHS="${TRAIN_EPOCHS:-2}"
BUILD="${BUILD:-build}"
DATA="${DATA:-$BUILD/bench-suite}"
# The peers' Python: the venv named by PEERS (torch 2.2 from PyPI and DGL
# 2.1: ../shared/TOOLCHAIN.md's working set, the strongest peers), else
# Debian's python3 with its torch 1.13 (no DGL).
if [ -n "${PEERS:-}" ]; then
  PYTHON="$PEERS/bin/python3"
  [ -x "$PYTHON" ] || { echo "suite.sh: PEERS=$PEERS has no bin/python3" >&2; exit 1; }
else
  PYTHON=/usr/bin/python3 # Debian's; the first python3 on PATH may be another
fi
RESULTS="${RESULTS:-bench/results}"
mkdir -p "$RESULTS" "$DATA"
WIDTH_LIST="$(echo $WIDTHS | tr ' ' ',')"

# Debian's OpenBLAS does not recognise recent AVX-512 Xeons; sagac picks its
# SkylakeX kernels itself (bench/README.md, GEMM). Here both Saga and
# PyTorch (which uses the same system BLAS) get them.
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -qw avx512f /proc/cpuinfo; then
  export OPENBLAS_CORETYPE=SkylakeX
fi
# PyTorch's OpenMP threads spin at each barrier by default; on a shared
# machine a spinning thread competes with the one it waits for (torch.sparse.mm
# at scale 14, F=64, 2 threads: 52 ms spinning, 7 ms passive on a loaded
# 2-core machine). Passive waiting is the fairer default here; set
# OMP_WAIT_POLICY=active to see the other.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"

# --- build -------------------------------------------------------------------
LOCK=()
[ -n "${BUILD_LOCK:-}" ] && LOCK=(flock "$BUILD_LOCK")
if [ -z "${SAGA_NO_BUILD:-}" ]; then
  if [ ! -f "$BUILD/build.ninja" ]; then
    "${LOCK[@]}" cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
  fi
  "${LOCK[@]}" cmake --build "$BUILD" --target saga-bench-suite \
    ${JOBS:+-j "$JOBS"}
fi
BENCH="$BUILD/bin/saga-bench-suite"
STREAM="$DATA/stream_triad"
cc -O3 -march=native -fopenmp bench/stream_triad.c -o "$STREAM"

if [ -z "${PEERS:-}${SAGA_NO_INSTALL:-}" ] &&
   ! "$PYTHON" -c 'import torch, numpy' 2>/dev/null; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get install -y python3-torch python3-numpy python3-scipy
fi

# --- runs --------------------------------------------------------------------
LOG="$RESULTS/suite.log"
{
  echo "# bench/suite.sh $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
       "$(git diff --quiet HEAD -- . ':!bench/results' 2>/dev/null ||
          echo '(with uncommitted changes)')"
  git status --short --untracked-files=no -- . ':!bench/results' 2>/dev/null |
    sed 's/^/#   /'
  echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)," \
       "$(nproc) CPUs," \
       "$(free -g | awk '/Mem:/ {print $2}') GiB; threads $THREADS;" \
       "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}" \
       "OMP_WAIT_POLICY=$OMP_WAIT_POLICY"
  echo "# SCALES=\"$SCALES\" WIDTHS=\"$WIDTHS\" EDGE_FACTOR=$EDGE_FACTOR" \
       "SEED=$SEED REPEAT=$REPEAT REPEAT_SMALL=$REPEAT_SMALL" \
       "TRAIN_SCALE=$TRAIN_SCALE TRAIN_EPOCHS=$TRAIN_EPOCHS"
  echo "# load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$LOG"

TIME=()
[ -x /usr/bin/time ] &&
  TIME=(/usr/bin/time -f "memory    peak RSS %M KiB, wall %e s")
run() { # label, command...
  echo "== $1 ($(date +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))" |
    tee -a "$LOG"
  shift
  local status=0
  "${TIME[@]}" "$@" 2>&1 | tee -a "$LOG" || status=$?
  # 77: torch is not installed (its line says so); the rest goes on.
  [ "$status" = 0 ] || [ "$status" = 77 ] || exit "$status"
}

run "stream triad" env OMP_NUM_THREADS="$THREADS" "$STREAM" ${STREAM_N:-}

for SCALE in $SCALES; do
  R="$REPEAT"
  [ "$SCALE" -lt 18 ] && R="$REPEAT_SMALL"
  DIR="$DATA/agg-s$SCALE-e$EDGE_FACTOR"
  run "saga agg scale $SCALE" "$BENCH" agg --scale "$SCALE" \
      --edge-factor "$EDGE_FACTOR" --seed "$SEED" --widths "$WIDTH_LIST" \
      --threads "$THREADS" --repeat "$R" --dump "$DIR"
  run "baselines agg scale $SCALE" "$PYTHON" bench/suite_baselines.py agg \
      "$DIR" --widths "$WIDTH_LIST" --threads "$THREADS" --repeat "$R"
  [ "${KEEP_DATA:-0}" = 1 ] || rm -rf "$DIR"
done

if [ "$TRAIN_SCALE" != none ]; then
  DIR="$DATA/train-s$TRAIN_SCALE-e$EDGE_FACTOR"
  run "saga train scale $TRAIN_SCALE" "$BENCH" train --scale "$TRAIN_SCALE" \
      --edge-factor "$EDGE_FACTOR" --seed "$SEED" --threads "$THREADS" \
      --epochs "$TRAIN_EPOCHS" --dump "$DIR"
  run "baselines train scale $TRAIN_SCALE" "$PYTHON" bench/suite_baselines.py \
      train "$DIR" --threads "$THREADS" --epochs "$TRAIN_EPOCHS"
  [ "${KEEP_DATA:-0}" = 1 ] || rm -rf "$DIR"
fi

echo "# load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg)" |
  tee -a "$LOG"

# --- table -------------------------------------------------------------------
# GB/s: the compulsory bytes 8(V+1) + 4E + 4VF + 4VF (offsets, sources,
# features read once, output written once) over the time; %STREAM: that over
# the triad's GB/s. "gather GB/s" counts a feature row read from memory for
# every edge instead (8(V+1) + 4E + 4EF + 4VF): the traffic when the rows
# miss the caches every time, which for a graph much larger than the LLC is
# closer to what the memory system really moves.
"$PYTHON" - "$LOG" "$RESULTS/suite.csv" "$TRAIN_SCALE" <<'EOF'
import csv, sys
log, out, train_scale = sys.argv[1:]
rows = []
for line in open(log):
    if line.startswith("RESULT "):
        rows.append(dict(kv.split("=", 1) for kv in line.split()[1:]))
stream_row = next(r for r in rows if r["system"] == "stream")
stream = float(stream_row["triad_gbs"])
rows = [r for r in rows if r["system"] != "stream"]
order = {"saga": 0, "pytorch-sparse": 1, "pyg-style": 2, "dgl": 3}
rows.sort(key=lambda r: (r["kind"] != "agg", int(r["scale"]),
                         int(r["width"]), order.get(r["system"], 9)))
saga = {(r["kind"], r["scale"], r["width"]): r for r in rows
        if r["system"] == "saga"}
fields = ["kind", "scale", "vertices", "edges", "width", "system", "threads",
          "ms", "saga_kernel_ms", "gbs", "pct_stream", "gather_gbs",
          "ratio_over_saga", "max_abs_diff", "initial_loss", "last_loss",
          "saga_step_ms", "saga_eval_ms"]
table = []
for r in rows:
    s = saga[(r["kind"], r["scale"], r["width"])]
    t = {k: r.get(k, "") for k in fields}
    t["saga_kernel_ms"] = r.get("kernel_ms", "")
    t["saga_step_ms"] = r.get("step_ms", "")
    t["saga_eval_ms"] = r.get("eval_ms", "")
    if r["ms"] != "skipped":
        ms = float(r["ms"])
        t["ratio_over_saga"] = ("" if r["system"] == "saga"
                                else f"{ms / float(s['ms']):.2f}")
        if r["kind"] == "agg":
            v, e, f = int(r["vertices"]), int(r["edges"]), int(r["width"])
            gbs = (8 * (v + 1) + 4 * e + 8 * v * f) / (ms * 1e-3) / 1e9
            gather = (8 * (v + 1) + 4 * e + 4 * e * f + 4 * v * f) / (
                ms * 1e-3) / 1e9
            t["gbs"] = f"{gbs:.3f}"
            t["pct_stream"] = f"{100 * gbs / stream:.1f}"
            t["gather_gbs"] = f"{gather:.3f}"
    table.append(t)
with open(out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=fields)
    w.writeheader()
    w.writerow({"kind": "stream", "system": "triad",
                "threads": stream_row["threads"], "gbs": f"{stream:.3f}",
                "pct_stream": "100"})
    w.writerows(table)

print(f"\nSTREAM triad: {stream:.2f} GB/s ({stream_row['threads']} threads, "
      f"24 bytes/element, best of 10)\n")
print("Aggregation out[v] = sum_{u->v} x[u]: median ms; GB/s over the "
      "compulsory 8(V+1) + 4E + 8VF bytes\nand its % of STREAM; gather GB/s "
      "with a row read per edge; ratio = baseline / Saga (> 1: Saga faster)")
print(f"{'scale':>5} {'vertices':>9} {'edges':>10} {'F':>4} {'system':15} "
      f"{'ms':>9} {'(kernel)':>9} {'GB/s':>6} {'%STREAM':>7} {'gather':>6} "
      f"{'ratio':>6}  max|diff|")
for t in table:
    if t["kind"] != "agg":
        continue
    mark = (" <- headline" if (t["scale"], t["width"]) == ("20", "64")
            and t["system"] == "saga" else "")
    ms = t["ms"] if t["ms"] == "skipped" else f"{float(t['ms']):.2f}"
    kernel = f"{float(t['saga_kernel_ms']):.2f}" if t["saga_kernel_ms"] else ""
    gbs = f"{float(t['gbs']):.2f}" if t["gbs"] else "-"
    gather = f"{float(t['gather_gbs']):.2f}" if t["gather_gbs"] else "-"
    print(f"{t['scale']:>5} {t['vertices']:>9} {t['edges']:>10} "
          f"{t['width']:>4} {t['system']:15} {ms:>9} {kernel:>9} {gbs:>6} "
          f"{t['pct_stream'] or '-':>7} {gather:>6} "
          f"{t['ratio_over_saga'] or '-':>6}  {t['max_abs_diff'] or '-'}{mark}")
trains = [t for t in table if t["kind"] == "train"]
if trains:
    print(f"\nGCN training epoch, R-MAT scale {train_scale} "
          f"({trains[0]['vertices']} vertices, {trains[0]['edges']} edges "
          f"with self loops), 64-64-16, Adam,\nloss over all vertices; an "
          f"epoch = forward with dropout + backward + Adam step + evaluation "
          f"forward")
    print(f"{'system':15} {'ms/epoch':>9} {'ratio':>6} {'initial loss':>13} "
          f"{'last loss':>10}")
    for t in trains:
        ms = t["ms"] if t["ms"] == "skipped" else f"{float(t['ms']):.1f}"
        print(f"{t['system']:15} {ms:>9} {t['ratio_over_saga'] or '-':>6} "
              f"{t['initial_loss']:>13} {t['last_loss']:>10}")
    s = next(t for t in trains if t["system"] == "saga")
    print(f"Saga's epoch: train step (forward + backward) "
          f"{float(s['saga_step_ms']):.1f} ms, evaluation forward "
          f"{float(s['saga_eval_ms']):.1f} ms (one run each, after the "
          f"timed epochs)")
# Sums in another order differ by rounding: warn above 1e-5 of the largest
# output.
for r in rows:
    if r.get("max_abs_diff", "-") != "-" and not (
            float(r["max_abs_diff"]) <= 1e-5 * max(1, float(r["max_abs_out"]))):
        print(f"WARNING: {r['system']} differs from Saga by "
              f"{r['max_abs_diff']} (scale {r['scale']}, F={r['width']}, "
              f"outputs up to {r['max_abs_out']})")
print(f"wrote {out} and {log}")
EOF
