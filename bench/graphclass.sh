#!/usr/bin/env bash
# Graph classification epoch time and accuracy, Saga against DGL in the same
# run: GIN (examples/gin-mutag.saga, gin-proteins.saga: 4 GIN-0 layers,
# each MLP two bias-free linear layers with batch norm and ReLU after each,
# hidden 32, sum readouts of every layer scored and summed, dropout 0.5)
# on MUTAG and PROTEINS, 10-fold cross-validation, batches of 32 graphs,
# Adam lr 0.01 halved every 50 epochs. The peer, bench/graphclass_dgl.py,
# builds the same model from DGL's GINConv and SumPooling over dgl.batch
# (DGL's examples/pytorch/gin, its BatchNorm1d without running statistics
# as Saga's batch_norm). An epoch is the same work in both: the training
# steps, then train and test accuracy in evaluation batches.
#
#   PEERS=/work/dgl-venv bench/graphclass.sh
#   DATASETS=MUTAG EPOCHS=20 FOLDS=2 bench/graphclass.sh   # quick
#
# Prints per system and dataset the mean and median ms per epoch, the
# 10-fold test accuracy at the last epoch and at the best mean epoch (the
# GIN paper's figure), and DGL / Saga; appends them to
# $RESULTS/graphclass.log. Settings: DATASETS ("MUTAG PROTEINS"), EPOCHS
# (350), FOLDS (10), BATCH (32), THREADS (1), SEED (0), BUILD (build),
# RESULTS (bench/results), PEERS (a venv with dgl and torch; without one,
# or without DGL in it, the DGL runs are skipped with a line),
# SAGA_NO_BUILD (set: use $BUILD/bin/sagac as it is).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DATASETS="${DATASETS:-MUTAG PROTEINS}"
EPOCHS="${EPOCHS:-350}"
FOLDS="${FOLDS:-10}"
BATCH="${BATCH:-32}"
THREADS="${THREADS:-1}"
SEED="${SEED:-0}"
SAGAC="${BUILD:-build}/bin/sagac"
RESULTS="${RESULTS:-bench/results}"
PYTHON="${PEERS:+$PEERS/bin/python3}"
PYTHON="${PYTHON:-/usr/bin/python3}"
mkdir -p "$RESULTS"
[ -n "${SAGA_NO_BUILD:-}" ] || make build >/dev/null
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"

LOG="$RESULTS/graphclass.log"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
{
  echo "# bench/graphclass.sh $(date -u +%Y-%m-%dT%H:%M:%SZ), commit" \
       "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
       "$(git diff --quiet HEAD -- . ':!bench/results' 2>/dev/null ||
          echo '(with uncommitted changes)')"
  echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) CPUs," \
       "load $(cut -d' ' -f1-3 /proc/loadavg); $EPOCHS epochs, $FOLDS folds," \
       "batches of $BATCH, $THREADS thread(s), seed $SEED"
} | tee -a "$LOG"

for data in $DATASETS; do
  model="examples/gin-$(echo "$data" | tr 'A-Z' 'a-z').saga"
  "$SAGAC" train "$model" --data "examples/data/$data" --folds "$FOLDS" \
      --epochs "$EPOCHS" --batch-size "$BATCH" --lr-step 50 --seed "$SEED" \
      --threads "$THREADS" --quiet --log "$TMP/saga.jsonl" > "$TMP/saga.txt"
  /usr/bin/python3 - "$TMP/saga.txt" "$TMP/saga.jsonl" "$data" "$THREADS" \
      "$EPOCHS" "$FOLDS" <<'PY' | tee -a "$LOG"
import json, re, statistics, sys
out, log, data, threads, epochs, folds = sys.argv[1:]
text = open(out).read()
m = re.search(r"last epoch \((\d+)\) ([0-9.]+) \+- [0-9.]+; best mean epoch "
              r"\((\d+), [^)]*\) ([0-9.]+)", text)
secs = [json.loads(l)["seconds"] for l in open(log) if l.strip()]
print(f"RESULT system=saga data={data} threads={threads} epochs={epochs} "
      f"folds={folds} mean_ms={1e3 * statistics.mean(secs):.3f} "
      f"median_ms={1e3 * statistics.median(secs):.3f} acc_last={m.group(2)} "
      f"acc_best={m.group(4)} best_epoch={m.group(3)}")
PY
  "$PYTHON" bench/graphclass_dgl.py "examples/data/$data" --epochs "$EPOCHS" \
      --folds "$FOLDS" --batch-size "$BATCH" --threads "$THREADS" \
      --seed "$SEED" > "$TMP/dgl.txt"
  grep -E "^(RESULT|dgl skipped)" "$TMP/dgl.txt" | tee -a "$LOG"
done
/usr/bin/python3 - "$LOG" <<'PY' | tee -a "$LOG"
import re, sys
rows = {}
for line in open(sys.argv[1]):
    if line.startswith("# bench/graphclass.sh"):
        rows = {}  # this run's only
    if line.startswith("RESULT"):
        kv = dict(f.split("=", 1) for f in line.split()[1:])
        rows[(kv["system"], kv["data"])] = kv
for (system, data), kv in sorted(rows.items()):
    if system == "dgl" and ("saga", data) in rows:
        s = float(rows[("saga", data)]["median_ms"])
        print(f"SUMMARY {data}: DGL / Saga median epoch = "
              f"{float(kv['median_ms']) / s:.2f}x")
PY
