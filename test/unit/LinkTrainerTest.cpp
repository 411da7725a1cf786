//===- LinkTrainerTest.cpp - link prediction learns ----------------------===//
//
// The trainer of api/LinkTrainer.h on a task with a known answer: edges
// join near vertices of a ring, and the features carry the position, so
// dot products of learnt embeddings separate held-out edges from
// non-edges; a model whose output cannot depend on the vertex (a constant)
// must stay at AUC 0.5. Full batch and sampled mini-batches, the same
// negatives for any thread count, and the trainer's errors. (The loss and
// gradients are checked against float64 in test/models/, the command line
// in test/tools/sagac-train-links.test.)
//
//===----------------------------------------------------------------------===//

#include "api/LinkTrainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace saga;

namespace {

constexpr int32_t kVertices = 160;

/// A ring: vertex v joins v + 1, v + 2 and v + 3 (mod 160), and its
/// features are cos(k t), sin(k t) of its angle t for k = 1..4 (with a
/// little noise): near vertices have similar features, so a model can
/// learn embeddings whose dot products are high for near pairs.
EdgeSplit ringSplit(Tensor *features) {
  EdgeList edges;
  edges.numVertices = kVertices;
  for (int32_t u = 0; u < kVertices; ++u)
    for (int32_t d = 1; d <= 3; ++d) {
      int32_t v = (u + d) % kVertices;
      edges.src.insert(edges.src.end(), {u, v});
      edges.dst.insert(edges.dst.end(), {v, u});
    }
  EdgeSplitOptions o;
  o.valFraction = 0.1;
  o.testFraction = 0.2;
  o.seed = 3;
  auto split = splitEdges(edges, o);
  EXPECT_TRUE(bool(split)) << llvm::toString(split.takeError());
  *features = Tensor({kVertices, 8});
  std::mt19937 rng(11);
  std::normal_distribution<float> noise(0.0f, 0.05f);
  for (int32_t v = 0; v < kVertices; ++v)
    for (int k = 0; k < 4; ++k) {
      double t = 2 * M_PI * v / kVertices * (k + 1);
      features->f32()[v * 8 + 2 * k] = float(std::cos(t)) + noise(rng);
      features->f32()[v * 8 + 2 * k + 1] = float(std::sin(t)) + noise(rng);
    }
  return std::move(*split);
}

const char *kSage = R"(
graph { vertex x: f32[8]; }
layer SAGEConv(in: int, out: int) {
  param Ws: f32[in, out] = glorot;
  param Wn: f32[in, out] = glorot;
  param b: f32[out] = zeros;
  gather(mean);
  apply_vertex(v, a) { return v.h @ Ws + a @ Wn + b; }
}
model Link {
  h = relu(SAGEConv(8, 16)(x));
  out = SAGEConv(16, 16)(h);
  loss = pair_bce(out);
}
)";

/// The same shape of model, its output a parameter: one row for all.
const char *kConstant = R"(
graph { vertex x: f32[8]; }
layer Const(out: int) {
  param c: f32[out] = 0.5;
  apply_vertex(v, a) { return c; }
}
model Link {
  out = Const(16)(x);
  loss = pair_bce(out);
}
)";

struct Setup {
  Tensor features;
  EdgeSplit split;
  Graph graph;
  std::unique_ptr<Model> model;
};

std::unique_ptr<Setup> setup(const char *source, bool miniBatch,
                             unsigned threads = 1) {
  auto s = std::make_unique<Setup>();
  s->split = ringSplit(&s->features);
  EdgeList m = s->split.messageGraph();
  s->graph = Graph::build(m.numVertices, m.src, m.dst, false);
  CompileOptions co;
  co.training = true;
  co.miniBatch = miniBatch;
  co.threads = threads;
  auto model = Model::compileSource(source, "link.saga", co);
  EXPECT_TRUE(bool(model)) << llvm::toString(model.takeError());
  s->model = std::move(*model);
  EXPECT_FALSE(bool(s->model->setGraph(s->graph)));
  EXPECT_FALSE(bool(s->model->setInput("x", s->features)));
  s->model->initParams(1);
  return s;
}

LinkTrainOptions options(unsigned epochs) {
  LinkTrainOptions o;
  o.train.epochs = epochs;
  o.train.learningRate = 0.01;
  o.train.seed = 2;
  o.hitsK = 10;
  return o;
}

