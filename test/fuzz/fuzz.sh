#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan + libFuzzer on Saga's
# own code) in build-fuzz/ and runs each for SECONDS (default 60), JOBS at a
# time (default: the cores), seeded with test/fuzz/corpus/<target>/ (the
# front end with examples/*.saga and the token dictionary saga.dict).
# Prints and writes build-fuzz/fuzz-summary.txt: per target the executions,
# their rate, new corpus entries and crashes (inputs under
# build-fuzz/crashes/<target>/). Exits non-zero on any crash, leak or hang.
# Usage: test/fuzz/fuzz.sh [SECONDS] [TARGET...]      (make fuzz SECONDS=...)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
jobs=${JOBS:-$(nproc)}
all=(frontend planetoid edgelist mtx npy npz ogb sgf params checkpoint tu graphnpz edgesplit)
if [ $# -gt 0 ]; then targets=("$@"); else targets=("${all[@]}"); fi
if ! command -v clang++-22 >/dev/null || [ ! -d /usr/lib/llvm-22/lib/clang ]; then
  apt-get install -y -qq --no-install-recommends clang-22 libclang-rt-22-dev >/dev/null
fi
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DSAGA_ENABLE_FUZZER=ON >/dev/null
cmake --build build-fuzz --target "${targets[@]/#/saga-fuzz-}"

run_one() {
  local t=$1 corpus=build-fuzz/corpus/$1 seeds
  mkdir -p "$corpus" "build-fuzz/crashes/$t"
  local extra=()
  if [ "$t" = frontend ]; then
    seeds=examples; extra=(-dict=test/fuzz/saga.dict -max_len=4096)
    cp examples/*.saga "$corpus/"
  else
    seeds=test/fuzz/corpus/$t
    cp "$seeds"/* "$corpus/"
  fi
  # Leaks: LLVM's and MLIR's singletons outlive an input by design; each
  # input's own allocations are freed (the harnesses keep nothing).
  ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "./build-fuzz/bin/saga-fuzz-$t" "$corpus" "${extra[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="build-fuzz/crashes/$t/" \
    > "build-fuzz/fuzz-$t.log" 2>&1
  echo $? > "build-fuzz/fuzz-$t.rc"
}
export -f run_one
export seconds
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}' || true

status=0
{
  printf '%-11s %9s %12s %10s %8s %8s\n' target seconds executions "exec/s" corpus crashes
  for t in "${targets[@]}"; do
    log=build-fuzz/fuzz-$t.log
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{print $2}' | tail -1)
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | awk '{print $2}' | tail -1)
    corpus=$(ls "build-fuzz/corpus/$t" | wc -l)
    crashes=$(ls "build-fuzz/crashes/$t" | wc -l)
    rc=$(cat "build-fuzz/fuzz-$t.rc")
    [ "$rc" = 0 ] && [ "$crashes" = 0 ] || status=1
    printf '%-11s %9s %12s %10s %8s %8s\n' "$t" "$seconds" "${execs:-?}" "${rate:-?}" "$corpus" "$crashes"
  done
} | tee build-fuzz/fuzz-summary.txt
[ $status = 0 ] || echo "fuzzing found problems: see build-fuzz/fuzz-<target>.log and build-fuzz/crashes/"
exit $status
