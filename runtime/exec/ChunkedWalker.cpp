//===- ChunkedWalker.cpp - the chunked plan's walk, for every device ------===//

#include "runtime/exec/ChunkedWalker.h"
#include "runtime/exec/ChunkedExecutor.h"
#include "runtime/exec/ExecHelpers.h"

#include <chrono>

using namespace mlir;
using namespace saga;
using namespace saga::exec;

ChunkedWalker::ChunkedWalker(ModelOp model, const ExecutionContext &ctx,
                             const PlanMemory &pm)
    : model(model), ctx(ctx), pm(pm), g(*ctx.graph) {
  PieceIndex index = indexPieces(pm);
  tensorOf = std::move(index.values);
  states = std::move(index.states);
  parts = int64_t(pm.bounds.size()) - 1;
  auto ret = cast<ReturnOp>(model.getBody().front().getTerminator());
  for (Value v : ret.getOperands())
    returned.insert(v);
}

ChunkedWalker::~ChunkedWalker() = default;

int64_t ChunkedWalker::width(Value v) const {
  auto d = dyn_cast<DomainType>(v.getType());
  int64_t rows = d && d.isEdgeDomain() ? g.numEdges : g.numVertices;
  return rows ? elementsOf(v.getType(), g) / rows : 0;
}

void ChunkedWalker::noteTime(Operation *op, double seconds) {
  // The in-memory executor's names: the op, and a launch's kernel.
  std::string what = op->getName().stripDialect().str();
  if (auto l = dyn_cast<LaunchOp>(op))
    what += " " + l.getCallee().str();
  auto [at, added] = profiled.try_emplace(op, ctx.profile->size());
  if (added)
    ctx.profile->emplace_back(what, 0.0);
  (*ctx.profile)[at->second].second += seconds;
}

llvm::Error ChunkedWalker::compute(int k, Resident &r) {
  auto startedAt = std::chrono::steady_clock::now();
  llvm::Error e = dispatch(k, r);
  if (!e && ctx.profile)
    e = synchronize();
  if (ctx.profile)
    noteTime(pm.steps[size_t(k)].op,
             std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           startedAt)
                 .count());
  if (e)
    return e;
  // Returned vertex values go to the caller piece by piece, once final.
  if (parts == 1 || !chunked::finishesRows(pm, k, parts))
    return llvm::Error::success();
  const PlanStep &step = pm.steps[size_t(k)];
  using Outputs = ExecutionContext::VertexOutputs;
  std::vector<char> piece;
  for (Value res : step.op->getResults()) {
    auto d = dyn_cast<DomainType>(res.getType());
    if (!returned.contains(res) || !d || d.isEdgeDomain() ||
        ctx.vertexOutputs == Outputs::Drop)
      continue;
    const int64_t w = width(res), first = lo(step.j),
                  count = hi(step.j) - first;
    auto rows = hostBytes(res, step.j, r, first * w * 4, count * w * 4, piece);
    if (!rows)
      return rows.takeError();
    std::unique_lock<std::mutex> lock;
    if (keptMutex)
      lock = std::unique_lock<std::mutex>(*keptMutex);
    chunked::keepRows(*kept, res, g.numVertices, w, first, count, *rows,
                      ctx.vertexOutputs == Outputs::Argmax &&
                          dtypeOf(res.getType()) == DType::F32);
  }
  return llvm::Error::success();
}

llvm::Expected<const char *>
ChunkedWalker::hostBytes(Value v, int64_t j, Resident &r, int64_t offset,
                         int64_t bytes, std::vector<char> &buffer) {
  buffer.resize(size_t(bytes));
  if (llvm::Error e = read(v, j, r, offset, bytes, buffer.data()))
    return std::move(e);
  return buffer.data();
}

llvm::Error ChunkedWalker::dispatch(int k, Resident &r) {
  const PlanStep &step = pm.steps[size_t(k)];
  Operation *op = step.op;
  const int64_t j = step.j;
  const bool first = started.insert(op).second,
             last = j < 0 || j + 1 == parts;
  if (auto l = dyn_cast<LaunchOp>(op))
    return launch(l, step.i, j, r);
  if (auto l = dyn_cast<LinearOp>(op))
    return gemm(l.getInput(), l.getWeight(), l.getResult(), false, j, r);
  if (auto lg = dyn_cast<LinearGradInputOp>(op))
    return gemm(lg.getGradOutput(), lg.getWeight(), lg.getResult(), true, j, r);
  if (isa<DegreeOp>(op))
    return degrees(op->getResult(0), j, r);
  if (isa<VertexIdOp>(op))
    return vertexIds(op->getResult(0), j, r);
  if (auto sum = dyn_cast<SumRowsOp>(op))
    return sumRows(sum, j, first, last, r);
  if (auto lw = dyn_cast<LinearGradWeightOp>(op))
    return weightGradient(lw, j, first, last, r);
  if (auto ce = dyn_cast<CrossEntropyOp>(op))
    return crossEntropy(ce, j, first, last, r);
  if (auto ce = dyn_cast<CrossEntropyGradOp>(op))
    return crossEntropyGrad(ce, j, first, r);
  if (auto ret = dyn_cast<ReturnOp>(op))
    return finish(ret, r);
  // Model-level scalars and parameter-sized arithmetic (whole values).
  if (isa<L2Op>(op))
    return l2(op, elementsOf(op->getOperand(0).getType(), g), j, r);
  if (isa<NegOp>(op))
    return neg(op, elementsOf(op->getResult(0).getType(), g), j, r);
  if (isa<AddOp, SubOp, MulOp, DivOp>(op)) {
    int64_t n = elementsOf(op->getResult(0).getType(), g),
            na = elementsOf(op->getOperand(0).getType(), g),
            nb = elementsOf(op->getOperand(1).getType(), g);
    if (llvm::Error e = checkArithmetic(op, na, nb, n))
      return e;
    return binary(op, na, nb, n, j, r);
  }
  return errorAt(op, "'" + op->getName().getStringRef().str() + "' cannot " +
                         unsupported() + " yet");
}

llvm::Error ChunkedWalker::finish(ReturnOp ret, Resident &r) {
  for (Value v : ret.getOperands()) {
    if (auto it = kept->find(v); it != kept->end()) {
      results.push_back(std::move(it->second));
      continue;
    }
    if (auto d = dyn_cast<DomainType>(v.getType());
        d && !d.isEdgeDomain() &&
        ctx.vertexOutputs == ExecutionContext::VertexOutputs::Drop) {
      results.push_back(Tensor());
      continue;
    }
    Tensor t(shapeOf(v.getType(), g.numVertices), dtypeOf(v.getType()));
    if (llvm::Error e = read(v, -1, r, 0, t.numElements() * 4, t.data()))
      return e;
    results.push_back(std::move(t));
  }
  return synchronize();
}
