//===- Autodiff.cpp - reverse-mode gradients of a model -------------------===//
//
// Appends the backward pass to each model at the graph-tensor level; the
// model then returns its loss and one gradient per parameter. Each
// forward op gets its adjoint in reverse order:
//   - apply_vertex: a backward apply_vertex whose body re-evaluates the
//     forward body per row (cheap elementwise work, fused into the same
//     kernel) and then applies the per-element vector-Jacobian products;
//     parameters captured by the body get per-row contributions that
//     saga.sum_rows reduces;
//   - propagate (sum, mean): the gradient of a source operand is a
//     propagation over the reversed graph of the body's VJP, the gradient of
//     a destination operand a forward propagation of it; mean divides the
//     upstream gradient by the in-degree first;
//   - propagate (max, min): per element, the gradient goes to the in-edges
//     whose message equals the output, split evenly among ties (as
//     torch.scatter_reduce's amax/amin); a sum propagation counts those
//     edges, so no argmax is stored;
//   - reduce (max, min) inside a body: likewise to the elements equal to
//     the result, split among ties; concat: each input gets its range;
//   - linear: two GEMMs (saga.linear_grad_input / _weight);
//   - cross_entropy, l2 and scalar arithmetic: closed forms.
// Forward values the backward reads stay alive until their last use (the
// plan's releases follow from that), rather than being recomputed.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace saga {
#define GEN_PASS_DEF_SAGAAUTODIFF
#include "passes/Passes.h.inc"
} // namespace saga

using namespace mlir;
using namespace saga;

namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Emits per-element tensor ops for gradients (shapes inferred here).
class GradBuilder {
public:
  GradBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value constant(ArrayRef<int64_t> shape, double v) {
    auto type = RankedTensorType::get(shape, b.getF32Type());
    return arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, b.getF32FloatAttr(v)));
  }
  template <typename Op> Value binary(Value x, Value y) {
    auto shape = broadcastShapes(tensorType(x).getShape(),
                                 tensorType(y).getShape());
    assert(succeeded(shape) && "gradient shapes broadcast");
    return Op::create(b, loc, RankedTensorType::get(*shape, b.getF32Type()),
                      x, y);
  }
  Value add(Value x, Value y) { return binary<AddOp>(x, y); }
  Value sub(Value x, Value y) { return binary<SubOp>(x, y); }
  Value mul(Value x, Value y) { return binary<MulOp>(x, y); }
  Value div(Value x, Value y) { return binary<DivOp>(x, y); }
  Value neg(Value x) { return NegOp::create(b, loc, x.getType(), x); }
  Value reshape(Value x, ArrayRef<int64_t> shape) {
    if (tensorType(x).getShape() == shape)
      return x;
    return ReshapeOp::create(b, loc,
                             RankedTensorType::get(shape, b.getF32Type()), x);
  }
  Value reduceSum(Value x, int64_t axis) {
    SmallVector<int64_t> shape(tensorType(x).getShape());
    shape.erase(shape.begin() + axis);
    return ReduceOp::create(b, loc,
                            RankedTensorType::get(shape, b.getF32Type()),
                            ReduceKind::sum, x, static_cast<uint64_t>(axis));
  }
  /// x summed over its trailing axes down to `rank` axes.
  Value sumToRank(Value x, int64_t rank) {
    while (tensorType(x).getRank() > rank)
      x = reduceSum(x, tensorType(x).getRank() - 1);
    return x;
  }
  Value selectPositive(Value c, Value x, Value y) {
    return SelectPositiveOp::create(b, loc, c.getType(), c, x, y);
  }
  Value abs(Value x) { return AbsOp::create(b, loc, x.getType(), x); }
  /// `x == y ? ifEqual : otherwise` per element: |x - y| > 0 fails only
  /// where x and y are equal (or one is NaN, or both the same infinity).
  Value selectEqual(Value x, Value y, Value ifEqual, Value otherwise) {
    return selectPositive(abs(sub(x, y)), otherwise, ifEqual);
  }
  Value slice(Value x, int64_t axis, int64_t offset, int64_t size) {
    SmallVector<int64_t> shape(tensorType(x).getShape());
    shape[axis] = size;
    return SliceOp::create(b, loc, RankedTensorType::get(shape, b.getF32Type()),
                           x, static_cast<uint64_t>(axis),
                           static_cast<uint64_t>(offset),
                           static_cast<uint64_t>(size));
  }
  /// `x` (the result of reducing `axis` of a value of `shape`) repeated
  /// along that axis: the adjoint of the reduction's summing.
  Value expand(Value x, ArrayRef<int64_t> shape, int64_t axis) {
    SmallVector<int64_t> kept(shape);
    kept[axis] = 1;
    return add(constant(shape, 0.0), reshape(x, kept));
  }
  Value matmul(Value x, Value y, ArrayRef<int64_t> shape) {
    return MatmulOp::create(b, loc,
                            RankedTensorType::get(shape, b.getF32Type()), x, y);
  }

  /// Sums `g` down to `shape` (the adjoint of broadcasting).
  Value unbroadcast(Value g, ArrayRef<int64_t> shape) {
    ArrayRef<int64_t> gs = tensorType(g).getShape();
    if (gs == shape)
      return g;
    while (tensorType(g).getRank() > int64_t(shape.size()))
      g = reduceSum(g, 0);
    for (int64_t d = shape.size() - 1; d >= 0; --d)
      if (shape[d] == 1 && tensorType(g).getShape()[d] != 1)
        g = reduceSum(g, d);
    return reshape(g, shape);
  }

  OpBuilder &b;
  Location loc;
};

