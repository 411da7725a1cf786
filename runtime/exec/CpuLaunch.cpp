//===- Executor.cpp - runs an execution plan ------------------------------===//

#include "runtime/exec/Executor.h"
#include "runtime/exec/ExecHelpers.h"
#include "runtime/exec/FastExp.h"
#include "runtime/exec/InMemoryWalker.h"

#include "runtime/exec/KernelDevice.h"
#include "runtime/exec/RowExtents.h"
#include "runtime/distributed/Distribution.h"
#include "support/KernelAbi.h"
#include "dialect/Saga.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/ScopeExit.h"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <map>
#include <numeric>
#include <optional>
#include <thread>

using namespace mlir;
using namespace saga;
using namespace saga::exec;

namespace {


/// The CPU's steps of an in-memory run: values in host memory, kernels
/// over row blocks on the thread pool, GEMMs by BLAS; on a part of a
/// partitioned graph (ctx.dist) with halo exchanges, on a sampled batch
/// (ctx.rowLevels) over each op's rows only.
class Run : public InMemoryWalker {
public:
  explicit Run(const ExecutionContext &ctx) : InMemoryWalker(ctx) {}

private:
  llvm::Error begin(ModelOp model) override;
  llvm::Error param(ParamOp op) override;
  llvm::Error degrees(Value result) override;
  llvm::Error vertexIds(Value result) override;
  llvm::Error launch(LaunchOp op) override;
  llvm::Error linear(LinearOp op) override;
  llvm::Error linearGradInput(LinearGradInputOp op) override;
  llvm::Error weightGradient(LinearGradWeightOp op) override;
  llvm::Error sumRows(SumRowsOp op) override;
  llvm::Error crossEntropy(CrossEntropyOp op) override;
  llvm::Error crossEntropyGrad(CrossEntropyGradOp op) override;
  llvm::Error l2(L2Op op) override;
  llvm::Error fill(Value result, float value) override;
  llvm::Error neg(Operation *op) override;
  llvm::Error binary(Operation *op, int64_t na, int64_t nb,
                     int64_t n) override;
  void release(Value v) override;
  llvm::Expected<std::vector<Tensor>> results(ReturnOp op) override;
  void after(Operation *op) override {
    if (extents)
      zeroPastExtent(op);
  }
  std::string name() const override { return "CPU"; }

  const Tensor *lookup(Value v) {
    auto it = values.find(v);
    return it == values.end() ? nullptr : it->second;
  }
  /// Rows of a graph-wide value: one per edge (self loops included) or per
  /// vertex.
  int64_t rowsOf(Type type) const {
    auto d = dyn_cast<DomainType>(type);
    return d && d.isEdgeDomain() ? ctx.graph->numEdges
                                 : ctx.graph->numVertices;
  }
  Tensor *allocate(Value v) {
    auto t = std::make_unique<Tensor>(Tensor::uninitialized(
        shapeOf(v.getType(), rowsOf(v.getType())), dtypeOf(v.getType())));
    Tensor *raw = t.get();
    liveBytes += size_t(raw->numElements()) * 4;
    peakBytes = std::max(peakBytes, liveBytes);
    owned[v] = std::move(t);
    values[v] = raw;
    return raw;
  }

  llvm::Error bindInput(ModelOp model, BlockArgument arg);
  /// How many source intervals a propagate kernel runs over (1: unchunked).
  int64_t intervalsFor(func::FuncOp kernel, bool reversed) const;
  void rowGemm(const Tensor &x, const Tensor &w, Tensor &y,
               bool transposeWeight, const std::vector<int64_t> &blocks);
  double lossOf(const Tensor &logits, const Tensor &labels);
  /// The rows a loss reads: the loss mask, or every row.
  std::vector<int32_t> lossRows(int64_t numRows) const;
  /// fn(chunk, begin, end) over fixed chunks of [0, n), in parallel.
  void forChunks(size_t n,
                 const std::function<void(int64_t, size_t, size_t)> &fn);

