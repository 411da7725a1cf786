//===- GraphTrain.cpp - sagac train on a dataset of many graphs -----------===//
//
// Graph classification from the command line: the TU folder (or .npz) is
// loaded, the model compiled once per fold, and each fold trained on
// batches of whole graphs (api/GraphTrainer.h); one line per epoch and
// fold, then the cross-validated accuracy as the GIN paper reports it (the
// epoch of the best mean over the folds) beside the last epoch's.
//
//===----------------------------------------------------------------------===//

#include "tools/sagac/Commands.h"

#include "api/GraphTrainer.h"
#include "runtime/exec/Device.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace saga;

bool saga::isGraphDataset(const RunOptions &options) {
  if (options.format == "graphs")
    return true;
  if (!options.format.empty() || !llvm::sys::fs::is_directory(options.data))
    return false;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(options.data, ec), end;
       it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with("_graph_indicator.txt"))
      return true;
  return false;
}

int saga::runTrainGraphs(const TrainCommandOptions &options) {
  const RunOptions &run = options.run;
  auto fail = [](llvm::Error e) {
    llvm::errs() << "error: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  };
  if (run.memoryBudget > 0 || !run.partition.empty() ||
      !options.batches.fanouts.empty() || !run.params.empty() ||
      !options.train.checkpointPath.empty() || options.train.patience ||
      !options.saveParams.empty() || !options.plot.empty())
    return fail(llvm::createStringError(
        "on a dataset of many graphs, sagac train cross-validates in memory: "
        "no --memory-budget, --partition, --fanout, --params, --checkpoint, "
        "--patience, --save-params or --plot"));
  auto data = loadGraphDataset(run.data);
  if (!data)
    return fail(data.takeError());
  const GraphDataset &d = *data;
  llvm::outs() << llvm::format(
      "graphs %s: %lld graphs, %d vertices, %zu edges, %d classes, %lld "
      "features per vertex\n",
      d.name.c_str(), (long long)d.numGraphs(), d.numVertices(), d.src.size(),
      d.numClasses(), (long long)d.features.rowSize());

  CompileOptions co;
  co.threads = run.threads;
  co.optLevel = run.optLevel;
  co.disabledPasses = run.disabledPasses;
  co.training = true;
  DeviceChoice device;
  if (!parseDeviceChoice(run.device, device))
    return fail(llvm::createStringError("--device: '" + run.device +
                                        "' is not auto, cpu or cuda"));
  if (device == DeviceChoice::Auto) {
    std::string why;
    device = cudaDeviceCount(why) > 0 ? DeviceChoice::Cuda : DeviceChoice::Cpu;
  }
  bool printed = false;
  auto compile = [&]() -> llvm::Expected<std::unique_ptr<Model>> {
    auto model = Model::compileFile(run.model, co);
    if (!model)
      return model.takeError();
    if (device == DeviceChoice::Cuda)
      if (llvm::Error e = (*model)->useCuda())
        return std::move(e);
    if (!printed) {
      const CompileStats &s = (*model)->compileStats();
      llvm::outs() << llvm::format("compiled %s in %.1f ms; device: %s\n",
                                   run.model.c_str(), s.total() * 1e3,
                                   (*model)->deviceName().c_str());
      printed = true;
    }
    return model;
  };

  GraphTrainOptions go;
  go.train = options.train;
  go.batchSize = options.batches.batchSize > 0 ? options.batches.batchSize : 32;
  go.lrStep = options.lrStep;
  go.lrGamma = options.lrGamma;
  if (!go.train.logPath.empty()) // one log per run: folds append to it
    llvm::sys::fs::remove(go.train.logPath);
  llvm::outs() << llvm::format(
      "%d-fold cross-validation, %u epochs, %s lr %g%s, batches of %lld "
      "graphs, seed %llu\n",
      options.folds, go.train.epochs,
      go.train.optimizer == TrainOptions::Adam ? "Adam" : "SGD",
      go.train.learningRate,
      go.lrStep ? llvm::formatv(" (x{0} every {1} epochs)", go.lrGamma,
                                go.lrStep)
                      .str()
                      .c_str()
                : "",
      (long long)go.batchSize, (unsigned long long)go.train.seed);
  auto start = std::chrono::steady_clock::now();
  auto cv = crossValidate(compile, d, options.folds, go,
                          [&](const GraphEpochStats &s) {
                            bool last = s.epoch == go.train.epochs;
                            if (options.quiet && !last)
                              return;
                            llvm::outs() << llvm::format(
                                "fold %2d epoch %4u/%u  loss %.4f  train "
                                "%.4f  test %.4f  %.1f ms\n",
                                s.fold + 1, s.epoch, go.train.epochs, s.loss,
                                s.trainAcc, s.testAcc, s.seconds * 1e3);
                            llvm::outs().flush();
                          });
  if (!cv)
    return fail(cv.takeError());
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  size_t last = cv->meanTestAcc.size() - 1, best = cv->bestEpoch - 1;
  llvm::outs() << llvm::format(
      "%d-fold test accuracy: last epoch (%zu) %.4f +- %.4f; best mean "
      "epoch (%u, as the GIN paper reports) %.4f +- %.4f  (%.1f s)\n",
      options.folds, last + 1, cv->meanTestAcc[last], cv->stdTestAcc[last],
      cv->bestEpoch, cv->meanTestAcc[best], cv->stdTestAcc[best], seconds);
  return 0;
}
