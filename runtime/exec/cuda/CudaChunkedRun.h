//===- CudaChunkedRun.h - the chunked walk's CUDA steps ---------*- C++ -*-===//
//
// Private to runtime/exec/cuda: what a chunked run on CUDA devices is made
// of, for the one-device run (CudaChunkedExecutor.cpp) and the run over
// several (CudaDevicesExecutor.cpp): the device tier on a GPU (CudaTier),
// the next tier seen from it (StagedTier) and the walk's CUDA steps
// (CudaChunkedRun).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_CUDA_CUDACHUNKEDRUN_H
#define SAGA_RUNTIME_EXEC_CUDA_CUDACHUNKEDRUN_H

#include "runtime/exec/ChunkedWalker.h"
#include "runtime/exec/cuda/CudaExecutor.h"
#include "runtime/exec/cuda/RuntimeOps.h"

#include "llvm/ADT/DenseMap.h"

#include <mutex>

namespace saga {
namespace cuda {

/// The device tier on the GPU: pool memory with the budget's capacity.
/// Its buffers hold device addresses.
class CudaTier final : public DeviceTier {
public:
  CudaTier(CudaDevice &device, int64_t capacity)
      : device(device), capacity_(capacity) {}
  llvm::Expected<DeviceBuffer> allocate(int64_t bytes,
                                        const std::string &what) override {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (used + bytes > capacity_)
        return llvm::createStringError(
            "device tier: " + what + " needs " + std::to_string(bytes) +
            " bytes; " + std::to_string(used) + " of " +
            std::to_string(capacity_) + " are in use");
      used += bytes;
      peak_ = std::max(peak_, used);
    }
    auto p = device.allocate(bytes, what);
    if (!p) {
      std::lock_guard<std::mutex> lock(mutex);
      used -= bytes;
      return p.takeError();
    }
    return DeviceBuffer{reinterpret_cast<void *>(uintptr_t(*p)), bytes};
  }
  bool fits(int64_t bytes) const override {
    std::lock_guard<std::mutex> lock(mutex);
    return used + bytes <= capacity_;
  }
  void release(DeviceBuffer &buffer) override {
    if (!buffer.data)
      return;
    device.release(CUdeviceptr(uintptr_t(buffer.data)));
    std::lock_guard<std::mutex> lock(mutex);
    used -= buffer.bytes;
    buffer = DeviceBuffer();
  }
  int64_t capacity() const override { return capacity_; }
  int64_t peak() const override {
    std::lock_guard<std::mutex> lock(mutex);
    return peak_;
  }

private:
  CudaDevice &device;
  int64_t capacity_;
  mutable std::mutex mutex;
  int64_t used = 0, peak_ = 0;
};

/// The next tier seen from device memory: a load reads the tier into host
/// memory and uploads it (pinned staging, copy stream); a store downloads
/// first. Used on the transfer engine's thread only.
class StagedTier final : public NextTier {
public:
  StagedTier(NextTier &base, CudaDevice &device)
      : base(base), device(device) {}
  llvm::Error write(int key, const void *data, int64_t bytes) override {
    host.resize(size_t(bytes));
    if (auto e = device.download(host.data(), CUdeviceptr(uintptr_t(data)),
                                 bytes))
      return e;
    return base.write(key, host.data(), bytes);
  }
  llvm::Error read(int key, void *data, int64_t bytes) override {
    host.resize(size_t(bytes));
    if (auto e = base.read(key, host.data(), bytes))
      return e;
    return device.upload(CUdeviceptr(uintptr_t(data)), host.data(), bytes);
  }
  /// The rows from the tier into host memory, then up to their places,
  /// a run of consecutive rows per copy.
  llvm::Expected<int64_t> readRows(int key, void *data, int64_t bytes,
                                   const RowSelection &rows) override {
    host.resize(size_t(bytes));
    auto read = base.readRows(key, host.data(), bytes, rows);
    if (!read)
      return read.takeError();
    const std::vector<int32_t> &r = *rows.rows;
    const int64_t rb = rows.rowBytes;
    for (size_t k = 0; k < r.size();) {
      size_t end = k + 1;
      while (end < r.size() && r[end] == r[end - 1] + 1)
        ++end;
      int64_t at = int64_t(r[k]) * rb;
      if (auto e = device.upload(CUdeviceptr(uintptr_t(data) + uint64_t(at)),
                                 host.data() + at, int64_t(end - k) * rb))
        return std::move(e);
      k = end;
    }
    return std::max(*read, rows.bytes());
  }
  int64_t bytesHeld() const override { return base.bytesHeld(); }
  std::string describe() const override { return base.describe(); }

private:
  NextTier &base;
  CudaDevice &device;
  std::vector<char> host;
};

} // namespace cuda


/// CUDA's steps of a chunked run: pieces in device memory, the generated
/// kernels and the runtime kernels (RuntimeOps) on the compute stream,
/// GEMMs by cuBLAS.
class CudaChunkedRun : public ChunkedWalker {
public:
  CudaChunkedRun(CudaBackend &b, CudaBackend::PlanKernels &plan, ModelOp model,
                 const ExecutionContext &ctx, const PlanMemory &pm)
      : ChunkedWalker(model, ctx, pm), b(b), dev(*b.device), plan(plan),
        ops(*b.device, *b.runtime) {}
  ~CudaChunkedRun() {
    (void)llvm::errorToBool(dev.synchronize());
    for (cuda::CUdeviceptr p : owned)
      dev.release(p);
  }