  /// A vertex result of a map or propagate kernel that is only ever summed
  /// over its rows: its saga.sum_rows, else null.
  static SumRowsOp onlySummed(Value result);
  /// Kernel result `result` written over a dying operand's buffer, when the
  /// kernel allows it (its saga.overwritable pairs, from the emitter) and
  /// the operand is read by nothing after `op`; else null.
  Tensor *reuse(LaunchOp op, Value result,
                llvm::ArrayRef<int64_t> overwritable);
  /// `operand`'s buffer, now `result`'s (reinterpreted to its shape), when
  /// `operand` is a plan buffer (not an input or parameter) that nothing
  /// reads after `op` (only its release follows); else null, and nothing
  /// changes.
  Tensor *takeOver(Operation *op, Value operand, Value result);
  /// sum_rows results formed inside the kernel that produced their input,
  /// keyed by that input (which is never stored whole).
  llvm::DenseMap<Value, Tensor> summedInKernel;
  size_t liveBytes = 0, peakBytes = 0; // plan buffers (4-byte elements)

  llvm::DenseMap<Value, const Tensor *> values;
  llvm::DenseMap<Value, std::unique_ptr<Tensor>> owned;

  std::vector<int64_t> mapBlocks, inBlocks, outBlocks;
  /// On a sampled batch (ctx.rowLevels): the rows each op computes
  /// (runtime/exec/RowExtents.h) and their row blocks.
  std::optional<RowExtents> extents;
  enum BlockKind { kMapBlocks, kInBlocks, kOutBlocks };
  std::map<std::pair<int, int64_t>, std::vector<int64_t>> extentBlocks;
  /// The row blocks `op` runs: of its extent on a sampled batch, else all
  /// of `kind`'s.
  const std::vector<int64_t> &blocksOf(Operation *op, BlockKind kind);
  /// Zeros past a value's computed rows that a later op reads.
  void zeroPastExtent(Operation *op);
  /// Local row ranges a kernel's tasks run, in order.
  using Ranges = std::vector<std::pair<int64_t, int64_t>>;
  static Ranges rangesOf(const std::vector<int64_t> &blocks);
  /// A part's in-edge tasks split around a halo gather (ctx.dist): the
  /// interior rows, whose in-edges are all owned, run while the gather is
  /// in flight; the others after it. Whole blocks when the kernel sums its
  /// rows per block (`blockwise`), else runs of interior rows within them.
  struct InteriorSplit {
    Ranges interior, boundary;
  };
  InteriorSplit interiorSplit[2]; // [blockwise]
  void splitInterior();
  /// Row blocks a sum over rows adds up (kRowsPerTask rows each, over all
  /// local rows).
  int64_t sumBlocks = 0;

