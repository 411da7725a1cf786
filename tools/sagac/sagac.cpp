//===- sagac.cpp - the Saga compiler driver -------------------------------===//
//
//   sagac model.saga [--emit=saga|plan|llvm] [-O0|-O2] [-o FILE]
//   sagac - < model.saga
//   sagac run model.saga --data DIR [--threads N] [--params FILE]
//   sagac train model.saga --data DIR [--epochs N] [--lr X] [--checkpoint F]
//   sagac convert DATASET OUT.sgf|OUT.npz [--intervals P]
//
// Diagnostics are printed clang-style: file:line:col, the source line and a
// caret. The exit status is 1 if any error was reported.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Plot.h"

#include "codegen/cpu/CpuJit.h"
#include "codegen/cuda/CudaEmitter.h"
#include "codegen/cuda/Nvrtc.h"
#include "parser/FrontEnd.h"
#include "passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cstdio>
#include <cstdlib>
#include <thread>

#include <unistd.h>

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum class Emit { Saga, Plan, Chunked, LLVM, Cuda, Ptx };

cl::OptionCategory category("sagac options");
cl::SubCommand runCommand("run", "Run a forward pass of a model on a dataset");
cl::SubCommand trainCommand("train", "Train a model on a dataset");
cl::SubCommand convertCommand(
    "convert", "Write a dataset as a Saga graph file (.sgf: CSR both ways, "
               "2-D chunk index, features, labels, checksums), or as a NumPy "
               ".npz when the output's name ends in .npz");
cl::SubCommand plotCommand(
    "plot", "Plot a training log (--log's JSON lines) as SVG: loss, "
            "accuracies and epoch time against the epoch");
cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.saga | ->"),
                               cl::Required, cl::cat(category),
                               cl::sub(cl::SubCommand::getAll()));
cl::opt<unsigned> optLevel("O", cl::desc("Optimisation level: -O0 (none) or -O2 (all, default)"),
                           cl::Prefix, cl::init(2), cl::cat(category),
                           cl::sub(cl::SubCommand::getAll()));
cl::list<std::string> disabledPasses(
    "disable-pass",
    cl::desc("Leave out an -O2 pass: operator-motion, extract-gemm, "
             "reorder-linear, fuse-propagation, fuse-epilogue, cse, rematerialize "
             "(repeatable, or comma-separated)"),
    cl::value_desc("name"), cl::CommaSeparated, cl::cat(category),
    cl::sub(cl::SubCommand::getAll()));
cl::opt<std::string> dataDir("data",
                             cl::desc("Dataset, detected by content: a Planetoid "
                                      "folder, an OGB folder, a NumPy .npz, a "
                                      "Saga graph file (sagac convert), a "
                                      "synthetic rmat:scale=S[,edge-factor=E]"
                                      "[,features=F][,classes=C][,seed=N], or a "
                                      "Matrix Market file or edge list with "
                                      "--features, --labels and --split"),
                             cl::value_desc("path"), cl::Required,
                             cl::sub(runCommand), cl::sub(trainCommand));
cl::opt<std::string> dataFormat(
    "format",
    cl::desc("Read --data as this format instead of detecting it: "
             "planetoid, ogb, npz, sgf, mtx, edgelist"),
    cl::value_desc("name"), cl::sub(runCommand), cl::sub(trainCommand),
    cl::sub(convertCommand));
cl::opt<std::string> featuresFile(
    "features",
    cl::desc("With a graph-only --data (Matrix Market, an edge list): the "
             "vertex features, an N x F NumPy .npy"),
    cl::value_desc("x.npy"), cl::sub(runCommand), cl::sub(trainCommand),
    cl::sub(convertCommand));
cl::opt<std::string> labelsFile(
    "labels",
    cl::desc("With a graph-only --data: the N classes (-1 unlabelled), a "
             "NumPy .npy"),
    cl::value_desc("y.npy"), cl::sub(runCommand), cl::sub(trainCommand),
    cl::sub(convertCommand));
cl::opt<std::string> splitFile(
    "split",
    cl::desc("With a graph-only --data: the split, an .npz of train_mask / "
             "val_mask / test_mask or train_idx / val_idx / test_idx"),
    cl::value_desc("split.npz"), cl::sub(runCommand), cl::sub(trainCommand),
    cl::sub(convertCommand));
