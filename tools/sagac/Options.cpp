//===- Options.cpp - sagac's command line, by concern ---------------------===//
//
// The options' names, help texts, defaults and subcommands (Options.h says
// how they are grouped). The help prints them sorted by name, so their
// order here is only that of the positional arguments.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include <algorithm>
#include <thread>

using namespace saga;
using namespace saga::sagac;

Commands::Commands()
    : category("sagac options"),
      run("run", "Run a forward pass of a model on a dataset"),
      train("train", "Train a model on a dataset"),
      convert("convert",
              "Write a dataset as a Saga graph file (.sgf: CSR both ways, "
              "2-D chunk index, features, labels, checksums), or as a NumPy "
              ".npz when the output's name ends in .npz"),
      splitEdges("split-edges",
                 "Hold out edges of a dataset for link prediction (as PyG's "
                 "RandomLinkSplit): an .npz of train_pos, val_pos, val_neg, "
                 "test_pos and test_neg"),
      plot("plot", "Plot a training log (--log's JSON lines) as SVG: loss, "
                   "accuracies and epoch time against the epoch") {}

ModelFlags::ModelFlags(Commands &c)
    : input(cl::Positional, cl::desc("<model.saga | ->"), cl::Required,
            cl::cat(c.category), cl::sub(cl::SubCommand::getAll())),
      optLevel("O",
               cl::desc("Optimisation level: -O0 (none) or -O2 (all, default)"),
               cl::Prefix, cl::init(2), cl::cat(c.category),
               cl::sub(cl::SubCommand::getAll())),
      disabledPasses(
          "disable-pass",
          cl::desc("Leave out an -O2 pass: operator-motion, extract-gemm, "
                   "reorder-linear, fuse-propagation, fuse-epilogue, cse, "
                   "rematerialize (repeatable, or comma-separated)"),
          cl::value_desc("name"), cl::CommaSeparated, cl::cat(c.category),
          cl::sub(cl::SubCommand::getAll())) {}

CompileFlags::CompileFlags(Commands &c)
    : outputFile("o", cl::desc("Write the output to <file>"),
                 cl::value_desc("file"), cl::init("-"), cl::cat(c.category)),
      emit("emit", cl::desc("What to produce"), cl::init(Emit::Saga),
           cl::values(
               clEnumValN(Emit::Saga, "saga", "stage-level saga dialect IR"),
               clEnumValN(Emit::Plan, "plan",
                          "the execution plan and its loop kernels"),
               clEnumValN(Emit::Chunked, "chunked",
                          "the plan with its saga.schedule for "
                          "--memory-budget and --graph-size"),
               clEnumValN(Emit::LLVM, "llvm",
                          "the plan with kernels in the LLVM dialect"),
               clEnumValN(Emit::Cuda, "cuda", "the plan's kernels as CUDA C++"),
               clEnumValN(Emit::Ptx, "ptx",
                          "the plan's kernels compiled by NVRTC "
                          "for --cuda-arch (PTX)")),
           cl::cat(c.category)),
      cudaArch("cuda-arch",
               cl::desc("With --emit=ptx: the GPU architecture, e.g. 80 or "
                        "sm_90 (default 90)"),
               cl::init(90), cl::cat(c.category)),
      graphSize(
          "graph-size",
          cl::desc("With --emit=chunked: the graph's vertices and edges (with "
                   "self loops when the model adds them), e.g. 2708,13264"),
          cl::value_desc("V,E"), cl::cat(c.category)),
      devices("devices",
              cl::desc("With --emit=chunked: plan NGra's ring over N devices "
                       "(the schedule's saga.ring: each destination "
                       "interval's device, host loads and peer copies per "
                       "propagation)"),
              cl::value_desc("N"), cl::init(1), cl::cat(c.category)),
      training("training",
               cl::desc("With --emit=plan|chunked|llvm: the training plan "
                        "(forward, gradients) instead of inference"),
               cl::init(false), cl::cat(c.category)),
      verifyDiagnostics(
          "verify-diagnostics",
          cl::desc("Check diagnostics against expected-* comments in the "
                   "input (for tests)"),
          cl::init(false), cl::cat(c.category)),
      splitInputFile("split-input-file",
                     cl::desc("Compile each '// -----' separated chunk on its "
                              "own (for tests)"),
                     cl::init(false), cl::cat(c.category)) {}

