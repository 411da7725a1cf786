//===- GraphTrainer.cpp - graph classification: batches of whole graphs ---===//

#include "api/GraphTrainer.h"

#include "api/Optimizer.h"
#include "runtime/Timing.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

using namespace saga;

namespace {

/// Binds the disjoint union of `ids` to the model.
llvm::Error bindBatch(Model &model, const GraphDataset &data,
                 llvm::ArrayRef<int32_t> ids, const std::string &features,
                 const std::string &labels, GraphBatch &batch) {
  batch = makeGraphBatch(data, ids, model.selfLoops());
  if (llvm::Error e = model.setGraph(batch.graph))
    return e;
  if (llvm::Error e = model.setInput(features, std::move(batch.features)))
    return e;
  return model.setInput(labels, std::move(batch.labels));
}

/// The fraction of `ids` whose prediction (each graph's first row) is its
/// label, in evaluation batches.
llvm::Expected<double> evaluate(Model &model, const GraphDataset &data,
                                const std::vector<int32_t> &ids,
                                const GraphTrainOptions &options,
                                const std::string &features,
                                const std::string &labels) {
  if (ids.empty())
    return 0.0;
  int64_t right = 0, step = std::max<int64_t>(options.evalBatchSize, 1);
  for (size_t lo = 0; lo < ids.size(); lo += size_t(step)) {
    size_t hi = std::min(ids.size(), lo + size_t(step));
    llvm::ArrayRef<int32_t> part(ids.data() + lo, hi - lo);
    GraphBatch batch;
    if (llvm::Error e = bindBatch(model, data, part, features, labels, batch))
      return std::move(e);
    auto out = model.forward(options.train.execution);
    if (!out)
      return out.takeError();
    const Tensor &logits = out->prediction;
    int64_t c = logits.rowSize();
    for (size_t i = 0; i < part.size(); ++i) {
      const float *row = logits.f32() + batch.firsts[i] * c;
      right += (std::max_element(row, row + c) - row) ==
               data.graphLabels[size_t(part[i])];
    }
  }
  return double(right) / double(ids.size());
}

} // namespace

