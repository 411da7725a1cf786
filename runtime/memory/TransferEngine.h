//===- TransferEngine.h - loads and stores beside compute -------*- C++ -*-===//
//
// Moves data between the device tier and the next tier on its own thread,
// in the order it is given, so that a memory plan's loads for the next
// operators and stores of the last ones overlap the current operator's
// compute. Counts bytes each way, the time transfers took (busy) and the
// time compute waited for them (stall): overlap = 1 - stall / busy. An
// error is sticky: every later wait returns it, so a run never continues
// past a failed spill.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_MEMORY_TRANSFERENGINE_H
#define SAGA_RUNTIME_MEMORY_TRANSFERENGINE_H

#include "runtime/memory/Tiers.h"

#include <condition_variable>
#include <deque>
#include <thread>

namespace saga {

class TransferEngine {
public:
  using Ticket = uint64_t;
  explicit TransferEngine(NextTier &tier);
  ~TransferEngine();

  /// Reads `key` from the next tier into `to` (`bytes`).
  Ticket load(int key, void *to, int64_t bytes);
  /// Reads only `rows` of `key` (of `bytes`) into their places in `to`;
  /// counted as the bytes the tier moved.
  Ticket loadRows(int key, void *to, int64_t bytes, RowSelection rows);
  /// Writes `from` (`bytes`) to the next tier as `key`; `from` must stay
  /// valid until the ticket is done.
  Ticket store(int key, const void *from, int64_t bytes);
  /// Waits until `ticket` and everything before it are done (stall time);
  /// the first transfer error so far, if any.
  llvm::Error wait(Ticket ticket);
  /// Whether `ticket` is done (no waiting).
  bool done(Ticket ticket) const;

  struct Counters {
    int64_t loads = 0, stores = 0, bytesLoaded = 0, bytesStored = 0;
    double busySeconds = 0, stallSeconds = 0;
    double overlap() const {
      return busySeconds > 0 ? std::max(0.0, 1 - stallSeconds / busySeconds)
                             : 1.0;
    }
  };
  Counters counters() const;

private:
  struct Job {
    bool isLoad;
    int key;
    void *to;
    const void *from;
    int64_t bytes;
    RowSelection rows; // a load of these rows only
  };
  void run();
  NextTier &tier;
  mutable std::mutex mutex;
  std::condition_variable wake, finished;
  std::deque<Job> queue;
  Ticket submitted = 0, completed = 0;
  bool stopping = false;
  std::string error; // the first failure
  Counters stats;
  std::thread worker;
};

} // namespace saga

#endif // SAGA_RUNTIME_MEMORY_TRANSFERENGINE_H
