//===- StandIn.cpp - a CPU-backed libcuda.so.1 ----------------------------===//
//
// The entry points Saga's CUDA executor calls, with the real names and
// signatures (the stand-in is compiled against the toolkit's cuda.h, nvrtc.h
// and cublas_v2.h, so a signature that drifts does not build), backed by
// the host and the emulated GPU (emulator/Emulator.h):
//
//  - $SAGA_EMU_DEVICES devices (default 1), each with its primary context;
//    device memory is host memory the stand-in hands out and tracks per
//    device, each with a capacity ($SAGA_EMU_DEVICE_MEMORY bytes, default
//    4 GiB); a copy or launch that touches memory outside an allocation
//    fails as a real one would fault;
//  - copies between devices (cuMemcpyPeerAsync, cuMemcpyDtoDAsync) go over
//    the peer link when cuCtxEnablePeerAccess opened it, else through the
//    host; every link's bytes are counted (saga_emu_link_bytes(from, to),
//    -1 the host), and $SAGA_EMU_FAIL_PEER_COPY=N fails the N-th copy
//    between two devices with CUDA_ERROR_ILLEGAL_ADDRESS;
//  - each stream is a thread running its queue in order; events record a
//    generation and a time; the legacy null stream waits for the others;
//  - an async copy from pageable memory snapshots its source when queued,
//    as the driver does; one from pinned memory (cuMemAllocHost) reads it
//    when the stream gets to it, so reusing a pinned buffer too early shows;
//  - cuLaunchKernel copies the argument values when it is called; the
//    kernel runs on the emulated GPU (thread order $SAGA_EMU_ORDER);
//  - "NVRTC" (StandInNvrtc.cpp) returns an image that is the CUDA source
//    behind a magic line, which cuModuleLoadData compiles for the host
//    (cached by hash);
//  - cublasSgemm (StandInCublas.cpp) runs OpenBLAS's sgemm on the handle's
//    stream.
//
// What the three share (device memory, streams, the context) is in
// StandIn.h.
//
// A kernel's failure (a deadlock, a divergent barrier) is sticky, as a
// launch failure is on a GPU: every later synchronisation returns
// CUDA_ERROR_LAUNCH_FAILED; the message goes to stderr.
//
// Selected by pointing SAGA_CUDA_DRIVER, SAGA_NVRTC and SAGA_CUBLAS at this
// library (tests do; nothing else loads it).
//
//===----------------------------------------------------------------------===//

#include "emulator/driver/StandIn.h"

#include "emulator/Emulator.h"

#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <dlfcn.h>

using namespace saga::emu::standin;

namespace {

using Clock = std::chrono::steady_clock;

//===-------------------------------------------------------------------===//
// Streams, events and the sticky error
//===-------------------------------------------------------------------===//

std::mutex stickyMutex;
std::string sticky; // the first kernel failure

void fail(const std::string &what) {
  std::lock_guard<std::mutex> lock(stickyMutex);
  std::fprintf(stderr, "saga stand-in CUDA driver: %s\n", what.c_str());
  if (sticky.empty())
    sticky = what;
}
CUresult status() {
  std::lock_guard<std::mutex> lock(stickyMutex);
  return sticky.empty() ? CUDA_SUCCESS : CUDA_ERROR_LAUNCH_FAILED;
}

} // namespace

struct CUevent_st {
  std::mutex mutex;
  std::condition_variable cv;
  uint64_t recorded = 0, completed = 0;
  Clock::time_point when{};
  void complete(uint64_t generation) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      completed = std::max(completed, generation);
      when = Clock::now();
    }
    cv.notify_all();
  }
  void waitFor(uint64_t generation) {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return completed >= generation; });
  }
};

struct CUctx_st {
  int device = 0;
  /// The devices whose memory this context may reach directly
  /// (cuCtxEnablePeerAccess); guarded by the memory's mutex.
  std::set<int> peers;
};

struct CUfunc_st {
  std::string name;
  saga::emu::Entry entry = nullptr;
  std::vector<size_t> sizes;
};

struct CUmod_st {
  std::unique_ptr<saga::emu::EmulatedModule> module;
  /// The handles cuModuleGetFunction gave out, freed with the module.
  std::vector<std::unique_ptr<CUfunc_st>> functions;
};

