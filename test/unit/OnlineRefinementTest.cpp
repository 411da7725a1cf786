//===- OnlineRefinementTest.cpp - ROC's cost model refined online ---------===//

#include "runtime/distributed/OnlineRefinement.h"
#include "runtime/graph/Synthetic.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace saga;

namespace {
Graph rmat(int scale, int edgeFactor, uint64_t seed) {
  EdgeList e = rmatGraph(scale, edgeFactor, seed);
  return Graph::build(e.numVertices, e.src, e.dst, false);
}

CostModel prior() {
  CostModel m({16, 7});
  m.setWeights({1, 1, 0, 0, 0});
  return m;
}

/// Every part's sample of `p`, its seconds drawn from `truth`.
std::vector<CostModel::Sample> samplesOf(const Graph &g, const Partitioning &p,
                                         const CostModel &model,
                                         const CostModel &truth) {
  std::vector<CostModel::Sample> samples;
  for (int64_t k = 0; k < p.parts(); ++k) {
    int32_t b = p.bounds[size_t(k)], e = p.bounds[size_t(k) + 1];
    samples.push_back(
        {model.inputs(g, b, e), truth.predict(truth.inputs(g, b, e))});
  }
  return samples;
}
} // namespace

// measure() says when to refine: every `every` epochs by the epoch's
// number (a resumed run keeps the cadence), never with 0.
TEST(OnlineRefinement, RefinesEveryNEpochs) {
  CostModel cost = prior();
  OnlineRefinement every3(cost, {}, 3);
  EXPECT_FALSE(every3.measure(1, 1.0));
  EXPECT_FALSE(every3.measure(2, 1.0));
  EXPECT_TRUE(every3.measure(3, 1.0));
  EXPECT_TRUE(every3.measure(6, 1.0));
  OnlineRefinement never(cost, {}, 0);
  for (unsigned epoch = 1; epoch <= 10; ++epoch)
    EXPECT_FALSE(never.measure(epoch, 1.0));
  EXPECT_EQ(never.every(), 0u);
}

// A part's sample is its inputs and its mean compute seconds per epoch
// since the last refinement; a refinement starts the mean again.
TEST(OnlineRefinement, SampleIsTheMeanSinceTheLastRefinement) {
  Graph g = rmat(10, 8, 1);
  CostModel cost = prior();
  Partitioning p = partitionByVertices(g, 2);
  const CostFeatures inputs = cost.inputs(g, p.bounds[0], p.bounds[1]);
  OnlineRefinement r(cost, inputs, 2);
  r.measure(1, 1.0);
  r.measure(2, 3.0);
  CostModel::Sample s = r.sample();
  EXPECT_EQ(s.inputs, inputs);
  EXPECT_DOUBLE_EQ(s.seconds, 2.0);
  r.refine({s, {cost.inputs(g, p.bounds[1], p.bounds[2]), 2.5}}, nullptr, p);
  r.measure(3, 5.0);
  EXPECT_DOUBLE_EQ(r.sample().seconds, 5.0);
}

// A refinement fits every part's sample, added to the earlier ones, with
// the current weights as a prior (CostModel::refine at kCostPriorStrength,
// so every worker refining the same samples gets the same model); with the
// whole graph it says how far a cut by the refined model moves the running
// cut's bounds.
TEST(OnlineRefinement, RefinesTheModelAndReportsTheRecut) {
  Graph g = rmat(12, 8, 5);
  CostModel truth({16, 7});
  truth.setWeights({2e-7, 1e-8, 5e-8, 0, 3e-9});
  CostModel cost = prior(), expected = prior(), other = prior();
  Partitioning running = partitionByCost(g, 4, cost);
  OnlineRefinement r(cost, {}, 1);
  OnlineRefinement onAnotherWorker(other, {}, 1);
  std::vector<CostModel::Sample> all;
  for (int round = 1; round <= 2; ++round) {
    std::vector<CostModel::Sample> parts = samplesOf(g, running, cost, truth);
    std::vector<double> measured, before, after;
    for (const CostModel::Sample &s : parts) {
      measured.push_back(s.seconds);
      before.push_back(expected.predict(s.inputs));
    }
    all.insert(all.end(), parts.begin(), parts.end());
    double rms = expected.refine(all, kCostPriorStrength);
    for (const CostModel::Sample &s : parts)
      after.push_back(expected.predict(s.inputs));

    Refinement result = r.refine(parts, &g, running);
    onAnotherWorker.refine(parts, nullptr, running);
    EXPECT_EQ(result.samples, size_t(4 * round));
    EXPECT_EQ(r.samples().size(), size_t(4 * round));
    EXPECT_DOUBLE_EQ(result.rms, rms);
    EXPECT_EQ(cost.weights(), expected.weights());
    EXPECT_EQ(other.weights(), expected.weights());
    EXPECT_DOUBLE_EQ(result.measured, imbalance(measured));
    EXPECT_DOUBLE_EQ(result.predictedBefore, imbalance(before));
    EXPECT_DOUBLE_EQ(result.predicted, imbalance(after));
    ASSERT_TRUE(result.recut.has_value());
    EXPECT_EQ(result.recut->bounds, partitionByCost(g, 4, cost).bounds);
    int64_t moved = 0;
    for (size_t q = 1; q < 4; ++q)
      moved += std::abs(int64_t(result.recut->bounds[q]) -
                        int64_t(running.bounds[q]));
    EXPECT_EQ(result.moved, moved);
  }
  // The unfitted prior cut by vertices and in-edges; the true cost differs.
  EXPECT_GT(r.refine(samplesOf(g, running, cost, truth), &g, running).moved, 0);
  // Without the whole graph: no cut.
  EXPECT_FALSE(
      onAnotherWorker
          .refine(samplesOf(g, running, other, truth), nullptr, running)
          .recut);
}