DataFlags::DataFlags(Commands &c)
    : data("data",
           cl::desc("Dataset, detected by content: a Planetoid folder, an OGB "
                    "folder, a NumPy .npz, a Saga graph file (sagac convert), "
                    "a synthetic rmat:scale=S[,edge-factor=E][,features=F]"
                    "[,classes=C][,seed=N], or a Matrix Market file or edge "
                    "list with --features, --labels and --split"),
           cl::value_desc("path"), cl::Required, cl::sub(c.run),
           cl::sub(c.train)),
      format("format",
             cl::desc("Read --data as this format instead of detecting it: "
                      "planetoid, ogb, npz, sgf, mtx, edgelist; graphs (a "
                      "dataset of many graphs: a TU folder or an .npz)"),
             cl::value_desc("name"), cl::sub(c.run), cl::sub(c.train),
             cl::sub(c.convert), cl::sub(c.splitEdges)),
      features("features",
               cl::desc("With a graph-only --data (Matrix Market, an edge "
                        "list): the vertex features, an N x F NumPy .npy"),
               cl::value_desc("x.npy"), cl::sub(c.run), cl::sub(c.train),
               cl::sub(c.convert)),
      labels("labels",
             cl::desc("With a graph-only --data: the N classes (-1 "
                      "unlabelled), a NumPy .npy"),
             cl::value_desc("y.npy"), cl::sub(c.run), cl::sub(c.train),
             cl::sub(c.convert)),
      split("split",
            cl::desc("With a graph-only --data: the split, an .npz of "
                     "train_mask / val_mask / test_mask or train_idx / "
                     "val_idx / test_idx"),
            cl::value_desc("split.npz"), cl::sub(c.run), cl::sub(c.train),
            cl::sub(c.convert)),
      noNormalize("no-normalize", cl::desc("Do not row-normalise the features"),
                  cl::init(false), cl::sub(c.run), cl::sub(c.train)),
      reorder("reorder",
              cl::desc("Relabel vertices before building the graph (default: "
                       "auto)"),
              cl::init(RunOptions::Reorder::Auto),
              cl::values(clEnumValN(RunOptions::Reorder::Auto, "auto",
                                    "degree order for graphs of 65536 vertices "
                                    "or more"),
                         clEnumValN(RunOptions::Reorder::Degree, "degree",
                                    "by decreasing degree: hubs' rows side by "
                                    "side"),
                         clEnumValN(RunOptions::Reorder::None, "none",
                                    "keep the dataset's ids")),
              cl::sub(c.run), cl::sub(c.train)) {}

ExecutionFlags::ExecutionFlags(Commands &c)
    : threads("threads", cl::desc("Worker threads (default: all cores)"),
              cl::init(std::max(1u, std::thread::hardware_concurrency())),
              cl::sub(c.run), cl::sub(c.train)),
      device("device",
             cl::desc("Where plans run: cuda, cpu, or auto (CUDA when a "
                      "driver and a device are present, else the CPU; says "
                      "which and why); cuda:0,1,2,3 splits a chunked run "
                      "(--memory-budget, per device) over those devices"),
             cl::value_desc("auto|cpu|cuda|cuda:N,..."), cl::init("auto"), cl::sub(c.run),
             cl::sub(c.train)),
      params("params",
             cl::desc("Parameter values (text; see docs/user-guide.md)"),
             cl::value_desc("file"), cl::sub(c.run), cl::sub(c.train)),
      seed("seed", cl::desc("Seed for parameters and dropout"), cl::init(0),
           cl::sub(c.run), cl::sub(c.train)),
      profile("profile",
              cl::desc("Print the time of every plan step (train: of one "
                       "more training step after the last epoch; with "
                       "--batch-size: per mini-batch, averaged over the last "
                       "epoch's batches)"),
              cl::init(false), cl::sub(c.run), cl::sub(c.train)),
      kernelTraffic(
          "kernel-traffic",
          cl::desc("Print each plan step's compulsory bytes on the graph and "
                   "the time they would take at an H100's 3.35 TB/s (an "
                   "estimate), before running"),
          cl::init(false), cl::sub(c.run), cl::sub(c.train)) {}

