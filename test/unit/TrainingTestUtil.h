//===- TrainingTestUtil.h - what the training tests share -------*- C++ -*-===//
//
// The tiny and large graphs of the training tests, random inputs and
// parameters bound to a model, loss masks, the models of TrainingModels.cpp
// and training steps compared bit for bit: shared by TrainingTest.cpp and
// the Training*Test.cpp files.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_TEST_UNIT_TRAININGTESTUTIL_H
#define SAGA_TEST_UNIT_TRAININGTESTUTIL_H

#include "TestRandom.h"
#include "api/Model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace sagatest::training {

//===----------------------------------------------------------------------===//
// Random numbers, graphs, data
//===----------------------------------------------------------------------===//

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
inline EdgeList tinyEdges() {
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
inline EdgeList largeEdges() {
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
inline const saga::Graph &graphFor(const std::string &which,
                                   bool selfLoops) {
  static std::map<std::pair<std::string, bool>, std::unique_ptr<saga::Graph>>
      cache;
  auto &slot = cache[{which, selfLoops}];
  if (!slot) {
    EdgeList e = which == "tiny" ? tinyEdges() : largeEdges();
    slot = std::make_unique<saga::Graph>(
        saga::Graph::build(e.numVertices, e.src, e.dst, selfLoops));
  }
  return *slot;
}

/// Random values for every graph input (features in [-1, 1), edge values in
/// [0.25, 1.5), labels in [0, classes) with about one vertex in six
/// unlabelled) and every parameter (Glorot-like for matrices, [-0.8, 0.8)
/// otherwise). Deterministic in `key`.
inline llvm::Error bindRandom(saga::Model &m, const saga::Graph &g,
                              int64_t classes, const std::string &key) {
  using namespace saga;
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
inline std::vector<int32_t> lossMask(const saga::Graph &g) {
  std::vector<int32_t> mask;
  for (int32_t v = 0; v < g.numVertices; ++v)
    if (v % 3 != 1)
      mask.push_back(v);
  return mask;
}

/// Replaces $NAME (capital letters) by its value.
inline std::string
substitute(const std::string &text,
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

inline std::string errorText(llvm::Error e) {
  return e ? llvm::toString(std::move(e)) : "";
}

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void expectContains(const std::string &text, const std::string &part,
                           const std::string &what = "") {
  EXPECT_NE(text.find(part), std::string::npos)
      << what << ": expected \"" << part << "\" in:\n"
      << text;
}

//===----------------------------------------------------------------------===//
// The models (TrainingModels.cpp)
//===----------------------------------------------------------------------===//

struct GradCase {
  std::string name;
  std::string source;
  int64_t classes = 3;
};

// The example models with small widths and dropout rate $DROP (0: the loss
// is deterministic and forward() computes it); `example` fills in F, H, C
// and DROP.
extern const char *kGcn, *kSage, *kGin, *kGgcn;
std::string example(const char *text, const std::string &drop, int F = 6,
                    int H = 5, int C = 3);
/// The reduced GAT: F = 6 features, K heads of H = 3, C = 3 classes.
std::string gat(const std::string &drop, bool selfLoops, int K = 2);
/// Gathers of edge messages (sum, mean, max or min), with or without the
/// graph's self loops.
std::string edges(const std::string &kind, bool selfLoops);
/// The gradient checks' cases (GradientCheck.MatchesFiniteDifferences).
const std::vector<GradCase> &gradCases();

/// A reduced model compiled for training and bound on the tiny graph.
inline std::unique_ptr<saga::Model> tinyModel(const std::string &source,
                                              const char *key,
                                              unsigned threads = 1,
                                              int64_t classes = 3) {
  saga::CompileOptions co;
  co.training = true;
  co.threads = threads;
  auto model = saga::Model::compileSource(source, key, co);
  EXPECT_TRUE(bool(model)) << key << ": " << llvm::toString(model.takeError());
  if (!model)
    return nullptr;
  const saga::Graph &g = graphFor("tiny", (*model)->selfLoops());
  EXPECT_EQ(errorText(bindRandom(**model, g, classes, key)), "");
  return std::move(*model);
}

//===----------------------------------------------------------------------===//
// Training steps compared bit for bit
//===----------------------------------------------------------------------===//

inline bool bitEqual(const saga::Tensor &a, const saga::Tensor &b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.f32(), b.f32(), size_t(a.numElements()) * 4) == 0;
}

/// Whether two steps are bit-identical; reports the first difference.
inline bool sameStep(const saga::TrainStepResult &a,
                     const saga::TrainStepResult &b, const std::string &what,
                     bool report = true) {
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
    const saga::Tensor &x = a.gradients[i].second,
                       &y = b.gradients[i].second;
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

} // namespace sagatest::training

#endif // SAGA_TEST_UNIT_TRAININGTESTUTIL_H
