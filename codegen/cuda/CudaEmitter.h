//===- CudaEmitter.h - kernel level to CUDA C++ -----------------*- C++ -*-===//
//
// Prints the kernel functions of a plan module (the backend-neutral kernel
// level of codegen/KernelEmitter: scf/memref/arith/math over flat buffers)
// as CUDA C++. A warp computes a row at a time (rows grid-strided over the
// warps), its 32 lanes share the loops the kernel level marks `saga.lanes`
// "parallel" (consecutive elements on consecutive lanes: coalesced row
// reads), fold "reduce" loops in per-lane partials joined by a warp
// shuffle, and run the rest in step. A row's scratch rows live in the warp's
// slice of dynamic shared memory; a store outside a shared loop is made by
// lane 0 between two __syncwarp()s, so no lane reads a value half written.
// Offsets are 64-bit; propagations pull (no atomics).
//
// Kernels are `extern "C" __global__`; every buffer parameter is followed by
// its length in elements. Launch as launchShape() says: blockDim.x a
// multiple of 32 and (blockDim.x / 32) * scratchBytes bytes of dynamic
// shared memory; a warp whose scratch does not fit in a block's shared
// memory (kSharedScratchLimit: a per-row outer product such as an -O0
// weight gradient, [in, heads, out] per vertex) keeps it in global memory
// instead, a buffer of warps * scratchBytes bytes passed after the
// kernel's own parameters (KernelInfo::globalScratch).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_CODEGEN_CUDA_CUDAEMITTER_H
#define SAGA_CODEGEN_CUDA_CUDAEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace saga::cuda {

/// One parameter of the kernel level's function, as the CUDA kernel takes it.
struct Param {
  bool buffer = false;  // a pointer followed by its int64 length
  unsigned elemBytes = 8; // of the buffer's elements, or of the scalar
};

struct KernelInfo {
  std::string name; // the extern "C" symbol
  std::string kind; // "map", "propagate" or "edge_map"
  int64_t scratchBytes = 0; // scratch per warp
  /// The scratch is over kSharedScratchLimit: it lives in a global buffer
  /// (a pointer and its length in bytes after `params`), not in shared
  /// memory.
  bool globalScratch = false;
  std::vector<Param> params;
};

/// The dynamic shared memory a block may take without opting in through
/// cuFuncSetAttribute (48 KiB on every architecture since Kepler).
constexpr int64_t kSharedScratchLimit = 48 << 10;
/// A launch whose scratch is global takes at most this much of it: fewer
/// warps then, each striding over more rows.
constexpr int64_t kGlobalScratchLimit = 64 << 20;

/// How a kernel is launched over `rows` rows, a warp per row: at most 8
/// warps a block (fewer where their shared scratch would not fit), at most
/// `maxBlocks` blocks, rows grid-strided. The CUDA executor and the
/// emulated device both launch by it.
struct LaunchShape {
  unsigned warpsPerBlock = 8;
  unsigned blocks = 1;
  unsigned sharedBytes = 0;       // dynamic shared memory per block
  int64_t globalScratchBytes = 0; // the global scratch buffer, or 0
};
LaunchShape launchShape(const KernelInfo &kernel, int64_t rows,
                        int64_t maxBlocks);

struct Source {
  std::string code; // one translation unit, prelude included
  std::vector<KernelInfo> kernels;
};

/// The CUDA C++ of every kernel function (`saga.kernel`) of `module`, which
/// is left as it is. An op the printer does not know is an error naming it
/// and its location.
llvm::Expected<Source> emitCuda(mlir::ModuleOp module);

} // namespace saga::cuda

#endif // SAGA_CODEGEN_CUDA_CUDAEMITTER_H
