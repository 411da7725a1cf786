//===- PairLoss.cpp - link prediction's pair scores and loss --------------===//

#include "runtime/exec/PairLoss.h"

#include "runtime/exec/ThreadPool.h"

#include <algorithm>

using namespace saga;

namespace {
/// Tasks of about `per` items over [0, n).
template <typename F>
void inBlocks(ThreadPool &pool, int64_t n, int64_t per, const F &fn) {
  int64_t blocks = (n + per - 1) / per;
  pool.parallelFor(blocks, [&](int64_t b) {
    fn(b * per, std::min(n, (b + 1) * per));
  });
}
} // namespace

std::vector<float> saga::pairScores(const float *h, int64_t w,
                                    const std::vector<int32_t> &src,
                                    const std::vector<int32_t> &dst,
                                    ThreadPool &pool) {
  std::vector<float> scores(src.size());
  inBlocks(pool, int64_t(src.size()), 4096, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      scores[size_t(i)] = float(pairDot(h, w, src[size_t(i)], dst[size_t(i)]));
  });
  return scores;
}

double saga::pairBceLoss(const float *h, int64_t w, const PairSet &pairs,
                         ThreadPool &pool) {
  int64_t n = pairs.size();
  if (n == 0)
    return 0;
  std::vector<double> terms(static_cast<size_t>(n));
  inBlocks(pool, n, 4096, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      terms[size_t(i)] = pairBceTerm(
          pairDot(h, w, pairs.src[size_t(i)], pairs.dst[size_t(i)]),
          double(pairs.label[size_t(i)]));
  });
  double sum = 0;
  for (double t : terms)
    sum += t;
  return sum / double(n);
}

void saga::pairBceGrad(const float *h, int64_t w, const PairSet &pairs,
                       float g, float *dh, ThreadPool &pool) {
  int64_t n = pairs.size(), rows = pairs.numVertices;
  std::vector<double> coef(static_cast<size_t>(n));
  inBlocks(pool, n, 4096, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      coef[size_t(i)] =
          double(g) *
          pairBceSlope(pairDot(h, w, pairs.src[size_t(i)], pairs.dst[size_t(i)]),
                       double(pairs.label[size_t(i)])) /
          double(n);
  });
  inBlocks(pool, rows, 256, [&](int64_t lo, int64_t hi) {
    std::vector<double> acc(static_cast<size_t>(w));
    for (int64_t v = lo; v < hi; ++v) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t k = pairs.incidenceOffsets[size_t(v)];
           k < pairs.incidenceOffsets[size_t(v) + 1]; ++k) {
        double c = coef[size_t(pairs.incidencePair[size_t(k)])];
        const float *o = h + int64_t(pairs.incidenceOther[size_t(k)]) * w;
        for (int64_t j = 0; j < w; ++j)
          acc[size_t(j)] += c * double(o[j]);
      }
      for (int64_t j = 0; j < w; ++j)
        dh[v * w + j] = float(acc[size_t(j)]);
    }
  });
}
