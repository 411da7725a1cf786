#!/usr/bin/env bash
# The prepared GPU check (issue 37; gpu/README.md). Run from the unpacked
# bundle (make gpu-bundle) on the GPU machine:
#
#   tar xJf gpu-bundle.tar.xz && OUT=/some/dir saga-gpu/gpu/check.sh
#
# Writes under $OUT check.log (every command and its output), summary.txt
# (one line per check), saga.jsonl and peers-SCALE.jsonl (the figures) and
# table.txt (them side by side); scratch goes to WORK (default a new folder
# under TMPDIR). It
# ends inside BUDGET + 60 seconds (BUDGET default 450): steps that would
# start after BUDGET are listed as skipped, a step still running at BUDGET +
# 60 is stopped. Exit status: 0 when every check that ran passed.
#
#   --dry-run   the ctest run (test/gpu/): the emulated GPU (the stand-in
#               driver named by SAGA_CUDA_DRIVER etc.), Cora training of the
#               reference's epochs, R-MAT scale 10, no sanitizer, peers on
#               the CPU when torch is importable (skipped with a message if
#               not).
# Environment: OUT, BUDGET, SCALES (default "22 24"; dry run "10"), PYTHON
# (default python3), SAGA_CUDA_DRIVER / SAGA_NVRTC / SAGA_CUBLAS (passed on).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
dry=0
[ "${1:-}" = --dry-run ] && dry=1
OUT=${OUT:-$root/check-out}
# $OUT gets the few files worth keeping, written as the run goes (a run
# stopped part-way keeps what it did): check.log, summary.txt, table.txt,
# saga.jsonl, peers-SCALE.jsonl. Every step's output and the graphs go to
# WORK (large; not for $OUT, whose files a device run brings back).
WORK=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/saga-gpu-check.XXXXXX")}
work=$WORK
mkdir -p "$OUT" "$work"
OUT=$(cd "$OUT" && pwd)
work=$(cd "$work" && pwd)
log=$OUT/check.log
summary=$OUT/summary.txt
: > "$log"
: > "$summary"
PYTHON=${PYTHON:-python3}
BUDGET=${BUDGET:-450}
start=$(date +%s)
if [ $dry = 1 ]; then SCALES=${SCALES:-10}; else SCALES=${SCALES:-"22 24"}; fi
cd "$root"
failures=0
# The toolkit's tools (compute-sanitizer, ncu, nvcc) where PATH lacks them.
[ -d /usr/local/cuda/bin ] && PATH="$PATH:/usr/local/cuda/bin"
# NVRTC and cuBLAS where the loader would not look: the toolkit's lib64 and
# the pip wheels' folders, appended for sagac alone (torch, in peers.py,
# keeps its own), through a wrapper that every step runs.
libs=
if [ $dry = 0 ]; then
  for d in /usr/local/cuda/lib64 $($PYTHON -c 'import glob, nvidia
for p in nvidia.__path__:
    print(" ".join(glob.glob(p + "/*/lib") + glob.glob(p + "/*/*/lib")))' 2>/dev/null); do
    [ -d "$d" ] && libs="${libs:+$libs:}$d"
  done
fi
sagac=$work/sagac
if [ -n "$libs" ]; then
  printf '#!/bin/sh\nLD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}%s" exec "%s" "$@"\n' \
    "$libs" "$root/bin/sagac" > "$sagac"
else
  printf '#!/bin/sh\nexec "%s" "$@"\n' "$root/bin/sagac" > "$sagac"
fi
chmod +x "$sagac"

say() { echo "$*" | tee -a "$log"; }
# record NAME pass|FAIL|skip DETAIL: a summary line.
record() {
  local line
  line=$(printf '%-40s %-5s %s' "$1" "$2" "$(echo "$3" | tr '\n' ' ' | cut -c1-400)")
  echo "$line" >> "$summary"
  echo "$line" >> "$log"
  echo "$line"
  [ "$2" = FAIL ] && failures=$((failures + 1))
  return 0
}
elapsed() { echo $(( $(date +%s) - start )); }
# run NAME CMD...: runs CMD, its output to $work/NAME.out and the log; status
# (124: stopped at the budget's end plus a minute, so the script ends by then).
run() {
  local name=$1; shift
  echo "\$ $*" >> "$log"
  local t0=$(date +%s.%N) left=$((BUDGET + 60 - $(elapsed))) rc
  if [ $left -lt 5 ]; then
    echo "(not started: the time budget is spent)" > "$work/$name.out"
    rc=124
  else
    timeout -k 10 $left "$@" > "$work/$name.out" 2>&1
    rc=$?
  fi
  [ $rc = 124 ] && echo "(stopped after ${left}s: the time budget)" >> "$work/$name.out"
  cat "$work/$name.out" >> "$log"
  echo "[$name: exit $rc, $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $t0 }") s]" >> "$log"
  return $rc
}
# in_budget NAME: false (and a skip line) once BUDGET seconds have passed.
in_budget() {
  if [ "$(elapsed)" -ge "$BUDGET" ]; then
    record "$1" skip "time budget of ${BUDGET}s spent"
    return 1
  fi
}
# check NAME compare.py-args...: a comparison's verdict as a summary line.
check() {
  local name=$1; shift
  local verdict
  verdict=$($PYTHON gpu/compare.py "$@" 2>&1)
  echo "$verdict" >> "$log"
  case "$verdict" in
    ok:*) record "$name" pass "${verdict#ok: }" ;;
    *) record "$name" FAIL "${verdict#FAIL: }" ;;
  esac
}
last() { grep -E "$2" "$work/$1.out" | tail -1; }

