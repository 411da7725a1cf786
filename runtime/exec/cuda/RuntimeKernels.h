//===- RuntimeKernels.h - the CUDA executor's own kernels -------*- C++ -*-===//
//
// What the plan does outside generated kernels and GEMMs, as CUDA kernels
// (so that a step's values never leave the device): fills, vertex ids and
// degrees, model-level arithmetic, sums over rows (per 256-row block in
// double, then over blocks in order, as the CPU's sum_rows), the
// cross-entropy loss and its gradient, and the L2 penalty. Reductions to a
// scalar run in one block in a fixed order: deterministic.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_CUDA_RUNTIMEKERNELS_H
#define SAGA_RUNTIME_EXEC_CUDA_RUNTIMEKERNELS_H

#include <string>
#include <vector>

namespace saga::cuda {

/// One translation unit for NVRTC (and the emulated GPU).
const std::string &runtimeKernelSource();
/// Its extern "C" kernels' names.
const std::vector<std::string> &runtimeKernelNames();

/// Threads per block of the one-block reductions (their shared memory is
/// this many doubles).
constexpr unsigned kReduceThreads = 256;

} // namespace saga::cuda

#endif // SAGA_RUNTIME_EXEC_CUDA_RUNTIMEKERNELS_H
