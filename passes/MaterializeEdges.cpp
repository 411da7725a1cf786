//===- MaterializeEdges.cpp - unfused propagation: edge tensors -----------===//
//
// The unfused execution of a propagation, as PyG and DGL run a message
// function that is not fused into the aggregation: first every edge's
// message (and score) is computed and stored, one row per edge, then a
// second kernel reduces the stored rows into the vertices. This is what
// `-O0` and `--disable-pass=fuse-propagation` run; it exists so that the
// fusion can be measured (and checked: both orders compute the same body on
// the same rows and reduce in the same CSR order, so they agree).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace saga {
#define GEN_PASS_DEF_SAGAMATERIALIZEEDGES
#include "passes/Passes.h.inc"
} // namespace saga

using namespace mlir;
using namespace saga;

namespace {

/// Splits `prop` into an edge_map computing the values its body yields and a
/// propagate reducing them. Yields that are already edge operands are
/// reduced as they are; a propagate whose yields all are is left alone. The
/// edge_map keeps the operand order (src, dst, edge) but drops operands its
/// body does not read.
void materialize(PropagateOp prop) {
  Block &body = prop.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  unsigned firstEdge = prop.getSrcs().size() + prop.getDsts().size();
  MLIRContext *ctx = prop.getContext();

  // Each yielded value's edge tensor: an edge operand, or a new edge_map
  // result (one per distinct value).
  SmallVector<Value> computed;    // body values the edge_map yields
  SmallVector<Type> computedTypes;
  SmallVector<std::pair<bool, unsigned>> source; // (computed?, index)
  for (Value y : yield.getOperands()) {
    auto arg = dyn_cast<BlockArgument>(y);
    if (arg && arg.getOwner() == &body && arg.getArgNumber() >= firstEdge) {
      source.push_back({false, arg.getArgNumber() - firstEdge});
      continue;
    }
    auto *it = llvm::find(computed, y);
    if (it == computed.end()) {
      auto type = cast<RankedTensorType>(y.getType());
      computed.push_back(y);
      computedTypes.push_back(
          EdgeType::get(ctx, type.getShape(), type.getElementType()));
      it = computed.end() - 1;
    }
    source.push_back({true, unsigned(it - computed.begin())});
  }
  if (computed.empty())
    return;

  // The edge_map takes the operands its body reads (not those only
  // forwarded to the reduction) and computes the yields that need it.
  SmallVector<Value> groups[3];
  SmallVector<BlockArgument> kept;
  for (BlockArgument arg : body.getArguments()) {
    bool edge = arg.getArgNumber() >= firstEdge;
    bool read = llvm::any_of(arg.getUsers(), [&](Operation *user) {
      return user != yield || !edge;
    });
    if (!read)
      continue;
    int group = arg.getArgNumber() < prop.getSrcs().size() ? 0
                : edge                                     ? 2
                                                           : 1;
    groups[group].push_back(prop->getOperand(arg.getArgNumber()));
    kept.push_back(arg);
  }
  OpBuilder b(prop);
  auto map = EdgeMapOp::create(b, prop.getLoc(), computedTypes, groups[0],
                               groups[1], groups[2]);
  Block *mapBody = new Block();
  map.getBody().push_back(mapBody);
  IRMapping mapping;
  for (BlockArgument arg : kept)
    mapping.map(arg, mapBody->addArgument(arg.getType(), arg.getLoc()));
  OpBuilder mb = OpBuilder::atBlockEnd(mapBody);
  for (Operation &op : body.without_terminator())
    mb.clone(op, mapping);
  SmallVector<Value> mapYields;
  for (Value v : computed)
    mapYields.push_back(mapping.lookupOrDefault(v));
  YieldOp::create(mb, yield.getLoc(), mapYields);

  // The reduction of the edge tensors: the same kind and direction, a body
  // that forwards them.
  SmallVector<Value> edges;
  SmallVector<unsigned> argOf;
  for (auto [isComputed, i] : source) {
    Value e = isComputed ? map.getResult(i) : prop.getEdges()[i];
    auto *it = llvm::find(edges, e);
    if (it == edges.end()) {
      edges.push_back(e);
      it = edges.end() - 1;
    }
    argOf.push_back(unsigned(it - edges.begin()));
  }
  auto reduce = PropagateOp::create(b, prop.getLoc(), prop.getType(),
                                    prop.getKind(), ValueRange(),
                                    ValueRange(), edges, prop.getReversed());
  for (NamedAttribute attr : prop->getDiscardableAttrs())
    reduce->setAttr(attr.getName(), attr.getValue());
  Block *reduceBody = new Block();
  reduce.getBody().push_back(reduceBody);
  for (Value e : edges)
    reduceBody->addArgument(cast<DomainType>(e.getType()).getElementTensorType(),
                            e.getLoc());
  OpBuilder rb = OpBuilder::atBlockEnd(reduceBody);
  SmallVector<Value> forwarded;
  for (unsigned a : argOf)
    forwarded.push_back(reduceBody->getArgument(a));
  YieldOp::create(rb, yield.getLoc(), forwarded);

  prop.replaceAllUsesWith(reduce.getResult());
  prop.erase();
}

struct MaterializeEdges
    : public saga::impl::SagaMaterializeEdgesBase<MaterializeEdges> {
  void runOnOperation() override {
    SmallVector<PropagateOp> props;
    getOperation().walk([&](PropagateOp p) { props.push_back(p); });
    for (PropagateOp p : props)
      materialize(p);
  }
};

} // namespace
