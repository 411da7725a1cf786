//===- ChunkedExecutor.cpp - runs a plan under a memory budget ------------===//

#include "runtime/exec/ChunkedExecutor.h"
#include "runtime/exec/CpuChunkedRun.h"

#include "analysis/ChunkPlan.h"
#include "runtime/exec/ExecHelpers.h"

#include "runtime/exec/KernelDevice.h"
#include "support/KernelAbi.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cblas.h>

#include <cstring>
#include <set>

using namespace mlir;
using namespace saga;
using namespace saga::exec;


ChunkedPlanCache::ChunkedPlanCache() = default;
ChunkedPlanCache::~ChunkedPlanCache() = default;

namespace {
/// Whether a plan step's kernel runs over out-edges (its rows are sources,
/// a chunk's other ends targets).
bool overOutEdges(const PlanStep &step) {
  auto launch = dyn_cast_or_null<LaunchOp>(step.op);
  if (!launch)
    return false;
  auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      launch, launch.getCalleeAttr());
  return fn && fn->hasAttr("saga.reversed");
}

/// Whether every partial load of a plan read back from a schedule loads
/// as many rows as the graph's chunk reads.
bool partialLoadsMatch(const ChunkPlan &cp, const GraphSize &size) {
  const PlanMemory &pm = cp.memory;
  std::vector<int64_t> counts[2];
  for (const Transfer &t : cp.plan.transfers) {
    if (t.kind != Transfer::LoadRows)
      continue;
    const PlanStep &step = pm.steps[size_t(t.op)];
    bool reversed = overOutEdges(step);
    if (!size.rowCounts)
      return false;
    if (counts[reversed].empty())
      counts[reversed] = size.rowCounts(reversed, pm.bounds);
    const int64_t parts = cp.intervals();
    if (counts[reversed].size() != size_t(parts * parts) ||
        counts[reversed][size_t(step.i * parts + step.j)] * pm.rowBytes(t.tensor) !=
            transferBytes(pm.problem, t))
      return false;
  }
  return true;
}
} // namespace

void chunked::noteRowLoads(const PlanMemory &pm, const MemoryPlan &plan,
                           ChunkedStats *stats) {
  for (const Transfer &t : plan.transfers)
    if (t.kind == Transfer::LoadRows) {
      ++stats->rowLoads;
      stats->rowLoadBytes += transferBytes(pm.problem, t);
      stats->rowLoadWholeBytes += pm.problem.tensors[size_t(t.tensor)].bytes;
    }
}

RowsFn chunked::chunkRows(const ExecutionContext &ctx, const PlanMemory &pm) {
  return [&ctx, &pm](int op, int t) -> llvm::Expected<RowSelection> {
    const PlanStep &step = pm.steps[size_t(op)];
    ChunkSource *source = chunkSourceOf(ctx);
    std::shared_ptr<const std::vector<int32_t>> rows;
    if (source) {
      auto read =
          source->chunkRows(overOutEdges(step), pm.bounds, step.i, step.j);
      if (!read)
        return read.takeError();
      rows = std::move(*read);
    }
    const int64_t rowBytes = pm.rowBytes(t);
    const int64_t want = pm.problem.ops[size_t(op)].partialBytes(t) / rowBytes;
    if (!rows || int64_t(rows->size()) != want)
      return llvm::createStringError(
          "the schedule loads " + std::to_string(want) + " rows of " +
          pm.problem.tensors[size_t(t)].name + " for step " +
          std::to_string(op) + " (chunk [" + std::to_string(step.i) + ", " +
          std::to_string(step.j) + "]); the graph's chunk reads " +
          (rows ? std::to_string(rows->size()) : std::string("rows not known")) +
          ": the schedule was made for another graph");
    return RowSelection{std::move(rows), rowBytes};
  };
}

llvm::Expected<ChunkedPlanCache::Entry *>
chunked::planRun(ModelOp model, const ExecutionContext &ctx,
                 const ChunkedOptions &options, ChunkedPlanCache &local) {
  if (!ctx.chunks && !ctx.chunkSource)
    return llvm::createStringError("a chunked run needs a source of chunks");
  return plan(model, *ctx.graph, chunkSourceOf(ctx), options, local,
              ctx.inputs);
}

