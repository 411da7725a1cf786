//===- ChunkPlan.cpp - the chunked level: intervals and memory plan -------===//

#include "analysis/ChunkPlan.h"

#include "dialect/Saga.h"
#include "dialect/OpError.h"
#include "support/Intervals.h"

#include "mlir/IR/Builders.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <tuple>

using namespace mlir;
using namespace saga;

namespace {

/// `f` (when set) answering each distinct argument list once.
template <typename R, typename... Args>
std::function<R(Args...)> memoized(std::function<R(Args...)> f) {
  if (!f)
    return f;
  auto memo = std::make_shared<std::map<std::tuple<std::decay_t<Args>...>, R>>();
  return [memo, f = std::move(f)](Args... args) {
    auto key = std::make_tuple(args...);
    auto it = memo->find(key);
    if (it == memo->end())
      it = memo->emplace(key, f(args...)).first;
    return it->second;
  };
}

/// The working set of the largest step, and its name.
std::pair<int64_t, std::string> largestStep(const MemoryProblem &p) {
  std::pair<int64_t, std::string> best{0, ""};
  for (const PlanOperator &op : p.ops) {
    int64_t n = 0;
    std::vector<int> seen;
    for (const auto *l : {&op.reads, &op.writes, &op.updates})
      for (int t : *l)
        if (std::find(seen.begin(), seen.end(), t) == seen.end()) {
          seen.push_back(t);
          n += p.tensors[size_t(t)].bytes;
        }
    if (n > best.first)
      best = {n, op.name};
  }
  return best;
}

/// An operator's name without its chunk suffix (" [i, j]").
std::string plainName(const std::string &name) {
  size_t at = name.rfind(" [");
  return at != std::string::npos && name.back() == ']' ? name.substr(0, at)
                                                       : name;
}

/// The step at which each load may start: `kPrefetchDepth` steps before
/// the step that needs it, but not before the tensor's last store or free
/// (a load queued after its store reads what the store wrote).
std::vector<int> issuePoints(const MemoryPlan &plan, size_t numTensors) {
  std::vector<int> lastAfter(numTensors, -1), at(plan.transfers.size(), -1);
  for (size_t k = 0; k < plan.transfers.size(); ++k) {
    const Transfer &t = plan.transfers[k];
    if (t.isLoad())
      at[k] = std::max({0, t.op - kPrefetchDepth, lastAfter[size_t(t.tensor)] + 1});
    else
      lastAfter[size_t(t.tensor)] = t.op;
  }
  return at;
}

/// The schedule's `empty_chunks`: the chunks the plan knows hold no
/// edges, or null.
DenseI32ArrayAttr emptyChunksAttr(OpBuilder &b, const PlanMemory &pm) {
  std::vector<int32_t> empty;
  for (size_t c = 0; c < pm.occupied.size(); ++c)
    if (!pm.occupied[c])
      empty.push_back(int32_t(c));
  return empty.empty() ? DenseI32ArrayAttr() : b.getDenseI32ArrayAttr(empty);
}

} // namespace

