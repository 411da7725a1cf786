#!/bin/sh
# ROC's partitioner on this machine (saga-bench-partition): GCN
# (bench/models/gcn64.saga) on R-MAT scale 20 in 4 parts, each part's
# training step timed alone with one thread; the cost model fitted to 16
# random ranges and checked on 8 held out; then the balance (max/mean step
# time), edge cut and halo of every partitioner, and, in one process, the
# thread pool's row blocks cut by the fitted model against the executor's.
# Writes the fitted model to
# bench/results/rmat20-gcn64.cost (usable with sagac train --partition roc
# --cost-model).
#
#   bench/partition.sh          (SCALE=20, PARTS=4, REPEATS=5, SAMPLES=24,
#                                HOLDOUT=8, BUILD=build, RESULTS=bench/results:
#                                where the cost model goes)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-build}
case $build in /*) ;; *) build=$here/$build ;; esac
results=${RESULTS:-bench/results}
case $results in /*) ;; *) results=$here/$results ;; esac
mkdir -p "$results"
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git -C "$here" rev-parse --short HEAD), $(nproc) cores"
OPENBLAS_NUM_THREADS=1 "$build/bin/saga-bench-partition" \
  --scale "${SCALE:-20}" --partitions "${PARTS:-4}" --samples "${SAMPLES:-24}" \
  --holdout "${HOLDOUT:-8}" --repeats "${REPEATS:-5}" \
  --cost-model-out "$results/rmat${SCALE:-20}-gcn64.cost"