llvm::Expected<ChunkedPlanCache::Entry *>
chunked::plan(ModelOp model, const Graph &g, ChunkSource *source,
              const ChunkedOptions &options, ChunkedPlanCache &local,
              const llvm::StringMap<Tensor> *inputs) {
  ChunkedPlanCache &cache = options.cache ? *options.cache : local;
  // Selective loading needs the rows each chunk reads, and a next tier
  // that reads rows alone (host RAM: a spill slot is checked whole).
  const bool selective = source && options.scratch.empty() && options.selective;
  auto key = std::make_tuple(model.getOperation(), static_cast<const void *>(&g),
                             options.budget, options.intervals, options.group,
                             selective, options.interleave);
  std::unique_ptr<ChunkedPlanCache::Entry> &entry = cache.entries[key];
  if (entry)
    return entry.get();
  GraphSize size = sizeOf(g);
  if (source)
    size.occupancy = [source](const std::vector<int32_t> &bounds) {
      return source->occupancy(bounds);
    };
  // A schedule made for a graph whose empty chunks differ is not this one's.
  auto sameEmptyChunks = [&](ScheduleOp s) {
    std::vector<int32_t> empty;
    if (size.occupancy) {
      std::vector<uint8_t> occupied = size.occupancy(
          std::vector<int32_t>(s.getIntervals().begin(), s.getIntervals().end()));
      for (size_t c = 0; c < occupied.size(); ++c)
        if (!occupied[c])
          empty.push_back(int32_t(c));
    }
    auto listed = s.getEmptyChunks();
    return listed ? ArrayRef<int32_t>(*listed) == ArrayRef<int32_t>(empty)
                  : empty.empty();
  };
  if (selective)
    size.rowCounts = [source](bool reversed,
                              const std::vector<int32_t> &bounds) {
      return source->chunkRowCounts(reversed, bounds);
    };
  auto boundsOf = [](ScheduleOp s) {
    return std::vector<int32_t>(s.getIntervals().begin(),
                                s.getIntervals().end());
  };
  // Edge values split by interval need each chunk's edge count and, for an
  // edge input (the caller's rows in edge id order), the graph's edges in
  // memory to place its rows in chunk order.
  const bool edgeInputs = llvm::any_of(
      model.getBody().front().getArguments(), [&](BlockArgument arg) {
        auto d = dyn_cast<DomainType>(arg.getType());
        return d && d.isEdgeDomain() &&
               !(inputs && !inputs->count(argName(model, arg)));
      });
  if (source && (!edgeInputs || int64_t(g.inSources.size()) == g.numEdges))
    size.chunkEdges = [source](const std::vector<int32_t> &bounds) {
      return source->chunkEdgeCounts(bounds);
    };
  // A schedule that splits edge values with other counts (or does not
  // where it could) is not this graph's.
  auto sameEdges = [&, splittable = edgeValuesSplittable(model)](ScheduleOp s) {
    std::vector<int64_t> want;
    if (size.chunkEdges && splittable && s.getIntervals().size() > 2)
      want = size.chunkEdges(boundsOf(s));
    auto have = s.getChunkEdges();
    return have ? ArrayRef<int64_t>(*have) == ArrayRef<int64_t>(want)
                : want.empty();
  };
  // A schedule made with (or without) the chunks' row counts is reused
  // only where they are (or are not) known, and the same.
  auto sameRows = [&](ScheduleOp s) {
    bool known = size.rowCounts &&
                 (!size.rowCounts(false, boundsOf(s)).empty() ||
                  !size.rowCounts(true, boundsOf(s)).empty());
    return s.getSelective() == known;
  };
  ScheduleOp schedule = findSchedule(model);
  if (!schedule || int64_t(schedule.getBudget()) != options.budget ||
      int64_t(schedule.getVertices()) != g.numVertices ||
      int64_t(schedule.getEdges()) != g.numEdges ||
      (options.intervals > 0 &&
       int64_t(schedule.getIntervals().size()) - 1 != options.intervals) ||
      (options.group > 0 && int64_t(schedule.getGroup()) != options.group) ||
      !sameEmptyChunks(schedule) || !sameRows(schedule) ||
      !sameEdges(schedule) ||
      schedule.getOpMajor() == options.interleave) {
    auto made = planChunked(model, size, options.budget, options.intervals,
                            options.group, options.interleave);
    if (!made)
      return made.takeError();
    schedule = writeSchedule(model, *made);
  }
  auto read = readSchedule(schedule);
  if (!read)
    return read.takeError();
  if (!partialLoadsMatch(*read, size)) { // made for another graph
    auto made = planChunked(model, size, options.budget, options.intervals,
                            options.group, options.interleave);
    if (!made)
      return made.takeError();
    schedule = writeSchedule(model, *made);
    read = readSchedule(schedule);
    if (!read)
      return read.takeError();
  }
  entry = std::make_unique<ChunkedPlanCache::Entry>();
  entry->chunk = std::move(*read);
  return entry.get();
}

