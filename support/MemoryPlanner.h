//===- MemoryPlanner.h - ROC's memory plan over two tiers -------*- C++ -*-===//
//
// Which tensors stay in the device tier (hard budget) between the operators
// that use them, and which go down to the next tier and come back, so that
// the whole step (forward, backward, optimiser) moves the fewest bytes.
//
// Model. Operators run in order; each reads some tensors and writes some.
// A tensor is resident from its writer (or from a load) until its last
// reader, unless the plan drops it after an operator and loads it again
// before its next reader; dropping a tensor that has no copy in the next
// tier first stores it (graph inputs and parameters start with one). While
// an operator runs, its inputs, its outputs and every tensor kept across it
// must fit the budget. An operator that updates a tensor in place makes its
// next-tier copy stale. Cost: bytes loaded plus bytes stored. A read may
// offer to load only part of a tensor (NGra's selective loading); the
// tensor is then resident for that operator only.
//
// `planExact` is ROC's dynamic program: the state after operator i is the
// set of live tensors still resident, each with or without a next-tier
// copy; it keeps the cheapest cost per state. When the states exceed
// `maxStates` it falls back to the cheaper of `planGreedy` (Belady: drop
// the resident tensor whose next use is furthest, preferring ones with a
// copy) and `planLru`, and says so in MemoryPlan::method. `planLru` and
// `planStreamAll` are the baselines the bench compares.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_SUPPORT_MEMORYPLANNER_H
#define SAGA_SUPPORT_MEMORYPLANNER_H

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace saga {

struct PlanTensor {
  std::string name;
  int64_t bytes = 0;
  /// A graph input or parameter: it starts in the next tier (with a copy)
  /// and has no writer.
  bool input = false;
};

struct PlanOperator {
  std::string name;
  std::vector<int> reads, writes; // tensor indices
  /// Read and written in place (a running reduction): must be resident,
  /// and any next-tier copy is stale afterwards.
  std::vector<int> updates;
  /// Reads that may load only part of the tensor (NGra's selective
  /// loading: the rows a 2-D chunk reads): tensor and the bytes loaded.
  /// Such a load takes the whole tensor's room in the device tier (the
  /// rows land where they belong) but moves only these bytes, and the
  /// tensor cannot stay resident after the operator: it is dropped (it has
  /// a current copy: only a tensor not resident is loaded).
  std::vector<std::pair<int, int64_t>> partialReads;
  /// The bytes a partial read of `t` loads, or -1 when it has none (or
  /// the operator also writes or updates `t`: then it needs it whole).
  int64_t partialBytes(int t) const {
    if (std::find(writes.begin(), writes.end(), t) != writes.end() ||
        std::find(updates.begin(), updates.end(), t) != updates.end())
      return -1;
    for (auto &[tensor, bytes] : partialReads)
      if (tensor == t)
        return bytes;
    return -1;
  }
};

struct MemoryProblem {
  std::vector<PlanTensor> tensors;
  std::vector<PlanOperator> ops;
  int64_t budget = 0; // device-tier bytes
};

/// One transfer, attached to the operator it precedes (loads) or follows
/// (stores and drops).
struct Transfer {
  /// LoadRows: a partial read of the operator (PlanOperator::partialReads).
  enum Kind { Load, Store, Drop, LoadRows } kind;
  bool isLoad() const { return kind == Load || kind == LoadRows; }
  int tensor;
  int op;
  /// For a load: the first operator before which it may start, ahead of
  /// `op` when the room allows; -1: the runner's default (`op` less its
  /// prefetch depth).
  int issueAt = -1;
};

struct MemoryPlan {
  bool feasible = false;
  /// Why not: the first operator whose own inputs and outputs exceed the
  /// budget, and what it needs.
  std::string error;
  int64_t loadBytes = 0, storeBytes = 0;
  int64_t bytesMoved() const { return loadBytes + storeBytes; }
  /// The most device bytes resident while any operator runs.
  int64_t peakBytes = 0;
  std::vector<Transfer> transfers;
  /// "exact", or "greedy"/"lru" with the reason when the exact DP fell
  /// back.
  std::string method;
};

/// The bytes a transfer moves: a load or store the tensor's, a partial
/// load its operator's partial read, a drop none.
int64_t transferBytes(const MemoryProblem &p, const Transfer &t);

/// The least device bytes any plan needs: the largest operator working set.
int64_t minimumBudget(const MemoryProblem &p);

MemoryPlan planExact(const MemoryProblem &p, size_t maxStates = 1 << 20);
MemoryPlan planGreedy(const MemoryProblem &p);
/// Keeps what it can, drops the least recently used tensor first.
MemoryPlan planLru(const MemoryProblem &p);
/// Keeps nothing between operators: every read is a load, every tensor
/// read later is stored after its writer.
MemoryPlan planStreamAll(const MemoryProblem &p);

/// Checks a plan against the problem by replaying it (residency, copies,
/// budget, costs); empty when it is valid, else what is wrong. A plan whose
/// peakBytes is negative (read from elsewhere: not known) is not checked
/// against the replayed peak, which goes to `replayedPeak`.
std::string validatePlan(const MemoryProblem &p, const MemoryPlan &plan,
                         int64_t *replayedPeak = nullptr);

} // namespace saga

#endif // SAGA_SUPPORT_MEMORYPLANNER_H
