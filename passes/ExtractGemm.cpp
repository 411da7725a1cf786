//===- ExtractGemm.cpp - per-vertex matmuls to batched GEMMs --------------===//

#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace saga {
#define GEN_PASS_DEF_SAGAEXTRACTGEMM
#include "passes/Passes.h.inc"
} // namespace saga

using namespace mlir;
using namespace saga;

namespace {

/// A matmul in `apply`'s body that multiplies one vector per vertex by a
/// weight defined outside the body.
bool isBatchable(MatmulOp mm, ApplyVertexOp apply) {
  auto lhs = cast<RankedTensorType>(mm.getLhs().getType());
  auto rhs = cast<RankedTensorType>(mm.getRhs().getType());
  return lhs.getRank() == 1 && rhs.getRank() >= 2 &&
         !apply.getBody().isAncestor(mm.getRhs().getParentRegion());
}

/// The vertex value holding `lhs` for every vertex: an input of `apply` when
/// `lhs` is a body argument, otherwise a new apply_vertex (before `apply`)
/// computing it from the ops it depends on.
Value vertexValueOf(Value lhs, ApplyVertexOp apply, OpBuilder &b) {
  Block &body = apply.getBody().front();
  if (auto arg = dyn_cast<BlockArgument>(lhs); arg && arg.getOwner() == &body)
    return apply.getInputs()[arg.getArgNumber()];

  // Backward slice of lhs inside the body, in program order.
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> work{lhs};
  llvm::SmallDenseSet<unsigned> usedArgs;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == &body)
        usedArgs.insert(arg.getArgNumber());
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != &body || !slice.insert(def))
      continue;
    llvm::append_range(work, def->getOperands());
  }
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered, [](Operation *a, Operation *c) {
    return a->isBeforeInBlock(c);
  });

  SmallVector<Value> inputs;
  SmallVector<unsigned> argNumbers(usedArgs.begin(), usedArgs.end());
  llvm::sort(argNumbers);
  for (unsigned i : argNumbers)
    inputs.push_back(apply.getInputs()[i]);
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto resultType = VertexType::get(b.getContext(), lhsType.getShape(),
                                    lhsType.getElementType());
  auto pre = ApplyVertexOp::create(b, apply.getLoc(), TypeRange{resultType},
                                   inputs);
  Block *preBody = new Block();
  pre.getBody().push_back(preBody);
  IRMapping map;
  for (unsigned i : argNumbers)
    map.map(body.getArgument(i),
            preBody->addArgument(body.getArgument(i).getType(),
                                 body.getArgument(i).getLoc()));
  OpBuilder inner = OpBuilder::atBlockEnd(preBody);
  for (Operation *op : ordered)
    inner.clone(*op, map);
  YieldOp::create(inner, apply.getLoc(), map.lookup(lhs));
  return pre.getResult(0);
}

void eraseDeadOps(Block &body) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body))) {
      if (op.hasTrait<OpTrait::IsTerminator>() || !op.use_empty() ||
          !isPure(&op))
        continue;
      op.erase();
      changed = true;
    }
  }
}

/// An apply_vertex whose body yields its inputs unchanged is removed.
bool foldForwarding(ApplyVertexOp apply) {
  Block &body = apply.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  SmallVector<Value> forwarded;
  for (Value v : yield.getValues()) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &body)
      return false;
    forwarded.push_back(apply.getInputs()[arg.getArgNumber()]);
  }
  apply->replaceAllUsesWith(forwarded);
  apply.erase();
  return true;
}

bool extractOne(ApplyVertexOp apply) {
  MatmulOp target;
  apply.getBody().walk([&](MatmulOp mm) {
    if (!target && isBatchable(mm, apply))
      target = mm;
  });
  if (!target)
    return false;
  OpBuilder b(apply);
  Value lhs = vertexValueOf(target.getLhs(), apply, b);
  auto resultType = cast<RankedTensorType>(target.getType());
  Value product = LinearOp::create(
      b, target.getLoc(),
      VertexType::get(b.getContext(), resultType.getShape(),
                      resultType.getElementType()),
      lhs, target.getRhs());
  apply.getInputsMutable().append(product);
  Block &body = apply.getBody().front();
  target.replaceAllUsesWith(body.addArgument(resultType, target.getLoc()));
  target.erase();
  eraseDeadOps(body);
  return true;
}

/// Drops inputs the body no longer reads.
void pruneInputs(ApplyVertexOp apply) {
  Block &body = apply.getBody().front();
  for (int i = body.getNumArguments() - 1; i >= 0; --i) {
    if (!body.getArgument(i).use_empty())
      continue;
    body.eraseArgument(i);
    apply.getInputsMutable().erase(i);
  }
}

struct ExtractGemm : public saga::impl::SagaExtractGemmBase<ExtractGemm> {
  void runOnOperation() override {
    // Extraction creates apply_vertex ops that may hold batchable matmuls
    // themselves (`relu(x @ W1) @ W2`): repeat until nothing changes.
    bool changed = true;
    while (changed) {
      changed = false;
      SmallVector<ApplyVertexOp> applies;
      getOperation().walk([&](ApplyVertexOp a) { applies.push_back(a); });
      for (ApplyVertexOp apply : applies)
        while (extractOne(apply))
          changed = true;
    }
    SmallVector<ApplyVertexOp> applies;
    getOperation().walk([&](ApplyVertexOp a) { applies.push_back(a); });
    for (ApplyVertexOp apply : applies) {
      pruneInputs(apply);
      foldForwarding(apply);
    }
  }
};

} // namespace
