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

#include <cstdio>
#include <cstdlib>

#include <unistd.h>

using namespace mlir;
using namespace saga::sagac;

namespace {
saga::SagaScheduleMemoryOptions scheduleOptions; // set by main

LogicalResult compileChunk(std::unique_ptr<llvm::MemoryBuffer> buffer,
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
  if (f.compile.emit != Emit::Saga) {
    PassManager pm(&ctx);
    saga::buildLowerToPlanPipeline(
        pm, {f.model.optLevel, f.compile.training,
             std::vector<std::string>(f.model.disabledPasses.begin(),
                                      f.model.disabledPasses.end())});
    // The chunked plan (for --emit=cuda|ptx too: its kernels, which the
    // schedule's transfers do not change).
    if (scheduleOptions.budget > 0)
      pm.addPass(saga::createSagaScheduleMemory(scheduleOptions));
    if (f.compile.emit == Emit::LLVM)
      saga::buildKernelToLLVMPipeline(pm);
    if (failed(pm.run(*module)))
      return failure();
  }
  if (f.compile.emit == Emit::Cuda || f.compile.emit == Emit::Ptx) {
    auto source = saga::cuda::emitCuda(*module);
    if (!source) {
      llvm::errs() << "sagac: error: " << llvm::toString(source.takeError())
                   << "\n";
      return failure();
    }
    if (f.compile.emit == Emit::Cuda) {
      os << source->code;
      return success();
    }
    auto nvrtc = saga::cuda::Nvrtc::load();
    if (!nvrtc) {
      llvm::errs() << "sagac: error: " << llvm::toString(nvrtc.takeError())
                   << "\n";
      return failure();
    }
    auto compiled = (*nvrtc)->compile(source->code, f.compile.cudaArch, false);
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
  Flags &f = flags();
  cl::HideUnrelatedOptions(f.commands.category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "sagac: compile SAGA-NN models (.saga) to the saga MLIR dialect\n");
  if (f.model.optLevel != 0 && f.model.optLevel != 2) {
    llvm::errs() << "sagac: error: -O" << f.model.optLevel
                 << " is not a level; use -O0 or -O2\n";
    return 1;
  }
  if (std::string message; failed(saga::checkPassNames(
          std::vector<std::string>(f.model.disabledPasses.begin(),
                                   f.model.disabledPasses.end()),
          message))) {
    llvm::errs() << "sagac: error: " << message << "\n";
    return 1;
  }
  int64_t budget = 0;
  if (!f.outOfCore.memoryBudget.empty()) {
    budget = saga::parseSize(f.outOfCore.memoryBudget);
    if (budget <= 0) {
      llvm::errs() << "sagac: error: --memory-budget: '" << f.outOfCore.memoryBudget
                   << "' is not a size (e.g. 512M, 4G, 1.5GiB)\n";
      return 1;
    }
  }
  if ((!f.outOfCore.scratchDir.empty() || f.outOfCore.directIO || f.outOfCore.chunkIntervals != 0 ||
       f.outOfCore.printSchedule || f.outOfCore.chunkReadAhead.getNumOccurrences() ||
       f.outOfCore.selectiveLoading.getNumOccurrences() ||
       f.outOfCore.interleaveRows.getNumOccurrences()) &&
      budget == 0) {
    llvm::errs() << "sagac: error: --scratch, --direct-io, --chunk-intervals, "
                    "--chunk-read-ahead, --selective-loading, "
                    "--interleave-rows and --print-schedule need "
                    "--memory-budget\n";
    return 1;
  }
  if (f.outOfCore.chunkIntervals < 0) {
    llvm::errs() << "sagac: error: --chunk-intervals must be positive\n";
    return 1;
  }
  auto runOptions = [&] {
    saga::RunOptions options;
    options.memoryBudget = budget;
    options.scratch = f.outOfCore.scratchDir;
    options.directIO = f.outOfCore.directIO;
    options.chunkReadAhead = f.outOfCore.chunkReadAhead;
    options.selectiveLoading = f.outOfCore.selectiveLoading;
    options.interleaveRows = f.outOfCore.interleaveRows;
    options.intervals = f.outOfCore.chunkIntervals;
    options.printSchedule = f.outOfCore.printSchedule;
    options.kernelTraffic = f.execution.kernelTraffic;
    options.model = f.model.input;
    options.data = f.data.data;
    options.arrays = {f.data.features, f.data.labels, f.data.split};
    options.format = f.data.format;
    options.params = f.execution.params;
    options.threads = std::max(1u, unsigned(f.execution.threads));
    options.optLevel = f.model.optLevel;
    options.disabledPasses.assign(f.model.disabledPasses.begin(), f.model.disabledPasses.end());
    options.rowNormalize = !f.data.noNormalize;
    options.seed = f.execution.seed;
    options.reorder = f.data.reorder;
    options.device = f.execution.device;
    return options;
  };
  if (f.commands.train) {
    saga::TrainCommandOptions options;
    options.run = runOptions();
    options.run.profile = f.execution.profile;
    options.train.epochs = f.training.epochs;
    options.train.learningRate = f.training.learningRate;
    options.train.optimizer = f.training.optimizer;
    options.train.momentum = f.training.momentum;
    options.train.seed = f.execution.seed;
    options.train.patience = f.training.patience;
    options.train.logPath = f.training.logFile;
    options.train.checkpointPath = f.training.checkpoint;
    options.train.resume = f.training.resume;
    options.saveParams = f.training.saveParams;
    options.plot = f.training.plotFile;
    options.quiet = f.training.quiet;
    options.run.partition = f.distributed.partition;
    options.run.costModel = f.distributed.costModelFile;
    options.run.partitionFile = f.distributed.partitionFile;
    options.run.haloOverlap = f.distributed.haloOverlap;
    options.run.refineEvery = f.distributed.refineEvery;
    options.batches.batchSize = f.miniBatch.batchSize;
    options.batches.fanouts.assign(f.miniBatch.fanout.begin(), f.miniBatch.fanout.end());
    options.batches.samplerThreads = f.miniBatch.samplerThreads;
    if (f.miniBatch.batchSize == 0 && (f.miniBatch.fanout.getNumOccurrences() ||
                           f.miniBatch.samplerThreads.getNumOccurrences())) {
      llvm::errs() << "sagac: error: --fanout and --sampler-threads need "
                      "--batch-size\n";
      return 1;
    }
    if (f.miniBatch.batchSize < 0) {
      llvm::errs() << "sagac: error: --batch-size must be positive, not "
                   << f.miniBatch.batchSize << "\n";
      return 1;
    }
    options.buffer.fraction = f.distributed.bufferFraction;
    options.buffer.period = f.distributed.bufferPeriod;
    options.buffer.alpha = f.distributed.bufferAlpha;
    if ((f.distributed.bufferFraction.getNumOccurrences() ||
         f.distributed.bufferPeriod.getNumOccurrences() ||
         f.distributed.bufferAlpha.getNumOccurrences()) &&
        (f.miniBatch.batchSize == 0 || f.distributed.partition.empty())) {
      llvm::errs() << "sagac: error: --buffer-fraction, --buffer-period and "
                      "--buffer-alpha need --batch-size and --partition (a "
                      "buffer of other trainers' features)\n";
      return 1;
    }
    if (f.distributed.bufferFraction < 0 || f.distributed.bufferFraction > 1 || f.distributed.bufferPeriod < 1 ||
        !(f.distributed.bufferAlpha > 0 && f.distributed.bufferAlpha < 1)) {
      llvm::errs() << "sagac: error: the buffer needs 0 <= --buffer-fraction "
                      "<= 1, --buffer-period >= 1 and 0 < --buffer-alpha < 1\n";
      return 1;
    }
    if (!f.distributed.partition.empty())
      return saga::runDistributedTrain(options);
    if (!f.distributed.costModelFile.empty() || !f.distributed.partitionFile.empty() ||
        f.distributed.haloOverlap.getNumOccurrences() || f.distributed.refineEvery.getNumOccurrences()) {
      llvm::errs() << "sagac: error: --cost-model, --partition-file, "
                      "--halo-overlap and --refine-every need --partition\n";
      return 1;
    }
    return saga::runTrain(options);
  }
  if (f.commands.convert)
    return saga::runConvert(f.model.input, f.convert.output, f.convert.intervals,
                            {f.data.features, f.data.labels, f.data.split}, f.data.format);
  if (f.commands.plot)
    return saga::runPlot(f.model.input, f.plot.output);
  if (f.commands.run) {
    saga::RunOptions options = runOptions();
    options.profile = f.execution.profile;
    options.repeat = std::max(1u, unsigned(f.forward.repeat));
    for (const std::string &o : f.forward.outputFiles) {
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

  if (f.compile.emit == Emit::Chunked ||
      ((f.compile.emit == Emit::Cuda || f.compile.emit == Emit::Ptx) &&
       (!f.compile.graphSize.empty() || budget != 0))) {
    long long v = 0, e = -1;
    char tail = 0;
    if (budget == 0 || f.compile.graphSize.empty() ||
        std::sscanf(f.compile.graphSize.c_str(), "%lld,%lld%c", &v, &e, &tail) != 2 ||
        v <= 0 || e < 0) {
      llvm::errs() << "sagac: error: --emit=chunked (and a chunked "
                      "--emit=cuda|ptx) needs --memory-budget SIZE "
                      "and --graph-size V,E (vertices, edges)\n";
      return 1;
    }
    scheduleOptions.budget = budget;
    scheduleOptions.vertices = v;
    scheduleOptions.edges = e;
    scheduleOptions.intervals = f.outOfCore.chunkIntervals;
  } else if (!f.compile.graphSize.empty() || budget != 0) {
    llvm::errs() << "sagac: error: compiling, --memory-budget and --graph-size "
                    "are for --emit=chunked|cuda|ptx (run and train take a "
                    "budget)\n";
    return 1;
  }
  std::string message;
  auto input = openInputFile(f.model.input, &message);
  if (!input) {
    llvm::errs() << "sagac: error: " << message << "\n";
    return 1;
  }
  if (f.model.input == "-")
    input = llvm::MemoryBuffer::getMemBufferCopy(input->getBuffer(), "<stdin>");
  auto output = openOutputFile(f.compile.outputFile, &message);
  if (!output) {
    llvm::errs() << "sagac: error: " << message << "\n";
    return 1;
  }
  LogicalResult result =
      f.compile.splitInputFile ? splitAndProcessBuffer(std::move(input), compileChunk,
                                             output->os())
                     : compileChunk(std::move(input), output->os());
  if (failed(result))
    return 1;
  output->keep();
  return 0;
}
