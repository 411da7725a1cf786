//===- PlanMemory.cpp - a plan's operators as a memory problem ------------===//

#include "analysis/PlanMemory.h"
#include "runtime/exec/ExecHelpers.h"

#include "dialect/Saga.h"

#include <algorithm>

#include "llvm/ADT/DenseMap.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace saga;

namespace {

int64_t bytesOf(Type type, GraphSize g) {
  if (auto d = dyn_cast<DomainType>(type)) {
    int64_t n = d.isEdgeDomain() ? g.edges : g.vertices;
    for (int64_t s : d.getShape())
      n *= s;
    return 4 * n;
  }
  if (auto t = dyn_cast<RankedTensorType>(type))
    return 4 * t.getNumElements();
  return 0;
}

std::string describe(Operation *op) {
  if (auto launch = dyn_cast<LaunchOp>(op))
    return "launch @" + launch.getCallee().str();
  return op->getName().getStringRef().str();
}

} // namespace

PieceIndex saga::indexPieces(const PlanMemory &pm) {
  PieceIndex index;
  for (size_t t = 0; t < pm.pieces.size(); ++t) {
    const PlanPiece &p = pm.pieces[t];
    if (p.stateOf)
      index.states[{p.stateOf, p.piece}] = int(t);
    else
      index.values[{p.value, p.piece}] = int(t);
  }
  return index;
}

