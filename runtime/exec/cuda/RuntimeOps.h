//===- RuntimeOps.h - the runtime kernels as calls --------------*- C++ -*-===//
//
// The CUDA executors' own kernels (RuntimeKernels.h), each a launch on the
// device's compute stream. Row ranges [begin, end) address their buffers
// by row 0 (a piece of an interval is passed shifted back by its first
// row, as the generated kernels take it).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_CUDA_RUNTIMEOPS_H
#define SAGA_RUNTIME_EXEC_CUDA_RUNTIMEOPS_H

#include "runtime/exec/cuda/CudaDevice.h"

#include <initializer_list>

namespace saga::cuda {

class RuntimeOps {
public:
  RuntimeOps(CudaDevice &device, const CudaModule &module)
      : device(device), module(module) {}

  llvm::Error fill(CUdeviceptr x, int64_t n, float value);
  llvm::Error iota(CUdeviceptr x, int64_t begin, int64_t end);
  llvm::Error inDegree(CUdeviceptr offsets, CUdeviceptr out, int64_t begin,
                       int64_t end);
  llvm::Error neg(CUdeviceptr a, CUdeviceptr r, int64_t n);
  /// r = a op b (0 add, 1 sub, 2 mul, 3 div), one-element operands
  /// broadcast.
  llvm::Error binary(int64_t op, CUdeviceptr a, int64_t na, CUdeviceptr b,
                     int64_t nb, CUdeviceptr r, int64_t n);
  /// Adds the per-`block`-row block sums (double) of the [rows, w] rows in
  /// [begin, end) to partial[block index * w + column] (zeroed first).
  llvm::Error blockSums(CUdeviceptr x, int64_t begin, int64_t end, int64_t w,
                        int64_t block, CUdeviceptr partial);
  /// out[j] = sum over the blocks of partial, in order (float).
  llvm::Error finishSums(CUdeviceptr partial, int64_t blocks, int64_t w,
                         CUdeviceptr out);
  /// out[e] = sum over t < slices of partial[t * n + e], in order (float).
  llvm::Error sumSlices(CUdeviceptr partial, int64_t slices, int64_t n,
                        CUdeviceptr out);
  /// A weight gradient dW[k, n] += x^T dy over rows [begin, end), as the
  /// CPU forms it: per slice of the rows (Intervals.h's weightGradSlice
  /// bounds), each slice's product into its slot of `partial`; slices
  /// outside the rows are left alone. sumSlices then adds the slots.
  llvm::Error weightGradSlices(CUdeviceptr x, CUdeviceptr dy, int64_t k,
                               int64_t n, int64_t rows, int64_t begin,
                               int64_t end, CUdeviceptr partial);
  /// The number of slices for `rows` rows.
  static int64_t slicesFor(int64_t rows);
  /// out (double) = the sum of n floats (xf) or doubles (xd), squared or not.
  llvm::Error reduce(CUdeviceptr xf, CUdeviceptr xd, int64_t n, bool square,
                     CUdeviceptr out);
  /// out (float) = scale * s / count (count 0: no division; 0 when it is 0).
  llvm::Error scalar(CUdeviceptr s, CUdeviceptr count, double scale,
                     CUdeviceptr out);
  /// reduce over a stream of parts: x holds entries [first, first + n) of
  /// the whole; `state` (kReduceThreads doubles, zeroed before the first
  /// part) carries the threads' sums. Parts in order, then reduceFinish,
  /// give reduce's bits for the whole.
  llvm::Error reducePart(CUdeviceptr xf, CUdeviceptr xd, int64_t n,
                         int64_t first, bool square, CUdeviceptr state);
  llvm::Error reduceFinish(CUdeviceptr state, CUdeviceptr out);
  /// The loss kernels take loss rows [0, n): row i is vertex rows[i], or
  /// first + i without rows (every vertex a loss row).
  llvm::Error labelValid(CUdeviceptr labels, int64_t c, CUdeviceptr rows,
                         int64_t n, int64_t first, CUdeviceptr valid);
  llvm::Error crossEntropy(CUdeviceptr logits, int64_t c, CUdeviceptr labels,
                           CUdeviceptr rows, int64_t n, int64_t first,
                           int64_t lo, int64_t hi, CUdeviceptr terms);
  llvm::Error crossEntropyGrad(CUdeviceptr logits, int64_t c,
                               CUdeviceptr labels, CUdeviceptr rows, int64_t n,
                               int64_t first, int64_t lo, int64_t hi,
                               CUdeviceptr g, CUdeviceptr count, CUdeviceptr d);

  /// Graph readouts over the rows of `graphs` graphs (bounds: graphs + 1
  /// row offsets on the device); kind as ReduceKind (0 sum .. 3 min).
  llvm::Error readout(CUdeviceptr x, int64_t w, CUdeviceptr bounds,
                      int64_t graphs, int64_t kind, CUdeviceptr r);
  llvm::Error readoutGrad(CUdeviceptr x, CUdeviceptr y, CUdeviceptr dy,
                          int64_t w, CUdeviceptr bounds, int64_t graphs,
                          CUdeviceptr dx);

  /// Batch norm over the `rows` rows of [rows, w] values (BatchNorm.h).
  llvm::Error batchNorm(CUdeviceptr x, int64_t rows, int64_t w, CUdeviceptr y);
  llvm::Error batchNormGrad(CUdeviceptr x, CUdeviceptr dy, int64_t rows,
                            int64_t w, CUdeviceptr dx);
  /// Link prediction (runtime/exec/PairLoss.h, the same arithmetic): per
  /// pair i of n, out[i] = its loss term (mode 0) or g[0] times the term's
  /// slope divided by n (mode 1), in double; then each row's gradient from
  /// the pairs' incidences (offsets: rows + 1 on the device).
  llvm::Error pairTerms(CUdeviceptr h, int64_t w, CUdeviceptr src,
                        CUdeviceptr dst, CUdeviceptr label, int64_t n,
                        int64_t mode, CUdeviceptr g, CUdeviceptr out);
  llvm::Error pairGrad(CUdeviceptr h, int64_t w, CUdeviceptr offsets,
                       CUdeviceptr pair, CUdeviceptr other, CUdeviceptr coef,
                       int64_t rows, CUdeviceptr dh);

private:
  llvm::Error run(const char *name, int64_t n, std::initializer_list<void *> params,
                  unsigned block = 256, unsigned shared = 0);
  CudaDevice &device;
  const CudaModule &module;
};

} // namespace saga::cuda

#endif // SAGA_RUNTIME_EXEC_CUDA_RUNTIMEOPS_H
