//===- BatchNorm.cpp - features standardised over a graph's vertices -----===//
//
// Each pass walks the rows in order over a block of columns (row-major
// reads, one double accumulator per column): per column the same order of
// arithmetic as the CUDA kernels' one thread per column.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/BatchNorm.h"

#include "runtime/exec/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace saga;

namespace {
constexpr int64_t kColumns = 16; // columns per task

/// fn(j0, j1) over blocks of columns of [0, w), in parallel.
template <typename F>
void columnBlocks(ThreadPool &pool, int64_t w, const F &fn) {
  pool.parallelFor((w + kColumns - 1) / kColumns, [&](int64_t b) {
    fn(b * kColumns, std::min(w, (b + 1) * kColumns));
  });
}

/// Columns [j0, j1)'s means and 1 / sqrt(var + eps) over the rows.
void statistics(const float *x, int64_t rows, int64_t w, int64_t j0,
                int64_t j1, std::vector<double> &mean,
                std::vector<double> &inv) {
  const int64_t n = j1 - j0;
  std::vector<double> s(size_t(n), 0.0), q(size_t(n), 0.0);
  for (int64_t v = 0; v < rows; ++v)
    for (int64_t j = 0; j < n; ++j)
      s[size_t(j)] += double(x[v * w + j0 + j]);
  mean.resize(size_t(n));
  for (int64_t j = 0; j < n; ++j)
    mean[size_t(j)] = rows ? s[size_t(j)] / double(rows) : 0.0;
  for (int64_t v = 0; v < rows; ++v)
    for (int64_t j = 0; j < n; ++j) {
      double d = double(x[v * w + j0 + j]) - mean[size_t(j)];
      q[size_t(j)] += d * d;
    }
  inv.resize(size_t(n));
  for (int64_t j = 0; j < n; ++j)
    inv[size_t(j)] = 1.0 / std::sqrt((rows ? q[size_t(j)] / double(rows)
                                           : 0.0) +
                                     kBatchNormEpsilon);
}
} // namespace

void saga::batchNormRows(const float *x, int64_t rows, int64_t w, float *y,
                         ThreadPool &pool) {
  columnBlocks(pool, w, [&](int64_t j0, int64_t j1) {
    std::vector<double> mean, inv;
    statistics(x, rows, w, j0, j1, mean, inv);
    for (int64_t v = 0; v < rows; ++v)
      for (int64_t j = j0; j < j1; ++j)
        y[v * w + j] = float((double(x[v * w + j]) - mean[size_t(j - j0)]) *
                             inv[size_t(j - j0)]);
  });
}

void saga::batchNormGradRows(const float *x, const float *dy, int64_t rows,
                             int64_t w, float *dx, ThreadPool &pool) {
  columnBlocks(pool, w, [&](int64_t j0, int64_t j1) {
    std::vector<double> mean, inv;
    statistics(x, rows, w, j0, j1, mean, inv);
    const int64_t n = j1 - j0;
    std::vector<double> sdy(size_t(n), 0.0), sdyy(size_t(n), 0.0);
    for (int64_t v = 0; v < rows; ++v)
      for (int64_t j = 0; j < n; ++j) {
        double g = double(dy[v * w + j0 + j]);
        sdy[size_t(j)] += g;
        sdyy[size_t(j)] +=
            g * (double(x[v * w + j0 + j]) - mean[size_t(j)]) * inv[size_t(j)];
      }
    for (int64_t j = 0; j < n; ++j) {
      sdy[size_t(j)] = rows ? sdy[size_t(j)] / double(rows) : 0.0;
      sdyy[size_t(j)] = rows ? sdyy[size_t(j)] / double(rows) : 0.0;
    }
    for (int64_t v = 0; v < rows; ++v)
      for (int64_t j = 0; j < n; ++j) {
        double y = (double(x[v * w + j0 + j]) - mean[size_t(j)]) * inv[size_t(j)];
        dx[v * w + j0 + j] = float(
            (double(dy[v * w + j0 + j]) - sdy[size_t(j)] - y * sdyy[size_t(j)]) *
            inv[size_t(j)]);
      }
  });
}
