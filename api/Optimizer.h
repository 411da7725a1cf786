//===- Optimizer.h - Adam and SGD over a model's parameters -----*- C++ -*-===//
//
// The optimiser every trainer steps (api/Trainer.cpp for node
// classification, api/GraphTrainer.cpp for graph classification): Adam or
// SGD with momentum (TrainOptions), updating the model's parameters in
// place; its state saves to and restores from a Checkpoint, so a resumed
// run follows the uninterrupted one.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_API_OPTIMIZER_H
#define SAGA_API_OPTIMIZER_H

#include "api/Trainer.h"
#include "runtime/train/Checkpoint.h"

#include <string>
#include <utility>
#include <vector>

namespace saga {

/// The dropout seed of an epoch (or of a batch: epochSeed(epochSeed(seed,
/// e), b)): independent of how the run was split into resumed pieces.
uint64_t epochSeed(uint64_t seed, uint64_t epoch);

class Optimizer {
public:
  Optimizer(Model &model, const TrainOptions &options);

  /// One update from d loss / d parameter, by name.
  llvm::Error step(std::vector<std::pair<std::string, Tensor>> &grads);
  /// Multiplies the learning rate of later steps (a step decay schedule).
  void scaleLearningRate(double factor) { lrScale *= factor; }

  Checkpoint save(uint64_t epoch) const;
  llvm::Error restore(Checkpoint &c);

private:
  Model &model;
  const TrainOptions &options;
  std::vector<std::string> names;
  std::vector<Tensor> m, v;
  uint64_t steps = 0;
  double lrScale = 1;
};

} // namespace saga

#endif // SAGA_API_OPTIMIZER_H
