#!/bin/sh
# cmake --install of the build tree into a fresh prefix, then an
# out-of-tree project (example/) configured with find_package(Saga), built
# and run: it must train GCN on Cora past 78 % test accuracy.
#   install_and_build.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -eu
build=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
test -f "$work/prefix/lib/cmake/Saga/SagaConfig.cmake"
test -f "$work/prefix/include/saga/api/Model.h"
cmake -S "$src/test/install/example" -B "$work/example" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release > "$work/configure.log"
cmake --build "$work/example" > "$work/build.log"
# The API's headers include no MLIR header (LLVM's support headers only):
# the example's dependencies as the compiler listed them to Ninja.
deps=$(ninja -C "$work/example" -t deps | grep '\.h' || true)
test -n "$deps"
if echo "$deps" | grep -q '/mlir/'; then
  echo "the installed API headers pull in MLIR:"
  echo "$deps" | grep '/mlir/' | head
  exit 1
fi
out=$("$work/example/train_cora" "$src/examples/gcn.saga" "$src/examples/data/cora" 100)
echo "$out"
echo "$out" | awk '/test accuracy/ { exit !($NF >= 0.78) }'