/// Reverse-mode through a straight-line list of per-element ops. `grads`
/// holds the seeds on entry and every reached value's gradient on exit.
LogicalResult vjp(ArrayRef<Operation *> ops, OpBuilder &b,
                  DenseMap<Value, Value> &grads) {
  auto accumulate = [&](GradBuilder &gb, Value v, Value g) {
    if (!isa<FloatType>(getElementTypeOrSelf(v.getType())))
      return;
    auto it = grads.find(v);
    Value sum = it == grads.end() ? g : gb.add(it->second, g);
    grads[v] = sum; // may rehash: read `it` first
  };
  for (Operation *op : llvm::reverse(ops)) {
    if (op->getNumResults() != 1)
      continue;
    Value g = grads.lookup(op->getResult(0));
    if (!g)
      continue;
    GradBuilder gb(b, op->getLoc());
    Value y = op->getResult(0);
    auto x = [&](unsigned i) { return op->getOperand(i); };
    auto shape = [&](unsigned i) { return tensorType(x(i)).getShape(); };
    if (isa<arith::ConstantOp>(op))
      continue;
    if (isa<AddOp>(op)) {
      accumulate(gb, x(0), gb.unbroadcast(g, shape(0)));
      accumulate(gb, x(1), gb.unbroadcast(g, shape(1)));
    } else if (isa<SubOp>(op)) {
      accumulate(gb, x(0), gb.unbroadcast(g, shape(0)));
      accumulate(gb, x(1), gb.unbroadcast(gb.neg(g), shape(1)));
    } else if (isa<MulOp>(op)) {
      accumulate(gb, x(0), gb.unbroadcast(gb.mul(g, x(1)), shape(0)));
      accumulate(gb, x(1), gb.unbroadcast(gb.mul(g, x(0)), shape(1)));
    } else if (isa<DivOp>(op)) {
      accumulate(gb, x(0), gb.unbroadcast(gb.div(g, x(1)), shape(0)));
      Value t = gb.div(gb.mul(g, x(0)), gb.mul(x(1), x(1)));
      accumulate(gb, x(1), gb.unbroadcast(gb.neg(t), shape(1)));
    } else if (isa<NegOp>(op)) {
      accumulate(gb, x(0), gb.neg(g));
    } else if (isa<ReluOp>(op)) {
      accumulate(gb, x(0),
                 gb.selectPositive(x(0), g, gb.constant(shape(0), 0.0)));
    } else if (auto l = dyn_cast<LeakyReluOp>(op)) {
      Value slope = gb.constant({}, l.getSlope().convertToDouble());
      accumulate(gb, x(0), gb.selectPositive(x(0), g, gb.mul(g, slope)));
    } else if (isa<EluOp>(op)) {
      Value e = ExpOp::create(b, op->getLoc(), x(0).getType(), x(0));
      accumulate(gb, x(0), gb.selectPositive(x(0), g, gb.mul(g, e)));
    } else if (isa<AbsOp>(op)) {
      accumulate(gb, x(0), gb.selectPositive(x(0), g, gb.neg(g)));
    } else if (isa<SigmoidOp>(op)) {
      Value oneMinus = gb.sub(gb.constant({}, 1.0), y);
      accumulate(gb, x(0), gb.mul(g, gb.mul(y, oneMinus)));
    } else if (isa<TanhOp>(op)) {
      Value oneMinus = gb.sub(gb.constant({}, 1.0), gb.mul(y, y));
      accumulate(gb, x(0), gb.mul(g, oneMinus));
    } else if (isa<ExpOp>(op)) {
      accumulate(gb, x(0), gb.mul(g, y));
    } else if (isa<LogOp>(op)) {
      accumulate(gb, x(0), gb.div(g, x(0)));
    } else if (isa<RsqrtOp>(op)) {
      Value cube = gb.mul(y, gb.mul(y, y));
      accumulate(gb, x(0),
                 gb.mul(g, gb.mul(gb.constant({}, -0.5), cube)));
    } else if (auto d = dyn_cast<DropoutOp>(op)) {
      // The same mask (same key, row and element) scales the gradient.
      auto back = DropoutOp::create(b, op->getLoc(), g.getType(), g,
                                    d.getRateAttr(), d.getKeyAttr());
      accumulate(gb, x(0), back);
    } else if (isa<ReshapeOp>(op)) {
      accumulate(gb, x(0), gb.reshape(g, shape(0)));
    } else if (auto r = dyn_cast<ReduceOp>(op)) {
      int64_t axis = static_cast<int64_t>(r.getAxis());
      if (axis < 0)
        axis += shape(0).size();
      Value expanded = gb.expand(g, shape(0), axis);
      switch (r.getKind()) {
      case ReduceKind::sum:
        break;
      case ReduceKind::mean:
        expanded = gb.mul(expanded,
                          gb.constant({}, 1.0 / double(shape(0)[axis])));
        break;
      case ReduceKind::max:
      case ReduceKind::min: {
        // The gradient goes to the elements equal to the result, split
        // evenly among ties (as the max/min gathers and PyTorch's amax).
        // max/min return one of their operands, so |x - result| > 0 fails
        // only at the winners (selectEqual's test, made once for both uses).
        Value off = gb.abs(gb.sub(x(0), gb.expand(y, shape(0), axis)));
        Value zero = gb.constant(shape(0), 0.0);
        Value ties = gb.reduceSum(
            gb.selectPositive(off, zero, gb.constant(shape(0), 1.0)), axis);
        Value share = gb.div(expanded, gb.expand(ties, shape(0), axis));
        expanded = gb.selectPositive(off, zero, share);
        break;
      }
      }
      accumulate(gb, x(0), expanded);
    } else if (auto c = dyn_cast<ConcatOp>(op)) {
      // Each input's gradient is its own range of the result's.
      int64_t axis = static_cast<int64_t>(c.getAxis());
      if (axis < 0)
        axis += shape(0).size();
      int64_t offset = 0;
      for (unsigned i = 0; i < op->getNumOperands(); ++i) {
        int64_t size = shape(i)[axis];
        accumulate(gb, x(i), gb.slice(g, axis, offset, size));
        offset += size;
      }
    } else if (isa<MatmulOp>(op)) {
      ArrayRef<int64_t> a = shape(0), w = shape(1);
      if (a.size() != 1)
        return op->emitOpError() << "gradient of a matmul with a multi-row "
                                 << "left side is not implemented yet";
      int64_t k = a[0], n = tensorType(x(1)).getNumElements() / k;
      Value gf = gb.reshape(g, {n});
      Value wf = gb.reshape(x(1), {k, n});
      accumulate(gb, x(0), gb.matmul(wf, gf, {k}));
      Value outer = gb.matmul(gb.reshape(x(0), {k, 1}), gb.reshape(g, {1, n}),
                              {k, n});
      accumulate(gb, x(1), gb.reshape(outer, w));
    } else {
      return op->emitOpError() << "has no gradient rule yet";
    }
  }
  return success();
}

