//===- LinkTrainer.h - link prediction: scored pairs, sampled negatives -*- C++ -*-===//
//
// Training a model whose loss is `pair_bce(h)` (docs/language.md, "Link
// prediction") on an EdgeSplit: the graph bound to the model is the split's
// message graph (train_pos; held-out edges are not in it). Each epoch draws
// k negatives per training positive, DGL's uniform sampler: the positive's
// source with a destination drawn uniformly from the other vertices, keyed
// by (seed, epoch, draw) so that thread count and batching give the same
// pairs. Full batch: one step over every positive and its negatives. Mini
// batches: positives shuffled per epoch, B per step with their negatives,
// the pairs' ends the seeds of a sampled neighbourhood (api/MiniBatches.h).
// After each epoch the whole graph's embeddings score val and test pairs:
// ROC AUC, Hits@K and MRR (runtime/train/LinkMetrics.h).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_API_LINKTRAINER_H
#define SAGA_API_LINKTRAINER_H

#include "api/MiniBatches.h"
#include "api/Trainer.h"
#include "runtime/graph/EdgeSplit.h"

#include <functional>
#include <vector>

namespace saga {

struct LinkTrainOptions {
  /// Epochs, learning rate, optimiser, seed (parameters, dropout,
  /// negatives, shuffles) and the JSON-lines log (one line per epoch).
  TrainOptions train;
  /// Negatives drawn per training positive, each epoch (>= 1).
  int64_t negatives = 1;
  /// Mini-batches: positives per step (0: full batch) and the fan-out per
  /// layer (MiniBatchOptions::fanouts).
  int64_t batchSize = 0;
  std::vector<int64_t> fanouts;
  unsigned samplerThreads = 1;
  /// With batches: at most this many steps per epoch (0: every positive),
  /// for timing a large graph's epoch on a part of it.
  int64_t maxBatches = 0;
  /// Hits@K's K.
  int64_t hitsK = 50;
};

struct LinkScores {
  double auc = 0, hits = 0, mrr = 0; // NaN where undefined
};

struct LinkEpochStats {
  unsigned epoch = 0; // 1-based
  double loss = 0;    // averaged over the epoch's steps, by pairs
  LinkScores val, test;
  int64_t batches = 0; // steps (1: full batch)
  double seconds = 0, trainSeconds = 0;
};

struct LinkTrainResult {
  std::vector<LinkEpochStats> history;
  /// The epoch with the best validation AUC (1-based; the first of ties):
  /// the figure to report is its test AUC.
  unsigned bestEpoch = 0;
};

/// The pairs' scores from embeddings `h` ([V, D]; the dot products
/// pair_bce trains), and their metrics against `negative`'s.
LinkScores scoreLinks(const Tensor &h, const VertexPairs &positive,
                      const VertexPairs &negative, int64_t hitsK);

/// Draws negative `j` of positive `i` in `epoch` (a destination other than
/// src, uniform over the graph's vertices).
int32_t negativeDestination(uint64_t seed, uint64_t epoch, int64_t i,
                            int64_t j, int32_t src, int32_t numVertices);

/// Trains `model` (compiled for training, with `pair_bce` as its loss; its
/// graph the split's message graph and its feature input bound; parameters
/// initialised) on `split`. With a batch size, the model must have been
/// compiled with CompileOptions::miniBatch.
llvm::Expected<LinkTrainResult>
trainLinks(Model &model, const Graph &graph, const EdgeSplit &split,
           const LinkTrainOptions &options,
           const std::function<void(const LinkEpochStats &)> &progress = {});

} // namespace saga

#endif // SAGA_API_LINKTRAINER_H
