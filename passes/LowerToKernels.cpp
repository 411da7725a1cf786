//===- LowerToKernels.cpp - graph-tensor level to kernels and a plan ------===//

#include "passes/Passes.h"

#include "codegen/KernelEmitter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

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

/// The last op of `block` that defines one of `values` (null: none does).
Operation *lastDefinition(ValueRange values, Block &block) {
  Operation *last = nullptr;
  for (Value v : values)
    if (Operation *def = v.getDefiningOp();
        def && def->getBlock() == &block &&
        (!last || last->isBeforeInBlock(def)))
      last = def;
  return last;
}

/// Runs the reductions of vertex values to parameter-sized tensors as soon
/// as their inputs exist: every saga.sum_rows, and every weight gradient
/// (saga.linear_grad_weight) together with the kernel that makes its input
/// when that input is read by nothing else. Their results are small, so
/// running them early extends no lifetime, and the values they read are
/// done with sooner: a bias gradient's sum no longer keeps its input alive
/// past the reshape that can then write over it (the executor's buffer
/// reuse), and the temporary input of a weight gradient (GAT's recomputed
/// ELU output) is made and freed before the backward's next [V, F] values
/// (the gradient flowing to the layer below) exist.
void reduceEarly(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (auto sum = dyn_cast<SumRowsOp>(op)) {
      if (Operation *def = lastDefinition(sum->getOperands(), block))
        sum->moveAfter(def);
      continue;
    }
    auto lgw = dyn_cast<LinearGradWeightOp>(op);
    if (!lgw)
      continue;
    auto producer = lgw.getInput().getDefiningOp<LaunchOp>();
    if (producer && producer->getBlock() == &block &&
        producer->getNumResults() == 1 && producer->hasOneUse()) {
      SmallVector<Value> inputs(producer->getOperands());
      inputs.push_back(lgw.getGradOutput());
      if (Operation *def = lastDefinition(inputs, block);
          def && def->isBeforeInBlock(producer)) {
        producer->moveAfter(def);
        lgw->moveAfter(producer);
      }
      continue;
    }
    if (Operation *def = lastDefinition(lgw->getOperands(), block))
      lgw->moveAfter(def);
  }
}

/// The apply_vertex to fuse into `prop`'s kernel as its epilogue: the only
/// user of its result, in the same block, whose other operands and captured
/// values are defined before `prop` (the fused kernel runs where `prop` is).
ApplyVertexOp findEpilogue(PropagateOp prop) {
  Value result = prop.getResult();
  if (result.use_empty())
    return nullptr;
  auto epilogue = dyn_cast<ApplyVertexOp>(*result.getUsers().begin());
  if (!epilogue || epilogue->getBlock() != prop->getBlock())
    return nullptr;
  for (Operation *user : result.getUsers())
    if (user != epilogue.getOperation())
      return nullptr;
  auto availableAtProp = [&](Value v) {
    if (v == result)
      return true;
    Operation *def = v.getDefiningOp();
    return !def || def->getBlock() != prop->getBlock() ||
           def->isBeforeInBlock(prop);
  };
  if (!llvm::all_of(epilogue.getInputs(), availableAtProp))
    return nullptr;
  bool ok = true;
  epilogue.getBody().walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (!epilogue.getBody().isAncestor(v.getParentRegion()))
        ok &= availableAtProp(v);
  });
  return ok ? epilogue : nullptr;
}

struct LowerToKernels
    : public saga::impl::SagaLowerToKernelsBase<LowerToKernels> {
  using SagaLowerToKernelsBase::SagaLowerToKernelsBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    unsigned counter = 0;
    for (ModelOp model : llvm::to_vector(module.getOps<ModelOp>())) {
      Block &block = model.getBody().front();
      // By list, not by iterator: fusing an epilogue erases an op after the
      // current one.
      SmallVector<Operation *> ops =
          llvm::map_to_vector(block, [](Operation &o) { return &o; });
      llvm::DenseSet<Operation *> erased;
      for (Operation *opPtr : ops) {
        if (erased.contains(opPtr))
          continue;
        Operation &op = *opPtr;
        if (isa<ApplyEdgeOp, ScatterOp, GatherOp>(op)) {
          op.emitOpError() << "must be formed into saga.propagate before "
                           << "lowering (run --saga-form-propagation)";
          return signalPassFailure();
        }
        if (!isa<ApplyVertexOp, PropagateOp, EdgeMapOp>(op))
          continue;
        OpBuilder mb(model);
        std::string name = "saga_kernel_" + std::to_string(counter++);
        ApplyVertexOp epilogue;
        if (auto prop = dyn_cast<PropagateOp>(op);
            prop && fuseEpilogues &&
            (reversedEpilogues || !prop.getReversed()))
          epilogue = findEpilogue(prop);
        FailureOr<Kernel> kernel = emitKernel(&op, name, mb, epilogue);
        if (failed(kernel))
          return signalPassFailure();
        SymbolTable::setSymbolVisibility(kernel->func,
                                         SymbolTable::Visibility::Public);
        OpBuilder b(&op);
        Operation *last = epilogue ? epilogue.getOperation() : &op;
        auto launch = LaunchOp::create(b, op.getLoc(), last->getResultTypes(),
                                       name, kernel->operands,
                                       kernel->propagate, kernel->edgeMap);
        last->replaceAllUsesWith(launch);
        if (epilogue) {
          erased.insert(epilogue);
          epilogue.erase();
        }
        op.erase();
      }
      reduceEarly(block);
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
