//===- KernelDevice.h - where a plan's generated kernels run ----*- C++ -*-===//
//
// The executors launch generated kernels only through this interface (as
// DGL hides its CPU and CUDA kernels behind one SpMM): the CPU device calls
// the JIT-compiled functions, an emulated or real GPU launches the same
// kernels printed as CUDA. A launch covers the rows [begin, end) of the
// kernel's first loop; the arguments are the kernel level's, in order.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_KERNELDEVICE_H
#define SAGA_RUNTIME_EXEC_KERNELDEVICE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>

namespace saga {

class CpuKernels;

/// A kernel argument: a flat buffer of `elements`, or an i64 scalar.
struct KernelArg {
  void *data = nullptr;
  int64_t elements = 0;
  bool scalar = false;
  int64_t value = 0;

  static KernelArg buffer(void *data, int64_t elements) {
    return {data, elements, false, 0};
  }
  static KernelArg i64(int64_t value) { return {nullptr, 0, true, value}; }
};

class KernelDevice {
public:
  virtual ~KernelDevice();
  /// "CPU", "emulated GPU (...)", for messages.
  virtual std::string name() const = 0;
  virtual bool has(llvm::StringRef kernel) const = 0;
  /// Runs `kernel` on rows [begin, end) with step seed `seed`. Called from
  /// the executors' worker threads, concurrently on disjoint rows.
  virtual llvm::Error launch(llvm::StringRef kernel, int64_t begin,
                             int64_t end, int64_t seed,
                             llvm::ArrayRef<KernelArg> args) const = 0;
};

/// The CPU backend's kernels (codegen/cpu), owned.
std::unique_ptr<KernelDevice> cpuKernelDevice(std::unique_ptr<CpuKernels> kernels);

} // namespace saga

#endif // SAGA_RUNTIME_EXEC_KERNELDEVICE_H
