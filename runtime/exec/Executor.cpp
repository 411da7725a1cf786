//===- Executor.cpp - runs an execution plan on the CPU -------------------===//
//
// The CPU's in-memory run (CpuRun.h) but its kernel launches (CpuLaunch.cpp):
// binding inputs and parameters, GEMMs, losses, gradients, model-level
// arithmetic, results; and saga::execute, its entry.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/CpuRun.h"

#include <numeric>

using namespace mlir;
using namespace saga;
using namespace saga::exec;

llvm::Error CpuRun::bindInput(ModelOp model, BlockArgument arg) {
  auto t = boundInput(model, arg, *ctx.inputs, rowsOf(arg.getType()));
  if (!t)
    return t.takeError();
  values[arg] = *t;
  haloValid.insert(arg);
  return llvm::Error::success();
}

llvm::Error CpuRun::linear(LinearOp op) {
  const Tensor *x = lookup(op.getInput());
  const Tensor *w = lookup(op.getWeight());
  if (!x || !w)
    return errorAt(op, "operand has no value");
  // Written over its input when that dies here and the rows are as wide:
  // each row block's product goes to a scratch block first, then over the
  // block's input rows, which nothing else reads (GAT's first projection,
  // x @ W with 64 -> 8 x 8, made in the forward and again in the backward).
  int64_t n = 1;
  for (int64_t d : shapeOf(op.getType(), 1))
    n *= d;
  if (ctx.reuseBuffers && x->rowSize() == n && x->dtype() == DType::F32)
    if (Tensor *y = takeOver(op, op.getInput(), op.getResult())) {
      const std::vector<int64_t> &blocks = blocksOf(op, kMapBlocks);
      ctx.pool->parallelFor(blocks.size() - 1, [&](int64_t task) {
        int64_t begin = blocks[task], rows = blocks[task + 1] - begin;
        std::vector<float> block(size_t(rows * n));
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, n, n,
                    1.0f, y->f32() + begin * n, n, w->f32(), n, 0.0f,
                    block.data(), n);
        std::copy(block.begin(), block.end(), y->f32() + begin * n);
      });
      return llvm::Error::success();
    }
  Tensor *y = allocate(op.getResult());
  rowGemm(*x, *w, *y, /*transposeWeight=*/false, blocksOf(op, kMapBlocks));
  return llvm::Error::success();
}

// y[v] = x[v] @ W (or W^T) for every vertex, one BLAS call per row block.
void CpuRun::rowGemm(const Tensor &x, const Tensor &w, Tensor &y,
                  bool transposeWeight, const std::vector<int64_t> &blocks) {
  int64_t k = x.rowSize(), n = y.rowSize();
  ctx.pool->parallelFor(blocks.size() - 1, [&](int64_t task) {
    int64_t begin = blocks[task], rows = blocks[task + 1] - begin;
    cblas_sgemm(CblasRowMajor, CblasNoTrans,
                transposeWeight ? CblasTrans : CblasNoTrans, rows, n, k, 1.0f,
                x.f32() + begin * k, k, w.f32(), transposeWeight ? k : n, 0.0f,
                y.f32() + begin * n, n);
  });
}

std::vector<int32_t> CpuRun::lossRows(int64_t numRows) const {
  if (ctx.exactLossMask && ctx.lossMask.empty())
    return {};
  return exec::lossRows(ctx.lossMask,
                        ctx.dist ? ctx.dist->part.owned() : numRows);
}

void CpuRun::forChunks(size_t n, const std::function<void(int64_t, size_t,
                                                       size_t)> &fn) {
  // Fixed chunks (not one per thread): per-chunk partial sums combined in
  // chunk order give the same result for any thread count.
  constexpr size_t kChunk = 8192;
  int64_t chunks = int64_t((n + kChunk - 1) / kChunk);
  ctx.pool->parallelFor(chunks, [&](int64_t t) {
    fn(t, size_t(t) * kChunk, std::min(n, size_t(t + 1) * kChunk));
  });
}

