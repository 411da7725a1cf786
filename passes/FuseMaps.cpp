//===- FuseMaps.cpp - chains of apply_vertex into one ---------------------===//
//
// An apply_vertex whose result only feeds another apply_vertex is merged
// into it: one body that computes both, one kernel, no intermediate row
// written to memory. GCN's normalisation, bias and ReLU after a
// propagation become one map, which lower-to-kernels then fuses into the
// propagation's kernel as its epilogue.
//
// A map can be the epilogue of only one propagation: the one right before
// it. When it reads several, the widest is moved there, so that the
// widest row is the one never stored.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "llvm/ADT/BitVector.h"

namespace saga {
#define GEN_PASS_DEF_SAGAFUSEMAPS
#include "passes/Passes.h.inc"
} // namespace saga

using namespace mlir;
using namespace saga;

namespace {

/// The producer to merge into `consumer`: a single-result apply_vertex in
/// the same block whose result only `consumer` reads.
ApplyVertexOp producerOf(ApplyVertexOp consumer) {
  for (Value in : consumer.getInputs()) {
    auto producer = in.getDefiningOp<ApplyVertexOp>();
    if (!producer || producer->getNumResults() != 1 ||
        producer->getBlock() != consumer->getBlock())
      continue;
    if (llvm::all_of(in.getUsers(), [&](Operation *user) {
          return user == consumer.getOperation();
        }))
      return producer;
  }
  return nullptr;
}

} // namespace

int64_t saga::rowElements(Value v) {
  return cast<DomainType>(v.getType()).getElementTensorType().getNumElements();
}

ApplyVertexOp saga::mergeApplyVertex(ApplyVertexOp producer,
                                     ApplyVertexOp consumer) {
  Value link = producer->getResult(0);
  SmallVector<Value> inputs;
  for (Value in : consumer.getInputs())
    if (in != link)
      inputs.push_back(in);
  unsigned producerStart = inputs.size();
  llvm::append_range(inputs, producer.getInputs());

  OpBuilder b(consumer);
  auto merged = ApplyVertexOp::create(b, consumer.getLoc(),
                                      consumer->getResultTypes(), inputs);
  Block *body = new Block();
  merged.getBody().push_back(body);
  for (Value in : inputs)
    body->addArgument(cast<DomainType>(in.getType()).getElementTensorType(),
                      in.getLoc());
  OpBuilder inner(merged.getContext());
  inner.setInsertionPointToEnd(body);

  IRMapping map;
  Block &pBody = producer.getBody().front();
  for (auto [i, arg] : llvm::enumerate(pBody.getArguments()))
    map.map(arg, body->getArgument(producerStart + i));
  for (Operation &op : pBody.without_terminator())
    inner.clone(op, map);
  Value produced = map.lookupOrDefault(pBody.getTerminator()->getOperand(0));

  Block &cBody = consumer.getBody().front();
  unsigned next = 0;
  for (auto [in, arg] : llvm::zip(consumer.getInputs(), cBody.getArguments()))
    map.map(arg, in == link ? produced : body->getArgument(next++));
  for (Operation &op : cBody.without_terminator())
    inner.clone(op, map);
  SmallVector<Value> yields;
  for (Value y : cBody.getTerminator()->getOperands())
    yields.push_back(map.lookupOrDefault(y));
  YieldOp::create(inner, consumer.getLoc(), yields);

  consumer->replaceAllUsesWith(merged);
  consumer.erase();
  producer.erase();
  return merged;
}

