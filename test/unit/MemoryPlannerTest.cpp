//===- MemoryPlannerTest.cpp - ROC's DP against brute force ---------------===//
//
// The exact planner against an independent brute force on random small
// instances: each gap between two consecutive uses of a tensor is either
// kept resident or dropped (loaded again at the next use; a tensor made on
// the device is stored once, at its first drop), every combination tried.
// Keeping a tensor for part of a gap never saves bytes, so the brute force
// is exact for the planner's cost model.
//
//===----------------------------------------------------------------------===//

#include "runtime/memory/MemoryPlanner.h"

#include "TestRandom.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

using namespace saga;
using sagatest::Rng;

namespace {

/// The fewest bytes moved under the budget, or -1 if nothing fits.
int64_t bruteForce(const MemoryProblem &p) {
  struct Gap {
    int tensor, from, to; // kept: resident for the operators in (from, to)
  };
  std::vector<std::vector<int>> uses(p.tensors.size());
  for (size_t i = 0; i < p.ops.size(); ++i) {
    for (int t : p.ops[i].reads)
      uses[size_t(t)].push_back(int(i));
    for (int t : p.ops[i].writes)
      uses[size_t(t)].push_back(int(i));
  }
  std::vector<Gap> gaps;
  int64_t base = 0; // loads every plan makes: each input's first use
  for (size_t t = 0; t < uses.size(); ++t) {
    auto &u = uses[t];
    std::sort(u.begin(), u.end());
    u.erase(std::unique(u.begin(), u.end()), u.end());
    if (!u.empty() && p.tensors[t].input)
      base += p.tensors[t].bytes;
    for (size_t j = 0; j + 1 < u.size(); ++j)
      gaps.push_back({int(t), u[j], u[j + 1]});
  }
  EXPECT_LE(gaps.size(), 20u) << "instance too large for brute force";
  int64_t best = -1;
  for (uint64_t keep = 0; keep < (uint64_t(1) << gaps.size()); ++keep) {
    int64_t cost = base;
    std::vector<char> stored(p.tensors.size(), 0);
    std::vector<int64_t> resident(p.ops.size(), 0);
    for (size_t t = 0; t < uses.size(); ++t)
      for (int i : uses[t])
        resident[size_t(i)] += p.tensors[t].bytes;
    for (size_t g = 0; g < gaps.size(); ++g) {
      const Gap &gap = gaps[g];
      int64_t bytes = p.tensors[size_t(gap.tensor)].bytes;
      if (keep >> g & 1) {
        for (int i = gap.from + 1; i < gap.to; ++i)
          resident[size_t(i)] += bytes;
      } else {
        cost += bytes; // the load at gap.to
        if (!p.tensors[size_t(gap.tensor)].input && !stored[size_t(gap.tensor)]) {
          stored[size_t(gap.tensor)] = 1;
          cost += bytes;
        }
      }
    }
    if (*std::max_element(resident.begin(), resident.end()) > p.budget)
      continue;
    if (best < 0 || cost < best)
      best = cost;
  }
  return best;
}

MemoryProblem randomProblem(Rng &rng) {
  MemoryProblem p;
  int inputs = rng.below(4);
  for (int i = 0; i < inputs; ++i)
    p.tensors.push_back({"in" + std::to_string(i), 1 + rng.below(100), true});
  int ops = 1 + rng.below(12);
  for (int i = 0; i < ops; ++i) {
    PlanOperator op;
    op.name = "op" + std::to_string(i);
    int reads = p.tensors.empty() ? 0 : rng.below(4);
    for (int r = 0; r < reads; ++r) {
      int t = rng.below(int64_t(p.tensors.size()));
      if (std::find(op.reads.begin(), op.reads.end(), t) == op.reads.end())
        op.reads.push_back(t);
    }
    int writes = rng.below(5) == 0 ? 0 : 1 + (rng.below(4) == 0);
    for (int w = 0; w < writes; ++w) {
      op.writes.push_back(int(p.tensors.size()));
      p.tensors.push_back(
          {"t" + std::to_string(p.tensors.size()), 1 + rng.below(100), false});
    }
    p.ops.push_back(op);
  }
  int64_t lo = minimumBudget(p), total = 0;
  for (auto &t : p.tensors)
    total += t.bytes;
  p.budget = lo + int64_t(rng.uniform() * double(total - lo + 1));
  return p;
}

size_t gapCount(const MemoryProblem &p) {
  std::vector<int> uses(p.tensors.size(), 0);
  for (const auto &op : p.ops) {
    for (int t : op.reads)
      ++uses[size_t(t)];
    for (int t : op.writes)
      ++uses[size_t(t)];
  }
  size_t gaps = 0;
  for (int u : uses)
    gaps += size_t(std::max(0, u - 1));
  return gaps;
}

} // namespace

