//===- EmulatedKernelDevice.h - generated kernels on the emulated GPU -*- C++ -*-===//
//
// A KernelDevice that prints a plan's kernels as CUDA (codegen/cuda), builds
// them for the emulated GPU and launches each call there: the CUDA text
// NVRTC compiles, run thread by thread with its barriers and shuffles. The
// buffers stay in host memory (the emulator's device memory is the host's),
// so the executors run unchanged around it: the test suite compares every
// kernel's results with the CPU backend's this way.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_EMULATOR_EMULATEDKERNELDEVICE_H
#define SAGA_EMULATOR_EMULATEDKERNELDEVICE_H

#include "emulator/Emulator.h"
#include "runtime/exec/KernelDevice.h"

#include "mlir/IR/BuiltinOps.h"

namespace saga::emu {

struct EmulatedDeviceOptions {
  Order order = Order::Forward;
  uint64_t seed = 1;        // of the random order
  unsigned maxBlocks = 8;   // per launch: more rows go grid-stride
  std::string cacheFolder;  // of compiled modules ("" = the default)
};

llvm::Expected<std::unique_ptr<KernelDevice>>
emulatedKernelDevice(mlir::ModuleOp plan, const EmulatedDeviceOptions &options);

} // namespace saga::emu

#endif // SAGA_EMULATOR_EMULATEDKERNELDEVICE_H
