//===- Options.h - sagac's command line, by concern -------------*- C++ -*-===//
//
// sagac's llvm::cl options, one struct per concern: the commands; the model
// and its pipeline (every command); what plain `sagac` emits; the dataset;
// how `run` and `train` execute; `run`'s outputs; training; mini-batches;
// out of core; across MPI ranks; `convert`'s and `plot`'s files. Their one
// instance, flags(), registers them before main parses the command line, in
// the order of Flags' members (the positional arguments' order); the driver
// (sagac.cpp) reads them.
//
// The help keeps its two categories: `Commands::category` ("sagac
// options"), which plain `sagac --help` lists alone (HideUnrelatedOptions),
// and the commands' "General options". More categories would change every
// --help, which is the command line's interface.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_TOOLS_SAGAC_OPTIONS_H
#define SAGA_TOOLS_SAGAC_OPTIONS_H

#include "Commands.h"

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>
#include <vector>

namespace saga::sagac {

namespace cl = llvm::cl;

/// What plain `sagac` writes (--emit).
enum class Emit { Saga, Plan, Chunked, LLVM, Cuda, Ptx };

/// The subcommands (none: compile) and the category of the compiler's own
/// options.
struct Commands {
  Commands();
  cl::OptionCategory category;
  cl::SubCommand run, train, convert, splitEdges, plot;
};

/// The model and its pipeline, for every command.
struct ModelFlags {
  explicit ModelFlags(Commands &c);
  cl::opt<std::string> input;           // <model.saga | ->
  cl::opt<unsigned> optLevel;           // -O
  cl::list<std::string> disabledPasses; // --disable-pass

  std::vector<std::string> passesLeftOut() const {
    return {disabledPasses.begin(), disabledPasses.end()};
  }
};

/// What plain `sagac` produces, and where.
struct CompileFlags {
  explicit CompileFlags(Commands &c);
  cl::opt<std::string> outputFile; // -o
  cl::opt<Emit> emit;              // --emit
  cl::opt<int> cudaArch;           // --cuda-arch
  cl::opt<std::string> graphSize;  // --graph-size
  cl::opt<int64_t> devices;        // --devices
  cl::opt<bool> training;          // --training
  cl::opt<bool> verifyDiagnostics; // --verify-diagnostics
  cl::opt<bool> splitInputFile;    // --split-input-file
};

/// The dataset of `run`, `train` and `convert`.
struct DataFlags {
  explicit DataFlags(Commands &c);
  cl::opt<std::string> data;            // --data
  cl::opt<std::string> format;          // --format
  cl::opt<std::string> features;        // --features
  cl::opt<std::string> labels;          // --labels
  cl::opt<std::string> split;           // --split
  cl::opt<bool> noNormalize;            // --no-normalize
  cl::opt<RunOptions::Reorder> reorder; // --reorder

