#!/bin/sh
# The GPU bundle's dry run (issue 37, gpu/README.md): makes the bundle from
# this build (scripts/gpu-bundle.sh --quick), unpacks it in a fresh folder,
# and runs its check script against the emulated GPU (the stand-in driver,
# NVRTC and cuBLAS: emulator/driver) at small sizes. Fails when the bundle
# is missing a file, is over 40 MiB, a check fails, the summary does not
# parse (one "name pass|skip|FAIL detail" line per check, the checks the
# script must run all present), or the peers neither run nor say why not.
# Debian's python3 (numpy) runs the script's Python; the python3 first on
# PATH may lack numpy.
#   dry_run.sh BUILD_DIR SOURCE_DIR WORK_DIR STANDIN
set -eu
build=$1 src=$2 work=$3 standin=$4
rm -rf "$work"
mkdir -p "$work/unpacked"
"$src/scripts/gpu-bundle.sh" "$build" "$work/gpu-bundle.tar.xz" --quick
tar -xJf "$work/gpu-bundle.tar.xz" -C "$work/unpacked"
b=$work/unpacked/saga-gpu
for f in bin/sagac gpu/check.sh gpu/compare.py gpu/peers.py gpu/report.py \
         BUNDLE.txt LICENSES/README.txt examples/gcn.saga examples/data/cora/meta.txt \
         bench/models/agg64.saga ref/gcn.forward.npy ref/gin.params ref/cora-gcn.jsonl \
         ref/gcn-chunked.jsonl; do
  [ -e "$b/$f" ] || { echo "dry run: the bundle lacks $f" >&2; exit 1; }
done
# The bundle's sagac needs nothing of Debian's LLVM, MLIR, ANTLR, OpenBLAS,
# MPI or Boost.
if ldd "$b/bin/sagac" | grep -E 'LLVM|MLIR|antlr|openblas|mpi|boost|not found'; then
  echo "dry run: bin/sagac loads a library the GPU machine lacks (above)" >&2
  exit 1
fi
status=0
env OUT="$work/out" WORK="$work/scratch" PYTHON=/usr/bin/python3 SAGA_CUDA_DRIVER="$standin" SAGA_NVRTC="$standin" SAGA_CUBLAS="$standin" \
    SAGA_CUDA_CACHE="$work/cuda-cache" "$b/gpu/check.sh" --dry-run || status=$?
summary=$work/out/summary.txt
# Every line: a name (40 columns), pass/skip/FAIL, a detail.
bad=$(grep -vE '^.{40} (pass |skip |FAIL ) ' "$summary" || true)
[ -z "$bad" ] || { echo "dry run: summary lines that do not parse:" >&2; echo "$bad" >&2; exit 1; }
for name in glibc device 'gcn forward' 'gat two SGD steps: parameters' 'graphsage forward' \
            'cora gcn 3 epochs: losses' 'chunked under 12M: losses' 'chunked under 12M: plan' 'agg output: saga = peers' 'rmat 10 agg F=64: saga' \
            'rmat 10 agg F=256: saga' 'rmat 10 gcn epoch: saga' 'rmat 10 peers' 'rmat 10 out of core'; do
  grep -q "^$name" "$summary" || { echo "dry run: no summary line for '$name'" >&2; exit 1; }
done
if grep -q '^rmat 10 peers *skip' "$summary"; then
  grep -q 'peers: skipped: torch' "$summary" || { echo "dry run: peers skipped without saying why" >&2; exit 1; }
fi
[ -s "$work/out/table.txt" ] || { echo "dry run: no performance table" >&2; exit 1; }
if [ $status != 0 ]; then
  echo "dry run: check.sh failed (exit $status):" >&2
  grep FAIL "$summary" >&2
  exit 1
fi
echo "dry run: $(grep -c ' pass ' "$summary") checks passed, $(grep -c ' skip ' "$summary") skipped"
