//===- ChunkReadAhead.h - a chunk source read ahead of compute --*- C++ -*-===//
//
// Wraps a chunk source that reads from storage (a graph file) so that the
// chunks a run will ask for are read on their own thread, in the run's
// order, while the kernels of the chunks before them compute: the parts
// read and not yet used hold at most `aheadBytes` (or one part, however
// large: a source bounds its parts), so a run of small chunks can be read
// during a long GEMM and the memory ahead stays bounded. A request that is not
// the next one expected (a different run, an error path) stops the reader
// and is read directly, so results never depend on the order guessed. A
// read error (a checksum mismatch, a short read) is returned to the request
// that would have received the failing part: no kernel runs on a chunk whose
// checksum failed. Counts the time compute waited for a part (stall) and the
// time the reader spent reading (busy).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_MEMORY_CHUNKREADAHEAD_H
#define SAGA_RUNTIME_MEMORY_CHUNKREADAHEAD_H

#include "runtime/graph/EdgeChunks.h"

#include <condition_variable>
#include <deque>
#include <optional>
#include <thread>

namespace saga {

/// One chunk a run asks for, in the order it asks.
struct ChunkRequest {
  bool reversed = false;
  int64_t i = 0, j = 0;
  bool operator==(const ChunkRequest &o) const {
    return reversed == o.reversed && i == o.i && j == o.j;
  }
};

class ChunkReadAhead : public ChunkSource {
public:
  /// Starts reading `requests` (over the intervals `bounds`) from `inner`.
  ChunkReadAhead(ChunkSource &inner, std::vector<int32_t> bounds,
                 std::vector<ChunkRequest> requests,
                 int64_t aheadBytes = kAheadBytes);
  static constexpr int64_t kAheadBytes = int64_t(32) << 20;
  ~ChunkReadAhead() override;

  llvm::Error forEachPart(bool reversed, const std::vector<int32_t> &bounds,
                          int64_t i, int64_t j, const PartFn &fn) override;
  std::vector<int64_t>
  chunkEdgeCounts(const std::vector<int32_t> &bounds) override {
    return inner.chunkEdgeCounts(bounds);
  }
  llvm::Expected<std::shared_ptr<const std::vector<int32_t>>>
  chunkRows(bool reversed, const std::vector<int32_t> &bounds, int64_t i,
            int64_t j) override {
    return inner.chunkRows(reversed, bounds, i, j);
  }
  std::vector<int64_t>
  chunkRowCounts(bool reversed, const std::vector<int32_t> &bounds) override {
    return inner.chunkRowCounts(reversed, bounds);
  }

  struct Counters {
    int64_t parts = 0;       // handed over from the reader
    int64_t directReads = 0; // requests read on the caller's thread
    double busySeconds = 0, stallSeconds = 0;
  };
  Counters counters() const;

private:
  struct Part {
    ChunkView view;
    bool last = false;
    std::optional<std::string> error; // the read failed here
    int64_t bytes = 0;                // its arrays, about
  };
  void run();
  void stop();

  ChunkSource &inner;
  const std::vector<int32_t> bounds;
  const std::vector<ChunkRequest> requests;
  const int64_t aheadBytes;
  int64_t readyBytes = 0; // of the parts in `ready`
  size_t next = 0; // the request the caller should ask for next
  mutable std::mutex mutex;
  std::condition_variable changed;
  std::deque<Part> ready;
  bool stopping = false, finished = false;
  Counters stats;
  std::thread reader;
};

} // namespace saga

#endif // SAGA_RUNTIME_MEMORY_CHUNKREADAHEAD_H