cl::opt<unsigned> threads("threads", cl::desc("Worker threads (default: all cores)"),
                          cl::init(std::max(1u, std::thread::hardware_concurrency())),
                          cl::sub(runCommand), cl::sub(trainCommand));
cl::opt<std::string> deviceName(
    "device",
    cl::desc("Where plans run: cuda, cpu, or auto (CUDA when a driver and a "
             "device are present, else the CPU; says which and why)"),
    cl::value_desc("auto|cpu|cuda"), cl::init("auto"), cl::sub(runCommand),
    cl::sub(trainCommand));
cl::opt<std::string> paramsFile("params", cl::desc("Parameter values (text; see docs/user-guide.md)"),
                                cl::value_desc("file"), cl::sub(runCommand),
                                cl::sub(trainCommand));
cl::opt<bool> noNormalize("no-normalize",
                          cl::desc("Do not row-normalise the features"),
                          cl::init(false), cl::sub(runCommand),
                          cl::sub(trainCommand));
cl::opt<saga::RunOptions::Reorder> reorder(
    "reorder",
    cl::desc("Relabel vertices before building the graph (default: auto)"),
    cl::init(saga::RunOptions::Reorder::Auto),
    cl::values(clEnumValN(saga::RunOptions::Reorder::Auto, "auto",
                          "degree order for graphs of 65536 vertices or more"),
               clEnumValN(saga::RunOptions::Reorder::Degree, "degree",
                          "by decreasing degree: hubs' rows side by side"),
               clEnumValN(saga::RunOptions::Reorder::None, "none",
                          "keep the dataset's ids")),
    cl::sub(runCommand), cl::sub(trainCommand));
cl::opt<bool> profile(
    "profile",
    cl::desc("Print the time of every plan step (train: of one more "
             "training step after the last epoch; with --batch-size: "
             "per mini-batch, averaged over the last epoch's batches)"),
    cl::init(false), cl::sub(runCommand), cl::sub(trainCommand));
cl::list<std::string> outputFiles(
    "output",
    cl::desc("Write the model's output (one row per vertex, in the input's "
             "vertex order) to this NumPy .npy file; NAME=file.npy writes "
             "the vertex value NAME of the model body instead (the value "
             "the name holds at the end of the model, e.g. h=emb.npy). "
             "Repeatable"),
    cl::value_desc("[NAME=]file.npy"), cl::sub(runCommand));
cl::opt<unsigned> repeat("repeat", cl::desc("Forward passes to time (median)"),
                         cl::init(1), cl::sub(runCommand));
cl::opt<uint64_t> seed("seed", cl::desc("Seed for parameters and dropout"),
                       cl::init(0), cl::sub(runCommand), cl::sub(trainCommand));

// Training.
cl::opt<unsigned> epochs("epochs", cl::desc("Training epochs (default 200)"),
                         cl::init(200), cl::sub(trainCommand));
cl::opt<double> learningRate("lr", cl::desc("Learning rate (default 0.01)"),
                             cl::init(0.01), cl::sub(trainCommand));
cl::opt<saga::TrainOptions::Optimizer> optimizer(
    "optimizer", cl::desc("Optimiser"), cl::init(saga::TrainOptions::Adam),
    cl::values(clEnumValN(saga::TrainOptions::Adam, "adam", "Adam (default)"),
               clEnumValN(saga::TrainOptions::SGD, "sgd", "SGD with momentum")),
    cl::sub(trainCommand));
cl::opt<double> momentum("momentum", cl::desc("SGD momentum (default 0.9)"),
                         cl::init(0.9), cl::sub(trainCommand));
cl::opt<unsigned> patience("patience",
                           cl::desc("Stop after N epochs without a better "
                                    "validation accuracy (0: never)"),
                           cl::init(0), cl::sub(trainCommand));
cl::opt<std::string> logFile("log", cl::desc("Write one JSON line per epoch"),
                             cl::value_desc("file"), cl::sub(trainCommand));
cl::opt<std::string> checkpoint("checkpoint",
                                cl::desc("Save training state after each "
                                         "epoch (atomically)"),
                                cl::value_desc("file"), cl::sub(trainCommand));
