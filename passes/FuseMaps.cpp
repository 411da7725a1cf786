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
#include "mlir/IR/IRMapping.h"

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

/// Elements per row of a vertex or edge value.
int64_t rowElements(Value v) {
  return cast<DomainType>(v.getType()).getElementTensorType().getNumElements();
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
      sinkWidestIntoEpilogue(model.getBody().front());
    }
  }
};

} // namespace
