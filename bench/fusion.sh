#!/usr/bin/env bash
# What fused propagation saves: GAT training (bench/models/gat64.saga: 64
# features, 8 heads x 8, 16 classes, attention dropout) on R-MAT graphs, at
# -O2 (fused: no edge tensor exists) and at -O2 with
# --disable-pass=fuse-propagation (unfused: each edge function writes its
# message and score per edge, as PyG and DGL do without fused kernels, and a
# second kernel reduces them). Peak memory (getrusage's ru_maxrss) and epoch
# time, one fresh process per configuration so that each peak is its own.
#
#   bench/fusion.sh                         # SCALES="20" EDGE_FACTOR=16
#   SCALES="18 19 20" EPOCHS=1 bench/fusion.sh
#
# Each run is saga-bench-suite train (bench/SuiteBench.cpp: saga::train,
# Adam, the loss over all vertices) with one warm-up epoch and EPOCHS timed
# ones; an epoch is a training step (forward with dropout + backward), the
# Adam step and an evaluation forward pass. The peak covers the whole
# process: the graph's generation, its CSR in both orders (~1 GiB at scale
# 20), features, parameters, the compiled plans and the training; the
# resident set before the first epoch is printed beside it.
#
# The reference point: the same GAT in plain PyTorch, written as PyG's
# GATConv computes it without compiled extensions (bench/gat_baseline.py:
# index_select per edge, scatter_reduce 'amax' / exp / index_add_ softmax,
# attention dropout, index_add_ of the messages; every edge tensor
# materialised), run on the graph, features, labels and initial parameters
# Saga dumps (its fused run at that scale passes --dump; the script checks
# that its initial loss matches Saga's), in a fresh process, with
# OMP_WAIT_POLICY=passive. Its edge tensors take about 1.4 KB per edge, so it
# runs at the largest scale (up to the largest of SCALES) whose estimated
# peak fits in PYG_MEMORY_GIB and 90 % of MemAvailable (scale 19 on a 24 GiB
# machine: it peaked at 10.8 GiB there, so scale 20 would need ~21-24 GiB);
# when that scale is not in SCALES, Saga runs there too (CONFIGS, fused at
# least) so that every system is measured on the same graph. Its rows have
# system=pytorch-pyg-style.
#
# Settings (environment): SCALES ("20"), EDGE_FACTOR (16), EPOCHS (2),
# THREADS (2), CONFIGS ("fused unfused"; also "O0"), PYG ("auto": the scale
# that fits; a number: that scale; "no": skip the PyTorch step),
# PYG_MEMORY_GIB (20), DATA (dump folder, build/bench-data/fusion-sN),
# SAGA_NO_BUILD (set: use build/bin/saga-bench-suite as it is; otherwise
# build it first, through the build lock), BUILD (build), BENCH (the binary,
# $BUILD/bin/saga-bench-suite), RESULTS (bench/results: where fusion.csv
# and fusion.log go), PEERS (a venv whose bin/python3 runs the PyTorch
# step; default Debian's /usr/bin/python3: without torch the step is
# skipped with a line saying so), STRICT (1: exit non-zero at the end when
# a run failed; by default a failed run, e.g. one killed for memory, is a
# FAILED line in the table).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SCALES="${SCALES:-20}"
EDGE_FACTOR="${EDGE_FACTOR:-16}"
EPOCHS="${EPOCHS:-2}"
THREADS="${THREADS:-2}"
CONFIGS="${CONFIGS:-fused unfused}"
PYG="${PYG:-auto}"
PYG_MEMORY_GIB="${PYG_MEMORY_GIB:-20}"
if [ -n "${PEERS:-}" ]; then
  PYTHON="$PEERS/bin/python3"
  [ -x "$PYTHON" ] || { echo "fusion.sh: PEERS=$PEERS has no bin/python3" >&2; exit 1; }
else
  PYTHON=/usr/bin/python3
fi
BUILD="${BUILD:-build}"
BENCH="${BENCH:-$BUILD/bin/saga-bench-suite}"
MODEL=bench/models/gat64.saga
RESULTS="${RESULTS:-bench/results}"
mkdir -p "$RESULTS"

if [ -z "${SAGA_NO_BUILD:-}" ]; then
  flock /tmp/saga-build.lock ninja -C "$BUILD" -j2 saga-bench-suite >/dev/null
fi
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -qw avx512f /proc/cpuinfo; then
  export OPENBLAS_CORETYPE=SkylakeX
fi