ForwardFlags::ForwardFlags(Commands &c)
    : outputFiles(
          "output",
          cl::desc("Write the model's output (one row per vertex, in the "
                   "input's vertex order) to this NumPy .npy file; "
                   "NAME=file.npy writes the vertex value NAME of the model "
                   "body instead (the value the name holds at the end of the "
                   "model, e.g. h=emb.npy). Repeatable"),
          cl::value_desc("[NAME=]file.npy"), cl::sub(c.run)),
      repeat("repeat", cl::desc("Forward passes to time (median)"), cl::init(1),
             cl::sub(c.run)) {}

TrainingFlags::TrainingFlags(Commands &c)
    : epochs("epochs", cl::desc("Training epochs (default 200)"), cl::init(200),
             cl::sub(c.train)),
      learningRate("lr", cl::desc("Learning rate (default 0.01)"),
                   cl::init(0.01), cl::sub(c.train)),
      optimizer(
          "optimizer", cl::desc("Optimiser"), cl::init(TrainOptions::Adam),
          cl::values(clEnumValN(TrainOptions::Adam, "adam", "Adam (default)"),
                     clEnumValN(TrainOptions::SGD, "sgd", "SGD with momentum")),
          cl::sub(c.train)),
      momentum("momentum", cl::desc("SGD momentum (default 0.9)"),
               cl::init(0.9), cl::sub(c.train)),
      patience("patience",
               cl::desc("Stop after N epochs without a better validation "
                        "accuracy (0: never)"),
               cl::init(0), cl::sub(c.train)),
      logFile("log", cl::desc("Write one JSON line per epoch"),
              cl::value_desc("file"), cl::sub(c.train)),
      checkpoint("checkpoint",
                 cl::desc("Save training state after each epoch "
                          "(atomically)"),
                 cl::value_desc("file"), cl::sub(c.train)),
      resume("resume", cl::desc("Continue from --checkpoint"), cl::init(false),
             cl::sub(c.train)),
      saveParams("save-params", cl::desc("Write the trained parameters"),
                 cl::value_desc("file"), cl::sub(c.train)),
      plotFile("plot",
               cl::desc("After training, plot the loss, accuracies and epoch "
                        "times (all of --log's epochs when given) to this SVG "
                        "file"),
               cl::value_desc("file.svg"), cl::sub(c.train)),
      quiet("quiet", cl::desc("No per-epoch progress lines"), cl::init(false),
            cl::sub(c.train)),
      folds("folds",
            cl::desc("On a dataset of many graphs: stratified "
                     "cross-validation folds (default 10)"),
            cl::init(10), cl::value_desc("K"), cl::sub(c.train)),
      lrStep("lr-step",
             cl::desc("On a dataset of many graphs: multiply the learning "
                      "rate by --lr-gamma every N epochs (default 0: never)"),
             cl::init(0), cl::value_desc("N"), cl::sub(c.train)),
      lrGamma("lr-gamma",
              cl::desc("With --lr-step: the factor (default 0.5)"),
              cl::init(0.5), cl::sub(c.train)),
      linkSplit("link-split",
                cl::desc("Link prediction: train a model whose loss is "
                         "pair_bce(out) on this split of --data's edges "
                         "(sagac split-edges); the held-out edges are not "
                         "in the graph"),
                cl::value_desc("split.npz"), cl::sub(c.train)),
      negatives("negatives",
                cl::desc("With --link-split: negatives drawn per training "
                         "edge each epoch (default 1)"),
                cl::init(1), cl::value_desc("K"), cl::sub(c.train)),
      maxBatches("max-batches",
                 cl::desc("With --link-split and --batch-size: at most N "
                          "batches per epoch (default 0: every train edge), "
                          "to time a large graph's epoch on a part"),
                 cl::init(0), cl::value_desc("N"), cl::sub(c.train)) {}

