//===- Passes.h - saga passes and pipelines ---------------------*- C++ -*-===//

#ifndef SAGA_PASSES_PASSES_H
#define SAGA_PASSES_PASSES_H

#include "dialect/Saga.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace saga {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Stage level to the execution plan: inline layers, form propagations,
/// extract GEMMs, lower to kernels. `optLevel` 0 skips GEMM extraction.
/// An inference plan drops dropout; a training plan keeps it and appends
/// the gradients of the loss (saga-autodiff).
void buildLowerToPlanPipeline(mlir::OpPassManager &pm, unsigned optLevel = 2,
                              bool training = false);

/// Registers the passes and the `saga-lower-to-plan` pipeline.
void registerAllSagaPasses();

} // namespace saga

#endif // SAGA_PASSES_PASSES_H
