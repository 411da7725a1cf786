//===- ReorderTest.cpp - degree order and relabelling ---------------------===//

#include "runtime/graph/Reorder.h"
#include "runtime/graph/Synthetic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

using namespace saga;

namespace {

std::vector<int64_t> totalDegrees(const EdgeList &g) {
  std::vector<int64_t> degree(size_t(g.numVertices), 0);
  for (size_t i = 0; i < g.src.size(); ++i) {
    ++degree[size_t(g.src[i])];
    ++degree[size_t(g.dst[i])];
  }
  return degree;
}

TEST(Reorder, DegreeOrderIsAPermutationByDecreasingDegree) {
  EdgeList g = rmatGraph(10, 8, 3);
  VertexOrder order = degreeOrder(g);
  ASSERT_EQ(order.newId.size(), size_t(g.numVertices));
  ASSERT_EQ(order.oldId.size(), size_t(g.numVertices));
  std::vector<int32_t> sorted = order.newId;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int32_t> identity(size_t(g.numVertices));
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(sorted, identity) << "newId is not a permutation";
  std::vector<int64_t> degree = totalDegrees(g);
  for (int32_t v = 0; v < g.numVertices; ++v)
    ASSERT_EQ(order.oldId[size_t(order.newId[size_t(v)])], v) << "not inverse";
  for (int32_t i = 1; i < g.numVertices; ++i) {
    int32_t a = order.oldId[size_t(i - 1)], b = order.oldId[size_t(i)];
    ASSERT_GE(degree[size_t(a)], degree[size_t(b)]) << "at new id " << i;
    if (degree[size_t(a)] == degree[size_t(b)]) {
      ASSERT_LT(a, b) << "ties are not by id at new id " << i;
    }
  }
  EXPECT_GT(degree[size_t(order.oldId[0])], degree[size_t(order.oldId.back())]);
}

TEST(Reorder, SmallGraphOrderByHand) {
  // Total degrees: 0:1, 1:2, 2:1, 3:2, 4:0.
  EdgeList g;
  g.numVertices = 5;
  g.src = {1, 3, 1};
  g.dst = {3, 0, 2};
  VertexOrder order = degreeOrder(g);
  EXPECT_EQ(order.oldId, (std::vector<int32_t>{1, 3, 0, 2, 4}));
  relabel(g, order);
  EXPECT_EQ(g.src, (std::vector<int32_t>{0, 1, 0})); // edge order kept
  EXPECT_EQ(g.dst, (std::vector<int32_t>{1, 2, 3}));
}

TEST(Reorder, PermuteAndUnpermuteRowsRoundTrip) {
  EdgeList g = rmatGraph(6, 4, 1);
  VertexOrder order = degreeOrder(g);
  Tensor x = randomFeatures(g.numVertices, 3, 5);
  Tensor p = permuteRows(x, order);
  for (int32_t v = 0; v < g.numVertices; ++v)
    for (int k = 0; k < 3; ++k)
      ASSERT_EQ(p.f32()[order.newId[size_t(v)] * 3 + k], x.f32()[v * 3 + k]);
  Tensor back = unpermuteRows(p, order);
  ASSERT_EQ(back.shape(), x.shape());
  EXPECT_TRUE(std::equal(x.f32(), x.f32() + x.numElements(), back.f32()));
  Tensor ids({g.numVertices}, DType::I32);
  std::iota(ids.i32(), ids.i32() + g.numVertices, 0);
  Tensor pid = permuteRows(ids, order);
  EXPECT_TRUE(std::equal(order.oldId.begin(), order.oldId.end(), pid.i32()));
}

TEST(Reorder, RelabelDatasetKeepsEveryVertexWithItsData) {
  Dataset d;
  d.edges = rmatGraph(7, 4, 9);
  const int32_t n = d.edges.numVertices;
  d.features = randomFeatures(n, 2, 4);
  for (int32_t v = 0; v < n; ++v)
    d.labels.push_back(v % 3 ? v % 5 : -1);
  d.train = {0, 5, 7};
  d.val = {10, 4};
  d.test = {n - 1};
  Dataset original = d;
  VertexOrder order = degreeOrder(d.edges);
  relabel(d, order);
  for (int32_t v = 0; v < n; ++v) {
    int32_t w = order.newId[size_t(v)];
    ASSERT_EQ(d.labels[size_t(w)], original.labels[size_t(v)]);
    ASSERT_EQ(d.features.f32()[w * 2], original.features.f32()[v * 2]);
    ASSERT_EQ(d.features.f32()[w * 2 + 1], original.features.f32()[v * 2 + 1]);
  }
  for (size_t i = 0; i < d.edges.src.size(); ++i) {
    ASSERT_EQ(d.edges.src[i], order.newId[size_t(original.edges.src[i])]);
    ASSERT_EQ(d.edges.dst[i], order.newId[size_t(original.edges.dst[i])]);
  }
  EXPECT_EQ(d.train, (std::vector<int32_t>{order.newId[0], order.newId[5],
                                           order.newId[7]}));
  EXPECT_EQ(d.val, (std::vector<int32_t>{order.newId[10], order.newId[4]}));
  EXPECT_EQ(d.test, (std::vector<int32_t>{order.newId[size_t(n - 1)]}));
}

} // namespace
