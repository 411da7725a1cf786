//===- ModelReferenceTest.cpp - every example model against plain loops ---===//
//
// Each example model (examples/{gcn,gat,graphsage,gin,ggcn}.saga, and reduced
// copies written inline with small, odd widths) runs through Model::forward on
// three random graphs:
//   small  - a multigraph with isolated vertices, vertices with out-edges
//            only, self loops in the input and repeated edges;
//   hub    - one vertex with in-degree >= 3000;
//   medium - 2000 vertices, 20000 random edges.
// Its prediction (and loss) must match a reference written with plain
// loops in double precision over the test's own edge list (never the CSR,
// never Saga code), to |a - b| <= 1e-4 * max(1, |b|). One and two threads
// must agree bit for bit; -O0 must agree with -O2 within the tolerance.
//
// The reference is in ModelReferenceLoops.cpp, results of 8M elements and
// more in ModelReferenceLargeTest.cpp, the API's error paths in
// ModelApiErrorsTest.cpp; ModelReferenceTestUtil.h holds what they share.
//
//===----------------------------------------------------------------------===//

#include "ModelReferenceTestUtil.h"
#include "TestRandom.h"
#include "api/Model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

using namespace saga;
using namespace sagatest::modelref;

namespace sagatest::modelref {

//===----------------------------------------------------------------------===//
// Random numbers (SplitMix64) and the graphs
//===----------------------------------------------------------------------===//

// 60 vertices: 0..39 receive and send, 40..44 only send (no in-edges),
// 45..59 are isolated. Input self loops (vertex 3 has two) and repeated edges.
EdgeList smallMultigraph() {
  Rng rng(1001);
  EdgeList g;
  g.name = "small";
  g.numVertices = 60;
  for (int i = 0; i < 150; ++i)
    g.add(rng.below(45), rng.below(40));
  for (int i = 0; i < 8; ++i) {
    int32_t v = rng.below(40);
    g.add(v, v);
  }
  g.add(3, 3);
  g.add(3, 3);
  for (int i = 0; i < 6; ++i) {
    int32_t u = rng.below(45), v = rng.below(40);
    for (int k = 0; k < 2 + i % 3; ++k)
      g.add(u, v);
  }
  g.shuffle(rng);
  return g;
}

// 4000 vertices; vertex 1234 receives 3500 edges (from random sources,
// repeats and possibly itself included) and sends 300.
//
// Float32 rounding in the hub's 3500-term sums is the largest source of
// difference from the double reference: with GGCN (sum of gated messages,
// twice) the hub's features grow to ~1e3 and the final Linear cancels them,
// so every out-neighbour of the hub shows the same ~5e-5 relative difference
// in one column (at -O0 ~3e-5) - within 1e-4, and the largest margin in the
// file. Elsewhere the worst is ~1e-5. The worst relative error of each
// comparison is recorded as a test property (--gtest_output=xml).
constexpr int32_t kHub = 1234;
EdgeList hubGraph() {
  Rng rng(2002);
  EdgeList g;
  g.name = "hub";
  g.numVertices = 4000;
  for (int i = 0; i < 3500; ++i)
    g.add(rng.below(4000), kHub);
  for (int i = 0; i < 8000; ++i)
    g.add(rng.below(4000), rng.below(4000));
  for (int i = 0; i < 300; ++i)
    g.add(kHub, rng.below(4000));
  g.shuffle(rng);
  return g;
}

EdgeList mediumGraph() {
  Rng rng(3003);
  EdgeList g;
  g.name = "medium";
  g.numVertices = 2000;
  for (int i = 0; i < 20000; ++i)
    g.add(rng.below(2000), rng.below(2000));
  return g;
}

const std::vector<EdgeList> &edgeLists() {
  static const std::vector<EdgeList> lists{smallMultigraph(), hubGraph(),
                                           mediumGraph()};
  return lists;
}

/// Saga's Graph for an edge list, built once per (list, self loops); it must
/// outlive the models that hold it.
const Graph &sagaGraph(const EdgeList &list, bool selfLoops) {
  static std::map<std::pair<std::string, bool>, std::unique_ptr<Graph>> cache;
  auto &slot = cache[{list.name, selfLoops}];
  if (!slot)
    slot = std::make_unique<Graph>(
        Graph::build(list.numVertices, list.src, list.dst, selfLoops));
  return *slot;
}

//===----------------------------------------------------------------------===//
// The models
//===----------------------------------------------------------------------===//

/// Replaces $NAME (capital letters) by its value.
std::string substitute(const std::string &text,
                       const std::map<std::string, std::string> &values) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '$') {
      out += text[i++];
      continue;
    }
    size_t j = i + 1;
    while (j < text.size() && text[j] >= 'A' && text[j] <= 'Z')
      ++j;
    out += values.at(text.substr(i + 1, j - i - 1));
    i = j;
  }
  return out;
}

