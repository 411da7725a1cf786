//===- GraphTest.cpp - CSR construction and host tensors ------------------===//

#include "runtime/graph/Graph.h"
#include "runtime/memory/Tensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>

using namespace saga;

namespace {

using Edges = std::vector<std::pair<int32_t, int32_t>>;

Graph buildFrom(int32_t n, const Edges &edges, bool selfLoops) {
  std::vector<int32_t> src, dst;
  for (auto [u, v] : edges) {
    src.push_back(u);
    dst.push_back(v);
  }
  return Graph::build(n, src, dst, selfLoops);
}

/// Checks every structural property of `g` against the input edge list,
/// including a reference built by sorting (dst, src, id) / (src, dst, id)
/// tuples, which the counting sort must reproduce exactly.
void checkGraph(const Graph &g, int32_t n, const Edges &edges, bool selfLoops) {
  SCOPED_TRACE("graph with " + std::to_string(n) + " vertices, " +
               std::to_string(edges.size()) + " edges, selfLoops " +
               std::to_string(selfLoops));
  const int64_t E = static_cast<int64_t>(edges.size()) + (selfLoops ? n : 0);
  auto srcOf = [&](int64_t e) {
    return e < (int64_t)edges.size() ? edges[e].first
                                     : int32_t(e - edges.size());
  };
  auto dstOf = [&](int64_t e) {
    return e < (int64_t)edges.size() ? edges[e].second
                                     : int32_t(e - edges.size());
  };

  ASSERT_EQ(g.numVertices, n);
  ASSERT_EQ(g.numEdges, E);
  ASSERT_EQ(g.selfLoops, selfLoops);
  ASSERT_EQ(g.inOffsets.size(), size_t(n) + 1);
  ASSERT_EQ(g.outOffsets.size(), size_t(n) + 1);
  ASSERT_EQ(g.inSources.size(), size_t(E));
  ASSERT_EQ(g.inEdgeIds.size(), size_t(E));
  ASSERT_EQ(g.outTargets.size(), size_t(E));
  ASSERT_EQ(g.outEdgeIds.size(), size_t(E));
  EXPECT_EQ(g.inOffsets.front(), 0);
  EXPECT_EQ(g.inOffsets.back(), E);
  EXPECT_EQ(g.outOffsets.front(), 0);
  EXPECT_EQ(g.outOffsets.back(), E);

  // Reference orders.
  std::vector<std::tuple<int32_t, int32_t, int64_t>> byDst, bySrc;
  for (int64_t e = 0; e < E; ++e) {
    byDst.emplace_back(dstOf(e), srcOf(e), e);
    bySrc.emplace_back(srcOf(e), dstOf(e), e);
  }
  std::sort(byDst.begin(), byDst.end());
  std::sort(bySrc.begin(), bySrc.end());
  for (int64_t i = 0; i < E; ++i) {
    auto [d, s, id] = byDst[i];
    EXPECT_EQ(g.inSources[i], s) << "in position " << i;
    EXPECT_EQ(g.inEdgeIds[i], id) << "in position " << i;
    EXPECT_GE(i, g.inOffsets[d]);
    EXPECT_LT(i, g.inOffsets[d + 1]);
    auto [s2, d2, id2] = bySrc[i];
    EXPECT_EQ(g.outTargets[i], d2) << "out position " << i;
    EXPECT_EQ(g.outEdgeIds[i], id2) << "out position " << i;
    EXPECT_GE(i, g.outOffsets[s2]);
    EXPECT_LT(i, g.outOffsets[s2 + 1]);
  }

  // Every id appears exactly once in each order, at a position whose
  // vertex pair is the edge's (src, dst).
  std::vector<int> seenIn(E, 0), seenOut(E, 0);
  for (int32_t v = 0; v < n; ++v) {
    EXPECT_LE(g.inOffsets[v], g.inOffsets[v + 1]);
    EXPECT_LE(g.outOffsets[v], g.outOffsets[v + 1]);
    for (int64_t i = g.inOffsets[v]; i < g.inOffsets[v + 1]; ++i) {
      int64_t id = g.inEdgeIds[i];
      ASSERT_GE(id, 0);
      ASSERT_LT(id, E);
      ++seenIn[id];
      EXPECT_EQ(dstOf(id), v);
      EXPECT_EQ(srcOf(id), g.inSources[i]);
    }
    for (int64_t i = g.outOffsets[v]; i < g.outOffsets[v + 1]; ++i) {
      int64_t id = g.outEdgeIds[i];
      ASSERT_GE(id, 0);
      ASSERT_LT(id, E);
      ++seenOut[id];
      EXPECT_EQ(srcOf(id), v);
      EXPECT_EQ(dstOf(id), g.outTargets[i]);
    }
  }
  for (int64_t e = 0; e < E; ++e) {
    EXPECT_EQ(seenIn[e], 1) << "edge id " << e;
    EXPECT_EQ(seenOut[e], 1) << "edge id " << e;
  }

  // Degrees.
  std::vector<int64_t> inDeg(n, 0);
  for (int64_t e = 0; e < E; ++e)
    ++inDeg[dstOf(e)];
  std::vector<float> degF = g.inDegrees();
  ASSERT_EQ(degF.size(), size_t(n));
  for (int32_t v = 0; v < n; ++v) {
    EXPECT_EQ(g.inDegree(v), inDeg[v]) << "vertex " << v;
    EXPECT_EQ(degF[v], float(inDeg[v])) << "vertex " << v;
  }
}

// 0 -> 1, 2 -> 1, 1 -> 2 (twice: a multi-edge), 3 -> 3 (a self loop in the
// input), 0 -> 2, 2 -> 0; vertex 4 is isolated. Listed out of order.
const Edges kSmall = {{2, 1}, {1, 2}, {0, 1}, {3, 3}, {1, 2}, {0, 2}, {2, 0}};

TEST(Graph, SmallGraphBothOrdersByHand) {
  Graph g = buildFrom(5, kSmall, /*selfLoops=*/false);
  // In-edges sorted by (dst, src, id):
  //   0: 2->0 (6)
  //   1: 0->1 (2), 2->1 (0)
  //   2: 0->2 (5), 1->2 (1), 1->2 (4)
  //   3: 3->3 (3)
  //   4: none
  EXPECT_EQ(g.inOffsets, (std::vector<int64_t>{0, 1, 3, 6, 7, 7}));
  EXPECT_EQ(g.inSources, (std::vector<int32_t>{2, 0, 2, 0, 1, 1, 3}));
  EXPECT_EQ(g.inEdgeIds, (std::vector<int32_t>{6, 2, 0, 5, 1, 4, 3}));
  // Out-edges sorted by (src, dst, id):
  //   0: 0->1 (2), 0->2 (5)
  //   1: 1->2 (1), 1->2 (4)
  //   2: 2->0 (6), 2->1 (0)
  //   3: 3->3 (3)
  //   4: none
  EXPECT_EQ(g.outOffsets, (std::vector<int64_t>{0, 2, 4, 6, 7, 7}));
  EXPECT_EQ(g.outTargets, (std::vector<int32_t>{1, 2, 2, 2, 0, 1, 3}));
  EXPECT_EQ(g.outEdgeIds, (std::vector<int32_t>{2, 5, 1, 4, 6, 0, 3}));
  EXPECT_EQ(g.inDegrees(), (std::vector<float>{1, 2, 3, 1, 0}));
  checkGraph(g, 5, kSmall, false);
}

TEST(Graph, SelfLoopsAreAppendedAfterInputEdges) {
  Graph g = buildFrom(5, kSmall, /*selfLoops=*/true);
  // Loops v -> v get ids 7 + v; vertex 3 keeps its input loop (id 3) too.
  EXPECT_EQ(g.numEdges, 12);
  EXPECT_EQ(g.inOffsets, (std::vector<int64_t>{0, 2, 5, 9, 11, 12}));
  EXPECT_EQ(g.inSources,
            (std::vector<int32_t>{0, 2, 0, 1, 2, 0, 1, 1, 2, 3, 3, 4}));
  EXPECT_EQ(g.inEdgeIds,
            (std::vector<int32_t>{7, 6, 2, 8, 0, 5, 1, 4, 9, 3, 10, 11}));
  EXPECT_EQ(g.outOffsets, (std::vector<int64_t>{0, 3, 6, 9, 11, 12}));
  EXPECT_EQ(g.outTargets,
            (std::vector<int32_t>{0, 1, 2, 1, 2, 2, 0, 1, 2, 3, 3, 4}));
  EXPECT_EQ(g.outEdgeIds,
            (std::vector<int32_t>{7, 2, 5, 8, 1, 4, 6, 0, 9, 3, 10, 11}));
  // Degrees with the added loops: one more each; 3 has two loops now.
  EXPECT_EQ(g.inDegrees(), (std::vector<float>{2, 3, 4, 2, 1}));
  EXPECT_EQ(g.inDegree(4), 1);
  checkGraph(g, 5, kSmall, true);
}

TEST(Graph, NoEdges) {
  Graph empty = Graph::build(0, {}, {}, false);
  EXPECT_EQ(empty.numEdges, 0);
  EXPECT_EQ(empty.inOffsets, std::vector<int64_t>{0});
  EXPECT_EQ(empty.outOffsets, std::vector<int64_t>{0});
  EXPECT_TRUE(empty.inDegrees().empty());
  checkGraph(Graph::build(0, {}, {}, true), 0, {}, true);

  Graph isolated = Graph::build(3, {}, {}, false);
  EXPECT_EQ(isolated.inOffsets, (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(isolated.inDegrees(), (std::vector<float>{0, 0, 0}));
  checkGraph(isolated, 3, {}, false);

  Graph loops = Graph::build(3, {}, {}, true);
  EXPECT_EQ(loops.inSources, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(loops.inEdgeIds, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(loops.outEdgeIds, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(loops.inDegrees(), (std::vector<float>{1, 1, 1}));
  checkGraph(loops, 3, {}, true);
}

TEST(Graph, HubVertex) {
  // Vertex 0 is linked both ways with 1..999 (edges listed from the far end
  // first, so the input order is not the sorted order); 1000 is isolated.
  const int32_t n = 1001;
  Edges edges;
  for (int32_t v = 999; v >= 1; --v) {
    edges.push_back({v, 0});
    edges.push_back({0, v});
  }
  Graph g = buildFrom(n, edges, false);
  EXPECT_EQ(g.inDegree(0), 999);
  EXPECT_EQ(g.outOffsets[1] - g.outOffsets[0], 999);
  for (int32_t i = 0; i < 999; ++i) {
    EXPECT_EQ(g.inSources[i], i + 1);
    // v -> 0 was listed at position 2 * (999 - v).
    EXPECT_EQ(g.inEdgeIds[i], 2 * (999 - (i + 1)));
    EXPECT_EQ(g.outTargets[i], i + 1);
    EXPECT_EQ(g.outEdgeIds[i], 2 * (999 - (i + 1)) + 1);
  }
  EXPECT_EQ(g.inDegree(500), 1);
  EXPECT_EQ(g.inDegree(1000), 0);
  checkGraph(g, n, edges, false);

  Graph gl = buildFrom(n, edges, true);
  EXPECT_EQ(gl.inDegree(0), 1000);
  EXPECT_EQ(gl.inDegree(1000), 1);
  // The hub's own loop sorts first among its in-edges (source 0).
  EXPECT_EQ(gl.inSources[0], 0);
  EXPECT_EQ(gl.inEdgeIds[0], int64_t(edges.size()));
  checkGraph(gl, n, edges, true);
}

TEST(Graph, RandomMultigraphsMatchReference) {
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 20; ++trial) {
    int32_t n = 1 + int32_t(rng() % 60);
    size_t m = rng() % 400;
    Edges edges;
    for (size_t i = 0; i < m; ++i) {
      // A small vertex range makes multi-edges and loops common; vertices
      // above n/2 are never used, so there are isolated ones.
      int32_t range = std::max(1, n / 2);
      edges.push_back({int32_t(rng() % range), int32_t(rng() % range)});
    }
    checkGraph(buildFrom(n, edges, false), n, edges, false);
    checkGraph(buildFrom(n, edges, true), n, edges, true);
  }
}

// buildGrouped (edges already grouped by destination row, as a sampled
// mini-batch has them) makes exactly the graph build makes: rows of a few
// edges and long ones (sorted whole), multi-edges, loops, edgeless rows in
// the middle and at the end.
TEST(Graph, GroupedEdgesBuildTheSameGraph) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 40; ++trial) {
    int32_t n = 1 + int32_t(rng() % 120);
    int32_t rows = int32_t(rng() % (n + 1));
    std::vector<int64_t> rowEdges{0};
    std::vector<int32_t> src, dst;
    for (int32_t r = 0; r < rows; ++r) {
      size_t d = rng() % 5 == 0 ? 0 : rng() % 4 == 0 ? 65 + rng() % 100
                                                     : rng() % 30;
      for (size_t i = 0; i < d; ++i) {
        src.push_back(int32_t(rng() % uint32_t(std::max(1, n / 3))));
        dst.push_back(r);
      }
      rowEdges.push_back(int64_t(src.size()));
    }
    for (bool loops : {false, true}) {
      Graph a = Graph::build(n, src, dst, loops);
      Graph b = Graph::buildGrouped(n, rowEdges, src, loops);
      ASSERT_EQ(b.numVertices, a.numVertices);
      ASSERT_EQ(b.numEdges, a.numEdges);
      EXPECT_EQ(b.selfLoops, a.selfLoops);
      EXPECT_EQ(b.inOffsets, a.inOffsets) << "trial " << trial;
      EXPECT_EQ(b.inSources, a.inSources) << "trial " << trial;
      EXPECT_EQ(b.inEdgeIds, a.inEdgeIds) << "trial " << trial;
      EXPECT_EQ(b.outOffsets, a.outOffsets) << "trial " << trial;
      EXPECT_EQ(b.outTargets, a.outTargets) << "trial " << trial;
      EXPECT_EQ(b.outEdgeIds, a.outEdgeIds) << "trial " << trial;
    }
  }
}

// The size limit of 32-bit edge ids counts the self loops build adds.
TEST(Graph, SizeErrorCountsSelfLoops) {
  EXPECT_EQ(Graph::sizeError(10, Graph::kMaxEdges - 10, true), "");
  EXPECT_EQ(Graph::sizeError(10, Graph::kMaxEdges, false), "");
  EXPECT_EQ(Graph::sizeError(10, Graph::kMaxEdges - 9, true),
            "2147483638 edges and 10 self loops exceed the 2147483647 that "
            "32-bit edge ids can number in one graph");
  EXPECT_EQ(Graph::sizeError(10, Graph::kMaxEdges + 1, false),
            "2147483648 edges exceed the 2147483647 that 32-bit edge ids can "
            "number in one graph");
}

TEST(GraphDeathTest, OutOfRangeIdsAbort) {
  EXPECT_DEATH(Graph::build(2, {0}, {2}, false), "outside \\[0, 2\\)");
  EXPECT_DEATH(Graph::build(2, {-1}, {0}, false), "outside \\[0, 2\\)");
  EXPECT_DEATH(Graph::build(2, {0, 1}, {1}, false), "differ in size");
  EXPECT_DEATH(Graph::buildGrouped(2, {0, 1}, {2}, false),
               "source 2 outside \\[0, 2\\)");
  EXPECT_DEATH(Graph::buildGrouped(2, {0, 2}, {0}, false),
               "do not cover the edges");
  EXPECT_DEATH(Graph::buildGrouped(2, {0, 1, 0, 1}, {0}, false),
               "do not cover the edges");
  EXPECT_DEATH(Graph::buildGrouped(3, {0, 1, 0, 1}, {0}, false),
               "decrease at row 1");
}

TEST(Tensor, ShapeAndStorage) {
  Tensor t({3, 4, 2});
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{3, 4, 2}));
  EXPECT_EQ(t.dtype(), DType::F32);
  EXPECT_EQ(t.rows(), 3);
  EXPECT_EQ(t.rowSize(), 8);
  EXPECT_EQ(t.numElements(), 24);
  EXPECT_EQ(t.describe(), "[3, 4, 2] f32");
  for (int64_t i = 0; i < t.numElements(); ++i)
    EXPECT_EQ(t.f32()[i], 0.0f);
  t.f32()[23] = 1.5f;
  EXPECT_EQ(static_cast<const Tensor &>(t).f32()[23], 1.5f);
  EXPECT_EQ(t.data(), static_cast<void *>(t.f32()));

  Tensor labels({2708}, DType::I32);
  EXPECT_EQ(labels.dtype(), DType::I32);
  EXPECT_EQ(labels.rows(), 2708);
  EXPECT_EQ(labels.rowSize(), 1);
  EXPECT_EQ(labels.describe(), "[2708] i32");
  labels.i32()[2707] = -1;
  EXPECT_EQ(labels.i32()[2707], -1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(labels.i32()) % alignof(int32_t), 0u);

  Tensor scalar(std::vector<int64_t>{});
  EXPECT_EQ(scalar.rows(), 1);
  EXPECT_EQ(scalar.rowSize(), 1);
  EXPECT_EQ(scalar.numElements(), 1);
  EXPECT_EQ(scalar.describe(), "[] f32");
  scalar.f32()[0] = 2.0f;
  EXPECT_EQ(scalar.f32()[0], 2.0f);

  Tensor emptyRows({0, 16});
  EXPECT_EQ(emptyRows.rows(), 0);
  EXPECT_EQ(emptyRows.rowSize(), 16);
  EXPECT_EQ(emptyRows.numElements(), 0);
}

} // namespace