LOG="$RESULTS/fusion.log"
{
  echo "# bench/fusion.sh $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
       "$(git diff --quiet HEAD -- . ':!bench/results' 2>/dev/null ||
          echo '(with uncommitted changes)')"
  echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) CPUs," \
       "$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "# $MODEL, R-MAT scales $SCALES, edge factor $EDGE_FACTOR," \
       "$EPOCHS timed epochs, $THREADS threads, configurations $CONFIGS"
  echo "# load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$LOG"

# The PyTorch step's scale: the largest up to the largest of SCALES whose
# estimated peak (bench/gat_baseline.py --estimate, from the sampled edge
# count plus self loops, an upper bound) fits.
pyg_scale=""
if [ "$PYG" = auto ]; then
  top=$(printf '%s\n' $SCALES | sort -n | tail -1)
  avail_gib=$(awk '/MemAvailable/ {printf "%.2f", 0.9 * $2 / 1048576}' \
              /proc/meminfo)
  for ((s = top; s >= 10; s--)); do
    est=$("$PYTHON" bench/gat_baseline.py --estimate $((1 << s)) \
          $(((1 << s) * (EDGE_FACTOR + 1))))
    if awk -v e="$est" -v l="$PYG_MEMORY_GIB" -v a="$avail_gib" \
         'BEGIN { exit !(e <= l && e <= a) }'; then
      pyg_scale=$s
      break
    fi
    echo "# pytorch-pyg-style: scale $s would need ~$est GiB (limit" \
         "$PYG_MEMORY_GIB GiB, 90 % of MemAvailable $avail_gib GiB)" |
      tee -a "$LOG"
  done
elif [ "$PYG" != no ]; then
  pyg_scale="$PYG"
fi
if [ -n "$pyg_scale" ]; then
  DATA="${DATA:-build/bench-data/fusion-s$pyg_scale}"
  echo "# pytorch-pyg-style at scale $pyg_scale (Saga dumps to $DATA)" |
    tee -a "$LOG"
fi

run_saga() { # scale config
  local scale="$1" config="$2" flags=()
  case "$config" in
    fused) flags=() ;;
    unfused) flags=(--disable-pass fuse-propagation) ;;
    O0) flags=(--opt-level 0) ;;
    *) echo "unknown configuration $config" >&2; exit 2 ;;
  esac
  # The fused run at the PyTorch step's scale dumps its graph and inputs
  # (before the resident set is first measured; files, not memory).
  if [ "$scale" = "$pyg_scale" ] && [ "$config" = fused ]; then
    flags+=(--dump "$DATA")
  fi
  echo "== GAT training, R-MAT scale $scale, $config" | tee -a "$LOG"
  local status=0
  "$BENCH" train --model "$MODEL" --scale "$scale" \
      --edge-factor "$EDGE_FACTOR" --epochs "$EPOCHS" --threads "$THREADS" \
      "${flags[@]}" 2>&1 | tee -a "$LOG" || status=$?
  if [ "$status" -ne 0 ]; then
    echo "FAILED scale=$scale config=$config status=$status" \
         "(killed for memory if 137)" | tee -a "$LOG"
  fi
}

for scale in $SCALES; do
  for config in $CONFIGS; do
    run_saga "$scale" "$config"
  done
done

if [ -n "$pyg_scale" ]; then
  # Saga on the PyTorch step's graph when the loop above did not run it:
  # fused (which dumps) first, then the other configurations.
  if ! printf '%s\n' $SCALES | grep -qx "$pyg_scale"; then
    run_saga "$pyg_scale" fused
    for config in $CONFIGS; do
      [ "$config" = fused ] || run_saga "$pyg_scale" "$config"
    done
  elif ! printf '%s\n' $CONFIGS | grep -qx fused; then
    run_saga "$pyg_scale" fused
  fi
  echo "== GAT training, R-MAT scale $pyg_scale, pytorch-pyg-style" |
    tee -a "$LOG"
  status=0
  OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}" "$PYTHON" \
      bench/gat_baseline.py "$DATA" --threads "$THREADS" --epochs "$EPOCHS" \
      --memory-limit-gib "$PYG_MEMORY_GIB" 2>&1 | tee -a "$LOG" ||
    status=$?
  if [ "$status" = 77 ]; then
    echo "# pytorch-pyg-style skipped: torch is not installed for $PYTHON" |
      tee -a "$LOG"
  elif [ "$status" -ne 0 ]; then
    echo "FAILED scale=$pyg_scale system=pytorch-pyg-style status=$status" \
         "(3: skipped, would not fit; 137: killed for memory)" | tee -a "$LOG"
  fi
