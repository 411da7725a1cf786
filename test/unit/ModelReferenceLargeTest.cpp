//===- ModelReferenceLargeTest.cpp - large results against plain loops ----===//
//
// Results of 8M elements and more (written with non-temporal stores)
// against plain loops, with 1 and 2 threads bit for bit.
//
//===----------------------------------------------------------------------===//

#include "ModelReferenceTestUtil.h"
#include "TestRandom.h"
#include "api/Model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace saga;
using namespace sagatest::modelref;

namespace {

using sagatest::Rng;

// Results of 8M elements and more are written with non-temporal vector
// stores (Emitter::copyOut): a mean aggregation with a bias and ReLU (one
// propagate kernel with its epilogue; [V, 64], streamed) and a sum of rows
// of 9 (not whole vectors: plain stores), on 140,000 vertices, against
// plain loops, with 1 and 2 threads bit for bit.
TEST(ModelReferenceLarge, StreamedResultsMatchPlainLoops) {
  const int32_t n = 140000;
  Rng rng(77);
  std::vector<int32_t> src, dst;
  for (int i = 0; i < 4 * n; ++i) {
    src.push_back(rng.below(n));
    dst.push_back(rng.below(n));
  }
  Graph g = Graph::build(n, src, dst, /*addSelfLoops=*/false);
  auto check = [&](const std::string &source, int width, bool mean) {
    SCOPED_TRACE(source);
    Tensor x({n, width});
    for (int64_t i = 0; i < x.numElements(); ++i)
      x.f32()[i] = float(rng.uniform(-1, 1));
    std::vector<double> want(size_t(n) * size_t(width), 0.0);
    std::vector<int64_t> count(size_t(n), 0);
    for (size_t e = 0; e < src.size(); ++e) {
      ++count[size_t(dst[e])];
      for (int k = 0; k < width; ++k)
        want[size_t(dst[e]) * size_t(width) + size_t(k)] +=
            x.f32()[int64_t(src[e]) * width + k];
    }
    if (mean)
      for (int32_t v = 0; v < n; ++v)
        for (int k = 0; k < width; ++k) {
          double &w = want[size_t(v) * size_t(width) + size_t(k)];
          w = std::max(0.0, (count[size_t(v)] ? w / double(count[size_t(v)])
                                              : 0.0) + 0.5);
        }
    Tensor runs[2];
    for (unsigned threads : {1u, 2u}) {
      CompileOptions co;
      co.threads = threads;
      auto model = Model::compileSource(source, "large.saga", co);
      ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
      ASSERT_FALSE(bool((*model)->setGraph(g)));
      ASSERT_FALSE(bool((*model)->setInput("x", x)));
      auto r = (*model)->forward();
      ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
      runs[threads - 1] = std::move(r->prediction);
    }
    ASSERT_EQ(runs[0].shape(), (std::vector<int64_t>{n, width}));
    for (int64_t i = 0; i < runs[0].numElements(); ++i) {
      double w = want[size_t(i)];
      ASSERT_NEAR(runs[0].f32()[i], w, kTolerance * std::max(1.0, std::fabs(w)))
          << "element " << i;
      ASSERT_EQ(runs[0].f32()[i], runs[1].f32()[i]) << "1 vs 2 threads at " << i;
    }
  };
  check(R"(graph { vertex x: f32[64]; }
layer Mean() { gather(mean); apply_vertex(v, a) { return relu(a + 0.5); } }
model Large { out = Mean()(x); })",
        64, /*mean=*/true);
  check(R"(graph { vertex x: f32[9]; }
layer Sum() { gather(sum); }
model Large { out = Sum()(x); })",
        9, /*mean=*/false);
}

} // namespace