class ModelDiff {
public:
  explicit ModelDiff(ModelOp model) : model(model), b(model.getContext()) {}
  LogicalResult run();

private:
  void accumulate(Value v, Value g, Location loc);
  LogicalResult applyVertex(ApplyVertexOp op);
  LogicalResult propagate(PropagateOp op);
  LogicalResult modelLevel(Operation *op);
  Value degree(Location loc);

  /// Whether `v` depends on a parameter: only such values get gradients.
  bool active(Value v) const { return activeValues.contains(v); }

  ModelOp model;
  OpBuilder b;
  DenseMap<Value, Value> grads;
  DenseSet<Value> activeValues;
  Value deg;
};

void ModelDiff::accumulate(Value v, Value g, Location loc) {
  if (!g || !active(v) || !isa<FloatType>(getElementTypeOrSelf(
                isa<DomainType>(v.getType())
                    ? cast<DomainType>(v.getType()).getElementType()
                    : v.getType())))
    return;
  auto it = grads.find(v);
  if (it == grads.end()) {
    grads[v] = g;
    return;
  }
  Value prev = it->second;
  if (auto d = dyn_cast<VertexType>(v.getType())) {
    auto sum = ApplyVertexOp::create(b, loc, TypeRange{d}, ValueRange{prev, g});
    Block *body = new Block();
    sum.getBody().push_back(body);
    Value x = body->addArgument(d.getElementTensorType(), loc);
    Value y = body->addArgument(d.getElementTensorType(), loc);
    OpBuilder inner = OpBuilder::atBlockEnd(body);
    Value s = AddOp::create(inner, loc, x.getType(), x, y);
    YieldOp::create(inner, loc, s);
    grads[v] = sum.getResult(0);
    return;
  }
  grads[v] = AddOp::create(b, loc, prev.getType(), prev, g);
}

