//===- ChunkPlan.h - the chunked level: intervals and memory plan -*- C++ -*-===//
//
// The chunked level of a plan for a graph size and a device-tier budget:
// the row intervals (P is the smallest whose largest step, double-buffered,
// fits the budget: the second working set is the room loads use to run
// ahead; at the most intervals the graph allows, fitting once is enough),
// the steps over intervals and 2-D chunks (PlanMemory; chunks in groups of
// destination intervals, the group size whose plan moves the fewest
// bytes), and ROC's memory plan over them (MemoryPlanner).
//
// In the IR it is a `saga.schedule` op at the end of the model's body:
// `writeSchedule` puts a plan there, `readSchedule` reads one back and
// checks it (the steps must be the model's, in order; the transfers must
// form a valid plan under the budget). The chunked executor runs what it
// reads back, so the IR is what runs; `saga-schedule-memory` is the pass
// that writes it, for saga-opt and `sagac --emit=chunked`.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_ANALYSIS_CHUNKPLAN_H
#define SAGA_ANALYSIS_CHUNKPLAN_H

#include "analysis/PlanMemory.h"

#include "llvm/Support/Error.h"

namespace saga {

class ScheduleOp;

/// Parameter-sized values under this many bytes stay in host memory, out
/// of the plan.
constexpr int64_t kPinBelow = 1 << 20;
/// How many steps ahead a load may start (double buffering and one more).
constexpr int kPrefetchDepth = 2;
/// The exact planner's states before it falls back (MemoryPlanner.h).
constexpr size_t kPlanStates = size_t(1) << 18;

struct ChunkPlan {
  PlanMemory memory; // the interval problem; its budget is the plan's share
  MemoryPlan plan;
  GraphSize graph;
  int64_t budget = 0;  // the whole device tier
  int64_t minimum = 0; // the largest step's working set at this P
  int64_t intervals() const { return int64_t(memory.bounds.size()) - 1; }
  /// Device bytes for the plan's buffers (the budget less pinned values).
  int64_t room() const { return budget - memory.pinnedBytes; }
};

/// Chooses P (or takes `intervals` when positive) and plans. Fails when the
/// budget is below one step's working set, saying what that is.
/// `group` > 0 fixes the chunk groups' size instead. `interleave`: row-local
/// chains run interval by interval (planMemoryProblem).
llvm::Expected<ChunkPlan> planChunked(ModelOp model, GraphSize graph,
                                      int64_t budget, int64_t intervals = 0,
                                      int64_t group = 0,
                                      bool interleave = true);

/// Writes `plan` as the model's `saga.schedule` (replacing any), with each
/// load that may start early preceded by its `saga.prefetch`.
ScheduleOp writeSchedule(ModelOp model, const ChunkPlan &plan);

/// The model's schedule, or null.
ScheduleOp findSchedule(ModelOp model);

/// The plan a schedule holds, checked against the model; errors carry the
/// schedule's (or the offending op's) location.
llvm::Expected<ChunkPlan> readSchedule(ScheduleOp schedule);

} // namespace saga

#endif // SAGA_ANALYSIS_CHUNKPLAN_H
