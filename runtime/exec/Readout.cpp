//===- Readout.cpp - graph readouts over the rows of a batch of graphs ----===//

#include "runtime/exec/Readout.h"

#include "runtime/exec/ThreadPool.h"

#include <algorithm>

using namespace saga;

void saga::readoutRows(ReduceKind kind, const float *x, int64_t w,
                       const std::vector<int64_t> &bounds, float *r,
                       ThreadPool &pool) {
  int64_t graphs = int64_t(bounds.size()) - 1;
  pool.parallelFor(graphs, [&](int64_t g) {
    int64_t lo = bounds[g], hi = bounds[g + 1];
    if (lo == hi)
      return;
    std::vector<float> value(static_cast<size_t>(w));
    if (kind == ReduceKind::sum || kind == ReduceKind::mean) {
      std::vector<double> sum(static_cast<size_t>(w), 0.0);
      for (int64_t v = lo; v < hi; ++v)
        for (int64_t j = 0; j < w; ++j)
          sum[j] += double(x[v * w + j]);
      for (int64_t j = 0; j < w; ++j)
        value[j] = kind == ReduceKind::sum ? float(sum[j])
                                           : float(sum[j] / double(hi - lo));
    } else {
      bool max = kind == ReduceKind::max;
      std::copy(x + lo * w, x + lo * w + w, value.begin());
      for (int64_t v = lo + 1; v < hi; ++v)
        for (int64_t j = 0; j < w; ++j) {
          float e = x[v * w + j];
          if (max ? e > value[j] : e < value[j])
            value[j] = e;
        }
    }
    for (int64_t v = lo; v < hi; ++v)
      std::copy(value.begin(), value.end(), r + v * w);
  });
}

void saga::readoutGradRows(const float *x, const float *y, const float *dy,
                           int64_t w, const std::vector<int64_t> &bounds,
                           float *dx, ThreadPool &pool) {
  int64_t graphs = int64_t(bounds.size()) - 1;
  pool.parallelFor(graphs, [&](int64_t g) {
    int64_t lo = bounds[g], hi = bounds[g + 1];
    std::fill(dx + lo * w, dx + hi * w, 0.0f);
    for (int64_t j = 0; j < w; ++j) {
      double sum = 0;
      int64_t at = -1;
      for (int64_t v = lo; v < hi; ++v) {
        sum += double(dy[v * w + j]);
        if (at < 0 && x[v * w + j] == y[v * w + j])
          at = v;
      }
      if (at >= 0)
        dx[at * w + j] = float(sum);
    }
  });
}