namespace {

struct Streams {
  std::mutex mutex;
  std::set<CUstream> all;
  CUstream null = nullptr;
};
Streams &streams() {
  static Streams *s = [] {
    auto *s = new Streams();
    s->null = new CUstream_st(true);
    return s;
  }();
  return *s;
}

/// Each device's primary context.
CUctx_st *primaryContexts() {
  static CUctx_st *all = [] {
    auto *c = new CUctx_st[kMaxDevices];
    for (int d = 0; d < kMaxDevices; ++d)
      c[d].device = d;
    return c;
  }();
  return all;
}
bool validDevice(CUdevice d) { return d >= 0 && d < deviceCount(); }
bool isContext(CUcontext c) {
  return c >= primaryContexts() && c < primaryContexts() + deviceCount();
}

/// Bytes moved over each link, [from + 1][to + 1] (0: the host).
std::atomic<uint64_t> linkBytes[kMaxDevices + 1][kMaxDevices + 1];
void countLink(int from, int to, size_t bytes) {
  if (from != to)
    linkBytes[from + 1][to + 1].fetch_add(bytes, std::memory_order_relaxed);
}

/// Whether this copy between two devices is the one
/// $SAGA_EMU_FAIL_PEER_COPY says fails: N, counting from 1 the copies
/// made while it is set.
bool peerCopyFails() {
  static std::atomic<uint64_t> copies{0};
  const char *v = std::getenv("SAGA_EMU_FAIL_PEER_COPY");
  if (!v) {
    copies = 0;
    return false;
  }
  return std::strtoull(v, nullptr, 10) == copies.fetch_add(1) + 1;
}

/// A copy of `bytes` from device `from` to device `to` (neither the host):
/// over their peer link when either context reaches the other's memory,
/// else staged through the host, as the driver does.
void countDeviceCopy(int from, int to, size_t bytes) {
  if (from == to)
    return;
  bool direct;
  {
    std::lock_guard<std::mutex> lock(memory().mutex);
    direct = primaryContexts()[from].peers.count(to) ||
             primaryContexts()[to].peers.count(from);
  }
  if (direct) {
    countLink(from, to, bytes);
  } else {
    countLink(from, -1, bytes);
    countLink(-1, to, bytes);
  }
}

} // namespace

int saga::emu::standin::deviceCount() {
  static const int n = [] {
    const char *v = std::getenv("SAGA_EMU_DEVICES");
    long k = v ? std::strtol(v, nullptr, 10) : 1;
    return int(std::clamp<long>(k, 1, kMaxDevices));
  }();
  return n;
}

namespace saga::emu::standin {

/// The stream `s` names (the legacy null stream for 0), after the waits
/// the legacy stream's semantics ask for: work on it waits for every
/// blocking stream, and work on a blocking stream waits for it. Waiting on
/// the host is stricter than the driver, never looser.
CUstream_st *resolve(CUstream s) {
  Streams &all = streams();
  if (!s) {
    std::vector<CUstream> blocking;
    {
      std::lock_guard<std::mutex> lock(all.mutex);
      for (CUstream t : all.all)
        if (t->blocking)
          blocking.push_back(t);
    }
    for (CUstream t : blocking)
      t->synchronize();
    return all.null;
  }
  if (s->blocking)
    all.null->synchronize();
  return s;
}

thread_local CUcontext current = nullptr;
bool initialised = false;

} // namespace saga::emu::standin

#define SAGA_REQUIRE_INIT()                                                    \
  do {                                                                         \
    if (!initialised)                                                          \
      return CUDA_ERROR_NOT_INITIALIZED;                                       \
  } while (0)

