//===- Trainer.cpp - full-batch training of a compiled model --------------===//

#include "api/Trainer.h"

#include "runtime/train/Checkpoint.h"
#include "runtime/distributed/Distribution.h"
#include "api/MiniBatches.h"
#include "api/Optimizer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>

using namespace saga;

namespace {
/// How many of `vertices` have their label as the arg-max prediction.
int64_t correct(const Tensor &logits, const std::vector<int32_t> &labels,
                const std::vector<int32_t> &vertices) {
  int64_t c = logits.rowSize(), right = 0;
  if (logits.dtype() == DType::I32) { // classes already (argmaxPrediction)
    for (int32_t v : vertices)
      right += logits.i32()[v] == labels[v];
    return right;
  }
  for (int32_t v : vertices) {
    const float *row = logits.f32() + int64_t(v) * c;
    right += (std::max_element(row, row + c) - row) == labels[v];
  }
  return right;
}
} // namespace

llvm::Expected<std::unique_ptr<llvm::raw_fd_ostream>>
saga::openAppendedLog(const std::string &path) {
  if (path.empty())
    return nullptr;
  std::error_code ec;
  auto log = std::make_unique<llvm::raw_fd_ostream>(
      path, ec, llvm::sys::fs::OF_Append | llvm::sys::fs::OF_Text);
  if (ec)
    return llvm::createStringError("cannot write the log " + path + ": " +
                                   ec.message());
  return log;
}

double saga::accuracy(const Tensor &logits, const std::vector<int32_t> &labels,
                      const std::vector<int32_t> &vertices) {
  return vertices.empty()
             ? 0.0
             : double(correct(logits, labels, vertices)) / vertices.size();
}

namespace {

/// One epoch of mini-batch steps; the whole graph is bound again after
/// it. Returns the loss averaged over the epoch's seeds.
llvm::Expected<double>
trainBatches(Model &model, MiniBatches &batches, Optimizer &optimizer,
             const TrainOptions &options, unsigned epoch,
             std::chrono::steady_clock::time_point start, int64_t &done,
             std::vector<std::pair<std::string, double>> &profile) {
  batches.startEpoch(epoch);
  const int64_t total = batches.batchesPerEpoch();
  const uint64_t seed = epochSeed(options.seed, epoch);
  double lossSum = 0;
  int64_t seeds = 0;
  done = 0;
  while (true) {
    ForwardOptions f = options.execution;
    f.profile = options.profileBatches;
    auto batch = batches.bindNext(f);
    if (!batch)
      return batch.takeError();
    if (!*batch)
      break;
    int64_t n = (*batch)->sample.seeds();
    std::vector<std::pair<std::string, Tensor>> gradients;
    double loss = 0;
    if (n > 0) {
      auto step = model.trainStep(f, epochSeed(seed, uint64_t(done)));
      if (!step)
        return step.takeError();
      gradients = std::move(step->gradients);
      loss = step->loss;
      // Every batch runs the same plan: its steps add up position-wise.
      if (profile.empty())
        profile = std::move(step->profile);
      else
        for (size_t k = 0; k < profile.size() && k < step->profile.size(); ++k)
          profile[k].second += step->profile[k].second;
    } else { // a distributed trainer's empty batch: nothing of its own
      for (const ValueInfo &p : model.params())
        gradients.emplace_back(p.name, Tensor(p.shape));
    }
    if (options.dist) {
      // Synchronous data parallel: the gradient of the mean loss over all
      // trainers' seeds (each trainer's gradient weighted by its seeds),
      // and that loss, in one sum.
      std::vector<double> all;
      for (auto &[name, g] : gradients)
        for (int64_t j = 0; j < g.numElements(); ++j)
          all.push_back(double(g.f32()[j]) * double(n));
      all.push_back(loss * double(n));
      all.push_back(double(n));
      if (llvm::Error e = options.dist->sum(all.data(), int64_t(all.size())))
        return std::move(e);
      double total = all.back();
      size_t k = 0;
      for (auto &[name, g] : gradients)
        for (int64_t j = 0; j < g.numElements(); ++j)
          g.f32()[j] = total > 0 ? float(all[k++] / total) : 0.0f;
      loss = total > 0 ? all[k] / total : 0.0;
      n = int64_t(total);
    }
    if (llvm::Error e = optimizer.step(gradients))
      return std::move(e);
    lossSum += loss * double(n);
    seeds += n;
    ++done;
    if (options.batchProgress)
      options.batchProgress(
          epoch, done, total,
          std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                        start)
              .count());
  }
  if (llvm::Error e = batches.bindWhole())
    return std::move(e);
  return seeds ? lossSum / double(seeds) : 0.0;
}

} // namespace

