//===- BatchNorm.h - features standardised over a graph's vertices -*- C++ -*-===//
//
// saga.batch_norm and saga.batch_norm_grad on host rows ([V, w]): per
// feature j, the mean and the biased variance over the V rows, added in
// double in row order; y = (x - mean) / sqrt(var + kBatchNormEpsilon). The
// CUDA executor's kernels (cuda/RuntimeKernels.cpp: saga_rt_batch_norm*)
// follow the same order, so both devices give the same bits.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_BATCHNORM_H
#define SAGA_RUNTIME_EXEC_BATCHNORM_H

#include <cstdint>

namespace saga {

class ThreadPool;

/// PyTorch's BatchNorm1d default.
constexpr double kBatchNormEpsilon = 1e-5;

/// y = the standardised x (features in parallel on `pool`).
void batchNormRows(const float *x, int64_t rows, int64_t w, float *y,
                   ThreadPool &pool);

/// dx from x and dy (the gradient of batchNormRows at x).
void batchNormGradRows(const float *x, const float *dy, int64_t rows,
                       int64_t w, float *dx, ThreadPool &pool);

} // namespace saga

#endif // SAGA_RUNTIME_EXEC_BATCHNORM_H
