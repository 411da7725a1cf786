//===- OperatorMotion.cpp - edge work that depends on one end moves to it -===//
//
// NGra's operator motion. In a propagate body, a value computed only from
// the source rows (and parameters) is the same for every out-edge of a
// vertex: compute it once per vertex, in an apply_vertex before the
// propagation, and pass it in as a new source value. Likewise for values of
// the destination rows. G-GCN's `e.src.h @ WS` becomes one GEMM over the
// vertices instead of a matrix-vector product per edge.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

namespace saga {
#define GEN_PASS_DEF_SAGAOPERATORMOTION
#include "passes/Passes.h.inc"
} // namespace saga

using namespace mlir;
using namespace saga;

namespace {

enum Side : unsigned { None = 0, Src = 1, Dst = 2, Edge = 4 };

/// Hoists the ops of `body` that read only `side`'s arguments into an
/// apply_vertex over `op`'s operands of that side. Returns whether it did.
bool hoist(PropagateOp op, Side side) {
  Block &body = op.getBody().front();
  unsigned numSrcs = op.getSrcs().size(), numDsts = op.getDsts().size();
  auto argSide = [&](unsigned i) {
    return i < numSrcs ? Src : i < numSrcs + numDsts ? Dst : Edge;
  };
  DenseMap<Value, unsigned> sides;
  for (BlockArgument a : body.getArguments())
    sides[a] = argSide(a.getArgNumber());
  SmallVector<Operation *> movable;
  for (Operation &o : body.without_terminator()) {
    unsigned s = None;
    for (Value v : o.getOperands())
      s |= sides.lookup(v); // values from outside the body: None
    // A dropout draws its mask by the id of the element it runs on, here
    // the edge: moved to a vertex it would draw one mask per vertex, shared
    // by all of that vertex's edges.
    if (isa<DropoutOp>(o))
      s |= Edge;
    for (Value r : o.getResults())
      sides[r] = s;
    if (s == unsigned(side) && isPure(&o))
      movable.push_back(&o);
  }
  // What crosses to the remaining body: movable results with other users.
  llvm::SetVector<Value> frontier;
  llvm::SmallPtrSet<Operation *, 16> moving(movable.begin(), movable.end());
  for (Operation *o : movable)
    for (Value r : o->getResults())
      for (Operation *user : r.getUsers())
        if (!moving.contains(user))
          frontier.insert(r);
  if (frontier.empty())
    return false;

  // The per-vertex computation.
  unsigned first = side == Src ? 0 : numSrcs;
  unsigned count = side == Src ? numSrcs : numDsts;
  ValueRange inputs = op->getOperands().slice(first, count);
  SmallVector<Type> types;
  for (Value f : frontier) {
    auto t = cast<RankedTensorType>(f.getType());
    types.push_back(
        VertexType::get(op.getContext(), t.getShape(), t.getElementType()));
  }
  OpBuilder b(op);
  auto pre = ApplyVertexOp::create(b, op.getLoc(), types, inputs);
  Block *preBody = new Block();
  pre.getBody().push_back(preBody);
  IRMapping map;
  for (unsigned i = 0; i < count; ++i)
    map.map(body.getArgument(first + i),
            preBody->addArgument(body.getArgument(first + i).getType(),
                                 op.getLoc()));
  OpBuilder inner = OpBuilder::atBlockEnd(preBody);
  // Constants the moved ops read come along (copied: the body may use them
  // too).
  std::function<void(Operation *)> cloneWithDeps = [&](Operation *o) {
    for (Value v : o->getOperands())
      if (!map.contains(v) && v.getParentBlock() == &body)
        cloneWithDeps(v.getDefiningOp());
    if (!map.contains(o->getResult(0)))
      inner.clone(*o, map);
  };
  for (Operation *o : movable)
    cloneWithDeps(o);
  SmallVector<Value> yields;
  for (Value f : frontier)
    yields.push_back(map.lookup(f));
  YieldOp::create(inner, op.getLoc(), yields);

  // Feed the results in as new operands of the same side.
  unsigned insertAt = first + count;
  for (auto [i, f] : llvm::enumerate(frontier)) {
    BlockArgument arg =
        body.insertArgument(insertAt + i, f.getType(), f.getLoc());
    Value(f).replaceAllUsesWith(arg);
  }
  if (side == Src)
    op.getSrcsMutable().append(pre.getResults());
  else
    op.getDstsMutable().append(pre.getResults());
  for (Operation *o : llvm::reverse(movable))
    if (o->use_empty())
      o->erase();
  return true;
}

/// Drops operands whose body arguments are no longer read.
void pruneOperands(PropagateOp op) {
  Block &body = op.getBody().front();
  for (int i = body.getNumArguments() - 1; i >= 0; --i) {
    if (!body.getArgument(i).use_empty())
      continue;
    unsigned numSrcs = op.getSrcs().size(), numDsts = op.getDsts().size();
    body.eraseArgument(i);
    if (unsigned(i) < numSrcs)
      op.getSrcsMutable().erase(i);
    else if (unsigned(i) < numSrcs + numDsts)
      op.getDstsMutable().erase(i - numSrcs);
    else
      op.getEdgesMutable().erase(i - numSrcs - numDsts);
  }
}

struct OperatorMotion
    : public saga::impl::SagaOperatorMotionBase<OperatorMotion> {
  void runOnOperation() override {
    getOperation().walk([](PropagateOp op) {
      bool moved = hoist(op, Src);
      moved |= hoist(op, Dst);
      if (moved)
        pruneOperands(op);
    });
  }
};

} // namespace
