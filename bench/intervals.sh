#!/usr/bin/env bash
# Source intervals (NGra's 2-D chunks in memory): the sum aggregation
# out[v] = sum_{u->v} x[u] at F = 64 (bench/models/agg64.saga), with every
# propagation over the whole CSR (--source-intervals 1) against cache-sized
# source intervals (0: the runtime's choice) and a sweep of fixed counts.
#
#   bench/intervals.sh
#   SWEEP="2 4 8 16" REPEAT=5 bench/intervals.sh
#
# Graphs (R-MAT, seed 1, degree-order relabelling as everywhere):
#   dense:  scale 19, edge factor 64 (524k vertices, ~29.7M edges), where
#           the features (134 MB) far exceed the last-level cache;
#   sparse: scale 20, edge factor 16 (1M vertices, ~16M edges), where the
#           runtime keeps the propagation unchunked (must be no slower).
# Prints median forward times and the speed-up over unchunked; writes
# bench/results/intervals.csv and intervals.log. Settings: THREADS (2),
# REPEAT (timed runs, 5), SWEEP ("2 4 8 16 32"), BUILD (build), CEILING
# (1: also run bench/agg_ceiling.cpp, the best any chunked kernel does on
# the dense graph without Saga; 0: skip it), DENSE ("19 64") and SPARSE
# ("20 16": scale and edge factor of each graph), RESULTS (bench/results),
# SAGA_NO_BUILD (set: use $BUILD's saga-bench-suite as it is).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
THREADS="${THREADS:-2}"
REPEAT="${REPEAT:-5}"
SWEEP="${SWEEP:-2 4 8 16 32}"
BUILD="${BUILD:-build}"
DENSE="${DENSE:-19 64}"
SPARSE="${SPARSE:-20 16}"
RESULTS="${RESULTS:-bench/results}"
mkdir -p "$RESULTS"
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -qw avx512f /proc/cpuinfo; then
  export OPENBLAS_CORETYPE=SkylakeX
fi
[ -n "${SAGA_NO_BUILD:-}" ] || cmake --build "$BUILD" --target saga-bench-suite >&2
BENCH="$BUILD/bin/saga-bench-suite"
LOG="$RESULTS/intervals.log"
CSV="$RESULTS/intervals.csv"
: > "$LOG"
echo "graph,scale,edge_factor,width,source_intervals_asked,source_intervals_used,ms" > "$CSV"
{
  echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo none)"
  echo "# $(lscpu | grep -E 'Model name|L3' | tr -s ' ' | paste -sd ';')"
} | tee -a "$LOG"

run() { # name scale edge_factor intervals
  local out ms used
  out="$("$BENCH" agg --scale "$2" --edge-factor "$3" --widths 64 \
          --threads "$THREADS" --repeat "$REPEAT" --source-intervals "$4" 2>&1)"
  echo "$out" >> "$LOG"
  ms="$(echo "$out" | sed -n 's/^RESULT.* ms=\([0-9.]*\).*/\1/p')"
  used="$(echo "$out" | sed -n 's/^RESULT.*source_intervals=\([0-9]*\).*/\1/p')"
  echo "$1,$2,$3,64,$4,$used,$ms" >> "$CSV"
  echo "$ms $used"
}

printf '%-8s %-22s %10s %8s %8s\n' graph "source intervals" "ms" "used" speedup
for g in "dense $DENSE" "sparse $SPARSE"; do
  set -- $g
  read -r base _ < <(run "$1" "$2" "$3" 1)
  [ -n "$base" ] || { echo "intervals.sh: $g failed; see $LOG" >&2; exit 1; }
  printf '%-8s %-22s %10.1f %8s %8s\n' "$1" "off (1)" "$base" 1 "1.00x"
  list="0"
  [ "$1" = dense ] && list="0 $SWEEP"
  for p in $list; do
    read -r ms used < <(run "$1" "$2" "$3" "$p")
    [ -n "$ms" ] ||
      { echo "intervals.sh: $g at $p intervals failed; see $LOG" >&2; exit 1; }
    label="$p"; [ "$p" = 0 ] && label="auto (cache-sized)"
    printf '%-8s %-22s %10.1f %8s %7.2fx\n' "$1" "$label" "$ms" "$used" \
      "$(echo "$base / $ms" | bc -l)"
  done
done | tee -a "$LOG"

# The ceiling: how far any source-interval kernel gets on this machine,
# measured without Saga (bench/agg_ceiling.cpp) on the same dense graph and
# features, checked against Saga's result. CEILING=0 skips it.
if [ "${CEILING:-1}" != 0 ]; then
  DUMP="$(mktemp -d "${TMPDIR:-/tmp}/saga-agg-ceiling.XXXXXX")"
  trap 'rm -rf "$DUMP"' EXIT
  set -- $DENSE
  "$BENCH" agg --scale "$1" --edge-factor "$2" --widths 64 --threads "$THREADS" \
    --repeat 1 --source-intervals 1 --dump "$DUMP" 2>>"$LOG" |
    grep '^RESULT' >> "$LOG" ||
    { echo "intervals.sh: the dump run failed; see $LOG" >&2; exit 1; }
  g++ -O3 -march=native -fopenmp bench/agg_ceiling.cpp -o "$DUMP/agg_ceiling"
  echo "# ceiling: bench/agg_ceiling.cpp on the dense graph" | tee -a "$LOG"
  OMP_NUM_THREADS="$THREADS" "$DUMP/agg_ceiling" "$DUMP" "$REPEAT" |
    grep -E '^(coverage|best|RESULT)' | tee -a "$LOG"
fi
