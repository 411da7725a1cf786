//===- sagac.cpp - the Saga compiler driver -------------------------------===//
//
//   sagac model.saga [--emit=saga|plan|llvm] [-O0|-O2] [-o FILE]
//   sagac - < model.saga
//   sagac run model.saga --data DIR [--threads N] [--params FILE]
//   sagac train model.saga --data DIR [--epochs N] [--lr X] [--checkpoint F]
//   sagac convert DATASET OUT.sgf|OUT.npz [--intervals P]
//   sagac split-edges DATASET OUT.npz [--val F] [--test F] [--seed S]
//
// Diagnostics are printed clang-style: file:line:col, the source line and a
// caret. The exit status is 1 if any error was reported.
//
// main parses the options (Options.h), checks those every command shares
// (the pipeline, out of core) and hands over to one function per command:
// compiling here, `run`, `train`, `convert` and `plot` in Commands.h and
// Plot.h, `train --partition` in DistributedTrain.cpp.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Options.h"
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

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include <unistd.h>

using namespace mlir;
using namespace saga::sagac;

namespace {
/// Prints "sagac: error: MESSAGE"; returns the exit status, 1.
int error(const llvm::Twine &message) {
  llvm::errs() << "sagac: error: " << message << "\n";
  return 1;
}

/// --emit=cuda|ptx: the plan's kernels as CUDA C++, or compiled to PTX.
LogicalResult printKernels(ModuleOp module, const CompileFlags &c,
                           llvm::raw_ostream &os) {
  auto source = saga::cuda::emitCuda(module);
  if (!source) {
    error(llvm::toString(source.takeError()));
    return failure();
  }
  if (c.emit == Emit::Cuda) {
    os << source->code;
    return success();
  }
  auto nvrtc = saga::cuda::Nvrtc::load();
  if (!nvrtc) {
    error(llvm::toString(nvrtc.takeError()));
    return failure();
  }
  auto compiled = (*nvrtc)->compile(source->code, c.cudaArch, false);
  if (!compiled) {
    error(llvm::toString(compiled.takeError()));
    return failure();
  }
  os << compiled->ptx;
  return success();
}

/// Compiles one input (a file, or a chunk of one with --split-input-file)
/// and prints what --emit asks for; with a budget, the plan is chunked by
/// `schedule`.
LogicalResult compileChunk(const saga::SagaScheduleMemoryOptions &schedule,
                           std::unique_ptr<llvm::MemoryBuffer> buffer,
                           llvm::raw_ostream &os) {
  const Flags &f = flags();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  DialectRegistry registry;
  saga::registerSagaDialects(registry);
  MLIRContext ctx(registry);
  ctx.printOpOnDiagnostic(false);
  if (f.compile.verifyDiagnostics) {
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
  const Emit emit = f.compile.emit;
  if (emit != Emit::Saga) {
    PassManager pm(&ctx);
    saga::buildLowerToPlanPipeline(
        pm, {f.model.optLevel, f.compile.training, f.model.passesLeftOut()});
    // The chunked plan (for --emit=cuda|ptx too: its kernels, which the
    // schedule's transfers do not change).
    if (schedule.budget > 0)
      pm.addPass(saga::createSagaScheduleMemory(schedule));
    if (emit == Emit::LLVM)
      saga::buildKernelToLLVMPipeline(pm);
    if (failed(pm.run(*module)))
      return failure();
  }
  if (emit == Emit::Cuda || emit == Emit::Ptx)
    return printKernels(*module, f.compile, os);
  module->print(os);
  os << "\n";
  return success();
}

/// The chunked schedule's options from --memory-budget and --graph-size
/// (a budget of 0: none); false after saying why they do not fit --emit.
bool chunkedSchedule(int64_t budget,
                     saga::SagaScheduleMemoryOptions &schedule) {
  const Flags &f = flags();
  const Emit emit = f.compile.emit;
  const std::string &graphSize = f.compile.graphSize;
  if (emit == Emit::Chunked || ((emit == Emit::Cuda || emit == Emit::Ptx) &&
                                (!graphSize.empty() || budget != 0))) {
    long long v = 0, e = -1;
    char tail = 0;
    if (budget == 0 || graphSize.empty() ||
        std::sscanf(graphSize.c_str(), "%lld,%lld%c", &v, &e, &tail) != 2 ||
        v <= 0 || e < 0) {
      error("--emit=chunked (and a chunked --emit=cuda|ptx) needs "
            "--memory-budget SIZE and --graph-size V,E (vertices, edges)");
      return false;
    }
    schedule.budget = budget;
    schedule.vertices = v;
    schedule.edges = e;
    schedule.intervals = f.outOfCore.chunkIntervals;
    if (f.compile.devices < 1 || f.compile.devices > 64) {
      error("--devices: " + std::to_string(f.compile.devices) +
            " is not a device count from 1 to 64");
      return false;
    }
    if (f.compile.devices > 1 && emit != Emit::Chunked) {
      error("--devices plans NGra's ring for --emit=chunked only");
      return false;
    }
    schedule.devices = f.compile.devices;
  } else if (f.compile.devices != 1) {
    error("--devices plans NGra's ring for --emit=chunked (with "
          "--memory-budget and --graph-size)");
    return false;
  } else if (!graphSize.empty() || budget != 0) {
    error("compiling, --memory-budget and --graph-size are for "
          "--emit=chunked|cuda|ptx (run and train take a budget)");
    return false;
  }
  return true;
}

/// Plain `sagac`: compiles the model (or each chunk of it) to -o.
int compileCommand(int64_t budget) {
  const Flags &f = flags();
  saga::SagaScheduleMemoryOptions schedule;
  if (!chunkedSchedule(budget, schedule))
    return 1;
  std::string message;
  auto input = openInputFile(f.model.input, &message);
  if (!input)
    return error(message);
  if (f.model.input == "-")
    input = llvm::MemoryBuffer::getMemBufferCopy(input->getBuffer(), "<stdin>");
  auto output = openOutputFile(f.compile.outputFile, &message);
  if (!output)
    return error(message);
  auto compile = [&](std::unique_ptr<llvm::MemoryBuffer> buffer,
                     llvm::raw_ostream &os) {
    return compileChunk(schedule, std::move(buffer), os);
  };
  LogicalResult result =
      f.compile.splitInputFile
          ? splitAndProcessBuffer(std::move(input), compile, output->os())
          : compile(std::move(input), output->os());
  if (failed(result))
    return 1;
  output->keep();
  return 0;
}

/// What `run` and `train` share: the model, the data, how they execute
/// and out of core (`budget` bytes, 0: in memory).
saga::RunOptions runOptions(int64_t budget) {
  const Flags &f = flags();
  const OutOfCoreFlags &ooc = f.outOfCore;
  saga::RunOptions options;
  options.memoryBudget = budget;
  options.scratch = ooc.scratchDir;
  options.directIO = ooc.directIO;
  options.chunkReadAhead = ooc.chunkReadAhead;
  options.selectiveLoading = ooc.selectiveLoading;
  options.interleaveRows = ooc.interleaveRows;
  options.peerHandoffs = ooc.peerHandoffs;
  options.intervals = ooc.chunkIntervals;
  options.printSchedule = ooc.printSchedule;
  options.kernelTraffic = f.execution.kernelTraffic;
  options.model = f.model.input;
  options.data = f.data.data;
  options.arrays = f.data.arrays();
  options.format = f.data.format;
  options.params = f.execution.params;
  options.threads = std::max(1u, unsigned(f.execution.threads));
  options.optLevel = f.model.optLevel;
  options.disabledPasses = f.model.passesLeftOut();
  options.rowNormalize = !f.data.noNormalize;
  options.seed = f.execution.seed;
  options.reorder = f.data.reorder;
  options.device = f.execution.device;
  return options;
}

/// `sagac run`: --output's [NAME=]FILE pairs, then a forward pass.
int runCommand(int64_t budget) {
  const Flags &f = flags();
  saga::RunOptions options = runOptions(budget);
  options.profile = f.execution.profile;
  options.repeat = std::max(1u, unsigned(f.forward.repeat));
  for (const std::string &o : f.forward.outputFiles) {
    // NAME=FILE when what precedes the first '=' is an identifier.
    size_t eq = o.find('=');
    llvm::StringRef name = eq == std::string::npos
                               ? llvm::StringRef()
                               : llvm::StringRef(o).take_front(eq);
    bool identifier =
        !name.empty() &&
        (std::isalpha((unsigned char)name[0]) || name[0] == '_') &&
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

/// `sagac train`'s options, from every group but compiling's.
saga::TrainCommandOptions trainOptions(int64_t budget) {
  const Flags &f = flags();
  const TrainingFlags &t = f.training;
  const DistributedFlags &d = f.distributed;
  saga::TrainCommandOptions options;
  options.run = runOptions(budget);
  options.run.profile = f.execution.profile;
  options.train.epochs = t.epochs;
  options.train.learningRate = t.learningRate;
  options.train.optimizer = t.optimizer;
  options.train.momentum = t.momentum;
  options.train.seed = f.execution.seed;
  options.train.patience = t.patience;
  options.train.logPath = t.logFile;
  options.train.checkpointPath = t.checkpoint;
  options.train.resume = t.resume;
  options.saveParams = t.saveParams;
  options.plot = t.plotFile;
  options.quiet = t.quiet;
  options.folds = t.folds;
  options.lrStep = t.lrStep;
  options.lrGamma = t.lrGamma;
  options.run.linkSplit = t.linkSplit;
  options.negatives = t.negatives;
  options.maxBatches = t.maxBatches;
  options.run.partition = d.partition;
  options.run.costModel = d.costModelFile;
  options.run.partitionFile = d.partitionFile;
  options.run.haloOverlap = d.haloOverlap;
  options.run.refineEvery = d.refineEvery;
  options.batches.batchSize = f.miniBatch.batchSize;
  options.batches.fanouts.assign(f.miniBatch.fanout.begin(),
                                 f.miniBatch.fanout.end());
  options.batches.samplerThreads = f.miniBatch.samplerThreads;
  options.buffer.fraction = d.bufferFraction;
  options.buffer.period = d.bufferPeriod;
  options.buffer.alpha = d.bufferAlpha;
  return options;
}

/// The mini-batch options and MassiveGNN's buffer agree with the rest of
/// `train`'s; the exit status 1 after saying why not, else 0.
int checkBatchFlags() {
  const Flags &f = flags();
  const MiniBatchFlags &b = f.miniBatch;
  const DistributedFlags &d = f.distributed;
  if (b.batchSize == 0 &&
      (b.fanout.getNumOccurrences() || b.samplerThreads.getNumOccurrences()))
    return error("--fanout and --sampler-threads need --batch-size");
  if (b.batchSize < 0)
    return error("--batch-size must be positive, not " +
                 llvm::Twine(int64_t(b.batchSize)));
  if ((d.bufferFraction.getNumOccurrences() ||
       d.bufferPeriod.getNumOccurrences() ||
       d.bufferAlpha.getNumOccurrences()) &&
      (b.batchSize == 0 || d.partition.empty()))
    return error("--buffer-fraction, --buffer-period and --buffer-alpha need "
                 "--batch-size and --partition (a buffer of other trainers' "
                 "features)");
  if (d.bufferFraction < 0 || d.bufferFraction > 1 || d.bufferPeriod < 1 ||
      !(d.bufferAlpha > 0 && d.bufferAlpha < 1))
    return error("the buffer needs 0 <= --buffer-fraction <= 1, "
                 "--buffer-period >= 1 and 0 < --buffer-alpha < 1");
  return 0;
}

/// `sagac train`: in one process, or across MPI ranks with --partition.
int trainCommand(int64_t budget) {
  saga::TrainCommandOptions options = trainOptions(budget);
  if (saga::isGraphDataset(options.run))
    return saga::runTrainGraphs(options);
  const TrainingFlags &t = flags().training;
  if (t.folds.getNumOccurrences() || t.lrStep.getNumOccurrences() ||
      t.lrGamma.getNumOccurrences())
    return error("--folds, --lr-step and --lr-gamma train on a dataset of "
                 "many graphs (a TU folder, or --format graphs)");
  if (checkBatchFlags())
    return 1;
  if ((t.negatives.getNumOccurrences() || t.maxBatches.getNumOccurrences()) &&
      t.linkSplit.empty())
    return error("--negatives and --max-batches need --link-split (link "
                 "prediction)");
  const DistributedFlags &d = flags().distributed;
  if (!t.linkSplit.empty() && !d.partition.empty())
    return error("--link-split trains in one process: no --partition yet");
  if (!d.partition.empty())
    return saga::runDistributedTrain(options);
  if (!d.costModelFile.empty() || !d.partitionFile.empty() ||
      d.haloOverlap.getNumOccurrences() || d.refineEvery.getNumOccurrences())
    return error("--cost-model, --partition-file, --halo-overlap and "
                 "--refine-every need --partition");
  return saga::runTrain(options);
}

/// -O and --disable-pass name a pipeline; false after saying why not.
bool checkPipeline(const ModelFlags &m) {
  if (m.optLevel != 0 && m.optLevel != 2) {
    error("-O" + llvm::Twine(unsigned(m.optLevel)) +
          " is not a level; use -O0 or -O2");
    return false;
  }
  if (std::string message;
      failed(saga::checkPassNames(m.passesLeftOut(), message))) {
    error(message);
    return false;
  }
  return true;
}

/// --memory-budget in bytes (0: none) once the out-of-core options agree;
/// none after saying why they do not.
std::optional<int64_t> memoryBudget(const OutOfCoreFlags &o) {
  int64_t budget = 0;
  if (!o.memoryBudget.empty()) {
    budget = saga::parseSize(o.memoryBudget);
    if (budget <= 0) {
      error("--memory-budget: '" + o.memoryBudget +
            "' is not a size (e.g. 512M, 4G, 1.5GiB)");
      return std::nullopt;
    }
  }
  if ((!o.scratchDir.empty() || o.directIO || o.chunkIntervals != 0 ||
       o.printSchedule || o.chunkReadAhead.getNumOccurrences() ||
       o.selectiveLoading.getNumOccurrences() ||
       o.interleaveRows.getNumOccurrences() ||
       o.peerHandoffs.getNumOccurrences()) &&
      budget == 0) {
    error("--scratch, --direct-io, --chunk-intervals, --chunk-read-ahead, "
          "--selective-loading, --interleave-rows, --peer-handoffs and "
          "--print-schedule need --memory-budget");
    return std::nullopt;
  }
  if (o.chunkIntervals < 0) {
    error("--chunk-intervals must be positive");
    return std::nullopt;
  }
  return budget;
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
  Flags &f = flags();
  cl::HideUnrelatedOptions(f.commands.category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "sagac: compile SAGA-NN models (.saga) to the saga MLIR dialect\n");
  if (!checkPipeline(f.model))
    return 1;
  std::optional<int64_t> budget = memoryBudget(f.outOfCore);
  if (!budget)
    return 1;
  const Commands &c = f.commands;
  if (c.train)
    return trainCommand(*budget);
  if (c.convert)
    return saga::runConvert(f.model.input, f.convert.output,
                            f.convert.intervals, f.data.arrays(),
                            f.data.format);
  if (c.splitEdges) {
    saga::EdgeSplitOptions o;
    o.valFraction = f.splitEdges.val;
    o.testFraction = f.splitEdges.test;
    o.negativesPerPositive = f.splitEdges.negatives;
    o.seed = f.splitEdges.seed;
    o.undirected = !f.splitEdges.directed;
    return saga::runSplitEdges(f.model.input, f.splitEdges.output, o,
                               f.data.arrays(), f.data.format);
  }
  if (c.plot)
    return saga::runPlot(f.model.input, f.plot.output);
  if (c.run)
    return runCommand(*budget);
  return compileCommand(*budget);
}
