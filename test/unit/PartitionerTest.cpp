//===- PartitionerTest.cpp - contiguous partitions and ROC's cost model ---===//

#include "runtime/distributed/Partitioner.h"
#include "runtime/graph/Synthetic.h"

#include "llvm/ADT/StringExtras.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace saga;

namespace {
Graph rmat(int scale, int edgeFactor, uint64_t seed) {
  EdgeList e = rmatGraph(scale, edgeFactor, seed);
  return Graph::build(e.numVertices, e.src, e.dst, false);
}

Graph smallGraph() {
  // 0 <- {1, 2, 3, 7, 8}; 4 <- {0}; 5 <- {}; 6 <- {2, 4}
  std::vector<int32_t> src{1, 2, 3, 7, 8, 0, 2, 4};
  std::vector<int32_t> dst{0, 0, 0, 0, 0, 4, 6, 6};
  return Graph::build(9, src, dst, false);
}

/// The "true" cost model the fitting tests draw step times from.
CostModel trueModel() {
  CostModel truth({16, 7});
  truth.setWeights({2e-7, 1e-8, 5e-8, 0, 3e-9});
  return truth;
}

void expectContiguous(const Partitioning &p, int64_t parts, int32_t vertices) {
  ASSERT_EQ(p.parts(), parts);
  EXPECT_EQ(p.bounds.front(), 0);
  EXPECT_EQ(p.bounds.back(), vertices);
  for (int64_t k = 0; k < parts; ++k)
    EXPECT_LE(p.bounds[size_t(k)], p.bounds[size_t(k) + 1]);
}
} // namespace

// The features of ROC's table for one vertex and summed over a range.
TEST(Partitioner, CostFeaturesCountRunsOfConsecutiveNeighbours) {
  Graph g = smallGraph();
  CostFeatures f = vertexCostFeatures(g, 0);
  EXPECT_EQ(f[kCostVertex], 1);
  EXPECT_EQ(f[kCostInEdges], 5);
  EXPECT_EQ(f[kCostNeighbourRuns], 2); // {1, 2, 3} and {7, 8}
  EXPECT_DOUBLE_EQ(f[kCostMeanRunLength], 2.5);
  EXPECT_EQ(f[kCostOutEdges], 1);
  CostFeatures none = vertexCostFeatures(g, 5);
  EXPECT_EQ(none[kCostInEdges], 0);
  EXPECT_EQ(none[kCostMeanRunLength], 0);
  CostFeatures all = rangeCostFeatures(g, 0, 9);
  EXPECT_EQ(all[kCostVertex], 9);
  EXPECT_EQ(all[kCostInEdges], 8);
  EXPECT_EQ(all[kCostOutEdges], 8);
  EXPECT_EQ(all[kCostNeighbourRuns], 2 + 1 + 2); // vertex 6: {2}, {4}
}

// Lawson-Hanson: exact on consistent data, and the constrained optimum
// (not the clipped unconstrained one) when a weight would go negative.
TEST(Partitioner, NonNegativeLeastSquares) {
  std::vector<double> a{1, 0, 0, 1, 1, 1, 2, 1}; // 4 x 2
  std::vector<double> b{2, 3, 5, 7};             // x = (2, 3)
  std::vector<double> x = nonNegativeLeastSquares(a, 4, 2, b);
  EXPECT_NEAR(x[0], 2, 1e-9);
  EXPECT_NEAR(x[1], 3, 1e-9);
  // min ||[1 1; 1 2] x - [1; 0]||: unconstrained x = (2, -1); with x >= 0
  // the optimum is x = (0.5, 0).
  std::vector<double> a2{1, 1, 1, 2}, b2{1, 0};
  std::vector<double> y = nonNegativeLeastSquares(a2, 2, 2, b2);
  EXPECT_NEAR(y[0], 0.5, 1e-9);
  EXPECT_NEAR(y[1], 0.0, 1e-12);
}

