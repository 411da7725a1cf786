//===- MemoryPlanner.cpp - ROC's memory plan over two tiers ---------------===//

#include "support/MemoryPlanner.h"

#include <algorithm>
#include <limits>
#include <map>

using namespace saga;

namespace {

/// Uses of each tensor (operators that read or write it), in order.
struct Uses {
  std::vector<std::vector<int>> of; // per tensor, ascending, unique
  explicit Uses(const MemoryProblem &p) : of(p.tensors.size()) {
    for (size_t i = 0; i < p.ops.size(); ++i) {
      for (int t : p.ops[i].reads)
        of[size_t(t)].push_back(int(i));
      for (int t : p.ops[i].writes)
        of[size_t(t)].push_back(int(i));
      for (int t : p.ops[i].updates)
        of[size_t(t)].push_back(int(i));
    }
    for (auto &u : of) {
      std::sort(u.begin(), u.end());
      u.erase(std::unique(u.begin(), u.end()), u.end());
    }
  }
  int last(int t) const { return of[size_t(t)].empty() ? -1 : of[size_t(t)].back(); }
  /// The first use after operator i, or INT_MAX.
  int next(int t, int i) const {
    auto &u = of[size_t(t)];
    auto it = std::upper_bound(u.begin(), u.end(), i);
    return it == u.end() ? std::numeric_limits<int>::max() : *it;
  }
};

/// The tensors operator i needs resident (reads and writes), unique.
std::vector<int> workingSet(const PlanOperator &op) {
  std::vector<int> w = op.reads;
  w.insert(w.end(), op.writes.begin(), op.writes.end());
  w.insert(w.end(), op.updates.begin(), op.updates.end());
  std::sort(w.begin(), w.end());
  w.erase(std::unique(w.begin(), w.end()), w.end());
  return w;
}

int64_t sizeOf(const MemoryProblem &p, const std::vector<int> &ts) {
  int64_t n = 0;
  for (int t : ts)
    n += p.tensors[size_t(t)].bytes;
  return n;
}

/// The error for an operator whose working set alone exceeds the budget.
std::string checkMinimum(const MemoryProblem &p) {
  for (size_t i = 0; i < p.ops.size(); ++i) {
    int64_t need = sizeOf(p, workingSet(p.ops[i]));
    if (need > p.budget)
      return "operator " + std::to_string(i) + " (" + p.ops[i].name +
             ") needs " + std::to_string(need) +
             " bytes resident at once; the budget is " +
             std::to_string(p.budget);
  }
  return "";
}

/// For the replaying policies: the bytes to load of `t`, not resident, for
/// operator i's partial read, or -1 to load it whole. Partial when the
/// run of operators from i that each read `t` in part loads fewer bytes
/// in parts than the tensor's size (a group of chunks reading one source
/// interval in a row may be cheaper with the interval loaded once).
int64_t partialLoad(const MemoryProblem &p, int t, size_t i) {
  int64_t part = p.ops[i].partialBytes(t);
  if (part < 0)
    return -1;
  int64_t run = 0;
  for (size_t k = i; k < p.ops.size(); ++k) {
    int64_t b = p.ops[k].partialBytes(t);
    if (b < 0)
      break;
    run += b;
  }
  return run < p.tensors[size_t(t)].bytes ? part : -1;
}

/// Replays operators with a victim-choosing policy: loads missing reads,
/// and while the working set does not fit, drops (after the previous
/// operator) the resident tensor `pick` prefers; `keepNothing` drops every
/// resident tensor after each operator.
template <typename Pick>
MemoryPlan simulate(const MemoryProblem &p, Pick pick, bool keepNothing,
                    const char *method) {
  MemoryPlan plan;
  plan.method = method;
  plan.error = checkMinimum(p);
  if (!plan.error.empty())
    return plan;
  Uses uses(p);
  size_t n = p.tensors.size();
  std::vector<char> resident(n, 0), copy(n, 0);
  std::vector<int> lastAccess(n, -1);
  for (size_t t = 0; t < n; ++t)
    copy[t] = p.tensors[t].input;
  int64_t residentBytes = 0;
  auto drop = [&](int t, int after) {
    if (!copy[size_t(t)]) {
      plan.transfers.push_back({Transfer::Store, t, after});
      plan.storeBytes += p.tensors[size_t(t)].bytes;
      copy[size_t(t)] = 1;
    }
    plan.transfers.push_back({Transfer::Drop, t, after});
    resident[size_t(t)] = 0;
    residentBytes -= p.tensors[size_t(t)].bytes;
  };
  for (size_t i = 0; i < p.ops.size(); ++i) {
    std::vector<int> work = workingSet(p.ops[i]);
    int64_t incoming = 0;
    for (int t : work)
      if (!resident[size_t(t)])
        incoming += p.tensors[size_t(t)].bytes;
    while (residentBytes + incoming > p.budget) {
      int victim = -1;
      for (size_t t = 0; t < n; ++t)
        if (resident[t] && !std::binary_search(work.begin(), work.end(), int(t)) &&
            (victim < 0 || pick(int(t), victim, int(i), uses, copy, lastAccess)))
          victim = int(t);
      drop(victim, int(i) - 1); // i > 0: something is resident
    }
    std::vector<int> partial; // loaded in part for this operator only
    for (const auto *list : {&p.ops[i].reads, &p.ops[i].updates})
      for (int t : *list)
        if (!resident[size_t(t)]) {
          int64_t part =
              list == &p.ops[i].reads ? partialLoad(p, t, i) : -1;
          plan.transfers.push_back(
              {part >= 0 ? Transfer::LoadRows : Transfer::Load, t, int(i)});
          plan.loadBytes += part >= 0 ? part : p.tensors[size_t(t)].bytes;
          if (part >= 0)
            partial.push_back(t);
          resident[size_t(t)] = 1;
          residentBytes += p.tensors[size_t(t)].bytes;
        }
    for (int t : p.ops[i].updates)
      copy[size_t(t)] = 0;
    for (int t : p.ops[i].writes)
      if (!resident[size_t(t)]) {
        resident[size_t(t)] = 1;
        residentBytes += p.tensors[size_t(t)].bytes;
      }
    plan.peakBytes = std::max(plan.peakBytes, residentBytes);
    for (int t : work) {
      lastAccess[size_t(t)] = int(i);
      if (uses.last(t) == int(i)) { // dead
        resident[size_t(t)] = 0;
        residentBytes -= p.tensors[size_t(t)].bytes;
      }
    }
    for (int t : partial)
      if (resident[size_t(t)])
        drop(t, int(i)); // holds only the operator's rows
    if (keepNothing)
      for (size_t t = 0; t < n; ++t)
        if (resident[t])
          drop(int(t), int(i));
  }
  plan.feasible = true;
  return plan;
}

} // namespace

