#!/bin/sh
# Full-graph training across 4 hosts (network namespaces, bench/netns/) with
# shaped links, against one process, per partitioner: GCN
# (bench/models/gcn64.saga) on R-MAT scale 20 (a Saga graph file with 64
# random features and 16 classes), EPOCHS epochs each; prints every run's
# epoch time, the bytes each rank exchanged per epoch and how much of the
# exchanges' time was hidden behind computation; each multi-host run again
# with --halo-overlap=false, to measure what the overlap saves.
#
#   bench/distributed.sh [WORKDIR]   (default /work/dist; RATE=1gbit,
#                                     SCALE=20, EPOCHS=3, HOSTS=4,
#                                     PARTITIONS="vertices edges roc metis")
# BUILD (build), RESULTS (bench/results: where bench/partition.sh left the
# fitted cost model roc uses), SAGA_NETNS_PREFIX (the hosts' names,
# bench/netns/hosts.sh; default saga).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/work/dist}
scale=${SCALE:-20}
rate=${RATE:-1gbit}
epochs=${EPOCHS:-3}
hosts=${HOSTS:-4}
build=${BUILD:-build}
case $build in /*) ;; *) build=$here/$build ;; esac
results=${RESULTS:-bench/results}
case $results in /*) ;; *) results=$here/$results ;; esac
bin=$build/bin
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git -C "$here" rev-parse --short HEAD), $(nproc) cores"
file=$(BUILD=$build "$here/bench/rmat_sgf.sh" "$scale" "$work")
cost=$results/rmat$scale-gcn64.cost
train() {
  echo "$@" | sed "s|$here/||g; s|$work/||g"
  "$@" --data "$file" --epochs "$epochs" --threads 1 --quiet 2>&1 |
    grep -E '^(graph|  rank|final|exchanged|halo exchanges)'
}
export SAGA_NETNS_STATE=$work/netns
trap '"$here/bench/netns/hosts.sh" down' EXIT
"$here/bench/netns/hosts.sh" up "$hosts" "$rate"
for p in ${PARTITIONS:-vertices edges roc metis}; do
  extra=""
  [ "$p" = roc ] && [ -f "$cost" ] && extra="--cost-model $cost"
  echo "## $p: one process"
  OPENBLAS_NUM_THREADS=1 train mpirun --allow-run-as-root -np 1 "$bin/sagac" train \
    "$here/bench/models/gcn64.saga" --partition "$p" $extra
  # The cut once (METIS takes minutes), then reused by both runs.
  saved=$work/$p-$hosts.partition
  rm -f "$saved"
  for overlap in true false; do
    echo "## $p: $hosts hosts at $rate, --halo-overlap=$overlap"
    train "$here/bench/netns/run.sh" "$hosts" "$bin/sagac" train \
      "$here/bench/models/gcn64.saga" --partition "$p" $extra \
      --partition-file "$saved" --halo-overlap=$overlap
  done
done