llvm::Expected<ChunkPlan> saga::planChunked(ModelOp model, GraphSize graph,
                                            int64_t budget, int64_t intervals,
                                            int64_t fixedGroup,
                                            bool interleave) {
  // A graph readout reads all the rows of a graph at once, which rows in
  // intervals do not hold.
  // A link loss reads the rows of any two vertices a pair joins.
  Operation *readout = nullptr, *pairLoss = nullptr, *batchNorm = nullptr;
  model.walk([&](Operation *op) {
    if (!readout && isa<ReadoutOp, ReadoutGradOp>(op))
      readout = op;
    if (!pairLoss && isa<PairBceOp, PairBceGradOp>(op))
      pairLoss = op;
    if (!batchNorm && isa<BatchNormOp, BatchNormGradOp>(op))
      batchNorm = op;
  });
  if (batchNorm)
    return errorAt(batchNorm, "batch_norm reads every row of a feature: it "
                            "does not run under a memory budget yet");
  if (readout)
    return errorAt(readout, "graph readouts (sum_nodes, mean_nodes, "
                            "max_nodes, min_nodes) do not run under a memory "
                            "budget yet; a batch of small graphs fits in "
                            "memory");
  if (pairLoss)
    return errorAt(pairLoss, "link prediction's pair_bce does not run under "
                             "a memory budget yet; train in memory or on "
                             "sampled mini-batches");
  int64_t maxParts =
      std::min<int64_t>(kWeightGradSlices, (graph.vertices + 255) / 256);
  // Asked once per interval count (and direction), however many chunk
  // groups are tried.
  graph.occupancy = memoized(graph.occupancy);
  graph.rowCounts = memoized(graph.rowCounts);
  graph.chunkEdges = memoized(graph.chunkEdges);
  ChunkPlan out;
  out.graph = graph;
  out.budget = budget;
  // P from the working sets alone: a partial load takes its piece's whole
  // buffer, so the chunks' row counts (a pass over the chunk index at each
  // P tried) are asked for only at the P chosen.
  GraphSize sizes = graph;
  sizes.rowCounts = nullptr;
  for (int64_t p = intervals > 0 ? intervals : 1;;
       p = std::min(maxParts, p * 2)) {
    out.memory = planMemoryProblem(model, sizes, kPinBelow, p, 1, interleave);
    out.minimum = minimumBudget(out.memory.problem);
    if (intervals > 0 || 2 * out.minimum <= out.room() || p >= maxParts)
      break;
  }
  int64_t room = out.room();
  if (out.minimum > room) {
    auto [needs, largest] = largestStep(out.memory.problem);
    return llvm::createStringError(
        "memory budget of " + std::to_string(budget) +
        " bytes is below the minimum for one chunk: " +
        std::to_string(out.minimum + out.memory.pinnedBytes) + " bytes (" +
        std::to_string(out.intervals()) + " intervals: step " + largest +
        " needs " + std::to_string(needs) + " bytes, plus " +
        std::to_string(out.memory.pinnedBytes) +
        " bytes of parameter-sized values; twice the step lets loads run "
        "ahead)");
  }
  // The plan keeps one step's working set free for loads run ahead (double
  // buffering), or what is left of it.
  const int64_t planned = room - std::min(out.minimum, room - out.minimum);
  // Chunk groups of 1, 2, 4, ... destination intervals: the plan that
  // moves the fewest bytes, or a larger group's within 1 % of it (its
  // kernels read each source piece G times in a row, while it is in
  // cache).
  const int64_t parts = out.intervals();
  bool found = false;
  int64_t fewest = 0; // the fewest bytes of any group's plan
  for (int64_t group = fixedGroup > 0 ? fixedGroup : 1;;
       group = std::min(parts, group * 2)) {
    PlanMemory pm = group == 1 && !graph.rowCounts
                        ? out.memory
                        : planMemoryProblem(model, graph, kPinBelow, parts,
                                            group, interleave);
    pm.problem.budget = planned;
    MemoryPlan plan = planExact(pm.problem, kPlanStates);
    if (plan.feasible &&
        (!found || plan.bytesMoved() * 100 <= fewest * 101)) {
      fewest = found ? std::min(fewest, plan.bytesMoved()) : plan.bytesMoved();
      out.memory = std::move(pm);
      out.plan = std::move(plan);
      found = true;
    } else if (!found) {
      out.plan = std::move(plan); // for its error
    }
    if (group >= parts || fixedGroup > 0)
      break;
  }
  if (!found)
    return llvm::createStringError("memory plan: " + out.plan.error);
  return out;
}

ScheduleOp saga::findSchedule(ModelOp model) {
  for (Operation &op : model.getBody().front())
    if (auto s = dyn_cast<ScheduleOp>(op))
      return s;
  return {};
}

