#!/usr/bin/env bash
# Bench smoke test: every bench script in bench/ (and the Python peers they
# call) at a tiny scale, so that none of them rots unseen. Not a
# measurement: the figures mean nothing at these sizes.
#
#   bench/smoke.sh BUILD_DIR OUT_DIR
#
# BUILD_DIR: a built tree (its bin/sagac, bin/saga-bench-*, python/);
# nothing is built or installed. Everything is written under OUT_DIR
# (results/, logs/, work/; never bench/results/, which is checked).
#
# Environment:
#   PYTHON  an interpreter with NumPy (default /usr/bin/python3): the
#           readers' checks, and the peers' interpreter unless PEERS is set
#   PEERS   a venv whose bin/python3 runs the peers (torch, torch_geometric,
#           dgl; bench/README.md says how to make one)
#   SMOKE_ONLY  names of steps to run (default all)
#   SMOKE_JOBS  1: one step at a time (default 2: two lanes of steps)
#
# A peer (torch, PyG, DGL) that is not installed for the peers' python is
# skipped with a line saying which and why, after its inputs are read and
# checked with NumPy; a peer that is installed and fails fails the test.
# Each script's scale (R-MAT 8-12, 1-2 epochs, one repeat) is set below.
# Skipped, with the reason printed: bench/netns/ runs (distributed.sh,
# minibatch_distributed.sh) where network namespaces cannot be made (not
# root) or mpirun is missing; disk_random_reads.sh where OUT_DIR takes no
# O_DIRECT reads (tmpfs). gemm.sh runs without BLIS and Eigen when their
# packages are not installed (it says so).
#
# The last line is "N passed, N failed, N skipped"; the exit status is 1
# when a step failed.
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: bench/smoke.sh BUILD_DIR OUT_DIR" >&2
  exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "$1" && pwd) || { echo "smoke.sh: no build folder $1" >&2; exit 2; }
mkdir -p "$2" && out=$(cd "$2" && pwd) || exit 2
PYTHON=${PYTHON:-/usr/bin/python3}
if ! "$PYTHON" -c 'import numpy' 2>/dev/null; then
  echo "smoke.sh: $PYTHON cannot import numpy (set PYTHON)" >&2
  exit 2
fi
for b in sagac saga-bench-suite saga-bench-forward saga-bench-partition; do
  [ -x "$build/bin/$b" ] || { echo "smoke.sh: no $build/bin/$b" >&2; exit 2; }
done
# The peers' interpreter: PEERS's, else PYTHON's own prefix (its bin/python3).
if [ -z "${PEERS:-}" ]; then
  PEERS=$(cd "$(dirname "$PYTHON")/.." && pwd)
  [ -x "$PEERS/bin/python3" ] || {
    echo "smoke.sh: set PEERS (no $PEERS/bin/python3 beside $PYTHON)" >&2
    exit 2
  }
fi
[ -x "$PEERS/bin/python3" ] || { echo "smoke.sh: no $PEERS/bin/python3" >&2; exit 2; }

rm -rf "$out/logs" "$out/results" "$out/work" "$out/tmp"
mkdir -p "$out/logs" "$out/results" "$out/work" "$out/tmp"
work=$out/work
# Every script: the given build, never a build or an apt-get, results and
# temporary files under OUT_DIR, peers' failures fatal.
export BUILD=$build RESULTS=$out/results TMPDIR=$out/tmp PEERS
export SAGA_NO_BUILD=1 SAGA_NO_INSTALL=1 STRICT=1 DGLBACKEND=pytorch
export OMP_WAIT_POLICY=passive
# bench/netns/ hosts of this run alone (hosts.sh down removes only these).
export SAGA_NETNS_PREFIX=smk$$
export SAGA_NETNS_STATE=$work/netns
stamp=$out/tmp/stamp
touch "$stamp"

now() { date +%s.%N; }
wanted() { [ -z "${SMOKE_ONLY:-}" ] || [[ " $SMOKE_ONLY " == *" $1 "* ]]; }