Value ModelDiff::degree(Location loc) {
  if (!deg)
    deg = DegreeOp::create(b, loc, VertexType::get(b.getContext(), {},
                                                   b.getF32Type()));
  return deg;
}

LogicalResult ModelDiff::applyVertex(ApplyVertexOp op) {
  SmallVector<Value> upstream;
  for (Value r : op.getResults())
    upstream.push_back(grads.lookup(r));
  if (llvm::all_of(upstream, [](Value g) { return !g; }))
    return success();
  Location loc = op.getLoc();
  Block &fwd = op.getBody().front();

  SmallVector<Value> inputs(op.getInputs());
  for (Value g : upstream)
    if (g)
      inputs.push_back(g);
  Block *body = new Block(); // detached until the backward op exists
  IRMapping map;
  for (BlockArgument arg : fwd.getArguments())
    map.map(arg, body->addArgument(arg.getType(), loc));
  OpBuilder inner(b.getContext());
  inner.setInsertionPointToEnd(body);
  SmallVector<Operation *> cloned;
  for (Operation &inner_op : fwd.without_terminator())
    cloned.push_back(inner.clone(inner_op, map));
  DenseMap<Value, Value> local;
  auto yield = cast<YieldOp>(fwd.getTerminator());
  for (auto [i, g] : llvm::enumerate(upstream)) {
    if (!g)
      continue;
    Value seed = body->addArgument(
        cast<DomainType>(g.getType()).getElementTensorType(), loc);
    Value y = map.lookupOrDefault(yield.getOperand(i));
    auto it = local.find(y);
    Value sum = it == local.end()
                    ? seed
                    : AddOp::create(inner, loc, seed.getType(), it->second, seed);
    local[y] = sum;
  }
  if (failed(vjp(cloned, inner, local))) {
    delete body; // still detached (ASan found it leaked here)
    return failure();
  }

  // Results: input gradients, then per-row contributions to captured values.
  SmallVector<Value> yields, targets;
  SmallVector<Type> types;
  SmallVector<bool> perRow;
  for (auto [i, arg] : llvm::enumerate(fwd.getArguments())) {
    Value g = local.lookup(map.lookup(arg));
    if (!g || !active(op.getInputs()[i]))
      continue;
    yields.push_back(g);
    targets.push_back(op.getInputs()[i]);
    types.push_back(op.getInputs()[i].getType());
    perRow.push_back(false);
  }
  llvm::SetVector<Value> captured;
  for (Operation *c : cloned)
    for (Value v : c->getOperands())
      if (v.getParentBlock() != body && isa<RankedTensorType>(v.getType()))
        captured.insert(v);
  for (Value c : captured) {
    Value g = local.lookup(c);
    if (!g || !active(c))
      continue;
    yields.push_back(g);
    targets.push_back(c);
    auto t = tensorType(c);
    types.push_back(VertexType::get(b.getContext(), t.getShape(),
                                    t.getElementType()));
    perRow.push_back(true);
  }
  if (yields.empty()) {
    delete body;
    return success();
  }
  YieldOp::create(inner, loc, yields);
  auto back = ApplyVertexOp::create(b, loc, types, inputs);
  back.getBody().push_back(body);
  for (auto [i, target] : llvm::enumerate(targets)) {
    Value g = back.getResult(i);
    if (perRow[i])
      g = SumRowsOp::create(b, loc, target.getType(), g);
    accumulate(target, g, loc);
  }
  return success();
}

