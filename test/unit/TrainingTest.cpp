//===- TrainingTest.cpp - gradients against finite differences, accuracy --===//
//
// 1. Gradients. Small models written inline (one per family of ops the
//    autodiff handles), reduced copies of examples/{gcn,graphsage,gin,ggcn,
//    gat}.saga and the example files themselves run on a tiny multigraph
//    (isolated vertices, vertices with out-edges only, self loops and
//    repeated edges in the input). Every parameter's gradient from
//    Model::trainStep must match central finite differences of the loss,
//    (L(p+h) - L(p-h)) / 2h, with L from Model::forward (models without
//    dropout, at -O0 and -O2) or from trainStep itself under a fixed dropout
//    seed (models with dropout: the masks are a function of the seed, so the
//    loss is a deterministic function of the parameters). Max and min
//    gathers also get an exact tie, whose gradient must be split evenly.
//    Parameters inside edge functions (G-GCN at -O0) get sums over the
//    edges.
// 2. Training: GCN on Cora (200 epochs, Adam, seed 0) reaches the paper's
//    test accuracy.
//
// Elsewhere: what the autodiff does not handle yet
// (TrainingNotImplementedTest.cpp), dropout seeds and profiles
// (TrainingDropoutTest.cpp), thread counts (TrainingThreadsTest.cpp) and
// checkpoints (TrainingCheckpointTest.cpp); the models are in
// TrainingModels.cpp, the helpers the files share in TrainingTestUtil.h.
//
//===----------------------------------------------------------------------===//

#include "TrainingTestUtil.h"
#include "runtime/graph/Loaders.h"
#include "api/Model.h"
#include "api/Trainer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace saga;
using namespace sagatest::training;

