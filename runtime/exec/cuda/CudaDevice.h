//===- CudaDevice.h - one CUDA device: context, streams, pool ---*- C++ -*-===//
//
// The device the CUDA executor runs plans on, through the driver API
// (CudaApi.h): the device's primary context; a compute stream and a copy
// stream (uploads are staged through pinned host buffers, double-buffered,
// so that the copies run on their own stream while the compute stream
// works; the compute stream waits for them through events); a pool carved
// out of one allocation sized from the device's free memory; cuBLAS on the
// compute stream; modules compiled by NVRTC for the device's architecture.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_CUDA_CUDADEVICE_H
#define SAGA_RUNTIME_EXEC_CUDA_CUDADEVICE_H

#include "runtime/exec/cuda/CudaApi.h"
#include "runtime/memory/ArenaRanges.h"

#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace saga::cuda {

struct CudaStats {
  int64_t bytesUp = 0, bytesDown = 0; // host to device, device to host
  int64_t bytesFromPeers = 0;         // from other devices (copyFromPeer)
  int64_t launches = 0, gemms = 0;
};

/// A module's kernels, loaded on the device; unloaded when destroyed (or
/// before, by CudaDevice::unload), so it must not outlive its device.
class CudaModule {
public:
  CudaModule() = default;
  CudaModule(const CudaModule &) = delete;
  CudaModule &operator=(const CudaModule &) = delete;
  ~CudaModule();
  CUfunction function(const std::string &name) const {
    auto it = functions.find(name);
    return it == functions.end() ? nullptr : it->second;
  }

private:
  friend class CudaDevice;
  const DriverApi *api = nullptr;
  CUmodule module = nullptr;
  std::map<std::string, CUfunction> functions;
};

class CudaDevice {
public:
  struct Options {
    int ordinal = 0;
    /// The pool's share of the device's free memory at open, or a size in
    /// bytes (poolBytes > 0).
    double poolFraction = 0.85;
    int64_t poolBytes = 0;
    /// Bytes of each of the two pinned staging buffers.
    int64_t stagingBytes = 8 << 20;
  };
  /// Opens device `ordinal`. Errors say which part is missing: no driver,
  /// no device, no NVRTC, no cuBLAS.
  static llvm::Expected<std::unique_ptr<CudaDevice>> open(const Options &options);
  ~CudaDevice();

  /// "CUDA device 0: NVIDIA H100 (sm_90, 132 SMs)".
  std::string describe() const;
  int arch() const { return arch_; }
  int multiprocessors() const { return sms; }
  const DriverApi &driver() const { return *api; }
  const CudaStats &stats() const { return stats_; }

  /// Pool memory of `bytes` (an error naming `what`, the size, what is in
  /// use and the capacity when it does not fit); release gives it back.
  llvm::Expected<CUdeviceptr> allocate(int64_t bytes, const std::string &what);
  void release(CUdeviceptr p);
  int64_t poolUsed() const;
  int64_t poolCapacity() const { return poolBytes; }

  /// (Uploads and downloads are thread-safe: a transfer engine's thread
  /// may run them beside the thread that launches.)
  /// Host to device on the copy stream, through the pinned staging
  /// buffers; compute-stream work queued after this sees the data.
  llvm::Error upload(CUdeviceptr to, const void *from, int64_t bytes);
  /// Device to host after the compute stream's work so far; returns when
  /// the bytes are in `to`.
  llvm::Error download(void *to, CUdeviceptr from, int64_t bytes);
  /// Lets this device's copies reach `peer`'s memory over their direct
  /// link (cuCtxEnablePeerAccess; enabling it twice is not an error). An
  /// error when the driver says the two cannot reach each other.
  llvm::Error enablePeerAccess(const CudaDevice &peer);
  /// `bytes` at `from` on `peer` to `to` here, on this device's copy
  /// stream: after this device's compute stream's work so far (the target
  /// may still be read) and `peer`'s (which made or received the bytes);
  /// this compute stream's later work sees them, and `peer`'s later work
  /// (which may overwrite the source) waits for the copy. `what` names the
  /// copy in an error.
  llvm::Error copyFromPeer(CUdeviceptr to, CudaDevice &peer, CUdeviceptr from,
                           int64_t bytes, const std::string &what);
  int ordinal() const { return device; }
  /// `bytes` from `from` to `to`, both on this device, on the compute
  /// stream (after the kernels queued so far).
  llvm::Error copyWithin(CUdeviceptr to, CUdeviceptr from, int64_t bytes);
  /// `count` 32-bit words of `value` at `to`, on the compute stream.
  llvm::Error fill32(CUdeviceptr to, uint32_t value, int64_t count);

  /// CUDA source compiled by NVRTC for this device (CUBINs cached on disk)
  /// and loaded; `kernels` are looked up.
  llvm::Expected<std::unique_ptr<CudaModule>>
  load(const std::string &source, const std::vector<std::string> &kernels);
  void unload(CudaModule &module);

  /// A kernel on the compute stream; `params` as cuLaunchKernel takes them.
  llvm::Error launch(CUfunction f, unsigned grid, unsigned block,
                     unsigned sharedBytes, void **params,
                     const std::string &what);
  /// Row-major C[m, n] = op(A) op(B) (C += with `accumulate`), on the
  /// compute stream (cuBLAS). transA: A is [k, m] read transposed, else
  /// [m, k]; likewise B.
  llvm::Error gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                   CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
                   bool accumulate = false);
  /// Waits for the compute stream.
  llvm::Error synchronize();

private:
  CudaDevice() = default;
  /// Makes this device's context the calling thread's (every driver call
  /// names the current context's device; with several devices, and on a
  /// transfer thread, it may be another one or none).
  llvm::Error bind() const;
  const DriverApi *api = nullptr;
  const BlasApi *blas = nullptr;
  BlasApi::Handle handle = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream compute = nullptr, copy = nullptr;
  std::string name;
  int arch_ = 0, sms = 1;
  // The pool.
  CUdeviceptr poolBase = 0;
  int64_t poolBytes = 0;
  mutable std::mutex poolMutex;
  ArenaRanges ranges;
  std::map<CUdeviceptr, int64_t> taken; // base -> rounded size
  // Staging: two pinned buffers, each with the event of its last copy.
  void *staging[2] = {nullptr, nullptr};
  CUevent stagingDone[2] = {nullptr, nullptr};
  CUevent uploaded = nullptr, computed = nullptr;
  CUevent peerRead = nullptr; // a copy from this device, done
  int64_t stagingBytes = 0;
  int next = 0;
  // Uploads and downloads may come from a transfer thread beside compute.
  std::mutex transferMutex;
  CudaStats stats_;
};

} // namespace saga::cuda

#endif // SAGA_RUNTIME_EXEC_CUDA_CUDADEVICE_H
