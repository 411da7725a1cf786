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
      auto plan = planChunked(model, {vertices, edges}, budget, intervals);
      if (!plan) {
        model.emitError() << llvm::toString(plan.takeError());
        return signalPassFailure();
      }
      writeSchedule(model, *plan);
    });
  }
};
} // namespace
