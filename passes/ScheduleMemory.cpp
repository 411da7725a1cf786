//===- ScheduleMemory.cpp - the plan under a memory budget ----------------===//
//
// Writes each plan-level model's saga.schedule (analysis/ChunkPlan.h) for a
// budget and a graph size: the chunked level, as the executor runs it.
//
//===----------------------------------------------------------------------===//

#include "analysis/ChunkPlan.h"
#include "passes/Passes.h"

namespace saga {
#define GEN_PASS_DEF_SAGASCHEDULEMEMORY
#include "passes/Passes.h.inc"
} // namespace saga

using namespace mlir;
using namespace saga;

namespace {
struct ScheduleMemory
    : public saga::impl::SagaScheduleMemoryBase<ScheduleMemory> {
  using SagaScheduleMemoryBase::SagaScheduleMemoryBase;
  void runOnOperation() override {
    if (!emptyChunks.empty() && intervals <= 1) {
      getOperation().emitError()
          << "saga-schedule-memory's empty-chunks needs intervals > 1 (the "
             "chunk numbers are i * P + j)";
      return signalPassFailure();
    }
    for (int64_t c : emptyChunks)
      if (c < 0 || c >= intervals * intervals) {
        getOperation().emitError()
            << "saga-schedule-memory: empty chunk " << c << " is not below "
            << int64_t(intervals) << " x " << int64_t(intervals);
        return signalPassFailure();
      }
    if (budget <= 0 || vertices <= 0 || edges < 0 || intervals < 0) {
      getOperation().emitError()
          << "saga-schedule-memory needs budget > 0 and vertices > 0 (got "
             "budget="
          << int64_t(budget) << " vertices=" << int64_t(vertices)
          << " edges=" << int64_t(edges) << " intervals=" << int64_t(intervals)
          << ")";
      return signalPassFailure();
    }
    getOperation().walk([&](ModelOp model) {
      bool planLevel = true;
      model.walk([&](Operation *op) {
        if (isa<PropagateOp, EdgeMapOp, ApplyVertexOp, ApplyEdgeOp, ScatterOp,
                GatherOp, func::CallOp>(op))
          planLevel = false;
      });
      if (!planLevel) {
        model.emitError() << "saga-schedule-memory needs the plan level "
                             "(run saga-lower-to-plan first)";
        return signalPassFailure();
      }
      GraphSize size{vertices, edges, {}};
      if (!emptyChunks.empty()) {
        std::vector<int64_t> empty(emptyChunks.begin(), emptyChunks.end());
        size.occupancy = [empty](const std::vector<int32_t> &bounds) {
          const int64_t parts = int64_t(bounds.size()) - 1;
          std::vector<uint8_t> occupied(size_t(parts * parts), 1);
          for (int64_t c : empty)
            if (c >= 0 && c < parts * parts)
              occupied[size_t(c)] = 0;
          return occupied;
        };
      }
      auto plan = planChunked(model, size, budget, intervals, /*group=*/0,
                              /*interleave=*/!opMajor);
      if (!plan) {
        model.emitError() << llvm::toString(plan.takeError());
        return signalPassFailure();
      }
      writeSchedule(model, *plan);
    });
  }
};
} // namespace
