//===- FusionTest.cpp - fused and unfused propagation agree ---------------===//
//
// Without fuse-propagation (CompileOptions::disabledPasses =
// {"fuse-propagation"}, and at -O0) every propagation runs unfused: an
// edge_map kernel stores each edge's message (and score) in an edge tensor,
// and a second kernel reduces them. Both forms evaluate the same body on the
// same rows and reduce in the same CSR order, and dropout in an edge body is
// keyed by the edge id in both, so every example model (and small models
// with sum, mean, max and min gathers of an edge function reading both ends
// and an edge input) must give the same prediction, loss and gradients at
// -O2 fused and unfused, on a random graph with isolated vertices, in
// inference and in training with dropout (GAT's attention dropout
// included: the same seed draws the same masks). The unfused plan must be
// thread-count independent too, and GAT's unfused plan must contain
// edge_map launches and its fused plan none.
//
//===----------------------------------------------------------------------===//

#include "TestRandom.h"
#include "api/Model.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace saga;

namespace {

using sagatest::hashString;
using sagatest::Rng;

/// 1500 vertices, 12000 random edges into the first 1400 (the last 100 have
/// no in-edges), repeated edges and input self loops among them; several
/// row and edge blocks, so two threads split every kernel. The edges are in
/// random order, so edge ids are not sorted by destination.
const Graph &randomGraph(bool selfLoops) {
  static std::map<bool, std::unique_ptr<Graph>> cache;
  auto &slot = cache[selfLoops];
  if (!slot) {
    Rng rng(2024);
    std::vector<int32_t> src, dst;
    for (int i = 0; i < 12000; ++i) {
      src.push_back(rng.below(1500));
      dst.push_back(rng.below(1400));
    }
    for (int i = 0; i < 20; ++i) { // repeats and input self loops
      src.push_back(src[size_t(i)]);
      dst.push_back(dst[size_t(i)]);
      src.push_back(i);
      dst.push_back(i);
    }
    slot = std::make_unique<Graph>(Graph::build(1500, src, dst, selfLoops));
  }
  return *slot;
}

/// Random inputs (features in [-1, 1), edge values in [0.25, 1.5), labels
/// with about one vertex in six unlabelled) and parameters, deterministic in
/// `key`.
void bindRandom(Model &m, const Graph &g, int64_t classes,
                const std::string &key) {
  ASSERT_FALSE(bool(m.setGraph(g)));
  for (const ValueInfo &in : m.inputs()) {
    Rng rng(hashString(key + "/input/" + in.name));
    std::vector<int64_t> shape{
        in.domain == ValueInfo::Edge ? g.numEdges : int64_t(g.numVertices)};
    shape.insert(shape.end(), in.shape.begin(), in.shape.end());
    Tensor t(shape, in.dtype);
    if (in.dtype == DType::I32) {
      for (int64_t i = 0; i < t.numElements(); ++i)
        t.i32()[i] = rng.below(6) == 0 ? -1 : rng.below(classes);
    } else {
      double lo = in.domain == ValueInfo::Edge ? 0.25 : -1.0;
      double hi = in.domain == ValueInfo::Edge ? 1.5 : 1.0;
      for (int64_t i = 0; i < t.numElements(); ++i)
        t.f32()[i] = float(rng.uniform(lo, hi));
    }
    ASSERT_FALSE(bool(m.setInput(in.name, std::move(t)))) << in.name;
  }
  for (const ValueInfo &p : m.params()) {
    Rng rng(hashString(key + "/param/" + p.name));
    Tensor t(p.shape);
    int64_t n = t.numElements();
    double limit = 0.8;
    if (p.shape.size() >= 2)
      limit = std::sqrt(6.0 / double(p.shape[0] + n / p.shape[0]));
    for (int64_t i = 0; i < n; ++i)
      t.f32()[i] = float(rng.uniform(-limit, limit));
    ASSERT_FALSE(bool(m.setParam(p.name, std::move(t)))) << p.name;
  }
}

std::string readFile(const std::string &path) {
  std::FILE *f = std::fopen(path.c_str(), "rb");
  std::string s;
  if (!f)
    return s;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
    s.append(buf, n);
  std::fclose(f);
  return s;
}

std::string replaceAll(std::string s, const std::string &from,
                       const std::string &to) {
  for (size_t at = 0; (at = s.find(from, at)) != std::string::npos;
       at += to.size())
    s.replace(at, from.size(), to);
  return s;
}

// An edge function reading both ends and an edge input, gathered with
// $KIND; the second layer's gather also feeds a max.
const char *kEdgeModel = R"(
graph$LOOPS {
  vertex x: f32[6];
  vertex label: class[3];
  edge w: f32 = 1.0;
}
layer E(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param U: f32[in, out] = glorot;
  param b: f32[out] = zeros;
  scatter(v) { m = v.h @ W; g = v.h @ U + b; }
  apply_edge(e) {
    return e.src.m * sigmoid(e.dst.g) * e.w + tanh(e.src.g - e.dst.m);
  }
  gather($KIND);
  apply_vertex(v, a) { return a + v.g; }
}
layer Mx(n: int) { gather(max); }
model M {
  h = dropout(relu(E(6, 5)(x)), 0.3);
  out = E(5, 3)(h) + Mx(3)(E(5, 3)(h));
  loss = cross_entropy(out, label);
}
)";

