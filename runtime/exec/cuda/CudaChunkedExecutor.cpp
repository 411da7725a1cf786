//===- CudaChunkedExecutor.cpp - the chunked level on a CUDA device -------===//
//
// The chunked level's plan (analysis/ChunkPlan, the same saga.schedule the
// CPU's ChunkedExecutor runs) carried out on the GPU: the device tier is
// device memory with the budget's capacity, the next tier host RAM or spill
// files; the plan runner's transfer engine (its own thread) moves pieces
// through the device's pinned staging buffers as copies on the copy stream,
// ahead of compute, which waits on their events; kernels, GEMMs and
// reductions run per row interval and 2-D chunk on the compute stream, the
// chunks' CSR pieces uploaded as they stream. Sums over rows accumulate per
// 256-row block in double, as on the CPU; the results match the CPU's
// chunked run to rounding.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/cuda/CudaChunkedRun.h"

#include "support/KernelAbi.h"
#include "runtime/exec/ExecHelpers.h"
#include "runtime/exec/cuda/PlanKernels.h"
#include "runtime/exec/cuda/RuntimeKernels.h"
#include "runtime/exec/cuda/RuntimeOps.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"

#include <algorithm>
#include <cstring>
#include <mutex>

using namespace mlir;
using namespace saga;
using namespace saga::exec;
using cuda::CUdeviceptr;
using cuda::KernelParam;

using cuda::CudaTier;
using cuda::StagedTier;


llvm::Expected<CUdeviceptr> CudaChunkedRun::scratch(int64_t bytes,
                                                    const std::string &what) {
  auto p = dev.allocate(std::max<int64_t>(bytes, 4), what);
  if (p) {
    owned.push_back(*p);
    scratchBytes += std::max<int64_t>(bytes, 4);
  }
  return p;
}

llvm::Expected<CUdeviceptr> CudaChunkedRun::addr(Value v, int64_t j,
                                                 Resident &r) {
  auto d = dyn_cast<DomainType>(v.getType());
  bool split = pm.splitsByInterval(v.getType());
  auto it = tensorOf.find({v.getAsOpaquePointer(), split ? j : -1});
  if (it != tensorOf.end()) {
    CUdeviceptr data = CUdeviceptr(uintptr_t(r.at(it->second).data));
    // Indexed by the whole value's row (an edge's number in chunk order).
    return split ? data - CUdeviceptr(pm.firstRow(d, j) * width(v) * 4) : data;
  }
  int64_t bytes = elementsOf(v.getType(), g) * 4;
  // Made more recently by another device's walker: copied from it.
  SmallValues::Made made;
  if (smallShared && !isa<BlockArgument>(v)) {
    std::lock_guard<std::mutex> lock(smallShared->mutex);
    made = smallShared->latest.lookup(v);
  }
  if (made.by && made.by != this && smallVersion.lookup(v) < made.version) {
    auto found = small.find(v);
    CUdeviceptr to = 0;
    if (found != small.end()) {
      to = found->second;
    } else {
      auto p = scratch(bytes, "a model-level value from another device");
      if (!p)
        return p.takeError();
      to = small[v] = *p;
    }
    if (auto e = dev.copyFromPeer(to, made.by->dev, made.at, made.bytes,
                                  "a model-level value"))
      return std::move(e);
    smallVersion[v] = made.version;
    return to;
  }
  if (auto found = small.find(v); found != small.end())
    return found->second;
  // A graph input outside the plan stays resident from run to run.
  if (auto arg = dyn_cast<BlockArgument>(v))
    if (const Tensor *t = chunked::external(model, ctx, v)) {
      auto res = b.resident("input." + chunked::argName(model, arg), t->f32(),
                            t->numElements() * 4);
      if (!res)
        return res.takeError();
      return small[v] = res->ptr;
    }
  auto p = scratch(bytes, "a value outside the plan");
  if (!p)
    return p.takeError();
  small[v] = *p;
  if (const Tensor *t = chunked::external(model, ctx, v)) { // a parameter
    if (auto e = dev.upload(*p, t->f32(), bytes))
      return std::move(e);
  } else if (auto c = v.getDefiningOp<arith::ConstantOp>()) {
    auto value = splatValue(c);
    if (!value)
      return value.takeError();
    if (auto e = ops.fill(*p, bytes / 4, *value))
      return std::move(e);
  }
  return *p;
}

