//===- CpuChunkedRun.cpp - the CPU's steps of a chunked run ---------------===//

#include "runtime/exec/CpuChunkedRun.h"

using namespace mlir;
using namespace saga;
using namespace saga::exec;

const Tensor *CpuChunkedRun::external(Value v) const {
  return chunked::external(model, ctx, v);
}

const std::vector<int32_t> &CpuChunkedRun::lossRows() {
  if (lossRowsOnce)
    return *lossRowsOnce;
  // The caller's mask is used where it is, not copied.
  if (ctx.lossMask.empty())
    allRows = exec::lossRows(ctx.lossMask, g.numVertices);
  lossRowsOnce = ctx.lossMask.empty() ? &allRows : &ctx.lossMask;
  const std::vector<int32_t> &rows = *lossRowsOnce;
  lossBegin = chunked::lossIntervalStarts(rows, pm.bounds, g.numVertices);
  lossAscending = !lossBegin.empty();
  return rows;
}

const std::vector<int32_t> &CpuChunkedRun::lossPlacesIn(int64_t j) {
  if (lossPlaces.empty()) {
    const std::vector<int32_t> &rows = *lossRowsOnce;
    // [parts]: every place, for a loss over the whole graph (j < 0).
    lossPlaces.resize(size_t(parts) + 1);
    for (size_t q = 0; q < rows.size(); ++q)
      lossPlaces.back().push_back(int32_t(q));
    for (size_t q = 0; q < rows.size(); ++q) {
      int32_t v = rows[q];
      if (v < 0 || v >= g.numVertices)
        continue;
      size_t in = size_t(std::upper_bound(pm.bounds.begin(), pm.bounds.end(), v) -
                         pm.bounds.begin()) - 1;
      lossPlaces[std::min(in, size_t(parts) - 1)].push_back(int32_t(q));
    }
  }
  return lossPlaces[j < 0 ? size_t(parts) : size_t(j)];
}

void CpuChunkedRun::forLossRows(
    int64_t j, const int32_t *labels, int64_t c, bool byRow,
    const std::function<void(int32_t, int32_t, std::vector<float> &)> &fn) {
  const std::vector<int32_t> &rows = *lossRowsOnce;
  using Range = std::pair<int64_t, int64_t>;
  auto [first, last] = lossAscending ? lossRange(j) : Range(0, 0);
  const std::vector<int32_t> *places =
      lossAscending ? nullptr : &lossPlacesIn(j);
  const int64_t count = places ? int64_t(places->size()) : last - first;
  constexpr int64_t kBlock = 4096;
  auto place = [&](int64_t k) {
    return places ? (*places)[size_t(k)] : int32_t(first + k);
  };
  auto run = [&](int64_t begin, int64_t end, auto placeAt) {
    std::vector<float> e(static_cast<size_t>(c));
    for (int64_t k = begin; k < end; ++k) {
      int32_t q = placeAt(k), v = rows[size_t(q)];
      if (labels[v] >= 0 && labels[v] < c)
        fn(q, v, e);
    }
  };
  if (byRow) {
    // Writes into rows: a repeated row's places in one task (rowTasks).
    std::vector<int32_t> all(static_cast<size_t>(count));
    for (int64_t k = 0; k < count; ++k)
      all[size_t(k)] = place(k);
    const exec::RowTasks tasks = exec::rowTasks(rows, std::move(all), kBlock);
    ctx.pool->parallelFor(tasks.count(), [&](int64_t t) {
      run(tasks.bounds[size_t(t)], tasks.bounds[size_t(t) + 1],
          [&](int64_t k) { return tasks.places[size_t(k)]; });
    });
    return;
  }
  const int64_t blocks = (count + kBlock - 1) / kBlock;
  ctx.pool->parallelFor(blocks, [&](int64_t b) {
    run(b * kBlock, std::min(count, (b + 1) * kBlock), place);
  });
}