namespace {

/// Sibling propagations: ones of the same kind and direction (not
/// softmax_sum, whose reduction is not elementwise) read only by the same
/// map. They walk the same edges, so one kernel can reduce them all: they
/// become one propagation whose body evaluates every sibling's body (common
/// subexpressions merged: GAT's backward recomputes each edge's attention
/// weight for both) and yields their messages flattened and concatenated;
/// the map slices its parts back out. With the map as the epilogue, none of
/// the siblings' results is stored, and the edges are walked once.
void mergeSiblingPropagations(Block &block) {
  for (auto map : llvm::to_vector(block.getOps<ApplyVertexOp>())) {
    // Siblings by (kind, reversed), in block order.
    SmallVector<SmallVector<PropagateOp>> groups;
    for (Value in : map.getInputs()) {
      auto prop = in.getDefiningOp<PropagateOp>();
      if (!prop || prop->getBlock() != &block || !in.hasOneUse() ||
          prop.getKind() == GatherKind::softmax_sum ||
          !cast<DomainType>(in.getType()).getElementType().isF32())
        continue;
      auto *group = llvm::find_if(groups, [&](auto &g) {
        return g.front().getKind() == prop.getKind() &&
               g.front().getReversed() == prop.getReversed();
      });
      if (group == groups.end())
        groups.push_back({prop});
      else
        group->push_back(prop);
    }
    for (SmallVector<PropagateOp> &group : groups) {
      if (group.size() < 2)
        continue;
      llvm::sort(group, [](PropagateOp a, PropagateOp b) {
        return a->isBeforeInBlock(b);
      });
      PropagateOp last = group.back();
      // The merged propagation runs where the last sibling does: only when
      // that keeps no earlier sibling's operand alive longer (each is read
      // there or later anyway), and the siblings carry the same attributes.
      auto readFromLast = [&](Value v) {
        if (isa<BlockArgument>(v))
          return true; // a graph input: alive throughout
        return llvm::any_of(v.getUsers(), [&](Operation *user) {
          Operation *top = block.findAncestorOpInBlock(*user);
          return top && !top->isBeforeInBlock(last);
        });
      };
      if (!llvm::all_of(group, [&](PropagateOp p) {
            return p->getDiscardableAttrDictionary() ==
                       last->getDiscardableAttrDictionary() &&
                   llvm::all_of(p->getOperands(), readFromLast);
          }))
        continue;
      MLIRContext *ctx = map.getContext();
      Location loc = last.getLoc();
      // The union of the siblings' operands, per group (src, dst, edge).
      SmallVector<Value> operands[3];
      for (PropagateOp p : group) {
        OperandRange ranges[] = {p.getSrcs(), p.getDsts(), p.getEdges()};
        for (unsigned k = 0; k < 3; ++k)
          for (Value v : ranges[k])
            if (!llvm::is_contained(operands[k], v))
              operands[k].push_back(v);
      }
      int64_t total = 0;
      for (PropagateOp p : group)
        total += rowElements(p.getResult());
      OpBuilder b(last);
      auto merged = PropagateOp::create(
          b, loc, VertexType::get(ctx, {total}, b.getF32Type()),
          last.getKind(), operands[0], operands[1], operands[2],
          last.getReversed());
      for (NamedAttribute attr : last->getDiscardableAttrs())
        merged->setAttr(attr.getName(), attr.getValue());
      Block *body = new Block();
      merged.getBody().push_back(body);
      for (unsigned k = 0; k < 3; ++k)
        for (Value v : operands[k])
          body->addArgument(
              cast<DomainType>(v.getType()).getElementTensorType(), loc);
      OpBuilder inner = OpBuilder::atBlockEnd(body);
      SmallVector<Value> flat;
      for (PropagateOp p : group) {
        IRMapping mapping;
        Block &pBody = p.getBody().front();
        OperandRange ranges[] = {p.getSrcs(), p.getDsts(), p.getEdges()};
        unsigned arg = 0, base = 0;
        for (unsigned k = 0; k < 3; ++k) {
          for (Value v : ranges[k])
            mapping.map(pBody.getArgument(arg++),
                        body->getArgument(
                            base + unsigned(llvm::find(operands[k], v) -
                                            operands[k].begin())));
          base += operands[k].size();
        }
        for (Operation &o : pBody.without_terminator())
          inner.clone(o, mapping);
        Value msg = mapping.lookupOrDefault(pBody.getTerminator()->getOperand(0));
        auto type = cast<RankedTensorType>(msg.getType());
        if (type.getRank() != 1)
          msg = ReshapeOp::create(
              inner, loc,
              RankedTensorType::get({type.getNumElements()},
                                    type.getElementType()),
              msg);
        flat.push_back(msg);
      }
      Value all = ConcatOp::create(
          inner, loc, RankedTensorType::get({total}, b.getF32Type()), flat,
          inner.getI64IntegerAttr(0));
      YieldOp::create(inner, loc, ValueRange{all});
      IRRewriter rewriter(ctx);
      DominanceInfo dom;
      eliminateCommonSubExpressions(rewriter, dom, merged);

      // The map reads the merged row in place of the siblings' rows.
      Block &mBody = map.getBody().front();
      SmallVector<Value> inputs(map.getInputs());
      inputs.push_back(merged.getResult());
      BlockArgument row = mBody.addArgument(
          cast<DomainType>(merged.getType()).getElementTensorType(), loc);
      OpBuilder mb = OpBuilder::atBlockBegin(&mBody);
      int64_t offset = 0;
      llvm::BitVector dropped(inputs.size());
      for (PropagateOp p : group) {
        auto type = cast<DomainType>(p.getType()).getElementTensorType();
        int64_t n = type.getNumElements();
        Value part = SliceOp::create(
            mb, loc, RankedTensorType::get({n}, type.getElementType()), row,
            mb.getI64IntegerAttr(0), mb.getI64IntegerAttr(offset),
            mb.getI64IntegerAttr(n));
        if (type.getRank() != 1)
          part = ReshapeOp::create(mb, loc, type, part);
        offset += n;
        for (auto [i, in] : llvm::enumerate(map.getInputs()))
          if (in == p.getResult()) {
            mBody.getArgument(unsigned(i)).replaceAllUsesWith(part);
            dropped.set(i);
          }
      }
      SmallVector<Value> kept;
      for (auto [i, in] : llvm::enumerate(inputs))
        if (!dropped.test(i))
          kept.push_back(in);
      mBody.eraseArguments(dropped);
      map->setOperands(kept);
      for (PropagateOp p : group)
        p.erase();
    }
  }
}


/// An apply_vertex that combines several propagations' results (GAT's
/// backward: the projection's gradient from the message gradient and the
/// two attention-score gradients) can take only one of them into its
/// kernel as the epilogue: the one that runs last. Moves the propagation
/// with the widest result to just before the apply_vertex, so that the
/// widest row is the one never stored. Only a propagation whose result is
/// read by nothing else, and whose operands are all read again at or after
/// the op it will follow or later (moving it extends no lifetime).
void sinkWidestIntoEpilogue(Block &block) {
  for (auto map : llvm::to_vector(block.getOps<ApplyVertexOp>())) {
    PropagateOp widest;
    unsigned feeding = 0;
    for (Value in : map.getInputs()) {
      auto prop = in.getDefiningOp<PropagateOp>();
      if (!prop || prop->getBlock() != &block || !in.hasOneUse())
        continue;
      ++feeding;
      if (!widest || rowElements(in) > rowElements(widest.getResult()))
        widest = prop;
    }
    if (feeding < 2 || widest->getNextNode() == map.getOperation())
      continue;
    // Read by the op it will follow, by the apply_vertex or later.
    Operation *before = map->getPrevNode();
    auto readAgain = [&](Value operand) {
      return llvm::any_of(operand.getUsers(), [&](Operation *user) {
        Operation *top = block.findAncestorOpInBlock(*user);
        return top && top != widest.getOperation() &&
               !top->isBeforeInBlock(before);
      });
    };
    if (llvm::all_of(widest->getOperands(), readAgain))
      widest->moveBefore(map);
  }
}

struct FuseMaps : public saga::impl::SagaFuseMapsBase<FuseMaps> {
  void runOnOperation() override {
    for (ModelOp model : getOperation().getOps<ModelOp>()) {
      bool changed = true;
      while (changed) {
        changed = false;
        for (auto consumer : model.getBody().front().getOps<ApplyVertexOp>())
          if (ApplyVertexOp producer = producerOf(consumer)) {
            mergeApplyVertex(producer, consumer);
            changed = true;
            break;
          }
      }
      mergeSiblingPropagations(model.getBody().front());
      sinkWidestIntoEpilogue(model.getBody().front());
    }
  }
};

} // namespace
