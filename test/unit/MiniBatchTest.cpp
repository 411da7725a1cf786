//===- MiniBatchTest.cpp - mini-batch training on sampled neighbourhoods --===//
//
// The examples train on sampled mini-batches with no change to their
// source: GraphSAGE-mean reaches the accuracy of its paper's setting on
// Cora, GCN and GAT come within 2 points of their full-batch accuracy, the
// loader's prefetching and threads change nothing, and a resumed run
// follows the uninterrupted one.
//
//===----------------------------------------------------------------------===//

#include "TestData.h"
#include "api/Model.h"
#include "runtime/graph/Loaders.h"
#include "api/MiniBatches.h"
#include "api/Trainer.h"

#include "llvm/ADT/ScopeExit.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cmath>
#include <cstring>
#include <numeric>

using namespace saga;

namespace {
/// Cora with its features normalised, as sagac trains it.
const Dataset &cora() {
  static Dataset d = [] {
    Dataset c = bundledCora();
    rowNormalize(c.features);
    return c;
  }();
  return d;
}

struct Run {
  std::unique_ptr<Model> model;
  Graph graph;
  std::unique_ptr<MiniBatches> batches;
};

/// `file` compiled for training and bound to Cora; with batchSize > 0,
/// mini-batches of it.
std::unique_ptr<Run> setUp(const char *file, int64_t batchSize,
                           std::vector<int64_t> fanouts, uint64_t seed,
                           unsigned samplerThreads = 1, int64_t prefetch = 2,
                           bool rowExtents = true) {
  const Dataset &d = cora();
  auto r = std::make_unique<Run>();
  CompileOptions co;
  co.training = true;
  co.threads = 2;
  auto model = Model::compileFile(std::string(SAGA_EXAMPLES_DIR "/") + file, co);
  if (!model) {
    ADD_FAILURE() << llvm::toString(model.takeError());
    return nullptr;
  }
  r->model = std::move(*model);
  Model &m = *r->model;
  r->graph = Graph::build(d.edges.numVertices, d.edges.src, d.edges.dst,
                          m.selfLoops());
  EXPECT_FALSE(bool(m.setGraph(r->graph)));
  EXPECT_FALSE(bool(m.setInput("x", d.features)));
  Tensor labels({r->graph.numVertices}, DType::I32);
  std::copy(d.labels.begin(), d.labels.end(), labels.i32());
  EXPECT_FALSE(bool(m.setInput("label", std::move(labels))));
  m.initParams(seed);
  if (batchSize > 0) {
    MiniBatchOptions o;
    o.batchSize = batchSize;
    o.fanouts = std::move(fanouts);
    o.samplerThreads = samplerThreads;
    o.prefetch = prefetch;
    o.rowExtents = rowExtents;
    auto b = MiniBatches::create(m, r->graph, d.train, o, seed);
    if (!b) {
      ADD_FAILURE() << llvm::toString(b.takeError());
      return nullptr;
    }
    r->batches = std::move(*b);
  }
  return r;
}

llvm::Expected<TrainResult> trainRun(Run &r, unsigned epochs, uint64_t seed,
                                     std::string checkpoint = "",
                                     bool resume = false) {
  const Dataset &d = cora();
  TrainOptions t;
  t.epochs = epochs;
  t.learningRate = 0.01;
  t.seed = seed;
  t.batches = r.batches.get();
  t.checkpointPath = std::move(checkpoint);
  t.resume = resume;
  Split split{d.labels, d.train, d.val, d.test};
  return train(*r.model, split, t);
}

/// Test accuracy after `epochs`, mean over `seeds` seeds.
double meanAccuracy(const char *file, int64_t batchSize,
                    std::vector<int64_t> fanouts, unsigned epochs,
                    int seeds) {
  double sum = 0;
  for (int s = 0; s < seeds; ++s) {
    auto r = setUp(file, batchSize, fanouts, uint64_t(s));
    if (!r)
      return 0;
    auto result = trainRun(*r, epochs, uint64_t(s));
    if (!result) {
      ADD_FAILURE() << llvm::toString(result.takeError());
      return 0;
    }
    sum += result->final.testAcc;
  }
  return sum / seeds;
}

std::vector<std::pair<std::string, Tensor>> paramsOf(const Model &m) {
  std::vector<std::pair<std::string, Tensor>> p;
  for (const ValueInfo &v : m.params())
    p.emplace_back(v.name, *m.param(v.name));
  return p;
}

bool sameBits(const std::vector<std::pair<std::string, Tensor>> &a,
              const std::vector<std::pair<std::string, Tensor>> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].first != b[i].first ||
        a[i].second.shape() != b[i].second.shape() ||
        std::memcmp(a[i].second.f32(), b[i].second.f32(),
                    size_t(a[i].second.numElements()) * 4))
      return false;
  return true;
}
} // namespace