llvm::Expected<TrainResult>
saga::train(Model &model, const Split &split, const TrainOptions &options,
            const std::function<void(const EpochStats &)> &progress) {
  Optimizer optimizer(model, options);
  unsigned first = 1;
  double bestVal = -1;   // early stopping: best validation accuracy so far
  uint64_t sinceBest = 0; // and the epochs since
  if (options.resume) {
    if (options.checkpointPath.empty())
      return llvm::createStringError("resuming needs a checkpoint path");
    auto ckpt = loadCheckpoint(options.checkpointPath);
    if (!ckpt)
      return ckpt.takeError();
    if (llvm::Error e = optimizer.restore(*ckpt))
      return std::move(e);
    first = unsigned(ckpt->epoch) + 1;
    bestVal = ckpt->bestVal;
    sinceBest = ckpt->sinceBest;
  }

  // The log holds exactly the checkpointed epochs: a resumed run keeps the
  // lines up to the checkpoint's epoch and continues after them.
  std::string kept;
  if (options.resume && !options.logPath.empty())
    if (auto old = llvm::MemoryBuffer::getFile(options.logPath)) {
      llvm::SmallVector<llvm::StringRef> lines;
      (*old)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
      for (llvm::StringRef line : lines) {
        unsigned epoch = 0;
        llvm::StringRef rest = line;
        if (rest.consume_front("{\"epoch\": ") &&
            !rest.consumeInteger(10, epoch) && epoch < first)
          kept += line.str() + "\n";
      }
    }
  std::unique_ptr<llvm::raw_fd_ostream> log;
  if (!options.logPath.empty() && options.writes) {
    std::error_code ec;
    log = std::make_unique<llvm::raw_fd_ostream>(options.logPath, ec);
    if (ec)
      return llvm::createStringError("cannot write " + options.logPath + ": " +
                                     ec.message());
    *log << kept;
    log->flush();
  }

  TrainResult result;
  ForwardOptions trainMask = options.execution;
  trainMask.lossMask = split.train;
  // A part may own no training vertex: its share of the loss is then none.
  trainMask.exactLossMask = options.dist != nullptr;
  ForwardOptions evaluation = options.execution;
  evaluation.lossMask.clear();
  evaluation.argmaxPrediction = true; // classes are all accuracy needs
  for (unsigned epoch = first; epoch <= options.epochs; ++epoch) {
    auto start = std::chrono::steady_clock::now();
    EpochStats s;
    s.epoch = epoch;
    if (options.batches) {
      auto loss = trainBatches(model, *options.batches, optimizer, options,
                               epoch, start, s.batches, s.batchProfile);
      if (!loss)
        return loss.takeError();
      s.loss = *loss;
    } else {
      auto stepResult =
          model.trainStep(trainMask, epochSeed(options.seed, epoch));
      if (!stepResult)
        return stepResult.takeError();
      if (llvm::Error e = optimizer.step(stepResult->gradients))
        return std::move(e);
      s.loss = stepResult->loss;
      s.chunked = stepResult->chunked;
    }
    s.trainSeconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    auto eval = model.forward(evaluation);
    if (!eval)
      return eval.takeError();
    // Right and all, per split, over all parts.
    double counts[6];
    const std::vector<int32_t> *lists[3] = {&split.train, &split.val,
                                            &split.test};
    for (int k = 0; k < 3; ++k) {
      counts[2 * k] = double(correct(eval->prediction, split.labels, *lists[k]));
      counts[2 * k + 1] = double(lists[k]->size());
    }
    if (options.dist)
      if (llvm::Error e = options.dist->sum(counts, 6))
        return std::move(e);
    auto ratio = [&](int k) {
      return counts[2 * k + 1] > 0 ? counts[2 * k] / counts[2 * k + 1] : 0.0;
    };
    s.trainAcc = ratio(0);
    s.valAcc = ratio(1);
    s.testAcc = ratio(2);
    s.seconds = std::chrono::duration<double>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    if (!std::isfinite(s.loss))
      return llvm::createStringError(
          "the loss became " + std::to_string(s.loss) + " at epoch " +
          std::to_string(epoch) + "; lower the learning rate");
    result.history.push_back(s);
    result.final = s;
    // Log, then checkpoint: a run killed in between resumes from the
    // previous checkpoint, which drops this epoch's line and redoes it.
    if (log) {
      *log << llvm::format("{\"epoch\": %u, \"loss\": %.6f, \"train_acc\": "
                           "%.4f, \"val_acc\": %.4f, \"test_acc\": %.4f, "
                           "\"seconds\": %.4f}\n",
                           s.epoch, s.loss, s.trainAcc, s.valAcc, s.testAcc,
                           s.seconds);
      log->flush();
    }
    // Early stopping's state goes into the checkpoint, so a resumed run
    // stops where the uninterrupted one does.
    bool stop = false;
    if (s.valAcc > bestVal) {
      bestVal = s.valAcc;
      sinceBest = 0;
    } else if (options.patience && ++sinceBest >= options.patience) {
      stop = true;
    }
    if (!options.checkpointPath.empty() && options.writes) {
      Checkpoint ckpt = optimizer.save(epoch);
      ckpt.bestVal = bestVal;
      ckpt.sinceBest = sinceBest;
      if (llvm::Error e = saveCheckpoint(options.checkpointPath, ckpt))
        return std::move(e);
    }
    if (progress)
      progress(s);
    if (stop) {
      result.stoppedEarly = true;
      break;
    }
  }
  return result;
}
