//===- ScheduleMemory.cpp - the plan under a memory budget ----------------===//
//
// Writes each plan-level model's saga.schedule (analysis/ChunkPlan.h) for a
// budget and a graph size: the chunked level, as the executor runs it; with
// `devices`, NGra's ring over them (support/RingSchedule.h) as its
// `saga.ring`.
//
//===----------------------------------------------------------------------===//

#include "analysis/ChunkPlan.h"
#include "passes/Passes.h"
#include "support/RingSchedule.h"

#include <algorithm>

namespace saga {
#define GEN_PASS_DEF_SAGASCHEDULEMEMORY
#include "passes/Passes.h.inc"
} // namespace saga

using namespace mlir;
using namespace saga;

namespace {
/// Each chunk's edges without the graph: the graph's edges in proportion
/// to the chunk's rows (sources times destinations), none in an empty
/// chunk, the remainders to the largest shares so that they add up.
std::vector<int64_t> estimatedChunkEdges(const GraphSize &size,
                                         const std::vector<int32_t> &bounds) {
  const int64_t parts = int64_t(bounds.size()) - 1;
  std::vector<uint8_t> occupied =
      size.occupancy ? size.occupancy(bounds) : std::vector<uint8_t>();
  std::vector<double> share(size_t(parts * parts), 0.0);
  double total = 0;
  for (int64_t i = 0; i < parts; ++i)
    for (int64_t j = 0; j < parts; ++j) {
      size_t c = size_t(i * parts + j);
      if (occupied.size() == share.size() && !occupied[c])
        continue;
      share[c] = double(bounds[size_t(i) + 1] - bounds[size_t(i)]) *
                 double(bounds[size_t(j) + 1] - bounds[size_t(j)]);
      total += share[c];
    }
  std::vector<int64_t> counts(share.size(), 0);
  if (total <= 0)
    return counts;
  int64_t given = 0;
  std::vector<std::pair<double, size_t>> remainders;
  for (size_t c = 0; c < share.size(); ++c) {
    double exact = double(size.edges) * share[c] / total;
    counts[c] = int64_t(exact);
    given += counts[c];
    if (share[c] > 0)
      remainders.push_back({exact - double(counts[c]), c});
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](auto &a, auto &b) { return a.first > b.first; });
  for (size_t k = 0; given < size.edges && !remainders.empty(); ++k, ++given)
    ++counts[remainders[k % remainders.size()].second];
  return counts;
}

struct ScheduleMemory
    : public saga::impl::SagaScheduleMemoryBase<ScheduleMemory> {
  using SagaScheduleMemoryBase::SagaScheduleMemoryBase;
  /// The ring over `devices` devices: each destination interval weighed by
  /// its in-edges (the chunks' counts, or their estimate), as `saga.ring`.
  void writeRing(ScheduleOp schedule, const ChunkPlan &plan,
                 const GraphSize &size) {
    const std::vector<int32_t> &bounds = plan.memory.bounds;
    RingSchedule ring = planRing(
        int(devices),
        destinationWeights(bounds, plan.memory.chunkEdges.empty()
                                       ? estimatedChunkEdges(size, bounds)
                                       : plan.memory.chunkEdges));
    Builder b(schedule.getContext());
    std::vector<int32_t> owners(ring.owner.begin(), ring.owner.end());
    schedule->setAttr(
        "saga.ring",
        b.getDictionaryAttr({
            b.getNamedAttr("devices", b.getI64IntegerAttr(devices)),
            b.getNamedAttr("owners", b.getDenseI32ArrayAttr(owners)),
            b.getNamedAttr("host_loads", b.getI64IntegerAttr(ring.hostLoads())),
            b.getNamedAttr("peer_copies",
                           b.getI64IntegerAttr(ring.peerCopies())),
        }));
  }
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
    if (devices < 1 || devices > 64) {
      getOperation().emitError()
          << "saga-schedule-memory: devices must be 1 to 64, not "
          << int64_t(devices);
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
      GraphSize size{vertices, edges, {}, {}, {}};
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
      if (!wholeEdges)
        size.chunkEdges = [size](const std::vector<int32_t> &bounds) {
          return estimatedChunkEdges(size, bounds);
        };
      auto plan = planChunked(model, size, budget, intervals, /*group=*/0,
                              /*interleave=*/!opMajor);
      if (!plan) {
        model.emitError() << llvm::toString(plan.takeError());
        return signalPassFailure();
      }
      ScheduleOp schedule = writeSchedule(model, *plan);
      if (devices > 1)
        writeRing(schedule, *plan, size);
    });
  }
};
} // namespace
