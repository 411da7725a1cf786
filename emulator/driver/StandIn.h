//===- StandIn.h - state the stand-in's libraries share ---------*- C++ -*-===//
//
// Private to emulator/driver: what the driver (StandIn.cpp), NVRTC
// (StandInNvrtc.cpp) and cuBLAS (StandInCublas.cpp) of the stand-in share,
// all three in one library: the image magic, device memory, the stream
// type, and the driver's context and initialisation state.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_EMULATOR_DRIVER_STANDIN_H
#define SAGA_EMULATOR_DRIVER_STANDIN_H

#include <cuda.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <thread>

// Shared by the library's files only: not exported from it (as when they
// were one file's internals).
#pragma GCC visibility push(hidden)

namespace saga::emu::standin {

/// The first line of an image from the stand-in NVRTC; the CUDA source follows.
constexpr char kImageMagic[] = "// SAGA-EMULATED-MODULE 1\n";

//===-------------------------------------------------------------------===//
// Memory
//===-------------------------------------------------------------------===//

/// How many emulated devices there are: $SAGA_EMU_DEVICES (1 to
/// kMaxDevices, default 1).
constexpr int kMaxDevices = 16;
int deviceCount();

struct Memory {
  std::mutex mutex;
  std::map<uintptr_t, size_t> device, pinned; // base -> bytes
  std::map<uintptr_t, int> owner;             // device base -> its device
  size_t used[kMaxDevices] = {};
  /// Each device's capacity ($SAGA_EMU_DEVICE_MEMORY bytes, default 4 GiB).
  size_t total() const {
    static const size_t t = [] {
      const char *v = std::getenv("SAGA_EMU_DEVICE_MEMORY");
      return v ? size_t(std::strtoull(v, nullptr, 0)) : size_t(4) << 30;
    }();
    return t;
  }
  static bool within(const std::map<uintptr_t, size_t> &m, uintptr_t p,
                     size_t n) {
    auto it = m.upper_bound(p);
    if (it == m.begin())
      return false;
    --it;
    return p >= it->first && p + n <= it->first + it->second;
  }
  bool isDevice(uintptr_t p, size_t n) {
    std::lock_guard<std::mutex> lock(mutex);
    return n == 0 || within(device, p, n);
  }
  /// The device whose allocation holds [p, p + n), or -1.
  int deviceOf(uintptr_t p, size_t n) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!within(device, p, n ? n : 1))
      return -1;
    auto it = owner.upper_bound(p);
    return std::prev(it)->second;
  }
  bool isPinned(const void *p, size_t n) {
    std::lock_guard<std::mutex> lock(mutex);
    return within(pinned, uintptr_t(p), n);
  }
};
inline Memory &memory() {
  static Memory *m = new Memory();
  return *m;
}

/// The stream `s` names, after the legacy null stream's waits (StandIn.cpp).
CUstream_st *resolve(CUstream s);

/// The current context of the calling thread, and whether cuInit was called.
extern thread_local CUcontext current;
extern bool initialised;

} // namespace saga::emu::standin

#pragma GCC visibility pop

struct CUstream_st {
  explicit CUstream_st(bool blocking) : blocking(blocking) {
    worker = std::thread([this] { run(); });
  }
  ~CUstream_st() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop = true;
    }
    ready.notify_all();
    worker.join();
  }
  void enqueue(std::function<void()> work) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      queue.push_back(std::move(work));
      ++queued;
    }
    ready.notify_all();
  }
  void synchronize() {
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [&] { return finished == queued; });
  }
  bool idle() {
    std::lock_guard<std::mutex> lock(mutex);
    return finished == queued;
  }

  const bool blocking;

private:
  void run() {
    for (;;) {
      std::function<void()> work;
      {
        std::unique_lock<std::mutex> lock(mutex);
        ready.wait(lock, [&] { return stop || !queue.empty(); });
        if (queue.empty())
          return;
        work = std::move(queue.front());
        queue.pop_front();
      }
      work();
      {
        std::lock_guard<std::mutex> lock(mutex);
        ++finished;
      }
      done.notify_all();
    }
  }
  std::mutex mutex;
  std::condition_variable ready, done;
  std::deque<std::function<void()>> queue;
  uint64_t queued = 0, finished = 0;
  bool stop = false;
  std::thread worker;
};

#endif // SAGA_EMULATOR_DRIVER_STANDIN_H