MiniBatchFlags::MiniBatchFlags(Commands &c)
    : batchSize("batch-size",
                cl::desc("Mini-batch training: seed vertices per batch, their "
                         "neighbourhoods sampled by --fanout (default 0: full "
                         "batch)"),
                cl::init(0), cl::value_desc("N"), cl::sub(c.train)),
      fanout("fanout",
             cl::desc("With --batch-size: neighbours sampled per layer, input "
                      "layer first (10,25; -1 takes all)"),
             cl::CommaSeparated, cl::value_desc("F1,F2,..."), cl::sub(c.train)),
      samplerThreads("sampler-threads",
                     cl::desc("With --batch-size: threads sampling and "
                              "gathering the next batches while one trains "
                              "(default 1)"),
                     cl::init(1), cl::value_desc("N"), cl::sub(c.train)) {}

OutOfCoreFlags::OutOfCoreFlags(Commands &c)
    : memoryBudget(
          "memory-budget",
          cl::desc("Run out of core: the device tier's size for the plan's "
                   "buffers, inputs and parameters (e.g. 512M, 4G); vertex "
                   "values go in row intervals, what does not fit goes to "
                   "--scratch"),
          cl::value_desc("size"), cl::sub(c.run), cl::sub(c.train),
          cl::sub(cl::SubCommand::getTopLevel()), cl::cat(c.category)),
      scratchDir("scratch",
                 cl::desc("With --memory-budget: the folder for spill files "
                          "(default: keep spills in host RAM)"),
                 cl::value_desc("dir"), cl::sub(c.run), cl::sub(c.train)),
      directIO("direct-io",
               cl::desc("With --scratch: spill with O_DIRECT (no page "
                        "cache)"),
               cl::init(false), cl::sub(c.run), cl::sub(c.train)),
      chunkReadAhead(
          "chunk-read-ahead",
          cl::desc("With --memory-budget and a graph file: read its chunks "
                   "on their own thread ahead of the kernels (default on; "
                   "--chunk-read-ahead=false reads each before its kernel)"),
          cl::init(true), cl::sub(c.run), cl::sub(c.train)),
      selectiveLoading(
          "selective-loading",
          cl::desc("With --memory-budget, a graph in memory and spills in "
                   "host RAM: chunks load only the rows of their source "
                   "interval they read (default on; --selective-loading=false "
                   "loads whole pieces)"),
          cl::init(true), cl::sub(c.run), cl::sub(c.train)),
      interleaveRows(
          "interleave-rows",
          cl::desc("With --memory-budget: consecutive ops over rows run "
                   "interval by interval, each interval's pieces used while "
                   "resident (default on; --interleave-rows=false runs each "
                   "op over every interval before the next)"),
          cl::init(true), cl::sub(c.run), cl::sub(c.train)),
      peerHandoffs(
          "peer-handoffs",
          cl::desc("With --device cuda:0,1,...: a device hands what another "
                   "reads over their peer link (NGra's ring; default on); "
                   "--peer-handoffs=false hands everything through host "
                   "memory (the baseline)"),
          cl::init(true), cl::sub(c.run), cl::sub(c.train)),
      chunkIntervals("chunk-intervals",
                     cl::desc("With --memory-budget: row intervals (default: "
                              "the fewest that fit)"),
                     cl::init(0), cl::sub(c.run), cl::sub(c.train),
                     cl::sub(cl::SubCommand::getTopLevel()),
                     cl::cat(c.category)),
      printSchedule("print-schedule",
                    cl::desc("With --memory-budget: print the chunked "
                             "schedule (intervals, steps, loads, stores, "
                             "frees) before running"),
                    cl::init(false), cl::sub(c.run), cl::sub(c.train)) {}

