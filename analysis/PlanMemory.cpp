//===- PlanMemory.cpp - a plan's operators as a memory problem ------------===//

#include "analysis/PlanMemory.h"
#include "dialect/OpError.h"
#include "support/Intervals.h"

#include "dialect/Saga.h"

#include <algorithm>
#include <optional>

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
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

/// A plan op's operators: [begin, end) of the problem's, and how they run.
struct OpSteps {
  Operation *op;
  size_t begin, end;
  enum Kind {
    Whole,       // once (not over rows)
    Rows,        // once per interval j, in order
    Propagation, // per 2-D chunk, destination intervals in groups
    Chunks,      // per 2-D chunk (an edge map)
  } kind;
  int64_t group; // a propagation's destination intervals per group
};

/// The problem's operator order with chains of row-local ops run interval
/// by interval (NGra's ApplyVertex on a destination interval as soon as its
/// gather is done): consecutive ops over rows whose operands made in the
/// chain are vertex values (read at the same interval) run interval-major,
/// after the chunk group of a propagation heading the chain that finishes
/// the interval, so an interval's pieces are used while resident instead
/// of each op streaming every interval through the device tier. Each op's
/// own steps keep their order (reductions over rows still add interval
/// 0, 1, ... in turn: results do not change). An op not over rows that
/// reads nothing made in the chain runs before it; one that does ends it.
std::vector<size_t> interleaveRows(const std::vector<OpSteps> &ops,
                                   int64_t parts) {
  std::vector<size_t> order;
  const OpSteps *head = nullptr; // a propagation the chain follows
  std::vector<const OpSteps *> chain;
  llvm::DenseSet<Value> made; // values the head or chain make
  auto emitRows = [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j)
      for (const OpSteps *c : chain)
        order.push_back(c->begin + size_t(j));
  };
  auto close = [&] {
    if (head) {
      // Per group: its chunks, then the chain over the group's intervals.
      const int64_t g = head->group;
      size_t k = head->begin;
      for (int64_t g0 = 0; g0 < parts; g0 += g) {
        const int64_t g1 = std::min(parts, g0 + g);
        for (int64_t n = 0; n < parts * (g1 - g0); ++n)
          order.push_back(k++);
        emitRows(g0, g1);
      }
    } else {
      emitRows(0, parts);
    }
    head = nullptr;
    chain.clear();
    made.clear();
  };
  auto emitWhole = [&](const OpSteps &o) {
    for (size_t k = o.begin; k < o.end; ++k)
      order.push_back(k);
  };
  auto readsMade = [&](Operation *op, bool vertexOk) {
    return llvm::any_of(op->getOperands(), [&](Value v) {
      if (!made.contains(v))
        return false;
      auto d = dyn_cast<DomainType>(v.getType());
      return !(vertexOk && d && !d.isEdgeDomain());
    });
  };
  for (const OpSteps &o : ops) {
    switch (o.kind) {
    case OpSteps::Whole:
      // The return (the optimiser) stays last; an op reading nothing of
      // the open chain runs before it.
      if (isa<ReturnOp>(o.op) || readsMade(o.op, false))
        close();
      emitWhole(o);
      continue;
    case OpSteps::Rows:
      if (readsMade(o.op, true))
        close();
      chain.push_back(&o);
      break;
    case OpSteps::Propagation:
      close();
      head = &o;
      break;
    case OpSteps::Chunks:
      close();
      emitWhole(o);
      continue;
    }
    for (Value r : o.op->getResults())
      made.insert(r);
  }
  close();
  return order;
}

/// Reorders the problem's operators (and their steps) to `order`.
void permuteSteps(PlanMemory &pm, const std::vector<size_t> &order) {
  std::vector<PlanOperator> ops;
  std::vector<PlanStep> steps;
  std::vector<std::vector<int>> otherEnd;
  for (size_t k : order) {
    ops.push_back(std::move(pm.problem.ops[k]));
    steps.push_back(pm.steps[k]);
    otherEnd.push_back(std::move(pm.otherEnd[k]));
  }
  pm.problem.ops = std::move(ops);
  pm.steps = std::move(steps);
  pm.otherEnd = std::move(otherEnd);
}

} // namespace

