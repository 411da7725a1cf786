//===- CudaDevice.cpp - one CUDA device: context, streams, pool -----------===//

#include "runtime/exec/cuda/CudaDevice.h"

#include "codegen/cuda/Nvrtc.h"

#include <algorithm>
#include <cstring>

using namespace saga::cuda;

namespace {
constexpr int64_t kAlign = 256; // what cudaMalloc guarantees
int64_t alignUp(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
} // namespace

llvm::Expected<std::unique_ptr<CudaDevice>>
CudaDevice::open(const Options &options) {
  std::string why;
  const DriverApi *api = DriverApi::load(why);
  if (!api)
    return llvm::createStringError(why);
  std::unique_ptr<CudaDevice> d(new CudaDevice());
  d->api = api;
  auto check = [&](CUresult r, const char *what) {
    return api->check(r, std::string("CUDA ") + what);
  };
  if (auto e = check(api->init(0), "cuInit"))
    return std::move(e);
  int count = 0;
  if (auto e = check(api->deviceCount(&count), "cuDeviceGetCount"))
    return std::move(e);
  if (options.ordinal >= count)
    return llvm::createStringError(
        "CUDA device " + std::to_string(options.ordinal) +
        " does not exist: the driver (" + api->path + ") reports " +
        std::to_string(count) + " device(s)");
  if (auto e = check(api->deviceGet(&d->device, options.ordinal), "cuDeviceGet"))
    return std::move(e);
  char name[256] = {};
  int major = 0, minor = 0;
  if (auto e = check(api->deviceName(name, sizeof name, d->device),
                     "cuDeviceGetName"))
    return std::move(e);
  api->deviceAttribute(&major, kAttrCapabilityMajor, d->device);
  api->deviceAttribute(&minor, kAttrCapabilityMinor, d->device);
  api->deviceAttribute(&d->sms, kAttrMultiprocessors, d->device);
  d->sms = std::max(d->sms, 1);
  d->name = name;
  d->arch_ = major * 10 + minor;
  // The compiler and the BLAS come first: a driver without them is an
  // installation to fix, and says so before any device memory is taken.
  auto nvrtc = Nvrtc::load();
  if (!nvrtc)
    return llvm::createStringError(
        "a CUDA driver and device were found (" + d->name + "), but " +
        llvm::toString(nvrtc.takeError()));
  auto blas = BlasApi::load();
  if (!blas)
    return llvm::createStringError("a CUDA driver and device were found (" +
                                   d->name + "), but " +
                                   llvm::toString(blas.takeError()));
  d->blas = *blas;
  if (auto e = check(api->primaryRetain(&d->context, d->device),
                     "cuDevicePrimaryCtxRetain"))
    return std::move(e);
  if (auto e = check(api->setCurrent(d->context), "cuCtxSetCurrent"))
    return std::move(e);
  if (auto e = check(api->streamCreate(&d->compute, kStreamNonBlocking),
                     "cuStreamCreate"))
    return std::move(e);
  if (auto e = check(api->streamCreate(&d->copy, kStreamNonBlocking),
                     "cuStreamCreate"))
    return std::move(e);
  for (CUevent *e : {&d->stagingDone[0], &d->stagingDone[1], &d->uploaded,
                     &d->computed, &d->peerRead})
    if (auto err = check(api->eventCreate(e, kEventDefault), "cuEventCreate"))
      return std::move(err);
  d->stagingBytes = std::max<int64_t>(options.stagingBytes, 4096);
  for (void *&s : d->staging)
    if (auto e = check(api->hostAlloc(&s, size_t(d->stagingBytes)),
                       "cuMemAllocHost (pinned staging buffers)"))
      return std::move(e);
  if (d->blas->create(&d->handle) != 0)
    return llvm::createStringError("cublasCreate failed on " + d->name);
  d->blas->setStream(d->handle, d->compute);
  // Plain FP32 (no TF32): results as the CPU backend's, to rounding.
  d->blas->setMathMode(d->handle, BlasApi::kDefaultMath);

  size_t freeBytes = 0, totalBytes = 0;
  if (auto e = check(api->memInfo(&freeBytes, &totalBytes), "cuMemGetInfo"))
    return std::move(e);
  int64_t want = options.poolBytes > 0
                     ? options.poolBytes
                     : int64_t(double(freeBytes) * options.poolFraction);
  want = alignUp(std::max<int64_t>(want, kAlign)) & ~int64_t(kAlign - 1);
  CUresult r = api->memAlloc(&d->poolBase, size_t(want));
  if (r != 0)
    return api->check(r, "allocating the device pool (" +
                             std::to_string(want >> 20) + " MiB of " +
                             std::to_string(freeBytes >> 20) +
                             " MiB free) on " + d->name);
  d->poolBytes = want;
  d->ranges.reset(want);
  return d;
}

CudaDevice::~CudaDevice() {
  if (!api)
    return;
  if (compute)
    api->streamSync(compute);
  if (copy)
    api->streamSync(copy);
  if (handle)
    blas->destroy(handle);
  for (void *s : staging)
    if (s)
      api->hostFree(s);
  llvm::consumeError(bind()); // (nothing to do about a failure here)
  for (CUevent e : {stagingDone[0], stagingDone[1], uploaded, computed,
                    peerRead})
    if (e)
      api->eventDestroy(e);
  if (poolBase)
    api->memFree(poolBase);
  for (CUstream s : {compute, copy})
    if (s)
      api->streamDestroy(s);
  if (context)
    api->primaryRelease(device);
}

std::string CudaDevice::describe() const {
  return "CUDA device " + std::to_string(device) + ": " + name + " (sm_" +
         std::to_string(arch_) + ", " + std::to_string(sms) + " SMs, " +
         std::to_string(poolBytes >> 20) + " MiB pool)";
}

llvm::Expected<CUdeviceptr> CudaDevice::allocate(int64_t bytes,
                                                 const std::string &what) {
  int64_t rounded = alignUp(std::max<int64_t>(bytes, 1));
  std::lock_guard<std::mutex> lock(poolMutex);
  int64_t offset = ranges.take(rounded);
  if (offset < 0)
    return llvm::createStringError(
        "out of device memory on " + name + ": " + what + " needs " +
        std::to_string(bytes) + " bytes; " + std::to_string(ranges.used()) +
        " of the pool's " + std::to_string(poolBytes) +
        " are in use (largest free range " +
        std::to_string(ranges.largestFree()) + ")");
  CUdeviceptr p = poolBase + CUdeviceptr(offset);
  taken[p] = rounded;
  return p;
}

void CudaDevice::release(CUdeviceptr p) {
  std::lock_guard<std::mutex> lock(poolMutex);
  auto it = taken.find(p);
  if (it == taken.end())
    return;
  // Stream order makes this safe: work queued later on the compute stream
  // runs after every kernel that used the block.
  ranges.give(int64_t(p - poolBase), it->second);
  taken.erase(it);
}

int64_t CudaDevice::poolUsed() const {
  std::lock_guard<std::mutex> lock(poolMutex);
  return ranges.used();
}

llvm::Error CudaDevice::bind() const {
  return api->check(api->setCurrent(context), "cuCtxSetCurrent on " + name);
}

llvm::Error CudaDevice::enablePeerAccess(const CudaDevice &peer) {
  int can = 0;
  if (auto e = api->check(api->canAccessPeer(&can, device, peer.device),
                          "cuDeviceCanAccessPeer"))
    return e;
  if (!can)
    return llvm::createStringError(
        "CUDA device " + std::to_string(device) + " cannot reach device " +
        std::to_string(peer.device) + "'s memory directly (no peer link)");
  if (auto e = bind())
    return e;
  CUresult r = api->enablePeer(peer.context, 0);
  if (r == kErrorPeerEnabled)
    return llvm::Error::success();
  return api->check(r, "cuCtxEnablePeerAccess from device " +
                           std::to_string(device) + " to device " +
                           std::to_string(peer.device));
}

llvm::Error CudaDevice::copyFromPeer(CUdeviceptr to, CudaDevice &peer,
                                     CUdeviceptr from, int64_t bytes,
                                     const std::string &what) {
  if (&peer == this)
    return llvm::createStringError("copyFromPeer: " + what +
                                   " names this device as its own peer");
  // Both devices' transfer locks, in address order (no lock-order cycle).
  std::scoped_lock lock(transferMutex, peer.transferMutex);
  if (auto e = peer.bind())
    return e;
  if (auto e = api->check(api->eventRecord(peer.computed, peer.compute),
                          "cuEventRecord"))
    return e;
  if (auto e = bind())
    return e;
  auto where = [&] {
    return " (" + what + ": " + std::to_string(bytes) + " bytes from device " +
           std::to_string(peer.device) + " to device " +
           std::to_string(device) + ")";
  };
  if (auto e = api->check(api->eventRecord(computed, compute), "cuEventRecord"))
    return e;
  if (auto e = api->check(api->streamWait(copy, computed, 0),
                          "cuStreamWaitEvent"))
    return e;
  if (auto e = api->check(api->streamWait(copy, peer.computed, 0),
                          "cuStreamWaitEvent on the peer's work" + where()))
    return e;
  if (auto e = api->check(api->copyPeer(to, context, from, peer.context,
                                        size_t(bytes), copy),
                          "cuMemcpyPeerAsync" + where()))
    return e;
  stats_.bytesFromPeers += bytes;
  if (auto e = api->check(api->eventRecord(uploaded, copy), "cuEventRecord"))
    return e;
  if (auto e = api->check(api->streamWait(compute, uploaded, 0),
                          "cuStreamWaitEvent"))
    return e;
  if (auto e = api->check(api->eventRecord(peerRead, copy), "cuEventRecord"))
    return e;
  if (auto e = peer.bind())
    return e;
  return api->check(api->streamWait(peer.compute, peerRead, 0),
                    "cuStreamWaitEvent");
}

llvm::Error CudaDevice::copyWithin(CUdeviceptr to, CUdeviceptr from,
                                   int64_t bytes) {
  if (bytes == 0)
    return llvm::Error::success();
  if (auto e = bind())
    return e;
  return api->check(api->copyOnDevice(to, from, size_t(bytes), compute),
                    "cuMemcpyDtoDAsync on " + name);
}

llvm::Error CudaDevice::upload(CUdeviceptr to, const void *from,
                               int64_t bytes) {
  std::lock_guard<std::mutex> lock(transferMutex);
  if (auto e = bind())
    return e;
  // The target may be pool memory the compute stream's queued kernels still
  // read (released, then reallocated): the copies wait for them.
  if (auto e = api->check(api->eventRecord(computed, compute), "cuEventRecord"))
    return e;
  if (auto e = api->check(api->streamWait(copy, computed, 0),
                          "cuStreamWaitEvent"))
    return e;
  const char *src = static_cast<const char *>(from);
  for (int64_t done = 0; done < bytes;) {
    int64_t piece = std::min(stagingBytes, bytes - done);
    // The buffer's previous copy must have left it before it is refilled.
    if (auto e = api->check(api->eventSync(stagingDone[next]),
                            "waiting for a staging buffer"))
      return e;
    std::memcpy(staging[next], src + done, size_t(piece));
    if (auto e = api->check(api->copyToDevice(to + CUdeviceptr(done),
                                              staging[next], size_t(piece),
                                              copy),
                            "cuMemcpyHtoDAsync"))
      return e;
    if (auto e = api->check(api->eventRecord(stagingDone[next], copy),
                            "cuEventRecord"))
      return e;
    next ^= 1;
    done += piece;
  }
  stats_.bytesUp += bytes;
  if (auto e = api->check(api->eventRecord(uploaded, copy), "cuEventRecord"))
    return e;
  return api->check(api->streamWait(compute, uploaded, 0), "cuStreamWaitEvent");
}

llvm::Error CudaDevice::download(void *to, CUdeviceptr from, int64_t bytes) {
  std::lock_guard<std::mutex> lock(transferMutex);
  if (auto e = bind())
    return e;
  // The copy stream waits for the compute stream's work so far.
  if (auto e = api->check(api->eventRecord(computed, compute), "cuEventRecord"))
    return e;
  if (auto e = api->check(api->streamWait(copy, computed, 0),
                          "cuStreamWaitEvent"))
    return e;
  char *dst = static_cast<char *>(to);
  for (int64_t done = 0; done < bytes;) {
    int64_t piece = std::min(stagingBytes, bytes - done);
    if (auto e = api->check(api->eventSync(stagingDone[next]),
                            "waiting for a staging buffer"))
      return e;
    if (auto e = api->check(api->copyToHost(staging[next],
                                            from + CUdeviceptr(done),
                                            size_t(piece), copy),
                            "cuMemcpyDtoHAsync"))
      return e;
    if (auto e = api->check(api->eventRecord(stagingDone[next], copy),
                            "cuEventRecord"))
      return e;
    if (auto e = api->check(api->eventSync(stagingDone[next]),
                            "cuMemcpyDtoHAsync"))
      return e;
    std::memcpy(dst + done, staging[next], size_t(piece));
    next ^= 1;
    done += piece;
  }
  stats_.bytesDown += bytes;
  return llvm::Error::success();
}

llvm::Error CudaDevice::fill32(CUdeviceptr to, uint32_t value, int64_t count) {
  if (count == 0)
    return llvm::Error::success();
  if (auto e = bind())
    return e;
  return api->check(api->set32(to, value, size_t(count), compute),
                    "cuMemsetD32Async");
}

llvm::Expected<std::unique_ptr<CudaModule>>
CudaDevice::load(const std::string &source,
                 const std::vector<std::string> &kernels) {
  auto nvrtc = Nvrtc::load();
  if (!nvrtc)
    return nvrtc.takeError();
  auto compiled = (*nvrtc)->compile(source, arch_, /*cubin=*/true);
  if (!compiled)
    return compiled.takeError();
  auto m = std::make_unique<CudaModule>();
  if (auto e = bind())
    return std::move(e);
  if (auto e = api->check(api->moduleLoad(&m->module, compiled->cubin.data()),
                          "cuModuleLoadData on " + name))
    return std::move(e);
  m->api = api;
  for (const std::string &k : kernels) {
    CUfunction f = nullptr;
    if (auto e = api->check(api->moduleFunction(&f, m->module, k.c_str()),
                            "cuModuleGetFunction " + k))
      return std::move(e);
    m->functions[k] = f;
  }
  return m;
}

CudaModule::~CudaModule() {
  if (module && api)
    api->moduleUnload(module);
}

void CudaDevice::unload(CudaModule &module) {
  if (module.module)
    api->moduleUnload(module.module);
  module.module = nullptr;
  module.functions.clear();
}

llvm::Error CudaDevice::launch(CUfunction f, unsigned grid, unsigned block,
                               unsigned sharedBytes, void **params,
                               const std::string &what) {
  ++stats_.launches;
  if (auto e = bind())
    return e;
  return api->check(api->launch(f, grid, 1, 1, block, 1, 1, sharedBytes,
                                compute, params, nullptr),
                    "launching " + what + " on " + name);
}

llvm::Error CudaDevice::gemm(bool transA, bool transB, int64_t m, int64_t n,
                             int64_t k, CUdeviceptr a, CUdeviceptr b,
                             CUdeviceptr c, bool accumulate) {
  if (m == 0 || n == 0)
    return llvm::Error::success();
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX)
    return llvm::createStringError("a GEMM of " + std::to_string(m) + " x " +
                                   std::to_string(n) + " x " +
                                   std::to_string(k) +
                                   " exceeds cuBLAS's 32-bit sizes");
  ++stats_.gemms;
  if (auto e = bind())
    return e;
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: B's
  // and A's buffers, read as column-major, are already the transposes.
  const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  int lda = int(transA ? m : k), ldb = int(transB ? k : n);
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<float *>(p); };
  int r = blas->sgemm(handle, transB ? BlasApi::kOpT : BlasApi::kOpN,
                      transA ? BlasApi::kOpT : BlasApi::kOpN, int(n), int(m),
                      int(k), &one, ptr(b), ldb, ptr(a), lda, &beta, ptr(c),
                      int(n));
  if (r != 0)
    return llvm::createStringError("cublasSgemm failed (status " +
                                   std::to_string(r) + ") on " + name);
  return llvm::Error::success();
}

llvm::Error CudaDevice::synchronize() {
  if (auto e = bind())
    return e;
  return api->check(api->streamSync(compute),
                    "running kernels on " + name);
}
