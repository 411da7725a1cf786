//===- LowerToKernels.cpp - graph-tensor level to kernels and a plan ------===//

#include "passes/Passes.h"

#include "codegen/KernelEmitter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace saga {
#define GEN_PASS_DEF_SAGALOWERTOKERNELS
#include "passes/Passes.h.inc"
} // namespace saga

using namespace mlir;
using namespace saga;

namespace {

/// Marks the last use of every buffer the plan allocates (kernel and GEMM
/// results, the degree vector) with a saga.release after it.
void insertReleases(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (!isa<LaunchOp, LinearOp, DegreeOp, VertexIdOp, LinearGradInputOp,
             CrossEntropyGradOp>(op))
      continue;
    for (Value v : op.getResults()) {
      Operation *last = nullptr;
      for (Operation *user : v.getUsers()) {
        Operation *top = block.findAncestorOpInBlock(*user);
        if (!last || last->isBeforeInBlock(top))
          last = top;
      }
      if (last && last->hasTrait<OpTrait::IsTerminator>())
        continue; // an output: the caller owns it
      OpBuilder b(block.getParentOp()->getContext());
      b.setInsertionPointAfter(last ? last : &op);
      ReleaseOp::create(b, op.getLoc(), v);
    }
  }
}

struct LowerToKernels
    : public saga::impl::SagaLowerToKernelsBase<LowerToKernels> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    unsigned counter = 0;
    for (ModelOp model : llvm::to_vector(module.getOps<ModelOp>())) {
      Block &block = model.getBody().front();
      for (Operation &op : llvm::make_early_inc_range(block)) {
        if (isa<ApplyEdgeOp, ScatterOp, GatherOp>(op)) {
          op.emitOpError() << "must be formed into saga.propagate before "
                           << "lowering (run --saga-form-propagation)";
          return signalPassFailure();
        }
        if (!isa<ApplyVertexOp, PropagateOp, EdgeMapOp>(op))
          continue;
        OpBuilder mb(model);
        std::string name = "saga_kernel_" + std::to_string(counter++);
        FailureOr<Kernel> kernel = emitKernel(&op, name, mb);
        if (failed(kernel))
          return signalPassFailure();
        SymbolTable::setSymbolVisibility(kernel->func,
                                         SymbolTable::Visibility::Public);
        OpBuilder b(&op);
        auto launch = LaunchOp::create(b, op.getLoc(), op.getResultTypes(),
                                       name, kernel->operands,
                                       kernel->propagate, kernel->edgeMap);
        op.replaceAllUsesWith(launch);
        op.erase();
      }
      insertReleases(block);
    }
    if (module.walk([](CallOpInterface) { return WalkResult::interrupt(); })
            .wasInterrupted()) {
      module.emitError() << "layer calls remain; inline layers before "
                         << "lowering (the saga-lower-to-plan pipeline does)";
      signalPassFailure();
    }
  }
};

} // namespace
