//===- GraphTrainerTest.cpp - graph classification learns ----------------===//
//
// The trainer of api/GraphTrainer.h on a task with a known answer: a graph's
// class is whether it has more than 8 vertices, which a sum readout of a
// constant feature tells; a model must learn it, a model that reads a
// mean instead (the same on every graph) must not. Then cross-validation's
// bookkeeping and the trainer's errors. (The gradients are checked against
// float64 references in test/models/; the command line in
// test/tools/sagac-train-graphs*.test.)
//
//===----------------------------------------------------------------------===//

#include "api/GraphTrainer.h"

#include <gtest/gtest.h>

#include <random>

using namespace saga;

namespace {

/// 80 paths of 3 to 14 vertices; class 1 when a path has more than 8.
GraphDataset pathsBySize() {
  GraphDataset d;
  d.name = "paths";
  d.labelValues = {0, 1};
  d.graphOffsets = {0};
  d.edgeOffsets = {0};
  std::mt19937 rng(3);
  for (int g = 0; g < 80; ++g) {
    int n = 3 + int(rng() % 12);
    int32_t base = int32_t(d.graphOffsets.back());
    for (int i = 0; i + 1 < n; ++i) {
      d.src.insert(d.src.end(), {base + i, base + i + 1});
      d.dst.insert(d.dst.end(), {base + i + 1, base + i});
    }
    d.graphOffsets.push_back(base + n);
    d.edgeOffsets.push_back(int64_t(d.src.size()));
    d.graphLabels.push_back(n > 8);
  }
  d.features = Tensor({d.graphOffsets.back(), 1});
  std::fill(d.features.f32(), d.features.f32() + d.features.numElements(),
            1.0f);
  return d;
}

std::string model(const char *readout) {
  return std::string(R"(
graph { vertex x: f32[1]; vertex label: class[2]; }
layer Conv(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param b: f32[out] = zeros;
  gather(sum);
  apply_vertex(v, a) { return relu((v.h + a) @ W + b); }
}
layer Score(in: int, classes: int) {
  param W: f32[in, classes] = glorot;
  param b: f32[classes] = zeros;
  apply_vertex(v, a) { return v.h @ W + b; }
}
model M {
  h = Conv(1, 8)(x);
  out = Score(8, 2)()") +
         readout + "(h) * 0.1);\n  loss = cross_entropy(out, label);\n}\n";
}

llvm::Expected<std::unique_ptr<Model>> compile(const char *readout) {
  CompileOptions co;
  co.training = true;
  return Model::compileSource(model(readout), "paths.saga", co);
}

std::vector<int32_t> range(int32_t lo, int32_t hi) {
  std::vector<int32_t> v;
  for (int32_t i = lo; i < hi; ++i)
    v.push_back(i);
  return v;
}

TEST(GraphTrainer, LearnsWhatASumReadoutTells) {
  GraphDataset d = pathsBySize();
  GraphTrainOptions o;
  o.train.epochs = 80;
  o.train.learningRate = 0.05;
  o.batchSize = 16;
  double accuracy[2];
  for (int k = 0; k < 2; ++k) {
    auto m = compile(k == 0 ? "sum_nodes" : "mean_nodes");
    ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
    (*m)->initParams(1);
    auto r = trainGraphs(**m, d, range(0, 60), range(60, 80), o);
    ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
    ASSERT_EQ(r->history.size(), 80u);
    accuracy[k] = r->history.back().testAcc;
  }
  // The sum counts the vertices; the mean of a constant feature's layer is
  // the same for every path but its ends' share: no better than the
  // majority class by much.
  EXPECT_GE(accuracy[0], 0.95);
  EXPECT_LE(accuracy[1], 0.85);
}

TEST(GraphTrainer, CrossValidatesOverStratifiedFolds) {
  GraphDataset d = pathsBySize();
  GraphTrainOptions o;
  o.train.epochs = 3;
  int compiled = 0;
  auto cv = crossValidate(
      [&]() {
        ++compiled;
        return compile("sum_nodes");
      },
      d, 4, o);
  ASSERT_TRUE(bool(cv)) << llvm::toString(cv.takeError());
  EXPECT_EQ(compiled, 4); // a fresh model per fold
  ASSERT_EQ(cv->folds.size(), 4u);
  ASSERT_EQ(cv->meanTestAcc.size(), 3u);
  double mean = 0;
  for (const GraphTrainResult &f : cv->folds) {
    EXPECT_EQ(f.history.front().fold, int(&f - &cv->folds[0]));
    mean += f.history[1].testAcc / 4;
  }
  EXPECT_NEAR(cv->meanTestAcc[1], mean, 1e-12);
  unsigned best = 1;
  for (unsigned e = 1; e <= 3; ++e)
    if (cv->meanTestAcc[e - 1] > cv->meanTestAcc[best - 1])
      best = e;
  EXPECT_EQ(cv->bestEpoch, best);
}

TEST(GraphTrainer, RefusesWhatItCannotTrain) {
  GraphDataset d = pathsBySize();
  auto m = compile("sum_nodes");
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  (*m)->initParams(0);
  GraphTrainOptions o;
  o.train.epochs = 1;
  auto error = [&](const GraphTrainOptions &opts, std::vector<int32_t> train) {
    auto r = trainGraphs(**m, d, train, {}, opts);
    return r ? std::string("no error") : llvm::toString(r.takeError());
  };
  GraphTrainOptions zero = o;
  zero.batchSize = 0;
  EXPECT_EQ(error(zero, {0}), "the batch size must be positive, not 0");
  EXPECT_EQ(error(o, {}), "no training graphs");
  EXPECT_EQ(error(o, {80}), "graph 80 is not in the dataset (80 graphs)");
  GraphTrainOptions budget = o;
  budget.train.execution.memoryBudget = 1 << 20;
  EXPECT_EQ(error(budget, {0}),
            "graph classification runs in memory: no memory budget");
  GraphDataset wide = d;
  wide.features = Tensor({d.numVertices(), 2});
  auto r = trainGraphs(**m, wide, {0}, {}, o);
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(llvm::toString(r.takeError()),
            "the model's input 'x' has 1 features per vertex; paths has 2");
  auto c = crossValidate([&] { return compile("sum_nodes"); }, d, 81, o);
  ASSERT_FALSE(bool(c));
  EXPECT_EQ(llvm::toString(c.takeError()),
            "cross-validation needs 2 to 80 folds (one graph each at least), "
            "not 81");
}

} // namespace
