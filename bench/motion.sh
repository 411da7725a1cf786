#!/usr/bin/env bash
# What operator motion saves: G-GCN (bench/models/ggcn64.saga: 64 features,
# d = 64, 16 classes) training on an R-MAT graph of average degree 16, at
# -O2 and at -O2 with --disable-pass=operator-motion (the edge gate's three
# d x d matmuls then run once per edge, forward and backward, instead of
# once per vertex as GEMMs). An epoch is a training step (forward with
# dropout + backward), the Adam step and an evaluation forward pass; both
# configurations start from the same parameters and must reach the same
# loss.
#
#   bench/motion.sh                 # SCALE=14 EDGE_FACTOR=16 EPOCHS=2 THREADS=2
#
# Writes bench/results/motion.csv and bench/results/motion.log (RESULTS:
# another folder). BUILD: the build folder (build); SAGA_NO_BUILD (set:
# use its saga-bench-suite as it is).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SCALE="${SCALE:-14}"
EDGE_FACTOR="${EDGE_FACTOR:-16}"
EPOCHS="${EPOCHS:-2}"
THREADS="${THREADS:-2}"
BUILD="${BUILD:-build}"
BENCH="$BUILD/bin/saga-bench-suite"
RESULTS="${RESULTS:-bench/results}"
mkdir -p "$RESULTS"
[ -n "${SAGA_NO_BUILD:-}" ] ||
  flock /tmp/saga-build.lock ninja -C "$BUILD" -j2 saga-bench-suite >/dev/null
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -qw avx512f /proc/cpuinfo; then
  export OPENBLAS_CORETYPE=SkylakeX
fi
LOG="$RESULTS/motion.log"
echo "# bench/motion.sh $(date -u +%Y-%m-%dT%H:%M:%SZ), commit" \
     "$(git rev-parse --short HEAD), load $(cut -d' ' -f1-3 /proc/loadavg)" > "$LOG"
for config in motion nomotion; do
  flags=()
  [ "$config" = nomotion ] && flags=(--disable-pass operator-motion)
  echo "== G-GCN training, R-MAT scale $SCALE, $config" | tee -a "$LOG"
  "$BENCH" train --model bench/models/ggcn64.saga --scale "$SCALE" \
      --edge-factor "$EDGE_FACTOR" --epochs "$EPOCHS" --threads "$THREADS" \
      "${flags[@]}" 2>&1 | tee -a "$LOG" | grep -E '^(train|memory)'
done
/usr/bin/python3 - "$LOG" "$RESULTS/motion.csv" <<'PY'
import re, sys
rows = []
for line in open(sys.argv[1]):
    if line.startswith("RESULT kind=train"):
        rows.append(dict(kv.split("=", 1) for kv in line.split()[1:]))
keys = ["passes", "scale", "vertices", "edges", "threads", "ms", "step_ms",
        "initial_loss", "last_loss", "peak_rss_mib"]
with open(sys.argv[2], "w") as out:
    out.write(",".join(keys) + "\n")
    for r in rows:
        out.write(",".join(r.get(k, "") for k in keys) + "\n")
if len(rows) == 2:
    a, b = (float(r["ms"]) for r in rows)
    print(f"G-GCN epoch: -O2 {a:.1f} ms, without operator motion {b:.1f} ms:"
          f" {b / a:.2f}x; last losses {rows[0]['last_loss']} and"
          f" {rows[1]['last_loss']}")
PY
