#!/bin/sh
# Mini-batch training against DGL and PyG, same run, same graph file:
# GraphSAGE-mean (bench/models/sage64.saga: 64 features, 64 hidden, 16
# classes, Adam lr 0.01) on R-MAT scale 20 (edge factor 16, random features
# and labels, the suite's training split), batches of 1024 seeds, fan-out
# 10,25, 2 CPU threads each:
#   saga  sagac train --batch-size 1024 --fanout 10,25 --threads 1: one
#         thread computes, the loader thread samples and gathers the next
#         batches (2 in all);
#   dgl   NeighborSampler + DataLoader (sampling inline), torch 2 threads;
#   pyg   NeighborLoader, torch 2 threads (needs torch-sparse or pyg-lib in
#         the venv: skipped with a message when neither imports).
# The figure is each system's training time per epoch (sampling, gathering,
# forward, backward, optimiser; no evaluation), median of EPOCHS epochs.
#
#   bench/minibatch.sh [WORKDIR]   (default /work/dist)
#
# Environment: SCALE (20), EPOCHS (3), PEERS (a venv with torch 2.2.1, dgl
# 2.1.0, torch_geometric; see ../shared/TOOLCHAIN.md and bench/README.md;
# default /work/peers), BUILD (build), STRICT (1: exit non-zero at the end
# when a peer that is installed fails; one that is not installed is
# skipped with a line saying so either way).
set -eu
export DGLBACKEND=pytorch
here=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/work/dist}
scale=${SCALE:-20}
epochs=${EPOCHS:-3}
peers=${PEERS:-/work/peers}
build=${BUILD:-build}
case $build in /*) ;; *) build=$here/$build ;; esac
bin=$build/bin
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git -C "$here" rev-parse --short HEAD), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
file=$(BUILD=$build "$here/bench/rmat_sgf.sh" "$scale" "$work")

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "## saga"
OPENBLAS_NUM_THREADS=1 "$bin/sagac" train "$here/bench/models/sage64.saga" \
  --data "$file" --no-normalize --epochs "$epochs" --batch-size 1024 \
  --fanout 10,25 --threads 1 > "$work/minibatch-saga.log"
grep -E '^(mini-batches|epoch)' "$work/minibatch-saga.log"
saga=$(sed -n 's/.*batches in \([0-9.]*\) ms.*/\1/p' "$work/minibatch-saga.log" |
  awk '{print $1 / 1000}' | median)

best=""
failed=""
for system in dgl pyg; do
  echo "## $system"
  if [ ! -x "$peers/bin/python3" ]; then
    echo "$system skipped: no peers venv at $peers (PEERS; bench/README.md)"
    continue
  fi
  status=0
  "$peers/bin/python3" "$here/bench/minibatch_baselines.py" "$system" \
    "$file" --threads 2 --epochs "$epochs" --batch-size 1024 \
    --fanout 10,25 > "$work/minibatch-$system.log" 2>&1 || status=$?
  if [ "$status" = 77 ]; then
    # Not installed in the venv: the script's line says which.
    echo "$system $(sed -n "s/^$system: skipped/skipped/p" "$work/minibatch-$system.log")"
  elif [ "$status" = 0 ]; then
    grep -E '^(dgl|pyg):|^RESULT' "$work/minibatch-$system.log"
    t=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' "$work/minibatch-$system.log" | median)
    echo "$system median epoch: $t s"
    if [ -z "$best" ] || awk "BEGIN {exit !($t < $best)}"; then
      best=$t
      bestname=$system
    fi
  else
    echo "$system did not run (status $status): $(grep -E 'Error|error' "$work/minibatch-$system.log" | tail -1)"
    failed="$failed $system"
  fi
done
echo "saga median epoch: $saga s"
if [ -n "$best" ]; then
  awk "BEGIN {printf \"saga is %.2fx faster than the faster peer (%s, %s s)\\n\", $best / $saga, \"$bestname\", $best}"
fi
if [ -n "$failed" ] && [ "${STRICT:-0}" = 1 ]; then
  echo "minibatch.sh: failed:$failed (STRICT=1; see $work/minibatch-*.log)" >&2
  exit 1
fi
