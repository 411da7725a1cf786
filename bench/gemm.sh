#!/usr/bin/env bash
# Compares the BLAS choices for Saga's GEMMs on this machine (single thread):
# OpenBLAS as Debian ships it, OpenBLAS with the core type forced to
# SkylakeX, BLIS, and Eigen in the same binary. Prints one line per shape.
set -euo pipefail
cd "$(dirname "$0")"
for p in libopenblas-dev libblis-openmp-dev libeigen3-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    apt-get install -y -qq --no-install-recommends "$p" >/dev/null
done
out=$(mktemp -d)
flags="-O3 -march=native -DNDEBUG -I/usr/include/eigen3 -DEIGEN_DONT_PARALLELIZE"
g++ $flags GemmBench.cpp -o "$out/openblas" -lopenblas
blis=/usr/lib/x86_64-linux-gnu/blis-openmp
g++ $flags -I/usr/include/x86_64-linux-gnu/blis-openmp GemmBench.cpp -o "$out/blis" \
  -L$blis -Wl,-rpath,$blis -lblis -fopenmp
export OPENBLAS_NUM_THREADS=1 BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1
"$out/openblas" openblas
OPENBLAS_CORETYPE=SkylakeX "$out/openblas" openblas-skx
"$out/blis" blis
rm -rf "$out"
