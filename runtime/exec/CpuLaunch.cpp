//===- CpuLaunch.cpp - the CPU's kernel launches of an in-memory run ------===//
//
// CpuRun::launch: a generated kernel over the row blocks of the thread
// pool, with its operands' buffers; propagations over source intervals
// (NGra's 2-D chunks in memory), over a part's interior rows while its halo
// is gathered, results written over dying operands where the kernel allows.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/CpuRun.h"

using namespace mlir;
using namespace saga;
using namespace saga::exec;

FlatMemRef CpuRun::kernelBuffer(void *data, int64_t size, Type type) const {
  auto domain = dyn_cast<DomainType>(type);
  if (!ctx.dist || !domain)
    return flat(data, size);
  int64_t rows = rowsOf(type);
  int64_t rowSize = rows ? size / rows : 0;
  int64_t firstRow =
      domain.isEdgeDomain() ? ctx.dist->part.edgeBase : ctx.dist->part.begin;
  return flatFrom(data, size, firstRow * rowSize, 4);
}

bool CpuRun::needsHalo(Value v) const {
  auto domain = dyn_cast<DomainType>(v.getType());
  return ctx.dist && domain && !domain.isEdgeDomain() && !haloValid.contains(v);
}

llvm::Error CpuRun::startGather(Value v) {
  auto it = owned.find(v);
  if (it == owned.end())
    return llvm::createStringError("a value read across parts is neither an "
                                   "input nor a plan buffer");
  Tensor &t = *it->second;
  return ctx.dist->startGather(t.f32(), t.rowSize());
}

llvm::Error CpuRun::refreshHalo(Value v) {
  if (!needsHalo(v))
    return llvm::Error::success();
  if (llvm::Error e = startGather(v))
    return e;
  if (llvm::Error e = ctx.dist->finish())
    return e;
  haloValid.insert(v);
  return llvm::Error::success();
}

CpuRun::Ranges CpuRun::rangesOf(const std::vector<int64_t> &blocks) {
  Ranges r;
  for (size_t i = 0; i + 1 < blocks.size(); ++i)
    r.emplace_back(blocks[i], blocks[i + 1]);
  return r;
}

void CpuRun::splitInterior() {
  const std::vector<bool> &interior = ctx.dist->part.interior;
  // Shorter runs of interior rows stay with their block's boundary rows:
  // a task costs a launch.
  constexpr int64_t kMinRun = 32;
  for (bool blockwise : {false, true}) {
    InteriorSplit &split = interiorSplit[blockwise];
    for (auto [begin, end] : rangesOf(inBlocks)) {
      if (blockwise) {
        bool all = std::all_of(interior.begin() + begin, interior.begin() + end,
                               [](bool b) { return b; });
        (all ? split.interior : split.boundary).emplace_back(begin, end);
        continue;
      }
      int64_t pieceFrom = begin; // start of the boundary piece being grown
      for (int64_t r = begin; r < end;) {
        int64_t run = r;
        while (run < end && interior[size_t(run)])
          ++run;
        if (run - r >= kMinRun) {
          if (r > pieceFrom)
            split.boundary.emplace_back(pieceFrom, r);
          split.interior.emplace_back(r, run);
          pieceFrom = run;
        }
        r = run == r ? r + 1 : run;
      }
      if (end > pieceFrom)
        split.boundary.emplace_back(pieceFrom, end);
    }
  }
}

