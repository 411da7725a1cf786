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
// its length in elements. Launch with blockDim.x a multiple of 32 and
// (blockDim.x / 32) * scratchBytes bytes of dynamic shared memory.
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
  int64_t scratchBytes = 0; // dynamic shared memory per warp
  std::vector<Param> params;
};

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