llvm::Expected<GraphTrainResult>
saga::trainGraphs(Model &model, const GraphDataset &data,
                  const std::vector<int32_t> &train,
                  const std::vector<int32_t> &test,
                  const GraphTrainOptions &options,
                  const std::function<void(const GraphEpochStats &)> &progress) {
  const TrainOptions &to = options.train;
  if (options.batchSize <= 0)
    return llvm::createStringError("the batch size must be positive, not " +
                                   std::to_string(options.batchSize));
  if (train.empty())
    return llvm::createStringError("no training graphs");
  if (to.execution.memoryBudget > 0)
    return llvm::createStringError(
        "graph classification runs in memory: no memory budget");
  for (const std::vector<int32_t> *ids : {&train, &test})
    for (int32_t g : *ids)
      if (g < 0 || g >= data.numGraphs())
        return llvm::createStringError(
            "graph " + std::to_string(g) + " is not in the dataset (" +
            std::to_string(data.numGraphs()) + " graphs)");
  auto inputs = featureAndLabelInputs(model, "graph classification");
  if (!inputs)
    return inputs.takeError();
  const std::string &features = inputs->features, &labels = inputs->labels;
  for (const ValueInfo &in : model.inputs()) {
    int64_t width = 1;
    for (int64_t d : in.shape)
      width *= d;
    if (in.name == features && width != data.features.rowSize())
      return llvm::createStringError(
          "the model's input '" + features + "' has " +
          std::to_string(width) + " features per vertex; " + data.name +
          " has " + std::to_string(data.features.rowSize()));
  }
  auto opened = openAppendedLog(to.logPath);
  if (!opened)
    return opened.takeError();
  std::unique_ptr<llvm::raw_fd_ostream> log = std::move(*opened);

  Optimizer optimizer(model, to);
  GraphTrainResult result;
  std::vector<int32_t> order = train;
  for (unsigned epoch = 1; epoch <= to.epochs; ++epoch) {
    auto start = std::chrono::steady_clock::now();
    if (options.lrStep && epoch > 1 && (epoch - 1) % options.lrStep == 0)
      optimizer.scaleLearningRate(options.lrGamma);
    uint64_t seed = epochSeed(to.seed, epoch);
    order = train; // shuffled from the same start each epoch: resumable
    std::mt19937_64 rng(seed);
    std::shuffle(order.begin(), order.end(), rng);
    double lossSum = 0;
    int64_t batchIndex = 0;
    for (size_t lo = 0; lo < order.size();
         lo += size_t(options.batchSize), ++batchIndex) {
      size_t hi = std::min(order.size(), lo + size_t(options.batchSize));
      llvm::ArrayRef<int32_t> ids(order.data() + lo, hi - lo);
      GraphBatch batch;
      if (llvm::Error e = bindBatch(model, data, ids, features, labels, batch))
        return std::move(e);
      ForwardOptions fo = to.execution;
      fo.lossMask = batch.firsts;
      fo.exactLossMask = true;
      auto step = model.trainStep(fo, epochSeed(seed, uint64_t(batchIndex)));
      if (!step)
        return step.takeError();
      if (!std::isfinite(step->loss))
        return llvm::createStringError(
            "the loss is " + std::to_string(step->loss) + " at epoch " +
            std::to_string(epoch) + ", batch " + std::to_string(batchIndex) +
            ": lower the learning rate");
      lossSum += step->loss * double(ids.size());
      if (llvm::Error e = optimizer.step(step->gradients))
        return std::move(e);
    }
    GraphEpochStats s;
    s.epoch = epoch;
    s.fold = options.fold;
    s.loss = lossSum / double(order.size());
    s.trainSeconds = secondsSince(start);
    auto trainAcc = evaluate(model, data, train, options, features, labels);
    if (!trainAcc)
      return trainAcc.takeError();
    auto testAcc = evaluate(model, data, test, options, features, labels);
    if (!testAcc)
      return testAcc.takeError();
    s.trainAcc = *trainAcc;
    s.testAcc = *testAcc;
    s.seconds = secondsSince(start);
    result.history.push_back(s);
    if (log) {
      if (s.fold >= 0)
        *log << "{\"fold\": " << s.fold << ", ";
      else
        *log << "{";
      *log << llvm::format("\"epoch\": %u, \"loss\": %.6f, \"train_acc\": "
                           "%.6f, \"test_acc\": %.6f, \"seconds\": %.4f}\n",
                           s.epoch, s.loss, s.trainAcc, s.testAcc, s.seconds);
      log->flush();
    }
    if (progress)
      progress(s);
  }
  return result;
}

llvm::Expected<CrossValidation> saga::crossValidate(
    const std::function<llvm::Expected<std::unique_ptr<Model>>()> &compile,
    const GraphDataset &data, int32_t folds, const GraphTrainOptions &options,
    const std::function<void(const GraphEpochStats &)> &progress) {
  if (folds < 2 || folds > data.numGraphs())
    return llvm::createStringError(
        "cross-validation needs 2 to " + std::to_string(data.numGraphs()) +
        " folds (one graph each at least), not " + std::to_string(folds));
  std::vector<std::vector<int32_t>> parts =
      stratifiedFolds(data.graphLabels, folds, options.train.seed);
  CrossValidation cv;
  for (int32_t k = 0; k < folds; ++k) {
    std::vector<int32_t> train;
    for (int32_t j = 0; j < folds; ++j)
      if (j != k)
        train.insert(train.end(), parts[size_t(j)].begin(),
                     parts[size_t(j)].end());
    std::sort(train.begin(), train.end());
    auto model = compile();
    if (!model)
      return model.takeError();
    (*model)->initParams(options.train.seed + uint64_t(k));
    GraphTrainOptions foldOptions = options;
    foldOptions.fold = k;
    auto r = trainGraphs(**model, data, train, parts[size_t(k)], foldOptions,
                         progress);
    if (!r)
      return r.takeError();
    cv.folds.push_back(std::move(*r));
  }
  size_t epochs = cv.folds.front().history.size();
  double best = -1;
  for (size_t e = 0; e < epochs; ++e) {
    double sum = 0, sq = 0;
    for (const GraphTrainResult &f : cv.folds) {
      double a = f.history[e].testAcc;
      sum += a;
      sq += a * a;
    }
    double mean = sum / folds;
    cv.meanTestAcc.push_back(mean);
    cv.stdTestAcc.push_back(std::sqrt(std::max(0.0, sq / folds - mean * mean)));
    if (mean > best) {
      best = mean;
      cv.bestEpoch = unsigned(e + 1);
    }
  }
  return cv;
}
