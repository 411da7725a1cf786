//===- CudaDevicesExecutor.cpp - one chunked run over several GPUs --------===//
//
// The chunked plan (the same saga.schedule a one-device run follows) over N
// devices, NGra's split: destination interval j belongs to one device
// (planRing's owners: contiguous runs of about equal in-edges), and every
// step over interval j, or over a 2-D chunk (i, j), runs there; reductions
// over rows (sums, weight gradients, losses) and model-level steps run on
// device 0, in the plan's order, so that every sum keeps the one-device
// order. Each device runs its steps on its own walker (CudaChunkedRun)
// with its own pool, transfer engine and memory plan: each device plans its
// own operators under its own budget (support/DeviceSplit.h). What one
// device made and another reads is handed over after the maker's last
// touch: into a slot of the maker's memory that the reader copies over
// their peer link (NGra's ring: a source interval that chunks on every
// device read goes from the host to one device, then device to device),
// or through host memory when the maker holds too many; model-level values
// made on device 0 are copied to a device that reads them over their peer
// link.
//
// Results match the one-device run's bits (same kernels, same sums in the
// same order). The devices work at the same time, each through its own
// steps in the plan's order: a step waits only for the handovers it loads
// and the model-level values it reads; they take turns in the plan's order
// when a profile is kept or the chunks come from storage.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/cuda/CudaChunkedRun.h"

#include "runtime/exec/cuda/PlanKernels.h"
#include "support/DeviceSplit.h"
#include "support/RingSchedule.h"

#include "llvm/ADT/ScopeExit.h"

#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

using namespace mlir;
using namespace saga;
using cuda::CUdeviceptr;

namespace {

/// A tensor one device hands to the next to touch it: a copy in a slot
/// of the maker's device memory (read over the peer link), a copy in host
/// memory, or, for a graph input no device changed, where it lives.
struct Handoff {
  enum Kind { Peer, Host, Source } kind = Host;
  int device = -1;
  CUdeviceptr slot = 0;
  std::vector<char> host;
};

/// The handoffs, and the turn the steps take.
struct Exchange {
  std::mutex mutex;
  std::condition_variable cv;
  std::map<std::pair<int, int>, Handoff> handoffs; // (tensor, after op)
  /// Handoffs to free after a step (their readers' last).
  std::map<int, std::vector<std::pair<int, int>>> freeAfter;
  std::vector<int> slotsHeld; // per device
  int64_t peerBytes = 0, hostBytes = 0, sourceBytes = 0; // read by devices
  /// Steps done, and the first not done (every step before it is).
  std::vector<char> done;
  int firstNotDone = 0;
  bool turns = false; // steps strictly in the plan's order
  bool failed = false;
  std::string failure;
  std::mutex inputs; // readInput of the caller's tensors, one at a time

  bool has(int t, int op) {
    std::lock_guard<std::mutex> lock(mutex);
    return handoffs.count({t, op}) != 0;
  }
  /// The handoff, once published; null when the run failed.
  const Handoff *wait(int t, int op) {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return failed || handoffs.count({t, op}); });
    return failed ? nullptr : &handoffs.at({t, op});
  }
  void fail(std::string why) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!failed)
        failure = std::move(why);
      failed = true;
    }
    cv.notify_all();
  }
  llvm::Error stopped() {
    return llvm::createStringError("stopped: " + failure);
  }
};

/// Handoffs held in device memory per device at most (more go through
/// host memory).
constexpr int kSlotsPerDevice = 4;

