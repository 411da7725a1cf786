#!/usr/bin/env bash
# Saga against Saga: the same two workloads with two builds (e.g. before and
# after a refactoring), interleaved, so that both see the same machine:
#   bench/ab.sh BUILD_A BUILD_B [WORKDIR]
#   epoch      bench/epoch.sh's Saga run: examples/gcn.saga on Cora, 200
#              epochs, Adam lr 0.01, seed 0, 1 thread: ms per epoch (mean,
#              as `sagac train` prints it)
#   minibatch  bench/minibatch.sh's Saga run: bench/models/sage64.saga on
#              R-MAT SCALE (default 20), batch 1024, fan-out 10,25, 1
#              thread: seconds per epoch (median of EPOCHS)
# LOADS (default "epoch minibatch") chooses among them; SCALE, EPOCHS
# (minibatch) and CORA_EPOCHS (epoch) size them. ROUNDS (default 3) rounds, each running A then B (B then A in odd rounds).
# Prints every run and, per workload, each build's median and fastest run
# (the least disturbed by other load) and B / A of both.
# The graph file is made once, by build A's saga-bench-suite.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
a=$(cd "$1" && pwd) b=$(cd "$2" && pwd)
work=${3:-/tmp/saga-ab}
rounds=${ROUNDS:-3} scale=${SCALE:-20} epochs=${EPOCHS:-3}
loads=${LOADS:-epoch minibatch} # the workloads to run
cora_epochs=${CORA_EPOCHS:-200}  # epoch's epochs
mkdir -p "$work"
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for build in "$a" "$b"; do
  echo "# $build: $(git -C "$build/.." rev-parse --short HEAD 2>/dev/null || echo '?')"
done
file=$(BUILD=$a "$here/bench/rmat_sgf.sh" "$scale" "$work")

epoch() { # build -> ms per epoch
  OPENBLAS_NUM_THREADS=1 "$1/bin/sagac" train "$here/examples/gcn.saga" \
    --data "$here/examples/data/cora" --epochs "$cora_epochs" --lr 0.01 --seed 0 \
    --threads 1 --quiet | sed -n 's/.*[( ]\([0-9.]*\) ms\/epoch.*/\1/p' | tail -1
}
minibatch() { # build -> median seconds per epoch
  OPENBLAS_NUM_THREADS=1 "$1/bin/sagac" train "$here/bench/models/sage64.saga" \
    --data "$file" --no-normalize --epochs "$epochs" --batch-size 1024 \
    --fanout 10,25 --threads 1 |
    sed -n 's/.*batches in \([0-9.]*\) ms.*/\1/p' | sort -n |
    awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)] / 1000}'
}
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

declare -A runs
for ((r = 0; r < rounds; ++r)); do
  order="a b"
  [ $((r % 2)) = 1 ] && order="b a"
  for which in $order; do
    build=$a; [ "$which" = b ] && build=$b
    for load in $loads; do
      v=$($load "$build")
      [ -n "$v" ] || { echo "$load with $build printed no figure"; exit 1; }
      echo "round $r $load $which $v"
      runs[$load.$which]+="$v "
    done
  done
done
ratio() { awk -v x="$1" -v y="$2" 'BEGIN {printf "%.3f", x / y}'; }
for load in $loads; do
  ma=$(echo "${runs[$load.a]}" | tr ' ' '\n' | grep . | median)
  mb=$(echo "${runs[$load.b]}" | tr ' ' '\n' | grep . | median)
  fa=$(echo "${runs[$load.a]}" | tr ' ' '\n' | grep . | sort -n | head -1)
  fb=$(echo "${runs[$load.b]}" | tr ' ' '\n' | grep . | sort -n | head -1)
  echo "$load: median A $ma, B $mb, B / A $(ratio "$mb" "$ma"); fastest A $fa, B $fb, B / A $(ratio "$fb" "$fa")"
done
