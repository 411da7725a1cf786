#!/usr/bin/env bash
# Builds the front-end fuzzer with clang (ASan + UBSan + libFuzzer) in
# build-fuzz/ and runs it for SECONDS (default 300), seeded with the examples.
# Usage: test/fuzz/run-fuzzer.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-300}
if ! command -v clang++-22 >/dev/null; then
  apt-get install -y -qq --no-install-recommends clang-22 libclang-rt-22-dev
fi
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DSAGA_ENABLE_FUZZER=ON >/dev/null
cmake --build build-fuzz --target saga-fuzz-frontend
corpus=build-fuzz/fuzz-corpus
mkdir -p "$corpus"
cp examples/*.saga "$corpus/"
ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 ./build-fuzz/bin/saga-fuzz-frontend "$corpus" \
  -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=4096 \
  -dict=test/fuzz/saga.dict 2>&1 | tail -n 25
