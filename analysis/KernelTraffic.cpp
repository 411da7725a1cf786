//===- KernelTraffic.cpp - a plan's compulsory bytes per step -------------===//

#include "analysis/KernelTraffic.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace saga;

std::vector<StepTraffic> saga::kernelTraffic(ModelOp plan, GraphSize graph) {
  PlanMemory pm = planMemoryProblem(plan, graph, /*pinBelow=*/0,
                                    /*intervals=*/1);
  std::vector<StepTraffic> out;
  for (size_t k = 0; k < pm.problem.ops.size(); ++k) {
    const PlanOperator &o = pm.problem.ops[k];
    Operation *op = pm.steps[k].op;
    if (!op || isa<ReturnOp>(op))
      continue;
    StepTraffic t;
    t.step = o.name;
    t.kind = op->getName().stripDialect().str();
    for (int r : o.reads)
      t.bytes += pm.problem.tensors[size_t(r)].bytes;
    for (int w : o.writes)
      t.bytes += pm.problem.tensors[size_t(w)].bytes;
    for (int u : o.updates)
      t.bytes += 2 * pm.problem.tensors[size_t(u)].bytes;
    if (auto l = dyn_cast<LaunchOp>(op)) {
      bool overEdges = l.getPropagate() || l.getEdgeMap();
      t.kind = l.getPropagate() ? "propagate" : l.getEdgeMap() ? "edge_map" : "map";
      if (overEdges) {
        bool edgeValues = false;
        for (Value v : llvm::concat<Value>(l.getOperands(), l.getResults()))
          if (auto d = dyn_cast<DomainType>(v.getType()))
            edgeValues |= d.isEdgeDomain();
        t.bytes += (graph.vertices + 1) * 8 + graph.edges * 4 +
                   (edgeValues ? graph.edges * 4 : 0);
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::string saga::formatKernelTraffic(const std::vector<StepTraffic> &steps,
                                      double bytesPerSecond,
                                      const std::string &bandwidthName) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "| step | kind | compulsory bytes | estimate at " << bandwidthName
     << " |\n|---|---|---:|---:|\n";
  int64_t total = 0;
  for (const StepTraffic &t : steps) {
    total += t.bytes;
    os << "| " << t.step << " | " << t.kind << " | " << t.bytes << " | "
       << llvm::format("%.2f us", double(t.bytes) / bytesPerSecond * 1e6)
       << " |\n";
  }
  os << "| total | | " << total << " | "
     << llvm::format("%.2f us", double(total) / bytesPerSecond * 1e6)
     << " |\n";
  return s;
}