// The layers are copied from examples/*.saga; the models differ only in their
// widths (and, where noted, in the graph's self loops or the gather).
const char *kGcnSource = R"(
graph(self_loops) {
  vertex x: f32[$F];
  vertex label: class[$C];
}
layer GCNConv(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param b: f32[out] = zeros;
  scatter(v)         { h = v.h * rsqrt(v.deg); }
  apply_edge(e)      { return e.src.h; }
  gather(sum);
  apply_vertex(v, a) { return (a * rsqrt(v.deg)) @ W + b; }
}
model GCN {
  h = dropout(x, 0.5);
  h = relu(GCNConv($F, $H)(h));
  h = dropout(h, 0.5);
  out = GCNConv($H, $C)(h);
  loss = cross_entropy(out, label) + 5e-4 * l2(GCNConv#0.W);
}
)";

const char *kGatSource = R"(
graph$LOOPS {
  vertex x: f32[$F];
  vertex label: class[$C];
}
layer GATConv(in: int, out: int, heads: int) {
  param W: f32[in, heads, out] = glorot;
  param as: f32[heads, out] = glorot;
  param ad: f32[heads, out] = glorot;
  param b: f32[heads * out] = zeros;
  scatter(v) {
    z = v.h @ W;
    s = sum(z * as, -1);
    d = sum(z * ad, -1);
  }
  apply_edge(e) {
    score = leaky_relu(e.src.s + e.dst.d, 0.2);
    return e.src.z;
  }
  gather(softmax_sum(score, dropout = 0.6));
  apply_vertex(v, a) { return reshape(a, [heads * out]) + b; }
}
model GAT {
  h = dropout(x, 0.6);
  h = elu(GATConv($F, $H, $K)(h));
  h = dropout(h, 0.6);
  out = GATConv($HK, $C, 1)(h);
  loss = cross_entropy(out, label)
       + 5e-4 * (l2(GATConv#0.W) + l2(GATConv#0.as) + l2(GATConv#0.ad)
               + l2(GATConv#0.b) + l2(GATConv#1.W) + l2(GATConv#1.as)
               + l2(GATConv#1.ad) + l2(GATConv#1.b));
}
)";

const char *kSageSource = R"(
graph {
  vertex x: f32[$F];
  vertex label: class[$C];
}
layer SAGEConv(in: int, out: int) {
  param Ws: f32[in, out] = glorot;
  param Wn: f32[in, out] = glorot;
  param b: f32[out] = zeros;
  gather($GATHER);
  apply_vertex(v, a) { return v.h @ Ws + a @ Wn + b; }
}
model GraphSAGE {
  h = dropout(x, 0.5);
  h = relu(SAGEConv($F, $H)(h));
  h = dropout(h, 0.5);
  out = SAGEConv($H, $C)(h);
  loss = cross_entropy(out, label)
       + 5e-4 * (l2(SAGEConv#0.Ws) + l2(SAGEConv#0.Wn));
}
)";

const char *kGinSource = R"(
graph {
  vertex x: f32[$F];
  vertex label: class[$C];
}
layer GINConv(in: int, hidden: int, out: int) {
  param eps: f32 = 0.0;
  param W1: f32[in, hidden] = glorot;
  param b1: f32[hidden] = zeros;
  param W2: f32[hidden, out] = glorot;
  param b2: f32[out] = zeros;
  gather(sum);
  apply_vertex(v, a) {
    return relu(((1 + eps) * v.h + a) @ W1 + b1) @ W2 + b2;
  }
}
model GIN {
  h = dropout(x, 0.5);
  h = relu(GINConv($F, $H, $H)(h));
  h = dropout(h, 0.5);
  out = GINConv($H, $H, $C)(h);
  loss = cross_entropy(out, label)
       + 5e-4 * (l2(GINConv#0.eps) + l2(GINConv#0.W1) + l2(GINConv#0.b1)
               + l2(GINConv#0.W2) + l2(GINConv#0.b2)
               + l2(GINConv#1.eps) + l2(GINConv#1.W1) + l2(GINConv#1.b1)
               + l2(GINConv#1.W2) + l2(GINConv#1.b2));
}
)";

const char *kGgcnSource = R"(
graph {
  vertex x: f32[$F];
  vertex label: class[$C];
}
layer Linear(in: int, out: int) {
  param W: f32[in, out] = glorot;
  apply_vertex(v, a) { return v.h @ W; }
}
layer GatedGCN(d: int) {
  param WH: f32[d, d] = glorot;
  param WC: f32[d, d] = glorot;
  param WS: f32[d, d] = glorot;
  param U: f32[d, d] = glorot;
  apply_edge(e) {
    eta = sigmoid(e.src.h @ WH + e.dst.h @ WC);
    return eta * (e.src.h @ WS);
  }
  gather(sum);
  apply_vertex(v, a) { return relu(v.h @ U + a); }
}
model GGCN {
  h = dropout(x, 0.5);
  h = relu(Linear($F, $H)(h));
  h = GatedGCN($H)(h);
  h = GatedGCN($H)(h);
  h = dropout(h, 0.5);
  out = Linear($H, $C)(h);
  loss = cross_entropy(out, label) + 5e-4 * l2(Linear#0.W);
}
)";

Spec reduced(std::string name, Arch arch, bool selfLoops, int64_t F,
             int64_t H, int64_t C, int64_t heads = 1,
             std::string gather = "mean") {
  std::map<std::string, std::string> values{
      {"F", std::to_string(F)},
      {"H", std::to_string(H)},
      {"C", std::to_string(C)},
      {"K", std::to_string(heads)},
      {"HK", std::to_string(H * heads)},
      {"LOOPS", selfLoops ? "(self_loops)" : ""},
      {"GATHER", gather}};
  const char *text = arch == Arch::GCN    ? kGcnSource
                     : arch == Arch::GAT  ? kGatSource
                     : arch == Arch::SAGE ? kSageSource
                     : arch == Arch::GIN  ? kGinSource
                                          : kGgcnSource;
  return Spec{std::move(name), arch,      "",     substitute(text, values),
              selfLoops,       F,         H,      C,
              heads,           std::move(gather)};
}

Spec example(std::string name, Arch arch, bool selfLoops, int64_t H,
             int64_t heads = 1) {
  std::string file = name + ".saga";
  return Spec{std::move(name), arch, std::move(file), "", selfLoops, 1433, H,
              7, heads, "mean"};
}

const std::vector<Spec> &specs() {
  static const std::vector<Spec> all{
      example("gcn", Arch::GCN, true, 16),
      example("gat", Arch::GAT, true, 8, 8),
      example("graphsage", Arch::SAGE, false, 16),
      example("gin", Arch::GIN, false, 16),
      example("ggcn", Arch::GGCN, false, 64),
      reduced("gcn_reduced", Arch::GCN, true, 37, 13, 5),
      reduced("gat_reduced", Arch::GAT, true, 29, 5, 4, 3),
      // Without self loops: vertices without in-edges gather zeros.
      reduced("gat_noloops", Arch::GAT, false, 29, 5, 4, 3),
      reduced("graphsage_reduced", Arch::SAGE, false, 37, 13, 5),
      reduced("sage_max", Arch::SAGE, false, 19, 9, 3, 1, "max"),
      reduced("sage_min", Arch::SAGE, false, 19, 9, 3, 1, "min"),
      reduced("gin_reduced", Arch::GIN, false, 37, 13, 5),
      reduced("ggcn_reduced", Arch::GGCN, false, 23, 11, 6),
  };
  return all;
}
constexpr int kNumSpecs = 13;
constexpr int kNumGraphs = 3;

} // namespace sagatest::modelref

namespace {

//===----------------------------------------------------------------------===//
// Saga: compiled once per (spec, variant), run once per graph
//===----------------------------------------------------------------------===//

struct Variant {
  unsigned optLevel, threads;
};
constexpr Variant kVariants[] = {{2, 1}, {2, 2}, {0, 1}};
enum { O2T1 = 0, O2T2 = 1, O0T1 = 2 };

/// The compiled model with every parameter set, or null (after reporting).
Model *compiled(int specIndex, int variant) {
  static std::map<std::pair<int, int>, std::unique_ptr<Model>> cache;
  static std::map<std::pair<int, int>, bool> failed;
  auto key = std::make_pair(specIndex, variant);
  if (failed[key])
    return nullptr;
  auto &slot = cache[key];
  if (slot)
    return slot.get();
  const Spec &spec = specs()[size_t(specIndex)];
  CompileOptions options;
  options.optLevel = kVariants[variant].optLevel;
  options.threads = kVariants[variant].threads;
  auto model =
      spec.file.empty()
          ? Model::compileSource(spec.source, spec.name, options)
          : Model::compileFile(SAGA_EXAMPLES_DIR "/" + spec.file, options);
  if (!model) {
    ADD_FAILURE() << spec.name << ": " << llvm::toString(model.takeError());
    failed[key] = true;
    return nullptr;
  }
  EXPECT_EQ((*model)->selfLoops(), spec.selfLoops) << spec.name;
  for (const ValueInfo &info : (*model)->params())
    if (llvm::Error e = (*model)->setParam(
            info.name, randomParam(spec.name, info.name, info.shape))) {
      ADD_FAILURE() << spec.name << ": " << llvm::toString(std::move(e));
      failed[key] = true;
      return nullptr;
    }
  slot = std::move(*model);
  return slot.get();
}

struct Outcome {
  Tensor prediction;
  std::optional<double> loss;
};

std::optional<Outcome> runSaga(int specIndex, int graphIndex, int variant) {
  const Spec &spec = specs()[size_t(specIndex)];
  const EdgeList &list = edgeLists()[size_t(graphIndex)];
  Model *model = compiled(specIndex, variant);
  if (!model)
    return std::nullopt;
  auto check = [&](llvm::Error e) {
    if (!e)
      return true;
    ADD_FAILURE() << spec.name << " on " << list.name << ": "
                  << llvm::toString(std::move(e));
    return false;
  };
  if (!check(model->setGraph(sagaGraph(list, spec.selfLoops))))
    return std::nullopt;
  for (const ValueInfo &info : model->inputs()) {
    if (info.name == "x") {
      EXPECT_EQ(info.shape, (std::vector<int64_t>{spec.F}));
      if (!check(model->setInput("x", randomFeatures(list, spec.F))))
        return std::nullopt;
    } else if (info.name == "label") {
      if (!check(model->setInput("label", randomLabels(list, spec.C))))
        return std::nullopt;
    } else {
      ADD_FAILURE() << spec.name << ": unexpected graph input " << info.name;
    }
  }
  auto result = model->forward();
  if (!result) {
    ADD_FAILURE() << spec.name << " on " << list.name << ": "
                  << llvm::toString(result.takeError());
    return std::nullopt;
  }
  return Outcome{std::move(result->prediction), result->loss};
}

const std::optional<Outcome> &outcome(int specIndex, int graphIndex,
                                      int variant) {
  static std::map<std::tuple<int, int, int>, std::optional<Outcome>> cache;
  auto key = std::make_tuple(specIndex, graphIndex, variant);
  auto it = cache.find(key);
  if (it == cache.end())
    it = cache.emplace(key, runSaga(specIndex, graphIndex, variant)).first;
  return it->second;
}

/// Compares a prediction with expected values; reports the first few
/// mismatches and their count.
void expectClose(const Tensor &got, const Mat &want, const std::string &what) {
  ASSERT_EQ(got.shape(), (std::vector<int64_t>{want.rows, want.cols})) << what;
  static int recorded = 0;
  int64_t bad = 0;
  double worst = 0;
  for (int64_t r = 0; r < want.rows; ++r)
    for (int64_t c = 0; c < want.cols; ++c) {
      double a = got.f32()[r * want.cols + c], b = want(r, c);
      double rel = std::fabs(a - b) / std::max(1.0, std::fabs(b));
      worst = std::isnan(rel) || std::isnan(worst) ? NAN : std::max(worst, rel);
      if (close(a, b))
        continue;
      if (++bad <= 5)
        ADD_FAILURE() << what << ": vertex " << r << " column " << c
                      << ": got " << a << ", expected " << b;
    }
  testing::Test::RecordProperty("worst_relative_error_" + std::to_string(
                                     ++recorded),
                                 what + ": " + std::to_string(worst));
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << want.v.size()
                    << " elements differ (worst relative error " << worst
                    << ")";
}

//===----------------------------------------------------------------------===//
// The parameterised tests: (spec, graph)
//===----------------------------------------------------------------------===//

class ModelReference
    : public testing::TestWithParam<std::tuple<int, int>> {
protected:
  int specIndex() const { return std::get<0>(GetParam()); }
  int graphIndex() const { return std::get<1>(GetParam()); }
  const Spec &spec() const { return specs()[size_t(specIndex())]; }
  std::string what(const char *variant) const {
    return spec().name + " on " + edgeLists()[size_t(graphIndex())].name +
           " (" + variant + ")";
  }
};

TEST_P(ModelReference, MatchesPlainLoops) {
  const Reference &ref = reference(specIndex(), graphIndex());
  Model *model = compiled(specIndex(), O2T1);
  ASSERT_TRUE(model);
  // The reference read exactly the model's parameters, with their shapes.
  std::map<std::string, std::vector<int64_t>> declared;
  for (const ValueInfo &info : model->params())
    declared[info.name] = info.shape;
  EXPECT_EQ(declared, ref.params) << spec().name;

  const auto &got = outcome(specIndex(), graphIndex(), O2T1);
  ASSERT_TRUE(got);
  expectClose(got->prediction, ref.out, what("-O2, 1 thread"));
  ASSERT_TRUE(got->loss) << "the model has a loss";
  EXPECT_TRUE(close(*got->loss, ref.loss))
      << what("-O2, 1 thread") << ": loss " << *got->loss << ", expected "
      << ref.loss;
}

TEST_P(ModelReference, ThreadsBitIdentical) {
  const auto &one = outcome(specIndex(), graphIndex(), O2T1);
  const auto &two = outcome(specIndex(), graphIndex(), O2T2);
  ASSERT_TRUE(one && two);
  ASSERT_EQ(one->prediction.shape(), two->prediction.shape());
  int64_t n = one->prediction.numElements(), differ = 0;
  for (int64_t i = 0; i < n; ++i)
    if (std::bit_cast<uint32_t>(one->prediction.f32()[i]) !=
        std::bit_cast<uint32_t>(two->prediction.f32()[i]) &&
        ++differ <= 5)
      ADD_FAILURE() << what("1 vs 2 threads") << ": element " << i << ": "
                    << one->prediction.f32()[i] << " vs "
                    << two->prediction.f32()[i];
  EXPECT_EQ(differ, 0) << what("1 vs 2 threads");
  ASSERT_TRUE(one->loss && two->loss);
  EXPECT_EQ(std::bit_cast<uint64_t>(*one->loss),
            std::bit_cast<uint64_t>(*two->loss))
      << what("1 vs 2 threads") << ": loss";
  // And a second run with two threads repeats the first.
  auto again = runSaga(specIndex(), graphIndex(), O2T2);
  ASSERT_TRUE(again);
  EXPECT_EQ(std::memcmp(again->prediction.f32(), two->prediction.f32(),
                        size_t(n) * sizeof(float)),
            0)
      << what("2 threads, run twice");
}

TEST_P(ModelReference, O0MatchesO2) {
  const auto &o2 = outcome(specIndex(), graphIndex(), O2T1);
  const auto &o0 = outcome(specIndex(), graphIndex(), O0T1);
  ASSERT_TRUE(o2 && o0);
  expectClose(o0->prediction, toMat(o2->prediction), what("-O0 vs -O2"));
  const Reference &ref = reference(specIndex(), graphIndex());
  expectClose(o0->prediction, ref.out, what("-O0 vs reference"));
  ASSERT_TRUE(o0->loss && o2->loss);
  EXPECT_TRUE(close(*o0->loss, *o2->loss))
      << what("-O0 vs -O2") << ": loss " << *o0->loss << " vs " << *o2->loss;
}

INSTANTIATE_TEST_SUITE_P(
    Models, ModelReference,
    testing::Combine(testing::Range(0, kNumSpecs),
                     testing::Range(0, kNumGraphs)),
    [](const testing::TestParamInfo<std::tuple<int, int>> &info) {
      return specs()[size_t(std::get<0>(info.param))].name + "_" +
             edgeLists()[size_t(std::get<1>(info.param))].name;
    });

TEST(ModelReferenceSetup, SpecListIsComplete) {
  EXPECT_EQ(specs().size(), size_t(kNumSpecs));
  EXPECT_EQ(edgeLists().size(), size_t(kNumGraphs));
}

// The graphs have the features the tests rely on.
TEST(ModelReferenceSetup, GraphShapes) {
  const EdgeList &small = edgeLists()[0];
  std::vector<int> in(size_t(small.numVertices)), out(in);
  int loops = 0;
  std::map<std::pair<int32_t, int32_t>, int> multiplicity;
  for (size_t e = 0; e < small.src.size(); ++e) {
    ++out[size_t(small.src[e])];
    ++in[size_t(small.dst[e])];
    loops += small.src[e] == small.dst[e];
    ++multiplicity[{small.src[e], small.dst[e]}];
  }
  int isolated = 0, sendOnly = 0, repeated = 0;
  for (int32_t v = 0; v < small.numVertices; ++v) {
    isolated += in[size_t(v)] == 0 && out[size_t(v)] == 0;
    sendOnly += in[size_t(v)] == 0 && out[size_t(v)] > 0;
  }
  for (auto &[edge, m] : multiplicity)
    repeated += m > 1;
  EXPECT_GE(isolated, 10);
  EXPECT_GE(sendOnly, 1);
  EXPECT_GE(loops, 8);
  EXPECT_GE(repeated, 6);

  const Graph &hub = sagaGraph(edgeLists()[1], false);
  EXPECT_GE(hub.inDegree(kHub), 3000);
  EXPECT_EQ(sagaGraph(edgeLists()[2], false).numEdges, 20000);
}

} // namespace