void CudaChunkedRun::noteSmallWrites(int k) {
  if (!smallShared)
    return;
  for (Value v : pm.steps[size_t(k)].op->getResults())
    if (auto found = small.find(v); found != small.end()) {
      std::lock_guard<std::mutex> lock(smallShared->mutex);
      uint64_t version = ++smallShared->versions;
      smallShared->latest[v] = {this, found->second,
                                elementsOf(v.getType(), g) * 4, version};
      smallVersion[v] = version;
    }
}

llvm::Expected<CUdeviceptr> CudaChunkedRun::graphOffsets(bool reversed) {
  const auto &o = reversed ? g.outOffsets : g.inOffsets;
  auto r = b.resident(reversed ? "graph.outOffsets" : "graph.inOffsets",
                      o.data(), int64_t(o.size() * 8));
  if (!r)
    return r.takeError();
  return r->ptr;
}

llvm::Error CudaChunkedRun::lossRows() {
  if (numRows >= 0)
    return llvm::Error::success();
  const std::vector<int32_t> &mask = ctx.lossMask;
  numRows = mask.empty() ? int64_t(g.numVertices) : int64_t(mask.size());
  lossBegin = chunked::lossIntervalStarts(mask, pm.bounds, g.numVertices);
  lossAscending = !lossBegin.empty();
  lossWindow = lossAscending ? 1 : std::max<int64_t>(numRows, 1);
  for (size_t j = 1; j < lossBegin.size(); ++j)
    lossWindow = std::max(lossWindow, lossBegin[j] - lossBegin[j - 1]);
  if (mask.empty())
    return llvm::Error::success();
  auto p = scratch(numRows * 4, "the loss rows");
  if (!p)
    return p.takeError();
  rows = *p;
  return dev.upload(rows, mask.data(), numRows * 4);
}

