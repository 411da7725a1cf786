//===- FuseMaps.cpp - chains of apply_vertex into one ---------------------===//
//
// An apply_vertex whose result only feeds another apply_vertex is merged
// into it: one body that computes both, one kernel, no intermediate row
// written to memory. GCN's normalisation, bias and ReLU after a
// propagation become one map, which lower-to-kernels then fuses into the
// propagation's kernel as its epilogue.
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
    }
  }
};

} // namespace