cl::opt<bool> resume("resume", cl::desc("Continue from --checkpoint"),
                     cl::init(false), cl::sub(trainCommand));
cl::opt<std::string> saveParams("save-params",
                                cl::desc("Write the trained parameters"),
                                cl::value_desc("file"), cl::sub(trainCommand));
cl::opt<std::string> memoryBudget(
    "memory-budget",
    cl::desc("Run out of core: the device tier's size for the plan's buffers, "
             "inputs and parameters (e.g. 512M, 4G); vertex values go in row "
             "intervals, what does not fit goes to --scratch"),
    cl::value_desc("size"), cl::sub(runCommand), cl::sub(trainCommand),
    cl::sub(cl::SubCommand::getTopLevel()), cl::cat(category));
cl::opt<std::string> scratchDir(
    "scratch",
    cl::desc("With --memory-budget: the folder for spill files (default: "
             "keep spills in host RAM)"),
    cl::value_desc("dir"), cl::sub(runCommand), cl::sub(trainCommand));
cl::opt<bool> directIO("direct-io",
                       cl::desc("With --scratch: spill with O_DIRECT (no page "
                                "cache)"),
                       cl::init(false), cl::sub(runCommand),
                       cl::sub(trainCommand));
cl::opt<bool> chunkReadAhead(
    "chunk-read-ahead",
    cl::desc("With --memory-budget and a graph file: read its chunks on their "
             "own thread ahead of the kernels (default on; "
             "--chunk-read-ahead=false reads each before its kernel)"),
    cl::init(true), cl::sub(runCommand), cl::sub(trainCommand));
cl::opt<bool> selectiveLoading(
    "selective-loading",
    cl::desc("With --memory-budget, a graph in memory and spills in host RAM: "
             "chunks load only the rows of their source interval they read "
             "(default on; --selective-loading=false loads whole pieces)"),
    cl::init(true), cl::sub(runCommand), cl::sub(trainCommand));
cl::opt<bool> interleaveRows(
    "interleave-rows",
    cl::desc("With --memory-budget: consecutive ops over rows run interval "
             "by interval, each interval's pieces used while resident "
             "(default on; --interleave-rows=false runs each op over every "
             "interval before the next)"),
    cl::init(true), cl::sub(runCommand), cl::sub(trainCommand));
cl::opt<int64_t> chunkIntervals(
    "chunk-intervals",
    cl::desc("With --memory-budget: row intervals (default: the fewest that "
             "fit)"),
    cl::init(0), cl::sub(runCommand), cl::sub(trainCommand),
    cl::sub(cl::SubCommand::getTopLevel()), cl::cat(category));
cl::opt<std::string> graphSize(
    "graph-size",
    cl::desc("With --emit=chunked: the graph's vertices and edges (with self "
             "loops when the model adds them), e.g. 2708,13264"),
    cl::value_desc("V,E"), cl::cat(category));
cl::opt<bool> trainingPlan(
    "training",
    cl::desc("With --emit=plan|chunked|llvm: the training plan (forward, "
             "gradients) instead of inference"),
    cl::init(false), cl::cat(category));
cl::opt<bool> kernelTraffic(
    "kernel-traffic",
    cl::desc("Print each plan step's compulsory bytes on the graph and the "
             "time they would take at an H100's 3.35 TB/s (an estimate), "
             "before running"),
    cl::init(false), cl::sub(runCommand), cl::sub(trainCommand));
cl::opt<bool> printSchedule(
    "print-schedule",
    cl::desc("With --memory-budget: print the chunked schedule (intervals, "
             "steps, loads, stores, frees) before running"),
    cl::init(false), cl::sub(runCommand), cl::sub(trainCommand));
cl::opt<std::string> convertOutput(cl::Positional, cl::desc("<output.sgf>"),
                                   cl::Required, cl::sub(convertCommand));
cl::opt<std::string> plotOutput(cl::Positional, cl::desc("<curves.svg>"),
                                cl::Required, cl::sub(plotCommand));
cl::opt<std::string> plotFile(
    "plot",
    cl::desc("After training, plot the loss, accuracies and epoch times "
             "(all of --log's epochs when given) to this SVG file"),
    cl::value_desc("file.svg"), cl::sub(trainCommand));
