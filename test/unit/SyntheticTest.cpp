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

namespace {

TEST(SyntheticDataset, SpecGivesTheGeneratorsOutput) {
  auto d = loadSyntheticDataset("rmat:scale=9,edge-factor=4,features=8,classes=5,seed=3");
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EdgeList g = rmatGraph(9, 4, 3);
  EXPECT_EQ(d->edges.src, g.src);
  EXPECT_EQ(d->edges.dst, g.dst);
  Tensor x = randomFeatures(512, 8, 3);
  ASSERT_EQ(d->features.shape(), x.shape());
  EXPECT_TRUE(std::equal(x.f32(), x.f32() + x.numElements(), d->features.f32()));
  EXPECT_EQ(d->numClasses, 5);
  ASSERT_EQ(d->labels.size(), 512u);
  for (int32_t c : d->labels)
    EXPECT_TRUE(c >= 0 && c < 5);
  // Every vertex in exactly one split; each split non-empty at this size.
  EXPECT_EQ(d->train.size() + d->val.size() + d->test.size(), 512u);
  EXPECT_FALSE(d->train.empty());
  EXPECT_FALSE(d->val.empty());
  EXPECT_GT(d->test.size(), d->train.size());
  // The graph depends on scale, edge factor and seed alone.
  auto wide = loadSyntheticDataset("rmat:scale=9,edge-factor=4,features=1,seed=3");
  ASSERT_TRUE(bool(wide));
  EXPECT_EQ(wide->edges.src, g.src);
  EXPECT_EQ(wide->edges.dst, g.dst);
  EXPECT_TRUE(isSyntheticSpec("rmat:scale=9"));
  EXPECT_FALSE(isSyntheticSpec("examples/data/cora"));
}

TEST(SyntheticDataset, BadSpecsNameTheKey) {
  struct Case {
    const char *spec, *message;
  } cases[] = {
      {"rmat:", "no scale"},
      {"rmat:edge-factor=4", "no scale"},
      {"rmat:scale=31", "scale must be an integer in [1, 30], not '31'"},
      {"rmat:scale=x", "scale must be an integer in [1, 30], not 'x'"},
      {"rmat:scale=8,size=3", "unknown key 'size'"},
      {"rmat:scale=8,features=0", "features must be an integer in [1, 65536]"},
      {"rmat:scale=30,edge-factor=16", "do not fit 32-bit edge ids"},
      // 2^26 x 65536 features: refused before allocating (MemoryLimit.h).
      {"rmat:scale=26,edge-factor=1,features=65536", "generating it needs "},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.spec);
    auto d = loadSyntheticDataset(c.spec);
    ASSERT_FALSE(bool(d));
    std::string message = llvm::toString(d.takeError());
    EXPECT_NE(message.find(c.message), std::string::npos) << message;
    EXPECT_NE(message.find(std::string(c.spec) + ": "), std::string::npos) << message;
  }
}

} // namespace