// Equal vertices and equal in-edges cut where their prefix sums cross equal
// shares; the cost model with one non-zero weight cuts as that baseline.
TEST(Partitioner, BaselinesAndTheCostModelCutContiguousRanges) {
  Graph g = rmat(12, 8, 7);
  for (int64_t parts : {1, 2, 3, 4, 7}) {
    SCOPED_TRACE(parts);
    Partitioning byV = partitionByVertices(g, parts);
    expectContiguous(byV, parts, g.numVertices);
    for (int64_t k = 0; k < parts; ++k)
      EXPECT_NEAR(byV.bounds[size_t(k) + 1] - byV.bounds[size_t(k)],
                  double(g.numVertices) / double(parts), 1.0);
    Partitioning byE = partitionByInEdges(g, parts);
    expectContiguous(byE, parts, g.numVertices);
    std::vector<double> edges;
    int64_t maxDegree = 0;
    for (int32_t v = 0; v < g.numVertices; ++v)
      maxDegree = std::max(maxDegree, g.inOffsets[size_t(v) + 1] - g.inOffsets[size_t(v)]);
    for (int64_t k = 0; k < parts; ++k)
      edges.push_back(double(g.inOffsets[size_t(byE.bounds[size_t(k) + 1])] -
                             g.inOffsets[size_t(byE.bounds[size_t(k)])]));
    for (double e : edges)
      EXPECT_NEAR(e, double(g.numEdges) / double(parts), double(maxDegree));
    CostModel onlyEdges({16});
    onlyEdges.setWeights({0, 1, 0, 0, 0});
    EXPECT_EQ(partitionByCost(g, parts, onlyEdges).bounds, byE.bounds);
    CostModel onlyVertices({16});
    onlyVertices.setWeights({1, 0, 0, 0, 0});
    EXPECT_EQ(partitionByCost(g, parts, onlyVertices).bounds, byV.bounds);
  }
  EXPECT_DOUBLE_EQ(imbalance({1, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(imbalance({3, 1}), 1.5);
}

// Fitted to step times made by a known model (with noise), the weights
// predict held-out partitions within a few percent, and the cut by the
// fitted model balances the true cost better than equal vertices.
TEST(Partitioner, TheFittedModelPredictsHeldOutPartitions) {
  Graph g = rmat(13, 8, 3);
  CostModel truth = trueModel();
  std::mt19937 rng(11);
  std::normal_distribution<double> noise(0.0, 0.01);
  auto measure = [&](const Partitioning &p) {
    std::vector<CostModel::Sample> out;
    for (int64_t k = 0; k < p.parts(); ++k) {
      CostFeatures in = truth.inputs(g, p.bounds[size_t(k)], p.bounds[size_t(k) + 1]);
      out.push_back({in, truth.predict(in) * (1 + noise(rng))});
    }
    return out;
  };
  std::vector<CostModel::Sample> train;
  for (int64_t parts : {2, 3, 5, 8})
    for (const auto &p : {partitionByVertices(g, parts), partitionByInEdges(g, parts)})
      for (const auto &s : measure(p))
        train.push_back(s);
  CostModel fitted({16, 7});
  double rms = fitted.fit(train);
  EXPECT_LT(rms, 0.05);
  // Held out: 6 parts by vertices.
  for (const auto &s : measure(partitionByVertices(g, 6)))
    EXPECT_NEAR(fitted.predict(s.inputs) / s.seconds, 1.0, 0.1);
  // Balance of the true cost: the fitted cut against equal vertices.
  auto trueCosts = [&](const Partitioning &p) {
    std::vector<double> c;
    for (int64_t k = 0; k < p.parts(); ++k)
      c.push_back(truth.predict(truth.inputs(g, p.bounds[size_t(k)], p.bounds[size_t(k) + 1])));
    return c;
  };
  double learned = imbalance(trueCosts(partitionByCost(g, 4, fitted)));
  double vertices = imbalance(trueCosts(partitionByVertices(g, 4)));
  EXPECT_LT(learned, 1.10);
  EXPECT_GT(vertices, learned);
  // Saved and read back with its widths and weights.
  auto back = CostModel::parse(fitted.serialize());
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->widths(), fitted.widths());
  for (int k = 0; k < kCostFeatures; ++k)
    EXPECT_DOUBLE_EQ(back->weights()[size_t(k)], fitted.weights()[size_t(k)]);
}

TEST(Partitioner, ACostModelFileWithErrorsSaysWhere) {
  auto expectError = [](const std::string &text, const std::string &what) {
    auto m = CostModel::parse(text);
    ASSERT_FALSE(bool(m));
    std::string msg = llvm::toString(m.takeError());
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  };
  expectError("nonsense\n", "no cost model here");
  expectError("saga-cost-model 2\n", "line 1: expected 'saga-cost-model 1'");
  // Inside a parameter file, the line is the file's.
  expectError("W 1 2\n0.5 0.25\n# saga-cost-model 1\n# widths 16\n"
              "# vertices x\n# in_edges 1\n# neighbour_runs 0\n"
              "# mean_run_length 0\n# out_edges 0\n",
              "line 5: weight 'x' is not a non-negative number");
  expectError("W 1 2\n0.5 0.25\n# saga-cost-model 1\n# widths 16\n",
              "line 4: expected the widths and 5 weights");
  expectError("saga-cost-model 1\nwidths 16\nvertices 1\n", "weights, one per line");
  expectError("saga-cost-model 1\nwidths 0\nvertices 1\nin_edges 1\n"
              "neighbour_runs 0\nmean_run_length 0\nout_edges 0\n",
              "line 2: width '0' is not a positive integer");
  expectError("saga-cost-model 1\nwidths 16\nvertices 1\nin_edges -1\n"
              "neighbour_runs 0\nmean_run_length 0\nout_edges 0\n",
              "line 4: weight '-1' is not a non-negative number");
}

// ROC's online refinement: each refinement adds one sample per worker of
// the cut it is running (the same cut each time), fitted with the current
// weights as a prior. From the unfitted prior (a unit per vertex and
// in-edge), the refined model predicts the running cut's steps, a cut by
// it balances the true cost better than the prior's, and a second round on
// that cut improves the held-out prediction further. Saved as comment
// lines of a parameter file, it reads back.
TEST(Partitioner, OnlineRefinementLearnsFromTheRunningCut) {
  Graph g = rmat(13, 8, 5);
  CostModel truth = trueModel();
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0.0, 0.02);
  auto range = [&](const Partitioning &p, int64_t k) {
    return std::pair{p.bounds[size_t(k)], p.bounds[size_t(k) + 1]};
  };
  auto trueCosts = [&](const Partitioning &p) {
    std::vector<double> c;
    for (int64_t k = 0; k < p.parts(); ++k) {
      auto [b, e] = range(p, k);
      c.push_back(truth.predict(truth.inputs(g, b, e)));
    }
    return c;
  };
  auto heldOutError = [&](const CostModel &m) {
    // Relative error after the best common scale (the prior is in units).
    Partitioning p = partitionByVertices(g, 6);
    std::vector<double> ratio;
    for (int64_t k = 0; k < p.parts(); ++k) {
      auto [b, e] = range(p, k);
      ratio.push_back(m.predict(m.inputs(g, b, e)) /
                      truth.predict(truth.inputs(g, b, e)));
    }
    double mean = std::accumulate(ratio.begin(), ratio.end(), 0.0) / 6;
    double worst = 0;
    for (double r : ratio)
      worst = std::max(worst, std::fabs(r / mean - 1));
    return worst;
  };
  CostModel model({16, 7});
  model.setWeights({1, 1, 0, 0, 0});
  const double priorError = heldOutError(model);
  std::vector<CostModel::Sample> samples;
  auto refineOn = [&](const Partitioning &p, int rounds) {
    double rms = 0;
    for (int round = 0; round < rounds; ++round) {
      for (int64_t k = 0; k < p.parts(); ++k) {
        auto [b, e] = range(p, k);
        CostFeatures in = model.inputs(g, b, e);
        samples.push_back({in, truth.predict(in) * (1 + noise(rng))});
      }
      rms = model.refine(samples, 0.1);
    }
    return rms;
  };
  Partitioning first = partitionByCost(g, 4, model);
  EXPECT_LT(refineOn(first, 3), 0.1);
  Partitioning second = partitionByCost(g, 4, model);
  EXPECT_LT(imbalance(trueCosts(second)), imbalance(trueCosts(first)));
  EXPECT_LT(imbalance(trueCosts(second)), 1.10);
  const double onceError = heldOutError(model);
  EXPECT_LT(onceError, priorError);
  refineOn(second, 3);
  EXPECT_LE(heldOutError(model), onceError * 1.05);
  // No samples or no prior strength: as fit().
  CostModel copy = model;
  EXPECT_DOUBLE_EQ(copy.refine({}, 0.1), 0.0);
  EXPECT_EQ(copy.weights(), model.weights());

  auto back = CostModel::parse("GCNConv#0.W 1 2\n0.5 0.25\n# " +
                               llvm::join(llvm::split(model.serialize(), '\n'),
                                          "\n# "));
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  for (int k = 0; k < kCostFeatures; ++k)
    EXPECT_DOUBLE_EQ(back->weights()[size_t(k)], model.weights()[size_t(k)]);
}

// Row blocks for the thread pool by the model's cost: from 0 to V, inner
// bounds on the alignment, ascending, about the number asked.
TEST(Partitioner, RowBlocksByCostAreAlignedRanges) {
  Graph g = rmat(14, 8, 4);
  CostModel m = trueModel();
  std::vector<int64_t> b = rowBlocksByCost(g, 40, m, 256);
  ASSERT_GE(b.size(), 2u);
  EXPECT_EQ(b.front(), 0);
  EXPECT_EQ(b.back(), g.numVertices);
  EXPECT_LE(b.size(), 41u);
  EXPECT_GE(b.size(), 30u);
  for (size_t i = 1; i < b.size(); ++i) {
    EXPECT_GT(b[i], b[i - 1]);
    if (i + 1 < b.size()) {
      EXPECT_EQ(b[i] % 256, 0);
    }
  }
}

// METIS's parts come back as contiguous ranges of a relabelled graph: the
// order is a permutation, the same for any part count (so results keyed by
// vertex id do not depend on it), the cut reported is the relabelled
// graph's, and it cuts far fewer edges than equal vertices on a graph with
// locality (a grid).
TEST(Partitioner, MetisPartsBecomeContiguousRanges) {
  std::vector<int32_t> firstOrder;
  for (int64_t parts : {1, 2, 3, 4}) {
    SCOPED_TRACE(parts);
    Graph g = rmat(10, 8, 3);
    VertexOrder order;
    int64_t reported = -1;
    auto p = partitionByMetis(g, parts, order, &reported);
    ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
    expectContiguous(*p, parts, g.numVertices);
    std::vector<int32_t> seen(size_t(g.numVertices), 0);
    for (int32_t v = 0; v < g.numVertices; ++v) {
      ASSERT_GE(order.newId[size_t(v)], 0);
      ASSERT_LT(order.newId[size_t(v)], g.numVertices);
      EXPECT_EQ(order.oldId[size_t(order.newId[size_t(v)])], v);
      ++seen[size_t(order.newId[size_t(v)])];
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), g.numVertices);
    if (firstOrder.empty())
      firstOrder = order.newId;
    EXPECT_EQ(order.newId, firstOrder);
    // Relabel the edges and compare cuts.
    std::vector<int32_t> src, dst;
    for (int32_t v = 0; v < g.numVertices; ++v)
      for (int64_t i = g.inOffsets[size_t(v)]; i < g.inOffsets[size_t(v) + 1]; ++i) {
        src.push_back(order.newId[size_t(g.inSources[size_t(i)])]);
        dst.push_back(order.newId[size_t(v)]);
      }
    Graph relabelled = Graph::build(g.numVertices, src, dst, false);
    EXPECT_EQ(edgeCut(relabelled, *p), reported);
    if (parts == 1) {
      EXPECT_EQ(reported, 0);
    }
  }
  // A 32 x 32 grid (both directions): METIS cuts a few rows' worth of
  // edges; equal vertices of a random relabelling cut most of them.
  const int side = 32, n = side * side;
  std::vector<int32_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(5));
  std::vector<int32_t> src, dst;
  for (int r = 0; r < side; ++r)
    for (int c = 0; c < side; ++c) {
      int v = r * side + c;
      if (c + 1 < side) {
        src.insert(src.end(), {perm[v], perm[v + 1]});
        dst.insert(dst.end(), {perm[v + 1], perm[v]});
      }
      if (r + 1 < side) {
        src.insert(src.end(), {perm[v], perm[v + side]});
        dst.insert(dst.end(), {perm[v + side], perm[v]});
      }
    }
  Graph grid = Graph::build(n, src, dst, false);
  VertexOrder order;
  int64_t cut = 0;
  auto p = partitionByMetis(grid, 4, order, &cut);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_LT(cut, 4 * 2 * side); // ~ 2 boundaries of 32 pairs, both ways
  EXPECT_GT(edgeCut(grid, partitionByVertices(grid, 4)), 10 * cut);
  EXPECT_LT(imbalance({double(p->bounds[1] - p->bounds[0]),
                       double(p->bounds[2] - p->bounds[1]),
                       double(p->bounds[3] - p->bounds[2]),
                       double(p->bounds[4] - p->bounds[3])}),
            1.05);
}