// Anything else (a return, an op over all edges) reads them whole by edge
// id. A plan without edge values has none to split.
bool saga::edgeValuesSplittable(ModelOp plan) {
  auto overChunks = [](Operation *op) {
    auto launch = dyn_cast<LaunchOp>(op);
    if (!launch || !(launch.getPropagate() || launch.getEdgeMap()))
      return false;
    auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        launch, launch.getCalleeAttr());
    return fn && fn->hasAttr("saga.operand_groups") &&
           !(launch.getEdgeMap() && fn->hasAttr("saga.reversed"));
  };
  bool any = false;
  auto ok = [&](Value v) {
    auto d = dyn_cast<DomainType>(v.getType());
    if (!d || !d.isEdgeDomain())
      return true;
    any = true;
    if (Operation *def = v.getDefiningOp();
        def && !(overChunks(def) && cast<LaunchOp>(def).getEdgeMap()))
      return false;
    // (A schedule's transfers name the values they move.)
    return llvm::all_of(v.getUsers(), [&](Operation *user) {
      return isa<ReleaseOp, LoadOp, StoreOp, FreeOp, PrefetchOp>(user) ||
             overChunks(user);
    });
  };
  Block &block = plan.getBody().front();
  if (!llvm::all_of(block.getArguments(), ok))
    return false;
  for (Operation &op : block)
    if (!llvm::all_of(op.getResults(), ok))
      return false;
  return any;
}

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
                                   int64_t group, bool interleave) {
  PlanMemory out;
  out.group = group;
  out.interleaved = interleave;
  MemoryProblem &p = out.problem;
  out.bounds = intervals > 1 ? chunkIntervals(graph.vertices, intervals)
                             : std::vector<int32_t>{0, int32_t(graph.vertices)};
  const int64_t parts = int64_t(out.bounds.size()) - 1;
  if (parts > 1 && graph.occupancy) {
    out.occupied = graph.occupancy(out.bounds);
    if (out.occupied.size() != size_t(parts * parts))
      out.occupied.clear(); // not known at these bounds
  }
  if (parts > 1 && graph.chunkEdges && edgeValuesSplittable(plan)) {
    out.chunkEdges = graph.chunkEdges(out.bounds);
    if (out.chunkEdges.size() != size_t(parts * parts))
      out.chunkEdges.clear(); // not known at these bounds
  }
  if (out.edgesSplit()) {
    // Chunk order: by destination interval, then source interval.
    out.chunkBase.assign(size_t(parts * parts), 0);
    out.edgeFirst.assign(size_t(parts) + 1, 0);
    int64_t next = 0;
    for (int64_t j = 0; j < parts; ++j) {
      out.edgeFirst[size_t(j)] = next;
      for (int64_t i = 0; i < parts; ++i) {
        out.chunkBase[size_t(i * parts + j)] = next;
        next += out.chunkEdges[size_t(i * parts + j)];
      }
    }
    out.edgeFirst[size_t(parts)] = next;
    if (next != graph.edges) // counts for another graph: keep values whole
      out.chunkEdges.clear(), out.chunkBase.clear(), out.edgeFirst.clear();
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
  // The tensors' names are the values' SSA names, from one AsmState of
  // the whole module: Value::printAsOperand without one builds (and
  // verifies) the module's state for every call, quadratic in the plan's
  // size (seconds for an unfused -O0 plan).
  std::optional<AsmState> names;
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
    if (!names) {
      Operation *top = plan;
      while (top->getParentOp())
        top = top->getParentOp();
      names.emplace(top, OpPrintingFlags().assumeVerified());
    }
    v.printAsOperand(os, *names);
    auto d = dyn_cast<DomainType>(v.getType());
    if (!out.splitsByInterval(v.getType())) {
      ts.push_back(newTensor(os.str(), bytes, input,
                             {v.getAsOpaquePointer(), -1, nullptr}));
      return ts;
    }
    const bool edges = d.isEdgeDomain();
    int64_t rowBytes = bytes / (edges ? graph.edges : graph.vertices);
    for (int64_t j = 0; j < parts; ++j)
      ts.push_back(newTensor(
          os.str() + "#" + std::to_string(j),
          rowBytes * (edges ? out.edgeFirst[size_t(j) + 1] - out.edgeFirst[size_t(j)]
                            : rowsOf(j)),
          input, {v.getAsOpaquePointer(), j, nullptr}));
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
  std::vector<OpSteps> opSteps; // per plan op with steps, in block order
  for (Operation &op : block) {
    if (isa<ReleaseOp, ScheduleOp>(op) ||
        op.hasTrait<OpTrait::ConstantLike>())
      continue;
    if (auto param = dyn_cast<ParamOp>(op)) {
      for (int t : tensorsOf(param.getResult(), /*input=*/true))
        params.push_back(t);
      continue;
    }
    opSteps.push_back({&op, p.ops.size(), 0, OpSteps::Whole, 1});
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
      opSteps.back().end = p.ops.size();
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
    // Split edge values: piece j, or reversed the other end's piece i.
    auto edgeOperand = [&](Value v) {
      auto d = dyn_cast<DomainType>(v.getType());
      return twoD && d && d.isEdgeDomain() && out.edgesSplit();
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
            const bool edge = edgeOperand(v);
            bool other = edge ? reversed : otherSide(unsigned(k));
            if (other && empty)
              continue;
            int t = piece(v, other ? i : j);
            add(o.reads, t);
            if (t < 0)
              continue;
            if (!other || edge ||
                tensorsOf(v, false).size() != size_t(parts)) {
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
            // Split, piece j holds the edges into interval j: made at
            // its first chunk.
            auto d = dyn_cast<DomainType>(r.getType());
            if (edgeOperand(r))
              (i == 0 ? o.writes : o.updates).push_back(t);
            else if ((!d || d.isEdgeDomain()) && (j > 0 || i > 0))
              add(o.updates, t);
            else if (last)
              o.writes.push_back(t);
          }
          push(std::move(o), {&op, twoD ? i : -1, j}, std::move(otherEnd));
        }
    }
    opSteps.back().end = p.ops.size();
    opSteps.back().kind = propagate ? OpSteps::Propagation
                          : twoD    ? OpSteps::Chunks
                                    : OpSteps::Rows;
    opSteps.back().group = g;
  }
  if (parts > 1 && interleave)
    permuteSteps(out, interleaveRows(opSteps, parts));
  return out;
}
