//===- BatchNorm.cpp - features standardised over a graph's vertices -----===//

#include "runtime/exec/BatchNorm.h"

#include "runtime/exec/ThreadPool.h"

#include <cmath>

using namespace saga;

namespace {
/// Feature j's mean and 1 / sqrt(var + eps) over the rows, in double.
void statistics(const float *x, int64_t rows, int64_t w, int64_t j,
                double &mean, double &inv) {
  double s = 0;
  for (int64_t v = 0; v < rows; ++v)
    s += double(x[v * w + j]);
  mean = rows ? s / double(rows) : 0.0;
  double q = 0;
  for (int64_t v = 0; v < rows; ++v) {
    double d = double(x[v * w + j]) - mean;
    q += d * d;
  }
  double var = rows ? q / double(rows) : 0.0;
  inv = 1.0 / std::sqrt(var + kBatchNormEpsilon);
}
} // namespace

void saga::batchNormRows(const float *x, int64_t rows, int64_t w, float *y,
                         ThreadPool &pool) {
  pool.parallelFor(w, [&](int64_t j) {
    double mean, inv;
    statistics(x, rows, w, j, mean, inv);
    for (int64_t v = 0; v < rows; ++v)
      y[v * w + j] = float((double(x[v * w + j]) - mean) * inv);
  });
}

void saga::batchNormGradRows(const float *x, const float *dy, int64_t rows,
                             int64_t w, float *dx, ThreadPool &pool) {
  pool.parallelFor(w, [&](int64_t j) {
    double mean, inv;
    statistics(x, rows, w, j, mean, inv);
    double sdy = 0, sdyy = 0;
    for (int64_t v = 0; v < rows; ++v) {
      double g = double(dy[v * w + j]);
      sdy += g;
      sdyy += g * (double(x[v * w + j]) - mean) * inv;
    }
    double mdy = rows ? sdy / double(rows) : 0.0,
           mdyy = rows ? sdyy / double(rows) : 0.0;
    for (int64_t v = 0; v < rows; ++v) {
      double y = (double(x[v * w + j]) - mean) * inv;
      dx[v * w + j] = float((double(dy[v * w + j]) - mdy - y * mdyy) * inv);
    }
  });
}
