#!/usr/bin/env bash
# Installs the Debian packages Saga needs to build and test; skips what is there.
# Pinned toolchain: LLVM/MLIR 22 (bookworm-security), ANTLR4 4.7.2 tool + 4.9 runtime.
set -euo pipefail

PKGS=(
  cmake ninja-build ccache g++ pkg-config
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  antlr4 libantlr4-runtime-dev default-jre-headless
  libgtest-dev libopenblas-dev zlib1g-dev libboost-context-dev lld libzstd-dev
  openmpi-bin libopenmpi-dev libmetis-dev iproute2 python3-numpy
  pybind11-dev python3-dev python3-pytest python3-scipy
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "saga: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
