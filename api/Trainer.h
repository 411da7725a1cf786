//===- Trainer.h - full-batch training of a compiled model ------*- C++ -*-===//
//
// Epochs of (compiled forward + backward, optimiser step, evaluation), with
// early stopping on validation accuracy, a progress line per epoch, an
// optional JSON-lines log and atomic checkpoints that resume exactly: the
// dropout seed of epoch e is a function of (seed, e) and the optimiser state
// is saved, so a resumed run follows the uninterrupted run's curve.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_API_TRAINER_H
#define SAGA_API_TRAINER_H

#include "api/Model.h"

#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>
#include <vector>

namespace saga {

class MiniBatches;

struct TrainOptions {
  unsigned epochs = 200;
  double learningRate = 0.01;
  enum Optimizer { Adam, SGD } optimizer = Adam;
  double momentum = 0.9;             // SGD
  double beta1 = 0.9, beta2 = 0.999; // Adam
  double epsilon = 1e-8;             // Adam
  uint64_t seed = 0;                 // parameters and dropout
  unsigned patience = 0;             // stop after this many epochs without a
                                     // better validation accuracy; 0: never
  std::string logPath;               // JSON lines, one per epoch
  std::string checkpointPath;        // written atomically after each epoch
  bool resume = false;               // continue from checkpointPath
  /// How steps and evaluations run: the memory budget and its tiers,
  /// source intervals (ForwardOptions); the loss mask is the trainer's.
  ForwardOptions execution;
  /// One part of a graph trained by several workers (Model::setDistribution):
  /// the split's vertices are this part's owned local rows; accuracies are
  /// counted over all parts. Only the worker with `writes` writes the log
  /// and checkpoints (all of them read a checkpoint to resume).
  Distribution *dist = nullptr;
  bool writes = true;
  /// Mini-batch training (api/MiniBatches.h): each epoch's
  /// steps run on these sampled batches in turn (the seeds the loss mask,
  /// one optimiser step each; the dropout seed a function of seed, epoch
  /// and batch), evaluation on the whole graph. Null: full batch.
  MiniBatches *batches = nullptr;
  /// With batches: called after each batch (epoch, batches done, batches
  /// in the epoch, seconds since the epoch began), for progress lines.
  std::function<void(unsigned, int64_t, int64_t, double)> batchProgress;
  /// With batches: time every plan step of every mini-batch step
  /// (EpochStats::batchProfile).
  bool profileBatches = false;
};

/// Labels and the split for node classification.
struct Split {
  std::vector<int32_t> labels; // per vertex, -1 unlabelled
  std::vector<int32_t> train, val, test;
};

struct EpochStats {
  unsigned epoch = 0; // 1-based
  double loss = 0;
  double trainAcc = 0, valAcc = 0, testAcc = 0;
  double seconds = 0;
  ChunkedStats chunked; // the training step's, under a memory budget
  int64_t batches = 0;  // mini-batches trained on (0: full batch)
  double trainSeconds = 0; // of `seconds`: the training steps (no evaluation)
  /// With TrainOptions::profileBatches: (plan step, seconds) summed over
  /// the epoch's mini-batch steps, in plan order.
  std::vector<std::pair<std::string, double>> batchProfile;
};

struct TrainResult {
  std::vector<EpochStats> history;
  EpochStats final;      // after the last epoch run
  bool stoppedEarly = false;
};

/// The JSON-lines log at `path`, appended to (null without a path).
llvm::Expected<std::unique_ptr<llvm::raw_fd_ostream>>
openAppendedLog(const std::string &path);

/// The fraction of `vertices` whose arg-max prediction is their label.
double accuracy(const Tensor &logits, const std::vector<int32_t> &labels,
                const std::vector<int32_t> &vertices);

/// Trains `model` (compiled with CompileOptions::training, graph and inputs
/// bound, parameters initialised). `progress` sees every epoch.
llvm::Expected<TrainResult>
train(Model &model, const Split &split, const TrainOptions &options,
      const std::function<void(const EpochStats &)> &progress = {});

} // namespace saga

#endif // SAGA_API_TRAINER_H
