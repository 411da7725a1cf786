//===- LinkTrain.cpp - sagac train --link-split ---------------------------===//
//
// Link prediction from the command line: the model (its loss pair_bce(out))
// trained on a split of the dataset's edges (api/LinkTrainer.h), full batch
// or on sampled mini-batches of pairs; one line per epoch with the loss and
// the validation and test ROC AUC, then the test metrics at the epoch of
// the best validation AUC (the figure papers report).
//
//===----------------------------------------------------------------------===//

#include "tools/sagac/Commands.h"

#include "api/LinkTrainer.h"
#include "runtime/train/ParamsFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>

using namespace saga;

int saga::runTrainLinks(const TrainCommandOptions &options, Model &model,
                        const Graph &graph, const EdgeSplit &split) {
  auto fail = [](llvm::Error e) {
    llvm::errs() << "error: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  };
  if (!options.train.checkpointPath.empty() || options.train.patience ||
      !options.plot.empty())
    return fail(llvm::createStringError(
        "--link-split trains for --epochs and reports the best validation "
        "epoch: no --checkpoint, --patience or --plot yet"));
  LinkTrainOptions lo;
  lo.train = options.train;
  lo.negatives = options.negatives;
  lo.batchSize = options.batches.batchSize;
  lo.fanouts = options.batches.fanouts;
  lo.samplerThreads = options.batches.samplerThreads;
  lo.maxBatches = options.maxBatches;
  if (!lo.train.logPath.empty()) // one log per run
    llvm::sys::fs::remove(lo.train.logPath);
  llvm::outs() << llvm::format(
      "link prediction: %zu train / %zu + %zu val / %zu + %zu test pairs "
      "(positive + negative), %lld negative%s per train edge each epoch\n",
      split.trainPos.size(), split.valPos.size(), split.valNeg.size(),
      split.testPos.size(), split.testNeg.size(), (long long)lo.negatives,
      lo.negatives == 1 ? "" : "s");
  llvm::outs() << llvm::format(
      "training %u epochs, %s lr %g, seed %llu, %s\n", lo.train.epochs,
      lo.train.optimizer == TrainOptions::Adam ? "Adam" : "SGD",
      lo.train.learningRate, (unsigned long long)lo.train.seed,
      lo.batchSize > 0
          ? ("mini-batches of " + std::to_string(lo.batchSize) +
             " train edges with their negatives, their ends' neighbourhoods "
             "sampled")
                .c_str()
          : "full batch");
  if (lo.batchSize > 0 && !options.quiet && llvm::errs().is_displayed()) {
    auto last = std::make_shared<double>(0.0);
    lo.train.batchProgress = [last, epochs = lo.train.epochs](
                                 unsigned epoch, int64_t done, int64_t total,
                                 double seconds) {
      if (seconds - *last < 1.0 && done < total)
        return;
      *last = done < total ? seconds : 0.0;
      llvm::errs() << llvm::format("\repoch %u/%u: %lld/%lld batches ", epoch,
                                   epochs, (long long)done, (long long)total);
      if (done == total)
        llvm::errs() << "\r\x1b[K";
    };
  }
  auto start = std::chrono::steady_clock::now();
  auto result = trainLinks(
      model, graph, split, lo, [&](const LinkEpochStats &s) {
        if (options.quiet && s.epoch != lo.train.epochs)
          return;
        llvm::outs() << llvm::format(
            "epoch %4u/%u  loss %.4f  val auc %.4f  test auc %.4f  %.1f ms",
            s.epoch, lo.train.epochs, s.loss, s.val.auc, s.test.auc,
            s.seconds * 1e3);
        if (s.batches > 1)
          llvm::outs() << llvm::format("  (%lld batches in %.1f ms)",
                                       (long long)s.batches,
                                       s.trainSeconds * 1e3);
        llvm::outs() << "\n";
        llvm::outs().flush();
      });
  if (!result)
    return fail(result.takeError());
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  const LinkEpochStats &b = result->history[result->bestEpoch - 1];
  auto show = [](double x) {
    return std::isnan(x) ? std::string("n/a")
                         : llvm::formatv("{0:F4}", x).str();
  };
  llvm::outs() << "test at the best validation epoch (" << b.epoch
               << "): auc " << show(b.test.auc) << "  hits@" << lo.hitsK
               << " " << show(b.test.hits) << "  mrr " << show(b.test.mrr)
               << llvm::format("  (val auc %.4f; %.1f s)\n", b.val.auc,
                               seconds);
  if (!options.saveParams.empty()) {
    NamedTensors params;
    for (const ValueInfo &p : model.params())
      params.emplace_back(p.name, *model.param(p.name));
    if (llvm::Error e = saveParamsFile(options.saveParams, params))
      return fail(std::move(e));
  }
  return 0;
}