TEST(MemoryPlanner, ExactEqualsBruteForceAndBeatsBaselines) {
  Rng rng(4242);
  int checked = 0, tighter = 0;
  int64_t exactTotal = 0, lruTotal = 0, streamTotal = 0;
  while (checked < 1500) {
    MemoryProblem p = randomProblem(rng);
    if (gapCount(p) > 16)
      continue;
    ++checked;
    SCOPED_TRACE("instance " + std::to_string(checked));
    int64_t brute = bruteForce(p);
    MemoryPlan exact = planExact(p);
    ASSERT_EQ(exact.method, "exact");
    ASSERT_TRUE(exact.feasible) << exact.error; // budget >= the minimum
    ASSERT_EQ(exact.bytesMoved(), brute);
    ASSERT_EQ(validatePlan(p, exact), "");
    for (const MemoryPlan &other : {planLru(p), planStreamAll(p), planGreedy(p)}) {
      SCOPED_TRACE(other.method);
      ASSERT_TRUE(other.feasible) << other.error;
      ASSERT_EQ(validatePlan(p, other), "");
      ASSERT_LE(exact.bytesMoved(), other.bytesMoved());
    }
    int64_t lru = planLru(p).bytesMoved();
    tighter += exact.bytesMoved() < lru;
    exactTotal += exact.bytesMoved();
    lruTotal += lru;
    streamTotal += planStreamAll(p).bytesMoved();
  }
  // The instances are not all trivial: LRU loses somewhere.
  EXPECT_GT(tighter, 10);
  EXPECT_LT(exactTotal, lruTotal);
  EXPECT_LT(lruTotal, streamTotal);
  RecordProperty("exact_bytes", std::to_string(exactTotal));
  RecordProperty("lru_bytes", std::to_string(lruTotal));
  RecordProperty("stream_all_bytes", std::to_string(streamTotal));
}

// A budget below one operator's own working set names it and what it needs.
TEST(MemoryPlanner, BudgetBelowTheMinimumSaysWhatItNeeds) {
  MemoryProblem p;
  p.tensors = {{"x", 40, true}, {"h", 70, false}};
  p.ops = {{"gemm", {0}, {1}}};
  p.budget = 100;
  EXPECT_EQ(minimumBudget(p), 110);
  for (const MemoryPlan &plan : {planExact(p), planLru(p), planStreamAll(p)}) {
    EXPECT_FALSE(plan.feasible);
    EXPECT_EQ(plan.error, "operator 0 (gemm) needs 110 bytes resident at "
                          "once; the budget is 100");
  }
}

// Past its state limit the DP falls back to the greedy plan and says so.
TEST(MemoryPlanner, FallsBackToGreedyPastTheStateLimit) {
  Rng rng(7);
  MemoryProblem p;
  do
    p = randomProblem(rng);
  while (p.ops.size() < 8);
  MemoryPlan plan = planExact(p, /*maxStates=*/4);
  EXPECT_EQ(plan.method, "greedy (exact DP past 4 states)");
  EXPECT_EQ(validatePlan(p, plan), "");
  EXPECT_EQ(plan.bytesMoved(), planGreedy(p).bytesMoved());
}

// Keeping what is reused beats evicting it: x is read by every operator,
// and with room for it the plan never reloads it; LRU, which evicts the
// least recently used, reloads it when a newer tensor crowds the budget.
TEST(MemoryPlanner, KeepsTheReusedTensor) {
  MemoryProblem p;
  p.tensors = {{"x", 10, true}, {"a", 10, false}, {"b", 10, false},
               {"c", 10, false}};
  p.ops = {{"0", {0}, {1}}, {"1", {1}, {2}}, {"2", {0, 2}, {3}},
           {"3", {0, 1, 3}, {}}};
  p.budget = 30;
  MemoryPlan exact = planExact(p);
  ASSERT_TRUE(exact.feasible) << exact.error;
  EXPECT_EQ(validatePlan(p, exact), "");
  EXPECT_EQ(exact.bytesMoved(), bruteForce(p));
  EXPECT_LE(exact.bytesMoved(), planLru(p).bytesMoved());
  // x loaded once, and a (needed at 3) spilled once: store + load.
  EXPECT_EQ(exact.bytesMoved(), 10 + 20);
}
