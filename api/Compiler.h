//===- Compiler.h - a .saga source to plans and kernels ---------*- C++ -*-===//
//
// The compiler behind the C++ API: parses a `.saga` source (parser/),
// runs the pass pipelines to the plan level (passes/: the inference plan,
// and the training plan when asked) and JIT-compiles both plans' kernels
// for the CPU (codegen/cpu). What it hands over is a compiled model: the
// plans and their kernels, which the runtime's walkers execute
// (runtime/exec/), and what the model declares. Model (api/Model.h) binds
// a graph, inputs and parameters to one.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_API_COMPILER_H
#define SAGA_API_COMPILER_H

#include "api/Model.h"
#include "dialect/Saga.h"
#include "runtime/exec/KernelDevice.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>
#include <string>
#include <vector>

namespace saga {

struct CompiledModel {
  CompiledModel();
  ~CompiledModel();
  mlir::MLIRContext ctx;
  /// The inference plan, and the training plan (forward with dropout,
  /// backward) when compiled for training.
  mlir::OwningOpRef<mlir::ModuleOp> plan, trainPlan;
  ModelOp model, trainModel;
  /// Their kernels, JIT-compiled for the CPU.
  std::unique_ptr<KernelDevice> kernels, trainKernels;
  CompileStats stats;
  std::vector<ValueInfo> inputInfo, paramInfo;
  bool selfLoops = false;
  std::vector<std::string> outputNames; // CompileOptions::outputs
};

/// Compiles `source` (named `name` in messages) into `out`. Errors carry
/// the diagnostics, clang-style, with the source position.
llvm::Error compileModel(llvm::StringRef source, llvm::StringRef name,
                         const CompileOptions &options, CompiledModel &out);

} // namespace saga

#endif // SAGA_API_COMPILER_H