double CpuRun::lossOf(const Tensor &logits, const Tensor &labels) {
  int64_t c = logits.rowSize();
  std::vector<int32_t> rows = lossRows(logits.rows());
  size_t chunks = (rows.size() + 8191) / 8192;
  std::vector<double> total(chunks, 0.0);
  std::vector<int64_t> count(chunks, 0);
  forChunks(rows.size(), [&](int64_t t, size_t begin, size_t end) {
    std::vector<float> e(static_cast<size_t>(c));
    // Summed locally: the chunks' slots share cache lines, and writing them
    // per row made the threads fight over them (about 100 ms at 1M rows).
    double chunkTotal = 0;
    int64_t chunkCount = 0;
    for (size_t i = begin; i < end; ++i) {
      int32_t v = rows[i], label = labels.i32()[v];
      if (label < 0 || label >= c)
        continue;
      chunkTotal += crossEntropyTerm(logits.f32() + int64_t(v) * c, c, label, e);
      ++chunkCount;
    }
    total[t] = chunkTotal;
    count[t] = chunkCount;
  });
  double sums[2] = {0, 0}; // the loss terms and their count
  for (size_t t = 0; t < chunks; ++t) {
    sums[0] += total[t];
    sums[1] += double(count[t]);
  }
  if (llvm::Error e = sumOverParts(sums, 2))
    llvm::report_fatal_error(llvm::Twine("summing the loss over the parts: ") +
                             llvm::toString(std::move(e)));
  return sums[1] > 0 ? sums[0] / sums[1] : 0.0;
}

// Model-level scalars: losses, weight decay and their arithmetic.
llvm::Error CpuRun::fill(Value result, float value) {
  // Splats: scalars, and constants canonicalisation hoists out of bodies.
  Tensor *t = allocate(result);
  std::fill(t->f32(), t->f32() + t->numElements(), value);
  return llvm::Error::success();
}

llvm::Error CpuRun::crossEntropy(CrossEntropyOp op) {
  double loss = lossOf(*lookup(op.getLogits()), *lookup(op.getLabels()));
  allocate(op.getResult())->f32()[0] = static_cast<float>(loss);
  return llvm::Error::success();
}

llvm::Error CpuRun::l2(L2Op op) {
  const Tensor *x = lookup(op->getOperand(0));
  double s = 0;
  for (int64_t i = 0; i < x->numElements(); ++i)
    s += double(x->f32()[i]) * x->f32()[i];
  allocate(op->getResult(0))->f32()[0] = static_cast<float>(s / 2);
  return llvm::Error::success();
}

// Model-level arithmetic on whole tensors: equal shapes, or a scalar with a
// tensor (losses, weight decay and their gradients).
llvm::Error CpuRun::neg(Operation *op) {
  const Tensor *a = lookup(op->getOperand(0));
  Tensor *r = allocate(op->getResult(0));
  for (int64_t i = 0; i < r->numElements(); ++i)
    r->f32()[i] = -a->f32()[i];
  return llvm::Error::success();
}

llvm::Error CpuRun::binary(Operation *op, int64_t na, int64_t nb, int64_t n) {
  const Tensor *a = lookup(op->getOperand(0)), *b = lookup(op->getOperand(1));
  Tensor *r = allocate(op->getResult(0));
  binaryElementwise(op, a->f32(), na, b->f32(), nb, r->f32(), n);
  return llvm::Error::success();
}

// Backward steps that are library calls or reductions. Sums over vertices
// are computed per fixed row block and combined in block order, so they are
// identical for any thread count.
llvm::Error CpuRun::sumRows(SumRowsOp sum) {
  if (auto it = summedInKernel.find(sum.getInput());
      it != summedInKernel.end()) {
    Tensor *r = allocate(sum.getResult());
    *r = std::move(it->second);
    summedInKernel.erase(it);
    return llvm::Error::success();
  }
  const Tensor *x = lookup(sum.getInput());
  Tensor *r = allocate(sum.getResult());
  const std::vector<int64_t> &rowBlocks = blocksOf(sum, kMapBlocks);
  int64_t w = x->rowSize(), blocks = int64_t(rowBlocks.size()) - 1;
  std::vector<double> partial(size_t(sumBlocks * w), 0.0);
  ctx.pool->parallelFor(blocks, [&](int64_t t) {
    addToBlockSums(x->f32() + rowBlocks[t] * w, rowBlocks[t],
                   rowBlocks[t + 1], w, partial.data());
  });
  finishBlockSums(partial, sumBlocks, w, r->f32());
  return sumOverParts(r->f32(), r->numElements());
}