llvm::Error CpuRun::launch(LaunchOp op) {
  if (!ctx.kernels->has(op.getCallee()))
    return errorAt(op, "kernel '" + op.getCallee().str() + "' was not compiled");
  std::vector<FlatMemRef> buffers;
  auto kernelFn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      op, op.getCalleeAttr());
  bool reversed = kernelFn && kernelFn->hasAttr("saga.reversed");
  // Propagate and edge_map kernels walk the in-edges of their rows (the
  // out-edges for a reversed propagate). An edge_map writes its results'
  // rows by edge id, each edge once, so any split of the rows is race-free.
  bool overEdges = op.getPropagate() || op.getEdgeMap();
  // A part of a partitioned graph: kernels walk its CSR with global
  // numbers, offsets indexed from the part's first global row.
  const Graph &g = ctx.dist ? ctx.dist->part.kernelView : *ctx.graph;
  const int64_t rowBase = ctx.dist ? ctx.dist->part.begin : 0;
  const auto &offsets = reversed ? g.outOffsets : g.inOffsets;
  auto offsetsView = [&](const std::vector<int64_t> &o) {
    return flatFrom(o.data(), int64_t(o.size()), rowBase, sizeof(int64_t));
  };
  auto csr = [&](const std::vector<int64_t> &offsets,
                 const std::vector<int32_t> &others,
                 const std::vector<int32_t> &ids) {
    return std::array<FlatMemRef, 3>{
        offsetsView(offsets),
        flat(const_cast<int32_t *>(others.data()), others.size()),
        flat(const_cast<int32_t *>(ids.data()), ids.size())};
  };
  // Values the kernel reads at the other end of an edge (a reversed
  // propagation: at its rows, halo rows included) need their halo rows.
  std::vector<Value> gathers; // started once the kernel's buffers are set
  if (ctx.dist && overEdges && kernelFn) {
    if (op.getPropagate() && reversed && kernelFn->hasAttr("saga.epilogue"))
      return errorAt(op, "a reversed propagation with a fused epilogue "
                         "cannot run on a part of a graph (compile with "
                         "CompileOptions::distributed)");
    auto groups = kernelFn->getAttrOfType<DenseI64ArrayAttr>(
        "saga.operand_groups");
    if (!groups)
      return errorAt(op, "kernel has no saga.operand_groups");
    for (int64_t i = 0; i < groups[0] && i < int64_t(op->getNumOperands());
         ++i) {
      Value v = op->getOperand(unsigned(i));
      // Forward kernels compute their interior rows while the gathers run
      // (below); a reversed one reads few halo values, gathered first.
      if (ctx.dist->overlaps() && !reversed && needsHalo(v)) {
        if (!llvm::is_contained(gathers, v))
          gathers.push_back(v);
      } else if (llvm::Error e = refreshHalo(v)) {
        return errorAt(op, llvm::toString(std::move(e)));
      }
    }
  }
  if (overEdges)
    llvm::append_range(buffers,
                       reversed ? csr(g.outOffsets, g.outTargets, g.outEdgeIds)
                                : csr(g.inOffsets, g.inSources, g.inEdgeIds));
  // A propagation over source intervals (EdgeChunks): one launch per chunk,
  // the running reduction kept in `state` between them. Its kernel also
  // takes the whole CSR's offsets, the phase word and the state rows.
  const EdgeChunks *chunks = nullptr;
  std::unique_ptr<Tensor> state;
  if (op.getPropagate()) {
    int64_t parts = intervalsFor(kernelFn, reversed);
    if (parts > 1)
      chunks = &ctx.chunks->get(reversed, parts);
    if (ctx.intervalsUsed)
      *ctx.intervalsUsed =
          std::max(*ctx.intervalsUsed,
                   chunks ? int64_t(chunks->numChunks()) : int64_t(1));
    buffers.push_back(offsetsView(offsets));
    auto width = kernelFn ? kernelFn->getAttrOfType<IntegerAttr>(
                                "saga.state_width")
                          : IntegerAttr();
    if (chunks && !width)
      return errorAt(op, "propagate kernel has no saga.state_width");
    int64_t w = chunks ? width.getInt() : 0;
    state = std::make_unique<Tensor>(Tensor::uninitialized(
        {chunks ? int64_t(g.numVertices) : 0, w}));
    liveBytes += size_t(state->numElements()) * 4;
    peakBytes = std::max(peakBytes, liveBytes);
    buffers.push_back(flat(state->data(), state->numElements()));
  }
  auto releaseState = llvm::scope_exit([&] {
    if (state)
      liveBytes -= size_t(state->numElements()) * 4;
  });
  // Where the phase word goes among the kernel's arguments (before the
  // state rows), or -1.
  const size_t phaseAt = op.getPropagate() ? buffers.size() - 1 : size_t(-1);
  for (Value v : op.getOperands()) {
    const Tensor *t = lookup(v);
    if (!t)
      return errorAt(op, "operand has no value (plan out of order?)");
    buffers.push_back(kernelBuffer(
        const_cast<void *>(static_cast<const void *>(t->f32())),
        t->numElements(), v.getType()));
  }
  // A result only summed over its rows is never stored: each task writes
  // its rows to a scratch buffer and adds them up per kRowsPerTask block,
  // in row order and in double, as saga.sum_rows does; the blocks' sums are
  // then added in block order. The sum is the one sum_rows would give, bit
  // for bit, and [V, ...] of memory is saved (the per-vertex parameter
  // gradients of GAT's attention vectors, for example).
  struct Summed {
    Value result;
    size_t buffer;      // index in `buffers`
    int64_t rowSize;
    std::vector<double> partial; // per row block
  };
  std::vector<Summed> summed;
  llvm::ArrayRef<int64_t> overwritable;
  if (kernelFn && ctx.reuseBuffers)
    if (auto a = kernelFn->getAttrOfType<DenseI64ArrayAttr>(
            "saga.overwritable"))
      overwritable = a.asArrayRef();
  for (Value r : op.getResults()) {
    if (!op.getEdgeMap() && onlySummed(r)) {
      int64_t w = 1;
      for (int64_t d : shapeOf(r.getType(), 1))
        w *= d;
      summed.push_back({r, buffers.size(), w,
                        std::vector<double>(size_t(sumBlocks) * size_t(w))});
      buffers.push_back(flat(nullptr, ctx.graph->numVertices * w));
      continue;
    }
    Tensor *t = reuse(op, r, overwritable);
    if (!t)
      t = allocate(r);
    buffers.push_back(kernelBuffer(t->data(), t->numElements(), r.getType()));
  }
  // Dropout over edges keys its masks by the edge ids (saga.edge_keys),
  // last: the same ids, or on a part of a graph the whole graph's (its
  // kernels' ids are positions in the whole in-edge CSR).
  const bool edgeKeys = overEdges && kernelFn && kernelFn->hasAttr("saga.edge_keys");
  if (edgeKeys && ctx.dist) {
    const auto &keys =
        reversed ? ctx.dist->part.outEdgeKeys : ctx.dist->part.inEdgeKeys;
    buffers.push_back(flat(const_cast<int32_t *>(keys.data()), keys.size()));
  } else if (edgeKeys) {
    buffers.push_back(buffers[2]);
  }
  const std::vector<int64_t> &blocks =
      blocksOf(op, !overEdges ? kMapBlocks : reversed ? kOutBlocks : kInBlocks);
  int64_t phase = kPhaseWhole;
  FirstError failures; // a device's launch error, from any task
  auto runTask = [&](int64_t localBegin, int64_t localEnd) {
    // Local rows; the kernel sees them as global rows (a part's rows start
    // at rowBase).
    int64_t begin = localBegin + rowBase, end = localEnd + rowBase;
    int64_t seed = static_cast<int64_t>(ctx.seed);
    std::vector<FlatMemRef> local = buffers;
    thread_local std::vector<std::vector<float>> scratch;
    if (scratch.size() < summed.size())
      scratch.resize(summed.size());
    for (size_t i = 0; i < summed.size(); ++i) {
      // 64-byte aligned, as every tensor is (kernels may use aligned vector
      // stores on whole rows; begin is a multiple of kRowsPerTask).
      const int64_t elements = (end - begin) * summed[i].rowSize;
      scratch[i].resize(size_t(elements) + 16);
      // Row `begin` of the result is the scratch's first row. The size is
      // the scratch's, so that kernels do not stream into it (Emitter::
      // copyOut decides by a result's size).
      float *base = reinterpret_cast<float *>(
          reinterpret_cast<uintptr_t>(aligned64(scratch[i])) -
          uintptr_t(begin * summed[i].rowSize) * sizeof(float));
      local[summed[i].buffer].allocated = base;
      local[summed[i].buffer].aligned = base;
      local[summed[i].buffer].size = elements;
    }
    std::vector<KernelArg> args;
    for (size_t k = 0; k < local.size(); ++k) {
      if (k == phaseAt)
        args.push_back(KernelArg::i64(phase));
      args.push_back(KernelArg::buffer(local[k].aligned, local[k].size));
    }
    if (llvm::Error e = ctx.kernels->launch(op.getCallee(), begin, end, seed,
                                            args)) {
      failures.note(std::move(e));
      return;
    }
    if (!(phase & kPhaseFinish))
      return; // rows not final yet
    for (size_t i = 0; i < summed.size(); ++i)
      addToBlockSums(aligned64(scratch[i]), localBegin, localEnd,
                     summed[i].rowSize, summed[i].partial.data());
  };
  // Runs `ranges`; while exchanges are in flight, the calling thread moves
  // them on between its tasks.
  bool inFlight = false;
  const std::thread::id caller = std::this_thread::get_id();
  auto runRanges = [&](const Ranges &ranges) {
    ctx.pool->parallelFor(int64_t(ranges.size()), [&](int64_t i) {
      runTask(ranges[size_t(i)].first, ranges[size_t(i)].second);
      if (inFlight && std::this_thread::get_id() == caller)
        ctx.dist->progress();
    });
  };
  // A reversed propagation on a part whose halo sums go back while its
  // owned rows compute: the blocks holding halo rows (the last ones) first.
  const bool scatterLater =
      ctx.dist && reversed && ctx.dist->overlaps() &&
      llvm::any_of(op.getResults(), [&](Value r) { return !onlySummed(r); });
  if (!gathers.empty()) {
    for (Value v : gathers)
      if (llvm::Error e = startGather(v))
        return errorAt(op, llvm::toString(std::move(e)));
    inFlight = true;
    const InteriorSplit &split = interiorSplit[summed.empty() ? 0 : 1];
    runRanges(split.interior);
    inFlight = false;
    if (llvm::Error e = ctx.dist->finish())
      return errorAt(op, llvm::toString(std::move(e)));
    haloValid.insert(gathers.begin(), gathers.end());
    if (!failures.failed())
      runRanges(split.boundary);
  } else if (scatterLater) {
    Ranges halo, own;
    for (auto r : rangesOf(blocks))
      (r.second > ctx.dist->part.owned() ? halo : own).push_back(r);
    runRanges(halo);
    if (!failures.failed()) {
      for (Value r : op.getResults())
        if (!onlySummed(r))
          if (llvm::Error e = ctx.dist->startScatter(
                  owned.find(r)->second->f32(), owned.find(r)->second->rowSize()))
            return errorAt(op, llvm::toString(std::move(e)));
      inFlight = true;
      runRanges(own);
      inFlight = false;
    }
    if (llvm::Error e = ctx.dist->finish())
      return errorAt(op, llvm::toString(std::move(e)));
  } else if (!chunks) {
    runRanges(rangesOf(blocks));
  } else {
    for (size_t c = 0; c < chunks->numChunks(); ++c) {
      const EdgeChunks::Chunk &chunk = chunks->chunks[c];
      auto view = csr(chunk.offsets, chunk.others, chunk.edgeIds);
      std::copy(view.begin(), view.end(), buffers.begin());
      if (edgeKeys)
        buffers.back() = view[2];
      phase = (c > 0 ? kPhaseResume : 0) |
              (c + 1 == chunks->numChunks() ? kPhaseFinish : 0);
      runRanges(rangesOf(blocks));
      if (failures.failed())
        break;
    }
  }
  if (llvm::Error e = failures.take())
    return errorAt(op, "on the " + ctx.kernels->name() + ": " +
                           llvm::toString(std::move(e)));
  for (size_t i = 0; i < summed.size(); ++i) {
    Value r = summed[i].result;
    SumRowsOp sum = onlySummed(r);
    Tensor total(shapeOf(sum.getResult().getType(), 0));
    finishBlockSums(summed[i].partial, sumBlocks, summed[i].rowSize,
                    total.f32());
    // A reversed propagation's halo rows are partial sums over this part's
    // edges: each edge is counted once over all parts, so the sum is whole.
    if (llvm::Error e = sumOverParts(total.f32(), total.numElements()))
      return errorAt(op, llvm::toString(std::move(e)));
    summedInKernel[r] = std::move(total);
  }
  // A reversed propagation's halo rows are partial sums owed to their
  // owners.
  if (ctx.dist && reversed && !scatterLater)
    for (Value r : op.getResults()) {
      if (onlySummed(r))
        continue;
      Tensor &t = *owned.find(r)->second;
      if (llvm::Error e = ctx.dist->scatterHalo(t.f32(), t.rowSize()))
        return errorAt(op, llvm::toString(std::move(e)));
    }
  return llvm::Error::success();
}