# --- environment ---------------------------------------------------------
say "== environment ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
cat BUNDLE.txt | tee -a "$log"
need=$(sed -n 's/^glibc_needed=//p' BUNDLE.txt)
have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
if [ -n "$have" ] && [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" = "$need" ]; then
  record glibc pass "has $have, needs $need"
else
  record glibc FAIL "has ${have:-unknown}, the bundle needs $need"
fi
if command -v nvidia-smi > /dev/null; then
  run nvidia-smi nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  record gpu pass "$(tail -1 "$work/nvidia-smi.out")"
else
  record gpu skip "no nvidia-smi$([ $dry = 1 ] && echo ' (dry run: the emulated GPU)')"
fi
echo "sagac runs with LD_LIBRARY_PATH += ${libs:-nothing}" >> "$log"
# Which driver, NVRTC and cuBLAS a CUDA run loads (the dynamic loader's
# own account), and the device line sagac prints.
if LD_DEBUG=files run device "$sagac" train examples/gcn.saga --data examples/data/cora --device cuda --epochs 1 --quiet; then
  loaded=$(grep -oE 'file=[^ ]*(cuda|nvrtc|cublas|standin)[^ ]* ' "$work/device.out" | sed 's/file=//' | sort -u | tr '\n' ' ')
  record device pass "$(last device '^device:' | sed 's/^device: //'); loaded: $loaded"
else
  record device FAIL "$(tail -3 "$work/device.out" | tr '\n' ' ')"
fi

# --- correctness: every example against the CPU references -------------------
say "== correctness"
for m in gcn gat ggcn gin graphsage; do
  in_budget "$m forward" || continue
  if SAGA_EXACT_MATH=1 run $m.forward "$sagac" run examples/$m.saga --data examples/data/cora --device cuda --seed 0 --output "$work/$m.forward.npy"; then
    check "$m forward" npy "$work/$m.forward.npy" ref/$m.forward.npy 1e-4
  else
    record "$m forward" FAIL "sagac exited non-zero: $(tail -1 "$work/$m.forward.out")"
  fi
  in_budget "$m two SGD steps" || continue
  if SAGA_EXACT_MATH=1 run $m.train "$sagac" train examples/$m.saga --data examples/data/cora --device cuda --seed 0 \
       --epochs 2 --optimizer sgd --lr 0.01 --save-params "$work/$m.params" --log "$work/$m.train.jsonl" --quiet; then
    check "$m two SGD steps: losses" losses "$work/$m.train.jsonl" ref/$m.train.jsonl 1e-4
    check "$m two SGD steps: parameters" params "$work/$m.params" ref/$m.params 5e-4
  else
    record "$m two SGD steps" FAIL "sagac exited non-zero: $(tail -1 "$work/$m.train.out")"
  fi
done

epochs=$(sed -n 's/^epochs=//p' ref/README.txt)
if in_budget "cora gcn (make run)"; then
  if run cora "$sagac" train examples/gcn.saga --data examples/data/cora --device cuda --epochs "$epochs" --lr 0.01 --seed 0 --log "$work/cora-gcn.jsonl" --quiet; then
    check "cora gcn $epochs epochs: losses" losses "$work/cora-gcn.jsonl" ref/cora-gcn.jsonl 1e-4 10
    check "cora gcn $epochs epochs: accuracy" accuracy "$work/cora-gcn.jsonl" ref/cora-gcn.jsonl 1.0
  else
    record "cora gcn (make run)" FAIL "$(tail -1 "$work/cora.out")"
  fi
fi
if in_budget "chunked under 12M"; then
  if run chunked "$sagac" train examples/gcn.saga --data examples/data/cora --device cuda --epochs 2 --lr 0.01 --seed 0 \
       --memory-budget 12M --log "$work/gcn-chunked.jsonl" --quiet; then
    check "chunked under 12M: losses" losses "$work/gcn-chunked.jsonl" ref/gcn-chunked.jsonl 1e-4
    plan=$(grep -E '^out of core: .*, [0-9]+ row intervals' "$work/chunked.out" | head -1)
    case "$plan" in
      *", 1 row intervals"*|"") record "chunked under 12M: plan" FAIL "no chunked plan: ${plan:-no 'out of core' line}" ;;
      *) record "chunked under 12M: plan" pass "$plan" ;;
    esac
  else
    record "chunked under 12M" FAIL "$(tail -1 "$work/chunked.out")"
  fi
