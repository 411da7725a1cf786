//===- SamplerTest.cpp - neighbour sampling for mini-batches --------------===//

#include "runtime/exec/ThreadPool.h"
#include "runtime/graph/Synthetic.h"
#include "runtime/sample/NeighborSampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

using namespace saga;

namespace {
Graph rmat(int scale, int edgeFactor, uint64_t seed, bool loops) {
  EdgeList e = rmatGraph(scale, edgeFactor, seed);
  return Graph::build(e.numVertices, e.src, e.dst, loops);
}

/// The in-neighbours of v (with repeats, without the added self loop).
std::multiset<int32_t> inNeighbours(const Graph &g, int32_t v) {
  std::multiset<int32_t> s;
  int64_t firstLoopId = g.selfLoops ? g.numEdges - g.numVertices : g.numEdges;
  for (int64_t i = g.inOffsets[size_t(v)]; i < g.inOffsets[size_t(v) + 1]; ++i)
    if (g.inEdgeIds[size_t(i)] < firstLoopId)
      s.insert(g.inSources[size_t(i)]);
  return s;
}

std::vector<int32_t> someSeeds(const Graph &g, int n) {
  std::vector<int32_t> s;
  for (int i = 0; i < n; ++i)
    s.push_back(int32_t((int64_t(i) * 7919) % g.numVertices));
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}
} // namespace

// Every sampled edge is a real in-edge (the data's, never the added self
// loop), no in-neighbour position is drawn twice, each row draws
// min(fan-out, degree) (all with -1), rows are in hop order and every
// block's destinations are a prefix of its sources.
TEST(Sampler, SamplesRealNeighboursWithoutRepeatsWithinTheFanout) {
  for (bool loops : {false, true}) {
    Graph g = rmat(12, 8, 5, loops);
    for (std::vector<int64_t> fanouts :
         {std::vector<int64_t>{10, 25}, {3, -1}, {5, 5, 5}}) {
      NeighborSampler sampler(g, fanouts, 17);
      std::vector<int32_t> seeds = someSeeds(g, 64);
      SampledBatch b = sampler.sample(seeds, 3);
      const int64_t layers = int64_t(fanouts.size());
      ASSERT_EQ(b.layers(), layers);
      ASSERT_EQ(b.seeds(), int64_t(seeds.size()));
      EXPECT_TRUE(std::equal(seeds.begin(), seeds.end(), b.vertices.begin()));
      EXPECT_EQ(b.levels.back(), int64_t(b.vertices.size()));
      EXPECT_TRUE(std::is_sorted(b.levels.begin(), b.levels.end()));
      // Local rows are distinct vertices.
      EXPECT_EQ(std::set<int32_t>(b.vertices.begin(), b.vertices.end()).size(),
                b.vertices.size());
      ASSERT_EQ(int64_t(b.dstEdges.size()), b.levels[size_t(layers - 1)] + 1);
      for (int64_t r = 0; r < b.levels[size_t(layers - 1)]; ++r) {
        // The hop r was reached at draws that hop's fan-out.
        int64_t hop = std::upper_bound(b.levels.begin(), b.levels.end(), r) -
                      b.levels.begin();
        int64_t fanout = fanouts[size_t(layers - 1 - hop)];
        int32_t v = b.vertices[size_t(r)];
        std::multiset<int32_t> real = inNeighbours(g, v);
        std::multiset<int32_t> drawn;
        for (int64_t i = b.dstEdges[size_t(r)]; i < b.dstEdges[size_t(r) + 1];
             ++i) {
          ASSERT_EQ(b.dst[size_t(i)], r);
          // Sources are at most one hop farther than their row.
          ASSERT_LT(b.src[size_t(i)], b.levels[size_t(hop + 1)]);
          drawn.insert(b.vertices[size_t(b.src[size_t(i)])]);
        }
        int64_t want = fanout < 0 ? int64_t(real.size())
                                  : std::min<int64_t>(fanout, real.size());
        EXPECT_EQ(int64_t(drawn.size()), want) << "row " << r;
        // A sub-multiset of the real neighbours: no position twice.
        for (int32_t u : std::set<int32_t>(drawn.begin(), drawn.end()))
          EXPECT_LE(drawn.count(u), real.count(u)) << "row " << r << " from " << u;
      }
      for (int64_t l = 0; l < layers; ++l) {
        int64_t dstRows, srcRows, edges;
        b.block(l, &dstRows, &srcRows, &edges);
        EXPECT_LE(dstRows, srcRows);
        EXPECT_EQ(edges, b.dstEdges[size_t(dstRows)]);
        for (int64_t i = 0; i < edges; ++i)
          EXPECT_LT(b.src[size_t(i)], srcRows);
      }
    }
  }
}

