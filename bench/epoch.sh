#!/usr/bin/env bash
# Training epoch time, Saga against PyTorch, same machine, same run: the GCN
# of examples/gcn.saga on Cora, 200 epochs, Adam lr 0.01, seed 0.
#
#   bench/epoch.sh                    # THREADS="1 2" SEED=0 EPOCHS=200
#   THREADS=1 SEED=3 bench/epoch.sh
#   REPEAT=3 bench/epoch.sh           # 3 interleaved rounds, medians
#
# For each thread count it runs
#   saga             sagac train examples/gcn.saga --data examples/data/cora
#                    --epochs 200 --lr 0.01 --seed 0 --quiet --threads N
#   pytorch-dense    bench/pytorch_reference.py --threads N (dense features,
#                    as Saga, tkipf/pygcn and PyG's gcn.py hold them)
#   pytorch-sparse   the same with --features sparse (tkipf/gcn's sparse
#                    features and sparse dropout)
# and prints a table (mean and median ms/epoch, PyTorch / Saga at the same
# thread count, test accuracy after the last epoch) and writes
# bench/results/epoch.csv (raw output: bench/results/epoch.log). With
# REPEAT=N the whole sequence runs N times, interleaved, so that a burst of
# load from other processes hits all systems alike; the table then shows the
# median over the N runs of each figure (the CSV has every run).
#
# An epoch is the same work in both systems: the training step (forward with
# dropout, loss, backward, Adam step), an inference pass and the
# train/val/test accuracies (api/Trainer.cpp); compilation and data
# loading are outside it. Saga's mean is the figure `sagac train` prints;
# the median comes from its --log.
#
# BLAS: both systems use the system OpenBLAS for their dense products. On an
# AVX-512 CPU sagac selects OpenBLAS's SkylakeX kernels itself (Debian's
# 0.3.21 does not recognise recent Xeons); this script exports the same
# OPENBLAS_CORETYPE=SkylakeX so that PyTorch gets the same kernels. Set
# OPENBLAS_CORETYPE yourself to choose another for both.
#
# OpenMP: PyTorch's threads are libgomp's, which spin while they wait for
# each other (OMP_WAIT_POLICY=active behaviour). On a machine whose cores are
# busy with other work a spinning thread keeps its partner off the CPU, and
# 2-thread PyTorch epochs become 10-20x slower than 1-thread ones (measured
# here: 263 ms against 14.5 ms with PASSIVE). The script therefore exports
# OMP_WAIT_POLICY=PASSIVE unless it is set; `OMP_WAIT_POLICY=ACTIVE
# bench/epoch.sh` measures libgomp's default. Saga's thread pool and
# OpenBLAS (the pthread build) do not read it.
#
# Settings (environment): THREADS ("1 2"), REPEAT (1), SEED (0), EPOCHS (200),
# LR (0.01), DATA (examples/data/cora), SAGA_NO_BUILD (set: use
# $BUILD/bin/sagac as it is; otherwise `make build` first), BUILD (build),
# RESULTS (bench/results: where epoch.csv and epoch.log go), PEERS (a venv
# whose bin/python3 runs PyTorch; default Debian's /usr/bin/python3),
# SAGA_NO_INSTALL (set: never apt-get; without torch the PyTorch runs are
# skipped with a line saying so).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
THREADS="${THREADS:-1 2}"
REPEAT="${REPEAT:-1}"
SEED="${SEED:-0}"
EPOCHS="${EPOCHS:-200}"
LR="${LR:-0.01}"
DATA="${DATA:-examples/data/cora}"
if [ -n "${PEERS:-}" ]; then
  PYTHON="$PEERS/bin/python3"
  [ -x "$PYTHON" ] || { echo "epoch.sh: PEERS=$PEERS has no bin/python3" >&2; exit 1; }
else
  PYTHON=/usr/bin/python3 # Debian's; the first python3 on PATH may be another
fi
SAGAC="${BUILD:-build}/bin/sagac"
RESULTS="${RESULTS:-bench/results}"
mkdir -p "$RESULTS"

[ -n "${SAGA_NO_BUILD:-}" ] || make build >/dev/null

if [ -z "${PEERS:-}${SAGA_NO_INSTALL:-}" ] &&
   ! "$PYTHON" -c 'import torch, numpy' 2>/dev/null; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get install -y python3-torch python3-numpy
fi

if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -qw avx512f /proc/cpuinfo; then
  export OPENBLAS_CORETYPE=SkylakeX
fi

export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"