fi

# The emitted CUDA C++ compiles with nvcc too (not only NVRTC).
if command -v nvcc > /dev/null && in_budget "nvcc compiles the emitted .cu"; then
  if run emit-cuda "$sagac" examples/gat.saga --emit=cuda --training -o "$work/gat.cu" &&
     run nvcc nvcc -arch=sm_90 -c "$work/gat.cu" -o "$work/gat.o"; then
    record "nvcc compiles the emitted .cu" pass "gat training kernels, sm_90: $(nvcc --version | tail -1)"
  else
    record "nvcc compiles the emitted .cu" FAIL "$(tail -2 "$work/nvcc.out" | tr '\n' ' ')"
  fi
fi

# --- compute-sanitizer ------------------------------------------------------
say "== compute-sanitizer"
if [ $dry = 1 ] || ! command -v compute-sanitizer > /dev/null; then
  record "memcheck, racecheck" skip "$([ $dry = 1 ] && echo 'dry run' || echo 'no compute-sanitizer on PATH')"
else
  for tool in memcheck racecheck; do
    in_budget "compute-sanitizer $tool" || continue
    if [ $tool = memcheck ]; then
      set -- train examples/gcn.saga --data examples/data/cora --device cuda --epochs 1 --quiet
    else
      set -- run examples/gat.saga --data examples/data/cora --device cuda
    fi
    run sanitizer-$tool timeout 120 compute-sanitizer --tool $tool --error-exitcode 3 "$sagac" "$@"
    rc=$?
    errs=$(grep -E 'ERROR SUMMARY' "$work/sanitizer-$tool.out" | tail -1)
    n=$(echo "$errs" | grep -oE '[0-9]+ error' | grep -oE '[0-9]+' || true)
    if [ $rc = 0 ] && [ "${n:-0}" = 0 ] && [ -n "$errs" ]; then
      record "compute-sanitizer $tool" pass "$errs"
    elif [ -n "$n" ] && [ "$n" != 0 ]; then
      record "compute-sanitizer $tool" FAIL "$errs (check.log has them)"
    elif [ -z "$errs" ]; then
      # The tool never reached its summary: it could not run here (or
      # was stopped at 120 s), which says nothing of Saga's kernels.
      record "compute-sanitizer $tool" skip "could not run (exit $rc): $(tail -1 "$work/sanitizer-$tool.out")"
    else
      record "compute-sanitizer $tool" FAIL "sagac exited $rc under the tool: $(grep -m1 'error' "$work/sanitizer-$tool.out")"
    fi
  done
