//===- OnlineRefinement.h - ROC's cost model refined online -----*- C++ -*-===//
//
// ROC's online refinement of its cost model (Partitioner.h) in a
// partitioned run: every `every` epochs, each part's mean compute time per
// epoch since the last refinement (an epoch less its time in exchanges)
// becomes a sample of that part's cost, and the model is fitted again to
// every sample so far with its current weights as a prior
// (CostModel::refine). Every worker holds one, gathers the parts' samples
// (over MPI: tools/sagac/DistributedTrain.cpp) and refines the same model
// the same way. With the whole graph at hand, a refinement also says what a
// cut by the refined model would be and how far it would move the running
// cut's bounds; the run keeps its cut (no re-partitioning while training).
//
// No MPI here: the caller moves the samples between workers.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_DISTRIBUTED_ONLINEREFINEMENT_H
#define SAGA_RUNTIME_DISTRIBUTED_ONLINEREFINEMENT_H

#include "runtime/distributed/Partitioner.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace saga {

/// How strongly a refinement keeps the weights it starts from (rows per
/// feature, against one per sample; CostModel::refine).
constexpr double kCostPriorStrength = 0.1;

/// What one refinement found.
struct Refinement {
  size_t samples = 0; // fitted: every refinement's so far
  double rms = 0;     // the fit's root mean square relative error
  /// max / mean over the running cut's parts: the measured compute times,
  /// and the model's predictions before and after refining.
  double measured = 0, predictedBefore = 0, predicted = 0;
  /// With the whole graph: the cut by the refined model, and the vertices
  /// its bounds move from the running cut's (summed over inner bounds).
  std::optional<Partitioning> recut;
  int64_t moved = 0;
};

class OnlineRefinement {
public:
  /// Refines `cost` (kept by the caller, which saves it after the run)
  /// every `every` epochs (0: never). `inputs` is this worker's part's
  /// (CostModel::inputs of its vertex range).
  OnlineRefinement(CostModel &cost, const CostFeatures &inputs, unsigned every);

  unsigned every() const { return every_; }

  /// Adds epoch `epoch`'s compute seconds (its time less its time in
  /// exchanges); returns whether the model is to be refined now.
  bool measure(unsigned epoch, double computeSeconds);

  /// This part's sample: its inputs and its mean compute seconds per epoch
  /// since the last refinement.
  CostModel::Sample sample() const;

  /// Refines the model from every part's sample (part order), added to the
  /// earlier refinements' samples, and starts measuring again. With
  /// `whole`, the graph `current` cuts, also the cut by the refined model.
  Refinement refine(llvm::ArrayRef<CostModel::Sample> parts, const Graph *whole,
                    const Partitioning &current);

  /// Every sample so far, oldest first.
  const std::vector<CostModel::Sample> &samples() const { return samples_; }

private:
  CostModel &cost;
  CostFeatures inputs;
  unsigned every_;
  std::vector<CostModel::Sample> samples_;
  double computeSeconds = 0; // since the last refinement
  unsigned epochs = 0;       // measured since the last refinement
};

} // namespace saga

#endif // SAGA_RUNTIME_DISTRIBUTED_ONLINEREFINEMENT_H
