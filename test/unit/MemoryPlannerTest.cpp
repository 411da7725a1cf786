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
  size_t n = p.tensors.size();
  std::vector<std::vector<int>> uses(n);
  std::vector<std::vector<char>> updated(n, std::vector<char>(p.ops.size(), 0));
  for (size_t i = 0; i < p.ops.size(); ++i) {
    for (int t : p.ops[i].reads)
      uses[size_t(t)].push_back(int(i));
    for (int t : p.ops[i].writes)
      uses[size_t(t)].push_back(int(i));
    for (int t : p.ops[i].updates) {
      uses[size_t(t)].push_back(int(i));
      updated[size_t(t)][i] = 1;
    }
  }
  std::vector<Gap> gaps;
  std::vector<size_t> firstGap(n);
  for (size_t t = 0; t < n; ++t) {
    auto &u = uses[t];
    std::sort(u.begin(), u.end());
    u.erase(std::unique(u.begin(), u.end()), u.end());
    firstGap[t] = gaps.size();
    for (size_t j = 0; j + 1 < u.size(); ++j)
      gaps.push_back({int(t), u[j], u[j + 1]});
  }
  EXPECT_LE(gaps.size(), 20u) << "instance too large for brute force";
  int64_t best = -1;
  for (uint64_t keep = 0; keep < (uint64_t(1) << gaps.size()); ++keep) {
    int64_t cost = 0;
    std::vector<int64_t> resident(p.ops.size(), 0);
    for (size_t t = 0; t < n; ++t) {
      const auto &u = uses[t];
      if (u.empty())
        continue;
      int64_t bytes = p.tensors[t].bytes;
      for (int i : u)
        resident[size_t(i)] += bytes;
      // A copy in the next tier is current unless the tensor was made or
      // updated on the device since it was last stored or loaded.
      bool dirty = !p.tensors[t].input;
      if (p.tensors[t].input)
        cost += bytes; // loaded at its first use
      if (updated[t][size_t(u[0])])
        dirty = true;
      for (size_t j = 0; j + 1 < u.size(); ++j) {
        size_t g = firstGap[t] + j;
        if (keep >> g & 1) {
          for (int i = u[j] + 1; i < u[j + 1]; ++i)
            resident[size_t(i)] += bytes;
        } else {
          if (dirty)
            cost += bytes; // stored at the drop
          cost += bytes;   // loaded at the next use
          dirty = false;
        }
        if (updated[t][size_t(u[j + 1])])
          dirty = true;
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
    // Now and then a running update of an existing tensor.
    if (!p.tensors.empty() && rng.below(4) == 0) {
      int t = rng.below(int64_t(p.tensors.size()));
      if (std::find(op.reads.begin(), op.reads.end(), t) == op.reads.end())
        op.updates.push_back(t);
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
    for (int t : op.updates)
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

// Past its state limit the DP falls back to the cheaper of the greedy and
// LRU plans and says so.
TEST(MemoryPlanner, FallsBackToGreedyPastTheStateLimit) {
  Rng rng(7);
  MemoryProblem p;
  do
    p = randomProblem(rng);
  while (p.ops.size() < 8);
  MemoryPlan plan = planExact(p, /*maxStates=*/4);
  EXPECT_TRUE(plan.method == "greedy (exact DP: past 4 states)" ||
              plan.method == "lru (exact DP: past 4 states)")
      << plan.method;
  EXPECT_EQ(validatePlan(p, plan), "");
  EXPECT_EQ(plan.bytesMoved(), std::min(planGreedy(p).bytesMoved(),
                                        planLru(p).bytesMoved()));
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

// An update in place makes the next-tier copy stale: dropping the running
// sum between its updates stores it each time.
TEST(MemoryPlanner, UpdatesInPlaceMakeTheCopyStale) {
  MemoryProblem p;
  p.tensors = {{"acc", 10, false}, {"x0", 10, true}, {"x1", 10, true}};
  PlanOperator first{"0", {1}, {0}, {}}, second{"1", {2}, {}, {0}},
      last{"2", {0}, {}, {}};
  p.ops = {first, second, last};
  p.budget = 20; // acc and one x at a time
  MemoryPlan exact = planExact(p);
  ASSERT_TRUE(exact.feasible) << exact.error;
  EXPECT_EQ(validatePlan(p, exact), "");
  // x0 and x1 loaded once each; acc stays resident throughout.
  EXPECT_EQ(exact.bytesMoved(), 20);
  EXPECT_EQ(exact.bytesMoved(), bruteForce(p));
  // With room only for the operator's own tensors at op 1 plus nothing
  // else, nothing changes; now force acc out between op 1 and op 2 by a
  // big tensor read at op 2 alone.
  p.tensors.push_back({"big", 15, true});
  p.ops.insert(p.ops.begin() + 2, PlanOperator{"1b", {3}, {}, {}});
  MemoryPlan spill = planExact(p);
  ASSERT_TRUE(spill.feasible) << spill.error;
  EXPECT_EQ(validatePlan(p, spill), "");
  // acc (updated at op 1, so dirty) is stored and loaded again: 10 + 10,
  // plus x0, x1 and big loaded once.
  EXPECT_EQ(spill.bytesMoved(), 20 + 10 + 10 + 15);
  EXPECT_EQ(spill.bytesMoved(), bruteForce(p));
}
