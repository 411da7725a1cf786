//===- OnlineRefinement.cpp - ROC's cost model refined online -------------===//
//
// The samples, the refit and the cut a refined model would make
// (OnlineRefinement.h).
//
//===----------------------------------------------------------------------===//

#include "runtime/distributed/OnlineRefinement.h"

#include <cstdlib>

using namespace saga;

OnlineRefinement::OnlineRefinement(CostModel &cost, const CostFeatures &inputs,
                                   unsigned every)
    : cost(cost), inputs(inputs), every_(every) {}

bool OnlineRefinement::measure(unsigned epoch, double seconds) {
  computeSeconds += seconds;
  ++epochs;
  return every_ > 0 && epoch % every_ == 0;
}

CostModel::Sample OnlineRefinement::sample() const {
  return {inputs, computeSeconds / double(epochs)};
}

Refinement OnlineRefinement::refine(llvm::ArrayRef<CostModel::Sample> parts,
                                    const Graph *whole,
                                    const Partitioning &current) {
  std::vector<double> measured, predictedBefore, predicted;
  for (const CostModel::Sample &s : parts) {
    measured.push_back(s.seconds);
    predictedBefore.push_back(cost.predict(s.inputs));
    samples_.push_back(s);
  }
  Refinement r;
  r.rms = cost.refine(samples_, kCostPriorStrength);
  for (const CostModel::Sample &s : parts)
    predicted.push_back(cost.predict(s.inputs));
  r.samples = samples_.size();
  r.measured = imbalance(measured);
  r.predictedBefore = imbalance(predictedBefore);
  r.predicted = imbalance(predicted);
  if (whole) {
    r.recut = partitionByCost(*whole, current.parts(), cost);
    for (int64_t q = 1; q < current.parts(); ++q)
      r.moved += std::abs(int64_t(r.recut->bounds[size_t(q)]) -
                          int64_t(current.bounds[size_t(q)]));
  }
  computeSeconds = 0;
  epochs = 0;
  return r;
}