llvm::Expected<NextTier *> chunked::nextTier(ChunkedPlanCache::Entry &entry,
                                            const ChunkedOptions &options,
                                            std::unique_ptr<NextTier> &spill) {
  if (options.scratch.empty()) {
    if (!entry.ramTier)
      entry.ramTier = NextTier::inMemory();
    return entry.ramTier.get();
  }
  auto t = NextTier::inFolder(options.scratch, options.direct);
  if (!t)
    return t.takeError();
  spill = std::move(*t);
  return spill.get();
}

std::unique_ptr<ChunkReadAhead>
chunked::readAhead(ModelOp model, ExecutionContext &ctx, const PlanMemory &pm,
                   const ChunkedOptions &options) {
  ChunkSource *source = chunkSourceOf(ctx);
  if (!options.readAhead || !source || !source->fromStorage())
    return nullptr;
  // The launches over edges ask for one chunk each, in step order (a
  // propagation's middle empty chunks too: their callback skips them).
  const int64_t parts = int64_t(pm.bounds.size()) - 1;
  std::vector<ChunkRequest> requests;
  for (const PlanStep &step : pm.steps) {
    auto launch = dyn_cast<LaunchOp>(step.op);
    if (!launch || !(launch.getPropagate() || launch.getEdgeMap()))
      continue;
    auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        launch, launch.getCalleeAttr());
    bool reversed = fn && fn->hasAttr("saga.reversed");
    bool split = parts > 1;
    requests.push_back(
        {reversed, split ? step.i : 0, split ? step.j : 0});
  }
  auto ahead = std::make_unique<ChunkReadAhead>(*source, pm.bounds,
                                                std::move(requests));
  ctx.chunkSource = ahead.get();
  return ahead;
}

void chunked::noteReadAhead(const ChunkReadAhead *ahead, ChunkedStats *stats) {
  if (!ahead || !stats)
    return;
  ChunkReadAhead::Counters c = ahead->counters();
  stats->chunkParts = c.parts;
  stats->chunkDirectReads = c.directReads;
  stats->chunkReadSeconds = c.busySeconds;
  stats->chunkStallSeconds = c.stallSeconds;
}

bool chunked::atOtherEnd(const PlanMemory &pm, DenseI64ArrayAttr groups,
                         bool reversed, size_t k, Value v) {
  if (auto d = dyn_cast<DomainType>(v.getType());
      d && d.isEdgeDomain() && pm.edgesSplit())
    return reversed; // piece i: the edges into the other end's interval
  if (!groups)
    return false;
  int64_t srcs = groups[0], dsts = groups[1];
  return reversed ? int64_t(k) >= srcs && int64_t(k) < srcs + dsts
                  : int64_t(k) < srcs;
}