// The setting: 2 layers, fan-out 10,25, batches of 64.
TEST(MiniBatch, GraphSageMeanOnCora) {
  double acc = meanAccuracy("graphsage.saga", 64, {10, 25}, 50, 10);
  RecordProperty("mean_test_accuracy", std::to_string(acc));
  EXPECT_GE(acc, 0.79) << "GraphSAGE-mean, mini-batch, mean of 10 seeds";
}

TEST(MiniBatch, GcnAndGatWithinTwoPointsOfFullBatch) {
  for (const char *file : {"gcn.saga", "gat.saga"}) {
    double full = meanAccuracy(file, 0, {}, 200, 3);
    double mini = meanAccuracy(file, 64, {10, 25}, 50, 3);
    RecordProperty(std::string(file) + "_full", std::to_string(full));
    RecordProperty(std::string(file) + "_mini", std::to_string(mini));
    EXPECT_GE(mini, full - 0.02) << file << ": mini-batch " << mini
                                 << ", full batch " << full;
  }
}

// Prefetching and the loader's threads change when a batch is made, not
// what it is: the same parameters bit for bit.
TEST(MiniBatch, PrefetchAndSamplerThreadsGiveTheSameBits) {
  auto a = setUp("gcn.saga", 32, {5, 5}, 1, /*samplerThreads=*/1, /*prefetch=*/0);
  auto b = setUp("gcn.saga", 32, {5, 5}, 1, /*samplerThreads=*/2, /*prefetch=*/3);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(bool(trainRun(*a, 3, 1)));
  ASSERT_TRUE(bool(trainRun(*b, 3, 1)));
  EXPECT_TRUE(sameBits(paramsOf(*a->model), paramsOf(*b->model)));
  EXPECT_EQ(a->batches->stats().batches, 3 * ((140 + 31) / 32));
}

// A checkpoint after each epoch; a run resumed from epoch 2 ends with the
// parameters of the uninterrupted run (each epoch's batches and dropout
// depend on the seed and the epoch only).
TEST(MiniBatch, ResumedRunMatchesUninterrupted) {
  std::string ckpt = SAGA_TEST_SCRATCH_DIR "/minibatch.ckpt";
  std::remove(ckpt.c_str());
  auto whole = setUp("graphsage.saga", 40, {4, 6}, 7);
  ASSERT_TRUE(whole);
  ASSERT_TRUE(bool(trainRun(*whole, 4, 7)));
  auto first = setUp("graphsage.saga", 40, {4, 6}, 7);
  ASSERT_TRUE(first);
  ASSERT_TRUE(bool(trainRun(*first, 2, 7, ckpt)));
  auto second = setUp("graphsage.saga", 40, {4, 6}, 7);
  ASSERT_TRUE(second);
  auto resumed = trainRun(*second, 4, 7, ckpt, /*resume=*/true);
  ASSERT_TRUE(bool(resumed)) << llvm::toString(resumed.takeError());
  EXPECT_EQ(resumed->history.front().epoch, 3u);
  EXPECT_TRUE(sameBits(paramsOf(*whole->model), paramsOf(*second->model)));
}

