//===- RingScheduleTest.cpp - NGra's ring schedule and its cost model -----===//

#include "support/RingCost.h"
#include "support/RingSchedule.h"

#include <gtest/gtest.h>

#include <numeric>

using namespace saga;

// Every device sees every source interval once, peer copies come from the
// device that held the interval the step before, owners are contiguous.
TEST(RingSchedule, EveryDeviceSeesEveryIntervalOnce) {
  for (int n = 1; n <= 8; ++n)
    for (int64_t p = 1; p <= 20; ++p)
      for (bool ring : {true, false}) {
        RingSchedule s = planRing(n, std::vector<int64_t>(size_t(p), 1), ring);
        EXPECT_EQ(s.check(), "") << n << " devices, " << p << " intervals";
      }
}

// The ring loads each interval from the host once per propagation; the
// baseline N times; the rest goes over peer links.
TEST(RingSchedule, RingLoadsEachIntervalFromTheHostOnce) {
  for (int n = 1; n <= 8; ++n)
    for (int64_t p = 1; p <= 20; ++p) {
      RingSchedule ring = planRing(n, std::vector<int64_t>(size_t(p), 1));
      RingSchedule base =
          planRing(n, std::vector<int64_t>(size_t(p), 1), /*ring=*/false);
      EXPECT_EQ(ring.hostLoads(), p);
      EXPECT_EQ(ring.peerCopies(), (n - 1) * p);
      EXPECT_EQ(base.hostLoads(), n * p);
      EXPECT_EQ(base.peerCopies(), 0);
      std::vector<int64_t> bytes(static_cast<size_t>(p));
      std::iota(bytes.begin(), bytes.end(), 100);
      int64_t total = std::accumulate(bytes.begin(), bytes.end(), int64_t(0));
      EXPECT_EQ(ring.hostBytes(bytes), total);
      EXPECT_EQ(base.hostBytes(bytes), n * total);
      EXPECT_EQ(ring.peerBytes(bytes), (n - 1) * total);
    }
}

// Owners are contiguous runs near 1/N of the weight; each device owns one
// interval at least while there are enough.
TEST(RingSchedule, OwnersSplitTheWeight) {
  std::vector<int64_t> w = {50, 1, 1, 1, 1, 1, 1, 1, 1, 42};
  RingSchedule s = planRing(2, w);
  EXPECT_EQ(s.check(), "");
  EXPECT_EQ(s.endOwned(0), 1);  // 50 of 100 is half
  EXPECT_EQ(s.firstOwned(1), 1);
  EXPECT_EQ(s.endOwned(1), 10);
  RingSchedule four = planRing(4, std::vector<int64_t>(8, 1));
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(four.firstOwned(d), 2 * d);
    EXPECT_EQ(four.endOwned(d), 2 * d + 2);
  }
  // More devices than intervals: the later ones own none, and still pass
  // intervals on.
  RingSchedule wide = planRing(5, std::vector<int64_t>(3, 7));
  EXPECT_EQ(wide.check(), "");
  EXPECT_EQ(wide.endOwned(2), 3);
  EXPECT_EQ(wide.firstOwned(4), wide.endOwned(4));
  // A heavy first interval does not leave later devices without one.
  RingSchedule skew = planRing(3, {1000, 1, 1});
  for (int d = 0; d < 3; ++d)
    EXPECT_EQ(skew.endOwned(d) - skew.firstOwned(d), 1) << d;
}

TEST(RingSchedule, DescribeNamesEveryMove) {
  RingSchedule s = planRing(2, {1, 1, 1});
  EXPECT_EQ(s.describe(),
            "ring: 2 devices, 3 source intervals, 3 host loads, 3 peer copies\n"
            "  d0 owns destination intervals [0, 2)\n"
            "  d1 owns destination intervals [2, 3)\n"
            "  step 0: d0 <- i0 from host, d1 <- i1 from host\n"
            "  step 1: d0 <- i1 from d1, d1 <- i0 from d0\n"
            "  step 2: d0 <- i2 from host\n"
            "  step 3: d1 <- i2 from d0\n");
}

// The cost model's bytes are the schedule's: the ring's host bytes are N
// times fewer than the baseline's, one device's equal a baseline device's.
TEST(RingCost, RingMovesNTimesFewerHostBytes) {
  RingWorkload w;
  w.vertices = int64_t(1) << 26;
  w.edges = w.vertices * 16;
  RingRates r;
  RingEstimate one = estimateRing(w, r, 1, false);
  ASSERT_EQ(one.error, "");
  EXPECT_GT(one.parts, 1); // out of core: 34 GB of rows, 80 GB device
  for (int n : {2, 4, 8}) {
    RingEstimate ring = estimateRing(w, r, n, true);
    RingEstimate base = estimateRing(w, r, n, false);
    ASSERT_EQ(ring.error, "");
    EXPECT_EQ(ring.parts % n, 0);
    const int64_t value = w.vertices * w.rowBytes;
    // Integer interval sizes: within one byte per interval and pass.
    const int64_t per = w.propagations * ring.passes;
    EXPECT_NEAR(double(ring.hostBytes), double(per * value),
                double(per * ring.parts));
    EXPECT_NEAR(double(ring.peerBytes), double((n - 1) * per * value),
                double((n - 1) * per * ring.parts));
    EXPECT_NEAR(double(base.hostBytes),
                double(n * w.propagations * base.passes * value),
                double(n * w.propagations * base.passes * base.parts));
    EXPECT_EQ(base.peerBytes, 0);
    // Faster than the baseline, and than one device.
    EXPECT_LT(ring.seconds, base.seconds) << n;
    EXPECT_LT(ring.seconds, one.seconds) << n;
    EXPECT_GT(ring.seconds, 0);
  }
}

TEST(RingCost, SaysWhenTheEdgesDoNotFit) {
  RingWorkload w;
  w.vertices = 1000;
  w.edges = int64_t(1) << 40;
  RingEstimate e = estimateRing(w, RingRates(), 1, false);
  EXPECT_NE(e.error.find("share of the edges"), std::string::npos) << e.error;
}

// Weights: each destination interval's in-edges (column sums), else rows.
TEST(RingSchedule, DestinationWeights) {
  std::vector<int32_t> bounds = {0, 10, 30};
  EXPECT_EQ(destinationWeights(bounds, {}), (std::vector<int64_t>{10, 20}));
  // [i * P + j]: 1 edge 0->0, 2 edges 0->1, 3 edges 1->0, 4 edges 1->1.
  EXPECT_EQ(destinationWeights(bounds, {1, 2, 3, 4}),
            (std::vector<int64_t>{4, 6}));
}
