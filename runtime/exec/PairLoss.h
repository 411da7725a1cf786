//===- PairLoss.h - link prediction's pair scores and loss ------*- C++ -*-===//
//
// saga.pair_bce and saga.pair_bce_grad on host rows, and the scores a
// trainer ranks. A pair (u, v)'s score is s = sum_k h[u][k] * h[v][k], the
// products added in double in element order; its loss term the binary
// cross-entropy with logits in double, max(s, 0) - y s + log1p(exp(-|s|)).
// The loss is the terms' mean (added in pair order); the gradient gives row
// u the sum, over the pairs it is an end of (PairSet's incidences, in pair
// order), of c * h[other end] with c = g (sigmoid(s) - y) / n, in double.
// The CUDA executor's kernels (cuda/RuntimeKernels.cpp: saga_rt_pair_*)
// follow the same order for the scores and the gradient.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_PAIRLOSS_H
#define SAGA_RUNTIME_EXEC_PAIRLOSS_H

#include "runtime/graph/PairSet.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace saga {

class ThreadPool;

/// sum(h[u] * h[v]) over [w]-wide rows, in double.
inline double pairDot(const float *h, int64_t w, int32_t u, int32_t v) {
  const float *a = h + int64_t(u) * w, *b = h + int64_t(v) * w;
  double s = 0;
  for (int64_t k = 0; k < w; ++k)
    s += double(a[k]) * double(b[k]);
  return s;
}

/// Binary cross-entropy with logits, stable for any s.
inline double pairBceTerm(double s, double y) {
  return std::max(s, 0.0) - y * s + std::log1p(std::exp(-std::fabs(s)));
}

/// d term / d s.
inline double pairBceSlope(double s, double y) {
  return 1.0 / (1.0 + std::exp(-s)) - y;
}

/// The score of each pair (src[i], dst[i]), rounded to float (what a
/// trainer ranks held-out pairs by).
std::vector<float> pairScores(const float *h, int64_t w,
                              const std::vector<int32_t> &src,
                              const std::vector<int32_t> &dst,
                              ThreadPool &pool);

/// The mean loss term over the pairs (0 without pairs).
double pairBceLoss(const float *h, int64_t w, const PairSet &pairs,
                   ThreadPool &pool);

/// dh = g * d(mean loss)/dh ([V, w] rows, every row written).
void pairBceGrad(const float *h, int64_t w, const PairSet &pairs, float g,
                 float *dh, ThreadPool &pool);

} // namespace saga

#endif // SAGA_RUNTIME_EXEC_PAIRLOSS_H