int64_t saga::transferBytes(const MemoryProblem &p, const Transfer &t) {
  if (t.kind == Transfer::Drop)
    return 0;
  if (t.kind == Transfer::LoadRows)
    return p.ops[size_t(t.op)].partialBytes(t.tensor);
  return p.tensors[size_t(t.tensor)].bytes;
}

int64_t saga::minimumBudget(const MemoryProblem &p) {
  int64_t m = 0;
  for (const PlanOperator &op : p.ops)
    m = std::max(m, sizeOf(p, workingSet(op)));
  return m;
}

MemoryPlan saga::planGreedy(const MemoryProblem &p) {
  // Belady: the furthest next use goes first; at equal distance, a tensor
  // that already has a copy (dropping it is free).
  return simulate(
      p,
      [](int a, int b, int i, const Uses &u, const std::vector<char> &copy,
         const std::vector<int> &) {
        int na = u.next(a, i - 1), nb = u.next(b, i - 1);
        if (na != nb)
          return na > nb;
        return copy[size_t(a)] > copy[size_t(b)];
      },
      false, "greedy");
}

MemoryPlan saga::planLru(const MemoryProblem &p) {
  return simulate(
      p,
      [](int a, int b, int, const Uses &, const std::vector<char> &,
         const std::vector<int> &last) {
        return last[size_t(a)] < last[size_t(b)];
      },
      false, "lru");
}

MemoryPlan saga::planStreamAll(const MemoryProblem &p) {
  return simulate(
      p,
      [](int, int, int, const Uses &, const std::vector<char> &,
         const std::vector<int> &) { return false; },
      true, "stream-all");
}

namespace {
/// When the exact DP is too large: the cheaper of the Belady greedy plan
/// and LRU, labelled with why.
MemoryPlan fallback(const MemoryProblem &p, const std::string &why) {
  MemoryPlan greedy = planGreedy(p), lru = planLru(p);
  MemoryPlan &best =
      lru.bytesMoved() < greedy.bytesMoved() ? lru : greedy;
  best.method += " (exact DP: " + why + ")";
  return best;
}
} // namespace