// Uniform without replacement: over many batch keys, each of a vertex's d
// in-neighbours is drawn k/d of the time (chi-square, 19 degrees of
// freedom, p = 0.001 at 43.8), and each unordered pair k(k-1)/(d(d-1)) of
// the time (chi-square over the 190 pairs, p = 0.001 at 245).
TEST(Sampler, ChoicesAreUniform) {
  const int32_t d = 20, k = 5;
  std::vector<int32_t> src, dst;
  for (int32_t u = 1; u <= d; ++u) {
    src.push_back(u);
    dst.push_back(0);
  }
  Graph g = Graph::build(d + 1, src, dst, true);
  NeighborSampler sampler(g, {k}, 99);
  const int draws = 40000;
  std::vector<double> counts(size_t(d), 0);
  std::map<std::pair<int32_t, int32_t>, double> pairs;
  std::vector<int64_t> positions;
  for (int key = 0; key < draws; ++key) {
    sampler.choose(0, k, uint64_t(key), positions);
    ASSERT_EQ(positions.size(), size_t(k));
    std::vector<int32_t> us;
    for (int64_t p : positions)
      us.push_back(g.inSources[size_t(p)]);
    for (int32_t u : us) {
      ASSERT_GE(u, 1); // never the self loop
      counts[size_t(u - 1)] += 1;
    }
    for (size_t i = 0; i < us.size(); ++i)
      for (size_t j = i + 1; j < us.size(); ++j)
        pairs[{std::min(us[i], us[j]), std::max(us[i], us[j])}] += 1;
  }
  double expected = double(draws) * k / d, chi = 0;
  for (double c : counts)
    chi += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi, 43.8) << "single choices are not uniform";
  ASSERT_EQ(pairs.size(), size_t(d * (d - 1) / 2));
  double expectedPair = double(draws) * k * (k - 1) / (d * (d - 1)), chiPairs = 0;
  for (auto &[pair, c] : pairs)
    chiPairs += (c - expectedPair) * (c - expectedPair) / expectedPair;
  EXPECT_LT(chiPairs, 245.0) << "pairs are not uniform";
}

// The samples depend on (seed, batch key, vertex) only: the same with 1
// and 2 threads, different for another key or seed.
TEST(Sampler, SameSamplesForOneAndTwoThreads) {
  Graph g = rmat(13, 8, 2, true);
  std::vector<int32_t> seeds = someSeeds(g, 1024);
  NeighborSampler one(g, {10, 25}, 5), two(g, {10, 25}, 5), other(g, {10, 25}, 6);
  ThreadPool pool1(1), pool2(2);
  SampledBatch a = one.sample(seeds, 11, &pool1);
  SampledBatch b = two.sample(seeds, 11, &pool2);
  EXPECT_EQ(a.vertices, b.vertices);
  EXPECT_EQ(a.levels, b.levels);
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.dst, b.dst);
  // The sampler reused (its stamps): the same batch again.
  SampledBatch again = two.sample(seeds, 11, &pool2);
  EXPECT_EQ(again.src, a.src);
  EXPECT_NE(two.sample(seeds, 12, &pool2).src, a.src);
  EXPECT_NE(other.sample(seeds, 11, &pool2).src, a.src);
}