DistributedFlags::DistributedFlags(Commands &c)
    : partition("partition",
                cl::desc("Train across MPI ranks (mpirun -np N sagac train "
                         "...), the graph cut into N contiguous parts by: "
                         "vertices, edges (equal in-edges), roc (ROC's cost "
                         "model), metis"),
                cl::value_desc("vertices|edges|roc|metis"), cl::sub(c.train)),
      costModelFile("cost-model",
                    cl::desc("With --partition roc: ROC's fitted cost model "
                             "(default: one unit per vertex and per "
                             "in-edge)"),
                    cl::value_desc("file"), cl::sub(c.train)),
      partitionFile("partition-file",
                    cl::desc("With --partition: reuse this saved "
                             "partitioning when it exists (its part count "
                             "must be the rank count), else save the cut "
                             "there"),
                    cl::value_desc("file"), cl::sub(c.train)),
      haloOverlap("halo-overlap",
                  cl::desc("With --partition: compute the rows that need no "
                           "remote rows while the halo exchange is in flight "
                           "(default true; false measures what it saves)"),
                  cl::init(true), cl::sub(c.train)),
      refineEvery("refine-every",
                  cl::desc("With --partition: refine ROC's cost model from "
                           "the ranks' measured steps every N epochs, saved "
                           "with --save-params (default 5; 0: never)"),
                  cl::init(5), cl::value_desc("N"), cl::sub(c.train)),
      bufferFraction(
          "buffer-fraction",
          cl::desc("With --batch-size and --partition: MassiveGNN's buffer of "
                   "remote features holds this share f of the partition's "
                   "halo, the highest in-degrees first (default 0: no "
                   "buffer)"),
          cl::init(0.0), cl::value_desc("f"), cl::sub(c.train)),
      bufferPeriod("buffer-period",
                   cl::desc("With --buffer-fraction: mini-batches between "
                            "evictions (Delta, default 32)"),
                   cl::init(32), cl::value_desc("Delta"), cl::sub(c.train)),
      bufferAlpha("buffer-alpha",
                  cl::desc("With --buffer-fraction: score decay per "
                           "mini-batch (alpha, default 0.05); slots below "
                           "(1 - alpha)^Delta are evicted"),
                  cl::init(0.05), cl::value_desc("alpha"), cl::sub(c.train)) {}

ConvertFlags::ConvertFlags(Commands &c)
    : output(cl::Positional, cl::desc("<output.sgf>"), cl::Required,
             cl::sub(c.convert)),
      intervals("intervals",
                cl::desc("Vertex intervals of the 2-D chunk index (default "
                         "8)"),
                cl::init(8), cl::sub(c.convert)) {}

SplitEdgesFlags::SplitEdgesFlags(Commands &c)
    : output(cl::Positional, cl::desc("<split.npz>"), cl::Required,
             cl::sub(c.splitEdges)),
      val("val", cl::desc("Fraction of the pairs held out for validation "
                          "(default 0.05)"),
          cl::init(0.05), cl::sub(c.splitEdges)),
      test("test", cl::desc("Fraction held out for testing (default 0.1)"),
           cl::init(0.1), cl::sub(c.splitEdges)),
      negatives("negatives",
                cl::desc("Negative pairs per held-out positive (default 1)"),
                cl::init(1.0), cl::sub(c.splitEdges)),
      seed("seed", cl::desc("Seed of the split and the negatives"),
           cl::init(0), cl::sub(c.splitEdges)),
      directed("directed",
               cl::desc("Keep u -> v and v -> u as two pairs (default: one "
                        "undirected pair)"),
               cl::init(false), cl::sub(c.splitEdges)) {}

PlotFlags::PlotFlags(Commands &c)
    : output(cl::Positional, cl::desc("<curves.svg>"), cl::Required,
             cl::sub(c.plot)) {}

namespace {
/// Built, and so registered, before main runs.
Flags theFlags;
} // namespace

Flags &saga::sagac::flags() { return theFlags; }
