#!/usr/bin/env bash
# Link prediction, Saga against DGL in the same run.
#
# 1. Cora, full batch. examples/graphsage-link.saga (GraphSAGE-mean 1433 ->
#    128 -> 64, ReLU, a pair scored by the dot product of its ends'
#    embeddings, binary cross-entropy against one uniform negative per
#    train edge drawn each epoch, Adam lr 0.01, 100 epochs) on the 85/5/10
#    splits of `sagac split-edges --seed S`, S = 1..SEEDS (the model's
#    seed S too). Figures: the test ROC AUC at the best validation epoch,
#    mean over the seeds (issue 39 asks >= 0.90), and the median training
#    time per epoch (no evaluation), seed 1. The peer, bench/linkpred_dgl.py,
#    trains the same model (DGL's SAGEConv 'mean', u_dot_v, Uniform(1)
#    negatives) on the same split files.
# 2. R-MAT scale SCALE (bench/rmat_sgf.sh: edge factor 16, 64 random
#    features), mini-batch. bench/models/sage64-link.saga (64 -> 64 -> 64)
#    on `sagac split-edges --seed 1`; batches of 1024 train edges with one
#    negative each, their ends' neighbourhoods sampled with fan-out 10,25;
#    the first MAXB batches of an epoch (--max-batches). Figure: training
#    seconds per batch (sampling, forward, backward, optimiser). The peer:
#    DGL's as_edge_prediction_sampler(NeighborSampler) over the train edges.
#    The AUC after MAXB batches of random features means little; it shows
#    that the run trains.
#
#   PEERS=/work/dgl-venv bench/linkpred.sh [WORKDIR]   (default /work/dist)
#
# Settings: SEEDS (5), EPOCHS (100), SCALE (20), MAXB (100), THREADS (2:
# Saga's full batch --threads and DGL's torch threads; Saga's mini-batch
# runs one compute thread and its loader thread, as bench/minibatch.sh),
# BUILD (build), RESULTS (bench/results), PEERS (a venv with dgl and
# torch; without one, or without DGL in it, DGL is skipped with a line),
# STRICT (1: exit non-zero when an installed peer fails), SAGA_NO_BUILD.
# Appends everything to $RESULTS/linkpred.log.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
work=${1:-/work/dist}
SEEDS="${SEEDS:-5}"
EPOCHS="${EPOCHS:-100}"
SCALE="${SCALE:-20}"
MAXB="${MAXB:-100}"
THREADS="${THREADS:-2}"
build="${BUILD:-build}"
case $build in /*) ;; *) build=$ROOT/$build ;; esac
SAGAC="$build/bin/sagac"
RESULTS="${RESULTS:-bench/results}"
PYTHON="${PEERS:+$PEERS/bin/python3}"
PYTHON="${PYTHON:-/usr/bin/python3}"
export DGLBACKEND=pytorch OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
mkdir -p "$RESULTS" "$work"
[ -n "${SAGA_NO_BUILD:-}" ] || make build >/dev/null
log="$RESULTS/linkpred.log"

median() { sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }
mean() { awk '{s+=$1} END {if (NR) printf "%.4f\n", s/NR; else print "nan"}'; }
failed="$work/linkpred.failed"
rm -f "$failed"
# dgl ARGS...: the peer's output on stdout; 77 (not installed) says so.
dgl() {
  local status=0 out
  out=$(OMP_NUM_THREADS=$THREADS "$PYTHON" bench/linkpred_dgl.py "$@" 2>&1) || status=$?
  if [ "$status" = 77 ]; then
    echo "$out" | grep -m1 "skipped" >&2
    return 77
  elif [ "$status" != 0 ]; then
    echo "$out" | tail -5 >&2
    echo "dgl $*" >> "$failed"
    return 1
  fi
  echo "$out"
}

{
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git rev-parse --short HEAD), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); bench/linkpred.sh SEEDS=$SEEDS EPOCHS=$EPOCHS SCALE=$SCALE MAXB=$MAXB THREADS=$THREADS"
echo "## Cora, full batch, $EPOCHS epochs, seeds 1..$SEEDS"
saga_auc=() dgl_auc=()
for s in $(seq 1 "$SEEDS"); do
  split="$work/cora-split-$s.npz"
  "$SAGAC" split-edges examples/data/cora "$split" --seed "$s" > /dev/null
  rm -f "$work/cora-link-$s.jsonl"
  line=$("$SAGAC" train examples/graphsage-link.saga --data examples/data/cora \
    --link-split "$split" --epochs "$EPOCHS" --seed "$s" --threads "$THREADS" \
    --quiet --log "$work/cora-link-$s.jsonl" | grep '^test at the best')
  auc=$(echo "$line" | sed -n 's/.*: auc \([0-9.]*\).*/\1/p')
  ms=$(sed -n 's/.*"train_seconds": \([0-9.]*\).*/\1/p' "$work/cora-link-$s.jsonl" | median)
  echo "saga seed $s: $line; median train seconds/epoch $ms"
  saga_auc+=("$auc")
  [ "$s" = 1 ] && saga_epoch=$ms
  if out=$(dgl examples/data/cora "$split" --epochs "$EPOCHS" --seed "$s" --threads "$THREADS"); then
    dauc=$(echo "$out" | sed -n 's/^RESULT best_val_epoch=.* test_auc_at_best_val=\([0-9.]*\)/\1/p')
    dms=$(echo "$out" | sed -n 's/^RESULT epoch=.* train_seconds=\([0-9.]*\).*/\1/p' | median)
    echo "dgl  seed $s: test auc at the best val epoch $dauc; median train seconds/epoch $dms"
    dgl_auc+=("$dauc")
    [ "$s" = 1 ] && dgl_epoch=$dms
  fi