llvm::Error CudaChunkedRun::launch(LaunchOp op, int64_t i, int64_t j,
                                   Resident &r) {
  auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      op, op.getCalleeAttr());
  if (!fn)
    return errorAt(op, "kernel '" + op.getCallee().str() + "' not found");
  bool reversed = fn->hasAttr("saga.reversed");
  bool overEdges = op.getPropagate() || op.getEdgeMap();
  bool chunkedOp = overEdges && parts > 1;
  std::vector<KernelParam> args;
  size_t phaseAt = size_t(-1);
  if (op.getPropagate()) {
    auto offsets = graphOffsets(reversed);
    if (!offsets)
      return offsets.takeError();
    args.push_back(KernelParam::buffer(*offsets, int64_t(g.numVertices) + 1));
    phaseAt = args.size();
    args.push_back(KernelParam::i64(kPhaseWhole));
    if (chunkedOp) {
      int64_t w = fn->getAttrOfType<IntegerAttr>("saga.state_width").getInt();
      CUdeviceptr state = CUdeviceptr(uintptr_t(r.at(states.at({op, j})).data)) -
                          CUdeviceptr(lo(j) * w * 4);
      args.push_back(KernelParam::buffer(state, g.numVertices * w));
    } else {
      args.push_back(KernelParam::buffer(0, 0));
    }
  }
  auto groups = fn->getAttrOfType<DenseI64ArrayAttr>("saga.operand_groups");
  // An empty chunk's other-end rows are not resident (the plan loads none).
  const bool empty = chunkedOp && pm.chunkEmpty(i, j, reversed);
  for (auto [k, v] : llvm::enumerate(op.getOperands())) {
    bool other = chunkedOp && chunked::atOtherEnd(pm, groups, reversed, k, v);
    if (other && empty) {
      args.push_back(KernelParam::buffer(0, elementsOf(v.getType(), g)));
      continue;
    }
    auto p = addr(v, other ? i : j, r);
    if (!p)
      return p.takeError();
    args.push_back(KernelParam::buffer(*p, elementsOf(v.getType(), g)));
  }
  const bool writesEver = !chunkedOp || !op.getPropagate() || i + 1 == parts;
  const size_t resultsAt = args.size();
  for (Value res : op.getResults()) {
    CUdeviceptr p = 0;
    if (writesEver) {
      auto a = addr(res, j, r);
      if (!a)
        return a.takeError();
      p = *a;
    }
    args.push_back(KernelParam::buffer(p, elementsOf(res.getType(), g)));
  }
  const int64_t seed = int64_t(ctx.seed);
  if (!overEdges)
    return cuda::launchPlanKernel(dev, plan, op, args, lo(j), hi(j), seed);
  // The chunk's CSR, in one or more parts, uploaded as it streams: the
  // offsets of rows [lo(j), hi(j)] and the edges at positions
  // [offsets[lo(j)], offsets[hi(j)]), all addressed as in the view (a view
  // of a graph in memory holds the whole source interval, every row: only
  // the rows' edges go up).
  return chunked::forEachKernelPart(
      ctx, pm.bounds, reversed,
      {op.getPropagate(), chunkedOp, empty, i, j, parts, lo(j), hi(j), &pm},
      [&](const ChunkView &view, int64_t phase, bool writes) -> llvm::Error {
        const int64_t rowsN = hi(j) - lo(j), first = view.offsets[lo(j)],
                      end = view.offsets[hi(j)], edges = end - first;
        // Dropout over edges keys its masks by the graph's edge ids, apart
        // from the numbers split edge values are indexed by.
        const bool keyed = fn->hasAttr("saga.edge_keys");
        const int64_t bytes =
            (rowsN + 1) * 8 + (keyed ? 3 : 2) * std::max<int64_t>(edges, 1) * 4;
        auto csr = dev.allocate(bytes, "a streamed chunk's CSR");
        if (!csr)
          return csr.takeError();
        CUdeviceptr offsets = *csr, others = offsets + CUdeviceptr((rowsN + 1) * 8),
                    ids = others + CUdeviceptr(std::max<int64_t>(edges, 1) * 4),
                    keys = ids + CUdeviceptr(std::max<int64_t>(edges, 1) * 4);
        // Freed in stream order after the launch (a later upload into the
        // block waits for the compute stream).
        llvm::scope_exit free([&] { dev.release(*csr); });
        if (auto e = dev.upload(offsets, view.offsets + lo(j), (rowsN + 1) * 8))
          return e;
        if (edges) {
          if (auto e = dev.upload(others, view.others + first, edges * 4))
            return e;
          if (auto e = dev.upload(ids, view.edgeIds + first, edges * 4))
            return e;
          if (keyed)
            if (auto e = dev.upload(keys, view.edgeKeys() + first, edges * 4))
              return e;
        }
        csrBytesUploaded += (rowsN + 1) * 8 + (keyed ? 3 : 2) * edges * 4;
        csrEdgesUploaded += edges;
        // Addressed from row 0 and position 0: the kernel reads rows
        // [lo(j), hi(j)] of the offsets and positions [first, end).
        const CUdeviceptr shift = CUdeviceptr(first * 4);
        std::vector<KernelParam> all{
            KernelParam::buffer(offsets - CUdeviceptr(lo(j) * 8),
                                int64_t(g.numVertices) + 1),
            KernelParam::buffer(others - shift, end),
            KernelParam::buffer(ids - shift, end)};
        all.insert(all.end(), args.begin(), args.end());
        if (op.getPropagate() && chunkedOp) {
          all[3 + phaseAt].value = phase;
          if (!writes)
            for (size_t a = resultsAt; a < args.size(); ++a)
              all[3 + a].ptr = 0;
        }
        if (keyed)
          all.push_back(KernelParam::buffer(keys - shift, end));
        return cuda::launchPlanKernel(dev, plan, op, all, lo(j), hi(j), seed);
      });
}

