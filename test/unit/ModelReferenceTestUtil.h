//===- ModelReferenceTestUtil.h - shared by reference tests -----*- C++ -*-===//
//
// What ModelReferenceTest.cpp and the files split from it share: the
// tolerance, the test's own edge lists and the model specs
// (ModelReferenceTest.cpp), the random parameters and inputs and the
// plain-loop reference (ModelReferenceLoops.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_TEST_UNIT_MODELREFERENCETESTUTIL_H
#define SAGA_TEST_UNIT_MODELREFERENCETESTUTIL_H

#include "TestRandom.h"
#include "api/Model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sagatest::modelref {

constexpr double kTolerance = 1e-4;

inline bool close(double got, double want) {
  return std::fabs(got - want) <= kTolerance * std::max(1.0, std::fabs(want));
}

//===----------------------------------------------------------------------===//
// The graphs (ModelReferenceTest.cpp)
//===----------------------------------------------------------------------===//

struct EdgeList {
  std::string name;
  int32_t numVertices = 0;
  std::vector<int32_t> src, dst;
  void add(int32_t u, int32_t v) {
    src.push_back(u);
    dst.push_back(v);
  }
  void shuffle(Rng &rng) {
    for (size_t i = src.size(); i > 1; --i) {
      size_t j = size_t(rng.below(int64_t(i)));
      std::swap(src[i - 1], src[j]);
      std::swap(dst[i - 1], dst[j]);
    }
  }
};

/// The small, hub and medium edge lists.
const std::vector<EdgeList> &edgeLists();
/// Saga's Graph for an edge list, built once per (list, self loops).
const saga::Graph &sagaGraph(const EdgeList &list, bool selfLoops);

//===----------------------------------------------------------------------===//
// The models (ModelReferenceTest.cpp)
//===----------------------------------------------------------------------===//

enum class Arch { GCN, GAT, SAGE, GIN, GGCN };

struct Spec {
  std::string name;
  Arch arch;
  std::string file;   // examples/<file>, or empty: `source`
  std::string source; // inline source, compiled with compileSource
  bool selfLoops;
  int64_t F, H, C;    // input width, hidden width (GGCN: d), classes
  int64_t heads = 1;  // GAT: heads of the first layer
  std::string gather; // SAGE: mean, max or min
};

/// The example models and their reduced copies.
const std::vector<Spec> &specs();

//===----------------------------------------------------------------------===//
// Data and the reference (ModelReferenceLoops.cpp)
//===----------------------------------------------------------------------===//

/// Deterministic per (spec, parameter, shape) and per (graph, width).
saga::Tensor randomParam(const std::string &spec, const std::string &name,
                         const std::vector<int64_t> &shape);
saga::Tensor randomFeatures(const EdgeList &g, int64_t width);
saga::Tensor randomLabels(const EdgeList &g, int64_t classes);

struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
  Mat() = default;
  Mat(int64_t r, int64_t c) : rows(r), cols(c), v(size_t(r * c), 0.0) {}
  double &operator()(int64_t r, int64_t c) { return v[size_t(r * cols + c)]; }
  double operator()(int64_t r, int64_t c) const {
    return v[size_t(r * cols + c)];
  }
};

struct Reference {
  Mat out;
  double loss = 0;
  std::map<std::string, std::vector<int64_t>> params; // read, with shapes
};

Mat toMat(const saga::Tensor &t);
/// The reference for (spec, graph), computed once.
const Reference &reference(int specIndex, int graphIndex);

} // namespace sagatest::modelref

#endif // SAGA_TEST_UNIT_MODELREFERENCETESTUTIL_H
