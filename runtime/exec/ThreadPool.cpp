//===- ThreadPool.cpp - the runtime's worker threads ----------------------===//

#include "runtime/exec/ThreadPool.h"

using namespace saga;

ThreadPool::ThreadPool(unsigned threads) : numThreads(threads ? threads : 1) {
  for (unsigned i = 1; i < numThreads; ++i)
    workers.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  for (std::thread &t : workers)
    t.join();
}

void ThreadPool::runTasks() {
  while (true) {
    int64_t task;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (nextTask >= numTasks)
        return;
      task = nextTask++;
    }
    (*job)(task);
    std::lock_guard<std::mutex> lock(mutex);
    if (++finished == numTasks)
      done.notify_all();
  }
}

void ThreadPool::work() {
  uint64_t seen = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] { return stopping || generation != seen; });
      if (stopping)
        return;
      seen = generation;
    }
    runTasks();
  }
}

void ThreadPool::parallelFor(int64_t tasks,
                             const std::function<void(int64_t)> &fn) {
  if (tasks <= 0)
    return;
  if (numThreads == 1 || tasks == 1) {
    for (int64_t i = 0; i < tasks; ++i)
      fn(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    job = &fn;
    numTasks = tasks;
    nextTask = 0;
    finished = 0;
    ++generation;
  }
  wake.notify_all();
  runTasks();
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, [&] { return finished == numTasks; });
  job = nullptr;
}