# step NAME: runs s_NAME (NAME less its extension) from the repository
# root, its output in logs/NAME.log; prints one block (ok or FAILED, the
# skip lines inside) and leaves logs/NAME.status for the count.
step() {
  local name=$1 log=$out/logs/$1.log start status secs cpu report
  wanted "$name" || return 0
  start=$(now)
  (cd "$here" && "s_${name%%.*}"; status=$?
   times > "$out/logs/$name.times"; exit $status) > "$log" 2>&1
  status=$?
  # A Python traceback is a failure even where a script went on.
  if [ "$status" = 0 ] && grep -q '^Traceback' "$log"; then
    status=traceback
  fi
  secs=$(awk -v a="$start" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}')
  # CPU seconds of its processes (user + system), from `times`: 0m1.5s 0m0.2s
  cpu=$(tail -1 "$out/logs/$name.times" | sed 's/[ms]/ /g' |
    awk '{printf "%.1f", 60 * ($1 + $3) + $2 + $4}')
  if [ "$status" = 0 ]; then
    echo ok > "$out/logs/$name.status"
    report=$(printf 'ok      %-26s %6s s  (cpu %5s s)' "$name" "$secs" "$cpu")
  else
    echo failed > "$out/logs/$name.status"
    report=$(printf 'FAILED  %-26s %6s s  (cpu %5s s; status %s; %s)\n%s' \
      "$name" "$secs" "$cpu" "$status" "$log" \
      "$(tail -15 "$log" | sed 's/^/    | /')")
  fi
  # What the step skipped inside (a peer not installed, a library missing).
  local skipped
  skipped=$(grep -hE 'skipped([,:]| \()' "$log" | sort -u | sed 's/^/          /')
  [ -z "$skipped" ] || report="$report
$skipped"
  printf '%s\n' "$report"
}

skip() { # name reason
  wanted "$1" || return 0
  echo skipped > "$out/logs/$1.status"
  printf 'skipped %-26s %s\n' "$1" "$2"
}

lane() { # steps, one after another
  local name
  for name in "$@"; do step "$name"; done
}

echo "# bench/smoke.sh: build $build, out $out"
echo "# python $PYTHON; peers' python $PEERS/bin/python3 ($("$PEERS/bin/python3" -c '
import importlib.util as u
print(", ".join(m + (" yes" if u.find_spec(m) else " no") for m in
      ("torch", "torch_geometric", "dgl")))' 2>&1))"