  // A part of a partitioned graph (ctx.dist): vertex values whose halo rows
  // hold their owners' values (inputs, degrees, ids, gathered values).
  llvm::DenseSet<Value> haloValid;
  /// Whether `v` (on a part) has halo rows that do not hold their owners'
  /// values yet.
  bool needsHalo(Value v) const;
  /// Starts fetching the halo rows of plan buffer `v` (ctx.dist->finish()
  /// completes it).
  llvm::Error startGather(Value v);
  /// The halo rows of `v` fetched from their owners, unless they hold them.
  llvm::Error refreshHalo(Value v);
  /// Sums over the parts (no-ops in one process).
  llvm::Error sumOverParts(double *values, int64_t n) {
    return ctx.dist ? ctx.dist->sum(values, n) : llvm::Error::success();
  }
  llvm::Error sumOverParts(float *values, int64_t n) {
    return ctx.dist ? ctx.dist->sum(values, n) : llvm::Error::success();
  }
  /// A kernel's view of buffer `data` of `type`: moved back by the part's
  /// first global row (or edge), so that global numbers index it.
  FlatMemRef kernelBuffer(void *data, int64_t size, Type type) const;
};

FlatMemRef Run::kernelBuffer(void *data, int64_t size, Type type) const {
  auto domain = dyn_cast<DomainType>(type);
  if (!ctx.dist || !domain)
    return flat(data, size);
  int64_t rows = rowsOf(type);
  int64_t rowSize = rows ? size / rows : 0;
  int64_t firstRow =
      domain.isEdgeDomain() ? ctx.dist->part.edgeBase : ctx.dist->part.begin;
  return flatFrom(data, size, firstRow * rowSize, 4);
}

bool Run::needsHalo(Value v) const {
  auto domain = dyn_cast<DomainType>(v.getType());
  return ctx.dist && domain && !domain.isEdgeDomain() && !haloValid.contains(v);
}

llvm::Error Run::startGather(Value v) {
  auto it = owned.find(v);
  if (it == owned.end())
    return llvm::createStringError("a value read across parts is neither an "
                                   "input nor a plan buffer");
  Tensor &t = *it->second;
  return ctx.dist->startGather(t.f32(), t.rowSize());
}

llvm::Error Run::refreshHalo(Value v) {
  if (!needsHalo(v))
    return llvm::Error::success();
  if (llvm::Error e = startGather(v))
    return e;
  if (llvm::Error e = ctx.dist->finish())
    return e;
  haloValid.insert(v);
  return llvm::Error::success();
}

Run::Ranges Run::rangesOf(const std::vector<int64_t> &blocks) {
  Ranges r;
  for (size_t i = 0; i + 1 < blocks.size(); ++i)
    r.emplace_back(blocks[i], blocks[i + 1]);
  return r;
}

void Run::splitInterior() {
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

llvm::Error Run::bindInput(ModelOp model, BlockArgument arg) {
  auto t = boundInput(model, arg, *ctx.inputs, rowsOf(arg.getType()));
  if (!t)
    return t.takeError();
  values[arg] = *t;
  haloValid.insert(arg);
  return llvm::Error::success();
}

llvm::Error Run::launch(LaunchOp op) {
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

int64_t Run::intervalsFor(func::FuncOp kernel, bool reversed) const {
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

Tensor *Run::reuse(LaunchOp op, Value result,
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

Tensor *Run::takeOver(Operation *op, Value operand, Value result) {
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

SumRowsOp Run::onlySummed(Value result) {
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

llvm::Error Run::linear(LinearOp op) {
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
void Run::rowGemm(const Tensor &x, const Tensor &w, Tensor &y,
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

std::vector<int32_t> Run::lossRows(int64_t numRows) const {
  if (ctx.exactLossMask && ctx.lossMask.empty())
    return {};
  return exec::lossRows(ctx.lossMask,
                        ctx.dist ? ctx.dist->part.owned() : numRows);
}

void Run::forChunks(size_t n, const std::function<void(int64_t, size_t,
                                                       size_t)> &fn) {
  // Fixed chunks (not one per thread): per-chunk partial sums combined in
  // chunk order give the same result for any thread count.
  constexpr size_t kChunk = 8192;
  int64_t chunks = int64_t((n + kChunk - 1) / kChunk);
  ctx.pool->parallelFor(chunks, [&](int64_t t) {
    fn(t, size_t(t) * kChunk, std::min(n, size_t(t + 1) * kChunk));
  });
}

double Run::lossOf(const Tensor &logits, const Tensor &labels) {
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
llvm::Error Run::fill(Value result, float value) {
  // Splats: scalars, and constants canonicalisation hoists out of bodies.
  Tensor *t = allocate(result);
  std::fill(t->f32(), t->f32() + t->numElements(), value);
  return llvm::Error::success();
}

llvm::Error Run::crossEntropy(CrossEntropyOp op) {
  double loss = lossOf(*lookup(op.getLogits()), *lookup(op.getLabels()));
  allocate(op.getResult())->f32()[0] = static_cast<float>(loss);
  return llvm::Error::success();
}

llvm::Error Run::l2(L2Op op) {
  const Tensor *x = lookup(op->getOperand(0));
  double s = 0;
  for (int64_t i = 0; i < x->numElements(); ++i)
    s += double(x->f32()[i]) * x->f32()[i];
  allocate(op->getResult(0))->f32()[0] = static_cast<float>(s / 2);
  return llvm::Error::success();
}

// Model-level arithmetic on whole tensors: equal shapes, or a scalar with a
// tensor (losses, weight decay and their gradients).
llvm::Error Run::neg(Operation *op) {
  const Tensor *a = lookup(op->getOperand(0));
  Tensor *r = allocate(op->getResult(0));
  for (int64_t i = 0; i < r->numElements(); ++i)
    r->f32()[i] = -a->f32()[i];
  return llvm::Error::success();
}

llvm::Error Run::binary(Operation *op, int64_t na, int64_t nb, int64_t n) {
  const Tensor *a = lookup(op->getOperand(0)), *b = lookup(op->getOperand(1));
  Tensor *r = allocate(op->getResult(0));
  binaryElementwise(op, a->f32(), na, b->f32(), nb, r->f32(), n);
  return llvm::Error::success();
}

// Backward steps that are library calls or reductions. Sums over vertices
// are computed per fixed row block and combined in block order, so they are
// identical for any thread count.
llvm::Error Run::sumRows(SumRowsOp sum) {
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

llvm::Error Run::linearGradInput(LinearGradInputOp lg) {
  // dx[v] = dy[v] @ W^T
  const Tensor *dy = lookup(lg.getGradOutput()), *w = lookup(lg.getWeight());
  Tensor *dx = allocate(lg.getResult());
  rowGemm(*dy, *w, *dx, /*transposeWeight=*/true, blocksOf(lg, kMapBlocks));
  return llvm::Error::success();
}

llvm::Error Run::weightGradient(LinearGradWeightOp lw) {
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

llvm::Error Run::crossEntropyGrad(CrossEntropyGradOp ce) {
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
  forChunks(rows.size(), [&](int64_t, size_t begin, size_t end) {
    std::vector<float> e(static_cast<size_t>(c));
    for (size_t i = begin; i < end; ++i) {
      int32_t v = rows[i], label = labels->i32()[v];
      if (label < 0 || label >= c)
        continue;
      addCrossEntropyGrad(logits->f32() + int64_t(v) * c, c, label, scale,
                          d->f32() + int64_t(v) * c, e);
    }
  });
  return llvm::Error::success();
}

llvm::Error Run::begin(ModelOp model) {
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

llvm::Error Run::param(ParamOp op) {
  auto t = boundParam(op, *ctx.params);
  if (!t)
    return t.takeError();
  values[op] = *t;
  return llvm::Error::success();
}

llvm::Error Run::degrees(Value result) {
  const Graph &g = *ctx.graph;
  Tensor *t = allocate(result);
  std::vector<float> deg = ctx.dist      ? ctx.dist->part.inDegrees
                           : ctx.degrees ? *ctx.degrees
                                         : g.inDegrees();
  std::copy(deg.begin(), deg.end(), t->f32());
  haloValid.insert(result);
  return llvm::Error::success();
}

llvm::Error Run::vertexIds(Value result) {
  const Graph &g = *ctx.graph;
  Tensor *t = allocate(result);
  for (int32_t v = 0; v < g.numVertices; ++v)
    t->i32()[v] = ctx.dist        ? ctx.dist->part.globalIds[size_t(v)]
                  : ctx.vertexIds ? (*ctx.vertexIds)[size_t(v)]
                                  : v;
  haloValid.insert(result);
  return llvm::Error::success();
}

void Run::release(Value v) {
  if (auto it = owned.find(v); it != owned.end())
    liveBytes -= size_t(it->second->numElements()) * 4;
  owned.erase(v);
  values.erase(v);
}

llvm::Expected<std::vector<Tensor>> Run::results(ReturnOp ret) {
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

const std::vector<int64_t> &Run::blocksOf(Operation *op, BlockKind kind) {
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

void Run::zeroPastExtent(Operation *op) {
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

} // namespace

llvm::Expected<std::vector<Tensor>> saga::execute(ModelOp model,
                                                  const ExecutionContext &ctx) {
  openblas_set_num_threads(1); // parallelism comes from the pool's tasks
  Run run(ctx);
  return run.walk(model);
}
