//===- TrainingThreadsTest.cpp - training steps with any thread count -----===//
//
// One training step (loss and every gradient) gives the same bits with any
// thread count, over many row blocks and with row blocks cut by the cost
// model; a weight gradient over many row blocks matches plain loops.
//
//===----------------------------------------------------------------------===//

#include "TestRandom.h"
#include "TrainingTestUtil.h"
#include "runtime/distributed/Partitioner.h"
#include "api/Model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace saga;
using namespace sagatest::training;

namespace {

using sagatest::hashString;
using sagatest::Rng;

// A weight gradient on a graph of more than 64 row blocks (40,000 vertices:
// 157 blocks of 256 rows), which the executor forms as the sum of 64 slice
// products: it matches x^T dy formed in double from the closed-form
// cross-entropy gradient, and 1 and 2 threads give the same bits.
TEST(TrainingThreads, WeightGradientOverManyRowBlocks) {
  const int32_t n = 40000;
  const int64_t in = 12, classes = 5;
  std::vector<int32_t> src{0, 1}, dst{1, 2};
  Graph g = Graph::build(n, src, dst, /*addSelfLoops=*/false);
  const char *source = R"(
graph { vertex x: f32[12]; vertex label: class[5]; }
layer L(in: int, out: int) {
  param W: f32[in, out] = glorot;
  apply_vertex(v, a) { return v.h @ W; }
}
model M { out = L(12, 5)(x); loss = cross_entropy(out, label); }
)";
  Tensor grads[2];
  for (unsigned threads : {1u, 2u}) {
    CompileOptions co;
    co.training = true;
    co.threads = threads;
    auto model = Model::compileSource(source, "many_blocks", co);
    ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
    ASSERT_EQ(errorText(bindRandom(**model, g, classes, "many_blocks")), "");
    auto step = (*model)->trainStep({}, 0);
    ASSERT_TRUE(bool(step)) << llvm::toString(step.takeError());
    ASSERT_EQ(step->gradients.size(), 1u);
    grads[threads - 1] = std::move(step->gradients[0].second);
    if (threads == 2)
      continue;
    // The reference: logits = x W, dy = (softmax - onehot) / labelled, over
    // the labelled vertices, dW = x^T dy, all in double. bindRandom draws
    // the same inputs and weight for the same key.
    Model &m = **model;
    Tensor x({n, in}), labels({n}, DType::I32);
    {
      Rng rx(hashString(std::string("many_blocks/input/x")));
      for (int64_t i = 0; i < x.numElements(); ++i)
        x.f32()[i] = float(rx.uniform(-1.0, 1.0));
      Rng rl(hashString(std::string("many_blocks/input/label")));
      for (int64_t i = 0; i < n; ++i)
        labels.i32()[i] = rl.below(6) == 0 ? -1 : rl.below(classes);
    }
    const Tensor &w = *m.param(m.params()[0].name);
    std::vector<double> dw(size_t(in * classes), 0.0);
    int64_t labelled = 0;
    for (int32_t v = 0; v < n; ++v)
      labelled += labels.i32()[v] >= 0;
    for (int32_t v = 0; v < n; ++v) {
      int32_t y = labels.i32()[v];
      if (y < 0)
        continue;
      double logit[5], top = -1e300, sum = 0;
      for (int64_t c = 0; c < classes; ++c) {
        logit[c] = 0;
        for (int64_t k = 0; k < in; ++k)
          logit[c] += double(x.f32()[v * in + k]) * w.f32()[k * classes + c];
        top = std::max(top, logit[c]);
      }
      for (int64_t c = 0; c < classes; ++c)
        sum += std::exp(logit[c] - top);
      for (int64_t c = 0; c < classes; ++c) {
        double dy = (std::exp(logit[c] - top) / sum - (c == y)) /
                    double(labelled);
        for (int64_t k = 0; k < in; ++k)
          dw[size_t(k * classes + c)] += double(x.f32()[v * in + k]) * dy;
      }
    }
    const Tensor &got = grads[0];
    ASSERT_EQ(got.numElements(), in * classes);
    for (int64_t i = 0; i < got.numElements(); ++i)
      EXPECT_NEAR(got.f32()[i], dw[size_t(i)], 1e-5) << "element " << i;
  }
  for (int64_t i = 0; i < grads[0].numElements(); ++i)
    ASSERT_EQ(grads[0].f32()[i], grads[1].f32()[i]) << "1 vs 2 threads at " << i;
}

