//===- SagaOps.cpp - verifiers of the stage and tensor ops ----------------===//
//
// Every message names the problem in the user's terms (domains, shapes, the
// stage body) so that front-end bugs and hand-written IR read alike.
//
//===----------------------------------------------------------------------===//

#include "dialect/Saga.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace saga;

std::string saga::formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << '[';
  llvm::interleaveComma(shape, os);
  os << ']';
  return s;
}

FailureOr<SmallVector<int64_t>> saga::broadcastShapes(ArrayRef<int64_t> a,
                                                      ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1)
      return failure();
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

static StringRef domainName(bool edge) { return edge ? "edge" : "vertex"; }
static StringRef article(bool edge) { return edge ? "an" : "a"; }

// "1 value", "2 values".
static std::string count(size_t n, StringRef noun) {
  return std::to_string(n) + " " + noun.str() + (n == 1 ? "" : "s");
}

// An axis in [-rank, rank) normalised to [0, rank), or failure.
static FailureOr<int64_t> normaliseAxis(Operation *op, int64_t axis,
                                        int64_t rank) {
  if (axis < -rank || axis >= rank) {
    op->emitOpError() << "axis " << axis << " is out of range for a tensor of "
                      << "rank " << rank;
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

//===----------------------------------------------------------------------===//
// Graph built-ins and stages
//===----------------------------------------------------------------------===//

LogicalResult DegreeOp::verify() {
  auto type = cast<VertexType>(getType());
  if (!type.getShape().empty() || !isa<FloatType>(type.getElementType()))
    return emitOpError() << "the degree is one float per vertex "
                         << "(!saga.vertex<f32>), not " << type;
  return success();
}

LogicalResult VertexIdOp::verify() {
  auto type = cast<VertexType>(getType());
  if (!type.getShape().empty() || !isa<IntegerType>(type.getElementType()))
    return emitOpError() << "the vertex id is one integer per vertex "
                         << "(!saga.vertex<i32>), not " << type;
  return success();
}

LogicalResult ScatterOp::verify() {
  auto in = cast<DomainType>(getInput().getType());
  auto out = cast<DomainType>(getType());
  if (in.isEdgeDomain())
    return emitOpError() << "scatters a vertex value onto edges, but its "
                         << "input is an edge value";
  if (!out.isEdgeDomain())
    return emitOpError() << "produces an edge value, but its result type is "
                         << getType();
  if (in.getShape() != out.getShape() ||
      in.getElementType() != out.getElementType())
    return emitOpError() << "keeps the feature type: input "
                         << in.getElementTensorType() << " but result "
                         << out.getElementTensorType();
  return success();
}

LogicalResult saga::canonicalizeApplyOp(Operation *op,
                                       PatternRewriter &rewriter) {
  // A gather's message and score must come from one apply_edge
  // (FormPropagation matches them there), so apply_edge stays as written.
  if (isa<ApplyEdgeOp>(op))
    return failure();
  Block &block = op->getRegion(0).front();
  auto yield = cast<YieldOp>(block.getTerminator());
  bool changed = false;
  for (auto [result, yielded] :
       llvm::zip(op->getResults(), yield.getOperands())) {
    auto arg = dyn_cast<BlockArgument>(yielded);
    if (!arg || arg.getOwner() != &block || result.use_empty())
      continue;
    Value input = op->getOperand(arg.getArgNumber());
    if (input.getType() != result.getType())
      continue;
    rewriter.replaceAllUsesWith(result, input);
    changed = true;
  }
  SmallVector<unsigned> keptResults, keptInputs;
  for (OpResult r : op->getResults())
    if (!r.use_empty())
      keptResults.push_back(r.getResultNumber());
  if (keptResults.empty()) {
    rewriter.eraseOp(op); // the body has no effects beyond its results
    return success();
  }
  for (BlockArgument a : block.getArguments())
    if (!a.use_empty())
      keptInputs.push_back(a.getArgNumber());
  if (keptResults.size() == op->getNumResults() &&
      keptInputs.size() == op->getNumOperands())
    return success(changed);

  OperationState state(op->getLoc(), op->getName());
  for (unsigned i : keptInputs)
    state.addOperands(op->getOperand(i));
  for (unsigned i : keptResults)
    state.addTypes(op->getResult(i).getType());
  state.addAttributes(op->getAttrs());
  state.addRegion();
  Operation *replacement = rewriter.create(state);
  Region &region = replacement->getRegion(0);
  rewriter.inlineRegionBefore(op->getRegion(0), region, region.end());
  Block &body = region.front();
  SmallVector<Value> yields;
  for (unsigned i : keptResults)
    yields.push_back(yield.getOperand(i));
  rewriter.modifyOpInPlace(yield, [&] { yield->setOperands(yields); });
  llvm::BitVector unusedArgs(body.getNumArguments(), true);
  for (unsigned i : keptInputs)
    unusedArgs.reset(i);
  rewriter.modifyOpInPlace(replacement,
                           [&] { body.eraseArguments(unusedArgs); });
  for (auto [k, i] : llvm::enumerate(keptResults))
    rewriter.replaceAllUsesWith(op->getResult(i), replacement->getResult(k));
  rewriter.eraseOp(op);
  return success();
}

LogicalResult saga::verifyApplyOp(Operation *op, bool edgeDomain) {
  StringRef domain = domainName(edgeDomain);
  Region &body = op->getRegion(0);
  Block &block = body.front();
  if (block.getNumArguments() != op->getNumOperands())
    return op->emitOpError() << "body takes "
                             << count(block.getNumArguments(), "argument")
                             << " but the stage has "
                             << count(op->getNumOperands(), "input");
  for (auto [i, input] : llvm::enumerate(op->getOperands())) {
    auto type = cast<DomainType>(input.getType());
    if (type.isEdgeDomain() != edgeDomain)
      return op->emitOpError()
             << "input #" << i << " is " << article(type.isEdgeDomain()) << " "
             << domainName(type.isEdgeDomain()) << " value; "
             << op->getName().stripDialect() << " takes only " << domain
             << " values";
    if (block.getArgument(i).getType() != type.getElementTensorType())
      return op->emitOpError()
             << "body argument #" << i << " must be the per-" << domain
             << " tensor " << type.getElementTensorType() << " of input #" << i
             << ", not " << block.getArgument(i).getType();
  }
  auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
  if (!yield)
    return op->emitOpError() << "body must end with saga.yield";
  if (yield.getNumOperands() != op->getNumResults())
    return op->emitOpError() << "body yields "
                             << count(yield.getNumOperands(), "value")
                             << " but the stage has "
                             << count(op->getNumResults(), "result");
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    auto type = cast<DomainType>(result.getType());
    if (type.isEdgeDomain() != edgeDomain)
      return op->emitOpError() << "result #" << i << " must be "
                               << article(edgeDomain) << " " << domain
                               << " value, not " << result.getType();
    if (yield.getOperand(i).getType() != type.getElementTensorType())
      return op->emitOpError()
             << "body yields " << yield.getOperand(i).getType()
             << " for result #" << i << " of type " << result.getType()
             << ", which needs " << type.getElementTensorType();
  }
  // Graph-wide values enter a body only through its inputs, and none is
  // made inside it.
  WalkResult walk = body.walk([&](Operation *inner) {
    if (llvm::any_of(inner->getResultTypes(), llvm::IsaPred<DomainType>)) {
      inner->emitOpError() << "makes a graph-wide value inside an "
                           << op->getName().stripDialect()
                           << " body, which computes one element at a time";
      return WalkResult::interrupt();
    }
    for (Value v : inner->getOperands()) {
      if (!isa<DomainType>(v.getType()) ||
          body.isAncestor(v.getParentRegion()))
        continue;
      bool edge = cast<DomainType>(v.getType()).isEdgeDomain();
      inner->emitOpError()
          << "uses " << article(edge) << " " << domainName(edge)
          << " value defined outside the " << op->getName().stripDialect()
          << " body; pass it in as an input";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult GatherOp::verify() {
  auto in = cast<DomainType>(getInput().getType());
  auto out = cast<DomainType>(getType());
  if (!in.isEdgeDomain())
    return emitOpError() << "reduces edge values into vertices, but its input "
                         << "is a vertex value";
  if (out.isEdgeDomain())
    return emitOpError() << "produces a vertex value, but its result type is "
                         << getType();
  if (in.getShape() != out.getShape() ||
      in.getElementType() != out.getElementType())
    return emitOpError() << "keeps the feature type: input "
                         << in.getElementTensorType() << " but result "
                         << out.getElementTensorType();
  bool softmax = getKind() == GatherKind::softmax_sum;
  if (softmax && !getScore())
    return emitOpError() << "softmax_sum needs a score per edge ('score %s')";
  if (!softmax && getScore())
    return emitOpError() << "only softmax_sum takes a score; "
                         << stringifyGatherKind(getKind()) << " does not";
  if (auto rate = getDropout()) {
    if (!softmax)
      return emitOpError() << "only softmax_sum takes an attention dropout";
    double r = rate->convertToDouble();
    if (!(r >= 0.0 && r < 1.0))
      return emitOpError() << "dropout rate must be in [0, 1), got " << r;
  }
  if (!getScore())
    return success();
  auto score = cast<DomainType>(getScore().getType());
  if (!score.isEdgeDomain())
    return emitOpError() << "score must be an edge value, not "
                         << getScore().getType();
  ArrayRef<int64_t> s = score.getShape(), v = in.getShape();
  if (s.size() > v.size() || s != v.take_front(s.size()))
    return emitOpError() << "score shape " << formatShape(s)
                         << " must be a prefix of the value shape "
                         << formatShape(v) << " (one score per head)";
  if (score.getElementType() != in.getElementType())
    return emitOpError() << "score element type " << score.getElementType()
                         << " differs from the value's "
                         << in.getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// Tensor ops
//===----------------------------------------------------------------------===//

LogicalResult saga::verifyBroadcastOp(Operation *op) {
  auto lhs = cast<RankedTensorType>(op->getOperand(0).getType());
  auto rhs = cast<RankedTensorType>(op->getOperand(1).getType());
  auto res = cast<RankedTensorType>(op->getResult(0).getType());
  if (lhs.getElementType() != rhs.getElementType() ||
      lhs.getElementType() != res.getElementType())
    return op->emitOpError() << "operands and result must share an element "
                             << "type, got " << lhs.getElementType() << ", "
                             << rhs.getElementType() << " -> "
                             << res.getElementType();
  auto shape = broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return op->emitOpError() << "operand shapes " << formatShape(lhs.getShape())
                             << " and " << formatShape(rhs.getShape())
                             << " do not broadcast";
  if (ArrayRef<int64_t>(*shape) != res.getShape())
    return op->emitOpError() << "result shape " << formatShape(res.getShape())
                             << " differs from the broadcast shape "
                             << formatShape(*shape);
  return success();
}

// A readout reduces f32 rows of any shape; its gradient's operands have the
// readout's type.
static LogicalResult verifyReadoutType(Operation *op, Type type) {
  if (!isa<FloatType>(cast<VertexType>(type).getElementType()))
    return op->emitOpError() << "reads f32 vertex values, not " << type;
  return success();
}

LogicalResult ReadoutOp::verify() {
  return verifyReadoutType(*this, getInput().getType());
}

LogicalResult ReadoutGradOp::verify() {
  if (getKind() != ReduceKind::max && getKind() != ReduceKind::min)
    return emitOpError() << "is for max and min readouts; a sum or mean "
                         << "readout's gradient is a readout of the gradient";
  return verifyReadoutType(*this, getInput().getType());
}

LogicalResult SumRowsOp::verify() {
  auto in = cast<VertexType>(getInput().getType());
  if (in.getElementTensorType() != getType())
    return emitOpError() << "the result is one vertex's tensor, "
                         << in.getElementTensorType();
  return success();
}

LogicalResult LeakyReluOp::verify() {
  if (!(getSlope().convertToDouble() >= 0))
    return emitOpError() << "slope must be a non-negative number, got "
                         << getSlope().convertToDouble();
  return success();
}

LogicalResult DropoutOp::verify() {
  double rate = getRate().convertToDouble();
  if (!(rate >= 0.0 && rate < 1.0))
    return emitOpError() << "rate must be in [0, 1), got " << rate;
  return success();
}

LogicalResult MatmulOp::verify() {
  ArrayRef<int64_t> a = shapeOf(getLhs()), b = shapeOf(getRhs());
  if (a.empty() || b.empty())
    return emitOpError() << "operands must have rank >= 1, got "
                         << formatShape(a) << " @ " << formatShape(b);
  if (a.back() != b.front())
    return emitOpError() << "contracted dimensions differ: "
                         << formatShape(a) << " @ " << formatShape(b)
                         << " (last of lhs " << a.back()
                         << " vs first of rhs " << b.front() << ")";
  SmallVector<int64_t> expected(a.drop_back());
  llvm::append_range(expected, b.drop_front());
  if (ArrayRef<int64_t>(expected) != shapeOf(getResult()))
    return emitOpError() << "result shape " << formatShape(shapeOf(getResult()))
                         << " should be " << formatShape(expected);
  if (getElementTypeOrSelf(getLhs()) != getElementTypeOrSelf(getRhs()) ||
      getElementTypeOrSelf(getLhs()) != getElementTypeOrSelf(getResult()))
    return emitOpError() << "operands and result must share an element type";
  return success();
}

LogicalResult ReduceOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  int64_t signedAxis = static_cast<int64_t>(getAxis());
  auto axis = normaliseAxis(*this, signedAxis, in.size());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> expected(in);
  expected.erase(expected.begin() + *axis);
  if (ArrayRef<int64_t>(expected) != shapeOf(getResult()))
    return emitOpError() << "reducing axis " << signedAxis << " of "
                         << formatShape(in) << " gives "
                         << formatShape(expected) << ", not "
                         << formatShape(shapeOf(getResult()));
  if (getElementTypeOrSelf(getInput()) != getElementTypeOrSelf(getResult()))
    return emitOpError() << "the result has the input's element type";
  return success();
}

LogicalResult SliceOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  int64_t signedAxis = static_cast<int64_t>(getAxis());
  auto axis = normaliseAxis(*this, signedAxis, in.size());
  if (failed(axis))
    return failure();
  int64_t offset = static_cast<int64_t>(getOffset());
  int64_t size = static_cast<int64_t>(getSize());
  if (offset < 0 || size < 1 || offset + size > in[*axis])
    return emitOpError() << "range [" << offset << ", " << offset + size
                         << ") is not within axis " << signedAxis
                         << " of size " << in[*axis];
  SmallVector<int64_t> expected(in);
  expected[*axis] = size;
  if (ArrayRef<int64_t>(expected) != shapeOf(getResult()))
    return emitOpError() << "result shape " << formatShape(shapeOf(getResult()))
                         << " should be " << formatShape(expected);
  if (getElementTypeOrSelf(getResult()) != getElementTypeOrSelf(getInput()))
    return emitOpError() << "the result has the input's element type";
  return success();
}

LogicalResult ConcatOp::verify() {
  if (getInputs().size() < 2)
    return emitOpError() << "needs at least two inputs";
  ArrayRef<int64_t> first = shapeOf(getInputs()[0]);
  int64_t signedAxis = static_cast<int64_t>(getAxis());
  auto axis = normaliseAxis(*this, signedAxis, first.size());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> expected(first);
  for (auto [i, v] : llvm::enumerate(getInputs().drop_front())) {
    ArrayRef<int64_t> s = shapeOf(v);
    bool ok = s.size() == first.size();
    for (size_t d = 0; ok && d < s.size(); ++d)
      ok = d == static_cast<size_t>(*axis) || s[d] == first[d];
    if (!ok)
      return emitOpError() << "input #" << i + 1 << " has shape "
                           << formatShape(s) << ", which does not match "
                           << formatShape(first) << " outside axis "
                           << signedAxis;
    if (getElementTypeOrSelf(v) != getElementTypeOrSelf(getInputs()[0]))
      return emitOpError() << "inputs must share an element type";
    expected[*axis] += s[*axis];
  }
  if (ArrayRef<int64_t>(expected) != shapeOf(getResult()))
    return emitOpError() << "result shape " << formatShape(shapeOf(getResult()))
                         << " should be " << formatShape(expected);
  if (getElementTypeOrSelf(getResult()) != getElementTypeOrSelf(getInputs()[0]))
    return emitOpError() << "the result has the inputs' element type";
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getType());
  if (in.getNumElements() != out.getNumElements())
    return emitOpError() << "cannot reshape " << formatShape(in.getShape())
                         << " (" << in.getNumElements() << " elements) to "
                         << formatShape(out.getShape()) << " ("
                         << out.getNumElements() << " elements)";
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "cannot change the element type";
  return success();
}

LogicalResult CrossEntropyOp::verify() {
  auto logits = cast<VertexType>(getLogits().getType());
  auto labels = cast<VertexType>(getLabels().getType());
  if (logits.getShape().size() != 1 || !isa<FloatType>(logits.getElementType()))
    return emitOpError() << "logits must be a float vector per vertex "
                         << "(one score per class), got " << logits;
  if (!labels.getShape().empty() || !isa<IntegerType>(labels.getElementType()))
    return emitOpError() << "labels must be one integer class per vertex, got "
                         << labels;
  if (getElementTypeOrSelf(getType()) != logits.getElementType())
    return emitOpError() << "the loss has the logits' element type "
                         << logits.getElementType();
  return success();
}

static LogicalResult verifyBatchNormRows(Operation *op, Type type) {
  auto rows = cast<VertexType>(type);
  if (rows.getShape().size() != 1 || !isa<FloatType>(rows.getElementType()))
    return op->emitOpError() << "standardises float vectors (one per "
                             << "vertex), got " << rows;
  return success();
}

LogicalResult BatchNormOp::verify() {
  return verifyBatchNormRows(*this, getInput().getType());
}

LogicalResult BatchNormGradOp::verify() {
  return verifyBatchNormRows(*this, getInput().getType());
}

static LogicalResult verifyPairRows(Operation *op, VertexType rows) {
  if (rows.getShape().size() != 1 || !isa<FloatType>(rows.getElementType()))
    return op->emitOpError() << "scores pairs of float vectors (one per "
                             << "vertex), got " << rows;
  return success();
}

LogicalResult PairBceOp::verify() {
  auto rows = cast<VertexType>(getInput().getType());
  if (failed(verifyPairRows(*this, rows)))
    return failure();
  if (getElementTypeOrSelf(getType()) != rows.getElementType())
    return emitOpError() << "the loss has the rows' element type "
                         << rows.getElementType();
  return success();
}

LogicalResult PairBceGradOp::verify() {
  auto rows = cast<VertexType>(getInput().getType());
  if (failed(verifyPairRows(*this, rows)))
    return failure();
  if (getElementTypeOrSelf(getGrad().getType()) != rows.getElementType())
    return emitOpError() << "the gradient has the rows' element type "
                         << rows.getElementType();
  return success();
}

LogicalResult L2Op::verify() {
  if (getElementTypeOrSelf(getType()) != getElementTypeOrSelf(getInput()))
    return emitOpError() << "the result has the input's element type";
  return success();
}

//===----------------------------------------------------------------------===//
// Graph-tensor and plan levels
//===----------------------------------------------------------------------===//

// The operands of an edge body (propagate, edge_map): src and dst vertex
// values and edge values, one block argument per operand in that order,
// typed as its per-element tensor.
static LogicalResult verifyEdgeBodyOperands(Operation *op, ValueRange srcs,
                                            ValueRange dsts, ValueRange edges,
                                            Block &block) {
  if (block.getNumArguments() != op->getNumOperands())
    return op->emitOpError() << "body takes "
                             << count(block.getNumArguments(), "argument")
                             << " but the op has "
                             << count(op->getNumOperands(), "operand");
  auto check = [&](ValueRange values, bool edge, StringRef group,
                   unsigned first) -> LogicalResult {
    for (auto [i, v] : llvm::enumerate(values)) {
      auto type = cast<DomainType>(v.getType());
      if (type.isEdgeDomain() != edge)
        return op->emitOpError() << group << " operand #" << i << " must be "
                                 << article(edge) << " " << domainName(edge)
                                 << " value, not " << v.getType();
      if (block.getArgument(first + i).getType() != type.getElementTensorType())
        return op->emitOpError() << "body argument #" << first + i
                                 << " must be " << type.getElementTensorType();
    }
    return success();
  };
  if (failed(check(srcs, false, "src", 0)) ||
      failed(check(dsts, false, "dst", srcs.size())) ||
      failed(check(edges, true, "edge", srcs.size() + dsts.size())))
    return failure();
  return success();
}

LogicalResult PropagateOp::verify() {
  Block &block = getBody().front();
  if (failed(verifyEdgeBodyOperands(*this, getSrcs(), getDsts(), getEdges(),
                                    block)))
    return failure();
  auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
  if (!yield)
    return emitOpError() << "body must end with saga.yield";
  bool softmax = getKind() == GatherKind::softmax_sum;
  unsigned expected = softmax ? 2 : 1;
  if (yield.getNumOperands() != expected)
    return emitOpError() << "body yields "
                         << count(yield.getNumOperands(), "value") << " but "
                         << stringifyGatherKind(getKind()) << " needs "
                         << (softmax ? "a message and a score" : "a message");
  auto result = cast<DomainType>(getType());
  if (result.isEdgeDomain())
    return emitOpError() << "produces a vertex value, not " << getType();
  if (yield.getOperand(0).getType() != result.getElementTensorType())
    return emitOpError() << "message type " << yield.getOperand(0).getType()
                         << " differs from the result's per-vertex "
                         << result.getElementTensorType();
  if (softmax) {
    ArrayRef<int64_t> s = shapeOf(yield.getOperand(1)),
                      v = result.getShape();
    if (s.size() > v.size() || s != v.take_front(s.size()))
      return emitOpError() << "score shape " << formatShape(s)
                           << " must be a prefix of the message shape "
                           << formatShape(v);
  }
  return success();
}

/// Drops the operands the body never reads (autodiff's recomputed softmax
/// maximum and sum take the layer's whole operand list but read only the
/// scores), so that the plan does not keep them alive for it.
LogicalResult PropagateOp::canonicalize(PropagateOp op,
                                        PatternRewriter &rewriter) {
  Block &block = op.getBody().front();
  if (llvm::all_of(block.getArguments(),
                   [](BlockArgument a) { return !a.use_empty(); }))
    return failure();
  SmallVector<Value> groups[3];
  llvm::BitVector unused(block.getNumArguments());
  unsigned index = 0;
  OperandRange ranges[] = {op.getSrcs(), op.getDsts(), op.getEdges()};
  for (unsigned g = 0; g < 3; ++g)
    for (Value v : ranges[g]) {
      if (block.getArgument(index).use_empty())
        unused.set(index);
      else
        groups[g].push_back(v);
      ++index;
    }
  auto replacement = PropagateOp::create(
      rewriter, op.getLoc(), op.getType(), op.getKind(), groups[0], groups[1],
      groups[2], op.getReversed());
  for (NamedAttribute attr : op->getDiscardableAttrs())
    replacement->setAttr(attr.getName(), attr.getValue());
  Region &region = replacement.getBody();
  rewriter.inlineRegionBefore(op.getBody(), region, region.end());
  rewriter.modifyOpInPlace(replacement,
                           [&] { region.front().eraseArguments(unused); });
  rewriter.replaceOp(op, replacement.getResult());
  return success();
}

LogicalResult EdgeMapOp::verify() {
  Block &block = getBody().front();
  if (failed(verifyEdgeBodyOperands(*this, getSrcs(), getDsts(), getEdges(),
                                    block)))
    return failure();
  auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
  if (!yield)
    return emitOpError() << "body must end with saga.yield";
  if (yield.getNumOperands() != getNumResults())
    return emitOpError() << "body yields "
                         << count(yield.getNumOperands(), "value")
                         << " but the op has "
                         << count(getNumResults(), "result");
  for (auto [i, result] : llvm::enumerate(getResults())) {
    auto type = cast<DomainType>(result.getType());
    if (!type.isEdgeDomain())
      return emitOpError() << "result #" << i << " must be an edge value, not "
                           << result.getType();
    if (yield.getOperand(i).getType() != type.getElementTensorType())
      return emitOpError() << "body yields " << yield.getOperand(i).getType()
                           << " for result #" << i << " of type "
                           << result.getType() << ", which needs "
                           << type.getElementTensorType();
  }
  return success();
}

LogicalResult LinearOp::verify() {
  auto in = cast<VertexType>(getInput().getType());
  auto out = cast<VertexType>(getType());
  ArrayRef<int64_t> w = shapeOf(getWeight());
  if (in.getShape().size() != 1)
    return emitOpError() << "input must be one vector per vertex, got "
                         << in;
  if (w.size() < 2 || w.front() != in.getShape()[0])
    return emitOpError() << "weight " << formatShape(w)
                         << " must be [" << in.getShape()[0] << ", ...]";
  if (out.getShape() != w.drop_front())
    return emitOpError() << "result per-vertex shape must be "
                         << formatShape(w.drop_front());
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  // A func.func at kernel level, an llvm.func once lowered for the CPU.
  auto fn = symbolTable.lookupNearestSymbolFrom<FunctionOpInterface>(
      *this, getCalleeAttr());
  if (!fn)
    return emitOpError() << "kernel '" << getCallee() << "' is not a function";
  return success();
}

#define GET_OP_CLASSES
#include "dialect/SagaOps.cpp.inc"

LogicalResult ScheduleOp::verify() {
  ArrayRef<int32_t> bounds = getIntervals();
  if (bounds.size() < 2 || bounds.front() != 0 ||
      bounds.back() != int64_t(getVertices()))
    return emitOpError() << "intervals must run from 0 to the " << getVertices()
                         << " vertices";
  for (size_t k = 1; k < bounds.size(); ++k)
    if (bounds[k] <= bounds[k - 1])
      return emitOpError() << "interval bounds must increase (" << bounds[k - 1]
                           << ", then " << bounds[k] << ")";
  const int64_t parts = int64_t(bounds.size()) - 1;
  if (auto empty = getEmptyChunks()) {
    int64_t previous = -1;
    for (int32_t c : *empty) {
      if (c < 0 || c >= parts * parts || c <= previous)
        return emitOpError() << "empty_chunks must be increasing chunk numbers "
                                "i * P + j below "
                             << parts * parts << " (found " << c << ")";
      previous = c;
    }
  }
  if (auto edges = getChunkEdges()) {
    if (int64_t(edges->size()) != parts * parts)
      return emitOpError() << "chunk_edges must hold P x P = " << parts * parts
                           << " counts (found " << edges->size() << ")";
    int64_t total = 0;
    for (int64_t n : *edges) {
      if (n < 0)
        return emitOpError() << "chunk_edges must not be negative (found "
                             << n << ")";
      total += n;
    }
    if (total != int64_t(getEdges()))
      return emitOpError() << "chunk_edges add up to " << total
                           << " edges, not the graph's " << getEdges();
    if (auto empty = getEmptyChunks())
      for (int32_t c : *empty)
        if ((*edges)[size_t(c)] != 0)
          return emitOpError() << "chunk " << c << " is listed empty but "
                               << "chunk_edges gives it " << (*edges)[size_t(c)]
                               << " edges";
  }
  int64_t next = 0;
  for (Operation &op : getBody().front()) {
    if (auto step = dyn_cast<StepOp>(op)) {
      int64_t index = step.getIndex(), i = step.getI(), j = step.getJ();
      if (index != next)
        return step.emitOpError() << "steps must be numbered in order: expected "
                                  << next << ", found " << index;
      if (i < -1 || i >= parts || j < -1 || j >= parts)
        return step.emitOpError() << "chunk [" << i << ", " << j
                                  << "] is outside the " << parts
                                  << " intervals";
      ++next;
      continue;
    }
    if (!isa<PrefetchOp, LoadOp, StoreOp, FreeOp>(op))
      return op.emitOpError() << "cannot be in a schedule";
    int64_t piece = op.getAttrOfType<IntegerAttr>("piece").getInt();
    if (piece < -1 || piece >= parts)
      return op.emitOpError() << "piece " << piece << " is outside the "
                              << parts << " intervals";
    if (auto rows = op.getAttrOfType<IntegerAttr>("rows")) {
      if (!isa<PrefetchOp, LoadOp>(op))
        return op.emitOpError() << "only a load reads some rows";
      if (rows.getInt() < 1)
        return op.emitOpError() << "loads at least one row (found "
                                << rows.getInt() << ")";
      if (piece < 0 || op.hasAttr("state"))
        return op.emitOpError() << "rows are loaded from an interval's piece "
                                   "of a value";
    }
    if (op.hasAttr("state")) {
      auto launch = op.getOperand(0).getDefiningOp<LaunchOp>();
      if (!launch || !launch.getPropagate())
        return op.emitOpError() << "a state piece belongs to a propagation's "
                                   "result";
    }
  }
  return success();
}