cl::opt<int64_t> intervals(
    "intervals",
    cl::desc("Vertex intervals of the 2-D chunk index (default 8)"),
    cl::init(8), cl::sub(convertCommand));
cl::opt<std::string> partition(
    "partition",
    cl::desc("Train across MPI ranks (mpirun -np N sagac train ...), the "
             "graph cut into N contiguous parts by: vertices, edges (equal "
             "in-edges), roc (ROC's cost model), metis"),
    cl::value_desc("vertices|edges|roc|metis"), cl::sub(trainCommand));
cl::opt<std::string> costModelFile(
    "cost-model",
    cl::desc("With --partition roc: ROC's fitted cost model (default: one "
             "unit per vertex and per in-edge)"),
    cl::value_desc("file"), cl::sub(trainCommand));
cl::opt<std::string> partitionFile(
    "partition-file",
    cl::desc("With --partition: reuse this saved partitioning when it "
             "exists (its part count must be the rank count), else save the "
             "cut there"),
    cl::value_desc("file"), cl::sub(trainCommand));
cl::opt<bool> haloOverlap(
    "halo-overlap",
    cl::desc("With --partition: compute the rows that need no remote rows "
             "while the halo exchange is in flight (default true; false "
             "measures what it saves)"),
    cl::init(true), cl::sub(trainCommand));
cl::opt<unsigned> refineEvery(
    "refine-every",
    cl::desc("With --partition: refine ROC's cost model from the ranks' "
             "measured steps every N epochs, saved with --save-params "
             "(default 5; 0: never)"),
    cl::init(5), cl::value_desc("N"), cl::sub(trainCommand));
cl::opt<int64_t> batchSize(
    "batch-size",
    cl::desc("Mini-batch training: seed vertices per batch, their "
             "neighbourhoods sampled by --fanout (default 0: full batch)"),
    cl::init(0), cl::value_desc("N"), cl::sub(trainCommand));
cl::list<int64_t> fanout(
    "fanout",
    cl::desc("With --batch-size: neighbours sampled per layer, input layer "
             "first (10,25; -1 takes all)"),
    cl::CommaSeparated, cl::value_desc("F1,F2,..."), cl::sub(trainCommand));
cl::opt<unsigned> samplerThreads(
    "sampler-threads",
    cl::desc("With --batch-size: threads sampling and gathering the next "
             "batches while one trains (default 1)"),
    cl::init(1), cl::value_desc("N"), cl::sub(trainCommand));
cl::opt<double> bufferFraction(
    "buffer-fraction",
    cl::desc("With --batch-size and --partition: MassiveGNN's buffer of "
             "remote features holds this share f of the partition's halo, "
             "the highest in-degrees first (default 0: no buffer)"),
    cl::init(0.0), cl::value_desc("f"), cl::sub(trainCommand));
cl::opt<int64_t> bufferPeriod(
    "buffer-period",
    cl::desc("With --buffer-fraction: mini-batches between evictions "
             "(Delta, default 32)"),
    cl::init(32), cl::value_desc("Delta"), cl::sub(trainCommand));
cl::opt<double> bufferAlpha(
    "buffer-alpha",
    cl::desc("With --buffer-fraction: score decay per mini-batch (alpha, "
             "default 0.05); slots below (1 - alpha)^Delta are evicted"),
    cl::init(0.05), cl::value_desc("alpha"), cl::sub(trainCommand));
cl::opt<bool> quiet("quiet", cl::desc("No per-epoch progress lines"),
                    cl::init(false), cl::sub(trainCommand));