// Mistakes in the options, each a message.
TEST(MiniBatch, BadOptionsAreErrors) {
  auto r = setUp("gcn.saga", 0, {}, 0);
  ASSERT_TRUE(r);
  const Dataset &d = cora();
  auto error = [&](int64_t batch, std::vector<int64_t> fanouts) {
    MiniBatchOptions o;
    o.batchSize = batch;
    o.fanouts = std::move(fanouts);
    auto b = MiniBatches::create(*r->model, r->graph, d.train, o, 0);
    return b ? std::string() : llvm::toString(b.takeError());
  };
  EXPECT_NE(error(64, {10}).find("--fanout gives 1 layer but the model "
                                 "propagates over 2 hops"),
            std::string::npos)
      << error(64, {10});
  EXPECT_NE(error(64, {}).find("need a fan-out per layer"), std::string::npos);
  EXPECT_NE(error(64, {0, 5}).find("fan-out 0"), std::string::npos);
  EXPECT_NE(error(0, {5, 5}).find("batch size must be positive"),
            std::string::npos);
  // Still bound to the whole graph: a forward pass runs.
  EXPECT_TRUE(bool(r->model->forward()));
}

// Each layer over its block only (runtime/exec/RowExtents.h) gives the
// loss and gradients of the whole batch graph: every example, a training
// step on one batch with and without row extents. Uninitialised buffers
// hold NaNs, so a row read past what was made or zeroed shows.
TEST(MiniBatch, BlocksGiveTheGradientsOfTheWholeBatchGraph) {
  Tensor::poisonUninitialized(true);
  llvm::scope_exit unpoison([] { Tensor::poisonUninitialized(false); });
  for (const char *file :
       {"gcn.saga", "graphsage.saga", "gin.saga", "ggcn.saga", "gat.saga"}) {
    SCOPED_TRACE(file);
    TrainStepResult steps[2];
    for (bool extents : {true, false}) {
      auto r = setUp(file, 48, {3, 4}, 5, 1, 0, extents);
      ASSERT_TRUE(r);
      r->batches->startEpoch(2);
      ForwardOptions f;
      auto b = r->batches->bindNext(f);
      ASSERT_TRUE(b && *b);
      EXPECT_EQ(f.rowLevels.empty(), !extents);
      auto step = r->model->trainStep(f, 9);
      ASSERT_TRUE(bool(step)) << llvm::toString(step.takeError());
      steps[extents] = std::move(*step);
    }
    EXPECT_NEAR(steps[1].loss, steps[0].loss, 1e-5 * std::max(1.0, steps[0].loss));
    ASSERT_EQ(steps[1].gradients.size(), steps[0].gradients.size());
    for (size_t i = 0; i < steps[0].gradients.size(); ++i) {
      const Tensor &a = steps[1].gradients[i].second, &w = steps[0].gradients[i].second;
      ASSERT_EQ(a.shape(), w.shape());
      double largest = 0, worst = 0;
      for (int64_t j = 0; j < w.numElements(); ++j)
        largest = std::max(largest, double(std::fabs(w.f32()[j])));
      for (int64_t j = 0; j < w.numElements(); ++j)
        worst = std::max(worst, double(std::fabs(a.f32()[j] - w.f32()[j])));
      EXPECT_LE(worst, 1e-5 * std::max(1.0, largest))
          << "gradient of " << steps[0].gradients[i].first;
      EXPECT_GT(largest, 0.0) << steps[0].gradients[i].first;
    }
  }
}

// The model's hops: one per layer for the examples.
TEST(MiniBatch, ExamplesPropagateOverTwoHops) {
  for (const char *file :
       {"gcn.saga", "graphsage.saga", "gin.saga", "ggcn.saga", "gat.saga"}) {
    CompileOptions co;
    auto m = Model::compileFile(std::string(SAGA_EXAMPLES_DIR "/") + file, co);
    ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
    EXPECT_EQ((*m)->hops(), 2) << file;
  }
}