namespace {

TEST(TrainingSetup, TinyGraph) {
  const Graph &g = graphFor("tiny", false);
  ASSERT_EQ(g.numVertices, 14);
  EXPECT_EQ(g.numEdges, 35);
  std::vector<int64_t> out(14, 0);
  int loops = 0, repeats = 0;
  for (int32_t v = 0; v < 14; ++v)
    for (int64_t i = g.inOffsets[v]; i < g.inOffsets[v + 1]; ++i) {
      ++out[size_t(g.inSources[size_t(i)])];
      loops += g.inSources[size_t(i)] == v;
      repeats += i > g.inOffsets[v] &&
                 g.inSources[size_t(i)] == g.inSources[size_t(i - 1)];
    }
  for (int32_t v = 0; v < 10; ++v)
    EXPECT_GT(g.inDegree(v), 0) << v;
  for (int32_t v : {4, 6, 7, 12, 13})
    EXPECT_EQ(out[size_t(v)], 0) << v;
  for (int32_t v : {10, 11, 12, 13})
    EXPECT_EQ(g.inDegree(v), 0) << v;
  for (int32_t v : {10, 11})
    EXPECT_GT(out[size_t(v)], 0) << v;
  EXPECT_GE(loops, 3);
  EXPECT_GE(repeats, 5);
  EXPECT_GT(graphFor("large", false).inDegree(0), 0);
}

//===----------------------------------------------------------------------===//
// The gradient check
//===----------------------------------------------------------------------===//

// Central differences in f32: the loss is rounded to f32 (~1e-7 relative) and
// its kernels round their sums, so the difference quotient carries noise of
// ~1e-5 at h = 1e-2; its truncation error is ~h^2 (1e-4 relative). A kink
// (relu, abs, leaky_relu) within h of a perturbed pre-activation bends one
// vertex's term by O(h); so while the quotient is not within kCloseAbs +
// kCloseRel * |fd| of the gradient, smaller steps are tried (with one-sided
// quotients too, for a kink closer than any step), and fd is the quotient
// closest to it. An element passes when |g - fd| <= kAbsTol +
// kRelTol * |fd|; a parameter when in addition ||g - fd|| <= kNormTol *
// ||fd|| + 1e-4 over its checked elements, which catches wrong gradients
// too small for the per-element test. No case uses half of its tolerance
// (most use under a fifth; each records the fraction as the property
// tolerance_used), and every deliberate mistake tried in
// passes/Autodiff.cpp (a flipped sign, a missing 1/2 or 1/deg, a wrong
// dropout mask, a gradient dropped or doubled, ...) fails the cases that
// use the rule.
constexpr double kSteps[] = {1e-2, 2e-3, 5e-4};
constexpr double kCloseAbs = 1e-4, kCloseRel = 5e-3;
constexpr double kAbsTol = 2e-3;
constexpr double kRelTol = 3e-2;
constexpr double kNormTol = 2e-2;

struct GradCheckOptions {
  /// Take L from trainStep(seed) (dropout on) instead of forward().
  bool viaTrainStep = false;
  uint64_t seed = 0;
  /// Check at most this many elements of each parameter (evenly spread,
  /// first and last included); 0: all.
  int64_t maxPerParam = 0;
};

/// Compares trainStep's gradients with central differences. Returns the
/// largest fraction of its tolerance an element or a parameter's error norm
/// used (for the record; above 1 is a failure).
double expectGradientsMatch(Model &m, const ForwardOptions &fo,
                            const std::string &what,
                            const GradCheckOptions &o = {}) {
  auto step = m.trainStep(fo, o.seed);
  if (!step) {
    ADD_FAILURE() << what
                  << ": trainStep: " << llvm::toString(step.takeError());
    return NAN;
  }
  std::vector<ValueInfo> params = m.params();
  if (step->gradients.size() != params.size()) {
    ADD_FAILURE() << what << ": " << step->gradients.size() << " gradients for "
                  << params.size() << " parameters";
    return NAN;
  }
  auto loss = [&]() -> double {
    if (o.viaTrainStep) {
      auto r = m.trainStep(fo, o.seed);
      if (!r) {
        ADD_FAILURE() << what << ": " << llvm::toString(r.takeError());
        return NAN;
      }
      return r->loss;
    }
    auto r = m.forward(fo);
    if (!r) {
      ADD_FAILURE() << what << ": " << llvm::toString(r.takeError());
      return NAN;
    }
    if (!r->loss) {
      ADD_FAILURE() << what << ": the model has no loss";
      return NAN;
    }
    return *r->loss;
  };
  if (!o.viaTrainStep) {
    // Without dropout the training forward computes the inference loss.
    double inference = loss();
    EXPECT_LE(std::fabs(step->loss - inference),
              1e-5 * std::max(1.0, std::fabs(inference)))
        << what << ": trainStep's loss " << step->loss << ", forward's "
        << inference;
  }

  const double base = loss(); // at the unperturbed parameters
  double worst = 0;
  for (size_t k = 0; k < params.size(); ++k) {
    const auto &[name, grad] = step->gradients[k];
    const ValueInfo &info = params[k];
    EXPECT_EQ(name, info.name) << what << ": gradient " << k;
    EXPECT_EQ(grad.shape(), info.shape) << what << ": gradient of " << name;
    if (name != info.name || grad.shape() != info.shape)
      continue;
    if (!grad.f32()) {
      ADD_FAILURE() << what << ": the gradient of " << name
                    << " has no storage";
      continue;
    }
    Tensor *p = m.mutableParam(name);
    if (!p) {
      ADD_FAILURE() << what << ": no parameter " << name;
      continue;
    }
    int64_t n = p->numElements();
    std::vector<int64_t> elements;
    if (o.maxPerParam == 0 || n <= o.maxPerParam) {
      for (int64_t i = 0; i < n; ++i)
        elements.push_back(i);
    } else {
      for (int64_t j = 0; j < o.maxPerParam; ++j)
        elements.push_back(j * (n - 1) / (o.maxPerParam - 1));
    }
    double errNorm = 0, fdNorm = 0;
    int bad = 0;
    for (int64_t i : elements) {
      float original = p->f32()[i];
      // fd: the difference quotient closest to g over the steps tried; a
      // smaller step is tried while they are not close. Below the first
      // step the one-sided quotients count too: at a kink within h of the
      // parameter the central quotient averages the two sides, while the
      // gradient is one of them.
      double g = grad.f32()[i], fd = 0, err = INFINITY;
      auto consider = [&](double diff) {
        if (!(std::fabs(g - diff) >= err)) {
          fd = diff;
          err = std::fabs(g - diff);
        }
      };
      for (double h : kSteps) {
        float plus = float(original + h), minus = float(original - h);
        p->f32()[i] = plus;
        double lp = loss();
        p->f32()[i] = minus;
        double lm = loss();
        p->f32()[i] = original;
        consider((lp - lm) / (double(plus) - double(minus)));
        if (h != kSteps[0]) {
          consider((lp - base) / (double(plus) - double(original)));
          consider((base - lm) / (double(original) - double(minus)));
        }
        if (err <= kCloseAbs + kCloseRel * std::fabs(fd))
          break;
      }
      bool ok = err <= kAbsTol + kRelTol * std::fabs(fd);
      errNorm += err * err;
      fdNorm += fd * fd;
      worst = std::max(worst, err / (kAbsTol + kRelTol * std::fabs(fd)));
      if (!ok && ++bad <= 5)
        ADD_FAILURE() << what << ": d loss / d " << name << "[" << i
                      << "]: trainStep gives " << g << ", finite differences "
                      << fd;
    }
    worst = std::max(worst, std::sqrt(errNorm) /
                                (kNormTol * std::sqrt(fdNorm) + 1e-4));
    EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << elements.size()
                      << " elements of " << name << " differ";
    EXPECT_LE(std::sqrt(errNorm), kNormTol * std::sqrt(fdNorm) + 1e-4)
        << what << ": " << name
        << ": ||trainStep - finite differences|| = " << std::sqrt(errNorm)
        << ", ||finite differences|| = " << std::sqrt(fdNorm);
  }
  return worst;
}

class GradientCheck : public testing::TestWithParam<int> {
protected:
  const GradCase &gradCase() const { return gradCases()[size_t(GetParam())]; }
};

// Each case at -O0 (per-row matmuls stay in the kernels) and -O2 (GEMMs,
// operator motion, ...).
TEST_P(GradientCheck, MatchesFiniteDifferences) {
  const GradCase &c = gradCase();
  for (unsigned optLevel : {0u, 2u}) {
    std::string what = c.name + " -O" + std::to_string(optLevel);
    CompileOptions co;
    co.training = true;
    co.optLevel = optLevel;
    auto model = Model::compileSource(c.source, c.name + ".saga", co);
    ASSERT_TRUE(bool(model))
        << what << ": " << llvm::toString(model.takeError());
    Model &m = **model;
    const Graph &g = graphFor("tiny", m.selfLoops());
    ASSERT_EQ(errorText(bindRandom(m, g, c.classes, c.name)), "");
    ForwardOptions fo;
    fo.lossMask = lossMask(g);
    double worst = expectGradientsMatch(m, fo, what);
    RecordProperty("tolerance_used_O" + std::to_string(optLevel),
                   std::to_string(worst));
  }
}

INSTANTIATE_TEST_SUITE_P(Models, GradientCheck,
                         testing::Range(0, int(gradCases().size())),
                         [](const testing::TestParamInfo<int> &info) {
                           return gradCases()[size_t(info.param)].name;
                         });

// The loss mask decides which vertices the loss averages over, in the
// forward and in the gradient alike: no mask (every labelled vertex), and a
// mask that lists vertices more than once.
TEST(GradientCheckMasks, EmptyAndRepeatedMasks) {
  auto m = tinyModel(example(kGcn, "0.0"), "gcn_masks");
  ASSERT_TRUE(m);
  RecordProperty("tolerance_used_no_mask",
                 std::to_string(expectGradientsMatch(*m, ForwardOptions{},
                                                     "gcn_small, no mask")));
  ForwardOptions repeated;
  repeated.lossMask = {0, 0, 3, 3, 3, 5, 12, 9};
  RecordProperty("tolerance_used_repeated",
                 std::to_string(expectGradientsMatch(
                     *m, repeated, "gcn_small, repeated mask")));
}

// Two parameters the loss never reads, of one shape, get the same zero
// gradient value after CSE and the plan returns that value twice: each
// gradient must come back with its own storage and shape (the executor used
// to move the one tensor into the first result and leave the second empty).
TEST(GradientCheckCornerCases, TwoUnusedParametersOfOneShape) {
  auto m = tinyModel(R"(
graph { vertex x: f32[4]; vertex label: class[3]; }
layer L(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param b: f32[out] = zeros;
  param c: f32[out] = zeros;
  apply_vertex(v, a) { return v.h @ W; }
}
model M { out = L(4, 3)(x); loss = cross_entropy(out, label); }
)",
                     "two_unused");
  ASSERT_TRUE(m);
  auto step = m->trainStep({}, 0);
  ASSERT_TRUE(bool(step)) << llvm::toString(step.takeError());
  ASSERT_EQ(step->gradients.size(), 3u);
  for (const auto &[name, grad] : step->gradients) {
    EXPECT_NE(grad.f32(), nullptr) << name;
    EXPECT_EQ(grad.shape(), m->param(name)->shape()) << name;
  }
  expectGradientsMatch(*m, ForwardOptions{}, "two unused parameters");
}