cl::opt<std::string> outputFile("o", cl::desc("Write the output to <file>"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(category));
cl::opt<Emit> emit("emit", cl::desc("What to produce"), cl::init(Emit::Saga),
                   cl::values(clEnumValN(Emit::Saga, "saga",
                                         "stage-level saga dialect IR"),
                              clEnumValN(Emit::Plan, "plan",
                                         "the execution plan and its loop kernels"),
                              clEnumValN(Emit::Chunked, "chunked",
                                         "the plan with its saga.schedule for "
                                         "--memory-budget and --graph-size"),
                              clEnumValN(Emit::LLVM, "llvm",
                                         "the plan with kernels in the LLVM dialect"),
                              clEnumValN(Emit::Cuda, "cuda",
                                         "the plan's kernels as CUDA C++"),
                              clEnumValN(Emit::Ptx, "ptx",
                                         "the plan's kernels compiled by NVRTC "
                                         "for --cuda-arch (PTX)")),
                   cl::cat(category));
cl::opt<int> cudaArch(
    "cuda-arch",
    cl::desc("With --emit=ptx: the GPU architecture, e.g. 80 or sm_90 "
             "(default 90)"),
    cl::init(90), cl::cat(category));
cl::opt<bool> verifyDiagnostics(
    "verify-diagnostics",
    cl::desc("Check diagnostics against expected-* comments in the input "
             "(for tests)"),
    cl::init(false), cl::cat(category));
cl::opt<bool> splitInputFile(
    "split-input-file",
    cl::desc("Compile each '// -----' separated chunk on its own (for tests)"),
    cl::init(false), cl::cat(category));

saga::SagaScheduleMemoryOptions scheduleOptions; // set by main

LogicalResult compileChunk(std::unique_ptr<llvm::MemoryBuffer> buffer,
                           llvm::raw_ostream &os) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  DialectRegistry registry;
  saga::registerSagaDialects(registry);
  MLIRContext ctx(registry);
  ctx.printOpOnDiagnostic(false);
  if (verifyDiagnostics) {
    SourceMgrDiagnosticVerifierHandler handler(sourceMgr, &ctx);
    OwningOpRef<ModuleOp> module = saga::compileSaga(sourceMgr, ctx);
    if (module)
      module->print(os);
    return handler.verify();
  }
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx);
  OwningOpRef<ModuleOp> module = saga::compileSaga(sourceMgr, ctx);
  if (!module)
    return failure();
  if (emit != Emit::Saga) {
    PassManager pm(&ctx);
    saga::buildLowerToPlanPipeline(
        pm, {optLevel, trainingPlan,
             std::vector<std::string>(disabledPasses.begin(),
                                      disabledPasses.end())});
    // The chunked plan (for --emit=cuda|ptx too: its kernels, which the
    // schedule's transfers do not change).
    if (scheduleOptions.budget > 0)
      pm.addPass(saga::createSagaScheduleMemory(scheduleOptions));
    if (emit == Emit::LLVM)
      saga::buildKernelToLLVMPipeline(pm);
    if (failed(pm.run(*module)))
      return failure();
  }
  if (emit == Emit::Cuda || emit == Emit::Ptx) {
    auto source = saga::cuda::emitCuda(*module);
    if (!source) {
      llvm::errs() << "sagac: error: " << llvm::toString(source.takeError())
                   << "\n";
      return failure();
    }
    if (emit == Emit::Cuda) {
      os << source->code;
      return success();
    }
    auto nvrtc = saga::cuda::Nvrtc::load();
    if (!nvrtc) {
      llvm::errs() << "sagac: error: " << llvm::toString(nvrtc.takeError())
                   << "\n";
      return failure();
    }
    auto compiled = (*nvrtc)->compile(source->code, cudaArch, false);
    if (!compiled) {
      llvm::errs() << "sagac: error: " << llvm::toString(compiled.takeError())
                   << "\n";
      return failure();
    }
    os << compiled->ptx;
    return success();
  }
  module->print(os);
  os << "\n";
  return success();
}
} // namespace

/// Debian's OpenBLAS 0.3.21 does not recognise AVX-512 Xeons and falls back
/// to its oldest kernels, 2.5-4x slower than its SkylakeX ones on Saga's
/// GEMMs (bench/gemm.sh). The core type is read when the library loads, so
/// on such a CPU sagac sets it and runs itself again, once; an explicit
/// OPENBLAS_CORETYPE is left alone.
static void selectBlasKernels(char **argv) {
  if (std::getenv("OPENBLAS_CORETYPE") || std::getenv("SAGA_NO_REEXEC") ||
      !__builtin_cpu_supports("avx512f"))
    return;
  setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
  setenv("SAGA_NO_REEXEC", "1", 1);
  execv("/proc/self/exe", argv); // returns only on failure: run as we are
}

