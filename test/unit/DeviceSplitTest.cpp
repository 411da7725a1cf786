//===- DeviceSplitTest.cpp - a memory problem's operators over devices ----===//

#include "support/DeviceSplit.h"

#include <gtest/gtest.h>

using namespace saga;

namespace {

/// Tensors: 0 an input (features), 1 made by op 0, 2 a running state.
///   op 0 (dev 0): reads 0, writes 1
///   op 1 (dev 1): reads 0 and 1, writes 2
///   op 2 (dev 1): reads 1, updates 2
///   op 3 (dev 0): reads 2
///   op 4 (dev 1): reads 0
MemoryProblem problem() {
  MemoryProblem p;
  p.tensors = {{"x", 100, true}, {"h", 50, false}, {"s", 20, false}};
  PlanOperator a{"a", {0}, {1}, {}, {}}, b{"b", {0, 1}, {2}, {}, {}},
      c{"c", {1}, {}, {2}, {{1, 10}}}, d{"d", {2}, {}, {}, {}},
      e{"e", {0}, {}, {}, {}};
  p.ops = {a, b, c, d, e};
  return p;
}

} // namespace

// A version per run of touches on a device; what another device made is an
// input handed over after the maker's last touch; a graph input is read
// where it lives by its first reader and handed over (unchanged) after.
TEST(DeviceSplit, VersionsAndHandovers) {
  DeviceSplit s = splitByDevice(problem(), {0, 1, 1, 0, 1}, 2);
  ASSERT_EQ(s.error, "");
  const DeviceProblem &d0 = s.devices[0], &d1 = s.devices[1];
  EXPECT_EQ(d0.globalOp, (std::vector<int>{0, 3}));
  EXPECT_EQ(d1.globalOp, (std::vector<int>{1, 2, 4}));
  // Device 0: x (from where it lives), h (made), s (handed over after op 2).
  EXPECT_EQ(d0.globalTensor, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(d0.exportedAfter, (std::vector<int>{-1, -1, 2}));
  EXPECT_TRUE(d0.problem.tensors[0].input);
  EXPECT_FALSE(d0.problem.tensors[1].input);
  EXPECT_TRUE(d0.problem.tensors[2].input);
  // Device 1: x and h handed over after op 0, s made; x again after op 3?
  // No: device 0 touched s, not x, so x's version on device 1 goes on.
  EXPECT_EQ(d1.globalTensor, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(d1.exportedAfter, (std::vector<int>{0, 0, -1}));
  EXPECT_EQ(d1.lastOp, (std::vector<int>{4, 2, 2}));
  // The partial read names device 1's version of h.
  ASSERT_EQ(d1.problem.ops[1].partialReads.size(), 1u);
  EXPECT_EQ(d1.problem.ops[1].partialReads[0].first, 1);
  // Handovers: x (unchanged) and h after op 0, read to op 4 and op 2; s
  // after op 2, read by op 3.
  ASSERT_EQ(s.exportsAfter[0].size(), 2u);
  EXPECT_EQ(s.exportsAfter[0][0].tensor, 0);
  EXPECT_TRUE(s.exportsAfter[0][0].unchanged);
  EXPECT_EQ(s.exportsAfter[0][0].lastReader, 4);
  EXPECT_EQ(s.exportsAfter[0][1].tensor, 1);
  EXPECT_FALSE(s.exportsAfter[0][1].unchanged);
  EXPECT_EQ(s.exportsAfter[0][1].lastReader, 2);
  ASSERT_EQ(s.exportsAfter[2].size(), 1u);
  EXPECT_EQ(s.exportsAfter[2][0].tensor, 2);
  EXPECT_EQ(s.exportsAfter[2][0].lastReader, 3);
  EXPECT_TRUE(s.exportsAfter[1].empty());
}

// One device: its problem is the whole one, nothing handed over.
TEST(DeviceSplit, OneDeviceIsTheWholeProblem) {
  MemoryProblem p = problem();
  DeviceSplit s = splitByDevice(p, {0, 0, 0, 0, 0}, 1);
  ASSERT_EQ(s.error, "");
  EXPECT_EQ(s.devices[0].problem.ops.size(), p.ops.size());
  EXPECT_EQ(s.devices[0].problem.tensors.size(), p.tensors.size());
  for (const auto &list : s.exportsAfter)
    EXPECT_TRUE(list.empty());
}

TEST(DeviceSplit, Errors) {
  EXPECT_NE(splitByDevice(problem(), {0, 2, 1, 0, 1}, 2).error.find(
                "operator 1 (b) is given device 2"),
            std::string::npos);
  MemoryProblem p = problem();
  p.ops[0].writes.clear(); // h read before anything makes it
  EXPECT_NE(splitByDevice(p, {0, 1, 1, 0, 1}, 2).error.find(
                "tensor h is read by operator 1 (b) before any operator "
                "makes it"),
            std::string::npos);
}