PlanMemory saga::planMemoryProblem(ModelOp plan, GraphSize graph,
                                   int64_t pinBelow, int64_t intervals,
                                   int64_t group) {
  PlanMemory out;
  out.group = group;
  MemoryProblem &p = out.problem;
  out.bounds = intervals > 1 ? exec::chunkIntervals(graph.vertices, intervals)
                             : std::vector<int32_t>{0, int32_t(graph.vertices)};
  const int64_t parts = int64_t(out.bounds.size()) - 1;
  if (parts > 1 && graph.occupancy) {
    out.occupied = graph.occupancy(out.bounds);
    if (out.occupied.size() != size_t(parts * parts))
      out.occupied.clear(); // not known at these bounds
  }
  // Each direction's row counts, asked for when a chunk needs them.
  bool countsAsked[2] = {false, false};
  auto rowCount = [&](int64_t i, int64_t j, bool reversed) -> int64_t {
    if (parts < 2 || !graph.rowCounts)
      return -1;
    if (!countsAsked[reversed]) {
      countsAsked[reversed] = true;
      out.rowCounts[reversed] = graph.rowCounts(reversed, out.bounds);
      if (out.rowCounts[reversed].size() != size_t(parts * parts))
        out.rowCounts[reversed].clear();
    }
    return out.chunkRowCount(i, j, reversed);
  };
  auto rowsOf = [&](int64_t j) {
    return int64_t(out.bounds[size_t(j) + 1] - out.bounds[size_t(j)]);
  };
  // Per value: its tensors (one, or one per interval for vertex values);
  // empty when pinned (small) or not a tensor.
  llvm::DenseMap<Value, std::vector<int>> index;
  std::vector<int> params;
  auto newTensor = [&](const std::string &name, int64_t bytes, bool input,
                       PlanPiece piece) {
    p.tensors.push_back({name, bytes, input});
    out.pieces.push_back(piece);
    return int(p.tensors.size()) - 1;
  };
  auto tensorsOf = [&](Value v, bool input) -> const std::vector<int> & {
    auto it = index.find(v);
    if (it != index.end())
      return it->second;
    std::vector<int> &ts = index[v];
    // Graph inputs, parameters and constants start in the next tier.
    Operation *def = v.getDefiningOp();
    input = input || !def || isa<ParamOp>(def) ||
            def->hasTrait<OpTrait::ConstantLike>();
    int64_t bytes = bytesOf(v.getType(), graph);
    // Only values that are not per vertex or edge are pinned by size:
    // graph values always go through the plan.
    if (bytes == 0 || (bytes < pinBelow && !isa<DomainType>(v.getType()))) {
      out.pinnedBytes += bytes;
      return ts;
    }
    std::string name;
    llvm::raw_string_ostream os(name);
    v.printAsOperand(os, OpPrintingFlags());
    auto d = dyn_cast<DomainType>(v.getType());
    if (parts == 1 || !d || d.isEdgeDomain()) {
      ts.push_back(newTensor(os.str(), bytes, input,
                             {v.getAsOpaquePointer(), -1, nullptr}));
      return ts;
    }
    int64_t rowBytes = bytes / graph.vertices;
    for (int64_t j = 0; j < parts; ++j)
      ts.push_back(newTensor(os.str() + "#" + std::to_string(j),
                             rowBytes * rowsOf(j), input,
                             {v.getAsOpaquePointer(), j, nullptr}));
    return ts;
  };
  auto add = [](std::vector<int> &to, int t) {
    if (t >= 0 && std::find(to.begin(), to.end(), t) == to.end())
      to.push_back(t);
  };
  // Piece j of a value: interval j of a vertex value, else the whole.
  auto piece = [&](Value v, int64_t j) -> int {
    const std::vector<int> &ts = tensorsOf(v, false);
    if (ts.empty())
      return -1;
    return ts.size() == 1 ? ts[0] : ts[size_t(j)];
  };
  // Every step is kept, even one that touches only small (pinned) values:
  // an executor runs the problem's operators.
  auto push = [&](PlanOperator o, PlanStep step,
                  std::vector<int> otherEnd = {}) {
    p.ops.push_back(std::move(o));
    out.steps.push_back(step);
    out.otherEnd.push_back(std::move(otherEnd));
  };
  Block &block = plan.getBody().front();
  for (BlockArgument arg : block.getArguments())
    tensorsOf(arg, /*input=*/true);
  for (Operation &op : block) {
    if (isa<ReleaseOp, ScheduleOp>(op) ||
        op.hasTrait<OpTrait::ConstantLike>())
      continue;
    if (auto param = dyn_cast<ParamOp>(op)) {
      for (int t : tensorsOf(param.getResult(), /*input=*/true))
        params.push_back(t);
      continue;
    }
    bool overRows =
        parts > 1 && !isa<ReturnOp>(op) &&
        (llvm::any_of(op.getOperandTypes(), llvm::IsaPred<DomainType>) ||
         llvm::any_of(op.getResultTypes(), llvm::IsaPred<DomainType>));
    if (!overRows) {
      PlanOperator o;
      o.name = isa<ReturnOp>(op) ? "return (optimiser)" : describe(&op);
      for (Value v : op.getOperands()) {
        // Vertex values the plan returns go to the caller's memory piece
        // by piece as they are made, not through the device tier.
        if (isa<ReturnOp>(op) && parts > 1 && isa<DomainType>(v.getType()))
          continue;
        for (int t : tensorsOf(v, false))
          add(o.reads, t);
      }
      if (isa<ReturnOp>(op))
        for (int t : params)
          add(o.reads, t);
      for (Value r : op.getResults())
        for (int t : tensorsOf(r, false))
          o.writes.push_back(t);
      push(std::move(o), {&op, -1, -1});
      continue;
    }
    // The propagation's operand groups: the other end's operands are
    // streamed by interval i.
    auto launch = dyn_cast<LaunchOp>(op);
    func::FuncOp kernel =
        launch ? SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
                     launch, launch.getCalleeAttr())
               : func::FuncOp();
    auto groups = kernel ? kernel->getAttrOfType<DenseI64ArrayAttr>(
                               "saga.operand_groups")
                         : DenseI64ArrayAttr();
    auto stateWidth =
        kernel ? kernel->getAttrOfType<IntegerAttr>("saga.state_width")
               : IntegerAttr();
    bool propagate = launch && launch.getPropagate() && groups && stateWidth;
    // An edge_map writes the rows of the edges into each interval, reading
    // their sources: by 2-D chunk too.
    bool twoD = propagate || (launch && launch.getEdgeMap() && groups);
    bool reversed = propagate && kernel->hasAttr("saga.reversed");
    // The executors' direction for a chunk's CSR.
    bool rowsAreSources = kernel && kernel->hasAttr("saga.reversed");
    auto otherSide = [&](unsigned k) {
      if (!twoD)
        return false;
      int64_t srcs = groups[0], dsts = groups[1];
      return reversed ? k >= srcs && k < srcs + dsts : k < srcs;
    };
    // Destination intervals in groups of `group`: per group, each source
    // interval i once, for every j of the group (i's piece is read G times
    // in a row; the group's states stay live across the i loop). A row's
    // chunks still run in source order, so results do not change.
    const int64_t g = twoD ? std::clamp<int64_t>(group, 1, parts) : 1;
    for (int64_t g0 = 0; g0 < parts; g0 += g) {
      const int64_t g1 = std::min(parts, g0 + g);
      std::vector<int> states(size_t(g1 - g0), -1);
      if (propagate)
        for (int64_t j = g0; j < g1; ++j)
          states[size_t(j - g0)] =
              newTensor(describe(&op) + " state#" + std::to_string(j),
                        rowsOf(j) * stateWidth.getInt() * 4, false,
                        {nullptr, j, &op});
      for (int64_t i = 0; i < (twoD ? parts : 1); ++i)
        for (int64_t j = g0; j < g1; ++j) {
          int state = states[size_t(j - g0)];
          PlanOperator o;
          o.name = describe(&op) + " [" +
                   (twoD ? std::to_string(i) + ", " : "") +
                   std::to_string(j) + "]";
          // An empty chunk reads none of the other end's rows.
          const bool empty = twoD && out.chunkEmpty(i, j, rowsAreSources);
          // Other-end pieces of which the chunk reads fewer rows than the
          // interval holds: readable in part.
          std::vector<std::pair<int, int64_t>> partial;
          std::vector<int> whole; // pieces read at the rows' side
          for (auto [k, v] : llvm::enumerate(op.getOperands())) {
            bool other = otherSide(unsigned(k));
            if (other && empty)
              continue;
            int t = piece(v, other ? i : j);
            add(o.reads, t);
            if (t < 0)
              continue;
            if (!other || tensorsOf(v, false).size() != size_t(parts)) {
              whole.push_back(t);
              continue;
            }
            // Bytes of the rows read, when few (-1: not known; the piece
            // is still only read here).
            int64_t n = rowCount(i, j, rowsAreSources);
            if (n < 0 || (n > 0 && n * kFewRows <= rowsOf(i)))
              partial.push_back(
                  {t, n < 0 ? -1 : p.tensors[size_t(t)].bytes / rowsOf(i) * n});
            else
              whole.push_back(t);
          }
          std::vector<int> otherEnd;
          for (auto &[t, bytes] : partial)
            if (std::find(whole.begin(), whole.end(), t) == whole.end() &&
                std::find(otherEnd.begin(), otherEnd.end(), t) ==
                    otherEnd.end()) {
              otherEnd.push_back(t);
              if (bytes >= 0)
                o.partialReads.push_back({t, bytes});
            }
          if (propagate)
            (i == 0 ? o.writes : o.updates).push_back(state);
          bool last = !propagate || i + 1 == parts;
          for (Value r : op.getResults()) {
            int t = piece(r, j);
            if (t < 0)
              continue;
            // A reduction over rows to a non-graph value accumulates: made
            // at the first interval, updated by the others.
            // So does an edge value, whose rows are the in-edges of every
            // interval.
            auto d = dyn_cast<DomainType>(r.getType());
            if ((!d || d.isEdgeDomain()) && (j > 0 || i > 0))
              add(o.updates, t);
            else if (last)
              o.writes.push_back(t);
          }
          push(std::move(o), {&op, twoD ? i : -1, j}, std::move(otherEnd));
        }
    }
  }
  return out;
}