llvm::Error chunked::forEachKernelPart(
    const ExecutionContext &ctx, const std::vector<int32_t> &bounds,
    bool reversed, const ChunkCall &c,
    const std::function<llvm::Error(const ChunkView &, int64_t, bool)> &fn) {
  int64_t part = 0;
  // Split edge values: the kernels read each edge's number in chunk order
  // as its id. Chunk (i, j) holds the in-chunk's edges: (i, j), or
  // reversed (j, i).
  const PlanMemory *pm =
      c.split && c.numbering && c.numbering->edgesSplit() ? c.numbering : nullptr;
  const size_t inChunk = size_t(reversed ? c.j * c.parts + c.i : c.i * c.parts + c.j);
  int64_t done = 0; // the chunk's edges in earlier parts
  llvm::Error e = chunkSourceOf(ctx)->forEachPart(
      reversed, bounds, c.split ? c.i : 0, c.split ? c.j : 0,
      [&](const ChunkView &view, bool lastPart) -> llvm::Error {
        if (c.propagate && !c.split && !(part == 0 && lastPart))
          return llvm::createStringError(
              "a propagation over one interval needs its chunk in one part");
        if (c.empty && view.offsets[c.hi] != view.offsets[c.lo])
          return llvm::createStringError(
              "chunk [" + std::to_string(c.i) + ", " + std::to_string(c.j) +
              "] holds edges but the schedule lists it as empty");
        int64_t phase = kPhaseWhole;
        bool writes = true;
        if (c.propagate && c.split) {
          writes = c.i + 1 == c.parts && lastPart;
          phase = (c.i > 0 || part > 0 ? kPhaseResume : 0) |
                  (writes ? kPhaseFinish : 0);
        }
        ++part;
        if (c.empty && c.propagate && c.i > 0 && c.i + 1 < c.parts)
          return llvm::Error::success();
        if (!pm)
          return fn(view, phase, writes);
        const int64_t n = view.offsets[c.hi] - view.offsets[c.lo];
        if (done + n > pm->chunkEdges[inChunk])
          return llvm::createStringError(
              "chunk [" + std::to_string(c.i) + ", " + std::to_string(c.j) +
              "] holds more edges than the schedule's " +
              std::to_string(pm->chunkEdges[inChunk]));
        // Numbers for rows [lo, hi)'s positions only (a view of a graph in
        // memory holds the whole source interval, every row), addressed by
        // position like the view's arrays; the kernels' prefetches read up
        // to kEdgePrefetchDistance positions further, numbered 0 (a valid
        // number: they only prefetch).
        const int64_t begin = view.offsets[c.lo];
        const int64_t stop =
            std::min(view.numEdges, begin + n + kEdgePrefetchDistance);
        auto numbers = std::shared_ptr<int32_t[]>(
            new int32_t[size_t(std::max<int64_t>(stop - begin, 1))]);
        std::fill(numbers.get() + n, numbers.get() + (stop - begin), 0);
        // Position p is numbers[p - begin] (an address computed as an
        // integer: the kernels read positions [begin, stop) only).
        int32_t *byPosition = reinterpret_cast<int32_t *>(
            reinterpret_cast<uintptr_t>(numbers.get()) -
            uintptr_t(begin) * sizeof(int32_t));
        numberInChunkOrder(view, reversed, c.lo, c.hi, bounds[size_t(c.i)],
                           bounds[size_t(c.i) + 1],
                           pm->chunkBase[inChunk] + done, byPosition);
        done += n;
        ChunkView numbered = view;
        numbered.edgeIds = byPosition;
        numbered.keys = view.edgeKeys();
        numbered.hold = std::make_shared<
            std::pair<std::shared_ptr<const void>, std::shared_ptr<int32_t[]>>>(
            view.hold, numbers);
        return fn(numbered, phase, writes);
      });
  if (e)
    return e;
  if (pm && done != pm->chunkEdges[inChunk])
    return llvm::createStringError(
        "chunk [" + std::to_string(c.i) + ", " + std::to_string(c.j) +
        "] holds " + std::to_string(done) + " edges, the schedule's " +
        std::to_string(pm->chunkEdges[inChunk]));
  return llvm::Error::success();
}

std::vector<int64_t>
chunked::lossIntervalStarts(const std::vector<int32_t> &rows,
                            const std::vector<int32_t> &bounds,
                            int64_t numVertices) {
  std::vector<int64_t> starts;
  if (rows.empty()) {
    starts.assign(bounds.begin(), bounds.end());
    return starts;
  }
  if (!std::is_sorted(rows.begin(), rows.end()) || rows.front() < 0 ||
      rows.back() >= numVertices)
    return starts;
  for (size_t j = 0; j < bounds.size(); ++j)
    starts.push_back(std::lower_bound(rows.begin(), rows.end(), bounds[j]) -
                     rows.begin());
  return starts;
}