struct Case {
  std::string name, source;
  int64_t classes;
};

std::vector<Case> cases() {
  std::vector<Case> c;
  for (const char *file :
       {"gcn.saga", "graphsage.saga", "gin.saga", "ggcn.saga", "gat.saga"})
    c.push_back({file, readFile(std::string(SAGA_EXAMPLES_DIR "/") + file), 7});
  for (const char *kind : {"sum", "mean", "max", "min"})
    for (bool loops : {false, true})
      c.push_back({std::string("edges_") + kind + (loops ? "_loops" : ""),
                   replaceAll(replaceAll(kEdgeModel, "$KIND", kind), "$LOOPS",
                              loops ? "(self_loops)" : ""),
                   3});
  return c;
}

std::unique_ptr<Model> compile(const Case &c, bool fused, unsigned threads,
                               unsigned optLevel = 2,
                               std::vector<std::string> disabled = {}) {
  CompileOptions co;
  co.training = true;
  co.threads = threads;
  co.optLevel = optLevel;
  co.disabledPasses = std::move(disabled);
  if (!fused)
    co.disabledPasses.push_back("fuse-propagation");
  auto model = Model::compileSource(c.source, c.name, co);
  if (!model) {
    ADD_FAILURE() << c.name << (fused ? " fused" : " unfused") << ": "
                  << llvm::toString(model.takeError());
    return nullptr;
  }
  return std::move(*model);
}

/// The loss mask: two vertices in three.
std::vector<int32_t> lossMask(const Graph &g) {
  std::vector<int32_t> mask;
  for (int32_t v = 0; v < g.numVertices; ++v)
    if (v % 3 != 1)
      mask.push_back(v);
  return mask;
}

/// Largest |a - b| / max(1, |b|) over two tensors of the same shape, or
/// infinity when the shapes differ.
double relativeError(const Tensor &a, const Tensor &b) {
  if (a.shape() != b.shape())
    return INFINITY;
  double worst = 0;
  for (int64_t i = 0; i < a.numElements(); ++i) {
    double x = a.f32()[i], y = b.f32()[i];
    worst = std::max(worst, std::fabs(x - y) / std::max(1.0, std::fabs(y)));
    if (std::isnan(x) != std::isnan(y))
      return INFINITY;
  }
  return worst;
}

bool bitEqual(const Tensor &a, const Tensor &b) {
  return a.shape() == b.shape() &&
         std::memcmp(a.f32(), b.f32(), size_t(a.numElements()) * 4) == 0;
}

// Fused and unfused evaluate the same float operations in the same order,
// and on this machine they agree bit for bit (the largest difference is
// recorded as the property max_relative_difference); the tolerance only
// allows for a JIT contracting a multiply-add differently in the two
// kernels.
constexpr double kTolerance = 1e-5;

