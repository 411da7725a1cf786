//===- PlanMemory.cpp - a plan's operators as a memory problem ------------===//

#include "runtime/exec/PlanMemory.h"

#include "dialect/Saga.h"

#include <algorithm>

#include "llvm/ADT/DenseMap.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace saga;

namespace {

int64_t bytesOf(Type type, const Graph &g) {
  if (auto d = dyn_cast<DomainType>(type)) {
    int64_t n = d.isEdgeDomain() ? g.numEdges : int64_t(g.numVertices);
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

PlanMemory saga::planMemoryProblem(ModelOp plan, const Graph &graph,
                                   int64_t pinBelow, int64_t intervals) {
  PlanMemory out;
  MemoryProblem &p = out.problem;
  const int64_t parts = std::max<int64_t>(1, intervals);
  // Per value: its tensors (one, or one per interval for graph values);
  // empty when pinned (small) or not a tensor.
  llvm::DenseMap<Value, std::vector<int>> index;
  std::vector<int> params;
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
    if (bytes == 0 || bytes < pinBelow) {
      out.pinnedBytes += bytes;
      return ts;
    }
    std::string name;
    llvm::raw_string_ostream os(name);
    v.printAsOperand(os, OpPrintingFlags());
    int64_t pieces = isa<DomainType>(v.getType()) ? parts : 1;
    for (int64_t j = 0; j < pieces; ++j) {
      ts.push_back(int(p.tensors.size()));
      p.tensors.push_back(
          {pieces == 1 ? os.str() : os.str() + "#" + std::to_string(j),
           bytes / pieces + (j < bytes % pieces ? 1 : 0), input});
    }
    return ts;
  };
  auto add = [](std::vector<int> &to, int t) {
    if (std::find(to.begin(), to.end(), t) == to.end())
      to.push_back(t);
  };
  // Piece j of a value: interval j of a graph value, else the whole.
  auto piece = [&](Value v, int64_t j) -> int {
    const std::vector<int> &ts = tensorsOf(v, false);
    if (ts.empty())
      return -1;
    return ts.size() == 1 ? ts[0] : ts[size_t(j)];
  };
  Block &block = plan.getBody().front();
  for (BlockArgument arg : block.getArguments())
    tensorsOf(arg, /*input=*/true);
  for (Operation &op : block) {
    if (isa<ReleaseOp>(op) || op.hasTrait<OpTrait::ConstantLike>())
      continue;
    if (auto param = dyn_cast<ParamOp>(op)) {
      for (int t : tensorsOf(param.getResult(), /*input=*/true))
        params.push_back(t);
      continue;
    }
    auto push = [&](PlanOperator o) {
      if (!o.reads.empty() || !o.writes.empty() || !o.updates.empty())
        p.ops.push_back(std::move(o));
    };
    bool overRows = parts > 1 && !isa<ReturnOp>(op) &&
                    (llvm::any_of(op.getOperandTypes(), llvm::IsaPred<DomainType>) ||
                     llvm::any_of(op.getResultTypes(), llvm::IsaPred<DomainType>));
    if (!overRows) {
      PlanOperator o;
      o.name = isa<ReturnOp>(op) ? "return (optimiser)" : describe(&op);
      for (Value v : op.getOperands())
        for (int t : tensorsOf(v, false))
          add(o.reads, t);
      if (isa<ReturnOp>(op))
        for (int t : params)
          add(o.reads, t);
      for (Value r : op.getResults())
        for (int t : tensorsOf(r, false))
          o.writes.push_back(t);
      push(std::move(o));
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
    bool propagate = launch && launch.getPropagate() && groups;
    bool reversed = propagate && kernel->hasAttr("saga.reversed");
    auto otherSide = [&](unsigned k) {
      if (!propagate)
        return false;
      int64_t srcs = groups[0], dsts = groups[1];
      return reversed ? k >= srcs && k < srcs + dsts : k < srcs;
    };
    for (int64_t j = 0; j < parts; ++j)
      for (int64_t i = 0; i < (propagate ? parts : 1); ++i) {
        PlanOperator o;
        o.name = describe(&op) + " [" +
                 (propagate ? std::to_string(i) + ", " : "") +
                 std::to_string(j) + "]";
        for (auto [k, v] : llvm::enumerate(op.getOperands())) {
          int t = piece(v, otherSide(unsigned(k)) ? i : j);
          if (t >= 0)
            add(o.reads, t);
        }
        for (Value r : op.getResults()) {
          int t = piece(r, j);
          if (t < 0)
            continue;
          // A running result (a propagation's state, a reduction over
          // rows) is made by the first step and updated by the others.
          bool running = propagate ? i > 0
                                   : !isa<DomainType>(r.getType()) && j > 0;
          if (running)
            add(o.updates, t);
          else
            o.writes.push_back(t);
        }
        push(std::move(o));
      }
  }
  return out;
}