fi
echo "# load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg)" |
  tee -a "$LOG"

"$PYTHON" - "$LOG" "$RESULTS/fusion.csv" <<'EOF'
import csv, sys
log, out = sys.argv[1:]
rows = []
for line in open(log):
    if line.startswith("RESULT "):
        rows.append(dict(kv.split("=", 1) for kv in line.split()[1:]))
config = {"O2": "fused", "O2,no-fuse-propagation": "unfused", "O0": "O0"}
fields = ["system", "scale", "vertices", "edges", "config", "epoch_ms",
          "step_ms", "peak_rss_mib", "base_rss_mib", "peak_ratio_over_fused",
          "plan_peak_mib", "plan_peak_ratio_over_fused",
          "time_ratio_over_fused"]
table = []
for r in rows:
    system = r.get("system", "saga")
    if r["ms"] == "skipped":
        continue
    table.append({"system": system, "scale": r["scale"],
                  "vertices": r["vertices"], "edges": r["edges"],
                  "config": (config.get(r["passes"], r["passes"])
                             if system == "saga" else "eager"),
                  "epoch_ms": r["ms"], "step_ms": r["step_ms"],
                  "peak_rss_mib": r["peak_rss_mib"],
                  "base_rss_mib": r["base_rss_mib"],
                  "plan_peak_mib": r.get("plan_peak_mib", "")})
def saga_at(scale, cfg):
    return next((f for f in table if f["system"] == "saga" and
                 f["scale"] == scale and f["config"] == cfg), None)
for t in table:
    fused = saga_at(t["scale"], "fused")
    ok = fused is not None and t is not fused
    t["peak_ratio_over_fused"] = (
        f"{float(t['peak_rss_mib']) / float(fused['peak_rss_mib']):.2f}"
        if ok else "")
    t["plan_peak_ratio_over_fused"] = (
        f"{float(t['plan_peak_mib']) / float(fused['plan_peak_mib']):.2f}"
        if ok and t["plan_peak_mib"] and float(fused["plan_peak_mib"])
        else "")
    t["time_ratio_over_fused"] = (
        f"{float(t['epoch_ms']) / float(fused['epoch_ms']):.2f}" if ok else "")
with open(out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=fields)
    w.writeheader()
    w.writerows(table)
print()
print(f"{'system':>17} {'scale':>5} {'vertices':>9} {'edges':>10} "
      f"{'config':>8} {'epoch ms':>9} {'peak MiB':>9} {'base MiB':>9} "
      f"{'peak/fused':>10} {'step MiB':>9} {'step/fused':>10} "
      f"{'time/fused':>10}")
for t in table:
    print(f"{t['system']:>17} {t['scale']:>5} {t['vertices']:>9} "
          f"{t['edges']:>10} {t['config']:>8} {float(t['epoch_ms']):>9.0f} "
          f"{float(t['peak_rss_mib']):>9.0f} {float(t['base_rss_mib']):>9.0f} "
          f"{t['peak_ratio_over_fused'] or '-':>10} "
          f"{t['plan_peak_mib'] or '-':>9} "
          f"{t['plan_peak_ratio_over_fused'] or '-':>10} "
          f"{t['time_ratio_over_fused'] or '-':>10}")
for t in table:
    unfused = saga_at(t["scale"], "unfused")
    if t["system"] != "saga" and unfused is not None:
        print(f"\n{t['system']} / Saga unfused at scale {t['scale']}: peak "
              f"{float(t['peak_rss_mib']) / float(unfused['peak_rss_mib']):.2f}"
              f"x, epoch "
              f"{float(t['epoch_ms']) / float(unfused['epoch_ms']):.2f}x")
for line in open(log):
    if line.startswith("FAILED ") or line.startswith("# pytorch-pyg-style"):
        print(line.strip())
print("\npeak: the whole process (ru_maxrss); base: resident before the first "
      "epoch\n(graph in both CSR orders, its edge list, features, parameters, "
      "plans; for\npytorch-pyg-style: Python, torch, the edge index with self "
      "loops, features,\nparameters, after one evaluation pass). Ratios: over "
      "Saga fused at the same scale.\nstep: the training step's own buffers "
      "(TrainStepResult::peakBytes: activations,\ngradients, temporaries; not "
      "the graph, inputs or parameters).")
print(f"wrote {out} and {log}")
EOF
if [ "${STRICT:-0}" = 1 ] && grep -q '^FAILED ' "$LOG"; then
  echo "fusion.sh: a run failed (STRICT=1)" >&2
  exit 1
fi
