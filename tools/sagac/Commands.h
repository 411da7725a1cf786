//===- Commands.h - `sagac run` and `sagac train` ---------------*- C++ -*-===//

#ifndef SAGA_TOOLS_SAGAC_COMMANDS_H
#define SAGA_TOOLS_SAGAC_COMMANDS_H

#include "runtime/graph/EdgeSplit.h"
#include "runtime/graph/GraphFile.h"
#include "runtime/graph/Loaders.h"
#include "runtime/graph/Numpy.h"
#include "runtime/sample/HaloBuffer.h"
#include "api/MiniBatches.h"
#include "api/Trainer.h"

#include <string>
#include <vector>

namespace saga {

struct RunOptions {
  std::string model;       // .saga file or "-"
  std::string data;        // a dataset (loadDataset)
  VertexArrays arrays;     // with a graph-only --data
  std::string format;      // --format: how to read --data (empty: detect)
  /// Link prediction (--link-split): the split of --data's edges; the graph
  /// is its message graph (train_pos).
  std::string linkSplit;
  std::string params;      // parameter file; empty: initialise
  unsigned threads = 1;
  unsigned optLevel = 2;
  std::vector<std::string> disabledPasses; // -O2 passes left out
  bool rowNormalize = true; // divide each feature row by its sum
  uint64_t seed = 0;
  bool profile = false;     // print the time of every plan step
  unsigned repeat = 1;      // forward passes; the median time is reported
  /// sagac run: (vertex value, .npy file) to write; "out" is the
  /// prediction, any other name a value of the model body.
  std::vector<std::pair<std::string, std::string>> outputs;
  /// Vertex relabelling before the graph is built (runtime/graph/Reorder.h):
  /// Auto relabels in degree order graphs of kAutoReorderVertices vertices
  /// or more, whose features outgrow the caches; smaller graphs gain nothing.
  enum class Reorder { Auto, Degree, None } reorder = Reorder::Auto;
  /// Out of core (0: unbounded): the device tier's bytes, the spill folder
  /// (empty: host RAM), O_DIRECT spills, row intervals (0: from the budget).
  int64_t memoryBudget = 0;
  std::string scratch;
  bool directIO = false;
  bool chunkReadAhead = true; // a graph file's chunks, on their own thread
  bool selectiveLoading = true; // chunks load only the rows they read
  bool interleaveRows = true;   // row-local chains interval by interval
  bool peerHandoffs = true;     // several devices: handovers over peer links
  int64_t intervals = 0;
  bool printSchedule = false; // print the chunked schedule first
  bool kernelTraffic = false; // print the steps' compulsory bytes first
  std::string device = "auto"; // auto, cpu or cuda (runtime/exec/Device.h)
  /// Full-graph training over MPI ranks (tools/sagac/DistributedTrain.cpp):
  /// how the graph is cut (vertices, edges, roc, metis; empty: one process),
  /// ROC's cost model file (roc: fitted weights; none: an unfitted prior),
  /// a partitioning file read when it exists, else written, and whether
  /// exchanges overlap computation.
  std::string partition;
  std::string costModel;
  std::string partitionFile;
  /// Halo exchanges run while the rows that do not need them compute
  /// (false: each exchange completes before its kernel starts).
  bool haloOverlap = true;
  /// ROC's cost model refined from the ranks' measured steps every this
  /// many epochs (0: never).
  unsigned refineEvery = 5;
};

/// Binds the dataset to the model's inputs by kind: its f32 vertex input
/// takes the features (read by interval from `stream` when given, each row
/// divided by its sum with `normalize`), its class input the labels.
llvm::Error bindDataset(Model &model, Dataset &data,
                        GraphFile *stream = nullptr, bool normalize = false);

/// "512M", "4G", "1.5GiB", "1000000": bytes; -1 when it is not a size.
int64_t parseSize(const std::string &text);

constexpr int32_t kAutoReorderVertices = 1 << 16;

/// Compiles the model, loads the data, runs one forward pass and prints the
/// timings, the prediction counts and (with labels) the accuracies. Returns
/// the process exit status.
int runForward(const RunOptions &options);

struct TrainCommandOptions {
  RunOptions run;     // model, data, threads, ...
  TrainOptions train; // epochs, optimiser, checkpoints, ...
  std::string saveParams; // write the trained parameters (text) here
  std::string plot;       // the training curves as SVG (Plot.h)
  bool quiet = false;     // no per-epoch lines
  /// Mini-batch training (api/MiniBatches.h): batchSize 0 is
  /// full batch; the fan-outs per layer, input layer first.
  MiniBatchOptions batches;
  /// A dataset of many graphs (graph classification, GraphTrain.cpp):
  /// --batch-size is graphs per step, --folds the cross-validation folds,
  /// the learning rate decays by --lr-gamma every --lr-step epochs.
  int32_t folds = 10;
  unsigned lrStep = 0;
  double lrGamma = 0.5;
  /// With batches and --partition: MassiveGNN's buffer of remote features.
  HaloBufferOptions buffer;
  /// With run.linkSplit: negatives per training edge, per epoch.
  int64_t negatives = 1;
  int64_t maxBatches = 0; // and at most this many batches per epoch
};

/// Trains the model on the dataset's training split, printing a line per
/// epoch and the final test accuracy. Returns the process exit status.
int runTrain(const TrainCommandOptions &options);

/// Whether --data is a dataset of many graphs (a TU folder, or --format
/// graphs): `sagac train` then classifies graphs (runTrainGraphs).
bool isGraphDataset(const RunOptions &options);
/// `sagac train` on a dataset of many graphs: k-fold cross-validation of a
/// graph classifier, batches of whole graphs.
int runTrainGraphs(const TrainCommandOptions &options);

/// `sagac train --link-split`: link prediction (api/LinkTrainer.h) on the
/// model, bound to `graph` (the split's message graph) with its features.
int runTrainLinks(const TrainCommandOptions &options, Model &model,
                  const Graph &graph, const EdgeSplit &split);

/// `runTrain` as one MPI rank of a partitioned run (mpirun -np N sagac
/// train ... --partition KIND): every rank trains the same model on its
/// part; rank 0 prints, logs, checkpoints and saves the parameters.
int runDistributedTrain(const TrainCommandOptions &options);

/// Reads any dataset Saga reads and writes it as a graph file with a chunk
/// index over `intervals` vertex intervals; prints what it wrote.
int runConvert(const std::string &input, const std::string &output,
               int64_t intervals, const VertexArrays &arrays,
               const std::string &format);

/// Holds out edges of any dataset Saga reads (splitEdges) and writes the
/// five sets as an .npz; prints their sizes.
int runSplitEdges(const std::string &input, const std::string &output,
                  const EdgeSplitOptions &options, const VertexArrays &arrays,
                  const std::string &format);

} // namespace saga

#endif // SAGA_TOOLS_SAGAC_COMMANDS_H
