//===- HaloBufferTest.cpp - MassiveGNN's buffer policy --------------------===//

#include "runtime/sample/HaloBuffer.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace saga;

namespace {
/// Halo vertices 10, 20, ..., 100 with in-degrees 1..10 in a scrambled
/// order; one float per row: the vertex id.
struct Fixture {
  std::vector<int32_t> halo{10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
  std::vector<int64_t> degree{5, 9, 1, 10, 3, 8, 2, 7, 4, 6};
  std::vector<float> rowsOf(const std::vector<int32_t> &ids) const {
    return std::vector<float>(ids.begin(), ids.end());
  }
};
} // namespace

// The fill: floor(f x |halo|) vertices of highest in-degree, scores 1.
TEST(HaloBuffer, FillsWithTheHighestInDegrees) {
  Fixture x;
  HaloBuffer b(x.halo, x.degree, 1, {0.35, 4, 0.1});
  // floor(3.5) = 3: degrees 10, 9, 8 are vertices 40, 20, 60; slots by id.
  EXPECT_EQ(b.slots(), (std::vector<int32_t>{20, 40, 60}));
  for (int32_t s = 0; s < 3; ++s)
    EXPECT_FLOAT_EQ(b.score(s), 1.0f);
  EXPECT_FLOAT_EQ(b.missCount(40), -1.0f); // buffered
  EXPECT_FLOAT_EQ(b.missCount(10), 0.0f);
  // tau = 0.9^4 = 0.6561, rounded to 3 decimals.
  EXPECT_FLOAT_EQ(b.threshold(), 0.656f);
  // f = 0: no buffer, everything fetched.
  HaloBuffer none(x.halo, x.degree, 1, {0.0, 4, 0.1});
  EXPECT_EQ(none.size(), 0);
  auto plan = none.lookup({10, 20});
  EXPECT_EQ(plan.fetch, (std::vector<int32_t>{10, 20}));
  EXPECT_EQ(none.counters().misses, 2);
  EXPECT_EQ(none.counters().hits, 0);
}

// Each lookup decays every score and restores the ones read; hits come
// from their slots; misses of halo vertices are counted (non-halo remote
// vertices are fetched but not counted).
TEST(HaloBuffer, LookupDecaysScoresAndCountsMisses) {
  Fixture x;
  HaloBuffer b(x.halo, x.degree, 1, {0.3, 100, 0.1});
  b.fill(x.rowsOf(b.slots()).data());
  auto plan = b.lookup({40, 10, 10000, 30});
  EXPECT_EQ(plan.slotOf, (std::vector<int32_t>{1, -1, -1, -1}));
  EXPECT_FLOAT_EQ(*b.row(plan.slotOf[0]), 40.0f);
  EXPECT_EQ(plan.fetch, (std::vector<int32_t>{10, 10000, 30}));
  EXPECT_TRUE(plan.newcomers.empty());
  EXPECT_FLOAT_EQ(b.score(1), 1.0f);       // 40: read
  EXPECT_FLOAT_EQ(b.score(0), 0.9f);       // 20: decayed
  EXPECT_FLOAT_EQ(b.missCount(10), 1.0f);
  EXPECT_FLOAT_EQ(b.missCount(30), 1.0f);
  EXPECT_EQ(b.counters().hits, 1);
  EXPECT_EQ(b.counters().misses, 2);
  b.lookup({10});
  EXPECT_FLOAT_EQ(b.missCount(10), 2.0f);
  EXPECT_NEAR(b.score(0), 0.81f, 1e-6);
}

// Every Delta-th lookup replaces the slots below tau with the most-missed
// halo vertices: the newcomer's score is its miss count, the evicted
// vertex's miss count its last score; the newcomers come with the batch's
// misses; that round counts no misses (as MassiveGNN's code).
TEST(HaloBuffer, EvictsColdSlotsForTheMostMissed) {
  Fixture x;
  // 3 slots (20, 40, 60), Delta 4, alpha 0.1: tau = round(0.9^4, 3) = 0.656.
  HaloBuffer b(x.halo, x.degree, 1, {0.3, 4, 0.1});
  b.fill(x.rowsOf(b.slots()).data());
  b.lookup({40, 10, 30}); // 10 and 30 missed once
  b.lookup({40, 10});     // 10 twice
  b.lookup({40, 10, 50}); // 10 thrice, 50 once
  // The 4th lookup is an eviction round, but 20 and 60 score 0.9^4 =
  // 0.6561, not below tau: nothing is replaced, misses are counted.
  auto plan = b.lookup({40, 90});
  EXPECT_TRUE(plan.newcomers.empty());
  EXPECT_FLOAT_EQ(b.missCount(90), 1.0f);
  b.lookup({40});
  b.lookup({40});
  b.lookup({40});
  // The 8th: 20 and 60 at 0.9^8 < tau, 40 at 1. The most missed: 10 (3),
  // then 30, 50 and 90 (1 each, by id).
  plan = b.lookup({40, 30, 70});
  EXPECT_EQ(plan.replacedSlots, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(plan.newcomers, (std::vector<int32_t>{10, 30}));
  EXPECT_EQ(plan.fetch, (std::vector<int32_t>{30, 70}));
  EXPECT_NEAR(b.missCount(20), std::pow(0.9, 8), 1e-6); // evicted: its score
  EXPECT_FLOAT_EQ(b.missCount(10), -1.0f);
  EXPECT_FLOAT_EQ(b.missCount(70), 0.0f); // not counted on this round
  EXPECT_FLOAT_EQ(b.missCount(50), 1.0f);
  EXPECT_EQ(b.counters().replaced, 2);
  // The newcomers' rows go in; slots stay in vertex order.
  std::vector<float> rows = x.rowsOf(plan.newcomers);
  b.install(plan, rows.data());
  EXPECT_EQ(b.slots(), (std::vector<int32_t>{10, 30, 40}));
  EXPECT_FLOAT_EQ(*b.row(0), 10.0f);
  EXPECT_FLOAT_EQ(*b.row(1), 30.0f);
  EXPECT_FLOAT_EQ(*b.row(2), 40.0f);
  EXPECT_FLOAT_EQ(b.score(0), 3.0f); // 10's miss count
  EXPECT_FLOAT_EQ(b.score(1), 1.0f); // 30's
  auto next = b.lookup({10, 30});
  EXPECT_EQ(next.slotOf, (std::vector<int32_t>{0, 1}));
  EXPECT_TRUE(next.fetch.empty());
}
