#!/bin/sh
# The R-MAT graph file the distributed and mini-batch benches share:
#   bench/rmat_sgf.sh SCALE WORKDIR   prints its path, making it when missing
# (edge factor 16, 64 random features, 16 classes, a chunk index over 4
# intervals; saga-bench-suite sgf). BUILD: the build folder (default
# build; relative to the repository root).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-build}
case $build in /*) ;; *) build=$here/$build ;; esac
file=$2/rmat$1-f64.sgf
mkdir -p "$2"
if [ ! -f "$file" ]; then
  "$build/bin/saga-bench-suite" sgf --scale "$1" --edge-factor 16 \
    --features 64 --classes 16 --intervals 4 --out "$file" |
    grep -v '^progress' >&2
fi
echo "$file"