llvm::Error CudaChunkedRun::gemm(Value xv, Value wv, Value yv, bool transpose,
                                 int64_t j, Resident &r) {
  auto x = addr(xv, j, r), w = addr(wv, j, r), y = addr(yv, j, r);
  if (!x || !w || !y)
    return llvm::joinErrors(llvm::joinErrors(x.takeError(), w.takeError()),
                            y.takeError());
  int64_t k = width(xv), n = width(yv), first = lo(j), count = hi(j) - lo(j);
  return dev.gemm(false, transpose, count, n, k, *x + CUdeviceptr(first * k * 4),
                  *w, *y + CUdeviceptr(first * n * 4));
}

llvm::Error CudaChunkedRun::read(Value v, int64_t j, Resident &r,
                                 int64_t offset, int64_t bytes, void *to) {
  auto base = addr(v, j, r);
  if (!base)
    return base.takeError();
  return dev.download(to, *base + CUdeviceptr(offset), bytes);
}

llvm::Error CudaChunkedRun::degrees(Value result, int64_t j, Resident &r) {
  auto d = addr(result, j, r);
  if (!d)
    return d.takeError();
  auto offsets = graphOffsets(false);
  if (!offsets)
    return offsets.takeError();
  return ops.inDegree(*offsets, *d, lo(j), hi(j));
}

llvm::Error CudaChunkedRun::vertexIds(Value result, int64_t j, Resident &r) {
  auto d = addr(result, j, r);
  if (!d)
    return d.takeError();
  return ops.iota(*d, lo(j), hi(j));
}

llvm::Error CudaChunkedRun::sumRows(SumRowsOp sum, int64_t j, bool first,
                                    bool last, Resident &r) {
  Operation *op = sum;
  int64_t w = width(sum.getInput());
  int64_t blocks = std::max<int64_t>((g.numVertices + kRowsPerTask - 1) / kRowsPerTask, 1);
  if (first) {
    auto p = scratch(blocks * w * 8, "sum_rows partials");
    if (!p)
      return p.takeError();
    partials[op] = *p;
    if (auto e = dev.fill32(*p, 0, blocks * w * 2))
      return e;
  }
  auto x = addr(sum.getInput(), j, r);
  if (!x)
    return x.takeError();
  if (auto e = ops.blockSums(*x, lo(j), hi(j), w, kRowsPerTask, partials[op]))
    return e;
  if (!last)
    return llvm::Error::success();
  auto out = addr(sum.getResult(), j, r);
  if (!out)
    return out.takeError();
  return ops.finishSums(partials[op], blocks, w, *out);
}

llvm::Error CudaChunkedRun::weightGradient(LinearGradWeightOp lw, int64_t j,
                                           bool first, bool last, Resident &r) {
  Operation *op = lw;
  // The CPU's slices of rows, each inside one interval, added in order
  // at the last one.
  auto x = addr(lw.getInput(), j, r), dy = addr(lw.getGradOutput(), j, r);
  if (!x || !dy)
    return llvm::joinErrors(x.takeError(), dy.takeError());
  int64_t kk = width(lw.getInput()), n = width(lw.getGradOutput());
  int64_t slices = cuda::RuntimeOps::slicesFor(g.numVertices);
  if (first) {
    auto p = scratch(slices * kk * n * 4, "weight gradient slices");
    if (!p)
      return p.takeError();
    partials[op] = *p;
  }
  if (auto e = ops.weightGradSlices(*x, *dy, kk, n, g.numVertices, lo(j),
                                    hi(j), partials[op]))
    return e;
  if (!last)
    return llvm::Error::success();
  auto dw = addr(lw.getResult(), j, r);
  if (!dw)
    return dw.takeError();
  return ops.sumSlices(partials[op], slices, kk * n, *dw);
}