done
echo "saga: mean test AUC $(printf '%s\n' "${saga_auc[@]}" | mean) over $SEEDS seeds; epoch ${saga_epoch} s (seed 1)"
if [ ${#dgl_auc[@]} -gt 0 ]; then
  echo "dgl:  mean test AUC $(printf '%s\n' "${dgl_auc[@]}" | mean) over $SEEDS seeds; epoch ${dgl_epoch} s (seed 1); dgl / saga epoch time $(awk -v d="$dgl_epoch" -v s="$saga_epoch" 'BEGIN {printf "%.2f", d / s}')"
fi

echo "## R-MAT scale $SCALE, mini-batches of 1024 train edges + 1 negative, fan-out 10,25, first $MAXB batches"
file=$(BUILD=$build bench/rmat_sgf.sh "$SCALE" "$work")
split="$work/rmat$SCALE-split.npz"
[ -f "$split" ] || "$SAGAC" split-edges "$file" "$split" --seed 1
rm -f "$work/rmat-link.jsonl"
OPENBLAS_NUM_THREADS=1 "$SAGAC" train bench/models/sage64-link.saga --data "$file" \
  --no-normalize --link-split "$split" --epochs 1 --batch-size 1024 --fanout 10,25 \
  --max-batches "$MAXB" --threads 1 --log "$work/rmat-link.jsonl" | grep -E '^(link|training|epoch|test)'
saga_batch=$(sed -n 's/.*"batches": \([0-9]*\), "train_seconds": \([0-9.]*\).*/\2 \1/p' "$work/rmat-link.jsonl" | awk '{printf "%.4f\n", $1 / $2}')
echo "saga: $saga_batch s per batch (training time of the epoch / batches)"
if out=$(dgl "$file" "$split" --epochs 1 --batch-size 1024 --fanout 10,25 --max-batches "$MAXB" --threads "$THREADS"); then
  echo "$out" | grep '^RESULT'
  dgl_batch=$(echo "$out" | sed -n 's/^RESULT epoch=1 train_seconds=\([0-9.]*\).*/\1/p' | awk -v b="$MAXB" '{printf "%.4f\n", $1 / b}')
  echo "dgl:  $dgl_batch s per batch; dgl / saga $(awk -v d="$dgl_batch" -v s="$saga_batch" 'BEGIN {printf "%.2f", d / s}')"
fi
} | tee -a "$log"
if [ -f "$failed" ] && [ "${STRICT:-0}" = 1 ]; then
  echo "linkpred.sh: a peer failed: $(cat "$failed")" >&2
  exit 1
fi