extern "C" {

//===-------------------------------------------------------------------===//
// Initialisation, devices, contexts
//===-------------------------------------------------------------------===//

CUresult cuInit(unsigned int flags) {
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  // The emulated modules this loads call into the emulator; when this
  // library was opened RTLD_LOCAL (as a driver should be), its symbols must
  // be made global for them.
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&saga::emu::launch), &info) &&
      info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  initialised = true;
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *version) {
  if (!version)
    return CUDA_ERROR_INVALID_VALUE;
  *version = CUDA_VERSION;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count) {
  SAGA_REQUIRE_INIT();
  if (!count)
    return CUDA_ERROR_INVALID_VALUE;
  *count = deviceCount();
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  SAGA_REQUIRE_INIT();
  if (!device || !validDevice(ordinal))
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice device) {
  SAGA_REQUIRE_INIT();
  if (!validDevice(device))
    return CUDA_ERROR_INVALID_DEVICE;
  if (!name || len <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (deviceCount() == 1)
    std::snprintf(name, size_t(len), "Saga emulated GPU (CPU-backed stand-in)");
  else
    std::snprintf(name, size_t(len),
                  "Saga emulated GPU %d of %d (CPU-backed stand-in)", device,
                  deviceCount());
  return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice device) {
  SAGA_REQUIRE_INIT();
  if (!validDevice(device))
    return CUDA_ERROR_INVALID_DEVICE;
  *bytes = memory().total();
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                              CUdevice device) {
  SAGA_REQUIRE_INIT();
  if (!validDevice(device))
    return CUDA_ERROR_INVALID_DEVICE;
  if (!value)
    return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = int(std::max(1u, std::thread::hardware_concurrency()));
    break;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *value = 32; break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *value = 48 << 10; break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *value = 0x7fffffff; break;
  case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: *value = 2; break;
  case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *value = 0; break;
  default: *value = 0; break;
  }
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice device) {
  SAGA_REQUIRE_INIT();
  if (!validDevice(device))
    return CUDA_ERROR_INVALID_DEVICE;
  *ctx = &primaryContexts()[device];
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  SAGA_REQUIRE_INIT();
  return validDevice(device) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
  SAGA_REQUIRE_INIT();
  if (ctx && !isContext(ctx))
    return CUDA_ERROR_INVALID_CONTEXT;
  current = ctx;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *ctx) {
  SAGA_REQUIRE_INIT();
  *ctx = current;
  return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize() {
  SAGA_REQUIRE_INIT();
  resolve(nullptr)->synchronize();
  return status();
}

//===-------------------------------------------------------------------===//
// Memory
//===-------------------------------------------------------------------===//

CUresult cuMemGetInfo_v2(size_t *freeBytes, size_t *totalBytes) {
  SAGA_REQUIRE_INIT();
  Memory &m = memory();
  std::lock_guard<std::mutex> lock(m.mutex);
  *totalBytes = m.total();
  *freeBytes = m.total() - m.used[current ? current->device : 0];
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
  SAGA_REQUIRE_INIT();
  if (!current)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (!p || bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  Memory &m = memory();
  size_t rounded = (bytes + 255) & ~size_t(255);
  const int d = current->device;
  {
    std::lock_guard<std::mutex> lock(m.mutex);
    if (m.used[d] + rounded > m.total())
      return CUDA_ERROR_OUT_OF_MEMORY;
    m.used[d] += rounded;
  }
  void *host = std::aligned_alloc(256, rounded);
  std::lock_guard<std::mutex> lock(m.mutex);
  if (!host) {
    m.used[d] -= rounded;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  m.device[uintptr_t(host)] = rounded;
  m.owner[uintptr_t(host)] = d;
  *p = CUdeviceptr(uintptr_t(host));
  return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr p) {
  SAGA_REQUIRE_INIT();
  Memory &m = memory();
  std::lock_guard<std::mutex> lock(m.mutex);
  auto it = m.device.find(uintptr_t(p));
  if (it == m.device.end())
    return CUDA_ERROR_INVALID_VALUE;
  m.used[m.owner[it->first]] -= it->second;
  m.owner.erase(it->first);
  std::free(reinterpret_cast<void *>(it->first));
  m.device.erase(it);
  return CUDA_SUCCESS;
}

CUresult cuMemAllocHost_v2(void **p, size_t bytes) {
  SAGA_REQUIRE_INIT();
  if (!p || bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  size_t rounded = (bytes + 4095) & ~size_t(4095);
  void *host = std::aligned_alloc(4096, rounded);
  if (!host)
    return CUDA_ERROR_OUT_OF_MEMORY;
  Memory &m = memory();
  std::lock_guard<std::mutex> lock(m.mutex);
  m.pinned[uintptr_t(host)] = rounded;
  *p = host;
  return CUDA_SUCCESS;
}

CUresult cuMemFreeHost(void *p) {
  SAGA_REQUIRE_INIT();
  Memory &m = memory();
  std::lock_guard<std::mutex> lock(m.mutex);
  auto it = m.pinned.find(uintptr_t(p));
  if (it == m.pinned.end())
    return CUDA_ERROR_INVALID_VALUE;
  std::free(p);
  m.pinned.erase(it);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes,
                              CUstream s) {
  SAGA_REQUIRE_INIT();
  const int onto = memory().deviceOf(uintptr_t(dst), bytes);
  if (onto < 0 || (!src && bytes))
    return CUDA_ERROR_INVALID_VALUE;
  countLink(-1, onto, bytes);
  void *to = reinterpret_cast<void *>(uintptr_t(dst));
  if (memory().isPinned(src, bytes)) {
    resolve(s)->enqueue([=] { std::memcpy(to, src, bytes); });
  } else {
    // Pageable: the driver stages it before returning.
    auto copy = std::make_shared<std::vector<char>>(
        static_cast<const char *>(src), static_cast<const char *>(src) + bytes);
    resolve(s)->enqueue([=] { std::memcpy(to, copy->data(), bytes); });
  }
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes,
                              CUstream s) {
  SAGA_REQUIRE_INIT();
  const int off = memory().deviceOf(uintptr_t(src), bytes);
  if (off < 0 || (!dst && bytes))
    return CUDA_ERROR_INVALID_VALUE;
  countLink(off, -1, bytes);
  const void *from = reinterpret_cast<const void *>(uintptr_t(src));
  CUstream_st *stream = resolve(s);
  stream->enqueue([=] { std::memcpy(dst, from, bytes); });
  if (!memory().isPinned(dst, bytes))
    stream->synchronize(); // pageable: returns when the copy is done
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                              CUstream s) {
  SAGA_REQUIRE_INIT();
  const int onto = memory().deviceOf(uintptr_t(dst), bytes);
  const int off = memory().deviceOf(uintptr_t(src), bytes);
  if (onto < 0 || off < 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (onto != off && peerCopyFails())
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  countDeviceCopy(off, onto, bytes);
  void *to = reinterpret_cast<void *>(uintptr_t(dst));
  const void *from = reinterpret_cast<const void *>(uintptr_t(src));
  resolve(s)->enqueue([=] { std::memmove(to, from, bytes); });
  return CUDA_SUCCESS;
}

CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src,
                           CUcontext srcCtx, size_t bytes, CUstream s) {
  SAGA_REQUIRE_INIT();
  if (!isContext(dstCtx) || !isContext(srcCtx))
    return CUDA_ERROR_INVALID_CONTEXT;
  if (memory().deviceOf(uintptr_t(dst), bytes) != dstCtx->device ||
      memory().deviceOf(uintptr_t(src), bytes) != srcCtx->device)
    return CUDA_ERROR_INVALID_VALUE;
  return cuMemcpyDtoDAsync_v2(dst, src, bytes, s);
}

//===-------------------------------------------------------------------===//
// Peer access
//===-------------------------------------------------------------------===//

CUresult cuDeviceCanAccessPeer(int *can, CUdevice device, CUdevice peer) {
  SAGA_REQUIRE_INIT();
  if (!can)
    return CUDA_ERROR_INVALID_VALUE;
  if (!validDevice(device) || !validDevice(peer))
    return CUDA_ERROR_INVALID_DEVICE;
  *can = device != peer;
  return CUDA_SUCCESS;
}

CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
  SAGA_REQUIRE_INIT();
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (!current || !isContext(peer) || peer == current)
    return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard<std::mutex> lock(memory().mutex);
  if (!current->peers.insert(peer->device).second)
    return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
  return CUDA_SUCCESS;
}

CUresult cuCtxDisablePeerAccess(CUcontext peer) {
  SAGA_REQUIRE_INIT();
  if (!current || !isContext(peer))
    return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard<std::mutex> lock(memory().mutex);
  if (!current->peers.erase(peer->device))
    return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
  return CUDA_SUCCESS;
}

//===-------------------------------------------------------------------===//
// The stand-in's own entry points (tests find them with dlsym)
//===-------------------------------------------------------------------===//

/// Bytes copied from `from` to `to` (-1: the host) since the last reset.
unsigned long long saga_emu_link_bytes(int from, int to) {
  if (from < -1 || to < -1 || from >= kMaxDevices || to >= kMaxDevices)
    return 0;
  return linkBytes[from + 1][to + 1].load();
}

void saga_emu_reset_link_bytes() {
  for (auto &row : linkBytes)
    for (auto &cell : row)
      cell.store(0);
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
  if (CUresult r = cuMemcpyHtoDAsync_v2(dst, src, bytes, nullptr))
    return r;
  resolve(nullptr)->synchronize();
  return status();
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  if (CUresult r = cuMemcpyDtoHAsync_v2(dst, src, bytes, nullptr))
    return r;
  resolve(nullptr)->synchronize();
  return status();
}

CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t count,
                          CUstream s) {
  SAGA_REQUIRE_INIT();
  if (!memory().isDevice(uintptr_t(dst), count * 4))
    return CUDA_ERROR_INVALID_VALUE;
  auto *to = reinterpret_cast<unsigned int *>(uintptr_t(dst));
  resolve(s)->enqueue([=] { std::fill(to, to + count, value); });
  return CUDA_SUCCESS;
}

//===-------------------------------------------------------------------===//
// Streams and events
//===-------------------------------------------------------------------===//

CUresult cuStreamCreate(CUstream *s, unsigned int flags) {
  SAGA_REQUIRE_INIT();
  if (!s)
    return CUDA_ERROR_INVALID_VALUE;
  *s = new CUstream_st(!(flags & CU_STREAM_NON_BLOCKING));
  std::lock_guard<std::mutex> lock(streams().mutex);
  streams().all.insert(*s);
  return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(CUstream s) {
  SAGA_REQUIRE_INIT();
  {
    std::lock_guard<std::mutex> lock(streams().mutex);
    if (!streams().all.erase(s))
      return CUDA_ERROR_INVALID_HANDLE;
  }
  s->synchronize();
  delete s;
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream s) {
  SAGA_REQUIRE_INIT();
  resolve(s)->synchronize();
  return status();
}

CUresult cuStreamQuery(CUstream s) {
  SAGA_REQUIRE_INIT();
  if (CUresult r = status())
    return r;
  return (s ? s : streams().null)->idle() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult cuEventCreate(CUevent *e, unsigned int) {
  SAGA_REQUIRE_INIT();
  if (!e)
    return CUDA_ERROR_INVALID_VALUE;
  *e = new CUevent_st();
  return CUDA_SUCCESS;
}

CUresult cuEventDestroy_v2(CUevent e) {
  SAGA_REQUIRE_INIT();
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  e->waitFor(e->recorded); // the driver defers the release; so do we
  delete e;
  return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent e, CUstream s) {
  SAGA_REQUIRE_INIT();
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(e->mutex);
    generation = ++e->recorded;
  }
  resolve(s)->enqueue([e, generation] { e->complete(generation); });
  return CUDA_SUCCESS;
}

CUresult cuEventSynchronize(CUevent e) {
  SAGA_REQUIRE_INIT();
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(e->mutex);
    generation = e->recorded;
  }
  e->waitFor(generation);
  return status();
}

CUresult cuEventQuery(CUevent e) {
  SAGA_REQUIRE_INIT();
  std::lock_guard<std::mutex> lock(e->mutex);
  return e->completed >= e->recorded ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int) {
  SAGA_REQUIRE_INIT();
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(e->mutex);
    generation = e->recorded; // what was recorded when this was called
  }
  resolve(s)->enqueue([e, generation] { e->waitFor(generation); });
  return CUDA_SUCCESS;
}

CUresult cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end) {
  SAGA_REQUIRE_INIT();
  if (!ms || !start || !end)
    return CUDA_ERROR_INVALID_VALUE;
  std::unique_lock<std::mutex> first(start->mutex), second;
  if (end != start)
    second = std::unique_lock<std::mutex>(end->mutex);
  if (start->completed == 0 || end->completed == 0 ||
      start->completed < start->recorded || end->completed < end->recorded)
    return CUDA_ERROR_NOT_READY;
  *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
  return CUDA_SUCCESS;
}