bool chunked::finishesRows(const PlanMemory &pm, int k, int64_t parts) {
  const PlanStep &step = pm.steps[size_t(k)];
  // (Only launches run by chunk; a propagation's rows are final at its
  // last one.)
  return !(step.i >= 0 && step.i + 1 != parts &&
           cast<LaunchOp>(step.op).getPropagate());
}

void chunked::keepRows(llvm::DenseMap<Value, Tensor> &outputs, Value res,
                       int64_t numVertices, int64_t width, int64_t first,
                       int64_t count, const void *rows, bool argmax) {
  if (argmax) {
    auto [it, fresh] = outputs.try_emplace(
        res, Tensor::uninitialized({numVertices}, DType::I32));
    const float *x = static_cast<const float *>(rows);
    for (int64_t v = 0; v < count; ++v)
      it->second.i32()[first + v] = int32_t(
          std::max_element(x + v * width, x + (v + 1) * width) - (x + v * width));
    return;
  }
  auto [it, fresh] = outputs.try_emplace(
      res, Tensor::uninitialized(shapeOf(res.getType(), numVertices),
                                 dtypeOf(res.getType())));
  std::memcpy(static_cast<char *>(it->second.data()) + first * width * 4, rows,
              size_t(count * width * 4));
}

std::string chunked::argName(ModelOp model, BlockArgument arg) {
  auto name =
      model.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "saga.name");
  return name ? name.str() : "#" + std::to_string(arg.getArgNumber());
}

const Tensor *chunked::external(ModelOp model, const ExecutionContext &ctx,
                                Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto it = ctx.inputs->find(argName(model, arg));
    return it == ctx.inputs->end() ? nullptr : &it->second;
  }
  if (auto param = v.getDefiningOp<ParamOp>()) {
    auto it = ctx.params->find(param.getName());
    return it == ctx.params->end() ? nullptr : &it->second;
  }
  return nullptr;
}

namespace {
/// Piece j of a split edge input (PlanMemory::chunkEdges): the caller's
/// rows (in edge id order) of the edges into interval j, in chunk order.
llvm::Expected<int64_t> readEdgePiece(const PlanMemory &pm, const Graph &g,
                                      const Tensor &ext, Value v,
                                      const std::string &name, int64_t j,
                                      void *to, int64_t bytes,
                                      const RowSelection *rows) {
  if (ext.numElements() != elementsOf(v.getType(), g))
    return llvm::createStringError(
        "input " + name + " has shape " + ext.describe() + ", the model needs " +
        Tensor::describe(shapeOf(v.getType(), g.numEdges), dtypeOf(v.getType())));
  const int64_t parts = int64_t(pm.bounds.size()) - 1;
  const int64_t edges = pm.edgeFirst[size_t(j) + 1] - pm.edgeFirst[size_t(j)];
  if (edges == 0 && bytes == 0) // no edges into the interval
    return 0;
  if (rows || int64_t(g.inSources.size()) != g.numEdges || edges <= 0 ||
      bytes % edges != 0)
    return llvm::createStringError(
        "input " + name + ": its piece " + std::to_string(j) + " (" +
        std::to_string(edges) + " edges, " + std::to_string(bytes) +
        " bytes) cannot be placed in chunk order (" +
        (rows ? "a partial load"
         : int64_t(g.inSources.size()) != g.numEdges
             ? "the graph's edges are not in memory"
             : "its size is not the edges'") +
        ")");
  const int64_t rowBytes = bytes / edges;
  // Per source interval: where its chunk's next edge goes in the piece.
  std::vector<int64_t> at(static_cast<size_t>(parts));
  for (int64_t i = 0; i < parts; ++i)
    at[size_t(i)] = pm.chunkBase[size_t(i * parts + j)] - pm.edgeFirst[size_t(j)];
  const char *from = reinterpret_cast<const char *>(ext.f32());
  char *into = static_cast<char *>(to);
  for (int32_t u = pm.bounds[size_t(j)]; u < pm.bounds[size_t(j) + 1]; ++u) {
    int64_t i = 0; // each row's sources ascend
    for (int64_t e = g.inOffsets[size_t(u)]; e < g.inOffsets[size_t(u) + 1];
         ++e) {
      while (g.inSources[size_t(e)] >= pm.bounds[size_t(i) + 1])
        ++i;
      std::memcpy(into + at[size_t(i)]++ * rowBytes,
                  from + int64_t(g.inEdgeIds[size_t(e)]) * rowBytes,
                  size_t(rowBytes));
    }
  }
  return bytes;
}
} // namespace