llvm::Error CudaChunkedRun::loss(Operation *op, int64_t j, bool first,
                                 bool last, Resident &r) {
  if (auto e = lossRows())
    return e;
  Value logitsV = op->getOperand(0), labelsV = op->getOperand(1);
  auto logits = addr(logitsV, j, r), labels = addr(labelsV, j, r);
  if (!logits || !labels)
    return llvm::joinErrors(logits.takeError(), labels.takeError());
  const int64_t c = width(logitsV), n = numRows;
  constexpr int64_t kState = cuda::kReduceThreads * 8;
  // Loss rows [b, b + m): their vertices (rows from b on, or b on).
  auto rowsAt = [&](int64_t b) {
    return rows ? rows + CUdeviceptr(b * 4) : CUdeviceptr(0);
  };
  if (first) {
    // The count is over every loss row: the labels whole (a graph input
    // outside the plan, or resident for the run), a window of rows at a
    // time. `sums`: the sum, the count, then the sum's and the count's
    // running states.
    const Tensor *all = chunked::external(model, ctx, labelsV);
    if (!all)
      return errorAt(op, "labels must be a graph input in a chunked run");
    auto whole = b.resident("input." + chunked::argName(
                                           model, cast<BlockArgument>(labelsV)),
                            all->i32(), all->numElements() * 4);
    if (!whole)
      return whole.takeError();
    auto terms = scratch(lossWindow * 8, "loss terms");
    auto sums = scratch(16 + 2 * kState, "loss sums");
    if (!terms || !sums)
      return llvm::joinErrors(terms.takeError(), sums.takeError());
    lossTerms[op] = *terms;
    lossCounts[op] = *sums;
    if (auto e = dev.fill32(*sums, 0, (16 + 2 * kState) / 4))
      return e;
    const CUdeviceptr countState = *sums + CUdeviceptr(16 + kState);
    for (int64_t b = 0; b < n; b += lossWindow) {
      const int64_t m = std::min(lossWindow, n - b);
      if (auto e = ops.labelValid(whole->ptr, c, rowsAt(b), m, b, *terms))
        return e;
      if (auto e = ops.reducePart(0, *terms, m, b, false, countState))
        return e;
    }
    if (auto e = ops.reduceFinish(countState, *sums + 8))
      return e;
    if (!lossAscending) // every term, each written by its interval
      if (auto e = dev.fill32(*terms, 0, lossWindow * 2))
        return e;
  }
  const CUdeviceptr terms = lossTerms[op], sums = lossCounts[op],
                    count = sums + 8, state = sums + 16;
  // This interval's loss rows, or every loss row.
  const int64_t b = lossAscending && j >= 0 ? lossBegin[size_t(j)] : 0,
                e = lossAscending && j >= 0 ? lossBegin[size_t(j) + 1] : n;
  auto res = addr(op->getResult(0), j, r);
  if (!res)
    return res.takeError();
  if (isa<CrossEntropyOp>(op)) {
    if (!lossAscending) {
      if (auto err = ops.crossEntropy(*logits, c, *labels, rows, n, 0, lo(j),
                                      hi(j), terms))
        return err;
      if (!last)
        return llvm::Error::success();
      if (auto err = ops.reduce(0, terms, n, false, sums))
        return err;
      return ops.scalar(sums, count, 1.0, *res);
    }
    for (int64_t w = b; w < e; w += lossWindow) {
      const int64_t m = std::min(lossWindow, e - w);
      if (auto err = ops.crossEntropy(*logits, c, *labels, rowsAt(w), m, w,
                                      lo(j), hi(j), terms))
        return err;
      if (auto err = ops.reducePart(0, terms, m, w, false, state))
        return err;
    }
    if (!last)
      return llvm::Error::success();
    if (auto err = ops.reduceFinish(state, sums))
      return err;
    return ops.scalar(sums, count, 1.0, *res);
  }
  auto grad = addr(op->getOperand(2), j, r);
  if (!grad)
    return grad.takeError();
  if (auto err = dev.fill32(*res + CUdeviceptr(lo(j) * c * 4), 0,
                            (hi(j) - lo(j)) * c))
    return err;
  return ops.crossEntropyGrad(*logits, c, *labels, rowsAt(b), e - b, b, lo(j),
                              hi(j), *grad, count, *res);
}