ScheduleOp saga::writeSchedule(ModelOp model, const ChunkPlan &cp) {
  while (ScheduleOp old = findSchedule(model))
    old.erase();
  const PlanMemory &pm = cp.memory;
  const MemoryProblem &p = pm.problem;
  Block &body = model.getBody().front();
  OpBuilder b(model.getContext());
  b.setInsertionPoint(body.getTerminator());
  Location loc = model.getLoc();
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  auto schedule = ScheduleOp::create(
      b, loc, i64(cp.budget), i64(p.budget), i64(pm.group), i64(pm.pinnedBytes),
      i64(cp.minimum), i64(cp.graph.vertices), i64(cp.graph.edges),
      b.getDenseI32ArrayAttr(pm.bounds), b.getStringAttr(cp.plan.method),
      i64(cp.plan.bytesMoved()), emptyChunksAttr(b, pm),
      !pm.rowCounts[0].empty() || !pm.rowCounts[1].empty() ? b.getUnitAttr()
                                                           : UnitAttr(),
      pm.interleaved ? UnitAttr() : b.getUnitAttr(),
      pm.edgesSplit() ? b.getDenseI64ArrayAttr(pm.chunkEdges)
                      : DenseI64ArrayAttr());
  Block *block = new Block();
  schedule.getBody().push_back(block);
  b.setInsertionPointToEnd(block);
  auto transfer = [&](auto tag, int t, int64_t rows = -1) {
    using OpTy = decltype(tag);
    const PlanPiece &piece = pm.pieces[size_t(t)];
    Value v = piece.stateOf ? piece.stateOf->getResult(0)
                            : Value::getFromOpaquePointer(piece.value);
    OpTy::create(b, loc, v, i64(piece.piece),
                 piece.stateOf ? b.getUnitAttr() : UnitAttr(),
                 rows >= 0 ? i64(rows) : IntegerAttr());
  };
  // A partial load's row count: its bytes over the piece's row size.
  auto rowsLoaded = [&](const Transfer &t) -> int64_t {
    return t.kind == Transfer::LoadRows
               ? transferBytes(p, t) / pm.rowBytes(t.tensor)
               : -1;
  };
  std::vector<int> issueAt = issuePoints(cp.plan, p.tensors.size());
  // Prefetches by the step they precede.
  std::vector<std::vector<int>> prefetches(p.ops.size());
  for (size_t k = 0; k < cp.plan.transfers.size(); ++k)
    if (cp.plan.transfers[k].isLoad() &&
        issueAt[k] < cp.plan.transfers[k].op)
      prefetches[size_t(issueAt[k])].push_back(int(k));
  size_t at = 0;
  for (size_t k = 0; k < p.ops.size(); ++k) {
    for (int x : prefetches[k])
      transfer(PrefetchOp(), cp.plan.transfers[size_t(x)].tensor);
    for (; at < cp.plan.transfers.size() && cp.plan.transfers[at].op == int(k) &&
           cp.plan.transfers[at].isLoad();
         ++at)
      transfer(LoadOp(), cp.plan.transfers[at].tensor,
               rowsLoaded(cp.plan.transfers[at]));
    const PlanStep &step = pm.steps[k];
    StepOp::create(b, loc, i64(int64_t(k)),
                     b.getStringAttr(plainName(p.ops[k].name)), i64(step.i),
                     i64(step.j));
    for (; at < cp.plan.transfers.size() && cp.plan.transfers[at].op == int(k);
         ++at) {
      if (cp.plan.transfers[at].kind == Transfer::Store)
        transfer(StoreOp(), cp.plan.transfers[at].tensor);
      else
        transfer(FreeOp(), cp.plan.transfers[at].tensor);
    }
  }
  return schedule;
}