char *CpuChunkedRun::addr(Value v, int64_t j, Resident &r) {
  auto d = dyn_cast<DomainType>(v.getType());
  bool split = pm.splitsByInterval(v.getType());
  auto it = tensorOf.find({v.getAsOpaquePointer(), split ? j : -1});
  if (it != tensorOf.end()) {
    char *data = static_cast<char *>(r.at(it->second).data);
    if (!split)
      return data;
    // Indexed by the whole value's row (an edge's number in chunk order).
    int64_t rowBytes = elementsOf(v.getType(), g) /
                       (d.isEdgeDomain() ? g.numEdges : g.numVertices) * 4;
    return data - pm.firstRow(v.getType(), j) * rowBytes;
  }
  if (const Tensor *t = external(v))
    return static_cast<char *>(const_cast<void *>(
        static_cast<const void *>(t->f32())));
  auto p = pinned.find(v);
  if (p == pinned.end()) {
    p = pinned
            .try_emplace(v, Tensor(shapeOf(v.getType(),
                                           d && d.isEdgeDomain()
                                               ? g.numEdges
                                               : g.numVertices),
                                   dtypeOf(v.getType())))
            .first;
    // Splat constants (scalars, and those hoisted out of bodies).
    // (Others are refused where the plan loads them: chunked::readInput.)
    if (auto c = v.getDefiningOp<arith::ConstantOp>()) {
      if (auto value = splatValue(c))
        std::fill(p->second.f32(), p->second.f32() + p->second.numElements(),
                  *value);
      else
        llvm::consumeError(value.takeError());
    }
  }
  return static_cast<char *>(p->second.data());
}

std::vector<int64_t> CpuChunkedRun::window(const std::vector<int64_t> &blocks,
                                        int64_t j) const {
  std::vector<int64_t> w{lo(j)};
  for (int64_t b : blocks)
    if (b > lo(j) && b < hi(j))
      w.push_back(b);
  w.push_back(hi(j));
  return w;
}

llvm::Expected<int64_t> CpuChunkedRun::readInput(int t, void *to, int64_t bytes,
                                              const RowSelection *rows) {
  return chunked::readInput(model, ctx, pm, t, to, bytes, rows);
}