int64_t CpuRun::intervalsFor(func::FuncOp kernel, bool reversed) const {
  if (!ctx.chunks || ctx.sourceIntervals == 1 || !kernel || ctx.dist ||
      extents)
    return 1;
  if (ctx.sourceIntervals > 1)
    return ctx.sourceIntervals;
  auto bytes = kernel->getAttrOfType<IntegerAttr>("saga.gather_bytes");
  const Graph &g = *ctx.graph;
  const auto &offsets = reversed ? g.outOffsets : g.inOffsets;
  return EdgeChunks::cacheSizedIntervals(g.numVertices, offsets.back(),
                             bytes ? bytes.getInt() : 0);
}

Tensor *CpuRun::reuse(LaunchOp op, Value result,
                   llvm::ArrayRef<int64_t> overwritable) {
  unsigned r = cast<OpResult>(result).getResultNumber();
  for (size_t k = 0; k + 1 < overwritable.size(); k += 2) {
    if (overwritable[k] != r)
      continue;
    Value operand = op.getOperand(unsigned(overwritable[k + 1]));
    // Passed once: the kernel reads it nowhere but at the rows it writes.
    if (llvm::count(op.getOperands(), operand) != 1)
      continue;
    if (Tensor *t = takeOver(op, operand, result))
      return t;
  }
  return nullptr;
}

Tensor *CpuRun::takeOver(Operation *op, Value operand, Value result) {
  auto it = owned.find(operand);
  if (it == owned.end() ||
      !llvm::all_of(operand.getUsers(), [&](Operation *user) {
        return user == op || isa<ReleaseOp>(user) || inSchedule(user) ||
               user->isBeforeInBlock(op);
      }))
    return nullptr;
  std::unique_ptr<Tensor> t = std::move(it->second);
  owned.erase(it);
  values.erase(operand);
  t->reinterpret(shapeOf(result.getType(), rowsOf(result.getType())),
                 dtypeOf(result.getType()));
  Tensor *raw = t.get();
  owned[result] = std::move(t);
  values[result] = raw;
  return raw;
}

SumRowsOp CpuRun::onlySummed(Value result) {
  auto domain = dyn_cast<DomainType>(result.getType());
  if (!domain || domain.isEdgeDomain())
    return {};
  SumRowsOp sum;
  for (Operation *user : result.getUsers()) {
    if (isa<ReleaseOp>(user) || inSchedule(user))
      continue;
    auto s = dyn_cast<SumRowsOp>(user);
    if (!s || sum)
      return {};
    sum = s;
  }
  return sum;
}
