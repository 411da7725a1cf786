//===- ThreadPool.h - the runtime's worker threads --------------*- C++ -*-===//
//
// A fixed set of workers that run `parallelFor` tasks. Work is split into
// tasks whose boundaries do not depend on the thread count, so every task
// computes exactly the same values with 1 or N threads.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_THREADPOOL_H
#define SAGA_RUNTIME_THREADPOOL_H

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace saga {

class ThreadPool {
public:
  /// `threads` >= 1; the calling thread is one of them.
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;

  unsigned size() const { return numThreads; }

  /// Runs fn(0) .. fn(tasks-1) across the threads and waits for all.
  void parallelFor(int64_t tasks, const std::function<void(int64_t)> &fn);

private:
  void work();
  void runTasks();

  unsigned numThreads;
  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable wake, done;
  const std::function<void(int64_t)> *job = nullptr;
  int64_t numTasks = 0, nextTask = 0, finished = 0;
  uint64_t generation = 0;
  bool stopping = false;
};

} // namespace saga

#endif // SAGA_RUNTIME_THREADPOOL_H
