//===- CpuJit.h - kernels to native code through the LLVM JIT ---*- C++ -*-===//
//
// Lowers the kernel functions of a plan module (scf/memref/arith/math) to the
// LLVM dialect and compiles them with MLIR's ExecutionEngine for the host
// CPU (its own TargetMachine, so loops vectorise to the widest ISA). Kernels
// are called through their packed entry points from the runtime's threads.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_CODEGEN_CPUJIT_H
#define SAGA_CODEGEN_CPUJIT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace mlir {
class ExecutionEngine;
}
namespace llvm::orc {
class LLJIT;
}

namespace saga {

/// Kernel-level IR to the LLVM dialect (the passes TOOLCHAIN.md lists, in
/// order). Registered in saga-opt as `saga-lower-kernels-to-llvm`.
void buildKernelToLLVMPipeline(mlir::OpPassManager &pm);

class CpuKernels {
public:
  /// A kernel's packed entry: one pointer per expanded LLVM argument.
  using Packed = void (*)(void **);

  /// Compiles every function with a `saga.kernel` attribute in `plan`.
  /// The object code is kept on disk (objectCacheFolder()), keyed by the
  /// kernels' IR, the host CPU, the math mode, LLVM's version and this
  /// build of Saga: a later compile of the same kernels, in this process
  /// or another, loads it instead of lowering and compiling again.
  static llvm::Expected<std::unique_ptr<CpuKernels>>
  compile(mlir::ModuleOp plan);
  ~CpuKernels();

  Packed lookup(llvm::StringRef name) const { return kernels.lookup(name); }
  double compileSeconds() const { return seconds; }
  /// Whether the object code came from the disk cache.
  bool fromCache() const { return cached; }

  /// The object cache's folder: $SAGA_CPU_CACHE, else
  /// $XDG_CACHE_HOME/saga/cpu, else ~/.cache/saga/cpu
  /// (support/DiskCache.h); empty when SAGA_CPU_CACHE=off.
  static std::string objectCacheFolder();

private:
  CpuKernels() = default;
  std::unique_ptr<mlir::ExecutionEngine> engine; // compiled here
  std::unique_ptr<llvm::orc::LLJIT> loaded;      // or loaded from the cache
  llvm::StringMap<Packed> kernels;
  double seconds = 0;
  bool cached = false;
};

} // namespace saga

#endif // SAGA_CODEGEN_CPUJIT_H
