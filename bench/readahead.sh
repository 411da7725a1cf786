#!/bin/sh
# Chunk reads ahead of compute, from a graph file: GCN (bench/models/
# gcn64.saga) on R-MAT scale 20 in a .sgf with 16 intervals, trained in
# memory (the file loaded whole) and under --memory-budget BUDGET with
# spills in --scratch, all O_DIRECT, with and without --chunk-read-ahead,
# in ROUNDS alternating rounds. Prints each run's epochs, its summary and
# peak resident set, then per setting the median epoch (epochs after the
# first) and its ratio to in memory.
#
#   bench/readahead.sh [WORKDIR]   (default /work/dist; ROUNDS 2, EPOCHS 4,
#                                   BUDGET 400M, SCALE 20, BUILD build)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/work/dist}
rounds=${ROUNDS:-2}
epochs=${EPOCHS:-4}
budget=${BUDGET:-400M}
scale=${SCALE:-20}
build=${BUILD:-build}
case $build in /*) ;; *) build=$here/$build ;; esac
bin=$build/bin
file=$work/rmat$scale-f64-p16.sgf
mkdir -p "$work/scratch"
if [ ! -f "$file" ]; then
  "$bin/saga-bench-suite" sgf --scale "$scale" --edge-factor 16 --features 64 \
    --classes 16 --intervals 16 --out "$file" | grep -v '^progress'
fi
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git -C "$here" rev-parse --short HEAD), $(nproc) cores"
times=$(mktemp)
run=$(mktemp)
trap 'rm -f "$times" "$run"' EXIT
r=1
while [ "$r" -le "$rounds" ]; do
  for mode in memory ahead inplace; do
    echo "## round $r: $mode"
    set -- train "$here/bench/models/gcn64.saga" --data "$file" \
      --epochs "$epochs" --threads 2 --reorder none
    case $mode in
      ahead) set -- "$@" --memory-budget "$budget" --scratch "$work/scratch" --direct-io ;;
      inplace) set -- "$@" --memory-budget "$budget" --scratch "$work/scratch" --direct-io \
                 --chunk-read-ahead=false ;;
    esac
    /usr/bin/time -f "peak resident set %M KiB" "$bin/sagac" "$@" > "$run" 2>&1
    grep -E '^(epoch|final|out of core|chunk reads|graph file|peak)' "$run"
    sed -n "s/^epoch *\([0-9]*\)\/.* \([0-9.]*\) ms$/$mode \1 \2/p" "$run" >> "$times"
  done
  r=$((r + 1))
done
echo "## medians of epochs 2..$epochs over $rounds rounds"
/usr/bin/python3 - "$times" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    mode, epoch, ms = line.split()
    if int(epoch) > 1:
        runs.setdefault(mode, []).append(float(ms))
base = statistics.median(runs["memory"])
names = {"memory": "in memory", "ahead": "budget, chunks read ahead",
         "inplace": "budget, chunks read in place"}
for mode in ("memory", "ahead", "inplace"):
    med = statistics.median(runs[mode])
    print(f"{names[mode]}: epoch {med:.1f} ms over {len(runs[mode])} epochs, "
          f"{med / base:.2f}x in memory")
PY