MemoryPlan saga::planExact(const MemoryProblem &p, size_t maxStates) {
  MemoryPlan plan;
  plan.method = "exact";
  plan.error = checkMinimum(p);
  if (!plan.error.empty())
    return plan;
  Uses uses(p);
  size_t numOps = p.ops.size();
  // A state: the live tensors resident after an operator (and its drops),
  // each as 2t + (has a copy); sorted. Live tensors not in it are in the
  // next tier with a copy.
  using State = std::vector<int>;
  struct Node {
    int64_t cost;
    int64_t peak; // the most resident bytes on the way (for the plan)
    int parent;   // index in the previous step's nodes
    State state;
    std::vector<Transfer> transfers; // of this step
  };
  std::vector<std::vector<Node>> steps(numOps + 1);
  steps[0].push_back({0, 0, -1, {}, {}});
  size_t explored = 0;
  for (size_t i = 0; i < numOps; ++i) {
    std::vector<int> work = workingSet(p.ops[i]);
    std::vector<int> nextWork =
        i + 1 < numOps ? workingSet(p.ops[i + 1]) : std::vector<int>{};
    std::map<State, size_t> index; // state -> position in steps[i + 1]
    // Reads that may load only their operator's rows.
    std::vector<int> optional;
    for (auto &[t, b] : p.ops[i].partialReads)
      if (p.ops[i].partialBytes(t) >= 0)
        optional.push_back(t);
    for (size_t k = 0; k < steps[i].size(); ++k) {
      const Node &from = steps[i][k];
      // Which of the optional reads, when not resident, load in part.
      for (uint64_t part = 0; part < (uint64_t(1) << optional.size()); ++part) {
        std::vector<Transfer> transfers;
        int64_t cost = from.cost;
        // Resident while operator i runs: tensor -> has a copy.
        std::map<int, bool> during;
        for (int e : from.state)
          during[e / 2] = e % 2;
        std::vector<int> partial; // resident for operator i only
        bool redundant = false;   // a partial choice for a resident tensor
        for (size_t o = 0; o < optional.size(); ++o)
          if (part >> o & 1) {
            int t = optional[o];
            if (during.count(t)) {
              redundant = true;
              break;
            }
            transfers.push_back({Transfer::LoadRows, t, int(i)});
            cost += p.ops[i].partialBytes(t);
            during[t] = true;
            partial.push_back(t);
          }
        if (redundant)
          continue;
        for (const auto *list : {&p.ops[i].reads, &p.ops[i].updates})
          for (int t : *list)
            if (!during.count(t)) {
              transfers.push_back({Transfer::Load, t, int(i)});
              cost += p.tensors[size_t(t)].bytes;
              during[t] = true;
            }
        for (int t : p.ops[i].updates)
          during[t] = false; // the copy is stale
        for (int t : p.ops[i].writes)
          if (!during.count(t))
            during[t] = p.tensors[size_t(t)].input;
        int64_t bytes = 0;
        for (auto &[t, c] : during)
          bytes += p.tensors[size_t(t)].bytes;
        if (bytes > p.budget)
          continue;
        // The survivors may each stay or go down (stored first if needed);
        // those loaded in part go (their copy is current).
        std::vector<std::pair<int, bool>> live;
        std::vector<Transfer> dropped;
        for (auto &[t, c] : during)
          if (uses.last(t) > int(i)) {
            if (std::find(partial.begin(), partial.end(), t) != partial.end())
              dropped.push_back({Transfer::Drop, t, int(i)});
            else
              live.push_back({t, c});
          }
        if (live.size() >= 63)
          return fallback(p, std::to_string(live.size()) +
                                 " live tensors after operator " +
                                 std::to_string(i));
        for (uint64_t keep = 0; keep < (uint64_t(1) << live.size()); ++keep) {
          if (++explored > maxStates)
            return fallback(p, "past " + std::to_string(maxStates) + " states");
          State state;
          std::vector<Transfer> t2 = transfers;
          int64_t c2 = cost, kept = 0;
          for (size_t j = 0; j < live.size(); ++j) {
            auto [t, c] = live[j];
            if (keep >> j & 1) {
              state.push_back(2 * t + (c ? 1 : 0));
              kept += p.tensors[size_t(t)].bytes;
              continue;
            }
            if (!c) {
              t2.push_back({Transfer::Store, t, int(i)});
              c2 += p.tensors[size_t(t)].bytes;
            }
            t2.push_back({Transfer::Drop, t, int(i)});
          }
          t2.insert(t2.end(), dropped.begin(), dropped.end());
          // The next operator must still fit beside what stays.
          int64_t need = kept;
          for (int t : nextWork)
            if (std::none_of(state.begin(), state.end(),
                             [&](int e) { return e / 2 == t; }))
              need += p.tensors[size_t(t)].bytes;
          if (need > p.budget)
            continue;
          std::sort(state.begin(), state.end());
          auto [it, added] = index.try_emplace(state, steps[i + 1].size());
          Node node{c2, std::max(from.peak, bytes), int(k), state, t2};
          if (added)
            steps[i + 1].push_back(std::move(node));
          else if (c2 < steps[i + 1][it->second].cost)
            steps[i + 1][it->second] = std::move(node);
        }
      }
    }
    if (steps[i + 1].empty()) {
      plan.error = "no plan fits the budget at operator " + std::to_string(i);
      return plan;
    }
  }
  // After the last operator nothing is live: one state remains.
  const Node *best = &steps[numOps].front();
  for (const Node &n : steps[numOps])
    if (n.cost < best->cost)
      best = &n;
  plan.feasible = true;
  plan.peakBytes = best->peak;
  std::vector<const Node *> path;
  for (size_t i = numOps, k = size_t(best - steps[numOps].data());; --i) {
    path.push_back(&steps[i][k]);
    if (i == 0)
      break;
    k = size_t(steps[i][k].parent);
  }
  std::reverse(path.begin(), path.end());
  for (const Node *n : path)
    for (const Transfer &t : n->transfers) {
      plan.transfers.push_back(t);
      if (t.isLoad())
        plan.loadBytes += transferBytes(p, t);
      if (t.kind == Transfer::Store)
        plan.storeBytes += transferBytes(p, t);
    }
  return plan;
}