TEST(LinkTrainer, FullBatchSeparatesHeldOutEdges) {
  auto s = setup(kSage, false);
  auto r = trainLinks(*s->model, s->graph, s->split, options(60));
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_EQ(r->history.size(), 60u);
  const LinkEpochStats &best = r->history[r->bestEpoch - 1];
  EXPECT_GT(best.test.auc, 0.9);
  EXPECT_LT(r->history.back().loss, r->history.front().loss);
  for (const LinkEpochStats &e : r->history)
    EXPECT_LE(e.val.auc, best.val.auc);
}

TEST(LinkTrainer, AConstantOutputCannotRank) {
  auto s = setup(kConstant, false);
  auto r = trainLinks(*s->model, s->graph, s->split, options(5));
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  for (const LinkEpochStats &e : r->history) {
    EXPECT_EQ(e.test.auc, 0.5); // every score tied
    EXPECT_EQ(e.val.auc, 0.5);
  }
}

TEST(LinkTrainer, MiniBatchesSeparateHeldOutEdges) {
  auto s = setup(kSage, true);
  LinkTrainOptions o = options(20);
  o.batchSize = 64;
  o.fanouts = {5, 5};
  o.negatives = 2;
  auto r = trainLinks(*s->model, s->graph, s->split, o);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->history[0].batches,
            int64_t((s->split.trainPos.size() + 63) / 64));
  EXPECT_GT(r->history[r->bestEpoch - 1].test.auc, 0.9);
}

TEST(LinkTrainer, SameLossesForAnyThreadCount) {
  std::vector<double> first;
  for (unsigned threads : {1u, 3u}) {
    auto s = setup(kSage, false, threads);
    auto r = trainLinks(*s->model, s->graph, s->split, options(4));
    ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
    std::vector<double> losses;
    for (const LinkEpochStats &e : r->history)
      losses.push_back(e.loss);
    if (first.empty())
      first = losses;
    else
      EXPECT_EQ(losses, first) << threads << " threads";
  }
}

TEST(LinkTrainer, NegativesAreOtherVerticesAndKeyed) {
  std::vector<int> seen(10, 0);
  for (int64_t i = 0; i < 2000; ++i) {
    int32_t d = negativeDestination(7, 3, i, 0, 4, 10);
    ASSERT_NE(d, 4);
    ASSERT_GE(d, 0);
    ASSERT_LT(d, 10);
    ++seen[size_t(d)];
    EXPECT_EQ(d, negativeDestination(7, 3, i, 0, 4, 10));
  }
  for (int v = 0; v < 10; ++v) {
    if (v != 4) {
      EXPECT_GT(seen[size_t(v)], 150) << "vertex " << v; // ~222 each
    }
  }
  EXPECT_NE(negativeDestination(7, 3, 0, 0, 4, 1000),
            negativeDestination(7, 4, 0, 0, 4, 1000));
}

TEST(LinkTrainer, ErrorsSayWhatIsWrong) {
  auto s = setup(kSage, false);
  EdgeSplit other = s->split;
  other.numVertices = 10;
  auto r = trainLinks(*s->model, s->graph, other, options(1));
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(llvm::toString(r.takeError()),
            "the edge split is over 10 vertices but the graph has 160");
  LinkTrainOptions o = options(1);
  o.negatives = 0;
  r = trainLinks(*s->model, s->graph, s->split, o);
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(llvm::toString(r.takeError()),
            "negatives per positive must be 1 to 65535, not 0");

  // A node classifier has a label input.
  CompileOptions co;
  co.training = true;
  auto nodes = Model::compileSource(R"(
graph { vertex x: f32[8]; vertex label: class[2]; }
layer D(in: int, out: int) { param W: f32[in, out]; apply_vertex(v, a) { return v.h @ W; } }
model M { out = D(8, 2)(x); loss = cross_entropy(out, label); }
)", "nodes.saga", co);
  ASSERT_TRUE(bool(nodes)) << llvm::toString(nodes.takeError());
  r = trainLinks(**nodes, s->graph, s->split, options(1));
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(llvm::toString(r.takeError()),
            "link prediction trains a model whose loss is pair_bce(out); "
            "this model has a label input 'label' (a node classifier)");
}

} // namespace