// The adjoint of `a - b` (and of a divisor) negates the gradient: a loss that
// subtracts or divides by a term depending on a parameter needs the
// model-level saga.neg in the CPU runtime.
TEST(GradientCheckCornerCases, LossSubtractingAParameterTerm) {
  auto m = tinyModel(R"(
graph { vertex x: f32[4]; vertex label: class[3]; }
layer L(in: int, out: int) {
  param W: f32[in, out] = glorot;
  apply_vertex(v, a) { return (v.h + a) @ W; }
}
model M {
  out = L(4, 3)(x);
  loss = cross_entropy(out, label) - 0.01 * l2(L#0.W);
}
)",
                     "loss_minus");
  ASSERT_TRUE(m);
  expectGradientsMatch(*m, ForwardOptions{}, "loss = ce - 0.01 * l2(W)");
  auto divided = tinyModel(R"(
graph { vertex x: f32[4]; vertex label: class[3]; }
layer L(in: int, out: int) {
  param W: f32[in, out] = glorot;
  apply_vertex(v, a) { return (v.h + a) @ W; }
}
model M {
  out = L(4, 3)(x);
  loss = cross_entropy(out, label) / (1 + l2(L#0.W));
}
)",
                           "loss_divided");
  ASSERT_TRUE(divided);
  expectGradientsMatch(*divided, ForwardOptions{}, "loss = ce / (1 + l2(W))");
}

// With dropout, trainStep's loss under one seed is a fixed function of the
// parameters: its gradient must match differences of that loss, so the
// backward pass uses the forward's masks.
TEST(GradientCheckDropout, ReducedExamplesWithDropout) {
  struct Case {
    const char *name, *text;
  } cases[] = {{"gcn_dropout", kGcn},
               {"graphsage_dropout", kSage},
               {"gin_dropout", kGin},
               {"ggcn_dropout", kGgcn},
               {"gat_dropout", nullptr}};
  for (const Case &c : cases) {
    auto m =
        tinyModel(c.text ? example(c.text, "0.5") : gat("0.5", true), c.name);
    ASSERT_TRUE(m);
    ForwardOptions fo;
    fo.lossMask = lossMask(graphFor("tiny", m->selfLoops()));
    GradCheckOptions o;
    o.viaTrainStep = true;
    o.seed = 1234;
    RecordProperty(std::string("tolerance_used_") + c.name,
                   std::to_string(expectGradientsMatch(*m, fo, c.name, o)));
  }
}

// The example files themselves (1433 features, 7 classes, dropout as
// written) on the tiny graph, 24 elements of each parameter.
TEST(GradientCheckDropout, ExampleFiles) {
  for (const char *file :
       {"gcn.saga", "graphsage.saga", "gin.saga", "ggcn.saga", "gat.saga"}) {
    CompileOptions co;
    co.training = true;
    auto model =
        Model::compileFile(std::string(SAGA_EXAMPLES_DIR "/") + file, co);
    ASSERT_TRUE(bool(model))
        << file << ": " << llvm::toString(model.takeError());
    Model &m = **model;
    const Graph &g = graphFor("tiny", m.selfLoops());
    ASSERT_EQ(errorText(bindRandom(m, g, 7, file)), "");
    ForwardOptions fo;
    fo.lossMask = lossMask(g);
    GradCheckOptions o;
    o.viaTrainStep = true;
    o.seed = 99;
    o.maxPerParam = 24;
    RecordProperty(std::string("tolerance_used_") + file,
                   std::to_string(expectGradientsMatch(m, fo, file, o)));
  }
}

// An exact tie. Vertex 2 receives x_0 @ W and x_1 @ W, equal because W's
// two rows are equal (x_0 = [1, 0], x_1 = [0, 1]), and x_3 @ W = 0 (x_3 =
// 0). Per feature, the gradient of vertex 2's output goes to the edges
// whose message equals it, split evenly among ties (as torch's
// scatter_reduce amax/amin): half to each row of W where vertices 0 and 1
// tie, nothing where vertex 3's zero wins. Vertices 0, 1 and 3 have no
// in-edges: their output is 0 whatever W is, and no gradient comes from
// them.
TEST(TrainingMaxMinGathers, ExactTieSplitsTheGradientEvenly) {
  const char *source = R"(
graph { vertex x: f32[2]; vertex label: class[2]; }
layer P(in: int, out: int) {
  param W: f32[in, out] = glorot;
  apply_vertex(v, a) { return v.h @ W; }
}
layer G(n: int) { gather($KIND); }
model M { out = G(2)(P(2, 2)(x)); loss = cross_entropy(out, label); }
)";
  static const Graph graph = Graph::build(4, {0, 1, 3}, {2, 2, 2}, false);
  const float w[2] = {0.3f, -0.2f};
  for (const char *kind : {"max", "min"}) {
    bool max = std::string(kind) == "max";
    // Vertex 2's output: the tie wins feature 0 for max (0.3 > 0) and
    // feature 1 for min (-0.2 < 0); vertex 3's zero wins the other.
    int tied = max ? 0 : 1;
    float out2[2] = {max ? w[0] : 0.0f, max ? 0.0f : w[1]};
    for (unsigned optLevel : {0u, 2u}) {
      std::string what = std::string(kind) + " -O" + std::to_string(optLevel);
      CompileOptions co;
      co.training = true;
      co.optLevel = optLevel;
      auto model = Model::compileSource(substitute(source, {{"KIND", kind}}),
                                        "tie.saga", co);
      ASSERT_TRUE(bool(model))
          << what << ": " << llvm::toString(model.takeError());
      Model &m = **model;
      ASSERT_EQ(errorText(m.setGraph(graph)), "");
      Tensor x({4, 2});
      const float xs[8] = {1, 0, 0, 1, 0, 0, 0, 0};
      std::copy(xs, xs + 8, x.f32());
      Tensor label({4}, DType::I32);
      const int32_t labels[4] = {0, 1, 1, 0};
      std::copy(labels, labels + 4, label.i32());
      ASSERT_EQ(errorText(m.setInput("x", std::move(x))), "");
      ASSERT_EQ(errorText(m.setInput("label", std::move(label))), "");
      std::vector<ValueInfo> params = m.params();
      ASSERT_EQ(params.size(), 1u);
      Tensor W({2, 2});
      for (int i = 0; i < 4; ++i)
        W.f32()[i] = w[i % 2];
      ASSERT_EQ(errorText(m.setParam(params[0].name, std::move(W))), "");

      auto fwd = m.forward();
      ASSERT_TRUE(bool(fwd)) << what << ": " << llvm::toString(fwd.takeError());
      for (int j = 0; j < 2; ++j) {
        EXPECT_EQ(fwd->prediction.f32()[2 * 2 + j], out2[j]) << what;
        for (int v : {0, 1, 3})
          EXPECT_EQ(fwd->prediction.f32()[v * 2 + j], 0.0f) << what << v;
      }
      auto step = m.trainStep({}, 0);
      ASSERT_TRUE(bool(step))
          << what << ": " << llvm::toString(step.takeError());
      ASSERT_EQ(step->gradients.size(), 1u);
      const Tensor &dW = step->gradients[0].second;
      ASSERT_EQ(dW.shape(), (std::vector<int64_t>{2, 2}));
      // loss = mean over the 4 labelled vertices; only vertex 2's output
      // depends on W: d loss / d out_2 = (softmax(out_2) - onehot(1)) / 4.
      double e0 = std::exp(double(out2[0])), e1 = std::exp(double(out2[1]));
      double g2[2] = {e0 / (e0 + e1) / 4, (e1 / (e0 + e1) - 1) / 4};
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          double expected = j == tied ? 0.5 * g2[j] : 0.0;
          EXPECT_NEAR(dW.f32()[i * 2 + j], expected, 1e-6)
              << what << ": d loss / d W[" << i << "][" << j << "]";
        }
    }
  }
}

