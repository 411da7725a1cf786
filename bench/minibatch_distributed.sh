#!/bin/sh
# Distributed mini-batch training with MassiveGNN's buffer of remote
# features, against no buffer: 4 trainers on 4 hosts (network namespaces,
# bench/netns/) with shaped links, METIS partitions of R-MAT scale 20
# (64 random features, 16 classes), GraphSAGE-mean (bench/models/sage64.saga),
# batches of 1024 seeds per trainer, fan-out 10,25, EPOCHS epochs per
# setting. The sweep: f in {0.25, 0.5, 1.0} x Delta in {16, 32} x alpha in
# {0.005, 0.05}, and f = 0 (no buffer). Prints every run's per-trainer
# lines and, last, one table row per setting: the median training time per
# epoch (steps only; evaluation apart), the epoch with evaluation, the
# remote feature bytes per epoch of all trainers (the fill apart), the
# trainers' hit rates and the test accuracy.
#
#   bench/minibatch_distributed.sh [WORKDIR]   (default /work/dist;
#       RATE=1gbit, SCALE=20, EPOCHS=3, HOSTS=4,
#       SETTINGS="0 0.25,16,0.005 ..." as f,Delta,alpha; BUILD=build;
#       SAGA_NETNS_PREFIX: the hosts' names, bench/netns/hosts.sh)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/work/dist}
scale=${SCALE:-20}
rate=${RATE:-1gbit}
epochs=${EPOCHS:-3}
hosts=${HOSTS:-4}
build=${BUILD:-build}
case $build in /*) ;; *) build=$here/$build ;; esac
bin=$build/bin
settings=${SETTINGS:-"0 0.25,16,0.005 0.25,16,0.05 0.25,32,0.005 0.25,32,0.05 0.5,16,0.005 0.5,16,0.05 0.5,32,0.005 0.5,32,0.05 1.0,16,0.005 1.0,16,0.05 1.0,32,0.005 1.0,32,0.05"}
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git -C "$here" rev-parse --short HEAD), $(nproc) cores, $hosts hosts at $rate"
file=$(BUILD=$build "$here/bench/rmat_sgf.sh" "$scale" "$work")
export SAGA_NETNS_STATE=$work/netns
trap '"$here/bench/netns/hosts.sh" down' EXIT
"$here/bench/netns/hosts.sh" up "$hosts" "$rate"
# METIS once (minutes), then every setting reuses the cut.
saved=$work/metis-$hosts.partition
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
table=""
for s in $settings; do
  f=${s%%,*}
  extra=""
  if [ "$f" != 0 ]; then
    rest=${s#*,}
    extra="--buffer-fraction $f --buffer-period ${rest%%,*} --buffer-alpha ${rest#*,}"
  fi
  echo "## f,Delta,alpha = $s"
  log=$work/minibatch-distributed-$s.log
  "$here/bench/netns/run.sh" "$hosts" "$bin/sagac" train \
    "$here/bench/models/sage64.saga" --data "$file" --no-normalize \
    --epochs "$epochs" --threads 1 --partition metis --partition-file "$saved" \
    --batch-size 1024 --fanout 10,25 $extra > "$log" 2>&1 || {
    cat "$log"; exit 1; }
  grep -E '^(mini-batches|epoch|final|trainer|remote)' "$log"
  train=$(sed -n 's/^epoch .* ms (\([0-9.]*\) training).*/\1/p' "$log" | median)
  whole=$(sed -n 's/^epoch .*  \([0-9.]*\) ms (.*training).*/\1/p' "$log" | median)
  bytes=$(sed -n 's/^remote feature bytes per epoch, all trainers: \([0-9]*\).*/\1/p' "$log")
  hits=$(sed -n 's/^trainer [0-9]*: .*hit rate \([0-9.]*\)%.*/\1/p' "$log" | tr '\n' '/' | sed 's|/$||')
  acc=$(sed -n 's/^final .*test accuracy \([0-9.]*\).*/\1/p' "$log")
  table="$table
$s $train $whole $bytes $hits $acc"
done
echo "## summary: setting, training ms/epoch (median), ms/epoch with evaluation, remote bytes/epoch, hit rates per trainer (%), test accuracy"
echo "$table" | sed '/^$/d'
