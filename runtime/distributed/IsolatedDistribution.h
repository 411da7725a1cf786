//===- IsolatedDistribution.h - a part of a graph run alone ----*- C++ -*-===//
//
// The Distribution of a part timed alone, with no peers and no MPI: halo
// rows are zeros, nothing is sent, sums are this part's. For measuring
// per-part step times (ROC's cost-model samples, bench/PartitionBench.cpp)
// in one process; counts the bytes the part's halo exchanges would receive
// and send back.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_DISTRIBUTED_ISOLATEDDISTRIBUTION_H
#define SAGA_RUNTIME_DISTRIBUTED_ISOLATEDDISTRIBUTION_H

#include "runtime/distributed/Distribution.h"

#include <algorithm>

namespace saga {

class IsolatedDistribution : public Distribution {
public:
  explicit IsolatedDistribution(const GraphPart &part) : Distribution(part) {}
  llvm::Error gatherHalo(float *rows, int64_t width) override {
    std::fill(rows + part.owned() * width, rows + part.localRows() * width,
              0.0f);
    gathered += int64_t(part.halo.size()) * width * 4;
    return llvm::Error::success();
  }
  llvm::Error scatterHalo(float *, int64_t width) override {
    scattered += int64_t(part.halo.size()) * width * 4;
    return llvm::Error::success();
  }
  using Distribution::sum;
  llvm::Error sum(double *, int64_t) override { return llvm::Error::success(); }
  int64_t gatheredBytes() const { return gathered; }
  int64_t scatteredBytes() const { return scattered; }
  void resetCounters() { gathered = scattered = 0; }

private:
  int64_t gathered = 0, scattered = 0;
};

} // namespace saga

#endif // SAGA_RUNTIME_DISTRIBUTED_ISOLATEDDISTRIBUTION_H