llvm::Error CpuChunkedRun::launch(LaunchOp op, int64_t i, int64_t j, Resident &r) {
  auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      op, op.getCalleeAttr());
  if (!ctx.kernels->has(op.getCallee()) || !fn)
    return errorAt(op, "kernel '" + op.getCallee().str() + "' was not compiled");
  bool reversed = fn->hasAttr("saga.reversed");
  bool overEdges = op.getPropagate() || op.getEdgeMap();
  // Propagations and edge maps run per 2-D chunk (i, j): the edges from
  // interval i into interval j.
  bool chunked = overEdges && parts > 1;
  // The buffers after the CSR: whole-graph offsets, the phase (its place),
  // the state, operands, results.
  std::vector<FlatMemRef> buffers;
  size_t phaseAt = size_t(-1);
  if (op.getPropagate()) {
    const auto &offsets = reversed ? g.outOffsets : g.inOffsets;
    buffers.push_back(flat(const_cast<int64_t *>(offsets.data()), offsets.size()));
    phaseAt = buffers.size();
    if (chunked) {
      int64_t width = fn->getAttrOfType<IntegerAttr>("saga.state_width").getInt();
      char *state = static_cast<char *>(r.at(states.at({op, j})).data) -
                    lo(j) * width * 4;
      buffers.push_back(flat(state, g.numVertices * width));
    } else {
      buffers.push_back(flat(nullptr, 0));
    }
  }
  auto groups = fn->getAttrOfType<DenseI64ArrayAttr>("saga.operand_groups");
  // An empty chunk's other-end rows are not resident (the plan loads none).
  const bool empty = chunked && pm.chunkEmpty(i, j, reversed);
  for (auto [k, v] : llvm::enumerate(op.getOperands())) {
    bool other = chunked && chunked::atOtherEnd(pm, groups, reversed, k, v);
    buffers.push_back(flat(other && empty ? nullptr : addr(v, other ? i : j, r),
                           elementsOf(v.getType(), g)));
  }
  // A propagation writes its results at its last call only (before, their
  // rows are not resident: the kernel only reads their size).
  const bool writesEver = !chunked || !op.getPropagate() || i + 1 == parts;
  const bool edgeKeys = overEdges && fn->hasAttr("saga.edge_keys");
  const size_t resultsAt = buffers.size();
  for (Value res : op.getResults())
    buffers.push_back(flat(writesEver ? addr(res, j, r) : nullptr,
                           elementsOf(res.getType(), g)));
  std::vector<int64_t> tasks =
      window(!overEdges ? mapBlocks : reversed ? outBlocks : inBlocks, j);
  // One kernel call over the rows of interval j, with `csr` in front.
  FirstError failures; // a device's launch error, from any task
  // `shift`: the buffers in front of `buffers` (a chunk's CSR).
  auto run = [&](std::vector<FlatMemRef> all, int64_t phase, size_t shift) {
    std::vector<KernelArg> args;
    for (size_t b = 0; b < all.size(); ++b) {
      if (phaseAt != size_t(-1) && b == phaseAt + shift)
        args.push_back(KernelArg::i64(phase));
      args.push_back(KernelArg::buffer(all[b].aligned, all[b].size));
    }
    ctx.pool->parallelFor(int64_t(tasks.size()) - 1, [&](int64_t task) {
      int64_t begin = tasks[size_t(task)], end = tasks[size_t(task) + 1];
      if (llvm::Error e = ctx.kernels->launch(
              op.getCallee(), begin, end, static_cast<int64_t>(ctx.seed), args))
        failures.note(std::move(e));
    });
  };
  auto launchFailure = [&]() -> llvm::Error {
    if (llvm::Error e = failures.take())
      return errorAt(op, "on the " + ctx.kernels->name() + ": " +
                             llvm::toString(std::move(e)));
    return llvm::Error::success();
  };
  if (!overEdges) {
    run(buffers, kPhaseWhole, 0);
    return launchFailure();
  }
  // The chunk, in one or more parts (a file's skewed chunk in bounded
  // pieces): a propagation resumes its rows after the first part of its
  // first chunk and finishes them at the last part of its last one, the
  // only call that writes its results.
  llvm::Error e = chunked::forEachKernelPart(
      ctx, pm.bounds, reversed,
      {op.getPropagate(), chunked, empty, i, j, parts, lo(j), hi(j), &pm},
      [&](const ChunkView &view, int64_t phase, bool writes) -> llvm::Error {
        std::vector<FlatMemRef> all{
            flat(const_cast<int64_t *>(view.offsets), int64_t(g.numVertices) + 1),
            flat(const_cast<int32_t *>(view.others), view.numEdges),
            flat(const_cast<int32_t *>(view.edgeIds), view.numEdges)};
        all.insert(all.end(), buffers.begin(), buffers.end());
        if (!writes)
          for (size_t b = resultsAt; b < buffers.size(); ++b)
            all[3 + b].allocated = all[3 + b].aligned = nullptr;
        if (edgeKeys) // dropout over edges: masks keyed by the graph's ids
          all.push_back(flat(const_cast<int32_t *>(view.edgeKeys()), view.numEdges));
        run(std::move(all), phase, 3);
        return failures.failed() ? llvm::createStringError("a launch failed")
                                 : llvm::Error::success();
      });
  if (failures.failed()) {
    llvm::consumeError(std::move(e));
    return launchFailure();
  }
  if (e)
    return errorAt(op, llvm::toString(std::move(e)));
  return llvm::Error::success();
}

llvm::Error CpuChunkedRun::read(Value v, int64_t j, Resident &r, int64_t offset,
                             int64_t bytes, void *to) {
  std::memcpy(to, addr(v, j, r) + offset, size_t(bytes));
  return llvm::Error::success();
}

llvm::Error CpuChunkedRun::gemm(Value xv, Value wv, Value yv, bool transpose,
                             int64_t j, Resident &r) {
  const float *x = reinterpret_cast<const float *>(addr(xv, j, r));
  const float *w = reinterpret_cast<const float *>(addr(wv, j, r));
  float *y = reinterpret_cast<float *>(addr(yv, j, r));
  int64_t k = elementsOf(xv.getType(), g) / g.numVertices,
          n = elementsOf(yv.getType(), g) / g.numVertices;
  std::vector<int64_t> tasks = window(mapBlocks, j);
  ctx.pool->parallelFor(int64_t(tasks.size()) - 1, [&](int64_t t) {
    int64_t begin = tasks[size_t(t)], rows = tasks[size_t(t) + 1] - begin;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, transpose ? CblasTrans : CblasNoTrans,
                int(rows), int(n), int(k), 1.0f, x + begin * k, int(k), w,
                int(transpose ? k : n), 0.0f, y + begin * n, int(n));
  });
  return llvm::Error::success();
}

