//===- InMemoryWalker.cpp - the in-memory plan's walk, for every device ---===//

#include "runtime/exec/InMemoryWalker.h"
#include "runtime/exec/ExecHelpers.h"

#include <chrono>
#include <limits>

using namespace mlir;
using namespace saga;
using namespace saga::exec;

InMemoryWalker::~InMemoryWalker() = default;

llvm::Error InMemoryWalker::step(Operation &op) {
  if (auto p = dyn_cast<ParamOp>(op))
    return param(p);
  if (isa<DegreeOp>(op))
    return degrees(op.getResult(0));
  if (isa<VertexIdOp>(op))
    return vertexIds(op.getResult(0));
  if (auto l = dyn_cast<LaunchOp>(op))
    return launch(l);
  if (auto l = dyn_cast<LinearOp>(op))
    return linear(l);
  if (auto l = dyn_cast<LinearGradInputOp>(op))
    return linearGradInput(l);
  if (auto l = dyn_cast<LinearGradWeightOp>(op))
    return weightGradient(l);
  if (auto s = dyn_cast<SumRowsOp>(op))
    return sumRows(s);
  if (auto ce = dyn_cast<CrossEntropyOp>(op))
    return crossEntropy(ce);
  if (auto ce = dyn_cast<CrossEntropyGradOp>(op))
    return crossEntropyGrad(ce);
  if (auto l = dyn_cast<L2Op>(op))
    return l2(l);
  if (isa<ReadoutOp, ReadoutGradOp>(op)) {
    // A readout reads every row of a graph: a part of a partitioned graph
    // or a sampled batch's rows do not hold whole graphs.
    if (ctx.dist)
      return errorAt(&op, "graph readouts (sum_nodes, mean_nodes, "
                          "max_nodes, min_nodes) do not run on a partitioned "
                          "graph yet");
    if (!ctx.rowLevels.empty())
      return errorAt(&op, "graph readouts (sum_nodes, mean_nodes, "
                          "max_nodes, min_nodes) do not run on sampled "
                          "mini-batches; train on batches of whole graphs");
    if (std::string why = ctx.graph->graphOffsetsError(); !why.empty())
      return errorAt(&op, "the batch of graphs is malformed: " + why);
    std::vector<int64_t> bounds = ctx.graph->graphBounds();
    if (auto r = dyn_cast<ReadoutOp>(op))
      return readout(r, bounds);
    return readoutGrad(cast<ReadoutGradOp>(op), bounds);
  }
  if (isa<BatchNormOp, BatchNormGradOp>(op)) {
    // Statistics over every row: a part's or a sampled batch's rows are
    // not the graph's.
    if (ctx.dist)
      return errorAt(&op, "batch_norm does not run on a partitioned graph "
                          "yet");
    if (!ctx.rowLevels.empty())
      return errorAt(&op, "batch_norm does not run on sampled mini-batches "
                          "yet; train full batch or on batches of whole "
                          "graphs");
    if (auto b = dyn_cast<BatchNormOp>(op))
      return batchNorm(b);
    return batchNormGrad(cast<BatchNormGradOp>(op));
  }
  if (isa<PairBceOp>(op) && !ctx.pairs) {
    // No pairs (an inference run embedding the vertices): no loss, which
    // Model::forward does not report.
    return fill(op.getResult(0), std::numeric_limits<float>::quiet_NaN());
  }
  if (isa<PairBceOp, PairBceGradOp>(op)) {
    auto pairs = pairsFor(op, ctx);
    if (!pairs)
      return pairs.takeError();
    if (auto l = dyn_cast<PairBceOp>(op))
      return pairBce(l, **pairs);
    return pairBceGrad(cast<PairBceGradOp>(op), **pairs);
  }
  if (auto r = dyn_cast<ReleaseOp>(op)) {
    release(r.getValue());
    return llvm::Error::success();
  }
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    auto value = splatValue(c);
    if (!value)
      return value.takeError();
    return fill(c.getResult(), *value);
  }
  if (isa<NegOp>(op))
    return neg(&op);
  if (isa<AddOp, SubOp, MulOp, DivOp>(op)) {
    const Graph &g = *ctx.graph;
    int64_t n = elementsOf(op.getResult(0).getType(), g),
            na = elementsOf(op.getOperand(0).getType(), g),
            nb = elementsOf(op.getOperand(1).getType(), g);
    if (llvm::Error e = checkArithmetic(&op, na, nb, n))
      return e;
    return binary(&op, na, nb, n);
  }
  return errorAt(&op, "'" + op.getName().getStringRef().str() +
                          "' cannot be executed by the " + name() +
                          " runtime");
}

llvm::Expected<std::vector<Tensor>> InMemoryWalker::walk(ModelOp model) {
  if (llvm::Error e = begin(model))
    return std::move(e);
  for (Operation &op : model.getBody().front()) {
    if (isa<ScheduleOp>(op)) // the chunked level's, for budgeted runs
      continue;
    if (auto ret = dyn_cast<ReturnOp>(op))
      return results(ret);
    auto started = ctx.profile ? std::chrono::steady_clock::now()
                               : std::chrono::steady_clock::time_point();
    if (llvm::Error e = step(op))
      return std::move(e);
    if (ctx.profile && !isa<ParamOp, ReleaseOp>(op)) {
      if (llvm::Error e = synchronize())
        return std::move(e);
      std::string what = op.getName().stripDialect().str();
      if (auto l = dyn_cast<LaunchOp>(op))
        what += " " + l.getCallee().str();
      ctx.profile->emplace_back(
          what, std::chrono::duration<double>(
                    std::chrono::steady_clock::now() - started)
                    .count());
    }
    after(&op);
  }
  return errorAt(model, "model has no saga.return");
}
