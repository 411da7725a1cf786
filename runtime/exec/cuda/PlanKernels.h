//===- PlanKernels.h - a plan's kernels on a CUDA device --------*- C++ -*-===//
//
// What the in-memory and chunked CUDA runs share: a plan module's compiled
// kernels, and the launch of one with the kernel level's arguments.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_CUDA_PLANKERNELS_H
#define SAGA_RUNTIME_EXEC_CUDA_PLANKERNELS_H

#include "codegen/cuda/CudaEmitter.h"
#include "dialect/Saga.h"
#include "runtime/exec/cuda/CudaExecutor.h"

#include "llvm/ADT/ArrayRef.h"

namespace saga {

struct CudaBackend::PlanKernels {
  std::unique_ptr<cuda::CudaModule> module;
  std::map<std::string, cuda::KernelInfo> infos;
};

namespace cuda {

/// One argument after begin, end and seed: a buffer (pointer and length) or
/// an i64 scalar (the phase).
struct KernelParam {
  bool scalar = false;
  CUdeviceptr ptr = 0;
  int64_t value = 0; // the scalar, or the buffer's elements

  static KernelParam buffer(CUdeviceptr p, int64_t n) { return {false, p, n}; }
  static KernelParam i64(int64_t v) { return {true, 0, v}; }
};

/// Launches `op`'s kernel over rows [begin, end) on the compute stream: a
/// warp per row, 8 warps a block (fewer when its shared scratch needs it),
/// at most 16 blocks per SM, rows grid-strided.
llvm::Error launchPlanKernel(CudaDevice &device,
                             const CudaBackend::PlanKernels &plan, LaunchOp op,
                             llvm::ArrayRef<KernelParam> args, int64_t begin,
                             int64_t end, int64_t seed);

} // namespace cuda
} // namespace saga

#endif // SAGA_RUNTIME_EXEC_CUDA_PLANKERNELS_H
