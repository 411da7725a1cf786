#!/bin/sh
# Out of core for real: GCN (bench/models/gcn256.saga: 256 features, 64
# hidden, 16 classes, Adam) on R-MAT scale 24 (16.8M vertices, ~260M edges),
# whose in-memory training working set (Saga's unbounded step peak, ~37 GiB,
# plus the CSR) is over 1.5x this machine's RAM, trained from a Saga graph
# file with --memory-budget at a quarter of RAM: chunks and feature rows are
# read from the file, spills go to --scratch, all with O_DIRECT. Then DGL and
# PyTorch (bench/ooc_baselines.py, in the venv named by PEERS) on the same
# file, each in a memory cgroup the size of this machine's RAM.
#
#   bench/outofcore.sh [WORKDIR]     (default /work/ooc; needs ~60 GB free)
#
# Environment: SCALE (24), FEATURES (256), INTERVALS (16), EPOCHS (2),
# PEERS (a venv with torch 2.2.1 and dgl 2.1.0; see ../shared/TOOLCHAIN.md
# and bench/README.md; default /work/peers), THREADS (2), PEERS_ONLY /
# SAGA_ONLY (1: run one side), BUILD (build), BUDGET_KIB (Saga's
# --memory-budget in KiB; default a quarter of RAM), DD_READ_BLOCKS (96)
# and DD_WRITE_BLOCKS (48): the disk check's reads and writes in blocks of
# 64 MiB, 0 to skip it), STRICT (1: exit non-zero at the end when a peer
# that is installed fails, killed for memory included; a peer that is not
# installed is skipped with a line saying so either way).
set -eu
export DGLBACKEND=pytorch
here=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/work/ooc}
scale=${SCALE:-24}
features=${FEATURES:-256}
intervals=${INTERVALS:-16}
epochs=${EPOCHS:-2}
threads=${THREADS:-2}
peers=${PEERS:-/work/peers}
build=${BUILD:-build}
case $build in /*) ;; *) build=$here/$build ;; esac
bin=$build/bin
dd_read=${DD_READ_BLOCKS:-96}
dd_write=${DD_WRITE_BLOCKS:-48}
file=$work/rmat$scale-f$features.sgf
mkdir -p "$work/scratch"

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git -C "$here" rev-parse --short HEAD)"
ram_kib=$(awk '/MemTotal/ {print $2}' /proc/meminfo)
budget_kib=${BUDGET_KIB:-$((ram_kib / 4))}
if [ -n "${BUDGET_KIB:-}" ]; then
  echo "machine: $(nproc) cores, RAM $((ram_kib / 1024)) MiB; budget $budget_kib KiB (BUDGET_KIB)"
else
  echo "machine: $(nproc) cores, RAM $((ram_kib / 1024)) MiB; budget a quarter: $((budget_kib / 1024)) MiB"
fi

if [ ! -f "$file" ]; then
  /usr/bin/time -f "generate: %e s, peak resident set %M KiB" \
    "$bin/saga-bench-suite" sgf --scale "$scale" --edge-factor 16 \
    --features "$features" --classes 16 --intervals "$intervals" --out "$file" |
    grep -v '^progress'
fi
ls -l "$file"

# The disk's sequential read bandwidth with O_DIRECT, on this file, now.
size() { # blocks of 64 MiB, as a size
  if [ $(($1 % 16)) = 0 ]; then echo "$(($1 / 16)) GiB"; else echo "$(($1 * 64)) MiB"; fi
}
sync
if [ "$dd_read" != 0 ]; then
  dd if="$file" of=/dev/null bs=64M count="$dd_read" iflag=direct 2>&1 | tail -1 |
    sed "s/^/disk (O_DIRECT sequential read, $(size "$dd_read") of the graph file): /"
fi
if [ "$dd_write" != 0 ]; then
  dd if=/dev/zero of="$work/scratch/dd.bin" bs=64M count="$dd_write" oflag=direct 2>&1 |
    tail -1 | sed "s/^/disk (O_DIRECT sequential write, $(size "$dd_write")): /"
  rm -f "$work/scratch/dd.bin"
fi

if [ "${PEERS_ONLY:-0}" != 1 ]; then
echo "## saga"
/usr/bin/time -f "saga: %e s wall, peak resident set %M KiB" \
  "$bin/sagac" train "$here/bench/models/gcn256.saga" --data "$file" \
  --memory-budget "${budget_kib}K" --scratch "$work/scratch" --direct-io \
  --epochs "$epochs" --threads "$threads" --reorder none 2>&1
fi
[ "${SAGA_ONLY:-0}" = 1 ] && exit 0

# The peers, each limited to this machine's RAM (cgroup v1 memory
# controller): a system that needs more is killed by the OOM killer.
# Without that controller (cgroup v2 alone, or no permission) they run
# without the limit, and a line says so.
failed=""
for system in dgl pytorch; do
  echo "## $system"
  if [ ! -x "$peers/bin/python3" ]; then
    echo "$system skipped: no peers venv at $peers (PEERS; bench/README.md)"
    continue
  fi
  cg=/sys/fs/cgroup/memory/saga-ooc-$system
  enter=""
  if mkdir -p "$cg" 2>/dev/null &&
     echo $((ram_kib * 1024)) > "$cg/memory.limit_in_bytes" 2>/dev/null; then
    enter="echo \$\$ > $cg/cgroup.procs; "
  else
    echo "$system: no cgroup v1 memory controller here ($cg): runs without the RAM limit"
    cg=""
  fi
  set +e
  sh -c "${enter}exec $peers/bin/python3 $here/bench/ooc_baselines.py $system $file --threads $threads" \
    > "$work/$system.log" 2>&1
  status=$?
  set -e
  grep -v Warning "$work/$system.log" || true
  if [ "$status" = 77 ]; then
    echo "$system $(sed -n "s/^$system: skipped/skipped/p" "$work/$system.log")"
  elif [ -n "$cg" ]; then
    echo "$system: exit status $status (137: killed); OOM kills in its cgroup: $(awk '/oom_kill / {print $2}' "$cg/memory.oom_control")"
  else
    echo "$system: exit status $status (137: killed)"
  fi
  case $status in 0|77) ;; *) failed="$failed $system" ;; esac
  [ -z "$cg" ] || rmdir "$cg" 2>/dev/null || true
done
if [ -n "$failed" ] && [ "${STRICT:-0}" = 1 ]; then
  echo "outofcore.sh: failed:$failed (STRICT=1; see $work/*.log)" >&2
  exit 1
fi
