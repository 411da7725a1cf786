//===- TrainingTest.cpp - gradients, training accuracy, checkpoints -------===//
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
//    edges. Models the autodiff does not handle yet (max/min reductions,
//    concat, multi-row matmuls) must fail to compile for training with a
//    message saying so. Dropout is a function of the seed; 1 and 2 threads
//    give bit-identical gradients.
// 2. Training: GCN on Cora (200 epochs, Adam, seed 0) reaches the paper's
//    test accuracy.
// 3. Checkpoints: `sagac train` killed with SIGKILL mid-run and resumed ends
//    with the same parameters, bit for bit, as an uninterrupted run (and its
//    log has each epoch once); damaged checkpoint files are errors with a
//    message.
//
//===----------------------------------------------------------------------===//

#include "TestRandom.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/graph/Crc32.h"
#include "runtime/graph/Loaders.h"
#include "runtime/Model.h"
#include "runtime/train/ParamsFile.h"
#include "runtime/train/Trainer.h"
#include "runtime/distributed/Partitioner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace saga;

namespace {

//===----------------------------------------------------------------------===//
// Random numbers, graphs, data
//===----------------------------------------------------------------------===//

using sagatest::hashString;
using sagatest::Rng;

struct EdgeList {
  int32_t numVertices = 0;
  std::vector<int32_t> src, dst;
  void add(int32_t u, int32_t v) {
    src.push_back(u);
    dst.push_back(v);
  }
};

// 14 vertices: 0..9 receive (4, 6 and 7 only receive), 10 and 11 only
// send, 12 and 13 are isolated. Self loops in the input (vertex 2 has two)
// and repeated edges (0 -> 1 three times). TrainingSetup.TinyGraph checks.
EdgeList tinyEdges() {
  Rng rng(77);
  EdgeList g;
  g.numVertices = 14;
  for (int i = 0; i < 26; ++i) {
    int32_t u = rng.below(12), v = rng.below(10);
    g.add(u, v);
  }
  g.add(2, 2);
  g.add(2, 2);
  g.add(5, 5);
  for (int k = 0; k < 3; ++k)
    g.add(0, 1);
  g.add(11, 7);
  g.add(11, 7);
  g.add(10, 3);
  return g;
}

// 3000 vertices, 30000 random edges: several row and edge blocks, so two
// threads split every kernel.
EdgeList largeEdges() {
  Rng rng(4242);
  EdgeList g;
  g.numVertices = 3000;
  for (int i = 0; i < 30000; ++i) {
    int32_t u = rng.below(3000), v = rng.below(3000);
    g.add(u, v);
  }
  return g;
}

/// Graphs live for the whole test program (models keep pointers to them).
const Graph &graphFor(const std::string &which, bool selfLoops) {
  static std::map<std::pair<std::string, bool>, std::unique_ptr<Graph>> cache;
  auto &slot = cache[{which, selfLoops}];
  if (!slot) {
    EdgeList e = which == "tiny" ? tinyEdges() : largeEdges();
    slot = std::make_unique<Graph>(
        Graph::build(e.numVertices, e.src, e.dst, selfLoops));
  }
  return *slot;
}

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

/// Random values for every graph input (features in [-1, 1), edge values in
/// [0.25, 1.5), labels in [0, classes) with about one vertex in six
/// unlabelled) and every parameter (Glorot-like for matrices, [-0.8, 0.8)
/// otherwise). Deterministic in `key`.
llvm::Error bindRandom(Model &m, const Graph &g, int64_t classes,
                       const std::string &key) {
  if (llvm::Error e = m.setGraph(g))
    return e;
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
    if (llvm::Error e = m.setInput(in.name, std::move(t)))
      return e;
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
    if (llvm::Error e = m.setParam(p.name, std::move(t)))
      return e;
  }
  return llvm::Error::success();
}

/// The loss mask of the gradient checks: two vertices in three (an
/// isolated one among them).
std::vector<int32_t> lossMask(const Graph &g) {
  std::vector<int32_t> mask;
  for (int32_t v = 0; v < g.numVertices; ++v)
    if (v % 3 != 1)
      mask.push_back(v);
  return mask;
}

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

std::string errorText(llvm::Error e) {
  return e ? llvm::toString(std::move(e)) : "";
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

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void expectContains(const std::string &text, const std::string &part,
                    const std::string &what = "") {
  EXPECT_NE(text.find(part), std::string::npos)
      << what << ": expected \"" << part << "\" in:\n"
      << text;
}

//===----------------------------------------------------------------------===//
// The models
//===----------------------------------------------------------------------===//

struct GradCase {
  std::string name;
  std::string source;
  int64_t classes = 3;
};

// Elementwise ops: a two-layer model whose apply_vertex computes t from the
// vertex's features v.h, its aggregate a (sum over in-edges) and parameters
// c, d (vectors) and s (a scalar), then t @ W + b.
const char *kElementwise = R"(
graph$LOOPS {
  vertex x: f32[4];
  vertex label: class[3];
}
layer L(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param b: f32[out] = zeros;
  param c: f32[in] = ones;
  param d: f32[in] = zeros;
  param s: f32 = 1.0;
  apply_vertex(v, a) {
    t = $BODY;
    return t @ W + b;
  }
}
model M {
  h = L(4, 5)(x);
  out = L(5, 3)(h);
  loss = cross_entropy(out, label);
}
)";

GradCase elementwise(std::string name, std::string body,
                     bool selfLoops = false) {
  return {
      std::move(name),
      substitute(kElementwise, {{"BODY", std::move(body)},
                                {"LOOPS", selfLoops ? "(self_loops)" : ""}})};
}

// The example models with small widths and dropout rate $DROP (0: the loss
// is deterministic and forward() computes it).
const char *kGcn = R"(
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
  h = dropout(x, $DROP);
  h = relu(GCNConv($F, $H)(h));
  h = dropout(h, $DROP);
  out = GCNConv($H, $C)(h);
  loss = cross_entropy(out, label) + 5e-4 * l2(GCNConv#0.W);
}
)";

const char *kSage = R"(
graph {
  vertex x: f32[$F];
  vertex label: class[$C];
}
layer SAGEConv(in: int, out: int) {
  param Ws: f32[in, out] = glorot;
  param Wn: f32[in, out] = glorot;
  param b: f32[out] = zeros;
  gather(mean);
  apply_vertex(v, a) { return v.h @ Ws + a @ Wn + b; }
}
model GraphSAGE {
  h = dropout(x, $DROP);
  h = relu(SAGEConv($F, $H)(h));
  h = dropout(h, $DROP);
  out = SAGEConv($H, $C)(h);
  loss = cross_entropy(out, label)
       + 5e-4 * (l2(SAGEConv#0.Ws) + l2(SAGEConv#0.Wn));
}
)";

const char *kGin = R"(
graph {
  vertex x: f32[$F];
  vertex label: class[$C];
}
layer GINConv(in: int, out: int) {
  param eps: f32 = 0.0;
  param W1: f32[in, out] = glorot;
  param W2: f32[out, out] = glorot;
  gather(sum);
  apply_vertex(v, a) { return relu(((1 + eps) * v.h + a) @ W1) @ W2; }
}
model GIN {
  h = dropout(x, $DROP);
  h = relu(GINConv($F, $H)(h));
  h = dropout(h, $DROP);
  out = GINConv($H, $C)(h);
  loss = cross_entropy(out, label) + 5e-4 * l2(GINConv#0.W1);
}
)";

// G-GCN: parameters in the edge function, in products that read one end of
// the edge; -O2's operator motion moves them to the vertices.
const char *kGgcn = R"(
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
  h = dropout(x, $DROP);
  h = relu(Linear($F, $H)(h));
  h = GatedGCN($H)(h);
  h = GatedGCN($H)(h);
  h = dropout(h, $DROP);
  out = Linear($H, $C)(h);
  loss = cross_entropy(out, label) + 5e-4 * l2(Linear#0.W);
}
)";

