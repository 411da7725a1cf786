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

#include "support/MemoryPlanner.h"

#include "TestRandom.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

using namespace saga;
using sagatest::Rng;

namespace {

/// Whether operator `op` may load only part of `t` (it offers a partial
/// read and neither writes nor updates `t`).
bool partialUse(const PlanOperator &op, int t) {
  return op.partialBytes(t) >= 0;
}

/// The fewest bytes moved under the budget, or -1 if nothing fits.
/// Besides the gaps, each use that may load in part does so or not; a
/// partial load is possible where the tensor arrives not resident (its
/// first use as an input, or after a dropped gap) and forces the gap after
/// it to be dropped.
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
  // Per tensor and use: the choice bit of a use that may load in part.
  std::vector<std::vector<int>> partialBit(n);
  int bits = 0;
  for (size_t t = 0; t < n; ++t) {
    auto &u = uses[t];
    std::sort(u.begin(), u.end());
    u.erase(std::unique(u.begin(), u.end()), u.end());
    firstGap[t] = gaps.size();
    for (size_t j = 0; j + 1 < u.size(); ++j)
      gaps.push_back({int(t), u[j], u[j + 1]});
  }
  bits = int(gaps.size());
  for (size_t t = 0; t < n; ++t)
    for (int i : uses[t])
      partialBit[t].push_back(partialUse(p.ops[size_t(i)], int(t)) ? bits++
                                                                     : -1);
  EXPECT_LE(bits, 20) << "instance too large for brute force";
  int64_t best = -1;
  for (uint64_t keep = 0; keep < (uint64_t(1) << bits); ++keep) {
    int64_t cost = 0;
    bool valid = true;
    std::vector<int64_t> resident(p.ops.size(), 0);
    for (size_t t = 0; t < n && valid; ++t) {
      const auto &u = uses[t];
      if (u.empty())
        continue;
      int64_t bytes = p.tensors[t].bytes;
      for (int i : u)
        resident[size_t(i)] += bytes;
      auto kept = [&](size_t j) { // the gap after use j
        return j + 1 < u.size() && (keep >> (firstGap[t] + j) & 1);
      };
      // Use j loads in part: it must arrive not resident and leave.
      auto part = [&](size_t j) -> int64_t {
        int b = partialBit[t][j];
        if (b < 0 || !(keep >> b & 1))
          return -1;
        bool arrives = j == 0 ? p.tensors[t].input : !kept(j - 1);
        if (!arrives || kept(j)) {
          valid = false;
          return -1;
        }
        return p.ops[size_t(u[j])].partialBytes(int(t));
      };
      // A copy in the next tier is current unless the tensor was made or
      // updated on the device since it was last stored or loaded.
      bool dirty = !p.tensors[t].input;
      if (p.tensors[t].input) {
        int64_t b = part(0);
        cost += b >= 0 ? b : bytes; // loaded at its first use
      }
      if (updated[t][size_t(u[0])])
        dirty = true;
      for (size_t j = 0; j + 1 < u.size(); ++j) {
        if (kept(j)) {
          for (int i = u[j] + 1; i < u[j + 1]; ++i)
            resident[size_t(i)] += bytes;
        } else {
          if (dirty)
            cost += bytes; // stored at the drop
          int64_t b = part(j + 1);
          cost += b >= 0 ? b : bytes; // loaded at the next use
          dirty = false;
        }
        if (updated[t][size_t(u[j + 1])])
          dirty = true;
      }
    }
    if (!valid ||
        *std::max_element(resident.begin(), resident.end()) > p.budget)
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
    // Some reads may load only part of the tensor.
    for (int t : op.reads)
      if (rng.below(3) == 0)
        op.partialReads.push_back(
            {t, 1 + rng.below(p.tensors[size_t(t)].bytes)});
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

/// The brute force's choices: gaps between uses and partial reads.
size_t gapCount(const MemoryProblem &p) {
  std::vector<int> uses(p.tensors.size(), 0);
  size_t partial = 0;
  for (const auto &op : p.ops) {
    for (auto &[t, b] : op.partialReads)
      partial += partialUse(op, t);
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
  return gaps + partial;
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

// NGra's selective loading: chunks that read few of a source interval's
// rows load only those, unless a run of them reads the interval whole for
// less. Each plan loads x in part where that is cheaper, drops it after
// the operator (it holds only those rows), and validates.
TEST(MemoryPlanner, LoadsOnlyTheRowsAChunkReads) {
  MemoryProblem p;
  p.tensors = {{"x", 100, true}, {"s0", 10, false}, {"s1", 10, false}};
  PlanOperator a{"chunk (0, 0)", {0}, {1}, {}}, b{"chunk (0, 1)", {0}, {2}, {}},
      c{"sum", {1, 2}, {}, {}};
  a.partialReads = {{0, 20}};
  b.partialReads = {{0, 30}};
  p.ops = {a, b, c};
  p.budget = 120;
  for (const MemoryPlan &plan :
       {planExact(p), planGreedy(p), planLru(p), planStreamAll(p)}) {
    SCOPED_TRACE(plan.method);
    ASSERT_TRUE(plan.feasible) << plan.error;
    EXPECT_EQ(validatePlan(p, plan), "");
    // (stream-all also stores and reloads s0 and s1)
    EXPECT_EQ(plan.loadBytes, 20 + 30 + (plan.method == "stream-all" ? 20 : 0))
        << "x in part, twice";
    int rows = 0;
    for (const Transfer &t : plan.transfers)
      rows += t.kind == Transfer::LoadRows;
    EXPECT_EQ(rows, 2);
  }
  EXPECT_EQ(planExact(p).bytesMoved(), bruteForce(p));
  // Parts adding up to more than the whole: x loaded once and kept.
  p.ops[1].partialReads = {{0, 90}};
  MemoryPlan whole = planExact(p), greedy = planGreedy(p);
  EXPECT_EQ(whole.loadBytes, 100);
  EXPECT_EQ(greedy.loadBytes, 100);
  EXPECT_EQ(whole.bytesMoved(), bruteForce(p));
  // A plan keeping x after loading it in part is not valid.
  MemoryPlan bad;
  bad.feasible = true;
  bad.transfers = {{Transfer::LoadRows, 0, 0}};
  bad.loadBytes = 20;
  EXPECT_EQ(validatePlan(p, bad),
            "tensor x stays resident after operator 0 loaded only its rows");
  // Nor loading in part for an operator that offers no partial read.
  bad.transfers = {{Transfer::Load, 0, 0}, {Transfer::Drop, 0, 0},
                   {Transfer::LoadRows, 0, 1}};
  bad.loadBytes = 190;
  p.ops[1].partialReads.clear();
  EXPECT_EQ(validatePlan(p, bad), "tensor x loaded in part before operator 1, "
                                  "which reads it whole");
}
