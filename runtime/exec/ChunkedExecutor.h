//===- ChunkedExecutor.h - runs a plan under a memory budget ----*- C++ -*-===//
//
// The chunked level carried out: the plan's vertex values split into P row
// intervals, maps and GEMMs run per interval, propagations per 2-D chunk
// (destination interval j resident with its running state, source
// intervals streamed), reductions over rows accumulated interval by
// interval in the in-memory executor's block order. ROC's planner decides
// which pieces stay in the device tier (a pool with a hard capacity) and
// which go to the next tier (host RAM, or a spill file in a scratch
// folder) and come back; runMemoryPlan carries that out with transfers on
// their own thread, ahead of compute.
//
// P is the smallest whose largest step, double-buffered, fits the budget
// (the second working set is the reserve loads use to run ahead; at the
// most intervals the graph allows, a single one is enough to run). Results
// are the in-memory executor's bit for bit: every kernel row, every block
// sum and weight-gradient slice is formed the same way, because the
// intervals' bounds are slice bounds (exec::chunkIntervals).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_CHUNKEDEXECUTOR_H
#define SAGA_RUNTIME_EXEC_CHUNKEDEXECUTOR_H

#include "analysis/ChunkPlan.h"
#include "support/DeviceSplit.h"
#include "runtime/memory/ChunkReadAhead.h"
#include "runtime/exec/Executor.h"
#include "runtime/memory/PlanRunner.h"
#include "runtime/exec/ChunkedStats.h"
#include "runtime/graph/Graph.h"

#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <set>

#include <map>
#include <memory>
#include <tuple>