llvm::Expected<int64_t> chunked::readInput(ModelOp model,
                                           const ExecutionContext &ctx,
                                           const PlanMemory &pm, int t,
                                           void *to, int64_t bytes,
                                           const RowSelection *rows) {
  const Graph &g = *ctx.graph;
  auto lo = [&](int64_t j) { return j < 0 ? int64_t(0) : int64_t(pm.bounds[size_t(j)]); };
  auto hi = [&](int64_t j) {
    return j < 0 ? int64_t(g.numVertices) : int64_t(pm.bounds[size_t(j) + 1]);
  };
  const PlanPiece &p = pm.pieces[size_t(t)];
  const std::string &name = pm.problem.tensors[size_t(t)].name;
  Value v = Value::getFromOpaquePointer(p.value);
  const int64_t first = p.piece >= 0 ? lo(p.piece) : 0;
  const int64_t count = p.piece >= 0 ? hi(p.piece) - lo(p.piece) : 0;
  auto d = dyn_cast<DomainType>(v.getType());
  if (const Tensor *ext = external(model, ctx, v)) {
    if (d && d.isEdgeDomain() && p.piece >= 0)
      return readEdgePiece(pm, g, *ext, v, name, p.piece, to, bytes, rows);
    if (ext->numElements() != elementsOf(v.getType(), g))
      return llvm::createStringError(
          "input " + name + " has shape " + ext->describe() +
          ", the model needs " +
          Tensor::describe(shapeOf(v.getType(), g.numVertices),
                           dtypeOf(v.getType())));
    int64_t rowBytes = count ? bytes / count : 0;
    const char *from =
        reinterpret_cast<const char *>(ext->f32()) + first * rowBytes;
    if (rows) {
      copyRows(to, from, *rows);
      return rows->bytes();
    }
    std::memcpy(to, from, size_t(bytes));
    return bytes;
  }
  if (auto arg = dyn_cast<BlockArgument>(v); arg && ctx.rowReaders) {
    auto it = ctx.rowReaders->find(argName(model, arg));
    if (it != ctx.rowReaders->end()) {
      std::vector<float> whole;
      float *into = static_cast<float *>(to);
      if (rows) {
        whole.resize(size_t(bytes / 4));
        into = whole.data();
      }
      if (llvm::Error e = it->second(
              first, p.piece >= 0 ? hi(p.piece) : g.numVertices, into))
        return std::move(e);
      if (rows)
        copyRows(to, whole.data(), *rows);
      return bytes;
    }
  }
  if (auto arg = dyn_cast<BlockArgument>(v); arg && ctx.inputDefaults) {
    auto it = ctx.inputDefaults->find(argName(model, arg));
    if (it != ctx.inputDefaults->end()) {
      std::fill_n(static_cast<float *>(to), bytes / 4, it->second);
      return rows ? rows->bytes() : bytes;
    }
  }
  if (auto c = v.getDefiningOp<arith::ConstantOp>()) {
    auto value = splatValue(c);
    if (!value)
      return value.takeError();
    std::fill_n(static_cast<float *>(to), bytes / 4, *value);
    return bytes;
  }
  return llvm::createStringError("input " + name + " is not set");
}