// GAT: per-head attention scores, softmax_sum gather, reshape of the heads.
const char *kGat = R"(
graph$LOOPS {
  vertex x: f32[$F];
  vertex label: class[$C];
}
layer GATConv(in: int, out: int, heads: int) {
  param W: f32[in, heads, out] = glorot;
  param as: f32[heads, out] = glorot;
  param ad: f32[heads, out] = glorot;
  scatter(v) {
    z = v.h @ W;
    s = sum(z * as, -1);
    d = sum(z * ad, -1);
  }
  apply_edge(e) {
    score = leaky_relu(e.src.s + e.dst.d, 0.2);
    return e.src.z;
  }
  gather(softmax_sum(score, dropout = $DROP));
  apply_vertex(v, a) { return reshape(a, [heads * out]); }
}
model GAT {
  h = dropout(x, $DROP);
  h = elu(GATConv($F, $H, $K)(h));
  h = dropout(h, $DROP);
  out = GATConv($HK, $C, 1)(h);
  loss = cross_entropy(out, label)
       + 5e-4 * (l2(GATConv#0.W) + l2(GATConv#0.as) + l2(GATConv#0.ad)
               + l2(GATConv#1.W) + l2(GATConv#1.as) + l2(GATConv#1.ad));
}
)";

/// The reduced GAT: F = 6 features, K heads of H = 3, C = 3 classes.
std::string gat(const std::string &drop, bool selfLoops, int K = 2) {
  return substitute(kGat, {{"F", "6"},
                           {"H", "3"},
                           {"K", std::to_string(K)},
                           {"HK", std::to_string(3 * K)},
                           {"C", "3"},
                           {"DROP", drop},
                           {"LOOPS", selfLoops ? "(self_loops)" : ""}});
}

std::string example(const char *text, const std::string &drop, int F = 6,
                    int H = 5, int C = 3) {
  return substitute(text, {{"F", std::to_string(F)},
                           {"H", std::to_string(H)},
                           {"C", std::to_string(C)},
                           {"DROP", drop}});
}

// Gathers: scattered values read at both ends of an edge, an edge input,
// and the gather $KIND.
const char *kEdges = R"(
graph$LOOPS {
  vertex x: f32[4];
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
model M {
  h = relu(E(4, 5)(x));
  out = E(5, 3)(h);
  loss = cross_entropy(out, label);
}
)";

std::string edges(const std::string &kind, bool selfLoops) {
  return substitute(
      kEdges, {{"KIND", kind}, {"LOOPS", selfLoops ? "(self_loops)" : ""}});
}

// Max and min gathers of a message computed on the edge from parameters
// (relu(e.src.h @ W), gated by the destination): at -O2 operator motion
// moves the products to the vertices; at -O0 they stay on the edge.
const char *kEdgeExtremum = R"(
graph {
  vertex x: f32[4];
  vertex label: class[3];
}
layer X(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param U: f32[in, out] = glorot;
  apply_edge(e) { return relu(e.src.h @ W) * sigmoid(e.dst.h @ U); }
  gather($KIND);
  apply_vertex(v, a) { return a + v.h @ U; }
}
model M {
  h = X(4, 5)(x);
  out = X(5, 3)(tanh(h));
  loss = cross_entropy(out, label);
}
)";

/// The reduced GraphSAGE with a plain gather(KIND) of the features.
std::string sageGather(const std::string &kind, const std::string &drop) {
  std::string source = example(kSage, drop);
  size_t at = source.find("gather(mean)");
  source.replace(at, 12, "gather(" + kind + ")");
  return source;
}

const std::vector<GradCase> &gradCases() {
  static const std::vector<GradCase> all = [] {
    std::vector<GradCase> c{
        // + - * / with broadcasting: scalar with vector, and [1, in] with
        // [in, 1] (both operands broadcast).
        elementwise("add", "(v.h + c) + (a + s) + d"),
        elementwise("add_broadcast",
                    "sum(reshape(v.h + a, [1, in]) + reshape(c, [in, 1]), 0)"
                    " + s + d"),
        elementwise("sub", "(v.h - c) - (s - a) - d"),
        elementwise("sub_broadcast",
                    "sum(reshape(c, [in, 1]) - reshape(v.h * a, [1, in]), 0)"
                    " - d - s"),
        elementwise("mul", "v.h * c * s + a * d"),
        elementwise("mul_broadcast",
                    "sum(reshape(v.h, [1, in]) * reshape(c + a, [in, 1]), 1)"
                    " * s * d"),
        elementwise("div",
                    "(v.h + a) / (c * c + 0.5) + s / (v.h * v.h + d * d + 1)"),
        elementwise("div_broadcast",
                    "sum(reshape(v.h + a, [1, in]) / reshape(c * c + 1, "
                    "[in, 1]), 0) / (s * s + d * d + 1)"),
        elementwise("neg", "-(v.h * c) + -a - -d * s"),
        elementwise("relu", "relu(v.h * c + a + d) * s"),
        elementwise("elu", "elu(v.h * c + a + d) * s"),
        elementwise(
            "leaky_relu",
            "leaky_relu(v.h * c + a + d, 0.2) + leaky_relu(v.h * s - d)"),
        elementwise("sigmoid", "sigmoid(v.h * c + a + d) * s"),
        elementwise("tanh", "tanh(v.h * c + a + d) * s"),
        elementwise("exp", "exp(v.h * c + a * 0.5 + d) * s"),
        elementwise("log",
                    "log(v.h * v.h + c * c + a * a + s * s + d * d + 0.1)"),
        elementwise("rsqrt",
                    "rsqrt(v.h * v.h + c * c + a * a + s * s + d * d + 0.1)"),
        elementwise("abs", "abs(v.h * c + a + d) * s"),
        // The same with the graph's self loops (v.deg and the gather count
        // them).
        elementwise("tanh_self_loops", "tanh(v.h * c + a + d) * s", true),
    };
    // sum and mean reductions over either axis of a [3, 2] value that a
    // rank-1 left side times a rank-3 weight produces.
    c.push_back({"reduce", R"(
graph {
  vertex x: f32[4];
  vertex label: class[3];
}
layer R(in: int) {
  param W: f32[in, 3, 2] = glorot;
  param P: f32[3, 2] = glorot;
  param q: f32[2] = ones;
  apply_vertex(v, a) {
    z = (v.h + a) @ W;
    return sum(z * P, -1) + mean(z * z, 1) + sum(tanh(z) * q * mean(z, 0), 1);
  }
}
model M {
  out = R(4)(x);
  loss = cross_entropy(out, label);
}
)"});
    // reshape and multi-dimensional messages: multi-head values through a
    // mean gather, flattened with reshape.
    c.push_back({"reshape_heads", R"(
graph {
  vertex x: f32[4];
  vertex label: class[3];
}
layer H(in: int, heads: int, out: int) {
  param W: f32[in, heads, out] = glorot;
  param P: f32[heads, out] = glorot;
  scatter(v) { z = v.h @ W; }
  apply_edge(e) { return e.src.z * sigmoid(e.dst.z); }
  gather(mean);
  apply_vertex(v, a) {
    return reshape(a * P, [heads * out]) + reshape(tanh(v.z), [heads * out]);
  }
}
model M {
  h = elu(H(4, 2, 3)(x));
  out = H(6, 1, 3)(h);
  loss = cross_entropy(out, label);
}
)"});
    // Per-row matmuls that stay per row at -O2 (not GEMMs): a weight
    // computed in the body, a rank-1 right side (a dot product) and a
    // parameter on the left.
    c.push_back({"matmul_per_row", R"(
graph {
  vertex x: f32[4];
  vertex label: class[3];
}
layer MM(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param c: f32[in] = ones;
  param d: f32[out] = zeros;
  param s: f32 = 1.0;
  apply_vertex(v, a) {
    return v.h @ (W * s) + (a @ c) * d + c @ reshape(v.h * a, [in, 1]);
  }
}
model M {
  h = MM(4, 5)(x);
  out = MM(5, 3)(tanh(h));
  loss = cross_entropy(out, label);
}
)"});
    // Scatter stage, default apply_edge over a scattered name.
    c.push_back({"scatter", R"(
graph {
  vertex x: f32[4];
  vertex label: class[3];
}
layer S(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param c: f32[in] = ones;
  param b: f32[out] = zeros;
  scatter(v) { m = sigmoid(v.h * c) * v.deg; }
  apply_edge(e) { return e.src.m; }
  gather(sum);
  apply_vertex(v, a) { return (a + v.m) @ W + b; }
}
model M {
  h = S(4, 5)(x);
  out = S(5, 3)(h);
  loss = cross_entropy(out, label);
}
)"});
    for (bool loops : {false, true}) {
      std::string suffix = loops ? "_self_loops" : "";
      c.push_back({"gather_sum" + suffix, edges("sum", loops)});
      c.push_back({"gather_mean" + suffix, edges("mean", loops)});
      // Random features and edge values: no two messages of a vertex tie.
      c.push_back({"gather_max" + suffix, edges("max", loops)});
      c.push_back({"gather_min" + suffix, edges("min", loops)});
    }
    // Parameters on the edge (moved to the vertices at -O2; at -O0 their
    // gradients are sums over the edges).
    for (const char *kind : {"max", "min"})
      c.push_back({std::string("edge_relu_") + kind,
                   substitute(kEdgeExtremum, {{"KIND", kind}})});
    // A parameter applied to values of both ends of an edge, which operator
    // motion cannot move: its gradient is a sum over the edges at -O2 too.
    // Once with the layer's input computed from a parameter, once with a
    // graph input (no backward propagation for the input then).
    c.push_back({"edge_param_both_ends", R"(
graph { vertex x: f32[4]; vertex label: class[3]; }
layer P(in: int) {
  param c: f32[in] = ones;
  apply_vertex(v, a) { return v.h * c; }
}
layer L(in: int, out: int) {
  param W: f32[in, out] = glorot;
  apply_edge(e) { return (e.src.h - e.dst.h) @ W; }
  gather(sum);
}
model M { out = L(4, 3)(P(4)(x)); loss = cross_entropy(out, label); }
)"});
    c.push_back({"edge_param_graph_input", R"(
graph { vertex x: f32[4]; vertex label: class[3]; }
layer L(in: int, out: int) {
  param W: f32[in, out] = glorot;
  apply_edge(e) { return tanh((e.src.h - e.dst.h) @ W); }
  gather(mean);
}
model M { out = L(4, 3)(x); loss = cross_entropy(out, label); }
)"});
    // Model-level arithmetic on vertex values, a value used twice, a layer
    // without a gather, dropout at rate 0, weight decay, and a loss with
    // + - * / (subtracting or dividing by a term that depends on a
    // parameter: GradientCheckCornerCases.LossSubtractingAParameterTerm).
    c.push_back({"loss_arithmetic", R"(
graph {
  vertex x: f32[4];
  vertex label: class[3];
}
layer L(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param b: f32[out] = zeros;
  apply_vertex(v, a) { return (v.h + a) @ W + b; }
}
layer Linear(in: int, out: int) {
  param W: f32[in, out] = glorot;
  apply_vertex(v, a) { return v.h @ W; }
}
model M {
  h = dropout(L(4, 4)(x), 0.0);
  g = tanh(h) * 2 - 0.5 + h * x;
  out = Linear(4, 3)(relu(g) + L(4, 4)(g));
  loss = (cross_entropy(out, label) * 1.5 - 0.25) / 2 + 0.05 * l2(L#0.W)
       + l2(Linear#0.W) / 8 + 0.01 * l2(L#0.b) * (2 + 1);
}
)"});
    // A parameter the loss never reads: its gradient is zero.
    c.push_back({"unused_param", R"(
graph {
  vertex x: f32[4];
  vertex label: class[3];
}
layer L(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param unused: f32[out] = zeros;
  apply_vertex(v, a) { return (v.h + a) @ W; }
}
model M {
  out = L(4, 3)(x);
  loss = cross_entropy(out, label);
}
)"});
    c.push_back({"gcn_small", example(kGcn, "0.0")});
    c.push_back({"graphsage_small", example(kSage, "0.0")});
    // gather(max/min) of the features themselves: the tiny graph's repeated
    // edges (0 -> 1 three times) carry equal messages, which tie exactly
    // and move together under any perturbation.
    c.push_back({"graphsage_max_small", sageGather("max", "0.0")});
    c.push_back({"graphsage_min_small", sageGather("min", "0.0")});
    c.push_back({"gin_small", example(kGin, "0.0")});
    c.push_back({"ggcn_small", example(kGgcn, "0.0", 6, 4, 3), 3});
    // Without self loops some vertices gather from no edge at all.
    c.push_back({"gat_small", gat("0.0", true)});
    c.push_back({"gat_small_no_self_loops", gat("0.0", false, 3)});
    return c;
  }();
  return all;
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

/// A reduced model compiled for training and bound on the tiny graph.
std::unique_ptr<Model> tinyModel(const std::string &source, const char *key,
                                 unsigned threads = 1, int64_t classes = 3) {
  CompileOptions co;
  co.training = true;
  co.threads = threads;
  auto model = Model::compileSource(source, key, co);
  EXPECT_TRUE(bool(model)) << key << ": " << llvm::toString(model.takeError());
  if (!model)
    return nullptr;
  const Graph &g = graphFor("tiny", (*model)->selfLoops());
  EXPECT_EQ(errorText(bindRandom(**model, g, classes, key)), "");
  return std::move(*model);
}

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
// What the autodiff does not handle yet
//===----------------------------------------------------------------------===//

std::string trainingCompileError(const std::string &source,
                                 const std::string &name) {
  CompileOptions co;
  co.training = true;
  auto model = Model::compileSource(source, name, co);
  EXPECT_FALSE(bool(model)) << name << ": compiled for training";
  // The inference plan of the same model compiles.
  auto inference = Model::compileSource(source, name);
  EXPECT_TRUE(bool(inference))
      << name << ": "
      << (inference ? "" : llvm::toString(inference.takeError()));
  return model ? "" : llvm::toString(model.takeError());
}

// GAT's softmax_sum gather has a compiled gradient (checked against finite
// differences in GradientCheckDropout.ExampleFiles); compileFile builds its
// training plan.
TEST(TrainingSoftmax, GatCompilesForTraining) {
  CompileOptions co;
  co.training = true;
  auto model = Model::compileFile(SAGA_EXAMPLES_DIR "/gat.saga", co);
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
}

const char *kReduceMax = R"(
graph { vertex x: f32[4]; vertex label: class[3]; }
layer L(in: int) {
  param W: f32[in, 3, 2] = glorot;
  apply_vertex(v, a) { return $OP(v.h @ W, -1); }
}
model M { out = L(4)(x); loss = cross_entropy(out, label); }
)";

TEST(TrainingNotImplemented, MaxAndMinReductions) {
  for (const char *op : {"max", "min"}) {
    std::string m = trainingCompileError(substitute(kReduceMax, {{"OP", op}}),
                                         "reduce.saga");
    expectContains(m,
                   std::string("reduce.saga:5:31: error: 'saga.reduce' op "
                               "gradient of a ") +
                       op + " reduction is not implemented yet",
                   op);
  }
}

TEST(TrainingNotImplemented, Concat) {
  std::string m = trainingCompileError(R"(
graph { vertex x: f32[4]; vertex label: class[6]; }
layer L(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param U: f32[in, out] = glorot;
  apply_vertex(v, a) { return concat(v.h @ W, a @ U); }
}
model M { out = L(4, 3)(x); loss = cross_entropy(out, label); }
)",
                                       "concat.saga");
  expectContains(m, "concat.saga:6:31: error: 'saga.concat' op has no "
                    "gradient rule yet");
}

TEST(TrainingNotImplemented, MultiRowMatmul) {
  std::string m = trainingCompileError(R"(
graph { vertex x: f32[4]; vertex label: class[3]; }
layer L(in: int) {
  param W: f32[2, 3] = glorot;
  apply_vertex(v, a) { return sum(reshape(v.h, [2, 2]) @ W, 0); }
}
model M { out = L(4)(x); loss = cross_entropy(out, label); }
)",
                                       "matmul.saga");
  expectContains(m, "error: 'saga.matmul' op gradient of a matmul with a "
                    "multi-row left side is not implemented yet");
}

TEST(TrainingNotImplemented, ModelWithoutLoss) {
  std::string m = trainingCompileError(R"(
graph { vertex x: f32[4]; }
layer L(in: int) {
  param W: f32[in, 3] = glorot;
  apply_vertex(v, a) { return v.h @ W; }
}
model M { out = L(4)(x); }
)",
                                       "noloss.saga");
  expectContains(m, "noloss.saga:7:1: error: 'saga.model' op training needs "
                    "a scalar 'loss' result");
}

TEST(TrainingNotImplemented, TrainStepWithoutTrainingPlan) {
  auto model = Model::compileSource(example(kGcn, "0.5"));
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  ASSERT_EQ(errorText(bindRandom(**model, graphFor("tiny", true), 3, "x")), "");
  auto step = (*model)->trainStep({}, 0);
  ASSERT_FALSE(bool(step));
  expectContains(llvm::toString(step.takeError()),
                 "the model was compiled without its training plan "
                 "(CompileOptions::training)");
}

//===----------------------------------------------------------------------===//
// Dropout seeds and threads
//===----------------------------------------------------------------------===//

bool bitEqual(const Tensor &a, const Tensor &b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.f32(), b.f32(), size_t(a.numElements()) * 4) == 0;
}

/// Whether two steps are bit-identical; reports the first difference.
bool sameStep(const TrainStepResult &a, const TrainStepResult &b,
              const std::string &what, bool report = true) {
  if (std::bit_cast<uint64_t>(a.loss) != std::bit_cast<uint64_t>(b.loss)) {
    if (report)
      ADD_FAILURE() << what << ": loss " << a.loss << " vs " << b.loss;
    return false;
  }
  if (a.gradients.size() != b.gradients.size()) {
    if (report)
      ADD_FAILURE() << what << ": gradient counts differ";
    return false;
  }
  for (size_t i = 0; i < a.gradients.size(); ++i) {
    const Tensor &x = a.gradients[i].second, &y = b.gradients[i].second;
    if (a.gradients[i].first != b.gradients[i].first || !bitEqual(x, y)) {
      if (report) {
        int64_t first = 0;
        while (first < std::min(x.numElements(), y.numElements()) &&
               std::bit_cast<uint32_t>(x.f32()[first]) ==
                   std::bit_cast<uint32_t>(y.f32()[first]))
          ++first;
        ADD_FAILURE() << what << ": gradient of " << a.gradients[i].first
                      << " differs at element " << first;
      }
      return false;
    }
  }
  return true;
}

TEST(TrainingDropout, DeterministicPerSeedAndDifferentAcrossSeeds) {
  auto m = tinyModel(example(kGcn, "0.5"), "gcn_seeds");
  ASSERT_TRUE(m);
  ForwardOptions fo;
  fo.lossMask = lossMask(graphFor("tiny", true));
  auto inferenceBefore = m->forward(fo);
  ASSERT_TRUE(bool(inferenceBefore));
  auto a = m->trainStep(fo, 7), b = m->trainStep(fo, 7),
       c = m->trainStep(fo, 8);
  ASSERT_TRUE(a && b && c);
  EXPECT_TRUE(sameStep(*a, *b, "seed 7 twice"));
  EXPECT_FALSE(sameStep(*a, *c, "seeds 7 and 8", /*report=*/false))
      << "dropout under seeds 7 and 8 gave the same step";
  EXPECT_NE(a->loss, c->loss);
  // Dropout is on in training (the loss differs from inference's) and off
  // in inference, which training steps leave unchanged.
  EXPECT_NE(a->loss, *inferenceBefore->loss);
  auto inferenceAfter = m->forward(fo);
  ASSERT_TRUE(bool(inferenceAfter));
  EXPECT_TRUE(
      bitEqual(inferenceBefore->prediction, inferenceAfter->prediction));
  EXPECT_EQ(*inferenceBefore->loss, *inferenceAfter->loss);

  // A model with dropout rate 0 trains on inference's loss, whatever the
  // seed.
  auto plain = tinyModel(example(kGcn, "0.0"), "gcn_seeds");
  ASSERT_TRUE(plain);
  auto p7 = plain->trainStep(fo, 7), p8 = plain->trainStep(fo, 8);
  auto inference = plain->forward(fo);
  ASSERT_TRUE(p7 && p8 && inference);
  EXPECT_TRUE(sameStep(*p7, *p8, "rate 0, seeds 7 and 8"));
  EXPECT_NEAR(p7->loss, *inference->loss, 1e-6);
}

// With ForwardOptions::profile a training step times its plan steps (kernel
// launches, GEMMs, the loss and its gradient), in plan order, and the
// timed steps add up to no more than the step; without it there is no
// profile, and profiling changes no result.
TEST(TrainingProfile, StepsTimedInPlanOrder) {
  auto m = tinyModel(example(kGcn, "0.5"), "gcn_profile");
  ASSERT_TRUE(m);
  ForwardOptions fo;
  fo.lossMask = lossMask(graphFor("tiny", true));
  ForwardOptions profiled = fo;
  profiled.profile = true;
  auto plain = m->trainStep(fo, 7), timed = m->trainStep(profiled, 7);
  ASSERT_TRUE(plain && timed);
  EXPECT_TRUE(plain->profile.empty());
  EXPECT_TRUE(sameStep(*plain, *timed, "profiled vs not"));
  ASSERT_FALSE(timed->profile.empty());
  double total = 0;
  bool launch = false, gradient = false;
  for (const auto &[what, seconds] : timed->profile) {
    EXPECT_GE(seconds, 0) << what;
    total += seconds;
    launch |= what.rfind("launch saga_kernel_", 0) == 0;
    gradient |= what.find("cross_entropy_grad") != std::string::npos;
  }
  EXPECT_TRUE(launch);
  EXPECT_TRUE(gradient) << "the backward's steps are timed too";
  EXPECT_LE(total, timed->seconds * 1.01 + 1e-4);
}

// Dropout at rate p keeps about 1 - p of the elements, and the backward
// pass scales the kept ones by 1 / (1 - p) as the forward did. With x = 1
// and a loss over one vertex v, d loss / d s_j (s a per-feature scale before
// the dropout) is zero exactly where element j of v was dropped and
// (dL/dh_vj) / (1 - p) where it was kept.
TEST(TrainingDropout, KeepsTheExpectedFraction) {
  const char *source = R"(
graph { vertex x: f32[64]; vertex label: class[2]; }
layer Scale(n: int) {
  param s: f32[n] = ones;
  apply_vertex(v, a) { return v.h * s; }
}
layer Linear(in: int, out: int) {
  param W: f32[in, out] = glorot;
  apply_vertex(v, a) { return v.h @ W; }
}
model M {
  h = dropout(Scale(64)(x), 0.25);
  out = Linear(64, 2)(h);
  loss = cross_entropy(out, label);
}
)";
  CompileOptions co;
  co.training = true;
  auto model = Model::compileSource(source, "dropout.saga", co);
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  Model &m = **model;
  const Graph &g = graphFor("large", false);
  ASSERT_EQ(errorText(bindRandom(m, g, 2, "dropout")), "");
  Tensor ones({g.numVertices, 64});
  std::fill(ones.f32(), ones.f32() + ones.numElements(), 1.0f);
  ASSERT_EQ(errorText(m.setInput("x", std::move(ones))), "");
  Tensor labels({g.numVertices}, DType::I32);
  std::fill(labels.i32(), labels.i32() + g.numVertices, 1);
  ASSERT_EQ(errorText(m.setInput("label", std::move(labels))), "");
  Tensor s({64});
  std::fill(s.f32(), s.f32() + 64, 1.0f);
  ASSERT_EQ(errorText(m.setParam("Scale#0.s", std::move(s))), "");
  const Tensor *W = m.param("Linear#0.W");
  ASSERT_TRUE(W);
  int64_t kept = 0, total = 0;
  for (int32_t v = 0; v < 400; ++v) {
    ForwardOptions fo;
    fo.lossMask = {v};
    auto step = m.trainStep(fo, 5);
    ASSERT_TRUE(bool(step)) << llvm::toString(step.takeError());
    ASSERT_EQ(step->gradients[0].first, "Scale#0.s");
    const Tensor &gs = step->gradients[0].second;
    // dL/dh_vj = sum_k W[j][k] (p_k - y_k) = (W[j][0] - W[j][1]) p0: with
    // two classes and label 1, p - y = (p0, -p0).
    double ratio = 0;
    for (int64_t j = 0; j < 64; ++j) {
      ++total;
      if (gs.f32()[j] == 0)
        continue;
      ++kept;
      double dh = W->f32()[j * 2] - W->f32()[j * 2 + 1];
      if (ratio == 0)
        ratio = gs.f32()[j] / dh; // p0 / (1 - p), the same for every j
      EXPECT_NEAR(gs.f32()[j] / dh, ratio, 1e-4 * std::fabs(ratio))
          << "vertex " << v << " element " << j;
    }
    // The kept elements give the training forward's logits, W's rows
    // scaled by 1 / (1 - p), and so p0: the ratio is p0 / (1 - p).
    double z0 = 0, z1 = 0;
    for (int64_t j = 0; j < 64; ++j)
      if (gs.f32()[j] != 0) {
        z0 += W->f32()[j * 2] / 0.75;
        z1 += W->f32()[j * 2 + 1] / 0.75;
      }
    double p0 = 1 / (1 + std::exp(z1 - z0));
    EXPECT_NEAR(ratio, p0 / 0.75, 1e-4 * (p0 / 0.75)) << "vertex " << v;
  }
  double fraction = double(kept) / double(total);
  EXPECT_NEAR(fraction, 0.75, 0.02) << kept << " of " << total << " kept";
}

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

//===----------------------------------------------------------------------===//
// Checkpoints: sagac train killed and resumed
//===----------------------------------------------------------------------===//

/// A folder for one test's files, removed afterwards.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string &name) {
    path = std::filesystem::path(testing::TempDir()) /
           ("saga-training-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string operator/(const std::string &file) const {
    return (path / file).string();
  }
};

/// Starts `args` with stdout and stderr to `output`; returns the pid.
pid_t spawn(const std::vector<std::string> &args, const std::string &output) {
  std::vector<char *> argv;
  for (const std::string &a : args)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, output.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0) << "cannot start " << args[0] << ": " << std::strerror(rc);
  return rc == 0 ? pid : -1;
}

/// Waits for `pid`; returns its wait status.
int waitFor(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

struct Outcome {
  int exitCode = -1; // -1: killed by a signal
  std::string output;
};

Outcome runSagac(const std::vector<std::string> &args,
                 const std::string &outputFile) {
  std::vector<std::string> full{SAGA_TOOLS_DIR "/sagac"};
  full.insert(full.end(), args.begin(), args.end());
  pid_t pid = spawn(full, outputFile);
  Outcome o;
  if (pid < 0)
    return o;
  int status = waitFor(pid);
  o.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.output = readFile(outputFile);
  return o;
}

std::vector<std::string> trainArgs(const std::string &ckpt,
                                   const std::string &params, unsigned epochs) {
  return {"train",         SAGA_EXAMPLES_DIR "/gcn.saga",
          "--data",        SAGA_EXAMPLES_DIR "/data/cora",
          "--epochs",      std::to_string(epochs),
          "--seed",        "0",
          "--threads",     "2",
          "--checkpoint",  ckpt,
          "--save-params", params};
}

/// Starts `sagac args`, polls `ckpt` until it records epoch >= `killAfter`
/// and kills the process with SIGKILL. Every checkpoint read meanwhile must
/// load (it is written to a temporary file and renamed) and epochs never go
/// back. Returns the epoch of the checkpoint left behind, or 0 (and a
/// failure) when that did not work out.
uint64_t startAndKill(const std::vector<std::string> &sagacArgs,
                      const std::string &ckpt, const std::string &output,
                      uint64_t killAfter) {
  std::vector<std::string> args{SAGA_TOOLS_DIR "/sagac"};
  args.insert(args.end(), sagacArgs.begin(), sagacArgs.end());
  pid_t pid = spawn(args, output);
  if (pid <= 0)
    return 0;
  uint64_t seen = 0;
  bool exited = false, torn = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline && !torn) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    if (std::filesystem::exists(ckpt)) {
      auto c = loadCheckpoint(ckpt);
      if (!c) {
        ADD_FAILURE() << "a checkpoint read while training: "
                      << llvm::toString(c.takeError());
        torn = true;
        break;
      }
      EXPECT_GE(c->epoch, seen) << "the checkpoint went back";
      seen = c->epoch;
      if (seen >= killAfter)
        break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (exited) {
    ADD_FAILURE() << "training ended before it could be killed:\n"
                  << readFile(output);
    return 0;
  }
  ::kill(pid, SIGKILL);
  int status = waitFor(pid);
  if (torn)
    return 0;
  if (seen < killAfter) {
    ADD_FAILURE() << "no checkpoint of epoch " << killAfter << " in 120 s";
    return 0;
  }
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  auto c = loadCheckpoint(ckpt);
  if (!c) {
    ADD_FAILURE() << "the checkpoint after the kill: "
                  << llvm::toString(c.takeError());
    return 0;
  }
  return c->epoch;
}

TEST(TrainingCheckpoint, KilledAndResumedRunMatchesUninterrupted) {
  constexpr unsigned kEpochs = 30, kKillAfter = 10;
  TempDir dir("resume");

  // The uninterrupted run.
  Outcome full =
      runSagac(trainArgs(dir / "full.ckpt", dir / "full.params", kEpochs),
               dir / "full.out");
  ASSERT_EQ(full.exitCode, 0) << full.output;
  expectContains(full.output, "final (epoch 30)");

  // The same run, killed once its checkpoint has passed epoch 10.
  uint64_t atKill = startAndKill(
      trainArgs(dir / "killed.ckpt", dir / "killed.params", kEpochs),
      dir / "killed.ckpt", dir / "killed.out", kKillAfter);
  ASSERT_GE(atKill, kKillAfter);
  ASSERT_LT(atKill, kEpochs);
  EXPECT_FALSE(std::filesystem::exists(dir / "killed.params"));
  RecordProperty("killed_after_epoch", std::to_string(atKill));

  // Resumed: it continues at the next epoch and ends where the
  // uninterrupted run ended, bit for bit.
  std::vector<std::string> resumeArgs =
      trainArgs(dir / "killed.ckpt", dir / "killed.params", kEpochs);
  resumeArgs.push_back("--resume");
  Outcome resumed = runSagac(resumeArgs, dir / "resumed.out");
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
  char firstLine[32];
  std::snprintf(firstLine, sizeof firstLine, "epoch %4u/%u",
                unsigned(atKill + 1), kEpochs);
  expectContains(resumed.output, firstLine, "the resumed run");
  char before[32];
  std::snprintf(before, sizeof before, "epoch %4u/%u", unsigned(atKill),
                kEpochs);
  EXPECT_EQ(resumed.output.find(before), std::string::npos)
      << "the resumed run repeated epoch " << atKill;
  expectContains(resumed.output, "final (epoch 30)");

  // The parameter files (every value with 9 significant digits, which
  // identify an f32) are byte-identical.
  std::string a = readFile(dir / "full.params"),
              b = readFile(dir / "killed.params");
  EXPECT_GT(a.size(), 1433u * 16u * 9u);
  expectContains(a, "\nGCNConv#1.b 7\n");
  EXPECT_TRUE(a == b) << "the resumed run's parameters differ from the "
                         "uninterrupted run's";
  // The final checkpoints (parameters and Adam's moments) agree too.
  EXPECT_TRUE(readFile(dir / "full.ckpt") == readFile(dir / "killed.ckpt"))
      << "final checkpoints differ";
}

/// A small checkpoint, as bytes.
std::string smallCheckpointBytes(const TempDir &dir) {
  Checkpoint c;
  c.epoch = 3;
  c.step = 3;
  for (NamedTensors *ts : {&c.params, &c.moment1, &c.moment2}) {
    Tensor w({2, 3}), b({3});
    for (int i = 0; i < 6; ++i)
      w.f32()[i] = float(i) * 0.5f;
    ts->emplace_back("L#0.W", std::move(w));
    ts->emplace_back("L#0.b", std::move(b));
  }
  EXPECT_EQ(errorText(saveCheckpoint(dir / "small.ckpt", c)), "");
  return readFile(dir / "small.ckpt");
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

TEST(TrainingCheckpoint, RoundTrip) {
  TempDir dir("roundtrip");
  std::string bytes = smallCheckpointBytes(dir);
  auto c = loadCheckpoint(dir / "small.ckpt");
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->epoch, 3u);
  EXPECT_EQ(c->step, 3u);
  ASSERT_EQ(c->params.size(), 2u);
  EXPECT_EQ(c->params[0].first, "L#0.W");
  EXPECT_EQ(c->params[0].second.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(c->params[0].second.f32()[5], 2.5f);
  EXPECT_EQ(c->moment2[1].second.shape(), (std::vector<int64_t>{3}));
  // Saving leaves no temporary file behind.
  EXPECT_FALSE(std::filesystem::exists(dir / "small.ckpt.tmp"));
}

/// A file cut short mid-tensor reads as a shape larger than the bytes left:
/// "truncated checkpoint" or "damaged checkpoint (... impossible shape)";
/// from version 3 the checksum says so first.
void expectTruncatedOrDamaged(const std::string &message,
                              const std::string &what) {
  EXPECT_TRUE(message.find("truncated checkpoint") != std::string::npos ||
              message.find("damaged checkpoint") != std::string::npos ||
              message.find("checksum mismatch: the checkpoint is damaged or "
                           "truncated") != std::string::npos)
      << what << ": " << message;
}

/// A version 3 checkpoint as version 2 wrote it (no checksum): what the
/// structural checks behind the checksum still see in old files.
std::string asVersion2(std::string v3) {
  uint64_t two = 2;
  v3.replace(8, 8, reinterpret_cast<const char *>(&two), 8);
  return v3.substr(0, v3.size() - 8);
}

TEST(TrainingCheckpoint, TruncatedAtEveryLength) {
  TempDir dir("truncated");
  std::string bytes = smallCheckpointBytes(dir);
  ASSERT_GT(bytes.size(), 100u);
  for (size_t n = 0; n < bytes.size(); ++n) {
    writeFile(dir / "cut.ckpt", bytes.substr(0, n));
    auto c = loadCheckpoint(dir / "cut.ckpt");
    ASSERT_FALSE(bool(c)) << "a checkpoint cut to " << n << " of "
                          << bytes.size() << " bytes loaded";
    std::string m = llvm::toString(c.takeError());
    expectContains(m, dir / "cut.ckpt", std::to_string(n) + " bytes");
    if (n < 8)
      expectContains(m, "not a Saga checkpoint", std::to_string(n) + " bytes");
    else
      expectTruncatedOrDamaged(m, std::to_string(n) + " bytes");
  }
}

TEST(TrainingCheckpoint, DamagedHeaders) {
  TempDir dir("damaged");
  std::string bytes = smallCheckpointBytes(dir);
  auto load = [&](std::string damaged) {
    writeFile(dir / "bad.ckpt", damaged);
    auto c = loadCheckpoint(dir / "bad.ckpt");
    EXPECT_FALSE(bool(c)) << "a damaged checkpoint loaded";
    return c ? std::string() : llvm::toString(c.takeError());
  };
  auto setU64 = [](std::string s, size_t at, uint64_t v) {
    // (replace rather than memcpy into s.data(): g++ 12 at -O3 reports a
    // false stringop-overflow for the latter)
    char raw[8];
    std::memcpy(raw, &v, 8);
    s.replace(at, 8, raw, 8);
    return s;
  };
  std::string text = "GCNConv#0.W 2 2\n1 2 3 4\n";
  expectContains(load(text), "not a Saga checkpoint");
  std::string wrongMagic = bytes;
  wrongMagic[3] = 'X';
  expectContains(load(wrongMagic), "not a Saga checkpoint");
  expectContains(load(setU64(bytes, 8, 5)),
                 "checkpoint version 5 is not supported (expected 1 to 4)");
  // A version 3 file (its checksum over the size modulo 2^32, the same
  // below 4 GiB) still loads.
  {
    std::string v3 = setU64(bytes, 8, 3);
    uint64_t crc = crc32Zlib(0, v3.data(), v3.size() - 8);
    v3 = setU64(v3, v3.size() - 8, crc);
    writeFile(dir / "v3.ckpt", v3);
    auto c = loadCheckpoint(dir / "v3.ckpt");
    EXPECT_TRUE(bool(c)) << llvm::toString(c.takeError());
  }
  // Any flipped byte, anywhere, is a checksum mismatch.
  for (size_t at = 16; at < bytes.size(); at += 7) {
    std::string flipped = bytes;
    flipped[at] ^= 0x10;
    expectContains(load(flipped), "checksum mismatch: the checkpoint is "
                                  "damaged or truncated");
  }
  // The structure behind the checksum, as version 2 files (none) reach it.
  bytes = asVersion2(bytes);
  // Offsets: magic 0, version 8, epoch 16, step 24, best validation
  // accuracy 32, epochs since 40, tensor count 48, first name length 56.
  expectTruncatedOrDamaged(load(setU64(bytes, 48, uint64_t(1) << 40)),
                           "tensor count 2^40");
  expectContains(load(setU64(bytes, 56, ~uint64_t(0))), "truncated checkpoint");
  expectContains(load(setU64(bytes, 56, 1000)), "truncated checkpoint");
  // Rank (after the 5-byte name "L#0.W" at 64) and the first dimension.
  expectTruncatedOrDamaged(load(setU64(bytes, 69, uint64_t(1) << 50)),
                           "rank 2^50");
  expectTruncatedOrDamaged(load(setU64(bytes, 77, uint64_t(1) << 40)),
                           "dimension 2^40");
  // A version 1 file (no early-stopping state) still loads: drop those 16
  // bytes and set the version.
  std::string v1 = setU64(bytes, 8, 1);
  v1.erase(32, 16);
  writeFile(dir / "v1.ckpt", v1);
  auto old = loadCheckpoint(dir / "v1.ckpt");
  ASSERT_TRUE(bool(old)) << llvm::toString(old.takeError());
  EXPECT_EQ(old->bestVal, -1.0);
  EXPECT_EQ(old->sinceBest, 0u);
  EXPECT_TRUE(bool(loadCheckpoint(dir / "small.ckpt")));
}

TEST(TrainingCheckpoint, CorruptCheckpointsAtTheCommandLine) {
  TempDir dir("cli");
  // A real checkpoint of GCN on Cora, after one epoch.
  Outcome first =
      runSagac(trainArgs(dir / "gcn.ckpt", dir / "p1", 1), dir / "first.out");
  ASSERT_EQ(first.exitCode, 0) << first.output;
  std::string bytes = readFile(dir / "gcn.ckpt");
  ASSERT_GT(bytes.size(), 1000u);

  auto resume = [&](const std::string &ckpt, const std::string &name) {
    std::vector<std::string> args = trainArgs(ckpt, dir / "p2", 3);
    args.push_back("--resume");
    return runSagac(args, dir / (name + ".out"));
  };
  struct Case {
    std::string name, bytes, message;
  } cases[] = {
      {"half", bytes.substr(0, bytes.size() / 2), ""}, // truncated or damaged
      {"text", "hello\n", "not a Saga checkpoint"},
  };
  for (const Case &c : cases) {
    writeFile(dir / (c.name + ".ckpt"), c.bytes);
    Outcome o = resume(dir / (c.name + ".ckpt"), c.name);
    EXPECT_EQ(o.exitCode, 1) << c.name << ":\n" << o.output;
    std::string prefix = "sagac: error: " + dir / (c.name + ".ckpt") + ": ";
    expectContains(o.output, prefix + c.message, c.name);
    if (c.message.empty())
      expectTruncatedOrDamaged(o.output.substr(o.output.find(prefix)), c.name);
  }
  // A missing checkpoint.
  Outcome missing = resume(dir / "none.ckpt", "none");
  EXPECT_EQ(missing.exitCode, 1);
  expectContains(missing.output,
                 "sagac: error: cannot open checkpoint " + dir / "none.ckpt");

  // A checkpoint of another model: its shapes do not fit.
  Outcome other =
      runSagac({"train", SAGA_EXAMPLES_DIR "/graphsage.saga", "--data",
                SAGA_EXAMPLES_DIR "/data/cora", "--epochs", "1", "--threads",
                "2", "--checkpoint", dir / "sage.ckpt"},
               dir / "sage.out");
  ASSERT_EQ(other.exitCode, 0) << other.output;
  Outcome wrongModel = resume(dir / "sage.ckpt", "wrong_model");
  EXPECT_EQ(wrongModel.exitCode, 1) << wrongModel.output;
  expectContains(wrongModel.output,
                 "sagac: error: the checkpoint has no state for parameter "
                 "'GCNConv#0.W'");

  // The damaged files were left alone and the good one still resumes.
  Outcome good = resume(dir / "gcn.ckpt", "good");
  EXPECT_EQ(good.exitCode, 0) << good.output;
  expectContains(good.output, "epoch    2/3");
}

// saveParamsFile names every layer parameter Layer#k.name; loadParamsFile
// reads those names back ('#' starts a comment only at the start of a
// token), so `sagac train --save-params` output works with `sagac run
// --params`.
TEST(TrainingCheckpoint, ParamsFileRoundTrip) {
  TempDir dir("params");
  Tensor w({2, 3}), b({3});
  for (int i = 0; i < 6; ++i)
    w.f32()[i] = float(i) / 3;
  NamedTensors params;
  params.emplace_back("GCNConv#0.W", w);
  params.emplace_back("GCNConv#0.b", b);
  std::string path = dir / "params.txt";
  ASSERT_EQ(errorText(saveParamsFile(path, params)), "");
  auto back = loadParamsFile(path);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0].first, "GCNConv#0.W");
  EXPECT_TRUE(std::memcmp((*back)[0].second.f32(), w.f32(), 24) == 0);
}

// Found by the params fuzzer (test/fuzz): a header declaring far more
// values than the file holds allocated them first (3.4 GB for a 130-byte
// file), and dimensions whose product overflows wrapped. Both are refused
// at the header line.
TEST(TrainingCheckpoint, ParamsFileShapeLargerThanTheFile) {
  TempDir dir("params-shape");
  std::string path = dir / "params.txt";
  writeFile(path, "# saga parameters\nLin#0.W 853220105\n0.5 1\n");
  EXPECT_EQ(errorText(loadParamsFile(path).takeError()),
            path + ":2: 'Lin#0.W' declares 853220105 values; the 7 bytes "
                   "left in the file hold at most 4");
  writeFile(path, "L.W 4294967296 4294967296 4294967296\n1\n");
  EXPECT_EQ(errorText(loadParamsFile(path).takeError()),
            path + ":1: 'L.W' declares 18446744073709551615 values; the 3 "
                   "bytes left in the file hold at most 2");
}

// A dimension with its sign bit set (one flipped bit), or dimensions whose
// product overflows, are a damaged checkpoint with a message (the size check
// used to wrap in uint64 arithmetic and Tensor's constructor then aborted the
// process).
TEST(TrainingCheckpoint, DamagedDimensionsInACheckpoint) {
  TempDir dir("dims");
  std::string bytes = asVersion2(smallCheckpointBytes(dir));
  auto setU64 = [](std::string s, size_t at, uint64_t v) {
    // (replace rather than memcpy into s.data(): g++ 12 at -O3 reports a
    // false stringop-overflow for the latter)
    char raw[8];
    std::memcpy(raw, &v, 8);
    s.replace(at, 8, raw, 8);
    return s;
  };
  // The first tensor, [2, 3]: rank at byte 69, dimensions at 77 and 85.
  std::string signBit = setU64(bytes, 77, 2 | (uint64_t(1) << 63));
  std::string overflow =
      setU64(setU64(bytes, 77, uint64_t(1) << 32), 85, uint64_t(1) << 32);
  std::string path = dir / "bad.ckpt";
  for (const auto &[what, damaged] :
       {std::pair<const char *, std::string>{"sign bit", signBit},
        {"overflow", overflow}}) {
    writeFile(path, damaged);
    auto c = loadCheckpoint(path);
    ASSERT_FALSE(bool(c)) << what
                          << ": a checkpoint with impossible "
                             "dimensions loaded";
    expectContains(llvm::toString(c.takeError()),
                   path + ": damaged checkpoint (tensor 'L#0.W' has an "
                          "impossible shape)",
                   what);
  }
}

// The JSON-lines log of a killed and resumed run has exactly one line per
// epoch, 1 to 30: each epoch's line is flushed before its checkpoint is
// written, and --resume keeps the lines of the epochs up to the
// checkpoint's and drops later ones. (The kill comes right after a
// checkpoint appears, between it and the next epoch's line.)
TEST(TrainingCheckpoint, LogOfAKilledAndResumedRun) {
  TempDir dir("log");
  std::vector<std::string> args =
      trainArgs(dir / "run.ckpt", dir / "run.params", 30);
  args.push_back("--log");
  args.push_back(dir / "run.jsonl");
  uint64_t atKill =
      startAndKill(args, dir / "run.ckpt", dir / "killed.out", 10);
  ASSERT_GE(atKill, 10u);
  args.push_back("--resume");
  Outcome resumed = runSagac(args, dir / "resumed.out");
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
  std::istringstream log(readFile(dir / "run.jsonl"));
  std::string line;
  unsigned expected = 1;
  while (std::getline(log, line)) {
    std::string want = "{\"epoch\": " + std::to_string(expected) + ",";
    EXPECT_EQ(line.substr(0, want.size()), want) << "line " << expected;
    ++expected;
  }
  EXPECT_EQ(expected, 31u) << "the log has " << expected - 1
                           << " lines for 30 epochs";
}

// Early stopping's state (the best validation accuracy and the epochs since)
// is in the checkpoint: a run stopped 3 epochs before the uninterrupted one
// stopped early, then resumed, stops after the same epoch. (Before the state
// was saved, GCN on Cora with --patience 5 stopped after epoch 18
// uninterrupted and after epoch 23 resumed.)
TEST(TrainingCheckpoint, EarlyStoppingAcrossResume) {
  TempDir dir("patience");
  auto args = [&](const std::string &ckpt, unsigned epochs) {
    std::vector<std::string> a =
        trainArgs(ckpt, dir / (ckpt + ".params"), epochs);
    a.push_back("--patience");
    a.push_back("5");
    return a;
  };
  Outcome full = runSagac(args(dir / "full.ckpt", 200), dir / "full.out");
  ASSERT_EQ(full.exitCode, 0) << full.output;
  expectContains(full.output, "stopped early");
  auto end = loadCheckpoint(dir / "full.ckpt");
  ASSERT_TRUE(bool(end)) << llvm::toString(end.takeError());
  ASSERT_GT(end->epoch, 3u);
  // Stopped 3 epochs before the uninterrupted run stopped, then resumed.
  Outcome part = runSagac(args(dir / "part.ckpt", unsigned(end->epoch) - 3),
                          dir / "part.out");
  ASSERT_EQ(part.exitCode, 0) << part.output;
  std::vector<std::string> resume = args(dir / "part.ckpt", 200);
  resume.push_back("--resume");
  Outcome resumed = runSagac(resume, dir / "resumed.out");
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
  auto after = loadCheckpoint(dir / "part.ckpt");
  ASSERT_TRUE(bool(after)) << llvm::toString(after.takeError());
  EXPECT_EQ(after->epoch, end->epoch)
      << "the uninterrupted run stopped after epoch " << end->epoch
      << ", the resumed one after epoch " << after->epoch;
}

} // namespace