namespace saga {

/// A graph in memory as the planner sees it (analysis/PlanMemory.h): its
/// size only, nothing known about its chunks.
inline GraphSize sizeOf(const Graph &g) {
  GraphSize s;
  s.vertices = g.numVertices;
  s.edges = g.numEdges;
  return s;
}

/// Memory plans already made (the interval problem and ROC's plan for a
/// model, graph and budget): every training step reuses its plan.
class ChunkedPlanCache {
public:
  ChunkedPlanCache();
  ~ChunkedPlanCache();
  struct Entry;
  /// By model, graph, budget, intervals, group, whether chunks may load
  /// only the rows they read and whether row-local chains interleave.
  std::map<std::tuple<const void *, const void *, int64_t, int64_t, int64_t,
                      bool, bool>,
           std::unique_ptr<Entry>>
      entries;
  /// The device tier, one per budget, shared by every plan run under it.
  std::map<int64_t, std::unique_ptr<DevicePool>> pools;
};

struct ChunkedOptions {
  /// Device-tier bytes for the plan's own buffers (graph inputs and
  /// parameters included; the graph's CSR, small vectors and the caller's
  /// outputs are not).
  int64_t budget = 0;
  /// Row intervals: 0 picks the smallest that fits.
  int64_t intervals = 0;
  /// Destination intervals per chunk group (0: the cheapest plan's).
  int64_t group = 0;
  /// Spill folder for the next tier; empty: host RAM.
  std::string scratch;
  bool direct = false; // O_DIRECT spills
  ChunkedPlanCache *cache = nullptr; // plans to reuse and keep
  /// Read a file's chunks on their own thread, ahead of the kernels.
  bool readAhead = true;
  /// Called after each step of the schedule with the steps done and their
  /// count (a long run's progress line).
  std::function<void(int64_t done, int64_t steps)> progress;
  /// Chunks that read few rows of their other end's interval load only
  /// those (NGra's selective loading), where the chunk source knows them
  /// (a graph in memory) and the next tier is host RAM.
  bool selective = true;
  /// Chains of row-local ops run interval by interval (planMemoryProblem);
  /// false: op-major, each op over every interval before the next.
  bool interleave = true;
  /// On several devices: a device hands what the next one reads over their
  /// peer link (NGra's ring); false: through host memory (the baseline).
  bool peerHandoffs = true;
};


/// The chunked schedule `executeChunked` would run, as text: the row
/// intervals, then every step (a plan op over interval j, or chunk (i, j))
/// with the plan's loads before it and its stores and frees after it.
llvm::Expected<std::string> describeChunked(ModelOp model, const Graph &graph,
                                            ChunkSource *source,
                                            const ChunkedOptions &options);

struct ChunkedPlanCache::Entry {
  ChunkPlan chunk; // as read back from the model's saga.schedule
  // Kept from run to run: the host-RAM tier's slots are reused, not
  // faulted in again each step.
  std::unique_ptr<NextTier> ramTier;
  /// The plan spread over several devices, by their count: each step's
  /// device, each device's operators and its memory plan.
  struct OverDevices {
    std::vector<int> owner; // per destination interval
    DeviceSplit split;
    std::vector<MemoryPlan> plans;
  };
  std::map<int, OverDevices> overDevices;
};

/// What the CPU's and the CUDA device's chunked runs share.
namespace chunked {

/// Where a chunked run reads its chunks: ctx.chunkSource, else ctx.chunks.
inline ChunkSource *chunkSourceOf(const ExecutionContext &ctx) {
  return ctx.chunkSource ? ctx.chunkSource
                         : static_cast<ChunkSource *>(ctx.chunks);
}

/// The cached plan for `options`, made on first use (in `local` when the
/// options name no cache). The model's saga.schedule is what runs: one
/// for this graph and budget (and interval count, when asked for, and
/// the empty chunks `source` reports) is read back as it is; otherwise
/// the plan is made and written there first.
/// `inputs`: the caller's graph inputs (edge values split by interval
/// need the graph's edges in memory to place an edge input's rows; an
/// input left to its default needs none); null: any edge input may be.
llvm::Expected<ChunkedPlanCache::Entry *>
plan(ModelOp model, const Graph &g, ChunkSource *source,
     const ChunkedOptions &options, ChunkedPlanCache &local,
     const llvm::StringMap<Tensor> *inputs = nullptr);

/// plan() for a run: the graph, its source of chunks and the caller's
/// inputs from `ctx`; an error when it has no source of chunks.
llvm::Expected<ChunkedPlanCache::Entry *>
planRun(ModelOp model, const ExecutionContext &ctx,
        const ChunkedOptions &options, ChunkedPlanCache &local);

/// The rows a plan's partial loads read (Transfer::LoadRows): for step
/// k's chunk (i, j), the rows of interval i the chunk source says it reads
/// at its other end; an error when they are not as many as the schedule
/// loads (a schedule made for another graph).
RowsFn chunkRows(const ExecutionContext &ctx, const PlanMemory &pm);

/// The plan's partial loads, into `stats` (rowLoads and their bytes).
void noteRowLoads(const PlanMemory &pm, const MemoryPlan &plan,
                  ChunkedStats *stats);

/// For a source that reads from storage (and options.readAhead): a reader
/// of the chunks the plan's steps will ask for, in their order, on its own
/// thread; null otherwise. `ctx` then reads through it.
std::unique_ptr<ChunkReadAhead> readAhead(ModelOp model, ExecutionContext &ctx,
                                          const PlanMemory &pm,
                                          const ChunkedOptions &options);
/// What a launch over edges knows of the chunk it reads (i, j) of `parts`
/// row intervals, the rows of j being [lo, hi).
struct ChunkCall {
  bool propagate, split, empty; // split: over 2-D chunks; empty: so listed
  int64_t i, j, parts, lo, hi;
  /// The plan, whose split edge values (PlanMemory::edgesSplit) have the
  /// kernels read each edge's number in chunk order as its id; null: the
  /// source's edge ids.
  const PlanMemory *numbering = nullptr;
};
/// Whether operand k of a launch over a 2-D chunk (i, j) is read at the
/// other end's interval i (sources, or targets when reversed; a split edge
/// value when reversed), else at the rows' interval j.
bool atOtherEnd(const PlanMemory &pm, mlir::DenseI64ArrayAttr groups,
                bool reversed, size_t k, mlir::Value v);
/// The kernel calls over chunk (i, j) from ctx's chunk source, one per
/// part: fn(part, phase, writes) with the propagation phase (resume after
/// the first part of the first chunk, finish at the last part of the last
/// one; kPhaseWhole for edge maps and unsplit runs; with c.numbering's
/// split edge values, the parts' edge ids are the edges' numbers in chunk
/// order, and a chunk whose edges are not the schedule's count is an
/// error) and whether the call
/// writes the results (only a propagation's finishing call does). Each
/// part is checked against the schedule (a propagation over one interval
/// needs its chunk whole; a chunk listed as empty holds no edge), and an
/// empty chunk between a propagation's first and last calls nothing: it
/// leaves every row's running state as it is.
llvm::Error forEachKernelPart(
    const ExecutionContext &ctx, const std::vector<int32_t> &bounds,
    bool reversed, const ChunkCall &c,
    const std::function<llvm::Error(const ChunkView &, int64_t phase,
                                    bool writes)> &fn);

/// `compute`, then options.progress (when set) with the steps done.
inline std::function<llvm::Error(int, Resident &)>
reporting(std::function<llvm::Error(int, Resident &)> compute,
          const ChunkedOptions &options, int64_t steps) {
  if (!options.progress)
    return compute;
  return [compute = std::move(compute), &options, steps](int k, Resident &r) {
    llvm::Error e = compute(k, r);
    if (!e)
      options.progress(k + 1, steps);
    return e;
  };
}
/// What a read-ahead did, into `stats`.
void noteReadAhead(const ChunkReadAhead *ahead, ChunkedStats *stats);

/// The next tier for a run: the entry's host-RAM tier, or a spill file in
/// options.scratch (kept in `spill`, for one run).
llvm::Expected<NextTier *> nextTier(ChunkedPlanCache::Entry &entry,
                                    const ChunkedOptions &options,
                                    std::unique_ptr<NextTier> &spill);

std::string argName(ModelOp model, mlir::BlockArgument arg);
/// The caller's tensor behind a graph input or parameter, or null.
const Tensor *external(ModelOp model, const ExecutionContext &ctx,
                       mlir::Value v);
/// Whether step k of the plan finishes rows (every step but a
/// propagation's chunks before its last source interval), so that the
/// returned vertex values it writes can go to the caller.
bool finishesRows(const PlanMemory &pm, int k, int64_t parts);
/// Where row interval j's loss rows begin among `rows` (ascending vertex
/// ids; empty: every vertex), for j = 0 .. P (the last: rows' end), when
/// they ascend and lie in [0, numVertices); empty otherwise (a loss then
/// keeps every row's term to the end).
std::vector<int64_t> lossIntervalStarts(const std::vector<int32_t> &rows,
                                        const std::vector<int32_t> &bounds,
                                        int64_t numVertices);
/// Rows [first, first + count) of returned vertex value `res` (`rows`: the
/// first of them, `width` 4-byte elements each) into the caller's
/// `outputs`: as they are, or each row's argmax class (int32 [V]).
void keepRows(llvm::DenseMap<mlir::Value, Tensor> &outputs, mlir::Value res,
              int64_t numVertices, int64_t width, int64_t first,
              int64_t count, const void *rows, bool argmax);

/// Reads input tensor t of the problem (a piece of a graph input, a
/// parameter, a constant) from where it lives: the caller's tensor, a
/// streamed input's reader, or the constant's value. With `rows`, only
/// those rows land in `to` (the others are left as they were): from the
/// caller's tensor they alone are copied; a streamed input is read whole.
/// The bytes it moved.
llvm::Expected<int64_t> readInput(ModelOp model, const ExecutionContext &ctx,
                                  const PlanMemory &pm, int t, void *to,
                                  int64_t bytes,
                                  const RowSelection *rows = nullptr);

/// The next tier as the plan runner sees it: loads of input tensors
/// (graph inputs, parameters, constants) read them from where they live,
/// everything else goes to the tier (host RAM or a spill file).
class InputTier final : public NextTier {
public:
  using ReadFn = std::function<llvm::Expected<int64_t>(
      int, void *, int64_t, const RowSelection *)>;
  InputTier(NextTier &base, std::function<bool(int)> isInput,
            ReadFn readInput)
      : base(base), isInput(std::move(isInput)),
        readInput(std::move(readInput)) {}
  llvm::Error write(int key, const void *data, int64_t bytes) override {
    stored.insert(key); // (the plan never stores an input; if it did, the
                        // stored copy is the current one)
    return base.write(key, data, bytes);
  }
  llvm::Error read(int key, void *data, int64_t bytes) override {
    if (isInput(key) && !stored.count(key))
      return readInput(key, data, bytes, nullptr).takeError();
    return base.read(key, data, bytes);
  }
  llvm::Expected<int64_t> readRows(int key, void *data, int64_t bytes,
                                   const RowSelection &rows) override {
    if (isInput(key) && !stored.count(key))
      return readInput(key, data, bytes, &rows);
    return base.readRows(key, data, bytes, rows);
  }
  int64_t bytesHeld() const override { return base.bytesHeld(); }
  std::string describe() const override { return base.describe(); }

private:
  NextTier &base;
  std::function<bool(int)> isInput;
  ReadFn readInput;
  std::set<int> stored; // used on the transfer thread only
};


} // namespace chunked

llvm::Expected<std::vector<Tensor>> executeChunked(ModelOp model,
                                                   const ExecutionContext &ctx,
                                                   const ChunkedOptions &options,
                                                   ChunkedStats *stats);

} // namespace saga

#endif // SAGA_RUNTIME_EXEC_CHUNKEDEXECUTOR_H
