//===- GraphTrainer.h - graph classification: batches of whole graphs -*- C++ -*-===//
//
// Training a model that classifies whole graphs (a readout such as
// `sum_nodes` before its last layers) on a dataset of many small graphs
// (runtime/graph/GraphDataset.h). Each step binds a batch of graphs as one
// graph, their disjoint union (Graph::graphOffsets marks where each one
// begins), and takes the loss on each graph's first vertex, which holds
// the graph's label: the readout gives every vertex of a graph the same
// value, so that vertex's prediction is the graph's. Epochs shuffle the
// training graphs (seeded by epoch), the learning rate may decay in steps,
// and each epoch evaluates train and test accuracy (dropout off).
// crossValidate runs k stratified folds as the GIN paper reports them.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_API_GRAPHTRAINER_H
#define SAGA_API_GRAPHTRAINER_H

#include "api/Trainer.h"
#include "runtime/graph/GraphDataset.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace saga {

struct GraphTrainOptions {
  /// Epochs, learning rate, optimiser, seed (parameters, dropout, shuffles)
  /// and the JSON-lines log (one line per epoch and fold).
  TrainOptions train;
  int64_t batchSize = 32; // graphs per step (the last may be fewer)
  /// Multiply the learning rate by lrGamma every lrStep epochs (0: never).
  unsigned lrStep = 0;
  double lrGamma = 0.5;
  /// Graphs per evaluation batch.
  int64_t evalBatchSize = 512;
  /// The fold being trained (crossValidate sets it; in the stats and log).
  int fold = -1;
};

struct GraphEpochStats {
  unsigned epoch = 0; // 1-based
  int fold = -1;      // crossValidate's fold, else -1
  double loss = 0;    // averaged over the epoch's training graphs
  double trainAcc = 0, testAcc = 0;
  double seconds = 0, trainSeconds = 0;
};

struct GraphTrainResult {
  std::vector<GraphEpochStats> history;
};

/// Trains `model` (compiled for training; parameters initialised) on graphs
/// `train` of `data`, evaluating on `test` after every epoch. The model has
/// one f32 vertex input (the graphs' features) and one class input.
llvm::Expected<GraphTrainResult>
trainGraphs(Model &model, const GraphDataset &data,
            const std::vector<int32_t> &train, const std::vector<int32_t> &test,
            const GraphTrainOptions &options,
            const std::function<void(const GraphEpochStats &)> &progress = {});

struct CrossValidation {
  std::vector<GraphTrainResult> folds;
  /// Per epoch, the mean and standard deviation over the folds of the test
  /// accuracy.
  std::vector<double> meanTestAcc, stdTestAcc;
  /// The GIN paper's figure: the epoch whose mean test accuracy is best
  /// (1-based), with that mean and deviation; and the last epoch's.
  unsigned bestEpoch = 0;
};

/// k-fold cross-validation: stratified folds (stratifiedFolds, seeded by
/// options.train.seed); for each, a freshly compiled model (`compile`,
/// parameters initialised from the seed) trained on the other folds and
/// tested on it.
llvm::Expected<CrossValidation> crossValidate(
    const std::function<llvm::Expected<std::unique_ptr<Model>>()> &compile,
    const GraphDataset &data, int32_t folds, const GraphTrainOptions &options,
    const std::function<void(const GraphEpochStats &)> &progress = {});

} // namespace saga

#endif // SAGA_API_GRAPHTRAINER_H
