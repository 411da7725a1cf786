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
# Settings (environment): SCALES ("20"), EDGE_FACTOR (16), EPOCHS (2),
# THREADS (2), CONFIGS ("fused unfused"; also "O0"), SAGA_NO_BUILD (set: use
# build/bin/saga-bench-suite as it is; otherwise build it first, through
# the build lock).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SCALES="${SCALES:-20}"
EDGE_FACTOR="${EDGE_FACTOR:-16}"
EPOCHS="${EPOCHS:-2}"
THREADS="${THREADS:-2}"
CONFIGS="${CONFIGS:-fused unfused}"
PYTHON=/usr/bin/python3
BENCH=build/bin/saga-bench-suite
MODEL=bench/models/gat64.saga
RESULTS=bench/results
mkdir -p "$RESULTS"

if [ -z "${SAGA_NO_BUILD:-}" ]; then
  flock /tmp/saga-build.lock ninja -C build -j2 saga-bench-suite >/dev/null
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

for scale in $SCALES; do
  for config in $CONFIGS; do
    case "$config" in
      fused) flags=() ;;
      unfused) flags=(--disable-pass fuse-propagation) ;;
      O0) flags=(--opt-level 0) ;;
      *) echo "unknown configuration $config" >&2; exit 2 ;;
    esac
    echo "== GAT training, R-MAT scale $scale, $config" | tee -a "$LOG"
    status=0
    "$BENCH" train --model "$MODEL" --scale "$scale" \
        --edge-factor "$EDGE_FACTOR" --epochs "$EPOCHS" --threads "$THREADS" \
        "${flags[@]}" 2>&1 | tee -a "$LOG" || status=$?
    if [ "$status" -ne 0 ]; then
      echo "FAILED scale=$scale config=$config status=$status" \
           "(killed for memory if 137)" | tee -a "$LOG"
    fi
  done
done
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
fields = ["scale", "vertices", "edges", "config", "epoch_ms", "step_ms",
          "peak_rss_mib", "base_rss_mib", "peak_ratio_over_fused",
          "time_ratio_over_fused"]
table = []
for r in rows:
    table.append({"scale": r["scale"], "vertices": r["vertices"],
                  "edges": r["edges"],
                  "config": config.get(r["passes"], r["passes"]),
                  "epoch_ms": r["ms"], "step_ms": r["step_ms"],
                  "peak_rss_mib": r["peak_rss_mib"],
                  "base_rss_mib": r["base_rss_mib"]})
for t in table:
    fused = next((f for f in table
                  if f["scale"] == t["scale"] and f["config"] == "fused"), None)
    ok = fused is not None and t["config"] != "fused"
    t["peak_ratio_over_fused"] = (
        f"{float(t['peak_rss_mib']) / float(fused['peak_rss_mib']):.2f}"
        if ok else "")
    t["time_ratio_over_fused"] = (
        f"{float(t['epoch_ms']) / float(fused['epoch_ms']):.2f}" if ok else "")
with open(out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=fields)
    w.writeheader()
    w.writerows(table)
print()
print(f"{'scale':>5} {'vertices':>9} {'edges':>10} {'config':>8} "
      f"{'epoch ms':>9} {'peak MiB':>9} {'base MiB':>9} {'peak/fused':>10} "
      f"{'time/fused':>10}")
for t in table:
    print(f"{t['scale']:>5} {t['vertices']:>9} {t['edges']:>10} "
          f"{t['config']:>8} {float(t['epoch_ms']):>9.0f} "
          f"{float(t['peak_rss_mib']):>9.0f} {float(t['base_rss_mib']):>9.0f} "
          f"{t['peak_ratio_over_fused'] or '-':>10} "
          f"{t['time_ratio_over_fused'] or '-':>10}")
for line in open(log):
    if line.startswith("FAILED "):
        print(line.strip())
print("\npeak: the whole process (ru_maxrss); base: resident before the first "
      "epoch\n(graph in both CSR orders, its edge list, features, parameters, "
      "plans).")
print(f"wrote {out} and {log}")
EOF