llvm::Error CpuRun::readout(ReadoutOp op, const std::vector<int64_t> &bounds) {
  const Tensor *x = lookup(op.getInput());
  Tensor *r = allocate(op.getResult());
  readoutRows(op.getKind(), x->f32(), x->rowSize(), bounds, r->f32(),
              *ctx.pool);
  return llvm::Error::success();
}

llvm::Error CpuRun::readoutGrad(ReadoutGradOp op,
                                const std::vector<int64_t> &bounds) {
  const Tensor *x = lookup(op.getInput()), *y = lookup(op.getReadout()),
               *dy = lookup(op.getGrad());
  Tensor *dx = allocate(op.getGradInput());
  readoutGradRows(x->f32(), y->f32(), dy->f32(), x->rowSize(), bounds,
                  dx->f32(), *ctx.pool);
  return llvm::Error::success();
}

llvm::Error CpuRun::batchNorm(BatchNormOp op) {
  const Tensor *x = lookup(op.getInput());
  Tensor *y = allocate(op.getResult());
  batchNormRows(x->f32(), x->rows(), x->rowSize(), y->f32(), *ctx.pool);
  return llvm::Error::success();
}

llvm::Error CpuRun::batchNormGrad(BatchNormGradOp op) {
  const Tensor *x = lookup(op.getInput()), *dy = lookup(op.getGrad());
  Tensor *dx = allocate(op.getGradInput());
  batchNormGradRows(x->f32(), dy->f32(), x->rows(), x->rowSize(), dx->f32(),
                    *ctx.pool);
  return llvm::Error::success();
}

llvm::Error CpuRun::pairBce(PairBceOp op, const PairSet &pairs) {
  const Tensor *h = lookup(op.getInput());
  double loss = pairBceLoss(h->f32(), h->rowSize(), pairs, *ctx.pool);
  allocate(op.getResult())->f32()[0] = static_cast<float>(loss);
  return llvm::Error::success();
}

llvm::Error CpuRun::pairBceGrad(PairBceGradOp op, const PairSet &pairs) {
  // Every row is written (zeros off the pairs), so a sampled batch's rows
  // past the seeds need no zero fill.
  const Tensor *h = lookup(op.getInput());
  float g = lookup(op.getGrad())->f32()[0];
  Tensor *dh = allocate(op.getGradInput());
  saga::pairBceGrad(h->f32(), h->rowSize(), pairs, g, dh->f32(), *ctx.pool);
  return llvm::Error::success();
}

llvm::Error CpuRun::linearGradInput(LinearGradInputOp lg) {
  // dx[v] = dy[v] @ W^T
  const Tensor *dy = lookup(lg.getGradOutput()), *w = lookup(lg.getWeight());
  Tensor *dx = allocate(lg.getResult());
  rowGemm(*dy, *w, *dx, /*transposeWeight=*/true, blocksOf(lg, kMapBlocks));
  return llvm::Error::success();
}

