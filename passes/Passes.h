//===- Passes.h - saga passes and pipelines ---------------------*- C++ -*-===//

#ifndef SAGA_PASSES_PASSES_H
#define SAGA_PASSES_PASSES_H

#include "dialect/Saga.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace saga {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// How to lower the stage level to the execution plan.
struct PlanOptions {
  /// 0: no optimisation passes; 2: every pass in optionalPassNames().
  unsigned optLevel = 2;
  /// Keep dropout and append the gradients of the loss (saga-autodiff).
  bool training = false;
  /// Optional passes to leave out at -O2 (names from optionalPassNames()).
  std::vector<std::string> disabledPasses;
  /// For parts of a partitioned graph: no epilogue fused into a reversed
  /// propagation, whose rows are partial sums until the parts add them up.
  bool distributed = false;
  /// The training plan runs on sampled mini-batches (runtime/sample): no
  /// rematerialisation. A batch's buffers are small, and remaking a map
  /// (a dropout's hash per element) costs a pass every batch: 9 % of a
  /// GraphSAGE step on R-MAT blocks, which memory never paid for.
  bool miniBatch = false;
};

/// The passes -O2 adds to -O0, each of which `disabledPasses` can leave out
/// so that its effect can be measured: operator-motion, extract-gemm,
/// reorder-linear, fuse-propagation, fuse-epilogue, cse, rematerialize.
/// Leaving out fuse-propagation adds saga-materialize-edges: edge tensors are
/// stored, as in PyG and DGL.
llvm::ArrayRef<llvm::StringRef> optionalPassNames();

/// An error naming the first unknown pass in `names` and listing the known
/// ones; success when all are known.
llvm::LogicalResult checkPassNames(llvm::ArrayRef<std::string> names,
                                   std::string &message);

/// Stage level to the execution plan: inline layers, form propagations,
/// then (-O2) operator motion, GEMM extraction, linear reordering, then
/// (training) autodiff, then (without fuse-propagation, so at -O0)
/// edge materialisation, (-O2) CSE, and kernels. An inference plan drops
/// dropout.
void buildLowerToPlanPipeline(mlir::OpPassManager &pm,
                              const PlanOptions &options = {});

/// consumer(producer(...), ...) as one apply_vertex at the consumer's place
/// (saga-fuse-maps' rewrite): its inputs are the consumer's other inputs,
/// then the producer's; its body runs the producer's ops, then the
/// consumer's. `producer` has one result, read by `consumer` only; both are
/// erased. Returns the merged op.
ApplyVertexOp mergeApplyVertex(ApplyVertexOp producer, ApplyVertexOp consumer);

/// Elements per row (per vertex or per edge) of a vertex or edge value.
int64_t rowElements(mlir::Value v);

/// Registers the passes and the `saga-lower-to-plan` pipeline.
void registerAllSagaPasses();

} // namespace saga

#endif // SAGA_PASSES_PASSES_H