total_start=$(now)
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# --- the readers of Saga's formats, NumPy only ---------------------------------
# The .sgf reader (bench/ooc_baselines.py) on a version 2 file, a version 1
# file, one with a section kind it does not know (skipped with a note) and
# one with a corrupt header (a clear error, no traceback).
s_readers() {
  local file
  file=$(bench/rmat_sgf.sh 8 "$work") || return 1
  "$PYTHON" bench/ooc_baselines.py check "$file" || return 1
  "$PYTHON" bench/ooc_baselines.py check test/fuzz/corpus/sgf/version1-tiny-1 ||
    return 1
  "$PYTHON" - "$file" "$work" <<'PY' || return 1
import os, shutil, struct, subprocess, sys, zlib
path, work = sys.argv[1:]
sys.path.insert(0, "bench")
import ooc_baselines as ooc

def rewrite(name, edit):
    to = os.path.join(work, name)
    shutil.copyfile(path, to)
    with open(to, "r+b") as f:
        h = bytearray(f.read(4096))
        edit(h)
        struct.pack_into("<I", h, 4092, zlib.crc32(bytes(h[:4092])))
        f.seek(0)
        f.write(h)
    return to

# A newer file: version 3 with an 18th section of a kind this reader does
# not know (the first 4096 bytes past the header: any bytes will do).
def newer(h):
    count, = struct.unpack_from("<I", h, 80)
    struct.pack_into("<I", h, 8, 3)
    struct.pack_into("<I", h, 80, count + 1)
    struct.pack_into("<I4xQQI", h, 96 + 32 * count, 99, 4096, 16,
                     zlib.crc32(open(path, "rb").read()[4096:4112]))
v3 = rewrite("version3.sgf", newer)
r = subprocess.run([sys.executable, "bench/ooc_baselines.py", "check", v3],
                   capture_output=True, text=True)
print(r.stdout + r.stderr, end="")
assert r.returncode == 0, "a version 3 file with an unknown section"
assert "kind 99" in r.stderr and "1 of unknown kinds skipped" in r.stdout

# A corrupt header, a truncated section table entry, a missing file: one
# line naming the file, never a traceback.
bad = rewrite("corrupt.sgf", lambda h: None)
with open(bad, "r+b") as f:  # a bit flipped after the CRC was written
    f.seek(20)
    byte = f.read(1)[0] ^ 1
    f.seek(20)
    f.write(bytes([byte]))
def short(h):
    struct.pack_into("<Q", h, 96 + 16, 8)  # in-offsets: 8 bytes
for case in (bad, rewrite("short.sgf", short), os.path.join(work, "none.sgf")):
    r = subprocess.run([sys.executable, "bench/ooc_baselines.py", "check",
                        case], capture_output=True, text=True)
    print(r.stderr, end="")
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert case in r.stderr, r.stderr
print("readers: .sgf versions 1-3, unknown sections and bad files as expected")
PY
}
# --- one function per script, at its tiny scale ---------------------------------
s_rmat_sgf() { bench/rmat_sgf.sh 8 "$work"; }
s_accuracy() { EPOCHS=2 bench/accuracy.sh 1; }
s_epoch() { THREADS=1 EPOCHS=2 REPEAT=1 bench/epoch.sh; }
s_graphclass() { DATASETS=MUTAG EPOCHS=1 FOLDS=2 bench/graphclass.sh; }
# Two builds compared: the same build twice.
s_ab() { ROUNDS=1 SCALE=8 EPOCHS=1 CORA_EPOCHS=2 bench/ab.sh "$build" "$build" "$work"; }
s_forward() {
  THREADS=1 SCALE=8 REPEAT_CORA=1 REPEAT_RMAT=1 DATA="$work/forward" \
    bench/forward.sh
}
s_suite() {
  THREADS=1 SCALES=8 WIDTHS=16 TRAIN_SCALE=8 TRAIN_EPOCHS=1 REPEAT=1 \
    REPEAT_SMALL=1 STREAM_N=1000000 DATA="$work/suite" bench/suite.sh
}
s_fusion() {
  THREADS=1 SCALES=8 EPOCHS=1 PYG=8 DATA="$work/fusion" bench/fusion.sh
}
s_motion() { THREADS=1 SCALE=8 EPOCHS=1 bench/motion.sh; }
s_intervals() {
  THREADS=1 DENSE="9 16" SPARSE="8 16" SWEEP=2 REPEAT=1 bench/intervals.sh
}
s_gemm() { SHAPES="256x64x64 64x1433x16" bench/gemm.sh; }
# partition.sh's cost model (in RESULTS) is the one distributed.sh's roc uses.
s_partition() {
  SCALE=8 PARTS=2 SAMPLES=6 HOLDOUT=2 REPEATS=1 bench/partition.sh
}
s_minibatch() { SCALE=8 EPOCHS=1 bench/minibatch.sh "$work"; }
s_linkpred() { SEEDS=1 EPOCHS=2 SCALE=8 MAXB=2 THREADS=1 bench/linkpred.sh "$work"; }
s_python_epoch() { SCALE=8 EPOCHS=2 THREADS=1 bench/python_epoch.sh "$work"; }
s_readahead() {
  SCALE=10 ROUNDS=1 EPOCHS=2 BUDGET=300K bench/readahead.sh "$work"
}
# 8x oversubscription needs scale 12: a smaller graph's budget is below one
# chunk.
s_outofcore_ram() {
  SCALE=12 EPOCHS=1 SETTINGS="0 8w 8o" bench/outofcore_ram.sh 1
}
s_outofcore() {
  SCALE=10 FEATURES=256 INTERVALS=4 EPOCHS=1 BUDGET_KIB=1024 \
    DD_READ_BLOCKS=1 DD_WRITE_BLOCKS=1 THREADS=1 bench/outofcore.sh "$work/ooc"
}
# gen_large_saga.py: a few hundred lines that sagac must compile.
s_gen_large_saga() {
  "$PYTHON" bench/gen_large_saga.py 300 > "$work/large.saga" &&
    "$build/bin/sagac" --emit=saga "$work/large.saga" > /dev/null &&
    echo "gen_large_saga.py: $(wc -l < "$work/large.saga") lines compiled"
}
s_disk_random_reads() {
  READS="200 50 5" bench/disk_random_reads.sh "$work/disk.bin"
}
s_distributed() {
  SCALE=8 EPOCHS=1 HOSTS=2 PARTITIONS=roc bench/distributed.sh "$work"
}
s_minibatch_distributed() {
  SCALE=8 EPOCHS=1 HOSTS=2 SETTINGS="0.5,16,0.05" \
    bench/minibatch_distributed.sh "$work"
}