llvm::Error CpuRun::weightGradient(LinearGradWeightOp lw) {
  // dW = x^T dy, as a sum of the products of up to kWeightGradSlices
  // contiguous slices of the rows, added in slice order. The slices depend
  // only on the graph, so the result does not depend on the thread count;
  // their number is bounded, so the partial products take at most
  // kWeightGradSlices weights of memory (one per 256-row block took 64 MiB
  // for a 64 x 64 weight at 1M vertices).
  const Tensor *x = lookup(lw.getInput()), *dy = lookup(lw.getGradOutput());
  Tensor *dw = allocate(lw.getResult());
  const std::vector<int64_t> &rowBlocks = blocksOf(lw, kMapBlocks);
  int64_t k = x->rowSize(), n = dy->rowSize(),
          blocks = int64_t(rowBlocks.size()) - 1;
  int64_t slices = std::max<int64_t>(1, std::min(blocks, kWeightGradSlices));
  // Every slice's product is written whole (beta 0): no zeroing first.
  std::unique_ptr<float[]> partial(new float[size_t(slices * k * n)]);
  ctx.pool->parallelFor(slices, [&](int64_t t) {
    int64_t begin = rowBlocks[t * blocks / slices],
            rows = rowBlocks[(t + 1) * blocks / slices] - begin;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, k, n, rows, 1.0f,
                x->f32() + begin * k, k, dy->f32() + begin * n, n, 0.0f,
                partial.get() + t * k * n, n);
  });
  sumSlices(partial.get(), slices, k * n, dw->f32());
  return sumOverParts(dw->f32(), dw->numElements());
}

llvm::Error CpuRun::crossEntropyGrad(CrossEntropyGradOp ce) {
  const Tensor *logits = lookup(ce.getLogits()), *labels = lookup(ce.getLabels());
  float g = lookup(ce.getGrad())->f32()[0];
  Tensor *d = allocate(ce.getResult());
  int64_t c = logits->rowSize();
  std::vector<int32_t> rows = lossRows(logits->rows());
  // Zeros on the rows this op makes (on a sampled batch, the seeds: rows
  // past them are zeroed where read, zeroPastExtent), the loss rows then
  // written; all rows if a loss row lies past them.
  int64_t made = extents ? blocksOf(ce, kMapBlocks).back() : d->rows();
  if (llvm::any_of(rows, [&](int32_t v) { return v >= made; }))
    made = d->rows();
  std::fill(d->f32(), d->f32() + made * c, 0.0f);
  double count = 0;
  for (int32_t v : rows)
    count += labels->i32()[v] >= 0 && labels->i32()[v] < c;
  if (llvm::Error e = sumOverParts(&count, 1))
    return e;
  if (!count)
    return llvm::Error::success();
  const double scale = double(g) / double(count);
  std::vector<int32_t> places(rows.size());
  std::iota(places.begin(), places.end(), 0);
  const exec::RowTasks tasks = exec::rowTasks(rows, std::move(places), 8192);
  ctx.pool->parallelFor(tasks.count(), [&](int64_t t) {
    std::vector<float> e(static_cast<size_t>(c));
    for (int64_t k = tasks.bounds[size_t(t)]; k < tasks.bounds[size_t(t) + 1];
         ++k) {
      int32_t v = rows[size_t(tasks.places[size_t(k)])],
              label = labels->i32()[v];
      if (label < 0 || label >= c)
        continue;
      addCrossEntropyGrad(logits->f32() + int64_t(v) * c, c, label, scale,
                          d->f32() + int64_t(v) * c, e);
    }
  });
  return llvm::Error::success();
}

llvm::Error CpuRun::begin(ModelOp model) {
  const Graph &g = *ctx.graph;
  // A part runs maps, GEMMs and its in-edges over its owned rows, and its
  // out-edges (reversed propagations) over its halo rows too.
  const int64_t ownedRows = ctx.dist ? ctx.dist->part.owned() : g.numVertices;
  mapBlocks = rowBlocks(g, nullptr, ownedRows);
  inBlocks = ctx.propagationBlocks ? *ctx.propagationBlocks
                                   : rowBlocks(g, &g.inOffsets, ownedRows);
  outBlocks = rowBlocks(g, &g.outOffsets, g.numVertices);
  sumBlocks = (int64_t(g.numVertices) + kRowsPerTask - 1) / kRowsPerTask;
  if (ctx.dist)
    splitInterior();
  if (!ctx.rowLevels.empty()) {
    const int64_t layers = int64_t(ctx.rowLevels.size()) - 1;
    extents = ctx.extentsCache ? ctx.extentsCache->get(model, layers)
                               : rowExtents(model, layers);
  }
  for (BlockArgument arg : model.getBody().front().getArguments())
    if (llvm::Error e = bindInput(model, arg))
      return e;
  return llvm::Error::success();
}

