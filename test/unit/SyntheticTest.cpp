//===- SyntheticTest.cpp - R-MAT graphs and random features ---------------===//

#include "runtime/graph/Synthetic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace saga;

namespace {

TEST(Synthetic, RmatIsDeterministicForASeed) {
  EdgeList a = rmatGraph(10, 8, 42), b = rmatGraph(10, 8, 42);
  EXPECT_EQ(a.numVertices, b.numVertices);
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.dst, b.dst);
  EdgeList c = rmatGraph(10, 8, 43);
  EXPECT_TRUE(a.src != c.src || a.dst != c.dst) << "seed has no effect";
}

TEST(Synthetic, RmatHasNoSelfLoopsOrDuplicatesAndIdsInRange) {
  for (int scale : {1, 4, 12}) {
    SCOPED_TRACE("scale " + std::to_string(scale));
    EdgeList g = rmatGraph(scale, 16, 7);
    ASSERT_EQ(g.numVertices, 1 << scale);
    ASSERT_EQ(g.src.size(), g.dst.size());
    std::vector<std::pair<int32_t, int32_t>> edges;
    for (size_t i = 0; i < g.src.size(); ++i) {
      ASSERT_GE(g.src[i], 0);
      ASSERT_LT(g.src[i], g.numVertices);
      ASSERT_GE(g.dst[i], 0);
      ASSERT_LT(g.dst[i], g.numVertices);
      ASSERT_NE(g.src[i], g.dst[i]) << "self loop at edge " << i;
      edges.emplace_back(g.src[i], g.dst[i]);
    }
    EXPECT_TRUE(std::is_sorted(edges.begin(), edges.end()));
    EXPECT_EQ(std::adjacent_find(edges.begin(), edges.end()), edges.end())
        << "repeated edge";
  }
}

TEST(Synthetic, RmatEdgeCountIsCloseToRequested) {
  // Duplicates and self loops removed: Graph500's parameters lose about a
  // tenth of the samples at these sizes.
  for (int scale : {12, 16}) {
    EdgeList g = rmatGraph(scale, 16, 1);
    double requested = double(16) * (1 << scale);
    EXPECT_GT(double(g.src.size()), 0.8 * requested) << "scale " << scale;
    EXPECT_LE(double(g.src.size()), requested) << "scale " << scale;
  }
}

TEST(Synthetic, RmatDegreesAreSkewedAndIdsPermuted) {
  EdgeList g = rmatGraph(14, 16, 3);
  std::vector<int64_t> outDeg(g.numVertices);
  for (int32_t u : g.src)
    ++outDeg[u];
  int64_t maxDeg = *std::max_element(outDeg.begin(), outDeg.end());
  double mean = double(g.src.size()) / g.numVertices;
  EXPECT_GT(double(maxDeg), 20 * mean) << "not a power-law-like graph";
  // Without the permutation vertex 0 would be the hub.
  EXPECT_LT(outDeg[0], maxDeg);
}

TEST(Synthetic, RandomFeatures) {
  Tensor a = randomFeatures(1000, 64, 5), b = randomFeatures(1000, 64, 5);
  Tensor c = randomFeatures(1000, 64, 6);
  ASSERT_EQ(a.shape(), (std::vector<int64_t>{1000, 64}));
  double sum = 0, sumSq = 0;
  bool differs = false;
  float lo = 1, hi = -1;
  for (int64_t i = 0; i < a.numElements(); ++i) {
    float x = a.f32()[i];
    ASSERT_EQ(x, b.f32()[i]) << "element " << i;
    differs |= x != c.f32()[i];
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
    sumSq += double(x) * x;
  }
  EXPECT_TRUE(differs) << "seed has no effect";
  EXPECT_GE(lo, -1.0f);
  EXPECT_LT(hi, 1.0f);
  EXPECT_LT(lo, -0.99f);
  EXPECT_GT(hi, 0.99f);
  double n = double(a.numElements());
  EXPECT_NEAR(sum / n, 0.0, 0.02);
  EXPECT_NEAR(sumSq / n, 1.0 / 3.0, 0.01); // variance of U[-1, 1)
}

} // namespace
