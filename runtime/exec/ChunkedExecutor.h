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

#include "runtime/exec/Executor.h"
#include "runtime/memory/PlanRunner.h"

#include <map>
#include <memory>
#include <tuple>

namespace saga {

/// Memory plans already made (the interval problem and ROC's plan for a
/// model, graph and budget): every training step reuses its plan.
class ChunkedPlanCache {
public:
  ChunkedPlanCache();
  ~ChunkedPlanCache();
  struct Entry;
  std::map<std::tuple<const void *, const void *, int64_t, int64_t, int64_t>,
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
};

struct ChunkedStats {
  int64_t intervals = 1;
  int64_t minimumBytes = 0; // the largest step's working set at that P
  int64_t pinnedBytes = 0;  // values under 1 MiB, kept out of the plan
  std::string method;       // the planner's (exact, or its fallback)
  int64_t plannedBytes = 0; // what the plan moves
  PlanRunStats run;         // what moved, stalls, the pool's peak
};

/// The chunked schedule `executeChunked` would run, as text: the row
/// intervals, then every step (a plan op over interval j, or chunk (i, j))
/// with the plan's loads before it and its stores and frees after it.
llvm::Expected<std::string> describeChunked(ModelOp model, const Graph &graph,
                                            const ChunkedOptions &options);

llvm::Expected<std::vector<Tensor>> executeChunked(ModelOp model,
                                                   const ExecutionContext &ctx,
                                                   const ChunkedOptions &options,
                                                   ChunkedStats *stats);

} // namespace saga

#endif // SAGA_RUNTIME_EXEC_CHUNKEDEXECUTOR_H