llvm::Error CpuRun::param(ParamOp op) {
  auto t = boundParam(op, *ctx.params);
  if (!t)
    return t.takeError();
  values[op] = *t;
  return llvm::Error::success();
}

llvm::Error CpuRun::degrees(Value result) {
  const Graph &g = *ctx.graph;
  Tensor *t = allocate(result);
  std::vector<float> deg = ctx.dist      ? ctx.dist->part.inDegrees
                           : ctx.degrees ? *ctx.degrees
                                         : g.inDegrees();
  std::copy(deg.begin(), deg.end(), t->f32());
  haloValid.insert(result);
  return llvm::Error::success();
}

llvm::Error CpuRun::vertexIds(Value result) {
  const Graph &g = *ctx.graph;
  Tensor *t = allocate(result);
  for (int32_t v = 0; v < g.numVertices; ++v)
    t->i32()[v] = ctx.dist        ? ctx.dist->part.globalIds[size_t(v)]
                  : ctx.vertexIds ? (*ctx.vertexIds)[size_t(v)]
                                  : v;
  haloValid.insert(result);
  return llvm::Error::success();
}

void CpuRun::release(Value v) {
  if (auto it = owned.find(v); it != owned.end())
    liveBytes -= size_t(it->second->numElements()) * 4;
  owned.erase(v);
  values.erase(v);
}

llvm::Expected<std::vector<Tensor>> CpuRun::results(ReturnOp ret) {
  if (ctx.peakBytes)
    *ctx.peakBytes = peakBytes;
  std::vector<Tensor> results;
  llvm::DenseMap<Value, size_t> first; // a value returned twice is copied
  for (Value v : ret.getOperands()) {
    auto it = owned.find(v);
    if (auto seen = first.find(v); seen != first.end())
      results.push_back(results[seen->second]);
    else if (it != owned.end())
      results.push_back(std::move(*it->second));
    else if (const Tensor *t = lookup(v))
      results.push_back(*t); // an input or parameter returned as is
    else
      return errorAt(ret, "result has no value");
    first.try_emplace(v, results.size() - 1);
  }
  return results;
}

const std::vector<int64_t> &CpuRun::blocksOf(Operation *op, BlockKind kind) {
  const std::vector<int64_t> &whole =
      kind == kMapBlocks ? mapBlocks : kind == kInBlocks ? inBlocks : outBlocks;
  if (!extents)
    return whole;
  auto level = extents->opLevel.find(op);
  if (level == extents->opLevel.end())
    return whole;
  int64_t rows = std::min(ctx.rowLevels[size_t(level->second)], whole.back());
  if (rows == whole.back())
    return whole;
  auto [it, fresh] = extentBlocks.try_emplace({int(kind), rows});
  if (fresh) {
    const Graph &g = *ctx.graph;
    it->second = rowBlocks(g,
                           kind == kMapBlocks  ? nullptr
                           : kind == kInBlocks ? &g.inOffsets
                                               : &g.outOffsets,
                           rows);
  }
  return it->second;
}

void CpuRun::zeroPastExtent(Operation *op) {
  for (Value r : op->getResults()) {
    auto z = extents->zeroFill.find(r);
    if (z == extents->zeroFill.end())
      continue;
    auto t = owned.find(r);
    if (t == owned.end())
      continue;
    int64_t w = t->second->rowSize();
    int64_t from = ctx.rowLevels[size_t(z->second.first)],
            to = ctx.rowLevels[size_t(z->second.second)];
    std::fill(t->second->f32() + from * w, t->second->f32() + to * w, 0.0f);
  }
}

llvm::Expected<std::vector<Tensor>> saga::execute(ModelOp model,
                                                  const ExecutionContext &ctx) {
  openblas_set_num_threads(1); // parallelism comes from the pool's tasks
  CpuRun run(ctx);
  return run.walk(model);
}
