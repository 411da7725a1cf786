//===- cuda_emulator_abi.h - the emulated GPU's calls -----------*- C++ -*-===//
//
// What an emulated module (cuda_emulator.h) and the emulator's runtime
// (Emulator.cpp) share: the per-thread registers and the calls a kernel
// makes into the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_CUDA_EMULATOR_ABI_H
#define SAGA_CUDA_EMULATOR_ABI_H

#include <cstdint>

struct saga_dim3 {
  unsigned x, y, z;
};
struct saga_emu_thread {
  saga_dim3 threadIdx, blockIdx, blockDim, gridDim;
  char *shared; // the block's dynamic shared memory
};

extern "C" {
const saga_emu_thread *saga_emu_self();
void saga_emu_syncthreads();
void saga_emu_syncwarp(unsigned mask);
/// A lane's value: from `lane` (>= 0), or from this lane xor `xorMask`.
uint32_t saga_emu_shfl(unsigned mask, uint32_t value, int lane, int xorMask);
}

#endif // SAGA_CUDA_EMULATOR_ABI_H
