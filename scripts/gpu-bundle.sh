#!/usr/bin/env bash
# Makes the GPU bundle (make gpu-bundle): one tarball holding what a GPU run
# needs on a machine with none of Debian's LLVM, MLIR, ANTLR, OpenBLAS or
# MPI (gpu/README.md):
#   bin/sagac        sagac-static (tools/sagac/CMakeLists.txt)
#   LICENSES/        the notices of everything linked in or carried
#   examples/, bench/models/   the models and Cora
#   ref/             CPU results made here, now, by this sagac: each
#                    example's forward output and parameters after two SGD
#                    steps (-O2, SAGA_EXACT_MATH=1), make run's Cora log, a
#                    chunked run under a budget
#   gpu/             check.sh (run it there), compare.py, peers.py
#   BUNDLE.txt       commit, date, the glibc the binary needs
#
#   scripts/gpu-bundle.sh BUILD_DIR OUT.tar.xz [--quick]
# --quick (the ctest dry run): Cora training references of 3 epochs, not 200,
# and xz -1 (3 s, 21 MiB) instead of -9 (42 s, 17 MiB): the size limit,
# met at -1, is met by the real bundle too.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
mkdir -p "$(dirname "$2")"
out=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") # the script changes folder
quick=${3:-}
sagac=$build/bin/sagac-static
limit_mib=40
[ -x "$sagac" ] || { echo "gpu-bundle: $sagac is missing (needs ld.lld and the static archives; see tools/sagac/CMakeLists.txt)" >&2; exit 1; }

stage=$build/gpu-bundle
root=$stage/saga-gpu
rm -rf "$stage"
mkdir -p "$root"/{bin,LICENSES,ref,gpu,bench,examples}
cp "$sagac" "$root/bin/sagac"

for pkg in llvm-22-dev libmlir-22-dev libantlr4-runtime-dev libopenblas-dev zlib1g libzstd1 libstdc++6 libgcc-s1; do
  [ -f "/usr/share/doc/$pkg/copyright" ] && cp "/usr/share/doc/$pkg/copyright" "$root/LICENSES/$pkg.txt"
done
cat > "$root/LICENSES/README.txt" <<'TXT'
bin/sagac links statically: LLVM and MLIR 22 (Apache-2.0 WITH LLVM-exception),
the ANTLR 4 C++ runtime (BSD-3-Clause), OpenBLAS (BSD-3-Clause), zlib (zlib),
zstd (BSD-3-Clause), libstdc++ and libgcc (GPL-3.0 with the GCC Runtime
Library Exception); it loads only glibc (and, at run time, the CUDA driver,
NVRTC and cuBLAS of the machine). Each package's Debian copyright file is
beside this one.
TXT
cp "$here"/examples/*.saga "$root/examples/"
cp -r "$here/examples/data/cora" "$root/examples/data-cora"
mkdir -p "$root/examples/data" && mv "$root/examples/data-cora" "$root/examples/data/cora"
cp -r "$here/bench/models" "$root/bench/models"
cp "$here"/gpu/check.sh "$here"/gpu/compare.py "$here"/gpu/peers.py "$here"/gpu/report.py "$here"/gpu/README.md "$root/gpu/"

# Nothing but glibc: the GPU machine has none of Debian's libraries.
if ldd "$root/bin/sagac" | grep -vE 'linux-vdso|libc\.so|libm\.so|ld-linux|libdl|libpthread|librt'; then
  echo "gpu-bundle: bin/sagac loads more than glibc (above)" >&2
  exit 1
fi
# The glibc the binaries need: the highest GLIBC_ version they reference.
need=$(objdump -T "$root/bin/sagac" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)
commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$here" status --porcelain 2>/dev/null | grep -qv '^??' && echo " (with uncommitted changes)" || true)
cat > "$root/BUNDLE.txt" <<TXT
commit=$commit$dirty
made=$(date -u +%Y-%m-%dT%H:%M:%SZ)
host=$(uname -n) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
glibc_needed=$need
TXT

# CPU references, by the bundle's own sagac.
cd "$root"
export SAGA_EXACT_MATH=1
ref() { echo "gpu-bundle: $*" >&2; "$@" > /dev/null; }
for m in gcn gat ggcn gin graphsage; do
  ref bin/sagac run examples/$m.saga --data examples/data/cora --device cpu --seed 0 --output ref/$m.forward.npy
  ref bin/sagac train examples/$m.saga --data examples/data/cora --device cpu --seed 0 \
    --epochs 2 --optimizer sgd --lr 0.01 --save-params ref/$m.params --log ref/$m.train.jsonl --quiet
done
epochs=200
xz_level=-9
[ "$quick" = --quick ] && epochs=3 && xz_level=-1
unset SAGA_EXACT_MATH
ref bin/sagac train examples/gcn.saga --data examples/data/cora --device cpu --epochs $epochs --lr 0.01 --seed 0 \
  --log ref/cora-gcn.jsonl --quiet
ref bin/sagac train examples/gcn.saga --data examples/data/cora --device cpu --epochs 2 --lr 0.01 --seed 0 \
  --memory-budget 12M --log ref/gcn-chunked.jsonl --quiet
echo "epochs=$epochs" > ref/README.txt

cd "$stage"
XZ_OPT="$xz_level -T0" tar -cJf "$out.tmp" saga-gpu
mv "$out.tmp" "$out"
size=$(stat -c %s "$out")
echo "gpu-bundle: $out: $((size / 1024 / 1024)) MiB (sagac $(( $(stat -c %s saga-gpu/bin/sagac) / 1024 / 1024 )) MiB unpacked; needs glibc $need)"
if [ "$size" -gt $((limit_mib * 1024 * 1024)) ]; then
  echo "gpu-bundle: over the $limit_mib MiB limit" >&2
  exit 1
fi