fi

# --- performance: R-MAT, against the peers, in the same run ---------------
# perf S "F..." all|agg: Saga and the peers on rmat:scale=S (Saga makes the
# graph there, once per sagac run, and writes it as an .npz for the peers).
perf() {
  local s=$1 widths=$2 what=$3 graph="rmat:scale=$1,edge-factor=16" f
  local repeat=20 ep=5 dev=cuda
  [ $dry = 1 ] && { repeat=2; ep=2; dev=auto; }
  if in_budget "rmat $s: peers' graph" && [ ! -f "$work/rmat$s.npz" ]; then
    run convert-$s "$sagac" convert "$graph,features=1" "$work/rmat$s.npz" ||
      record "rmat $s: peers' graph" FAIL "$(tail -1 "$work/convert-$s.out")"
  fi
  for f in $widths; do
    in_budget "rmat $s agg F=$f: saga" || continue
    if run agg-$s-$f "$sagac" run bench/models/agg$f.saga --data "$graph,features=$f" --device cuda --no-normalize \
         --repeat $repeat --profile --kernel-traffic; then
      if detail=$($PYTHON gpu/report.py agg "$work/agg-$s-$f.out" "$OUT/saga.jsonl" $s $f 2>&1); then
        record "rmat $s agg F=$f: saga" pass "$detail"
      else
        record "rmat $s agg F=$f: saga" FAIL "$detail"
      fi
    else
      record "rmat $s agg F=$f: saga" FAIL "$(tail -1 "$work/agg-$s-$f.out")"
    fi
  done
  if [ "$what" = all ] && in_budget "rmat $s gcn epoch: saga"; then
    if run gcn-$s "$sagac" train bench/models/gcn64.saga --data "$graph,features=64" --device cuda --epochs $ep \
         --log "$work/gcn-$s.jsonl" --quiet; then
      if detail=$($PYTHON gpu/report.py gcn "$work/gcn-$s.jsonl" "$OUT/saga.jsonl" $s 2>&1); then
        record "rmat $s gcn epoch: saga" pass "$detail"
      else
        record "rmat $s gcn epoch: saga" FAIL "$detail"
      fi
    else
      record "rmat $s gcn epoch: saga" FAIL "$(tail -1 "$work/gcn-$s.out")"
    fi
  fi
  if in_budget "rmat $s peers" && [ -f "$work/rmat$s.npz" ]; then
    run peers-$s-${what} timeout 300 $PYTHON gpu/peers.py --graph "$work/rmat$s.npz" \
      --features "$(echo $widths | tr ' ' ,)" --device $dev --repeat $repeat \
      --epochs $([ "$what" = all ] && echo $ep || echo 0) --out "$OUT/peers-$s.jsonl"
    local rc=$?
    if grep -q '^peers: skipped: torch' "$work/peers-$s-$what.out"; then
      # Expected where torch is absent (a dry run); on the GPU machine it
      # is there, and a failed import is a failure.
      record "rmat $s peers" "$([ $dry = 1 ] && echo skip || echo FAIL)" "$(grep -m1 '^peers: skipped' "$work/peers-$s-$what.out")"
    elif [ $rc = 0 ]; then
      record "rmat $s peers" pass "F=$(echo $widths | tr ' ' ,)$([ "$what" = all ] && echo ', GCN epoch'): peers-$s.jsonl, table.txt"
    else
      record "rmat $s peers" FAIL "exit $rc: $(tail -1 "$work/peers-$s-$what.out")"
    fi
  fi
  # Out of core: a budget of about three [V, 64] tensors, well under the
  # GCN step's working set.
  if [ "$what" = all ] && in_budget "rmat $s out of core"; then
    local budget=$(( (1 << s) * 64 * 4 * 3 / 1048576 + 1 ))M
    if run ooc-$s "$sagac" train bench/models/gcn64.saga --data "$graph,features=64" --device cuda --epochs 2 \
         --memory-budget $budget --quiet; then
      overlap=$(grep -m1 -oE 'transfers overlapped [0-9]+%[^,]*' "$work/ooc-$s.out")
      if [ -n "$overlap" ]; then
        record "rmat $s out of core ($budget)" pass "$overlap; goal >= 80 %"
      else
        record "rmat $s out of core ($budget)" FAIL "no chunked plan ran (no overlap line)"
      fi
    else
      record "rmat $s out of core ($budget)" FAIL "$(tail -1 "$work/ooc-$s.out")"
    fi
  fi
}
say "== performance"
# First, that Saga and the peers compute the same sum: one small graph with
# its features in the file, Saga's GPU output against both peers'.
small=14; [ $dry = 1 ] && small=10
if in_budget "agg output: saga = peers"; then
  if run agg-same-convert "$sagac" convert "rmat:scale=$small,features=64" "$work/same.npz" &&
     run agg-same-saga "$sagac" run bench/models/agg64.saga --data "$work/same.npz" --device cuda --no-normalize \
       --output "$work/same-saga64.npy"; then
    in_budget "agg output: saga = peers" &&
    run agg-same-peers $PYTHON gpu/peers.py --graph "$work/same.npz" --features 64 --x-from-file \
      --saga-out 64="$work/same-saga64.npy" --copy-mib 0 --epochs 0 --repeat 1 \
      --device $([ $dry = 1 ] && echo auto || echo cuda) --out "$work/same.jsonl"
    rc=$?
    if grep -q '^peers: skipped: torch' "$work/agg-same-peers.out"; then
      record "agg output: saga = peers" skip "$(grep -m1 '^peers: skipped' "$work/agg-same-peers.out")"
    elif [ $rc = 0 ]; then
      record "agg output: saga = peers" pass "rmat $small F=64: $(grep -m1 -oE 'vs saga[^;]*' "$work/agg-same-peers.out")"
    else
      record "agg output: saga = peers" FAIL "exit $rc: $(tail -1 "$work/agg-same-peers.out")"
    fi
  else
    record "agg output: saga = peers" FAIL "$(tail -1 "$work/agg-same-saga.out")"
  fi