llvm::Expected<std::string> saga::describeChunked(ModelOp model,
                                                 const Graph &g,
                                                 ChunkSource *source,
                                                 const ChunkedOptions &options) {
  ChunkedPlanCache local;
  auto found = chunked::plan(model, g, source, options, local);
  if (!found)
    return found.takeError();
  const ChunkPlan &cp = (*found)->chunk;
  std::string out;
  llvm::raw_string_ostream os(out);
  auto mib = [](int64_t b) { return double(b) / (1 << 20); };
  os << llvm::format("chunked schedule: %lld row intervals, budget %lld bytes "
                     "(%.1f MiB planned, %.1f MiB for loads ahead, %.1f MiB "
                     "pinned), plan %s moves %.1f MiB\n",
                     (long long)cp.intervals(), (long long)options.budget,
                     mib(cp.memory.problem.budget),
                     mib(cp.room() - cp.memory.problem.budget),
                     mib(cp.memory.pinnedBytes), cp.plan.method.c_str(),
                     mib(cp.plan.bytesMoved()));
  if (int64_t empty = cp.memory.emptyChunks())
    os << llvm::format("empty chunks: %lld of %lld (%lld x %lld) hold no "
                       "edges; their steps load no source rows\n",
                       (long long)empty,
                       (long long)(cp.intervals() * cp.intervals()),
                       (long long)cp.intervals(), (long long)cp.intervals());
  AsmState names(model);
  findSchedule(model)->print(os, names);
  os << "\n";
  return out;
}

llvm::Expected<std::vector<Tensor>>
saga::executeChunked(ModelOp model, const ExecutionContext &ctx,
                     const ChunkedOptions &options, ChunkedStats *stats) {
  // As in execute: the pool's tasks call single-threaded GEMMs (OpenBLAS's
  // own threads would spin in sched_yield between calls, taking the CPU
  // the transfer and chunk-reading threads need).
  openblas_set_num_threads(1);
  ChunkedPlanCache local;
  auto found = chunked::planRun(model, ctx, options, local);
  if (!found)
    return found.takeError();
  ChunkedPlanCache::Entry *entry = *found;
  const PlanMemory &pm = entry->chunk.memory;
  const MemoryPlan &plan = entry->chunk.plan;
  int64_t parts = entry->chunk.intervals();
  int64_t room = entry->chunk.room();
  std::unique_ptr<NextTier> spill; // a spill file lives for one run
  auto tierOr = chunked::nextTier(*entry, options, spill);
  if (!tierOr)
    return tierOr.takeError();
  NextTier *tier = *tierOr;
  ExecutionContext runCtx = ctx;
  std::unique_ptr<ChunkReadAhead> ahead =
      chunked::readAhead(model, runCtx, pm, options);
  CpuChunkedRun run(model, runCtx, pm);
  chunked::InputTier inputs(
      *tier, [&](int t) { return run.isInput(t); },
      [&](int t, void *to, int64_t bytes, const RowSelection *rows) {
        return run.readInput(t, to, bytes, rows);
      });
  // One device tier per budget, whichever plan runs (training step,
  // evaluation): its recycled blocks count against the budget.
  ChunkedPlanCache &cache = options.cache ? *options.cache : local;
  std::unique_ptr<DevicePool> &shared = cache.pools[options.budget];
  if (!shared)
    shared = std::make_unique<DevicePool>(room);
  DevicePool &pool = *shared;
  pool.setCapacity(room);
  // With spills on disk the process stays within the budget (plus what
  // lies outside the pool); with the next tier in host RAM, which holds
  // every value, freed pages are kept for reuse.
  pool.boundResident(!options.scratch.empty());
  auto ran = runMemoryPlan(pm.problem, plan, pool, inputs,
                           chunked::reporting(
                               [&](int k, Resident &r) { return run.compute(k, r); },
                               options, int64_t(pm.steps.size())),
                           kPrefetchDepth, chunked::chunkRows(runCtx, pm));
  if (!ran)
    return ran.takeError();
  chunked::noteReadAhead(ahead.get(), stats);
  if (ctx.profile) {
    ctx.profile->emplace_back("waiting for transfers", ran->transfers.stallSeconds);
    if (ahead)
      ctx.profile->emplace_back("launches waiting for chunk reads",
                                ahead->counters().stallSeconds);
  }
  if (stats) {
    stats->intervals = parts;
    stats->emptyChunks = pm.emptyChunks();
    stats->group = pm.group;
    stats->minimumBytes = entry->chunk.minimum;
    stats->edgesSplit = pm.edgesSplit();
    stats->pinnedBytes = pm.pinnedBytes;
    stats->method = plan.method;
    stats->plannedBytes = plan.bytesMoved();
    chunked::noteRowLoads(pm, plan, stats);
    stats->run = *ran;
  }
  return run.takeResults();
}
