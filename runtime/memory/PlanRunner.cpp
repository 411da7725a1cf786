//===- PlanRunner.cpp - carries out a memory plan over two tiers ----------===//

#include "runtime/memory/PlanRunner.h"

#include "runtime/Timing.h"

#include "llvm/ADT/ScopeExit.h"

#include <chrono>
#include <deque>
#include <memory>

using namespace saga;


llvm::Expected<PlanRunStats>
saga::runMemoryPlan(const MemoryProblem &p, const MemoryPlan &plan,
                    DeviceTier &pool, NextTier &tier,
                    const std::function<llvm::Error(int, Resident &)> &compute,
                    int depth, const RowsFn &rowsOf, const ReadyFn &ready) {
  if (!plan.feasible)
    return llvm::createStringError("no memory plan: " + plan.error);
  auto start = std::chrono::steady_clock::now();
  const size_t numOps = p.ops.size();
  // The plan's transfers by operator: loads before it, stores/drops after.
  std::vector<std::vector<Transfer>> loads(numOps), after(numOps);
  for (const Transfer &t : plan.transfers)
    (t.isLoad() ? loads : after)[size_t(t.op)].push_back(t);
  std::vector<int> lastUse(p.tensors.size(), -1);
  for (size_t i = 0; i < numOps; ++i)
    for (const auto *list : {&p.ops[i].reads, &p.ops[i].writes, &p.ops[i].updates})
      for (int t : *list)
        lastUse[size_t(t)] = int(i);
  const int64_t reserve = std::max<int64_t>(0, pool.capacity() - p.budget);

  PlanRunStats stats;
  auto engineHolder = std::make_unique<TransferEngine>(tier);
  TransferEngine &engine = *engineHolder;
  Resident resident;
  // Loads issued, per tensor: the ticket to wait for.
  std::map<int, TransferEngine::Ticket> inFlight;
  int64_t prefetched = 0; // bytes loaded ahead for operators after this one
  std::map<int, int64_t> prefetchedFor; // tensor -> bytes counted above
  // Buffers dropped after a store: freed when the store is done.
  std::deque<std::pair<TransferEngine::Ticket, DeviceBuffer>> pendingFree;
  // However the run ends (an error from a load, a kernel, the plan), the
  // engine finishes its queue first (its destructor drains it), then every
  // buffer still held goes back to the pool.
  llvm::scope_exit releaseAll([&] {
    engineHolder.reset();
    for (auto &[t, buffer] : resident)
      pool.release(buffer);
    for (auto &[ticket, buffer] : pendingFree)
      pool.release(buffer);
  });
  size_t nextLoadOp = 0, nextLoadIndex = 0; // the first load not issued
  // Whether the next tier has (or will have, by queue order) the tensor's
  // current value.
  std::vector<char> copyQueued(p.tensors.size(), 0);
  for (size_t t = 0; t < p.tensors.size(); ++t)
    copyQueued[t] = p.tensors[t].input;

  auto reap = [&](bool all) -> llvm::Error {
    while (!pendingFree.empty() &&
           (all || engine.done(pendingFree.front().first))) {
      if (llvm::Error e = engine.wait(pendingFree.front().first))
        return e;
      pool.release(pendingFree.front().second);
      pendingFree.pop_front();
    }
    return llvm::Error::success();
  };
  // A buffer, waiting for pending stores to free room when needed.
  // (`step` names what the buffer is for in an error of the pool's.)
  auto allocate = [&](int t,
                      const std::string &step) -> llvm::Expected<DeviceBuffer> {
    int64_t bytes = p.tensors[size_t(t)].bytes;
    while (!pool.fits(bytes) && !pendingFree.empty()) {
      if (llvm::Error e = engine.wait(pendingFree.front().first))
        return std::move(e);
      pool.release(pendingFree.front().second);
      pendingFree.pop_front();
    }
    auto buffer = pool.allocate(bytes, "tensor " + p.tensors[size_t(t)].name);
    if (!buffer)
      return llvm::createStringError(step + ": " +
                                     llvm::toString(buffer.takeError()));
    return buffer;
  };
  // Issues loads in plan order: those of operator `current` always, later
  // ones (from their issue point: by default `depth` operators ahead)
  // while they fit the reserve.
  auto issueLoads = [&](size_t current) -> llvm::Error {
    for (; nextLoadOp < numOps; ++nextLoadOp, nextLoadIndex = 0) {
      for (; nextLoadIndex < loads[nextLoadOp].size(); ++nextLoadIndex) {
        const Transfer &load = loads[nextLoadOp][nextLoadIndex];
        int t = load.tensor;
        int64_t bytes = p.tensors[size_t(t)].bytes;
        bool ahead = nextLoadOp > current;
        int64_t issueAt = load.issueAt >= 0 ? load.issueAt
                                            : int64_t(nextLoadOp) - depth;
        // Not yet: before its issue point, past the reserve, still
        // resident from an earlier use (its drop comes first), or its
        // store is not queued yet (the engine runs transfers in order: a
        // load queued after the store reads what it wrote).
        if (ahead && (issueAt > int64_t(current) ||
                      prefetched + bytes > reserve || !pool.fits(bytes) ||
                      resident.count(t) || !copyQueued[size_t(t)] ||
                      (ready && p.tensors[size_t(t)].input && !ready(t))))
          return llvm::Error::success(); // later, in order
        RowSelection rows;
        if (load.kind == Transfer::LoadRows) {
          if (!rowsOf)
            return llvm::createStringError(
                "memory plan: tensor " + p.tensors[size_t(t)].name +
                " is loaded in part, and the run knows no rows");
          auto got = rowsOf(load.op, t);
          if (!got)
            return got.takeError();
          rows = std::move(*got);
        }
        auto buffer = allocate(t, "loading for step " + p.ops[nextLoadOp].name);
        if (!buffer)
          return buffer.takeError();
        resident[t] = *buffer;
        inFlight[t] = rows.rows ? engine.loadRows(t, buffer->data, bytes,
                                                  std::move(rows))
                                : engine.load(t, buffer->data, bytes);
        if (ahead) {
          prefetched += bytes;
          prefetchedFor[t] = bytes;
        }
      }
    }
    return llvm::Error::success();
  };

  for (size_t i = 0; i < numOps; ++i) {
    if (llvm::Error e = reap(false))
      return std::move(e);
    if (llvm::Error e = issueLoads(i))
      return std::move(e);
    const PlanOperator &op = p.ops[i];
    for (const auto *list : {&op.reads, &op.updates})
      for (int t : *list) {
        auto it = inFlight.find(t);
        if (it != inFlight.end()) {
          if (llvm::Error e = engine.wait(it->second))
            return llvm::createStringError(
                "loading " + p.tensors[size_t(t)].name + " for step " +
                op.name + ": " + llvm::toString(std::move(e)));
          inFlight.erase(it);
        }
        auto pf = prefetchedFor.find(t);
        if (pf != prefetchedFor.end()) {
          prefetched -= pf->second;
          prefetchedFor.erase(pf);
        }
        if (!resident.count(t))
          return llvm::createStringError("memory plan: tensor " +
                                         p.tensors[size_t(t)].name +
                                         " is not resident at operator " +
                                         std::to_string(i) + " (" + op.name + ")");
      }
    for (int t : op.writes)
      if (!resident.count(t)) {
        auto buffer = allocate(t, "step " + op.name);
        if (!buffer)
          return buffer.takeError();
        resident[t] = *buffer;
      }
    auto computeStart = std::chrono::steady_clock::now();
    if (llvm::Error e = compute(int(i), resident))
      return std::move(e);
    for (const auto *list : {&op.writes, &op.updates})
      for (int t : *list)
        copyQueued[size_t(t)] = 0;
    stats.computeSeconds += secondsSince(computeStart);
    for (const auto *list : {&op.reads, &op.writes, &op.updates})
      for (int t : *list)
        if (lastUse[size_t(t)] == int(i) && resident.count(t)) {
          pool.release(resident[t]);
          resident.erase(t);
        }
    std::map<int, TransferEngine::Ticket> stored;
    for (const Transfer &t : after[i]) {
      auto it = resident.find(t.tensor);
      if (it == resident.end())
        return llvm::createStringError("memory plan: tensor " +
                                       p.tensors[size_t(t.tensor)].name +
                                       " stored or dropped while not resident");
      if (t.kind == Transfer::Store) {
        stored[t.tensor] = engine.store(t.tensor, it->second.data,
                                        it->second.bytes);
        copyQueued[size_t(t.tensor)] = 1;
        continue;
      }
      auto s = stored.find(t.tensor);
      if (s != stored.end())
        pendingFree.push_back({s->second, it->second});
      else
        pool.release(it->second);
      resident.erase(it);
    }
  }
  if (llvm::Error e = reap(true))
    return std::move(e);
  for (auto &[t, buffer] : resident)
    pool.release(buffer);
  resident.clear();
  stats.transfers = engine.counters();
  stats.poolPeak = pool.peak();
  stats.seconds = secondsSince(start);
  return stats;
}