std::string saga::validatePlan(const MemoryProblem &p, const MemoryPlan &plan,
                               int64_t *replayedPeak) {
  if (!plan.feasible)
    return "the plan is not feasible: " + plan.error;
  Uses uses(p);
  size_t n = p.tensors.size();
  std::vector<char> resident(n, 0), copy(n, 0);
  for (size_t t = 0; t < n; ++t)
    copy[t] = p.tensors[t].input;
  int64_t residentBytes = 0, loads = 0, stores = 0, peak = 0;
  size_t at = 0;
  auto name = [&](int t) {
    return "tensor " + (p.tensors[size_t(t)].name.empty()
                            ? std::to_string(t)
                            : p.tensors[size_t(t)].name);
  };
  for (size_t i = 0; i < p.ops.size(); ++i) {
    std::vector<int> partial; // loaded in part for operator i
    for (; at < plan.transfers.size() && plan.transfers[at].op == int(i) &&
           plan.transfers[at].isLoad();
         ++at) {
      int t = plan.transfers[at].tensor;
      if (resident[size_t(t)] || !copy[size_t(t)])
        return name(t) + " loaded before operator " + std::to_string(i) +
               " while resident or without a copy";
      if (plan.transfers[at].kind == Transfer::LoadRows) {
        if (p.ops[i].partialBytes(t) < 0)
          return name(t) + " loaded in part before operator " +
                 std::to_string(i) + ", which reads it whole";
        partial.push_back(t);
      }
      resident[size_t(t)] = 1;
      residentBytes += p.tensors[size_t(t)].bytes;
      loads += transferBytes(p, plan.transfers[at]);
    }
    for (const auto *list : {&p.ops[i].reads, &p.ops[i].updates})
      for (int t : *list)
        if (!resident[size_t(t)])
          return name(t) + " read by operator " + std::to_string(i) +
                 " is not resident";
    for (int t : p.ops[i].updates)
      copy[size_t(t)] = 0;
    for (int t : p.ops[i].writes)
      if (!resident[size_t(t)]) {
        resident[size_t(t)] = 1;
        residentBytes += p.tensors[size_t(t)].bytes;
      }
    if (residentBytes > p.budget)
      return "operator " + std::to_string(i) + " runs with " +
             std::to_string(residentBytes) + " bytes resident, over budget";
    peak = std::max(peak, residentBytes);
    for (int t : workingSet(p.ops[i]))
      if (uses.last(t) == int(i)) {
        resident[size_t(t)] = 0;
        residentBytes -= p.tensors[size_t(t)].bytes;
      }
    for (; at < plan.transfers.size() && plan.transfers[at].op == int(i) &&
           !plan.transfers[at].isLoad();
         ++at) {
      const Transfer &tr = plan.transfers[at];
      if (!resident[size_t(tr.tensor)])
        return name(tr.tensor) + " stored or dropped while not resident";
      if (tr.kind == Transfer::Store) {
        if (copy[size_t(tr.tensor)])
          return name(tr.tensor) + " stored twice";
        copy[size_t(tr.tensor)] = 1;
        stores += p.tensors[size_t(tr.tensor)].bytes;
      } else {
        if (!copy[size_t(tr.tensor)])
          return name(tr.tensor) + " dropped without a copy";
        resident[size_t(tr.tensor)] = 0;
        residentBytes -= p.tensors[size_t(tr.tensor)].bytes;
      }
    }
    for (int t : partial)
      if (resident[size_t(t)])
        return name(t) + " stays resident after operator " +
               std::to_string(i) + " loaded only its rows";
  }
  if (at != plan.transfers.size())
    return "transfers out of operator order";
  if (loads != plan.loadBytes || stores != plan.storeBytes)
    return "the plan's byte counts do not match its transfers";
  if (replayedPeak)
    *replayedPeak = peak;
  if (plan.peakBytes >= 0 && peak != plan.peakBytes)
    return "the plan's peak (" + std::to_string(plan.peakBytes) +
           ") is not the replayed one (" + std::to_string(peak) + ")";
  return "";
}