/// The next tier of one device of the run: versions handed over in a
/// peer's memory are copied from there (NGra's peer link); everything else
/// goes through host memory as on one device (`staged`).
class HandoffTier final : public NextTier {
public:
  HandoffTier(NextTier &staged, const DeviceProblem &dp, Exchange &ex,
              cuda::CudaDevice &dev,
              const std::vector<CudaBackend *> &all)
      : staged(staged), dp(dp), ex(ex), dev(dev), all(all) {}
  llvm::Error write(int key, const void *data, int64_t bytes) override {
    return staged.write(key, data, bytes);
  }
  llvm::Error read(int key, void *data, int64_t bytes) override {
    auto peer = fromPeer(key, data, bytes);
    if (!peer)
      return peer.takeError();
    return *peer ? llvm::Error::success() : staged.read(key, data, bytes);
  }
  llvm::Expected<int64_t> readRows(int key, void *data, int64_t bytes,
                                   const RowSelection &rows) override {
    auto peer = fromPeer(key, data, bytes); // (the whole piece)
    if (!peer)
      return peer.takeError();
    return *peer ? bytes : staged.readRows(key, data, bytes, rows);
  }
  int64_t bytesHeld() const override { return staged.bytesHeld(); }
  std::string describe() const override { return staged.describe(); }

private:
  /// Copies a version handed over in a peer's memory; false for others.
  llvm::Expected<bool> fromPeer(int key, void *data, int64_t bytes) {
    const int after = dp.exportedAfter[size_t(key)];
    if (after < 0 || !dp.problem.tensors[size_t(key)].input)
      return false;
    const Handoff *h = ex.wait(dp.globalTensor[size_t(key)], after);
    if (!h)
      return ex.stopped();
    if (h->kind != Handoff::Peer)
      return false;
    if (auto e = dev.copyFromPeer(CUdeviceptr(uintptr_t(data)),
                                  all[size_t(h->device)]->cudaDevice(), h->slot,
                                  bytes, dp.problem.tensors[size_t(key)].name))
      return std::move(e);
    std::lock_guard<std::mutex> lock(ex.mutex);
    ex.peerBytes += bytes;
    return true;
  }
  NextTier &staged;
  const DeviceProblem &dp;
  Exchange &ex;
  cuda::CudaDevice &dev;
  const std::vector<CudaBackend *> &all;
};

/// Whether a step runs on device 0 whatever its interval: a reduction over
/// rows into a model-level value, a loss, or a model-level step.
bool onFirstDevice(const PlanStep &step) {
  return step.j < 0 || isa<SumRowsOp, LinearGradWeightOp, CrossEntropyOp,
                           CrossEntropyGradOp, ReturnOp>(step.op);
}

} // namespace

