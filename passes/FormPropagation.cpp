//===- FormPropagation.cpp - scatter/apply_edge/gather to propagate -------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace saga {
#define GEN_PASS_DEF_SAGAFORMPROPAGATION
#include "passes/Passes.h.inc"
} // namespace saga

using namespace mlir;
using namespace saga;

namespace {

/// Where an edge-body input comes from.
struct EdgeSource {
  enum Role { Src, Dst, Edge } role;
  Value value; // the vertex value (Src/Dst) or the edge value (Edge)
};

EdgeSource classify(Value edgeValue) {
  if (auto scatter = edgeValue.getDefiningOp<ScatterOp>())
    return {scatter.getEnd() == EdgeEnd::src ? EdgeSource::Src
                                             : EdgeSource::Dst,
            scatter.getInput()};
  return {EdgeSource::Edge, edgeValue};
}

/// Attention dropout as a mask on the message: dropping an edge's softmax
/// weight for one head is dropping that head's slice of the message, since
/// the weighted sum is linear in both. The mask is a dropout of ones, one
/// per head, broadcast over the head's features; the kernel keys it by edge.
Value attentionDropout(OpBuilder &b, Location loc, Value message, Value score,
                       double rate) {
  auto scoreType = cast<RankedTensorType>(score.getType());
  auto messageType = cast<RankedTensorType>(message.getType());
  Value ones = arith::ConstantOp::create(
      b, loc, scoreType,
      DenseElementsAttr::get(scoreType, b.getFloatAttr(
                                            scoreType.getElementType(), 1.0)));
  Value keep = DropoutOp::create(b, loc, scoreType, ones,
                                 b.getF64FloatAttr(rate), IntegerAttr());
  SmallVector<int64_t> expanded(scoreType.getShape());
  expanded.resize(messageType.getRank(), 1);
  if (expanded != scoreType.getShape())
    keep = ReshapeOp::create(
        b, loc, RankedTensorType::get(expanded, scoreType.getElementType()),
        keep);
  return MulOp::create(b, loc, messageType, message, keep);
}

LogicalResult formPropagation(GatherOp gather) {
  OpBuilder b(gather);
  Value message = gather.getInput();
  auto apply = message.getDefiningOp<ApplyEdgeOp>();
  if (gather.getScore() && gather.getScore().getDefiningOp() != apply)
    return gather.emitOpError()
           << "score and message must come from the same apply_edge";

  // The body inputs: the apply_edge's operands, or the gathered value itself
  // when there is no edge function.
  SmallVector<Value> inputs;
  if (apply)
    llvm::append_range(inputs, apply.getInputs());
  else
    inputs.push_back(message);
  SmallVector<EdgeSource> sources;
  for (Value v : inputs) {
    sources.push_back(classify(v));
    if (sources.back().role == EdgeSource::Edge &&
        !isa<BlockArgument>(v) && v.getDefiningOp<ApplyEdgeOp>())
      return gather.emitOpError()
             << "edge function reads another edge function's result; "
             << "only scattered vertex values and edge inputs are supported";
  }

  // Operands grouped src, dst, edge; remember each input's new position.
  SmallVector<Value> groups[3];
  SmallVector<std::pair<int, unsigned>> position;
  for (const EdgeSource &s : sources) {
    position.push_back({s.role, groups[s.role].size()});
    groups[s.role].push_back(s.value);
  }
  auto prop = PropagateOp::create(b, gather.getLoc(), gather.getType(),
                                  gather.getKind(), groups[0], groups[1],
                                  groups[2]);
  Block *body = new Block();
  prop.getBody().push_back(body);
  SmallVector<Value> args[3];
  for (int role = 0; role < 3; ++role)
    for (Value v : groups[role])
      args[role].push_back(body->addArgument(
          cast<DomainType>(v.getType()).getElementTensorType(), v.getLoc()));

  OpBuilder inner = OpBuilder::atBlockEnd(body);
  SmallVector<Value> yields;
  if (apply) {
    IRMapping map;
    Block &old = apply.getBody().front();
    for (auto [i, arg] : llvm::enumerate(old.getArguments()))
      map.map(arg, args[position[i].first][position[i].second]);
    for (Operation &op : old.without_terminator())
      inner.clone(op, map);
    auto oldYield = cast<YieldOp>(old.getTerminator());
    auto resultIndex = [&](Value v) {
      return cast<OpResult>(v).getResultNumber();
    };
    yields.push_back(map.lookup(oldYield.getOperand(resultIndex(message))));
    if (gather.getScore())
      yields.push_back(
          map.lookup(oldYield.getOperand(resultIndex(gather.getScore()))));
  } else {
    yields.push_back(args[position[0].first][position[0].second]);
  }
  if (std::optional<APFloat> rate = gather.getDropout())
    yields[0] = attentionDropout(inner, gather.getLoc(), yields[0], yields[1],
                                 rate->convertToDouble());
  YieldOp::create(inner, gather.getLoc(), yields);

  gather.replaceAllUsesWith(prop.getResult());
  gather.erase();
  if (apply && apply->use_empty())
    apply.erase();
  return success();
}

struct FormPropagation
    : public saga::impl::SagaFormPropagationBase<FormPropagation> {
  void runOnOperation() override {
    SmallVector<GatherOp> gathers;
    getOperation().walk([&](GatherOp g) { gathers.push_back(g); });
    for (GatherOp g : gathers)
      if (failed(formPropagation(g)))
        return signalPassFailure();
    // Scatters now unused.
    getOperation().walk([&](ScatterOp s) {
      if (s->use_empty())
        s.erase();
    });
  }
};

} // namespace
