//===- ChunkReadAhead.cpp - a chunk source read ahead of compute ----------===//

#include "runtime/memory/ChunkReadAhead.h"

#include "runtime/Timing.h"

#include <chrono>

using namespace saga;

ChunkReadAhead::ChunkReadAhead(ChunkSource &inner, std::vector<int32_t> bounds,
                               std::vector<ChunkRequest> requests,
                               int64_t aheadBytes)
    : inner(inner), bounds(std::move(bounds)), requests(std::move(requests)),
      aheadBytes(aheadBytes) {
  if (!this->requests.empty())
    reader = std::thread([this] { run(); });
  else
    finished = true;
}

ChunkReadAhead::~ChunkReadAhead() { stop(); }

void ChunkReadAhead::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  changed.notify_all();
  if (reader.joinable())
    reader.join();
  std::lock_guard<std::mutex> lock(mutex);
  ready.clear();
  readyBytes = 0;
}

void ChunkReadAhead::run() {
  for (const ChunkRequest &r : requests) {
    auto start = std::chrono::steady_clock::now();
    double waited = 0;
    llvm::Error e = inner.forEachPart(
        r.reversed, bounds, r.i, r.j,
        [&](const ChunkView &view, bool last) -> llvm::Error {
          // The CSR's row offsets over interval j, the edges' two arrays.
          const int64_t rows = bounds[size_t(r.j) + 1] - bounds[size_t(r.j)];
          const int64_t bytes = 8 * (rows + 1) + 8 * view.numEdges;
          std::unique_lock<std::mutex> lock(mutex);
          auto idle = std::chrono::steady_clock::now();
          changed.wait(lock, [&] {
            return stopping || ready.empty() ||
                   readyBytes + bytes <= aheadBytes;
          });
          waited += secondsSince(idle);
          if (stopping)
            return llvm::createStringError("stopped");
          readyBytes += bytes;
          ready.push_back({view, last, std::nullopt, bytes});
          changed.notify_all();
          return llvm::Error::success();
        });
    std::unique_lock<std::mutex> lock(mutex);
    stats.busySeconds += secondsSince(start) - waited;
    if (stopping) {
      llvm::consumeError(std::move(e));
      break;
    }
    if (e) {
      ready.push_back({ChunkView(), true, llvm::toString(std::move(e))});
      changed.notify_all();
      break; // the caller stops at the error
    }
  }
  std::lock_guard<std::mutex> lock(mutex);
  finished = true;
  changed.notify_all();
}

llvm::Error ChunkReadAhead::forEachPart(bool reversed,
                                        const std::vector<int32_t> &asked,
                                        int64_t i, int64_t j,
                                        const PartFn &fn) {
  ChunkRequest want{reversed, i, j};
  bool expected;
  {
    std::lock_guard<std::mutex> lock(mutex);
    expected = !stopping && asked == bounds && next < requests.size() &&
               requests[next] == want;
  }
  if (!expected) {
    // Not the order the reader follows: read it here, and read no further
    // ahead (whatever it holds would not be asked for in order).
    stop();
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++stats.directReads;
    }
    return inner.forEachPart(reversed, asked, i, j, fn);
  }
  ++next;
  for (;;) {
    Part part;
    {
      std::unique_lock<std::mutex> lock(mutex);
      auto start = std::chrono::steady_clock::now();
      changed.wait(lock, [&] { return !ready.empty() || finished; });
      stats.stallSeconds += secondsSince(start);
      if (ready.empty())
        return llvm::createStringError(
            "chunk (" + std::to_string(i) + ", " + std::to_string(j) +
            "): the read-ahead ended before it");
      part = std::move(ready.front());
      ready.pop_front();
      readyBytes -= part.bytes;
      ++stats.parts;
    }
    changed.notify_all();
    if (part.error)
      return llvm::createStringError(*part.error);
    if (llvm::Error e = fn(part.view, part.last)) {
      stop(); // the rest of this chunk would be handed to the next request
      return e;
    }
    if (part.last)
      return llvm::Error::success();
  }
}

ChunkReadAhead::Counters ChunkReadAhead::counters() const {
  std::lock_guard<std::mutex> lock(mutex);
  return stats;
}
