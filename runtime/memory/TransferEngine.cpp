//===- TransferEngine.cpp - loads and stores beside compute ---------------===//

#include "runtime/memory/TransferEngine.h"

#include "runtime/Timing.h"

#include <chrono>

using namespace saga;


TransferEngine::TransferEngine(NextTier &tier)
    : tier(tier), worker([this] { run(); }) {}

TransferEngine::~TransferEngine() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  worker.join();
}

TransferEngine::Ticket TransferEngine::load(int key, void *to, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  queue.push_back({true, key, to, nullptr, bytes, {}});
  wake.notify_one();
  return ++submitted;
}

TransferEngine::Ticket TransferEngine::loadRows(int key, void *to,
                                                int64_t bytes,
                                                RowSelection rows) {
  std::lock_guard<std::mutex> lock(mutex);
  queue.push_back({true, key, to, nullptr, bytes, std::move(rows)});
  wake.notify_one();
  return ++submitted;
}

TransferEngine::Ticket TransferEngine::store(int key, const void *from,
                                             int64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  queue.push_back({false, key, nullptr, from, bytes, {}});
  wake.notify_one();
  return ++submitted;
}

void TransferEngine::run() {
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    wake.wait(lock, [&] { return stopping || !queue.empty(); });
    if (queue.empty())
      return;
    Job job = queue.front();
    queue.pop_front();
    bool failed = !error.empty();
    lock.unlock();
    auto start = std::chrono::steady_clock::now();
    std::string message;
    int64_t moved = job.bytes;
    if (!failed) { // after a failure nothing more moves
      auto transfer = [&]() -> llvm::Error {
        if (!job.isLoad)
          return tier.write(job.key, job.from, job.bytes);
        if (!job.rows.rows)
          return tier.read(job.key, job.to, job.bytes);
        llvm::Expected<int64_t> n =
            tier.readRows(job.key, job.to, job.bytes, job.rows);
        if (!n)
          return n.takeError();
        moved = *n;
        return llvm::Error::success();
      };
      if (llvm::Error e = transfer())
        message = llvm::toString(std::move(e));
    }
    double seconds = secondsSince(start);
    lock.lock();
    if (!message.empty() && error.empty())
      error = message;
    if (!failed && message.empty()) {
      (job.isLoad ? stats.loads : stats.stores) += 1;
      (job.isLoad ? stats.bytesLoaded : stats.bytesStored) += moved;
    }
    stats.busySeconds += seconds;
    ++completed;
    finished.notify_all();
  }
}

llvm::Error TransferEngine::wait(Ticket ticket) {
  auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex);
  if (completed < ticket) {
    finished.wait(lock, [&] { return completed >= ticket; });
    stats.stallSeconds += secondsSince(start);
  }
  if (!error.empty())
    return llvm::createStringError(error);
  return llvm::Error::success();
}

bool TransferEngine::done(Ticket ticket) const {
  std::lock_guard<std::mutex> lock(mutex);
  return completed >= ticket;
}

TransferEngine::Counters TransferEngine::counters() const {
  std::lock_guard<std::mutex> lock(mutex);
  return stats;
}