//===----------------------------------------------------------------------===//
// Training GCN on Cora
//===----------------------------------------------------------------------===//

TEST(TrainingAccuracy, GcnOnCora) {
  auto data = loadPlanetoid(SAGA_EXAMPLES_DIR "/data/cora");
  ASSERT_TRUE(bool(data)) << llvm::toString(data.takeError());
  rowNormalize(data->features);
  CompileOptions co;
  co.training = true;
  co.threads = 2;
  auto model = Model::compileFile(SAGA_EXAMPLES_DIR "/gcn.saga", co);
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  Model &m = **model;
  ASSERT_TRUE(m.selfLoops());
  Graph g = Graph::build(data->edges.numVertices, data->edges.src,
                         data->edges.dst, /*addSelfLoops=*/true);
  ASSERT_EQ(errorText(m.setGraph(g)), "");
  ASSERT_EQ(errorText(m.setInput("x", data->features)), "");
  Tensor labels({g.numVertices}, DType::I32);
  std::copy(data->labels.begin(), data->labels.end(), labels.i32());
  ASSERT_EQ(errorText(m.setInput("label", std::move(labels))), "");
  m.initParams(0);

  TrainOptions t;
  t.epochs = 200;
  t.learningRate = 0.01;
  t.optimizer = TrainOptions::Adam;
  t.seed = 0;
  Split split{data->labels, data->train, data->val, data->test};
  unsigned seen = 0;
  auto result = train(m, split, t,
                      [&](const EpochStats &s) { EXPECT_EQ(s.epoch, ++seen); });
  ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
  ASSERT_EQ(result->history.size(), 200u);
  EXPECT_FALSE(result->stoppedEarly);
  const EpochStats &first = result->history.front(), &last = result->final;
  EXPECT_EQ(last.epoch, 200u);
  RecordProperty("test_accuracy", std::to_string(last.testAcc));
  RecordProperty("final_loss", std::to_string(last.loss));
  EXPECT_GE(last.testAcc, 0.79)
      << "GCN on Cora: test accuracy " << last.testAcc;
  EXPECT_GE(last.valAcc, 0.75);
  EXPECT_GE(last.trainAcc, 0.9);
  EXPECT_LT(last.loss, first.loss - 0.8) << "from " << first.loss;
  // The reported accuracy is the model's: recompute it from a forward pass.
  auto eval = m.forward();
  ASSERT_TRUE(bool(eval));
  EXPECT_EQ(accuracy(eval->prediction, data->labels, data->test), last.testAcc);
}

} // namespace