// One training step (loss, every gradient) gives the same bits with 1, 2,
// 3, 4 and 7 threads (README: "bit-identical results for any thread
// count"): row blocks of uneven sizes, more threads than cores.
TEST(TrainingThreads, ThreadCountsBitIdentical) {
  struct Case {
    std::string name, source;
    int64_t classes;
  };
  std::vector<Case> cases;
  for (const char *file :
       {"gcn.saga", "graphsage.saga", "gin.saga", "ggcn.saga", "gat.saga"})
    cases.push_back(
        {file, readFile(std::string(SAGA_EXAMPLES_DIR "/") + file), 7});
  cases.push_back({"gather_mean", edges("mean", false), 3});
  cases.push_back({"gather_sum_self_loops", edges("sum", true), 3});
  for (const GradCase &c : gradCases())
    if (c.name == "reshape_heads" || c.name == "matmul_per_row" ||
        c.name == "loss_arithmetic" || c.name == "ggcn_small" ||
        c.name == "gat_small_no_self_loops")
      cases.push_back({c.name, c.source, c.classes});
  for (const Case &c : cases) {
    std::vector<TrainStepResult> steps;
    const unsigned counts[] = {1u, 2u, 3u, 4u, 7u};
    for (unsigned threads : counts) {
      CompileOptions co;
      co.training = true;
      co.threads = threads;
      auto model = Model::compileSource(c.source, c.name, co);
      ASSERT_TRUE(bool(model))
          << c.name << ": " << llvm::toString(model.takeError());
      const Graph &g = graphFor("large", (*model)->selfLoops());
      ASSERT_EQ(errorText(bindRandom(**model, g, c.classes, c.name)), "");
      ForwardOptions fo;
      fo.lossMask = lossMask(g);
      auto step = (*model)->trainStep(fo, 31);
      ASSERT_TRUE(bool(step))
          << c.name << ": " << llvm::toString(step.takeError());
      steps.push_back(std::move(*step));
      // Two threads, twice: the same bits again.
      if (threads == 2) {
        auto again = (*model)->trainStep(fo, 31);
        ASSERT_TRUE(bool(again));
        EXPECT_TRUE(
            sameStep(steps.back(), *again, c.name + ", 2 threads twice"));
      }
    }
    for (size_t k = 1; k < steps.size(); ++k)
      EXPECT_TRUE(sameStep(steps[0], steps[k],
                           c.name + ", 1 vs " + std::to_string(counts[k]) +
                               " threads"));
  }
}

// The thread pool's row blocks cut by ROC's cost model instead of equal
// in-edges (ForwardOptions::propagationBlocks): each row is computed the
// same way, and sums over rows are formed per 256-row block either way, so
// the step is the same bits. Blocks that are not on those bounds are
// refused.
TEST(TrainingThreads, CostModelBlocksGiveTheSameBits) {
  for (const char *file : {"gcn.saga", "gat.saga"}) {
    CompileOptions co;
    co.training = true;
    co.threads = 2;
    auto model = Model::compileSource(
        readFile(std::string(SAGA_EXAMPLES_DIR "/") + file), file, co);
    ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
    const Graph &g = graphFor("large", (*model)->selfLoops());
    ASSERT_EQ(errorText(bindRandom(**model, g, 7, file)), "");
    CostModel cost({16, 7});
    cost.setWeights({1, 3, 2, 0, 1});
    std::vector<int64_t> blocks = rowBlocksByCost(g, 7, cost, 256);
    ASSERT_GE(blocks.size(), 3u);
    ForwardOptions fo;
    fo.lossMask = lossMask(g);
    auto plain = (*model)->trainStep(fo, 31);
    fo.propagationBlocks = &blocks;
    auto byCost = (*model)->trainStep(fo, 31);
    ASSERT_TRUE(plain && byCost);
    EXPECT_TRUE(sameStep(*plain, *byCost, std::string(file) + ", cost blocks"));
    std::vector<int64_t> bad{0, 100, g.numVertices};
    fo.propagationBlocks = &bad;
    EXPECT_NE(errorText((*model)->trainStep(fo, 31).takeError()).find(
                  "inner bounds that are multiples of 256"),
              std::string::npos);
  }
}

} // namespace