int main(int argc, char **argv) {
  selectBlasKernels(argv);
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "sagac: compile SAGA-NN models (.saga) to the saga MLIR dialect\n");
  if (optLevel != 0 && optLevel != 2) {
    llvm::errs() << "sagac: error: -O" << optLevel
                 << " is not a level; use -O0 or -O2\n";
    return 1;
  }
  if (std::string message; failed(saga::checkPassNames(
          std::vector<std::string>(disabledPasses.begin(),
                                   disabledPasses.end()),
          message))) {
    llvm::errs() << "sagac: error: " << message << "\n";
    return 1;
  }
  int64_t budget = 0;
  if (!memoryBudget.empty()) {
    budget = saga::parseSize(memoryBudget);
    if (budget <= 0) {
      llvm::errs() << "sagac: error: --memory-budget: '" << memoryBudget
                   << "' is not a size (e.g. 512M, 4G, 1.5GiB)\n";
      return 1;
    }
  }
  if ((!scratchDir.empty() || directIO || chunkIntervals != 0 ||
       printSchedule || chunkReadAhead.getNumOccurrences() ||
       selectiveLoading.getNumOccurrences() ||
       interleaveRows.getNumOccurrences()) &&
      budget == 0) {
    llvm::errs() << "sagac: error: --scratch, --direct-io, --chunk-intervals, "
                    "--chunk-read-ahead, --selective-loading, "
                    "--interleave-rows and --print-schedule need "
                    "--memory-budget\n";
    return 1;
  }
  if (chunkIntervals < 0) {
    llvm::errs() << "sagac: error: --chunk-intervals must be positive\n";
    return 1;
  }
  auto runOptions = [&] {
    saga::RunOptions options;
    options.memoryBudget = budget;
    options.scratch = scratchDir;
    options.directIO = directIO;
    options.chunkReadAhead = chunkReadAhead;
    options.selectiveLoading = selectiveLoading;
    options.interleaveRows = interleaveRows;
    options.intervals = chunkIntervals;
    options.printSchedule = printSchedule;
    options.kernelTraffic = kernelTraffic;
    options.model = inputFile;
    options.data = dataDir;
    options.arrays = {featuresFile, labelsFile, splitFile};
    options.format = dataFormat;
    options.params = paramsFile;
    options.threads = std::max(1u, unsigned(threads));
    options.optLevel = optLevel;
    options.disabledPasses.assign(disabledPasses.begin(), disabledPasses.end());
    options.rowNormalize = !noNormalize;
    options.seed = seed;
    options.reorder = reorder;
    options.device = deviceName;
    return options;
  };
  if (trainCommand) {
    saga::TrainCommandOptions options;
    options.run = runOptions();
    options.run.profile = profile;
    options.train.epochs = epochs;
    options.train.learningRate = learningRate;
    options.train.optimizer = optimizer;
    options.train.momentum = momentum;
    options.train.seed = seed;
    options.train.patience = patience;
    options.train.logPath = logFile;
    options.train.checkpointPath = checkpoint;
    options.train.resume = resume;
    options.saveParams = saveParams;
    options.plot = plotFile;
    options.quiet = quiet;
    options.run.partition = partition;
    options.run.costModel = costModelFile;
    options.run.partitionFile = partitionFile;
    options.run.haloOverlap = haloOverlap;
    options.run.refineEvery = refineEvery;
    options.batches.batchSize = batchSize;
    options.batches.fanouts.assign(fanout.begin(), fanout.end());
    options.batches.samplerThreads = samplerThreads;
    if (batchSize == 0 && (fanout.getNumOccurrences() ||
                           samplerThreads.getNumOccurrences())) {
      llvm::errs() << "sagac: error: --fanout and --sampler-threads need "
                      "--batch-size\n";
      return 1;
    }
    if (batchSize < 0) {
      llvm::errs() << "sagac: error: --batch-size must be positive, not "
                   << batchSize << "\n";
      return 1;
    }
    options.buffer.fraction = bufferFraction;
    options.buffer.period = bufferPeriod;
    options.buffer.alpha = bufferAlpha;
    if ((bufferFraction.getNumOccurrences() ||
         bufferPeriod.getNumOccurrences() ||
         bufferAlpha.getNumOccurrences()) &&
        (batchSize == 0 || partition.empty())) {
      llvm::errs() << "sagac: error: --buffer-fraction, --buffer-period and "
                      "--buffer-alpha need --batch-size and --partition (a "
                      "buffer of other trainers' features)\n";
      return 1;
    }
    if (bufferFraction < 0 || bufferFraction > 1 || bufferPeriod < 1 ||
        !(bufferAlpha > 0 && bufferAlpha < 1)) {
      llvm::errs() << "sagac: error: the buffer needs 0 <= --buffer-fraction "
                      "<= 1, --buffer-period >= 1 and 0 < --buffer-alpha < 1\n";
      return 1;
    }
    if (!partition.empty())
      return saga::runDistributedTrain(options);
    if (!costModelFile.empty() || !partitionFile.empty() ||
        haloOverlap.getNumOccurrences() || refineEvery.getNumOccurrences()) {
      llvm::errs() << "sagac: error: --cost-model, --partition-file, "
                      "--halo-overlap and --refine-every need --partition\n";
      return 1;
    }
    return saga::runTrain(options);
  }
  if (convertCommand)
    return saga::runConvert(inputFile, convertOutput, intervals,
                            {featuresFile, labelsFile, splitFile}, dataFormat);
  if (plotCommand)
    return saga::runPlot(inputFile, plotOutput);
  if (runCommand) {
    saga::RunOptions options = runOptions();
    options.profile = profile;
    options.repeat = std::max(1u, unsigned(repeat));
    for (const std::string &o : outputFiles) {
      // NAME=FILE when what precedes the first '=' is an identifier.
      size_t eq = o.find('=');
      llvm::StringRef name = eq == std::string::npos
                                 ? llvm::StringRef()
                                 : llvm::StringRef(o).take_front(eq);
      bool identifier =
          !name.empty() && (std::isalpha((unsigned char)name[0]) || name[0] == '_') &&
          llvm::all_of(name, [](char c) {
            return std::isalnum((unsigned char)c) || c == '_';
          });
      if (identifier && eq + 1 == o.size()) {
        llvm::errs() << "sagac: --output " << o << ": no file after '='\n";
        return 1;
      }
      options.outputs.emplace_back(identifier ? name.str() : "out",
                                   identifier ? o.substr(eq + 1) : o);
    }
    return saga::runForward(options);
  }

  if (emit == Emit::Chunked ||
      ((emit == Emit::Cuda || emit == Emit::Ptx) &&
       (!graphSize.empty() || budget != 0))) {
    long long v = 0, e = -1;
    char tail = 0;
    if (budget == 0 || graphSize.empty() ||
        std::sscanf(graphSize.c_str(), "%lld,%lld%c", &v, &e, &tail) != 2 ||
        v <= 0 || e < 0) {
      llvm::errs() << "sagac: error: --emit=chunked (and a chunked "
                      "--emit=cuda|ptx) needs --memory-budget SIZE "
                      "and --graph-size V,E (vertices, edges)\n";
      return 1;
    }
    scheduleOptions.budget = budget;
    scheduleOptions.vertices = v;
    scheduleOptions.edges = e;
    scheduleOptions.intervals = chunkIntervals;
  } else if (!graphSize.empty() || budget != 0) {
    llvm::errs() << "sagac: error: compiling, --memory-budget and --graph-size "
                    "are for --emit=chunked|cuda|ptx (run and train take a "
                    "budget)\n";
    return 1;
  }
  std::string message;
  auto input = openInputFile(inputFile, &message);
  if (!input) {
    llvm::errs() << "sagac: error: " << message << "\n";
    return 1;
  }
  if (inputFile == "-")
    input = llvm::MemoryBuffer::getMemBufferCopy(input->getBuffer(), "<stdin>");
  auto output = openOutputFile(outputFile, &message);
  if (!output) {
    llvm::errs() << "sagac: error: " << message << "\n";
    return 1;
  }
  LogicalResult result =
      splitInputFile ? splitAndProcessBuffer(std::move(input), compileChunk,
                                             output->os())
                     : compileChunk(std::move(input), output->os());
  if (failed(result))
    return 1;
  output->keep();
  return 0;
}
