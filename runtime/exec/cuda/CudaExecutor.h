//===- CudaExecutor.h - runs execution plans on a CUDA device ---*- C++ -*-===//
//
// The CUDA executor walks the same plan as the CPU executor (Executor.h),
// with every value of a run in device memory: generated kernels (printed by
// codegen/cuda, compiled by NVRTC) launched a warp per row over all rows at
// once, GEMMs through cuBLAS, and the rest (losses, sums over rows,
// model-level arithmetic, degrees) as the runtime's own kernels
// (RuntimeKernels.h). The graph's CSRs and the graph inputs are uploaded
// once and stay on the device; parameters are uploaded each run (the
// optimiser runs on the host) and the plan's results come back.
//
// Under a memory budget, executeChunked runs the chunked level's plan.
// ForwardOptions::sourceIntervals is ignored (one pass per propagation).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_CUDA_CUDAEXECUTOR_H
#define SAGA_RUNTIME_EXEC_CUDA_CUDAEXECUTOR_H

#include "runtime/exec/ChunkedExecutor.h"
#include "runtime/exec/Executor.h"
#include "runtime/exec/cuda/CudaDevice.h"

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <memory>
#include <string>

namespace saga {

class CudaBackend {
public:
  static llvm::Expected<std::unique_ptr<CudaBackend>>
  create(const cuda::CudaDevice::Options &options = {});
  ~CudaBackend();

  std::string describe() const { return device->describe(); }
  const cuda::CudaStats &stats() const { return device->stats(); }
  cuda::CudaDevice &cudaDevice() { return *device; }

  /// Compiles the kernels of a plan module for the device (NVRTC, cached).
  llvm::Error addPlan(mlir::ModuleOp plan);
  /// The device copies of the graph, or of one input, are stale.
  void invalidateGraph();
  void invalidateInput(const std::string &name);

  /// Runs `model` (of a module given to addPlan) as Executor.h's execute
  /// does, with the same results to rounding.
  llvm::Expected<std::vector<Tensor>> execute(ModelOp model,
                                              const ExecutionContext &ctx);

  /// Runs `model` under a memory budget (the chunked level, as
  /// ChunkedExecutor.h's executeChunked): the device tier is the GPU's
  /// memory with the budget's capacity, the next tier host RAM or spill
  /// files; loads and stores run on the transfer engine's thread as copies
  /// on the copy stream; kernels, GEMMs and reductions run per row interval
  /// and 2-D chunk on the compute stream.
  llvm::Expected<std::vector<Tensor>>
  executeChunked(ModelOp model, const ExecutionContext &ctx,
                 const ChunkedOptions &options, ChunkedStats *stats);

  /// The same run over this device and `others` (device 0 is this one):
  /// each destination interval's steps on one device, reductions and
  /// model-level steps on device 0, each device planning its own memory
  /// under the budget (CudaDevicesExecutor.cpp). The results are the
  /// one-device run's. `others` empty: executeChunked above.
  llvm::Expected<std::vector<Tensor>>
  executeChunked(ModelOp model, const ExecutionContext &ctx,
                 const ChunkedOptions &options, ChunkedStats *stats,
                 const std::vector<CudaBackend *> &others);

  struct Buffer {
    cuda::CUdeviceptr ptr = 0;
    int64_t bytes = 0;
  };
  struct PlanKernels;

private:
  CudaBackend() = default;
  friend class CudaRun;
  friend class CudaChunkedRun;
  llvm::Expected<Buffer> resident(const std::string &key, const void *data,
                                  int64_t bytes);

  std::unique_ptr<cuda::CudaDevice> device;
  std::unique_ptr<cuda::CudaModule> runtime;
  std::map<mlir::Operation *, std::unique_ptr<PlanKernels>> plans;
  /// Graph arrays and inputs on the device, by key, with the host data they
  /// were copied from.
  struct ResidentCopy {
    Buffer buffer;
    const void *from = nullptr;
  };
  std::map<std::string, ResidentCopy> residents;
};

} // namespace saga

#endif // SAGA_RUNTIME_EXEC_CUDA_CUDAEXECUTOR_H