/// Compares the fused and unfused plans of `c`: inference, and training
/// steps under two seeds. Returns the largest relative difference.
double expectFusedMatchesUnfused(const Case &c,
                                 const std::vector<std::string> &disabled) {
  double worst = 0;
  auto fused = compile(c, true, 2, 2, disabled),
       unfused = compile(c, false, 2, 2, disabled);
  if (!fused || !unfused)
    return INFINITY;
  const Graph &g = randomGraph(fused->selfLoops());
  bindRandom(*fused, g, c.classes, c.name);
  bindRandom(*unfused, g, c.classes, c.name);
  ForwardOptions fo;
  fo.lossMask = lossMask(g);

  // Inference.
  auto a = fused->forward(fo), b = unfused->forward(fo);
  if (!a || !b) {
    ADD_FAILURE() << c.name << ": "
                  << llvm::toString(a ? b.takeError() : a.takeError());
    return INFINITY;
  }
  worst = std::max(worst, relativeError(b->prediction, a->prediction));
  EXPECT_LE(relativeError(b->prediction, a->prediction), kTolerance);
  EXPECT_TRUE(a->loss && b->loss);
  if (!a->loss || !b->loss)
    return INFINITY;
  EXPECT_NEAR(*b->loss, *a->loss, kTolerance * std::max(1.0, *a->loss));

  // Training with dropout: the same seed, the same masks.
  for (uint64_t seed : {3u, 41u}) {
    auto s = fused->trainStep(fo, seed), t = unfused->trainStep(fo, seed);
    if (!s || !t) {
      ADD_FAILURE() << c.name << ": "
                    << llvm::toString(s ? t.takeError() : s.takeError());
      return INFINITY;
    }
    EXPECT_NEAR(t->loss, s->loss, kTolerance * std::max(1.0, s->loss))
        << "seed " << seed;
    EXPECT_EQ(s->gradients.size(), t->gradients.size());
    if (s->gradients.size() != t->gradients.size())
      return INFINITY;
    for (size_t i = 0; i < s->gradients.size(); ++i) {
      EXPECT_EQ(t->gradients[i].first, s->gradients[i].first);
      double err =
          relativeError(t->gradients[i].second, s->gradients[i].second);
      worst = std::max(worst, err);
      EXPECT_LE(err, kTolerance)
          << "seed " << seed << ": gradient of " << s->gradients[i].first;
    }
  }
  return worst;
}

