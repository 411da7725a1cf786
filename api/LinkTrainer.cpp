//===- LinkTrainer.cpp - link prediction: scored pairs, sampled negatives -===//

#include "api/LinkTrainer.h"

#include "api/Optimizer.h"
#include "runtime/exec/PairLoss.h"
#include "runtime/Timing.h"
#include "runtime/train/LinkMetrics.h"
#include "support/KeyedStream.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <mutex>
#include <numeric>

using namespace saga;

namespace {

/// Positive `i` of the training set and its negatives, appended.
void appendWithNegatives(const EdgeSplit &split, const LinkTrainOptions &o,
                         uint64_t epoch, int64_t i, VertexPairs &pairs,
                         std::vector<float> &labels) {
  int32_t u = split.trainPos.src[size_t(i)];
  pairs.push(u, split.trainPos.dst[size_t(i)]);
  labels.push_back(1.0f);
  for (int64_t j = 0; j < o.negatives; ++j) {
    pairs.push(u, negativeDestination(o.train.seed, epoch, i, j, u,
                                      split.numVertices));
    labels.push_back(0.0f);
  }
}

/// An epoch's order of the training positives (seeded by epoch), kept for
/// the loader's calls of one epoch.
class EpochOrder {
public:
  explicit EpochOrder(int64_t n, uint64_t seed) : n(n), seed(seed) {}
  int64_t at(uint64_t epoch, int64_t position) {
    std::lock_guard<std::mutex> lock(mutex);
    if (epoch != current) {
      order.resize(size_t(n));
      std::iota(order.begin(), order.end(), int64_t(0));
      // Fisher-Yates from a keyed stream: the same order on any machine.
      KeyedStream s{streamKey(seed, epoch, 0x6c696e6b /* "link" */)};
      for (int64_t k = n - 1; k > 0; --k)
        std::swap(order[size_t(k)], order[size_t(s.below(uint64_t(k + 1)))]);
      current = epoch;
    }
    return order[size_t(position)];
  }

private:
  int64_t n;
  uint64_t seed;
  uint64_t current = ~uint64_t(0);
  std::vector<int64_t> order;
  std::mutex mutex;
};

llvm::Error lossError(double loss, unsigned epoch, int64_t batch) {
  return llvm::createStringError(
      "the loss is " + std::to_string(loss) + " at epoch " +
      std::to_string(epoch) + ", step " + std::to_string(batch) +
      ": lower the learning rate");
}

std::string metric(double x) {
  return std::isnan(x) ? "null" : llvm::formatv("{0:F6}", x).str();
}

} // namespace

int32_t saga::negativeDestination(uint64_t seed, uint64_t epoch, int64_t i,
                                  int64_t j, int32_t src,
                                  int32_t numVertices) {
  if (numVertices < 2)
    return src;
  KeyedStream s{streamKey(seed ^ 0x6e65676174697665ULL /* "negative" */,
                          epoch, uint64_t(i) * 0x10000ULL + uint64_t(j))};
  // Uniform over the vertices other than src.
  auto d = int32_t(s.below(uint64_t(numVertices - 1)));
  return d >= src ? d + 1 : d;
}

LinkScores saga::scoreLinks(const Tensor &h, const VertexPairs &positive,
                            const VertexPairs &negative, int64_t hitsK) {
  ThreadPool pool(1);
  std::vector<float> pos = pairScores(h.f32(), h.rowSize(), positive.src,
                                      positive.dst, pool),
                     neg = pairScores(h.f32(), h.rowSize(), negative.src,
                                      negative.dst, pool);
  LinkScores r;
  r.auc = rocAuc(pos, neg);
  r.hits = hitsAtK(pos, neg, hitsK);
  r.mrr = !pos.empty() && neg.size() % pos.size() == 0
              ? meanReciprocalRank(pos, neg, int64_t(neg.size() / pos.size()))
              : std::nan("");
  return r;
}

