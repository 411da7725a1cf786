//===- KernelAbi.h - what a generated kernel and its caller agree on -*- C++ -*-===//
//
// The calling-convention constants shared by the kernel emitter
// (codegen/KernelEmitter.h, which writes kernels that read them) and the
// executors (runtime/exec/, which pass them): below both, so that neither
// includes the other for them.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_SUPPORT_KERNELABI_H
#define SAGA_SUPPORT_KERNELABI_H

#include <cstdint>

namespace saga {

/// Bits of a propagate kernel's phase word. An unchunked launch passes both:
/// the kernel starts each row's reduction and finishes it.
constexpr int64_t kPhaseResume = 1; // start from the saved partial reduction
constexpr int64_t kPhaseFinish = 2; // last chunk: finalise, run the epilogue
constexpr int64_t kPhaseWhole = kPhaseFinish;

/// How many edge positions ahead a CPU propagation kernel prefetches the
/// rows the edge there will read (it loads sources[p] and edgeIds[p] at
/// p = min(pos + this, dim(sources) - 1)): an executor that hands a kernel
/// only rows [lo, hi)'s positions of the graph arrays keeps this many
/// more readable after offsets[hi].
constexpr int64_t kEdgePrefetchDistance = 32;

} // namespace saga

#endif // SAGA_SUPPORT_KERNELABI_H