fi
# Each scale in SCALES' order: below 24 everything, from 24 only F = 256
# (the bandwidth goal's graph: the R-MAT generator alone takes a minute
# there).
for s in $SCALES; do
  if [ "$s" -ge 24 ]; then perf $s 256 agg; else perf $s "64 256" all; fi
done
# Nsight Compute's account of the propagation kernel's DRAM bytes, where it
# can profile (it needs the GPU's counters; a refusal is a skip).
if [ $dry = 0 ] && ! command -v ncu > /dev/null; then
  record "ncu dram bytes (rmat 20 F=64)" skip "no ncu on PATH"
elif [ $dry = 0 ] && in_budget "ncu dram bytes"; then
  run ncu ncu --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
    -k regex:saga_kernel --launch-count 1 "$sagac" run bench/models/agg64.saga \
    --data "rmat:scale=20,edge-factor=16,features=64" --device cuda --no-normalize
  if grep -q 'dram__bytes_read' "$work/ncu.out"; then
    record "ncu dram bytes (rmat 20 F=64)" pass "$(grep -E 'dram__bytes|gpu__time' "$work/ncu.out" | awk '{print $1, $(NF-1), $NF}' | tr '\n' ';')"
  else
    record "ncu dram bytes (rmat 20 F=64)" skip "$(grep -m1 -E 'ERR|rror|permission' "$work/ncu.out" || tail -1 "$work/ncu.out")"
  fi
fi

$PYTHON gpu/report.py table "$OUT" $SCALES | tee -a "$log" "$OUT/table.txt"

say "== summary ($(elapsed) s)"
cat "$summary"
say "$failures failed"
[ $failures = 0 ]