//===-------------------------------------------------------------------===//
// Modules and launches
//===-------------------------------------------------------------------===//

CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  SAGA_REQUIRE_INIT();
  if (!current)
    return CUDA_ERROR_INVALID_CONTEXT;
  const char *text = static_cast<const char *>(image);
  if (!module || !text ||
      std::strncmp(text, kImageMagic, sizeof kImageMagic - 1) != 0) {
    std::fprintf(stderr, "saga stand-in CUDA driver: cuModuleLoadData takes "
                         "only images from the stand-in NVRTC (not a CUBIN "
                         "or PTX)\n");
    return CUDA_ERROR_INVALID_IMAGE;
  }
  std::string error;
  auto m = saga::emu::EmulatedModule::compile(text + sizeof kImageMagic - 1,
                                              error);
  if (!m) {
    std::fprintf(stderr, "saga stand-in CUDA driver: %s\n", error.c_str());
    return CUDA_ERROR_INVALID_IMAGE;
  }
  *module = new CUmod_st{std::move(m)};
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule module) {
  SAGA_REQUIRE_INIT();
  if (!module)
    return CUDA_ERROR_INVALID_HANDLE;
  cuCtxSynchronize(); // no kernel of it may still run
  delete module;
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *f, CUmodule module, const char *name) {
  SAGA_REQUIRE_INIT();
  if (!f || !module || !name)
    return CUDA_ERROR_INVALID_VALUE;
  saga::emu::Entry entry = module->module->lookup(name);
  const std::vector<size_t> *sizes = module->module->paramSizes(name);
  if (!entry || !sizes)
    return CUDA_ERROR_NOT_FOUND;
  // Functions live as long as their module (one per lookup; ASan found
  // them never freed).
  module->functions.push_back(
      std::make_unique<CUfunc_st>(CUfunc_st{name, entry, *sizes}));
  *f = module->functions.back().get();
  return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute, int) {
  SAGA_REQUIRE_INIT();
  return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy,
                        unsigned int gz, unsigned int bx, unsigned int by,
                        unsigned int bz, unsigned int shared, CUstream s,
                        void **params, void **extra) {
  SAGA_REQUIRE_INIT();
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  if (extra)
    return CUDA_ERROR_NOT_SUPPORTED;
  if (!gx || !gy || !gz || !bx || !by || !bz || size_t(bx) * by * bz > 1024 ||
      shared > (48u << 10))
    return CUDA_ERROR_INVALID_VALUE;
  if (!params && !f->sizes.empty())
    return CUDA_ERROR_INVALID_VALUE;
  // The arguments' values, captured now.
  auto blob = std::make_shared<std::vector<char>>();
  std::vector<size_t> offsets;
  for (size_t i = 0; i < f->sizes.size(); ++i) {
    size_t at = (blob->size() + 15) & ~size_t(15);
    offsets.push_back(at);
    blob->resize(at + f->sizes[i]);
    std::memcpy(blob->data() + at, params[i], f->sizes[i]);
  }
  saga::emu::LaunchConfig c;
  c.grid = {gx, gy, gz};
  c.block = {bx, by, bz};
  c.sharedBytes = shared;
  c.order = saga::emu::orderFromEnvironment();
  static std::atomic<uint64_t> launches{0};
  c.seed = 0x5a9a + launches.fetch_add(1);
  std::string name = f->name;
  saga::emu::Entry entry = f->entry;
  resolve(s)->enqueue([=] {
    if (status() != CUDA_SUCCESS)
      return; // a failed context runs nothing more
    std::vector<void *> pointers;
    for (size_t at : offsets)
      pointers.push_back(blob->data() + at);
    std::string err = saga::emu::launch(entry, pointers.data(), c);
    if (!err.empty())
      fail("kernel " + name + ": " + err);
  });
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char **text) {
  switch (error) {
#define SAGA_NAME(e)                                                           \
  case e:                                                                      \
    *text = #e;                                                                \
    return CUDA_SUCCESS;
    SAGA_NAME(CUDA_SUCCESS)
    SAGA_NAME(CUDA_ERROR_INVALID_VALUE)
    SAGA_NAME(CUDA_ERROR_OUT_OF_MEMORY)
    SAGA_NAME(CUDA_ERROR_NOT_INITIALIZED)
    SAGA_NAME(CUDA_ERROR_INVALID_DEVICE)
    SAGA_NAME(CUDA_ERROR_INVALID_IMAGE)
    SAGA_NAME(CUDA_ERROR_INVALID_CONTEXT)
    SAGA_NAME(CUDA_ERROR_INVALID_HANDLE)
    SAGA_NAME(CUDA_ERROR_NOT_FOUND)
    SAGA_NAME(CUDA_ERROR_NOT_READY)
    SAGA_NAME(CUDA_ERROR_LAUNCH_FAILED)
    SAGA_NAME(CUDA_ERROR_NOT_SUPPORTED)
    SAGA_NAME(CUDA_ERROR_ILLEGAL_ADDRESS)
    SAGA_NAME(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
    SAGA_NAME(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)
#undef SAGA_NAME
  default:
    *text = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  return cuGetErrorName(error, text);
}

} // extern "C"
