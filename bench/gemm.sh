#!/usr/bin/env bash
# Compares the BLAS choices for Saga's GEMMs on this machine (single thread):
# OpenBLAS as Debian ships it, OpenBLAS with the core type forced to
# SkylakeX, BLIS, and Eigen in the same binary. Prints one line per shape.
# Settings (environment): SHAPES ("MxKxN ...": instead of GemmBench.cpp's
# three), SAGA_NO_INSTALL (set: never apt-get; BLIS or Eigen not installed
# is skipped with a line saying so).
set -euo pipefail
cd "$(dirname "$0")"
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
for p in libopenblas-dev libblis-openmp-dev libeigen3-dev; do
  installed "$p" || [ -n "${SAGA_NO_INSTALL:-}" ] ||
    apt-get install -y -qq --no-install-recommends "$p" >/dev/null
done
installed libopenblas-dev ||
  { echo "gemm.sh: libopenblas-dev is not installed (SAGA_NO_INSTALL)" >&2; exit 1; }
installed libeigen3-dev ||
  echo "eigen skipped: libeigen3-dev is not installed (SAGA_NO_INSTALL)"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags="-O3 -march=native -DNDEBUG -I/usr/include/eigen3 -DEIGEN_DONT_PARALLELIZE"
g++ $flags GemmBench.cpp -o "$out/openblas" -lopenblas
blis=/usr/lib/x86_64-linux-gnu/blis-openmp
if installed libblis-openmp-dev; then
  g++ $flags -I/usr/include/x86_64-linux-gnu/blis-openmp GemmBench.cpp -o "$out/blis" \
    -L$blis -Wl,-rpath,$blis -lblis -fopenmp
fi
export OPENBLAS_NUM_THREADS=1 BLIS_NUM_THREADS=1 OMP_NUM_THREADS=1
"$out/openblas" openblas ${SHAPES:-}
OPENBLAS_CORETYPE=SkylakeX "$out/openblas" openblas-skx ${SHAPES:-}
if [ -x "$out/blis" ]; then
  "$out/blis" blis ${SHAPES:-}
else
  echo "blis skipped: libblis-openmp-dev is not installed (SAGA_NO_INSTALL)"
fi