  VertexArrays arrays() const { return {features, labels, split}; }
};

/// How `run` and `train` execute: threads, device, parameters, reports.
struct ExecutionFlags {
  explicit ExecutionFlags(Commands &c);
  cl::opt<unsigned> threads;   // --threads
  cl::opt<std::string> device; // --device
  cl::opt<std::string> params; // --params
  cl::opt<uint64_t> seed;      // --seed
  cl::opt<bool> profile;       // --profile
  cl::opt<bool> kernelTraffic; // --kernel-traffic
};

/// `run`'s outputs and timing.
struct ForwardFlags {
  explicit ForwardFlags(Commands &c);
  cl::list<std::string> outputFiles; // --output
  cl::opt<unsigned> repeat;          // --repeat
};

/// `train`: the optimiser, the epochs, and what a run keeps.
struct TrainingFlags {
  explicit TrainingFlags(Commands &c);
  cl::opt<unsigned> epochs;                   // --epochs
  cl::opt<double> learningRate;               // --lr
  cl::opt<TrainOptions::Optimizer> optimizer; // --optimizer
  cl::opt<double> momentum;                   // --momentum
  cl::opt<unsigned> patience;                 // --patience
  cl::opt<std::string> logFile;               // --log
  cl::opt<std::string> checkpoint;            // --checkpoint
  cl::opt<bool> resume;                       // --resume
  cl::opt<std::string> saveParams;            // --save-params
  cl::opt<std::string> plotFile;              // --plot
  cl::opt<bool> quiet;                        // --quiet
  cl::opt<int32_t> folds;                     // --folds
  cl::opt<unsigned> lrStep;                   // --lr-step
  cl::opt<double> lrGamma;                    // --lr-gamma
  cl::opt<std::string> linkSplit;             // --link-split
  cl::opt<int64_t> negatives;                 // --negatives
  cl::opt<int64_t> maxBatches;                // --max-batches
};

/// `train` on sampled mini-batches.
struct MiniBatchFlags {
  explicit MiniBatchFlags(Commands &c);
  cl::opt<int64_t> batchSize;       // --batch-size
  cl::list<int64_t> fanout;         // --fanout
  cl::opt<unsigned> samplerThreads; // --sampler-threads
};

/// Out of core: the budget (also plain `sagac`'s, for --emit=chunked), the
/// spills, the chunked schedule.
struct OutOfCoreFlags {
  explicit OutOfCoreFlags(Commands &c);
  cl::opt<std::string> memoryBudget; // --memory-budget
  cl::opt<std::string> scratchDir;   // --scratch
  cl::opt<bool> directIO;            // --direct-io
  cl::opt<bool> chunkReadAhead;      // --chunk-read-ahead
  cl::opt<bool> selectiveLoading;    // --selective-loading
  cl::opt<bool> interleaveRows;      // --interleave-rows
  cl::opt<bool> peerHandoffs;        // --peer-handoffs
  cl::opt<int64_t> chunkIntervals;   // --chunk-intervals
  cl::opt<bool> printSchedule;       // --print-schedule
};

/// `train` across MPI ranks: the cut, ROC's cost model, the halo exchange
/// and, with mini-batches, MassiveGNN's buffer of remote features.
struct DistributedFlags {
  explicit DistributedFlags(Commands &c);
  cl::opt<std::string> partition;     // --partition
  cl::opt<std::string> costModelFile; // --cost-model
  cl::opt<std::string> partitionFile; // --partition-file
  cl::opt<bool> haloOverlap;          // --halo-overlap
  cl::opt<unsigned> refineEvery;      // --refine-every
  cl::opt<double> bufferFraction;     // --buffer-fraction
  cl::opt<int64_t> bufferPeriod;      // --buffer-period
  cl::opt<double> bufferAlpha;        // --buffer-alpha
};

/// `convert`'s output and its chunk index.
struct ConvertFlags {
  explicit ConvertFlags(Commands &c);
  cl::opt<std::string> output; // <output.sgf>
  cl::opt<int64_t> intervals;  // --intervals
};

/// `split-edges`: the split file and how the edges are held out.
struct SplitEdgesFlags {
  explicit SplitEdgesFlags(Commands &c);
  cl::opt<std::string> output; // <split.npz>
  cl::opt<double> val, test, negatives;
  cl::opt<uint64_t> seed;
  cl::opt<bool> directed;
};

/// `plot`'s output.
struct PlotFlags {
  explicit PlotFlags(Commands &c);
  cl::opt<std::string> output; // <curves.svg>
};

/// The whole command line. `commands` comes first (the options name its
/// subcommands), `model` before `convert` and `plot` (its positional
/// argument precedes theirs).
struct Flags {
  Commands commands;
  ModelFlags model{commands};
  CompileFlags compile{commands};
  DataFlags data{commands};
  ExecutionFlags execution{commands};
  ForwardFlags forward{commands};
  TrainingFlags training{commands};
  MiniBatchFlags miniBatch{commands};
  OutOfCoreFlags outOfCore{commands};
  DistributedFlags distributed{commands};
  ConvertFlags convert{commands};
  SplitEdgesFlags splitEdges{commands};
  PlotFlags plot{commands};
};

/// The command line's options, registered at static initialisation.
Flags &flags();

} // namespace saga::sagac

#endif // SAGA_TOOLS_SAGAC_OPTIONS_H
