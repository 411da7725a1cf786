//===- KernelTraffic.h - a plan's compulsory bytes per step -----*- C++ -*-===//
//
// For each step of a plan sized for a graph (a kernel launch, GEMM, loss or
// gradient helper), the bytes it must move at the least: every operand
// read once and every result written once (a value both read and updated
// counts twice), plus, for a propagation or edge map, the CSR it walks (the
// offsets and neighbour ids, and the edge ids when it touches edge
// values). Rows gathered more than once, and caches, are not counted: the
// time these bytes take at a memory bandwidth is a lower bound, an
// estimate, not a measurement.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_ANALYSIS_KERNELTRAFFIC_H
#define SAGA_ANALYSIS_KERNELTRAFFIC_H

#include "analysis/PlanMemory.h"

#include <string>
#include <vector>

namespace saga {

struct StepTraffic {
  std::string step; // "launch fused_propagate_0", "linear", ...
  std::string kind; // "propagate", "edge_map", "map", or the op's name
  int64_t bytes = 0;
};

std::vector<StepTraffic> kernelTraffic(ModelOp plan, GraphSize graph);

/// A Markdown table of `steps` with the time each would take at
/// `bytesPerSecond` (labelled an estimate), and the total.
std::string formatKernelTraffic(const std::vector<StepTraffic> &steps,
                                double bytesPerSecond,
                                const std::string &bandwidthName);

} // namespace saga

#endif // SAGA_ANALYSIS_KERNELTRAFFIC_H