  /// The chunks' CSR uploaded so far (offsets, edges' other ends, numbers
  /// and keys).
  int64_t csrBytes() const { return csrBytesUploaded; }
  int64_t csrEdges() const { return csrEdgesUploaded; }
  /// Device memory held for the run outside the plan's pieces.
  int64_t outsideBytes() const { return scratchBytes; }

  /// A run on several devices: the model-level values (outside the plan)
  /// each walker made last. A walker that reads one another made more
  /// recently copies it from that device first (over their peer link).
  struct SmallValues {
    struct Made {
      CudaChunkedRun *by = nullptr;
      cuda::CUdeviceptr at = 0;
      int64_t bytes = 0;
      uint64_t version = 0;
    };
    std::mutex mutex; // the walkers run on their devices' threads
    llvm::DenseMap<mlir::Value, Made> latest;
    uint64_t versions = 0;
  };
  void shareSmallValues(SmallValues *shared) { smallShared = shared; }
  /// After step k: the model-level values its op wrote are this walker's.
  void noteSmallWrites(int k);
  cuda::CudaDevice &device() { return dev; }

private:
  /// Row 0 of `v` as seen from interval j on the device (a piece's base
  /// shifted back by its first row), or the whole value.
  llvm::Expected<cuda::CUdeviceptr> addr(mlir::Value v, int64_t j, Resident &r);
  llvm::Expected<cuda::CUdeviceptr> scratch(int64_t bytes, const std::string &what);
  llvm::Expected<cuda::CUdeviceptr> graphOffsets(bool reversed);
  llvm::Error lossRows();
  llvm::Error launch(LaunchOp op, int64_t i, int64_t j, Resident &r) override;
  llvm::Error gemm(mlir::Value x, mlir::Value w, mlir::Value y, bool transpose, int64_t j,
                   Resident &r) override;
  llvm::Error degrees(mlir::Value result, int64_t j, Resident &r) override;
  llvm::Error vertexIds(mlir::Value result, int64_t j, Resident &r) override;
  llvm::Error sumRows(SumRowsOp op, int64_t j, bool first, bool last,
                      Resident &r) override;
  llvm::Error weightGradient(LinearGradWeightOp op, int64_t j, bool first,
                             bool last, Resident &r) override;
  llvm::Error crossEntropy(CrossEntropyOp op, int64_t j, bool first, bool last,
                           Resident &r) override {
    return loss(op, j, first, last, r);
  }
  llvm::Error crossEntropyGrad(CrossEntropyGradOp op, int64_t j, bool first,
                               Resident &r) override {
    return loss(op, j, first, j < 0 || j + 1 == parts, r);
  }
  /// A cross-entropy loss or its gradient over interval j.
  llvm::Error loss(mlir::Operation *op, int64_t j, bool first, bool last,
                   Resident &r);
  llvm::Error l2(mlir::Operation *op, int64_t n, int64_t j, Resident &r) override;
  llvm::Error neg(mlir::Operation *op, int64_t n, int64_t j, Resident &r) override;
  llvm::Error binary(mlir::Operation *op, int64_t na, int64_t nb, int64_t n,
                     int64_t j, Resident &r) override;
  llvm::Error read(mlir::Value v, int64_t j, Resident &r, int64_t offset,
                   int64_t bytes, void *to) override;
  llvm::Error synchronize() override { return dev.synchronize(); }
  std::string unsupported() const override {
    return "run under a memory budget on CUDA";
  }

  CudaBackend &b;
  cuda::CudaDevice &dev;
  CudaBackend::PlanKernels &plan;
  cuda::RuntimeOps ops;
  llvm::DenseMap<mlir::Value, cuda::CUdeviceptr> small; // values outside the plan
  std::vector<cuda::CUdeviceptr> owned;           // freed at the end of the run
  // Reductions over rows, accumulated interval by interval.
  llvm::DenseMap<mlir::Operation *, cuda::CUdeviceptr> partials, lossTerms, lossCounts;
  cuda::CUdeviceptr rows = 0; // the loss mask (0: every row)
  int64_t numRows = -1;
  /// With ascending loss rows, interval j's are [lossBegin[j],
  /// lossBegin[j + 1]) and a loss keeps only one interval's terms at a
  /// time (lossWindow of them), summed part by part (reducePart) into
  /// the bits of one sum over all; otherwise every term (lossWindow =
  /// numRows), summed at the last interval.
  bool lossAscending = false;
  std::vector<int64_t> lossBegin;
  int64_t lossWindow = 1;
  int64_t csrBytesUploaded = 0, csrEdgesUploaded = 0;
  int64_t scratchBytes = 0; // scratch(), held to the end of the run
  SmallValues *smallShared = nullptr;
  llvm::DenseMap<mlir::Value, uint64_t> smallVersion; // of this walker's copies
};


} // namespace saga

#endif // SAGA_RUNTIME_EXEC_CUDA_CUDACHUNKEDRUN_H