llvm::Expected<LinkTrainResult>
saga::trainLinks(Model &model, const Graph &graph, const EdgeSplit &split,
                 const LinkTrainOptions &options,
                 const std::function<void(const LinkEpochStats &)> &progress) {
  const TrainOptions &to = options.train;
  if (options.negatives < 1 || options.negatives > 0xffff)
    return llvm::createStringError(
        "negatives per positive must be 1 to 65535, not " +
        std::to_string(options.negatives));
  if (options.batchSize < 0)
    return llvm::createStringError("the batch size must be positive, not " +
                                   std::to_string(options.batchSize));
  if (options.maxBatches < 0 || (options.maxBatches > 0 && !options.batchSize))
    return llvm::createStringError(
        "a cap on the batches per epoch needs mini-batches and is positive");
  if (split.numVertices != graph.numVertices)
    return llvm::createStringError(
        "the edge split is over " + std::to_string(split.numVertices) +
        " vertices but the graph has " + std::to_string(graph.numVertices));
  if (split.trainPos.size() == 0)
    return llvm::createStringError("the edge split has no training pairs");
  if (to.execution.memoryBudget > 0)
    return llvm::createStringError(
        "link prediction runs in memory or on mini-batches: no memory "
        "budget yet");
  if (to.dist)
    return llvm::createStringError(
        "link prediction does not run on a partitioned graph yet");
  auto inputs = featureAndLabelInputs(model, "link prediction",
                                      /*needLabels=*/false);
  if (!inputs)
    return inputs.takeError();
  if (!inputs->labels.empty())
    return llvm::createStringError(
        "link prediction trains a model whose loss is pair_bce(out); this "
        "model has a label input '" +
        inputs->labels + "' (a node classifier)");

  auto opened = openAppendedLog(to.writes ? to.logPath : "");
  if (!opened)
    return opened.takeError();
  std::unique_ptr<llvm::raw_fd_ostream> log = std::move(*opened);

  const int64_t positives = int64_t(split.trainPos.size());
  const int64_t perPositive = 1 + options.negatives;
  std::unique_ptr<MiniBatches> batches;
  auto order = std::make_shared<EpochOrder>(positives, to.seed);
  if (options.batchSize > 0) {
    MiniBatchOptions mo;
    mo.batchSize = options.batchSize;
    mo.fanouts = options.fanouts;
    mo.samplerThreads = options.samplerThreads;
    mo.linkBatches = (positives + options.batchSize - 1) / options.batchSize;
    if (options.maxBatches > 0)
      mo.linkBatches = std::min(mo.linkBatches, options.maxBatches);
    const int64_t b = options.batchSize;
    mo.linkPairs = [&split, &options, order, positives,
                    b](uint64_t epoch, int64_t index, VertexPairs &pairs,
                       std::vector<float> &labels) {
      int64_t lo = index * b, hi = std::min(positives, lo + b);
      for (int64_t p = lo; p < hi; ++p)
        appendWithNegatives(split, options, epoch, order->at(epoch, p), pairs,
                            labels);
    };
    auto made = MiniBatches::create(model, graph, {}, mo, to.seed);
    if (!made)
      return made.takeError();
    batches = std::move(*made);
  }

  Optimizer optimizer(model, to);
  LinkTrainResult result;
  double bestAuc = -1;
  for (unsigned epoch = 1; epoch <= to.epochs; ++epoch) {
    auto start = std::chrono::steady_clock::now();
    LinkEpochStats s;
    s.epoch = epoch;
    double lossSum = 0;
    int64_t pairsSeen = 0;
    if (!batches) {
      VertexPairs pairs;
      std::vector<float> labels;
      pairs.src.reserve(size_t(positives * perPositive));
      pairs.dst.reserve(size_t(positives * perPositive));
      labels.reserve(size_t(positives * perPositive));
      for (int64_t i = 0; i < positives; ++i)
        appendWithNegatives(split, options, epoch, i, pairs, labels);
      std::string why;
      PairSet set = PairSet::make(graph.numVertices, std::move(pairs.src),
                                  std::move(pairs.dst), std::move(labels),
                                  &why);
      if (!why.empty())
        return llvm::createStringError("the training pairs: " + why);
      ForwardOptions fo = to.execution;
      fo.pairs = &set;
      auto step = model.trainStep(fo, epochSeed(to.seed, epoch));
      if (!step)
        return step.takeError();
      if (!std::isfinite(step->loss))
        return lossError(step->loss, epoch, 0);
      if (llvm::Error e = optimizer.step(step->gradients))
        return std::move(e);
      lossSum = step->loss * double(set.size());
      pairsSeen = set.size();
      s.batches = 1;
    } else {
      batches->startEpoch(epoch);
      int64_t index = 0;
      const int64_t total = batches->batchesPerEpoch();
      for (;; ++index) {
        ForwardOptions fo = to.execution;
        auto bound = batches->bindNext(fo);
        if (!bound)
          return bound.takeError();
        if (!*bound)
          break;
        auto step = model.trainStep(
            fo, epochSeed(epochSeed(to.seed, epoch), uint64_t(index)));
        if (!step)
          return step.takeError();
        if (!std::isfinite(step->loss))
          return lossError(step->loss, epoch, index);
        if (llvm::Error e = optimizer.step(step->gradients))
          return std::move(e);
        lossSum += step->loss * double((*bound)->pairs.size());
        pairsSeen += (*bound)->pairs.size();
        if (to.batchProgress)
          to.batchProgress(epoch, index + 1, total, secondsSince(start));
      }
      s.batches = index;
      if (llvm::Error e = batches->bindWhole())
        return std::move(e);
    }
    s.loss = pairsSeen ? lossSum / double(pairsSeen) : 0;
    s.trainSeconds = secondsSince(start);
    auto out = model.forward(to.execution);
    if (!out)
      return out.takeError();
    if (out->prediction.rows() != graph.numVertices ||
        out->prediction.dtype() != DType::F32)
      return llvm::createStringError(
          "link prediction scores the rows of 'out': one f32 vector per "
          "vertex");
    s.val = scoreLinks(out->prediction, split.valPos, split.valNeg,
                       options.hitsK);
    s.test = scoreLinks(out->prediction, split.testPos, split.testNeg,
                        options.hitsK);
    s.seconds = secondsSince(start);
    if (!std::isnan(s.val.auc) && s.val.auc > bestAuc) {
      bestAuc = s.val.auc;
      result.bestEpoch = epoch;
    }
    result.history.push_back(s);
    if (log) {
      *log << "{\"epoch\": " << s.epoch
           << llvm::format(", \"loss\": %.6f", s.loss)
           << ", \"val_auc\": " << metric(s.val.auc)
           << ", \"val_hits\": " << metric(s.val.hits)
           << ", \"val_mrr\": " << metric(s.val.mrr)
           << ", \"test_auc\": " << metric(s.test.auc)
           << ", \"test_hits\": " << metric(s.test.hits)
           << ", \"test_mrr\": " << metric(s.test.mrr)
           << ", \"batches\": " << s.batches
           << llvm::format(", \"train_seconds\": %.4f, \"seconds\": %.4f}\n",
                           s.trainSeconds, s.seconds);
      log->flush();
    }
    if (progress)
      progress(s);
  }
  if (!result.bestEpoch && !result.history.empty())
    result.bestEpoch = 1;
  return result;
}
