//===- PlanRunner.h - carries out a memory plan over two tiers --*- C++ -*-===//
//
// Walks a memory plan's operators: before each, its loads (issued ahead by
// the transfer engine, up to `depth` operators early, within the pool's
// reserve: the capacity above the plan's budget); then its written tensors
// are allocated and `compute` runs with every tensor it touches resident;
// after it, dead tensors are freed and the plan's stores and drops are
// queued (a dropped buffer is freed once its store is done). A partial
// load (the rows a chunk reads) takes the whole tensor's buffer and moves
// only those rows. The pool's
// capacity is never exceeded: that is the device tier's hard budget.
// Tensors marked `input` must be in the next tier before the run.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_MEMORY_PLANRUNNER_H
#define SAGA_RUNTIME_MEMORY_PLANRUNNER_H

#include "support/MemoryPlanner.h"
#include "runtime/memory/TransferEngine.h"

#include <functional>
#include <map>

namespace saga {

struct PlanRunStats {
  TransferEngine::Counters transfers;
  int64_t poolPeak = 0;
  double computeSeconds = 0, seconds = 0;
};

/// The resident buffers by tensor, for `compute`.
using Resident = std::map<int, DeviceBuffer>;

/// The rows operator `op` reads of `tensor`, for the plan's partial loads
/// (Transfer::LoadRows).
using RowsFn =
    std::function<llvm::Expected<RowSelection>(int op, int tensor)>;

/// Whether input tensor `t` has its copy in the next tier yet (a tensor
/// another device makes: a load of it is not issued ahead of its operator
/// before then).
using ReadyFn = std::function<bool(int tensor)>;

/// `reserve`: bytes of the pool that prefetched loads may use beyond the
/// plan's own accounting (the pool's capacity minus the plan's budget).
/// A plan with partial loads needs `rows`.
llvm::Expected<PlanRunStats>
runMemoryPlan(const MemoryProblem &problem, const MemoryPlan &plan,
              DeviceTier &pool, NextTier &tier,
              const std::function<llvm::Error(int op, Resident &)> &compute,
              int depth = 2, const RowsFn &rows = {},
              const ReadyFn &ready = {});

} // namespace saga

#endif // SAGA_RUNTIME_MEMORY_PLANRUNNER_H
