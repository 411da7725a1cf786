#!/usr/bin/env bash
# Test accuracy after the last epoch, mean and standard deviation over seeds
# 0-9, Planetoid public split: the figures of README's accuracy table.
# Usage: bench/accuracy.sh [SEEDS]   (default 10)
# Settings (environment): EPOCHS (200), BUILD (build), RESULTS
# (bench/results: where accuracy.csv goes), SAGA_NO_BUILD (set: use
# $BUILD/bin/sagac as it is; otherwise `make build` first).
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-10}
epochs=${EPOCHS:-200}
[ -n "${SAGA_NO_BUILD:-}" ] || make build >/dev/null
sagac=${BUILD:-build}/bin/sagac
results=${RESULTS:-bench/results}
mkdir -p "$results"
csv=$results/accuracy.csv
echo "model,dataset,seed,test_acc,ms_per_epoch" > "$csv"

run() { # name model data extra-args...
  local name=$1 model=$2 data=$3; shift 3
  for ((s = 0; s < seeds; s++)); do
    line=$("$sagac" train "$model" --data "$data" --seed "$s" --quiet "$@" | grep '^final')
    acc=$(sed -E 's/.*test accuracy ([0-9.]+).*/\1/' <<<"$line")
    ms=$(sed -E 's/.*\(([0-9.]+) ms\/epoch\).*/\1/' <<<"$line")
    echo "$name,$(basename "$data"),$s,$acc,$ms" >> "$csv"
  done
}

run gcn examples/gcn.saga examples/data/cora --epochs "$epochs" --lr 0.01
run gcn examples/gcn_citeseer.saga examples/data/citeseer --epochs "$epochs" --lr 0.01
run graphsage examples/graphsage.saga examples/data/cora --epochs "$epochs" --lr 0.01
run gin examples/gin.saga examples/data/cora --epochs "$epochs" --lr 0.01
run gat examples/gat.saga examples/data/cora --epochs "$epochs" --lr 0.005

/usr/bin/python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
groups = {}
for r in rows:
    groups.setdefault((r["model"], r["dataset"]), []).append(r)
print(f"{'model':<10} {'dataset':<9} {'seeds':>5} {'test acc (mean ± std)':>22} {'ms/epoch':>9}")
for (m, d), rs in groups.items():
    accs = [100 * float(r["test_acc"]) for r in rs]
    ms = statistics.median(float(r["ms_per_epoch"]) for r in rs)
    sd = statistics.stdev(accs) if len(accs) > 1 else 0.0
    print(f"{m:<10} {d:<9} {len(accs):>5} {statistics.mean(accs):>14.2f} ± {sd:<5.2f} {ms:>9.1f}")
PY
echo "per-seed results: $csv"