LOG="$RESULTS/epoch.log"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
{
  echo "# bench/epoch.sh $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
       "$(git diff --quiet HEAD -- . ':!bench/results' 2>/dev/null ||
          echo '(with uncommitted changes)')"
  echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) CPUs;" \
       "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}" \
       "OMP_WAIT_POLICY=$OMP_WAIT_POLICY"
  echo "# $DATA, $EPOCHS epochs, lr $LR, seed $SEED, threads $THREADS," \
       "$REPEAT round(s)"
  echo "# load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$LOG"

saga() { # threads
  local out="$TMP/saga-$1.txt" log="$TMP/saga-$1.jsonl"
  "$SAGAC" train examples/gcn.saga --data "$DATA" --epochs "$EPOCHS" \
      --lr "$LR" --seed "$SEED" --quiet --threads "$1" --log "$log" > "$out"
  cat "$out"
  "$PYTHON" - "$out" "$log" "$1" "$SEED" "$EPOCHS" <<'EOF'
import json, re, statistics, sys
out, log, threads, seed, epochs = sys.argv[1:]
text = open(out).read()
final = re.search(r"^final .*test accuracy ([0-9.]+)\s+\(([0-9.]+) ms/epoch\)",
                  text, re.M)
compile_ms = re.search(r"^compiled .* in ([0-9.]+) ms", text, re.M)
secs = [json.loads(l)["seconds"] for l in open(log) if l.strip()]
print(f"RESULT system=saga threads={threads} seed={seed} epochs={epochs} "
      f"mean_ms={float(final.group(2)):.3f} "
      f"median_ms={1e3 * statistics.median(secs):.3f} "
      f"test_acc={final.group(1)} compile_ms={compile_ms.group(1)}")
EOF
}

for ((round = 1; round <= REPEAT; round++)); do
  for t in $THREADS; do
    echo "== round $round: saga, $t thread(s)" | tee -a "$LOG"
    saga "$t" 2>&1 | tee -a "$LOG"
    for f in dense sparse; do
      echo "== round $round: pytorch, $f features, $t thread(s)" | tee -a "$LOG"
      status=0
      "$PYTHON" bench/pytorch_reference.py --data "$DATA" --epochs "$EPOCHS" \
          --lr "$LR" --seed "$SEED" --threads "$t" --features "$f" 2>&1 |
        tee -a "$LOG" || status=$?
      # 77: torch is not installed (its line says so); the rest goes on.
      [ "$status" = 0 ] || [ "$status" = 77 ] || exit "$status"
    done
  done
done
echo "# load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg)" |
  tee -a "$LOG"

"$PYTHON" - "$LOG" "$RESULTS/epoch.csv" <<'EOF'
import csv, statistics, sys
log, out = sys.argv[1:]
rows = [dict(kv.split("=", 1) for kv in line.split()[1:])
        for line in open(log) if line.startswith("RESULT ")]
# Rounds: the n-th result of a (system, threads) pair is from round n.
seen = {}
for r in rows:
    key = (r["system"], r["threads"])
    seen[key] = seen.get(key, 0) + 1
    r["round"] = str(seen[key])
    r["saga_compile_ms"] = r.get("compile_ms", "")
fields = ["round", "system", "threads", "seed", "epochs", "mean_ms",
          "median_ms", "test_acc", "saga_compile_ms"]
with open(out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
# One line per (system, threads): medians over the rounds.
groups = {}
for r in rows:
    groups.setdefault((r["system"], r["threads"]), []).append(r)
med = lambda rs, k: statistics.median(float(r[k]) for r in rs)
print()
print(f"{'system':15} {'threads':>7} {'runs':>4} {'ms/epoch':>9} {'median':>8} "
      f"{'PyTorch/Saga':>13} {'(median)':>9} {'test acc':>9}")
for (system, threads), rs in groups.items():
    saga = groups.get(("saga", threads))
    ratio = lambda k: ("-" if system == "saga" or not saga
                       else f"{med(rs, k) / med(saga, k):.2f}")
    print(f"{system:15} {threads:>7} {len(rs):>4} {med(rs, 'mean_ms'):>9.2f} "
          f"{med(rs, 'median_ms'):>8.2f} {ratio('mean_ms'):>13} "
          f"{ratio('median_ms'):>9} {100 * float(rs[-1]['test_acc']):>8.1f}%")
print("\nms/epoch: the mean epoch of a run (sagac's figure), the median epoch"
      " beside it; over several runs,\nthe median of each. PyTorch/Saga > 1:"
      " Saga is faster. Saga's model has zero-initialised biases\n"
      "(examples/gcn.saga), PyTorch's none (the reference); the dropout masks"
      " differ, so one seed's test\naccuracies differ by noise.")
print(f"wrote {out} and {log}")
EOF