llvm::Expected<ChunkPlan> saga::readSchedule(ScheduleOp schedule) {
  auto model = schedule->getParentOfType<ModelOp>();
  ChunkPlan out;
  out.graph = GraphSize();
  out.graph.vertices = int64_t(schedule.getVertices());
  out.graph.edges = int64_t(schedule.getEdges());
  out.budget = schedule.getBudget();
  ArrayRef<int32_t> bounds = schedule.getIntervals();
  int64_t parts = int64_t(bounds.size()) - 1;
  if (auto empty = schedule.getEmptyChunks()) {
    // The chunks it says are empty (the verifier checked the numbers).
    std::vector<uint8_t> occupied(size_t(parts * parts), 1);
    for (int32_t c : *empty)
      occupied[size_t(c)] = 0;
    out.graph.occupancy = [occupied, at = std::vector<int32_t>(bounds.begin(), bounds.end())](
                              const std::vector<int32_t> &b) {
      return b == at ? occupied : std::vector<uint8_t>();
    };
  }
  if (auto edges = schedule.getChunkEdges())
    // Edge values split by interval, with these chunks' edge counts.
    out.graph.chunkEdges = [counts = std::vector<int64_t>(edges->begin(), edges->end()),
                            at = std::vector<int32_t>(bounds.begin(), bounds.end())](
                               const std::vector<int32_t> &b) {
      return b == at ? counts : std::vector<int64_t>();
    };
  out.memory = planMemoryProblem(model, out.graph, kPinBelow, parts,
                                 int64_t(schedule.getGroup()),
                                 !schedule.getOpMajor());
  if (schedule.getChunkEdges() && !out.memory.edgesSplit())
    return errorAt(schedule, "the schedule splits edge values by "
                                   "interval, but the model's cannot be "
                                   "(an op other than a propagation or edge "
                                   "map uses one)");
  PlanMemory &pm = out.memory;
  MemoryProblem &p = pm.problem;
  if (pm.bounds != std::vector<int32_t>(bounds.begin(), bounds.end()))
    return errorAt(schedule, "the schedule's intervals are not the " +
                                       std::to_string(parts) +
                                       " intervals of a graph of " +
                                       std::to_string(out.graph.vertices) +
                                       " vertices");
  p.budget = schedule.getPlanned();
  out.minimum = minimumBudget(p);
  if (p.budget + pm.pinnedBytes > out.budget)
    return errorAt(schedule, "the plan's share of the budget (" +
                                       std::to_string(p.budget) +
                                       " bytes, plus pinned values) exceeds "
                                       "the budget");
  PieceIndex index = indexPieces(pm);
  const auto &tensorOf = index.values;
  const auto &stateOf = index.states;
  MemoryPlan &plan = out.plan;
  plan.feasible = true;
  plan.method = schedule.getMethod().str();
  int steps = 0;
  std::map<int, int> pendingPrefetch; // tensor -> step it may start at
  for (Operation &op : schedule.getBody().front()) {
    if (auto step = dyn_cast<StepOp>(op)) {
      size_t k = size_t(steps);
      if (k >= p.ops.size())
        return errorAt(&op, "the model has only " +
                                      std::to_string(p.ops.size()) + " steps");
      const PlanStep &want = pm.steps[k];
      if (step.getName() != plainName(p.ops[k].name) ||
          int64_t(step.getI()) != want.i || int64_t(step.getJ()) != want.j)
        return errorAt(&op, "step " + std::to_string(k) + " is " +
                                      p.ops[k].name + " in the model");
      ++steps;
      continue;
    }
    Value v = op.getOperand(0);
    int64_t piece = op.getAttrOfType<IntegerAttr>("piece").getInt();
    bool state = op.hasAttr("state");
    int t = -1;
    if (state) {
      auto it = stateOf.find({v.getDefiningOp(), piece});
      t = it == stateOf.end() ? -1 : it->second;
    } else {
      auto it = tensorOf.find({v.getAsOpaquePointer(), piece});
      t = it == tensorOf.end() ? -1 : it->second;
    }
    if (t < 0)
      return errorAt(&op, std::string("piece ") + std::to_string(piece) +
                                    " of this value is not in the plan's "
                                    "memory (pinned, or not split so)");
    if (isa<PrefetchOp>(op)) {
      pendingPrefetch[t] = steps;
      continue;
    }
    if (isa<LoadOp>(op)) {
      Transfer tr{Transfer::Load, t, steps};
      if (steps >= int(p.ops.size()))
        return errorAt(&op, "a load after the last step");
      if (auto rows = op.getAttrOfType<IntegerAttr>("rows")) {
        // The rows the next step's chunk reads (the verifier checked the
        // piece is an interval's).
        const PlanPiece &at = pm.pieces[size_t(t)];
        int64_t count = pm.bounds[size_t(at.piece) + 1] - pm.bounds[size_t(at.piece)];
        const std::vector<int> &other = pm.otherEnd[size_t(steps)];
        if (std::find(other.begin(), other.end(), t) == other.end())
          return errorAt(&op, "step " + std::to_string(steps) +
                                        " does not read this piece at a "
                                        "chunk's other end: it cannot load "
                                        "some of its rows");
        if (rows.getInt() >= count)
          return errorAt(&op, "loads " + std::to_string(rows.getInt()) +
                                        " rows of an interval of " +
                                        std::to_string(count));
        tr.kind = Transfer::LoadRows;
        PlanOperator &next = p.ops[size_t(steps)];
        if (next.partialBytes(t) < 0)
          next.partialReads.push_back({t, rows.getInt() * pm.rowBytes(t)});
      }
      auto pf = pendingPrefetch.find(t);
      if (pf != pendingPrefetch.end()) {
        tr.issueAt = pf->second;
        pendingPrefetch.erase(pf);
      } else {
        tr.issueAt = steps; // not ahead
      }
      plan.loadBytes += transferBytes(p, tr);
      plan.transfers.push_back(tr);
      continue;
    }
    if (steps == 0)
      return errorAt(&op, "a store or free before the first step");
    bool store = isa<StoreOp>(op);
    if (store)
      plan.storeBytes += p.tensors[size_t(t)].bytes;
    plan.transfers.push_back(
        {store ? Transfer::Store : Transfer::Drop, t, steps - 1});
  }
  if (size_t(steps) != p.ops.size())
    return errorAt(schedule, "the schedule has " + std::to_string(steps) +
                                       " steps, the model " +
                                       std::to_string(p.ops.size()));
  if (!pendingPrefetch.empty())
    return errorAt(schedule,
                         "tensor " + p.tensors[size_t(pendingPrefetch.begin()->first)].name +
                             " is prefetched but never loaded");
  plan.peakBytes = -1; // replayed below
  std::string invalid = validatePlan(p, plan, &plan.peakBytes);
  if (!invalid.empty())
    return errorAt(schedule, "not a valid memory plan: " + invalid);
  return out;
}