llvm::Error CpuChunkedRun::degrees(Value result, int64_t j, Resident &r) {
  float *d = reinterpret_cast<float *>(addr(result, j, r));
  for (int64_t v = lo(j); v < hi(j); ++v)
    d[v] = float(g.inDegree(int32_t(v)));
  return llvm::Error::success();
}

llvm::Error CpuChunkedRun::vertexIds(Value result, int64_t j, Resident &r) {
  int32_t *d = reinterpret_cast<int32_t *>(addr(result, j, r));
  for (int64_t v = lo(j); v < hi(j); ++v)
    d[v] = int32_t(v);
  return llvm::Error::success();
}

llvm::Error CpuChunkedRun::sumRows(SumRowsOp sum, int64_t j, bool, bool last,
                                Resident &r) {
  // Per 256-row block in double, blocks added in order at the end: the
  // in-memory executor's sum bit for bit.
  int64_t w = elementsOf(sum.getInput().getType(), g) / g.numVertices;
  auto &partial = blockSums[sum];
  if (partial.empty())
    partial.assign((mapBlocks.size() - 1) * size_t(w), 0.0);
  const float *x = reinterpret_cast<const float *>(addr(sum.getInput(), j, r));
  std::vector<int64_t> tasks = window(mapBlocks, j);
  ctx.pool->parallelFor(int64_t(tasks.size()) - 1, [&](int64_t t) {
    int64_t b = tasks[size_t(t)], e = tasks[size_t(t) + 1];
    addToBlockSums(x + b * w, b, e, w, partial.data());
  });
  if (last)
    finishBlockSums(partial, int64_t(mapBlocks.size()) - 1, w,
                    reinterpret_cast<float *>(addr(sum.getResult(), j, r)));
  return llvm::Error::success();
}

llvm::Error CpuChunkedRun::weightGradient(LinearGradWeightOp lw, int64_t j, bool,
                                       bool last, Resident &r) {
  // The in-memory executor's slices; each lies inside one interval.
  const float *x = reinterpret_cast<const float *>(addr(lw.getInput(), j, r));
  const float *dy =
      reinterpret_cast<const float *>(addr(lw.getGradOutput(), j, r));
  int64_t kk = elementsOf(lw.getInput().getType(), g) / g.numVertices,
          n = elementsOf(lw.getGradOutput().getType(), g) / g.numVertices,
          blocks = int64_t(mapBlocks.size()) - 1;
  int64_t count = std::min(blocks, kWeightGradSlices);
  auto &partial = slices[lw];
  if (partial.empty())
    partial.assign(size_t(count * kk * n), 0.0f);
  ctx.pool->parallelFor(count, [&](int64_t t) {
    int64_t begin = mapBlocks[size_t(t * blocks / count)],
            end = mapBlocks[size_t((t + 1) * blocks / count)];
    if (begin < lo(j) || end > hi(j))
      return;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(kk), int(n),
                int(end - begin), 1.0f, x + begin * kk, int(kk),
                dy + begin * n, int(n), 0.0f, partial.data() + t * kk * n,
                int(n));
  });
  if (last) {
    sumSlices(partial.data(), count, kk * n,
              reinterpret_cast<float *>(addr(lw.getResult(), j, r)));
  }
  return llvm::Error::success();
}

// A loss or its gradient: the logits and labels seen from interval j, the
// classes, the loss rows.
CpuChunkedRun::Loss CpuChunkedRun::loss(Value logits, Value labels, int64_t j,
                                  Resident &r) {
  return Loss{reinterpret_cast<const float *>(addr(logits, j, r)),
              reinterpret_cast<const int32_t *>(addr(labels, j, r)),
              elementsOf(logits.getType(), g) / g.numVertices, lossRows()};
}