LogicalResult ModelDiff::propagate(PropagateOp op) {
  Value g = grads.lookup(op.getResult());
  if (!g)
    return success();
  Location loc = op.getLoc();
  GatherKind kind = op.getKind();
  auto gType = cast<VertexType>(g.getType());
  if (kind == GatherKind::mean) {
    // Each in-edge of v carried 1/deg(v) of v's gradient.
    auto scaled = ApplyVertexOp::create(b, loc, TypeRange{gType},
                                        ValueRange{g, degree(loc)});
    Block *body = new Block();
    scaled.getBody().push_back(body);
    Value x = body->addArgument(gType.getElementTensorType(), loc);
    Value d = body->addArgument(RankedTensorType::get({}, b.getF32Type()), loc);
    OpBuilder inner = OpBuilder::atBlockEnd(body);
    YieldOp::create(inner, loc,
                    ValueRange{DivOp::create(inner, loc, x.getType(), x, d)});
    g = scaled.getResult(0);
  }

  Block &fwd = op.getBody().front();
  // Active values the edge function reads from outside (parameters, when
  // operator motion did not move their use to the vertex side).
  llvm::SetVector<Value> captured;
  fwd.walk([&](Operation *o) {
    for (Value v : o->getOperands())
      if (v.getParentBlock() != &fwd && active(v))
        captured.insert(v);
  });
  unsigned numSrcs = op.getSrcs().size(), numDsts = op.getDsts().size();
  auto fwdYield = cast<YieldOp>(fwd.getTerminator());

  // A propagation over the forward operands plus `extra` values read at the
  // edge's destination (after the forward dsts), whose body re-evaluates the
  // forward body and then yields what `finish` computes from it.
  using Finish = function_ref<FailureOr<Value>(
      OpBuilder &, IRMapping &, ArrayRef<Value>, ArrayRef<Operation *>)>;
  auto derived = [&](GatherKind k, Type resultType, ArrayRef<Value> extra,
                     bool reversed, Finish finish) -> FailureOr<Value> {
    SmallVector<Value> dsts(op.getDsts());
    llvm::append_range(dsts, extra);
    auto prop = PropagateOp::create(b, loc, resultType, k, op.getSrcs(), dsts,
                                    op.getEdges(), reversed);
    Block *body = new Block();
    prop.getBody().push_back(body);
    IRMapping map;
    SmallVector<Value> extraArgs;
    for (auto [i, arg] : llvm::enumerate(fwd.getArguments())) {
      if (i == numSrcs + numDsts)
        for (Value e : extra)
          extraArgs.push_back(body->addArgument(
              cast<DomainType>(e.getType()).getElementTensorType(), loc));
      map.map(arg, body->addArgument(arg.getType(), loc));
    }
    if (extraArgs.size() != extra.size())
      for (Value e : extra)
        extraArgs.push_back(body->addArgument(
            cast<DomainType>(e.getType()).getElementTensorType(), loc));
    OpBuilder inner = OpBuilder::atBlockEnd(body);
    SmallVector<Operation *> cloned;
    for (Operation &o : fwd.without_terminator())
      cloned.push_back(inner.clone(o, map));
    FailureOr<Value> yielded = finish(inner, map, extraArgs, cloned);
    if (failed(yielded))
      return failure();
    YieldOp::create(inner, loc, ValueRange{*yielded});
    return prop.getResult();
  };

  // Upstream values each backward body reads at the destination: the
  // gradient, and for softmax_sum delta = <g, out> and the log of the
  // softmax's normaliser (recomputed by a propagation rather than stored);
  // for max/min each tied edge's share
  // of the gradient and the forward output.
  SmallVector<Value> extras{g};
  bool softmax = kind == GatherKind::softmax_sum;
  bool extremum = kind == GatherKind::max || kind == GatherKind::min;
  RankedTensorType scoreType, msgType = gType.getElementTensorType();
  // An apply_vertex of g and `other` (rows of the message's shape) that
  // yields fn(g row, other row), of `type` per vertex.
  auto mapWithGradient =
      [&](VertexType type, Value other,
          function_ref<Value(GradBuilder &, Value, Value)> fn) -> Value {
    auto map = ApplyVertexOp::create(b, loc, TypeRange{type},
                                     ValueRange{g, other});
    Block *body = new Block();
    map.getBody().push_back(body);
    Value gRow = body->addArgument(msgType, loc);
    Value otherRow = body->addArgument(msgType, loc);
    OpBuilder inner = OpBuilder::atBlockEnd(body);
    GradBuilder gb(inner, loc);
    YieldOp::create(inner, loc, ValueRange{fn(gb, gRow, otherRow)});
    return map.getResult(0);
  };
  if (extremum) {
    // count[v], per element: how many in-edges of v carry the output. The
    // body re-evaluates the forward message exactly (same ops, same order),
    // and max/min return one of their operands, so the edges that won
    // compare equal.
    auto count = derived(
        GatherKind::sum, gType, {op.getResult()}, false,
        [&](OpBuilder &inner, IRMapping &map, ArrayRef<Value> extra,
            ArrayRef<Operation *>) -> FailureOr<Value> {
          GradBuilder gb(inner, loc);
          Value msg = map.lookupOrDefault(fwdYield.getOperand(0));
          Value one = gb.constant(msgType.getShape(), 1.0);
          Value zero = gb.constant(msgType.getShape(), 0.0);
          return gb.selectEqual(msg, extra[0], one, zero);
        });
    if (failed(count))
      return failure();
    // share = g / count, and 0 where count is 0 (a vertex without in-edges:
    // no edge reads it, but its row stays finite).
    Value share = mapWithGradient(
        gType, *count, [&](GradBuilder &gb, Value x, Value c) {
          Value zero = gb.constant(msgType.getShape(), 0.0);
          return gb.selectPositive(c, gb.div(x, c), zero);
        });
    extras = {share, op.getResult()};
  }
  if (softmax) {
    scoreType = tensorType(fwdYield.getOperand(1));
    auto scoreVertex = VertexType::get(b.getContext(), scoreType.getShape(),
                                       scoreType.getElementType());
    // lse[v] = log(sum over v's in-edges of exp(score)): the softmax's
    // normaliser in one propagation (one pass, one [V, heads] buffer).
    auto logSumExp = derived(
        GatherKind::logsumexp, scoreVertex, {}, false,
        [&](OpBuilder &, IRMapping &map, ArrayRef<Value>,
            ArrayRef<Operation *>) -> FailureOr<Value> {
          return map.lookupOrDefault(fwdYield.getOperand(1));
        });
    if (failed(logSumExp))
      return failure();
    // delta[v] = <g, out> per head: the destination's share of every
    // score gradient, made once per vertex instead of per edge, so that the
    // forward output is not read (nor kept) by the backward propagations.
    Value delta = mapWithGradient(
        scoreVertex, op.getResult(),
        [&](GradBuilder &gb, Value gRow, Value out) {
          return gb.sumToRank(gb.mul(gRow, out), scoreType.getRank());
        });
    extras = {g, delta, *logSumExp};
  }

  // A backward propagation: for every vertex, the sum over its edges
  // (out-edges when `reversed`) of the gradient of `bodyValue(map)`, a body
  // argument or a captured value, through the re-evaluated edge function.
  auto backward = [&](VertexType targetType, bool reversed,
                      function_ref<Value(IRMapping &)> bodyValue)
      -> FailureOr<Value> {
    return derived(
        GatherKind::sum, targetType, extras, reversed,
        [&](OpBuilder &inner, IRMapping &map, ArrayRef<Value> extra,
            ArrayRef<Operation *> cloned) -> FailureOr<Value> {
          GradBuilder gb(inner, loc);
          DenseMap<Value, Value> local;
          Value msg = map.lookupOrDefault(fwdYield.getOperand(0));
          if (extremum) {
            // d msg = share where the message is the output, else 0.
            Value zero = gb.constant(msgType.getShape(), 0.0);
            local[msg] = gb.selectEqual(msg, extra[1], extra[0], zero);
          } else if (!softmax) {
            local[msg] = extra[0];
          } else {
            // alpha = softmax weight of this edge, per head; then
            // d msg = alpha * g and d score = alpha * (<g, msg> - delta),
            // delta = <g, out> (made per vertex above).
            Value score = map.lookupOrDefault(fwdYield.getOperand(1));
            Value alpha =
                ExpOp::create(inner, loc, scoreType, gb.sub(score, extra[2]));
            SmallVector<int64_t> expanded(scoreType.getShape());
            expanded.resize(msgType.getRank(), 1);
            Value alphaB = gb.reshape(alpha, expanded);
            local[msg] = gb.mul(alphaB, extra[0]);
            Value dot =
                gb.sumToRank(gb.mul(extra[0], msg), scoreType.getRank());
            Value dScore = gb.mul(alpha, gb.sub(dot, extra[1]));
            auto it = local.find(score);
            Value seed = it == local.end() ? dScore : gb.add(it->second, dScore);
            local[score] = seed;
          }
          if (failed(vjp(cloned, inner, local)))
            return failure();
          Value grad = local.lookup(bodyValue(map));
          if (!grad)
            grad = gb.constant(targetType.getElementTensorType().getShape(),
                               0.0);
          return grad;
        });
  };
  // One backward propagation per differentiable src or dst operand: src
  // gradients flow over the reversed graph, dst gradients over the forward.
  for (unsigned i = 0; i < numSrcs + numDsts; ++i) {
    Value target = op->getOperand(i);
    auto targetType = cast<VertexType>(target.getType());
    if (!active(target) || !isa<FloatType>(targetType.getElementType()))
      continue;
    auto grad = backward(targetType, /*reversed=*/i < numSrcs,
                         [&](IRMapping &map) {
                           return map.lookup(fwd.getArgument(i));
                         });
    if (failed(grad))
      return failure();
    accumulate(target, *grad, loc);
  }
  // A captured parameter's gradient is a sum over all edges: each vertex
  // sums its in-edges' contributions into a row of the parameter's shape,
  // then the rows are summed. This materialises one parameter-sized row per
  // vertex (what operator motion avoids by moving the use to the vertex
  // side, where the product becomes one GEMM).
  for (Value param : captured) {
    auto type = tensorType(param);
    auto rowType = VertexType::get(b.getContext(), type.getShape(),
                                   type.getElementType());
    auto grad = backward(rowType, /*reversed=*/false,
                         [&](IRMapping &) { return param; });
    if (failed(grad))
      return failure();
    accumulate(param, SumRowsOp::create(b, loc, type, *grad), loc);
  }
  return success();
}