llvm::Expected<std::vector<Tensor>> CudaBackend::executeChunked(
    ModelOp model, const ExecutionContext &ctx, const ChunkedOptions &options,
    ChunkedStats *stats, const std::vector<CudaBackend *> &others) {
  if (others.empty())
    return executeChunked(model, ctx, options, stats);
  std::vector<CudaBackend *> all{this};
  all.insert(all.end(), others.begin(), others.end());
  const int n = int(all.size());
  ModuleOp module = model->getParentOfType<ModuleOp>();
  for (CudaBackend *b : all)
    if (!b->plans.count(module.getOperation()))
      return llvm::createStringError(
          "this plan's kernels were not compiled for " + b->describe());
  ChunkedPlanCache local;
  auto entry = chunked::planRun(model, ctx, options, local);
  if (!entry)
    return entry.takeError();
  const PlanMemory &pm = (*entry)->chunk.memory;
  const int64_t parts = int64_t(pm.bounds.size()) - 1;

  const int64_t room = (*entry)->chunk.room();
  ChunkedPlanCache::Entry::OverDevices &over = (*entry)->overDevices[n];
  if (over.plans.empty()) {
    // Destination intervals by in-edges (the chunks' counts where known).
    over.owner = planRing(n, destinationWeights(pm.bounds, pm.chunkEdges)).owner;
    std::vector<int> deviceOf(pm.steps.size(), 0);
    for (size_t k = 0; k < pm.steps.size(); ++k)
      if (!onFirstDevice(pm.steps[k]))
        deviceOf[k] = over.owner[size_t(pm.steps[k].j)];
    over.split = splitByDevice(pm.problem, deviceOf, n);
    if (!over.split.error.empty()) {
      std::string why = over.split.error;
      (*entry)->overDevices.erase(n);
      return llvm::createStringError("splitting the plan over " +
                                     std::to_string(n) + " devices: " + why);
    }
    for (int d = 0; d < n; ++d) {
      DeviceProblem &dp = over.split.devices[size_t(d)];
      dp.problem.budget = room;
      over.plans.push_back(planExact(dp.problem, kPlanStates));
      if (!over.plans.back().feasible) {
        std::string why = over.plans.back().error;
        (*entry)->overDevices.erase(n);
        return llvm::createStringError(
            "no memory plan on " + all[size_t(d)]->describe() + " (device " +
            std::to_string(d) + " of the run): " + why);
      }
    }
  }
  const DeviceSplit &split = over.split;
  const std::vector<MemoryPlan> &plans = over.plans;

  ExecutionContext runCtx = ctx;
  std::unique_ptr<ChunkReadAhead> ahead =
      chunked::readAhead(model, runCtx, pm, options);
  CudaChunkedRun::SmallValues smallValues;
  ChunkedWalker::KeptRows kept;
  std::mutex keptMutex;
  std::vector<std::unique_ptr<CudaChunkedRun>> walkers;
  for (CudaBackend *b : all) {
    walkers.push_back(std::make_unique<CudaChunkedRun>(
        *b, *b->plans.at(module.getOperation()), model, runCtx, pm));
    walkers.back()->shareSmallValues(&smallValues);
    walkers.back()->shareKeptRows(&kept, &keptMutex);
  }
  // Peer access from every device to device 0 (model-level values).
  for (int d = 1; d < n; ++d)
    if (auto e = all[size_t(d)]->device->enablePeerAccess(*all[0]->device))
      return std::move(e);

  Exchange ex;
  ex.slotsHeld.assign(size_t(n), 0);
  ex.done.assign(pm.steps.size(), 0);
  // The devices work at the same time, each through its own steps in the
  // plan's order; a step waits only for what it reads from another
  // device: a handover (its load waits), or a model-level value made on
  // device 0 (the last step of the op that makes it: `after`); the return
  // waits for every step. Steps take turns in the plan's order instead
  // when a profile is kept (one list) or chunks come from storage (read
  // ahead in the plan's order).
  ex.turns = ctx.profile != nullptr || ahead != nullptr;
  std::vector<std::vector<int>> waitsFor(pm.steps.size());
  {
    std::set<const void *> pieced; // values of the problem's tensors
    for (const PlanPiece &piece : pm.pieces)
      if (piece.value)
        pieced.insert(piece.value);
    llvm::DenseMap<Operation *, int> lastStep;
    for (size_t k = 0; k < pm.steps.size(); ++k)
      lastStep[pm.steps[k].op] = int(k);
    for (size_t k = 0; k < pm.steps.size(); ++k) {
      if (split.deviceOf[k] == 0)
        continue;
      for (Value v : pm.steps[k].op->getOperands()) {
        Operation *maker = v.getDefiningOp();
        if (!maker || pieced.count(v.getAsOpaquePointer()))
          continue;
        auto it = lastStep.find(maker);
        if (it != lastStep.end() && it->second < int(k))
          waitsFor[k].push_back(it->second);
      }
    }
  }
  // After step k on device d: what it hands over, into a slot of its memory
  // (read over the peer link) while it holds fewer than kSlotsPerDevice,
  // else a graph input no device changed from where it lives, else a copy
  // in host memory.
  auto handOver = [&](int d, int k, Resident &view) -> llvm::Error {
    cuda::CudaDevice &dev = all[size_t(d)]->cudaDevice();
    for (const Handover &h : split.exportsAfter[size_t(k)]) {
      const DeviceBuffer &b = view.at(h.tensor);
      Handoff ho;
      bool room;
      {
        std::lock_guard<std::mutex> lock(ex.mutex);
        room = options.peerHandoffs && ex.slotsHeld[size_t(d)] < kSlotsPerDevice;
      }
      if (room) {
        auto slot = dev.allocate(b.bytes, "a handover to another device");
        if (slot) {
          if (auto e = dev.copyWithin(*slot, CUdeviceptr(uintptr_t(b.data)),
                                      b.bytes))
            return e;
          ho.kind = Handoff::Peer;
          ho.device = d;
          ho.slot = *slot;
        } else {
          llvm::consumeError(slot.takeError()); // through the host instead
          room = false;
        }
      }
      if (!room && h.unchanged) {
        ho.kind = Handoff::Source;
      } else if (!room) {
        ho.kind = Handoff::Host;
        ho.host.resize(size_t(b.bytes));
        if (auto e = dev.download(ho.host.data(),
                                  CUdeviceptr(uintptr_t(b.data)), b.bytes))
          return e;
      }
      {
        std::lock_guard<std::mutex> lock(ex.mutex);
        if (ho.kind == Handoff::Peer)
          ++ex.slotsHeld[size_t(d)];
        ex.freeAfter[h.lastReader].push_back({h.tensor, k});
        ex.handoffs[{h.tensor, k}] = std::move(ho);
      }
      ex.cv.notify_all();
    }
    return llvm::Error::success();
  };
  // After step k: the handoffs whose last reader it was.
  auto freeHandoffs = [&](int k) -> llvm::Error {
    std::lock_guard<std::mutex> lock(ex.mutex);
    auto it = ex.freeAfter.find(k);
    if (it == ex.freeAfter.end())
      return llvm::Error::success();
    for (const auto &key : it->second) {
      Handoff &h = ex.handoffs.at(key);
      if (h.kind == Handoff::Peer) {
        // (Stream order: the maker's later work waits for the copies.)
        all[size_t(h.device)]->cudaDevice().release(h.slot);
        --ex.slotsHeld[size_t(h.device)];
        h.slot = 0;
      }
      h.host = std::vector<char>();
    }
    ex.freeAfter.erase(it);
    return llvm::Error::success();
  };
  const RowsFn globalRows = chunked::chunkRows(runCtx, pm);
  std::vector<llvm::Expected<PlanRunStats>> ran;
  for (int d = 0; d < n; ++d)
    ran.emplace_back(PlanRunStats());
  auto runDevice = [&](int d) {
    const DeviceProblem &dp = split.devices[size_t(d)];
    cuda::CudaDevice &dev = *all[size_t(d)]->device;
    CudaChunkedRun &walker = *walkers[size_t(d)];
    std::unique_ptr<NextTier> own = NextTier::inMemory();
    auto fromSource = [&](int global, void *to, int64_t bytes,
                          const RowSelection *rows) -> llvm::Expected<int64_t> {
      std::lock_guard<std::mutex> lock(ex.inputs);
      auto moved = chunked::readInput(model, ctx, pm, global, to, bytes, rows);
      if (moved) {
        std::lock_guard<std::mutex> count(ex.mutex);
        ex.sourceBytes += *moved;
      }
      return moved;
    };
    chunked::InputTier inputs(
        *own, [&](int t) { return dp.problem.tensors[size_t(t)].input; },
        [&](int t, void *to, int64_t bytes,
            const RowSelection *rows) -> llvm::Expected<int64_t> {
          const int global = dp.globalTensor[size_t(t)];
          const int after = dp.exportedAfter[size_t(t)];
          if (after < 0)
            return fromSource(global, to, bytes, rows);
          const Handoff *h = ex.wait(global, after);
          if (!h)
            return ex.stopped();
          if (h->kind == Handoff::Source)
            return fromSource(global, to, bytes, rows);
          if (int64_t(h->host.size()) != bytes)
            return llvm::createStringError(
                "device " + std::to_string(d) + ": " +
                pm.problem.tensors[size_t(global)].name +
                " was handed over as " + std::to_string(h->host.size()) +
                " bytes, " + std::to_string(bytes) + " expected");
          int64_t moved = bytes;
          if (rows) {
            copyRows(to, h->host.data(), *rows);
            moved = rows->bytes();
          } else {
            std::memcpy(to, h->host.data(), size_t(bytes));
          }
          std::lock_guard<std::mutex> lock(ex.mutex);
          ex.hostBytes += moved;
          return moved;
        });
    cuda::StagedTier staged(inputs, dev);
    HandoffTier handoffs(staged, dp, ex, dev, all);
    cuda::CudaTier pool(dev, room);
    auto compute = [&](int localOp, Resident &r) -> llvm::Error {
      const int k = dp.globalOp[size_t(localOp)];
      {
        std::unique_lock<std::mutex> lock(ex.mutex);
        ex.cv.wait(lock, [&] {
          if (ex.failed)
            return true;
          if (ex.turns || isa<ReturnOp>(pm.steps[size_t(k)].op))
            return ex.firstNotDone == k;
          for (int w : waitsFor[size_t(k)])
            if (!ex.done[size_t(w)])
              return false;
          return true;
        });
        if (ex.failed)
          return ex.stopped();
      }
      Resident view;
      for (auto &[t, buffer] : r)
        view[dp.globalTensor[size_t(t)]] = buffer;
      llvm::Error e = walker.compute(k, view);
      if (!e) {
        walker.noteSmallWrites(k);
        e = handOver(d, k, view);
      }
      if (!e)
        e = freeHandoffs(k);
      if (e) {
        std::string why = "device " + std::to_string(d) + " (" +
                          dev.describe() + "), step " + std::to_string(k) +
                          " (" + pm.problem.ops[size_t(k)].name +
                          "): " + llvm::toString(std::move(e));
        ex.fail(why);
        return llvm::createStringError(why);
      }
      {
        std::lock_guard<std::mutex> lock(ex.mutex);
        ex.done[size_t(k)] = 1;
        while (ex.firstNotDone < int(ex.done.size()) &&
               ex.done[size_t(ex.firstNotDone)])
          ++ex.firstNotDone;
      }
      ex.cv.notify_all();
      return llvm::Error::success();
    };
    RowsFn rows = [&](int localOp, int t) {
      return globalRows(dp.globalOp[size_t(localOp)],
                        dp.globalTensor[size_t(t)]);
    };
    ReadyFn ready = [&](int t) {
      const int after = dp.exportedAfter[size_t(t)];
      return after < 0 || ex.has(dp.globalTensor[size_t(t)], after);
    };
    ran[size_t(d)] = runMemoryPlan(dp.problem, plans[size_t(d)], pool,
                                   handoffs, compute, kPrefetchDepth, rows,
                                   ready);
    if (!ran[size_t(d)]) {
      // The first failure is the run's: a step's names its device and
      // step; one outside a step (a load, the device tier) its device. The
      // other devices stop at their next step.
      std::string why = llvm::toString(ran[size_t(d)].takeError());
      bool first;
      {
        std::lock_guard<std::mutex> lock(ex.mutex);
        first = !ex.failed;
      }
      if (first)
        ex.fail("device " + std::to_string(d) + " (" + dev.describe() +
                "): " + why);
      ran[size_t(d)] = PlanRunStats();
    }
  };
  {
    std::vector<std::thread> threads;
    for (int d = 1; d < n; ++d)
      threads.emplace_back(runDevice, d);
    runDevice(0);
    for (std::thread &t : threads)
      t.join();
  }
  // After a failure, handoffs whose last reader never ran still hold their
  // slots in the makers' pools, which outlive the run.
  for (auto &[key, h] : ex.handoffs)
    if (h.kind == Handoff::Peer && h.slot)
      all[size_t(h.device)]->cudaDevice().release(h.slot);
  if (ex.failed)
    return llvm::createStringError(ex.failure);
  for (CudaBackend *b : all)
    if (auto e = b->device->synchronize())
      return std::move(e);
  if (ctx.intervalsUsed)
    *ctx.intervalsUsed = 1;
  chunked::noteReadAhead(ahead.get(), stats);
  if (stats) {
    stats->intervals = parts;
    stats->emptyChunks = pm.emptyChunks();
    stats->group = pm.group;
    stats->minimumBytes = (*entry)->chunk.minimum;
    stats->edgesSplit = pm.edgesSplit();
    stats->pinnedBytes = pm.pinnedBytes;
    stats->method = plans[0].method;
    stats->devices = n;
    for (int d = 0; d < n; ++d) {
      const PlanRunStats &r = *ran[size_t(d)];
      stats->plannedBytes += plans[size_t(d)].bytesMoved();
      stats->run.transfers.loads += r.transfers.loads;
      stats->run.transfers.stores += r.transfers.stores;
      stats->run.transfers.bytesLoaded += r.transfers.bytesLoaded;
      stats->run.transfers.bytesStored += r.transfers.bytesStored;
      stats->run.poolPeak = std::max(stats->run.poolPeak, r.poolPeak);
      stats->run.computeSeconds += r.computeSeconds;
      stats->run.seconds = std::max(stats->run.seconds, r.seconds);
      stats->csrBytesUploaded += walkers[size_t(d)]->csrBytes();
      stats->csrEdgesUploaded += walkers[size_t(d)]->csrEdges();
      stats->deviceOutsideBytes += walkers[size_t(d)]->outsideBytes();
    }
    stats->handoffPeerBytes = ex.peerBytes;
    stats->handoffHostBytes = ex.hostBytes;
    stats->sourceBytes = ex.sourceBytes;
  }
  return walkers[0]->takeResults();
}