// Model-level scalars and parameter-sized arithmetic (whole values).
llvm::Error CudaChunkedRun::l2(Operation *op, int64_t n, int64_t j,
                               Resident &r) {
  auto x = addr(op->getOperand(0), j, r), out = addr(op->getResult(0), j, r);
  if (!x || !out)
    return llvm::joinErrors(x.takeError(), out.takeError());
  auto s = scratch(8, "l2 sum");
  if (!s)
    return s.takeError();
  if (auto e = ops.reduce(*x, 0, n, true, *s))
    return e;
  return ops.scalar(*s, 0, 0.5, *out);
}

llvm::Error CudaChunkedRun::neg(Operation *op, int64_t n, int64_t j,
                                Resident &r) {
  auto x = addr(op->getOperand(0), j, r), out = addr(op->getResult(0), j, r);
  if (!x || !out)
    return llvm::joinErrors(x.takeError(), out.takeError());
  return ops.neg(*x, *out, n);
}

llvm::Error CudaChunkedRun::binary(Operation *op, int64_t na, int64_t nb,
                                   int64_t n, int64_t j, Resident &r) {
  auto x = addr(op->getOperand(0), j, r), y = addr(op->getOperand(1), j, r);
  if (!x || !y)
    return llvm::joinErrors(x.takeError(), y.takeError());
  auto out = addr(op->getResult(0), j, r);
  if (!out)
    return out.takeError();
  return ops.binary(binaryOpCode(op), *x, na, *y, nb, *out, n);
}

llvm::Expected<std::vector<Tensor>>
CudaBackend::executeChunked(ModelOp model, const ExecutionContext &ctx,
                            const ChunkedOptions &options, ChunkedStats *stats) {
  auto found = plans.find(model->getParentOfType<ModuleOp>().getOperation());
  if (found == plans.end())
    return llvm::createStringError(
        "this plan's kernels were not compiled for the CUDA device");
  ChunkedPlanCache local;
  auto entry = chunked::planRun(model, ctx, options, local);
  if (!entry)
    return entry.takeError();
  const PlanMemory &pm = (*entry)->chunk.memory;
  const MemoryPlan &memoryPlan = (*entry)->chunk.plan;
  std::unique_ptr<NextTier> spill;
  auto tier = chunked::nextTier(**entry, options, spill);
  if (!tier)
    return tier.takeError();
  ExecutionContext runCtx = ctx;
  std::unique_ptr<ChunkReadAhead> ahead =
      chunked::readAhead(model, runCtx, pm, options);
  CudaChunkedRun run(*this, *found->second, model, runCtx, pm);
  chunked::InputTier inputs(
      **tier, [&](int t) { return run.isInput(t); },
      [&](int t, void *to, int64_t bytes, const RowSelection *rows) {
        return chunked::readInput(model, ctx, pm, t, to, bytes, rows);
      });
  StagedTier staged(inputs, *device);
  CudaTier pool(*device, (*entry)->chunk.room());
  auto ran = runMemoryPlan(
      pm.problem, memoryPlan, pool, staged,
      chunked::reporting([&](int k, Resident &r) { return run.compute(k, r); },
                         options, int64_t(pm.steps.size())),
      kPrefetchDepth, chunked::chunkRows(runCtx, pm));
  if (!ran)
    return ran.takeError();
  if (auto e = device->synchronize())
    return std::move(e);
  if (ctx.intervalsUsed)
    *ctx.intervalsUsed = 1;
  chunked::noteReadAhead(ahead.get(), stats);
  if (stats) {
    stats->intervals = (*entry)->chunk.intervals();
    stats->emptyChunks = (*entry)->chunk.memory.emptyChunks();
    stats->group = pm.group;
    stats->minimumBytes = (*entry)->chunk.minimum;
    stats->edgesSplit = pm.edgesSplit();
    stats->pinnedBytes = pm.pinnedBytes;
    stats->method = memoryPlan.method;
    stats->plannedBytes = memoryPlan.bytesMoved();
    chunked::noteRowLoads(pm, memoryPlan, stats);
    stats->run = *ran;
    stats->csrBytesUploaded = run.csrBytes();
    stats->csrEdgesUploaded = run.csrEdges();
    stats->deviceOutsideBytes = run.outsideBytes();
  }
  return run.takeResults();
}
