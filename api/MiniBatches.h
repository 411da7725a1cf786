//===- MiniBatches.h - sampled mini-batches bound to a model ----*- C++ -*-===//
//
// Mini-batch training's data side: each epoch shuffles the training
// vertices (seeded by epoch), cuts them into batches, samples each batch's
// neighbourhood (NeighborSampler) and makes it a graph of its own: the
// batch graph (sampled in-edges, the model's self loops), the rows of the
// vertex features and labels it reads, and the whole graph's degrees and
// ids of its vertices (`v.deg` is a vertex's degree in the graph, not in
// its sample). A loader thread prepares the next batches while the model
// computes the current one (at most `prefetch` ahead).
//
// The model keeps its compiled plan: bindNext() points it at the next
// batch graph and inputs, and the trainer runs its training step with the
// seeds (rows [0, seeds)) as the loss mask; bindWhole() points it back at
// the whole graph for evaluation (full-neighbour inference: the whole
// graph's forward pass, exact, and one pass over it rather than one
// sampled neighbourhood per evaluated vertex).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_API_MINIBATCHES_H
#define SAGA_API_MINIBATCHES_H

#include "api/Model.h"
#include "runtime/graph/EdgeSplit.h"
#include "runtime/exec/ThreadPool.h"
#include "runtime/sample/BatchRows.h"
#include "runtime/sample/NeighborSampler.h"

#include "llvm/Support/Error.h"

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace saga {

struct MiniBatchOptions {
  int64_t batchSize = 0;         // seeds per batch (the last may be fewer)
  std::vector<int64_t> fanouts;  // per layer, input layer first; -1: all
  unsigned samplerThreads = 1;   // the loader's threads
  int64_t prefetch = 2;          // batches prepared ahead (0: none)
  /// Each layer computes only the rows the loss depends on (its block);
  /// off: every row of the batch graph (the same result, for tests).
  bool rowExtents = true;
  /// Link prediction: batch `index` of epoch `epoch` is the labelled pairs
  /// `linkPairs` fills (whole-graph ids; called on the loader thread). Its
  /// seeds are the pairs' ends in order of first appearance, and
  /// MiniBatch::pairs the same pairs over the batch's rows; the model
  /// needs no label input. `linkBatches` batches per epoch. Null: batches
  /// of training vertices.
  std::function<void(uint64_t epoch, int64_t index, VertexPairs &pairs,
                     std::vector<float> &labels)>
      linkPairs;
  int64_t linkBatches = 0;
};

/// A trainer of a distributed run (runtime/distributed/): it samples
/// batches of its own training vertices from the whole graph's structure,
/// their feature rows come from `rows` (its partition's, and its peers'
/// over MPI: RemoteFeatures), and evaluation runs on its partition
/// (`dist`), the halo rows of the features gathered from their owners for
/// each evaluation. Every trainer runs `batches` batches per epoch (the
/// most any trainer needs; the others spread their seeds over as many,
/// empty ones included, since each batch's fetch is a collective).
struct DistributedBatches {
  const Graph *structure = nullptr; // the whole graph, in global ids
  BatchRows *rows = nullptr;
  const Tensor *ownedRows = nullptr; // the partition's feature rows
  std::vector<int32_t> labels;       // per whole-graph vertex
  Distribution *dist = nullptr;
  int64_t batches = 0;
};

/// A batch ready to bind.
struct MiniBatch {
  int64_t index = 0; // in its epoch
  SampledBatch sample;
  Graph graph;
  Tensor features, labels;
  std::vector<float> degrees; // the whole graph's, per row
  PairSet pairs; // link prediction's, over the batch's rows
  double prepareSeconds = 0;  // sampling, building, gathering
  double sampleSeconds = 0, buildSeconds = 0; // of which
};

struct MiniBatchStats {
  int64_t batches = 0, rows = 0, edges = 0; // summed over batches
  std::vector<int64_t> levelRows; // rows within k hops, summed
  double prepareSeconds = 0; // on the loader thread
  double sampleSeconds = 0, buildSeconds = 0; // of which: the rest gathers
  double waitSeconds = 0;    // the trainer waiting for a batch
};

class MiniBatches {
public:
  /// Takes over `model`'s vertex feature input and label input (the whole
  /// graph's, already bound) to gather batches from; `whole` is the graph
  /// the model is bound to and outlives this. `train`: the training
  /// vertices (none for link prediction, MiniBatchOptions::linkPairs).
  /// Errors: no fan-out, a fan-out of 0 or below -1, a fan-out
  /// count other than the model's hops, a model without one f32 vertex
  /// input and one label input.
  static llvm::Expected<std::unique_ptr<MiniBatches>>
  create(Model &model, const Graph &whole, std::vector<int32_t> train,
         const MiniBatchOptions &options, uint64_t seed);
  /// A trainer of a distributed run: `part` is the partition's local graph
  /// (the model's, for evaluation), `train` its training vertices in
  /// global ids; the model's label input holds the partition's local rows
  /// and its feature input is left unbound (`setup.ownedRows` has them).
  static llvm::Expected<std::unique_ptr<MiniBatches>>
  createDistributed(Model &model, const Graph &part, std::vector<int32_t> train,
                    const MiniBatchOptions &options, uint64_t seed,
                    DistributedBatches setup);
  ~MiniBatches();

  int64_t batchesPerEpoch() const;
  /// Starts preparing epoch `epoch`'s batches.
  void startEpoch(uint64_t epoch);
  /// Binds the epoch's next batch to the model (graph, inputs, degrees
  /// and ids in `forward`); null when the epoch is done.
  llvm::Expected<const MiniBatch *> bindNext(ForwardOptions &forward);
  /// Binds the whole graph and its inputs again (evaluation).
  llvm::Error bindWhole();
  const MiniBatchStats &stats() const { return stats_; }

private:
  MiniBatches(Model &model, const Graph &whole, const Graph &structure,
              std::vector<int32_t> train, const MiniBatchOptions &options,
              uint64_t seed);
  /// Finds the model's feature and label inputs.
  llvm::Error findInputs();
  /// Seeds [*lo, *hi) of `order` in batch `index`.
  void batchBounds(int64_t index, int64_t *lo, int64_t *hi) const;
  void stopLoader();
  void load(uint64_t epoch, uint64_t generation);
  llvm::Expected<MiniBatch> prepare(uint64_t epoch, int64_t index,
                                    const std::vector<int32_t> &order);

  Model &model;
  const Graph &whole;     // the model's graph for evaluation
  const Graph &structure; // sampled from (the whole graph, global ids)
  std::vector<int32_t> train;
  MiniBatchOptions options;
  uint64_t seed;
  std::string featureName, labelName;
  Tensor features, labels; // the whole graph's, taken from the model
  std::unique_ptr<LocalBatchRows> localRows; // over `features`
  BatchRows *rows = nullptr;                 // a batch's rows
  const int32_t *batchLabels = nullptr;        // per global vertex
  std::optional<DistributedBatches> distributed;
  std::vector<float> wholeDegrees;
  NeighborSampler sampler;
  ThreadPool pool;

  std::thread loader;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<MiniBatch> ready;
  uint64_t generation = 0; // bumped to stop a loader
  int64_t produced = 0, consumed = 0;
  bool loaderDone = false;
  std::string loaderError; // why the loader stopped early
  std::unique_ptr<MiniBatch> current; // bound to the model
  std::unique_ptr<MiniBatch> empty;   // the last batch without seeds
  bool wholeBound = true;
  MiniBatchStats stats_;
};

} // namespace saga

#endif // SAGA_API_MINIBATCHES_H
