//===- Rematerialize.cpp - recompute cheap maps of graph inputs -----------===//
//
// A training step keeps every forward value its backward reads alive from
// the forward to that read. For a value that is an elementwise function of
// the graph inputs alone (GAT's and GCN's input dropout, dropout(x), is the
// example: its only backward reader is the first layer's weight gradient,
// at the very end) keeping it costs a [V, F] buffer through the whole
// backward, while recomputing it costs one pass over x. So such an
// apply_vertex is cloned before each later user, when vertex values are made
// in between, and each copy lives only around its users. Dropout recomputes
// the same mask: it is keyed by the step's seed and the vertex.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace saga {
#define GEN_PASS_DEF_SAGAREMATERIALIZE
#include "passes/Passes.h.inc"
} // namespace saga

using namespace mlir;
using namespace saga;

namespace {

/// Reads only graph inputs (the model's arguments, alive for the whole
/// step) and parameters, and has no matmul: cheap to run again.
bool recomputable(ApplyVertexOp op, Block &model) {
  for (Value in : op.getInputs()) {
    auto arg = dyn_cast<BlockArgument>(in);
    if (!arg || arg.getOwner() != &model)
      return false;
  }
  return !op.getBody()
              .walk([](MatmulOp) { return WalkResult::interrupt(); })
              .wasInterrupted();
}

/// Whether an op between `from` and `to` (exclusive) makes a vertex or edge
/// value, i.e. memory is allocated while the value would wait.
bool allocatesBetween(Operation *from, Operation *to) {
  for (Operation *o = from->getNextNode(); o && o != to; o = o->getNextNode())
    for (Type t : o->getResultTypes())
      if (isa<DomainType>(t))
        return true;
  return false;
}

void rematerialize(ApplyVertexOp op, Block &model) {
  // The users, in plan order, as top-level ops of the model.
  SmallVector<Operation *> users;
  for (Operation *user : op->getUsers())
    if (Operation *top = model.findAncestorOpInBlock(*user))
      if (!llvm::is_contained(users, top))
        users.push_back(top);
  llvm::sort(users, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  for (size_t i = 1; i < users.size(); ++i) {
    if (!allocatesBetween(users[i - 1], users[i]))
      continue;
    OpBuilder b(users[i]);
    Operation *copy = b.clone(*op);
    for (auto [old, fresh] : llvm::zip(op->getResults(), copy->getResults()))
      old.replaceUsesWithIf(fresh, [&](OpOperand &use) {
        return model.findAncestorOpInBlock(*use.getOwner()) == users[i];
      });
  }
}

struct Rematerialize
    : public saga::impl::SagaRematerializeBase<Rematerialize> {
  void runOnOperation() override {
    for (ModelOp model : getOperation().getOps<ModelOp>())
      for (Block &block : model.getBody()) {
        SmallVector<ApplyVertexOp> candidates;
        for (auto op : block.getOps<ApplyVertexOp>())
          if (recomputable(op, block))
            candidates.push_back(op);
        for (ApplyVertexOp op : candidates)
          rematerialize(op, block);
      }
  }
};

} // namespace