llvm::Error CpuChunkedRun::crossEntropy(CrossEntropyOp ce, int64_t j, bool,
                                     bool last, Resident &r) {
  // Each loss row's term, then per 8192-entry chunk in order, chunks in
  // order: the in-memory executor's sum.
  auto [logits, labels, c, rows] = loss(ce.getLogits(), ce.getLabels(), j, r);
  constexpr size_t kChunk = 8192;
  LossSum &s = lossSums[ce];
  // This interval's terms (ascending rows: its places, first at 0).
  using Range = std::pair<int64_t, int64_t>;
  auto [first, end] =
      lossAscending ? lossRange(j) : Range(0, int64_t(rows.size()));
  std::vector<double> local;
  std::vector<char> localCounted;
  std::vector<double> &terms = lossAscending ? local : s.terms;
  std::vector<char> &counted = lossAscending ? localCounted : s.counted;
  terms.resize(size_t(end - first), 0.0);
  counted.resize(size_t(end - first), 0);
  forLossRows(j, labels, c, /*byRow=*/false,
              [&](int32_t q, int32_t v, std::vector<float> &e) {
    terms[size_t(q - first)] =
        crossEntropyTerm(logits + int64_t(v) * c, c, labels[v], e);
    counted[size_t(q - first)] = 1;
  });
  // Terms into their chunks' running sums in the loss rows' order:
  // ascending rows interval by interval, others all at the last.
  if (lossAscending || last) {
    s.chunks.resize((rows.size() + kChunk - 1) / kChunk, 0.0);
    for (int64_t q = first; q < end; ++q)
      if (counted[size_t(q - first)]) {
        s.chunks[size_t(q) / kChunk] += terms[size_t(q - first)];
        ++s.n;
      }
  }
  if (last) {
    double sum = 0;
    for (double chunk : s.chunks)
      sum += chunk;
    reinterpret_cast<float *>(addr(ce.getResult(), j, r))[0] =
        float(s.n ? sum / double(s.n) : 0.0);
  }
  return llvm::Error::success();
}

llvm::Error CpuChunkedRun::crossEntropyGrad(CrossEntropyGradOp ce, int64_t j,
                                         bool, Resident &r) {
  auto [logits, labels, c, rows] = loss(ce.getLogits(), ce.getLabels(), j, r);
  float gr = reinterpret_cast<const float *>(addr(ce.getGrad(), j, r))[0];
  float *d = reinterpret_cast<float *>(addr(ce.getResult(), j, r));
  std::fill(d + lo(j) * c, d + hi(j) * c, 0.0f);
  // The count is over every loss row: labels are a graph input, whole in
  // the caller's memory.
  const Tensor *all = external(ce.getLabels());
  if (!all)
    return errorAt(ce, "labels must be a graph input in a chunked run");
  auto [known, added] = lossCounts.try_emplace(ce, 0);
  if (added)
    for (int32_t v : rows)
      known->second += all->i32()[v] >= 0 && all->i32()[v] < c;
  const int64_t count = known->second;
  if (!count)
    return llvm::Error::success();
  const double scale = double(gr) / double(count);
  forLossRows(j, labels, c, /*byRow=*/true,
              [&](int32_t, int32_t v, std::vector<float> &e) {
    addCrossEntropyGrad(logits + int64_t(v) * c, c, labels[v], scale,
                        d + int64_t(v) * c, e);
  });
  return llvm::Error::success();
}

// Model-level scalars and parameter-sized arithmetic (whole values).
llvm::Error CpuChunkedRun::l2(Operation *op, int64_t n, int64_t j, Resident &r) {
  const float *x = reinterpret_cast<const float *>(addr(op->getOperand(0), j, r));
  double s = 0;
  for (int64_t e = 0; e < n; ++e)
    s += double(x[e]) * x[e];
  reinterpret_cast<float *>(addr(op->getResult(0), j, r))[0] = float(s / 2);
  return llvm::Error::success();
}

llvm::Error CpuChunkedRun::neg(Operation *op, int64_t n, int64_t j, Resident &r) {
  const float *x = reinterpret_cast<const float *>(addr(op->getOperand(0), j, r));
  float *z = reinterpret_cast<float *>(addr(op->getResult(0), j, r));
  for (int64_t e = 0; e < n; ++e)
    z[e] = -x[e];
  return llvm::Error::success();
}

llvm::Error CpuChunkedRun::binary(Operation *op, int64_t na, int64_t nb, int64_t n,
                               int64_t j, Resident &r) {
  auto f32 = [&](Value v) { return reinterpret_cast<float *>(addr(v, j, r)); };
  binaryElementwise(op, f32(op->getOperand(0)), na, f32(op->getOperand(1)), nb,
                    f32(op->getResult(0)), n);
  return llvm::Error::success();
}