TEST(Fusion, UnfusedMatchesFusedForwardLossAndGradients) {
  double worst = 0; // recorded: how far from bit-identical the two are
  for (const Case &c : cases()) {
    SCOPED_TRACE(c.name);
    worst = std::max(worst, expectFusedMatchesUnfused(c, {}));
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", worst);
  RecordProperty("max_relative_difference", text);
}

// Parameters inside edge functions: without operator motion G-GCN's edge
// function multiplies by its three weights, whose gradients come from
// per-edge contributions; unfused, those are edge_maps too.
TEST(Fusion, ParametersInsideEdgeFunctions) {
  Case c{"ggcn.saga", readFile(SAGA_EXAMPLES_DIR "/ggcn.saga"), 7};
  expectFusedMatchesUnfused(c, {"operator-motion"});
}

// Attention dropout is on in GAT's training step (the loss differs from
// inference's and across seeds), and the unfused plan draws the same masks:
// the gradients agree for each seed, and a different seed gives different
// gradients in both.
TEST(Fusion, GatAttentionDropoutMasksMatch) {
  Case c{"gat.saga", readFile(SAGA_EXAMPLES_DIR "/gat.saga"), 7};
  auto fused = compile(c, true, 1), unfused = compile(c, false, 1);
  ASSERT_TRUE(fused && unfused);
  const Graph &g = randomGraph(true);
  bindRandom(*fused, g, 7, "gat-dropout");
  bindRandom(*unfused, g, 7, "gat-dropout");
  ForwardOptions fo;
  auto inference = unfused->forward(fo);
  ASSERT_TRUE(bool(inference));
  auto s1 = fused->trainStep(fo, 5), t1 = unfused->trainStep(fo, 5);
  auto s2 = fused->trainStep(fo, 6), t2 = unfused->trainStep(fo, 6);
  ASSERT_TRUE(s1 && t1 && s2 && t2);
  EXPECT_NE(t1->loss, *inference->loss);
  EXPECT_NE(t1->loss, t2->loss);
  for (size_t i = 0; i < s1->gradients.size(); ++i) {
    const std::string &name = s1->gradients[i].first;
    EXPECT_LE(relativeError(t1->gradients[i].second, s1->gradients[i].second),
              kTolerance)
        << name;
    EXPECT_LE(relativeError(t2->gradients[i].second, s2->gradients[i].second),
              kTolerance)
        << name;
    EXPECT_FALSE(bitEqual(t1->gradients[i].second, t2->gradients[i].second))
        << name << ": seeds 5 and 6 gave the same gradient";
  }
}

// Attention dropout draws one mask per edge and head at every level: -O0
// (no operator motion) and -O2 (motion moves the attention terms to the
// vertices but must leave the edge-keyed mask on the edges) agree on the
// training loss and gradients with dropout on.
TEST(Fusion, GatAttentionDropoutIsPerEdgeAtO0AndO2) {
  Case c{"gat.saga", readFile(SAGA_EXAMPLES_DIR "/gat.saga"), 7};
  auto o2 = compile(c, true, 1), o0 = compile(c, true, 1, /*optLevel=*/0);
  ASSERT_TRUE(o2 && o0);
  const Graph &g = randomGraph(true);
  bindRandom(*o2, g, 7, "gat-dropout");
  bindRandom(*o0, g, 7, "gat-dropout");
  ForwardOptions fo;
  auto a = o2->trainStep(fo, 5), b = o0->trainStep(fo, 5);
  ASSERT_TRUE(a && b);
  EXPECT_NEAR(a->loss, b->loss, 1e-5 * std::max(1.0, std::fabs(b->loss)));
  for (size_t i = 0; i < a->gradients.size(); ++i)
    EXPECT_LE(relativeError(b->gradients[i].second, a->gradients[i].second),
              kTolerance)
        << a->gradients[i].first;
}

// What fusion and the memory passes save in the plan's own buffers
// (TrainStepResult::peakBytes): GAT's fused training step stores no edge
// tensor, where the unfused one stores [E, heads, F] messages; recomputing
// input dropout (saga-rematerialize) instead of keeping it for the last
// weight gradient saves about one [V, F] buffer more.
TEST(Fusion, GatTrainingPeakMemory) {
  // With 1433 input features the [V, 1433] input dominates every plan;
  // with 32, as on most large graphs, the per-layer buffers do.
  std::string source = readFile(SAGA_EXAMPLES_DIR "/gat.saga");
  for (size_t at; (at = source.find("1433")) != std::string::npos;)
    source.replace(at, 4, "32");
  Case c{"gat32.saga", source, 7};
  auto fused = compile(c, true, 1), unfused = compile(c, false, 1),
       kept = compile(c, true, 1, 2, {"rematerialize"});
  ASSERT_TRUE(fused && unfused && kept);
  const Graph &g = randomGraph(true);
  for (Model *m : {fused.get(), unfused.get(), kept.get()})
    bindRandom(*m, g, 7, "gat-memory");
  ForwardOptions fo;
  auto a = fused->trainStep(fo, 5), b = unfused->trainStep(fo, 5),
       k = kept->trainStep(fo, 5);
  ASSERT_TRUE(a && b && k);
  size_t row = size_t(g.numVertices) * 4; // bytes of x: [V, 32]
  for (const ValueInfo &in : fused->inputs())
    if (in.name == "x")
      for (int64_t d : in.shape)
        row *= size_t(d);
  EXPECT_GT(a->peakBytes, row) << "the peak cannot be below one [V, F] input";
  EXPECT_LT(a->peakBytes, b->peakBytes) << "fused vs unfused";
  EXPECT_GE(k->peakBytes, a->peakBytes + row / 2) << "rematerialize";
  EXPECT_EQ(a->loss, k->loss) << "recomputed dropout draws the same mask";
  for (size_t i = 0; i < a->gradients.size(); ++i)
    EXPECT_TRUE(bitEqual(a->gradients[i].second, k->gradients[i].second))
        << a->gradients[i].first;
}

// Buffer reuse (kernel results written over operands that die with the
// kernel) changes no bit of a training step's loss, gradients or
// prediction, and lowers the peak of GAT's step by at least half a
// [V, 8 x 8] buffer (the ELU gradient over the incoming gradient, the bias
// gradient's reshape over it, the projection's gradient over the remade
// projection; the remade projection itself already keeps the first layer's
// from the peak of both).
TEST(Fusion, BufferReuseIsExactAndSavesMemory) {
  std::string source = readFile(SAGA_EXAMPLES_DIR "/gat.saga");
  for (size_t at; (at = source.find("1433")) != std::string::npos;)
    source.replace(at, 4, "32");
  Case c{"gat32.saga", source, 7};
  auto m = compile(c, true, 2);
  ASSERT_TRUE(m);
  const Graph &g = randomGraph(true);
  bindRandom(*m, g, 7, "gat-reuse");
  ForwardOptions on, off;
  off.reuseBuffers = false;
  auto a = m->trainStep(on, 5), b = m->trainStep(off, 5);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(std::bit_cast<uint64_t>(a->loss), std::bit_cast<uint64_t>(b->loss));
  for (size_t i = 0; i < a->gradients.size(); ++i)
    EXPECT_TRUE(bitEqual(a->gradients[i].second, b->gradients[i].second))
        << a->gradients[i].first;
  size_t row = size_t(g.numVertices) * 64 * 4; // one [V, 8 heads x 8]
  EXPECT_LE(a->peakBytes + row / 2, b->peakBytes);
  auto fa = m->forward(on), fb = m->forward(off);
  ASSERT_TRUE(fa && fb);
  EXPECT_TRUE(bitEqual(fa->prediction, fb->prediction));
}

// The unfused plans are as deterministic as the fused ones: one and two
// threads give the same bits.
TEST(Fusion, UnfusedThreadsBitIdentical) {
  for (const Case &c : cases()) {
    if (c.name != "gat.saga" && c.name != "ggcn.saga" &&
        c.name != "edges_max_loops" && c.name != "edges_mean")
      continue;
    SCOPED_TRACE(c.name);
    std::vector<TrainStepResult> steps;
    std::vector<Tensor> predictions;
    for (unsigned threads : {1u, 2u}) {
      auto m = compile(c, false, threads);
      ASSERT_TRUE(m);
      const Graph &g = randomGraph(m->selfLoops());
      bindRandom(*m, g, c.classes, c.name);
      ForwardOptions fo;
      fo.lossMask = lossMask(g);
      auto f = m->forward(fo);
      auto s = m->trainStep(fo, 9);
      ASSERT_TRUE(bool(f)) << llvm::toString(f.takeError());
      ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
      predictions.push_back(std::move(f->prediction));
      steps.push_back(std::move(*s));
    }
    EXPECT_TRUE(bitEqual(predictions[0], predictions[1]));
    EXPECT_EQ(std::bit_cast<uint64_t>(steps[0].loss),
              std::bit_cast<uint64_t>(steps[1].loss));
    for (size_t i = 0; i < steps[0].gradients.size(); ++i)
      EXPECT_TRUE(bitEqual(steps[0].gradients[i].second,
                           steps[1].gradients[i].second))
          << steps[0].gradients[i].first;
  }
}

// GAT's fused plan has no edge tensor; unfused, each attention layer is an
// edge_map writing the message and the score per edge, then a softmax_sum
// over them.
TEST(Fusion, PlanHasEdgeMapsOnlyWhenUnfused) {
  Case c{"gat.saga", readFile(SAGA_EXAMPLES_DIR "/gat.saga"), 7};
  auto fused = compile(c, true, 1), unfused = compile(c, false, 1),
       o0 = compile(c, true, 1, /*optLevel=*/0);
  ASSERT_TRUE(fused && unfused && o0);
  auto count = [](const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = 0; (at = text.find(what, at)) != std::string::npos;
         at += what.size())
      ++n;
    return n;
  };
  std::string f = fused->planIR(), u = unfused->planIR(), z = o0->planIR();
  EXPECT_EQ(count(f, "{edge_map}"), 0u);
  EXPECT_EQ(count(f, "!saga.edge<"), 0u);
  EXPECT_EQ(count(u, "{edge_map}"), 2u) << u;
  EXPECT_EQ(count(z, "{edge_map}"), 2u) << z;
  EXPECT_NE(u.find("-> (!saga.edge<8x8xf32>, !saga.edge<8xf32>)"),
            std::string::npos);
  // The reduction reads the stored rows (with epilogue fusion, also the
  // bias it adds after reshaping the heads).
  EXPECT_NE(u.find("{propagate} : (!saga.edge<8x8xf32>, !saga.edge<8xf32>"),
            std::string::npos);
}

} // namespace