LogicalResult ModelDiff::modelLevel(Operation *op) {
  Location loc = op->getLoc();
  if (auto lin = dyn_cast<LinearOp>(op)) {
    Value g = grads.lookup(lin.getResult());
    if (!g)
      return success();
    if (active(lin.getInput())) // not for the input features
      accumulate(lin.getInput(),
                 LinearGradInputOp::create(b, loc, lin.getInput().getType(), g,
                                           lin.getWeight()),
                 loc);
    accumulate(lin.getWeight(),
               LinearGradWeightOp::create(b, loc, lin.getWeight().getType(),
                                          lin.getInput(), g),
               loc);
    return success();
  }
  if (auto ce = dyn_cast<CrossEntropyOp>(op)) {
    Value g = grads.lookup(ce.getResult());
    if (g)
      accumulate(ce.getLogits(),
                 CrossEntropyGradOp::create(b, loc, ce.getLogits().getType(),
                                            ce.getLogits(), ce.getLabels(), g),
                 loc);
    return success();
  }
  if (auto bn = dyn_cast<BatchNormOp>(op)) {
    Value g = grads.lookup(bn.getResult());
    if (g && active(bn.getInput()))
      accumulate(bn.getInput(),
                 BatchNormGradOp::create(b, loc, g.getType(), bn.getInput(), g),
                 loc);
    return success();
  }
  if (auto pl = dyn_cast<PairBceOp>(op)) {
    Value g = grads.lookup(pl.getResult());
    if (g && active(pl.getInput()))
      accumulate(pl.getInput(),
                 PairBceGradOp::create(b, loc, pl.getInput().getType(),
                                       pl.getInput(), g),
                 loc);
    return success();
  }
  if (auto r = dyn_cast<ReadoutOp>(op)) {
    // A sum (mean) readout is its own adjoint: each vertex of a graph gets
    // the sum (mean) of the graph's incoming gradient. A max (min) readout
    // routes that sum to the graph's arg max (arg min) of each element.
    Value g = grads.lookup(r.getResult());
    if (!g || !active(r.getInput()))
      return success();
    ReduceKind kind = r.getKind();
    Value dx = kind == ReduceKind::sum || kind == ReduceKind::mean
                   ? Value(ReadoutOp::create(b, loc, g.getType(), kind, g))
                   : Value(ReadoutGradOp::create(b, loc, g.getType(), kind,
                                                 r.getInput(), r.getResult(),
                                                 g));
    accumulate(r.getInput(), dx, loc);
    return success();
  }
  if (auto l2 = dyn_cast<L2Op>(op)) {
    Value g = grads.lookup(l2.getResult());
    if (g)
      accumulate(l2.getInput(),
                 MulOp::create(b, loc, l2.getInput().getType(), g,
                               l2.getInput()),
                 loc);
    return success();
  }
  if (isa<AddOp, SubOp, MulOp, DivOp, NegOp>(op)) {
    DenseMap<Value, Value> local;
    Value g = grads.lookup(op->getResult(0));
    if (!g)
      return success();
    local[op->getResult(0)] = g;
    if (failed(vjp({op}, b, local)))
      return failure();
    for (Value v : op->getOperands())
      if (Value dv = local.lookup(v))
        accumulate(v, dv, loc);
    return success();
  }
  if (isa<ParamOp, DegreeOp, VertexIdOp, arith::ConstantOp>(op))
    return success();
  return op->emitOpError() << "has no gradient rule yet";
}

