//===- ReorderLinear.cpp - multiply before aggregating --------------------===//
//
// `linear(f(x), W) == f(linear(x, W))` whenever f scales each vertex's
// feature vector by per-vertex scalars or sums such vectors over edges (a
// sum/mean propagation whose message is the source vector times scalars).
// Moving the GEMM to the front makes every step of f run on the narrower
// side: GCN's normalisation and propagation then touch 16 features per
// vertex instead of 1433.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace saga {
#define GEN_PASS_DEF_SAGAREORDERLINEAR
#include "passes/Passes.h.inc"
} // namespace saga

using namespace mlir;
using namespace saga;

namespace {

bool isScalar(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank() == 0;
}

/// Whether the body maps block argument `arg` to its single yield by
/// multiplying or dividing by scalars that do not depend on `arg`; collects
/// the ops on that path.
bool scalesArgument(Block &body, BlockArgument arg,
                    SmallVectorImpl<Operation *> &path) {
  Value cur = arg;
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getNumOperands() != 1)
    return false;
  while (cur != yield.getOperand(0)) {
    if (!cur.hasOneUse())
      return false;
    Operation *user = *cur.getUsers().begin();
    if (!isa<MulOp, DivOp>(user))
      return false;
    Value other = user->getOperand(0) == cur ? user->getOperand(1)
                                             : user->getOperand(0);
    if (isa<DivOp>(user) && user->getOperand(0) != cur)
      return false;
    if (!isScalar(other) || user->getResult(0).getType() != cur.getType())
      return false;
    // `other` must not depend on `arg`: it is computed from other arguments,
    // parameters or constants.
    SmallVector<Value> work{other};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (v == arg)
        return false;
      if (Operation *def = v.getDefiningOp(); def && def->getBlock() == &body)
        llvm::append_range(work, def->getOperands());
    }
    path.push_back(user);
    cur = user->getResult(0);
  }
  return true;
}

/// The operand index of the vertex value `op` scales (see above), if any.
std::optional<unsigned> scaledOperand(Operation *op) {
  if (op->getNumResults() != 1 || !op->getResult(0).hasOneUse())
    return std::nullopt;
  auto resultType = cast<DomainType>(op->getResult(0).getType());
  Block &body = op->getRegion(0).front();
  std::optional<unsigned> found;
  unsigned limit = op->getNumOperands();
  if (auto p = dyn_cast<PropagateOp>(op)) {
    if (p.getKind() != GatherKind::sum && p.getKind() != GatherKind::mean)
      return std::nullopt;
    limit = p.getSrcs().size(); // only a source value may be scaled
  }
  for (unsigned i = 0; i < limit; ++i) {
    auto t = cast<DomainType>(op->getOperand(i).getType());
    if (t.getShape() != resultType.getShape() || t.getShape().size() != 1)
      continue;
    SmallVector<Operation *> path;
    if (!scalesArgument(body, body.getArgument(i), path))
      continue;
    if (found)
      return std::nullopt; // ambiguous
    found = i;
  }
  return found;
}

/// Clones `op` with operand `index` replaced by `input` (a narrower vertex
/// value); the scaled path in the body takes the new width.
Operation *rebuild(Operation *op, unsigned index, Value input, OpBuilder &b) {
  auto inputType = cast<VertexType>(input.getType());
  IRMapping map;
  map.map(op->getOperand(index), input);
  Operation *copy = b.clone(*op, map);
  Block &body = copy->getRegion(0).front();
  BlockArgument arg = body.getArgument(index);
  SmallVector<Operation *> path;
  bool ok = scalesArgument(body, arg, path);
  (void)ok;
  assert(ok && "the clone scales its argument like the original");
  arg.setType(inputType.getElementTensorType());
  for (Operation *p : path)
    p->getResult(0).setType(inputType.getElementTensorType());
  copy->getResult(0).setType(inputType);
  return copy;
}

void reorder(LinearOp linear) {
  auto outType = cast<VertexType>(linear.getType());
  auto inType = cast<VertexType>(linear.getInput().getType());
  if (outType.getShape().size() != 1 ||
      outType.getShape()[0] >= inType.getShape()[0])
    return; // only worth it when the GEMM narrows the features
  SmallVector<std::pair<Operation *, unsigned>> chain;
  Value cur = linear.getInput();
  while (Operation *def = cur.getDefiningOp()) {
    if (!isa<ApplyVertexOp, PropagateOp>(def))
      break;
    std::optional<unsigned> index = scaledOperand(def);
    if (!index)
      break;
    chain.push_back({def, *index});
    cur = def->getOperand(*index);
  }
  if (chain.empty())
    return;
  // The weight must be available where the chain starts.
  Operation *first = chain.back().first;
  if (Operation *w = linear.getWeight().getDefiningOp();
      w && (w->getBlock() != first->getBlock() || !w->isBeforeInBlock(first)))
    return;
  OpBuilder b(first);
  Value narrow = LinearOp::create(b, linear.getLoc(), outType, cur,
                                  linear.getWeight());
  for (auto &[op, index] : llvm::reverse(chain)) {
    b.setInsertionPoint(op);
    narrow = rebuild(op, index, narrow, b)->getResult(0);
  }
  linear.replaceAllUsesWith(narrow);
  linear.erase();
  for (auto &[op, index] : chain)
    op->erase(); // each had the chain as its only use
}

struct ReorderLinear
    : public saga::impl::SagaReorderLinearBase<ReorderLinear> {
  void runOnOperation() override {
    SmallVector<LinearOp> linears;
    getOperation().walk([&](LinearOp l) { linears.push_back(l); });
    for (LinearOp l : linears)
      reorder(l);
  }
};

} // namespace