# --- what cannot run here ------------------------------------------------------
# Two lanes of about the same length with the peers installed (the peers'
# steps spend seconds loading torch).
lane_a="readers accuracy.sh epoch.sh graphclass.sh forward.sh suite.sh fusion.sh
  gen_large_saga.py"
lane_b="ab.sh motion.sh intervals.sh partition.sh minibatch.sh linkpred.sh python_epoch.sh
  readahead.sh outofcore_ram.sh outofcore.sh gemm.sh"
# Random O_DIRECT reads need a file system that takes them (not tmpfs).
head -c $((4 << 20)) /dev/urandom > "$work/disk.bin"
if dd if="$work/disk.bin" of=/dev/null bs=4096 count=1 iflag=direct 2>/dev/null; then
  lane_a="$lane_a disk_random_reads.sh"
else
  skip disk_random_reads.sh "O_DIRECT reads fail under $work (tmpfs?)"
fi
# Several hosts: network namespaces (root) and Open MPI. Both scripts use
# the same hosts, so they run one after the other.
netns_probe=${SAGA_NETNS_PREFIX}probe
if ! command -v mpirun > /dev/null; then
  why="no mpirun"
elif ! ip netns add "$netns_probe" 2>/dev/null; then
  why="cannot make network namespaces here (needs root and ip netns)"
else
  ip netns del "$netns_probe"
  why=""
fi
if [ -z "$why" ]; then
  lane_b="$lane_b distributed.sh minibatch_distributed.sh"
else
  skip distributed.sh "$why"
  skip minibatch_distributed.sh "$why"
fi

# --- the runs: two lanes on two cores -------------------------------------------
step rmat_sgf.sh  # the graph file several steps share, made once
if [ "${SMOKE_JOBS:-2}" = 1 ]; then
  lane $lane_a $lane_b &
  lane_a_pid=$! lane_b_pid=""
else
  lane $lane_a &
  lane_a_pid=$!
  lane $lane_b &
  lane_b_pid=$!
fi
cleanup() {
  kill $lane_a_pid $lane_b_pid 2>/dev/null
  [ -n "$why" ] || "$here/bench/netns/hosts.sh" down > /dev/null 2>&1
}
trap 'cleanup; exit 1' INT TERM
wait $lane_a_pid $lane_b_pid

# Every script and peer in bench/ is run: a step of its own, or called by
# one (new ones need a step above, or a place in this list).
called="gat_baseline.py graphclass_dgl.py linkpred_dgl.py minibatch_baselines.py ooc_baselines.py peers.py
  pytorch_gcn.py pytorch_reference.py suite_baselines.py smoke.sh"
if [ -z "${SMOKE_ONLY:-}" ]; then
  run=" $(echo $lane_a $lane_b rmat_sgf.sh disk_random_reads.sh distributed.sh \
    minibatch_distributed.sh $called) "
  for f in "$here"/bench/*.sh "$here"/bench/*.py; do
    f=${f##*/}
    [[ "$run" == *" $f "* ]] && continue
    echo failed > "$out/logs/unrun-$f.status"
    echo "FAILED  bench/$f is run by no step of bench/smoke.sh"
  done
fi

# Nothing may have been written into bench/results.
if wanted results-untouched; then
  touched=$(find "$here/bench/results" -newer "$stamp" -type f 2>/dev/null)
  if [ -n "$touched" ]; then
    echo failed > "$out/logs/results-untouched.status"
    echo "FAILED  results-untouched: written into bench/results: $touched"
  fi
fi

count() { grep -lx "$1" "$out"/logs/*.status 2>/dev/null | wc -l; }
names() { grep -lx "$1" "$out"/logs/*.status 2>/dev/null |
  sed 's|.*/||; s|\.status$||' | tr '\n' ' '; }
passed=$(count ok) failed=$(count failed) skipped=$(count skipped)
total=$(awk -v a="$total_start" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}')
cpu=$(for f in "$out"/logs/*.times; do tail -1 "$f"; done | sed 's/[ms]/ /g' |
  awk '{t += 60 * ($1 + $3) + $2 + $4} END {printf "%.1f", t}')
line="# $total s in all, $cpu s of CPU; load average $(cut -d' ' -f1-3 /proc/loadavg) (at the start: $load0); logs in $out/logs"
[ "$failed" = 0 ] || line="$line; failed: $(names failed | sed 's/ $//')"
[ "$skipped" = 0 ] || line="$line; skipped: $(names skipped | sed 's/ $//')"
echo "$line"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