LogicalResult ModelDiff::run() {
  Block &block = model.getBody().front();
  auto ret = cast<ReturnOp>(block.getTerminator());
  Value loss;
  for (Value v : ret.getOperands())
    if (auto t = dyn_cast<RankedTensorType>(v.getType()); t && t.getRank() == 0)
      loss = v;
  if (!loss)
    return model.emitOpError() << "training needs a scalar 'loss' result";

  // Every dropout gets a key so its backward reproduces its mask.
  int64_t key = 0;
  model.walk([&](DropoutOp d) { d.setKeyAttr(b.getI64IntegerAttr(key++)); });

  SmallVector<Operation *> forward;
  for (Operation &op : block.without_terminator())
    forward.push_back(&op);
  // Activity: parameters, and whatever is computed from them (operands or
  // values a body captures).
  for (Operation *op : forward) {
    bool isActive = isa<ParamOp>(op);
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        isActive |= active(v);
    });
    if (isActive)
      for (Value r : op->getResults())
        activeValues.insert(r);
  }
  b.setInsertionPoint(ret);
  grads[loss] = GradBuilder(b, ret.getLoc()).constant({}, 1.0);
  for (Operation *op : llvm::reverse(forward)) {
    LogicalResult r = success();
    if (auto a = dyn_cast<ApplyVertexOp>(op))
      r = applyVertex(a);
    else if (auto p = dyn_cast<PropagateOp>(op))
      r = propagate(p);
    else
      r = modelLevel(op);
    if (failed(r))
      return failure();
  }

  // Results: the loss, then d loss / d param for every parameter. The
  // model's other results (its predictions) are not returned: a training
  // step does not need them (an evaluation pass gives them), and returning
  // one would keep a [V, classes] buffer alive through the whole backward.
  SmallVector<Value> results{loss};
  SmallVector<Attribute> names;
  for (Operation *op : forward) {
    auto p = dyn_cast<ParamOp>(op);
    if (!p)
      continue;
    Value g = grads.lookup(p.getResult());
    if (!g)
      g = GradBuilder(b, p.getLoc())
              .constant(tensorType(p.getResult()).getShape(), 0.0);
    results.push_back(g);
    names.push_back(p.getNameAttr());
  }
  ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  model.setType(FunctionType::get(model.getContext(),
                                  model.getArgumentTypes(),
                                  ValueRange(results).getTypes()));
  model->setAttr("saga.gradients", b.getArrayAttr(names));
  return success();
}

struct Autodiff : public saga::impl::SagaAutodiffBase<Autodiff> {
  void runOnOperation() override {
    for (ModelOp model : getOperation().getOps<ModelOp>())
      if (failed(ModelDiff(model).run()))
        return signalPassFailure();
  }
};

} // namespace
