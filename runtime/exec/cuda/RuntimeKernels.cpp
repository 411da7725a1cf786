//===- RuntimeKernels.cpp - the CUDA executor's own kernels ---------------===//

#include "runtime/exec/cuda/RuntimeKernels.h"

using namespace saga::cuda;

namespace {

constexpr const char *kSource = R"cuda(// Saga's runtime kernels (runtime/exec/cuda/RuntimeKernels.cpp).
#if defined(__CUDACC_RTC__)
typedef int int32_t;
typedef long long int64_t;
#elif !defined(SAGA_EMULATED)
#include <stdint.h>
#endif
#ifndef SAGA_EMULATED
#define SAGA_DYNAMIC_SHARED(name) extern __shared__ __align__(16) char name[]
#endif

// i over [0, n), grid-strided.
#define SAGA_FOR(i, n)                                                         \
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);    \
       i += (int64_t)gridDim.x * blockDim.x)

extern "C" __global__ void saga_rt_fill(float *x, int64_t n, float v) {
  SAGA_FOR(i, n) x[i] = v;
}

// Rows [begin, end) of x (x is row 0's address, as for every row range).
extern "C" __global__ void saga_rt_iota(int32_t *x, int64_t begin,
                                        int64_t end) {
  SAGA_FOR(i, end - begin) x[begin + i] = (int32_t)(begin + i);
}

extern "C" __global__ void saga_rt_in_degree(const int64_t *offsets,
                                             float *degree, int64_t begin,
                                             int64_t end) {
  SAGA_FOR(i, end - begin) {
    int64_t v = begin + i;
    degree[v] = (float)(offsets[v + 1] - offsets[v]);
  }
}

extern "C" __global__ void saga_rt_neg(const float *a, float *r, int64_t n) {
  SAGA_FOR(i, n) r[i] = -a[i];
}

// r = a op b (0 add, 1 sub, 2 mul, 3 div); an operand of one element is
// broadcast.
extern "C" __global__ void saga_rt_binary(int64_t op, const float *a,
                                          int64_t na, const float *b,
                                          int64_t nb, float *r, int64_t n) {
  SAGA_FOR(i, n) {
    float u = a[na == 1 ? 0 : i], w = b[nb == 1 ? 0 : i];
    r[i] = op == 0   ? __fadd_rn(u, w)
           : op == 1 ? __fsub_rn(u, w)
           : op == 2 ? __fmul_rn(u, w)
                     : __fdiv_rn(u, w);
  }
}

// partial[c * w + j] += the sum of x[r, j] over the rows r of block c in
// [begin, end) (in order, in double): a block split between two row ranges
// gets both parts, in order.
extern "C" __global__ void saga_rt_block_sums(const float *x, int64_t begin,
                                              int64_t end, int64_t w,
                                              int64_t block, double *partial) {
  int64_t first = begin / block, blocks = (end - 1) / block - first + 1;
  SAGA_FOR(i, blocks * w) {
    int64_t c = first + i / w, j = i % w, start = c * block,
            stop = (c + 1) * block;
    if (start < begin)
      start = begin;
    if (stop > end)
      stop = end;
    double s = 0;
    for (int64_t r = start; r < stop; ++r)
      s += (double)x[r * w + j];
    partial[c * w + j] += s;
  }
}

// out[j] = the blocks' sums of column j, added in block order.
extern "C" __global__ void saga_rt_finish_sums(const double *partial,
                                               int64_t blocks, int64_t w,
                                               float *out) {
  SAGA_FOR(j, w) {
    double s = 0;
    for (int64_t c = 0; c < blocks; ++c)
      s += partial[c * w + j];
    out[j] = (float)s;
  }
}

// out[e] = the slices' partial products summed in slice order (float), as
// the CPU's weight gradient adds them.
extern "C" __global__ void saga_rt_sum_slices(const float *partial,
                                              int64_t slices, int64_t n,
                                              float *out) {
  SAGA_FOR(e, n) {
    float s = 0;
    for (int64_t t = 0; t < slices; ++t)
      s += partial[t * n + e];
    out[e] = s;
  }
}

// out[0] = the sum of the block's threads' s, halves added pairwise in a
// fixed order (part: blockDim.x doubles of shared memory).
static __device__ void saga_rt_block_total(double s, double *part,
                                           double *out) {
  part[threadIdx.x] = s;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      part[threadIdx.x] += part[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    out[0] = part[0];
}

// One block: out[0] = sum of x (square: of x^2), in a fixed order.
extern "C" __global__ void saga_rt_reduce(const float *xf, const double *xd,
                                          int64_t n, int64_t square,
                                          double *out) {
  SAGA_DYNAMIC_SHARED(shared);
  double s = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    double v = xf ? (double)xf[i] : xd[i];
    s += square ? v * v : v;
  }
  saga_rt_block_total(s, (double *)shared, out);
}

// saga_rt_reduce over a stream of parts: state[t] (one block, as many
// threads as saga_rt_reduce's, zeroed before the first part) continues
// thread t's sum with this part's x, the entries [first, first + n) of the
// whole; saga_rt_reduce_finish then adds the threads' sums as
// saga_rt_reduce does. Parts given in order give saga_rt_reduce's bits:
// each thread adds its entries (t, t + blockDim, ...) in the same order.
extern "C" __global__ void saga_rt_reduce_part(const float *xf,
                                               const double *xd, int64_t n,
                                               int64_t first, int64_t square,
                                               double *state) {
  const int64_t threads = blockDim.x;
  double s = state[threadIdx.x];
  for (int64_t i = ((int64_t)threadIdx.x - first % threads + threads) % threads;
       i < n; i += threads) {
    double v = xf ? (double)xf[i] : xd[i];
    s += square ? v * v : v;
  }
  state[threadIdx.x] = s;
}

extern "C" __global__ void saga_rt_reduce_finish(const double *state,
                                                 double *out) {
  SAGA_DYNAMIC_SHARED(shared);
  saga_rt_block_total(state[threadIdx.x], (double *)shared, out);
}

// out[0] = scale * s[0] / (count ? count[0] : 1), 0 when the count is 0.
extern "C" __global__ void saga_rt_scalar(const double *s, const double *count,
                                          double scale, float *out) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    double c = count ? count[0] : 1.0;
    out[0] = c > 0 ? (float)(scale * s[0] / c) : 0.0f;
  }
}

// A row's maximum and its sum of exp(x - maximum).
static __device__ void saga_rt_softmax_stats(const float *row, int64_t c,
                                             float &m, float &sum) {
  m = row[0];
  for (int64_t j = 1; j < c; ++j)
    m = row[j] > m ? row[j] : m;
  sum = 0;
  for (int64_t j = 0; j < c; ++j)
    sum += expf(row[j] - m);
}

// valid[i] = 1 when loss row i (vertex rows[i], or first + i) has a label
// in [0, c), else 0.
extern "C" __global__ void saga_rt_label_valid(const int32_t *labels,
                                               int64_t c, const int32_t *rows,
                                               int64_t n, int64_t first,
                                               double *valid) {
  SAGA_FOR(i, n) {
    int32_t label = labels[rows ? rows[i] : first + i];
    valid[i] = label >= 0 && label < c ? 1.0 : 0.0;
  }
}

// The cross-entropy terms of the loss rows whose vertex is in [lo, hi):
// row i is vertex rows[i] (or first + i); a label outside [0, c) counts
// nothing.
extern "C" __global__ void saga_rt_cross_entropy(
    const float *logits, int64_t c, const int32_t *labels,
    const int32_t *rows, int64_t n, int64_t first, int64_t lo, int64_t hi,
    double *terms) {
  SAGA_FOR(i, n) {
    int64_t v = rows ? rows[i] : first + i;
    if (v < lo || v >= hi)
      continue;
    int32_t label = labels[v];
    if (label < 0 || label >= c) {
      terms[i] = 0;
      continue;
    }
    const float *row = logits + v * c;
    float m, sum;
    saga_rt_softmax_stats(row, c, m, sum);
    terms[i] = (double)m + log((double)sum) - (double)row[label];
  }
}

// Graph readouts (runtime/exec/Readout.h, the same order of arithmetic):
// one thread per (graph, element) of graphs [0, graphs), bounds[g] ..
// bounds[g + 1] its rows; kind 0 sum, 1 mean, 2 max, 3 min (ReduceKind).
extern "C" __global__ void saga_rt_readout(const float *x, int64_t w,
                                           const int64_t *bounds,
                                           int64_t graphs, int64_t kind,
                                           float *r) {
  SAGA_FOR(i, graphs * w) {
    int64_t g = i / w, j = i % w, lo = bounds[g], hi = bounds[g + 1];
    if (lo == hi)
      continue;
    float value;
    if (kind <= 1) {
      double s = 0;
      for (int64_t v = lo; v < hi; ++v)
        s += (double)x[v * w + j];
      value = kind == 0 ? (float)s : (float)(s / (double)(hi - lo));
    } else {
      value = x[lo * w + j];
      for (int64_t v = lo + 1; v < hi; ++v) {
        float e = x[v * w + j];
        if (kind == 2 ? e > value : e < value)
          value = e;
      }
    }
    for (int64_t v = lo; v < hi; ++v)
      r[v * w + j] = value;
  }
}

// A max or min readout's gradient: the sum of dy over a graph's rows, on
// its first row whose x equals the readout y; 0 on the others.
extern "C" __global__ void saga_rt_readout_grad(const float *x,
                                                const float *y,
                                                const float *dy, int64_t w,
                                                const int64_t *bounds,
                                                int64_t graphs, float *dx) {
  SAGA_FOR(i, graphs * w) {
    int64_t g = i / w, j = i % w, lo = bounds[g], hi = bounds[g + 1];
    double s = 0;
    int64_t at = -1;
    for (int64_t v = lo; v < hi; ++v) {
      s += (double)dy[v * w + j];
      if (at < 0 && x[v * w + j] == y[v * w + j])
        at = v;
      dx[v * w + j] = 0.0f;
    }
    if (at >= 0)
      dx[at * w + j] = (float)s;
  }
}

// Batch norm (runtime/exec/BatchNorm.h, the same order of arithmetic): one
// thread per feature j of w, its mean and biased variance over the rows.
static __device__ void saga_rt_bn_stats(const float *x, int64_t rows,
                                            int64_t w, int64_t j,
                                            double &mean, double &inv) {
  double s = 0;
  for (int64_t v = 0; v < rows; ++v)
    s += (double)x[v * w + j];
  mean = rows ? s / (double)rows : 0.0;
  double q = 0;
  for (int64_t v = 0; v < rows; ++v) {
    double d = (double)x[v * w + j] - mean;
    q += d * d;
  }
  double var = rows ? q / (double)rows : 0.0;
  inv = 1.0 / sqrt(var + 1e-5);
}

extern "C" __global__ void saga_rt_batch_norm(const float *x, int64_t rows,
                                              int64_t w, float *y) {
  SAGA_FOR(j, w) {
    double mean, inv;
    saga_rt_bn_stats(x, rows, w, j, mean, inv);
    for (int64_t v = 0; v < rows; ++v)
      y[v * w + j] = (float)(((double)x[v * w + j] - mean) * inv);
  }
}

extern "C" __global__ void saga_rt_batch_norm_grad(const float *x,
                                                   const float *dy,
                                                   int64_t rows, int64_t w,
                                                   float *dx) {
  SAGA_FOR(j, w) {
    double mean, inv;
    saga_rt_bn_stats(x, rows, w, j, mean, inv);
    double sdy = 0, sdyy = 0;
    for (int64_t v = 0; v < rows; ++v) {
      double g = (double)dy[v * w + j];
      sdy += g;
      sdyy += g * ((double)x[v * w + j] - mean) * inv;
    }
    double mdy = rows ? sdy / (double)rows : 0.0,
           mdyy = rows ? sdyy / (double)rows : 0.0;
    for (int64_t v = 0; v < rows; ++v) {
      double y = ((double)x[v * w + j] - mean) * inv;
      dx[v * w + j] = (float)(((double)dy[v * w + j] - mdy - y * mdyy) * inv);
    }
  }
}

// Link prediction (runtime/exec/PairLoss.h, the same arithmetic): one
// thread per pair; its score the dot product of its ends' rows in double,
// then its loss term (mode 0) or g times the term's slope over n (mode 1).
extern "C" __global__ void saga_rt_pair_terms(const float *h, int64_t w,
                                              const int32_t *src,
                                              const int32_t *dst,
                                              const float *label, int64_t n,
                                              int64_t mode, const float *g,
                                              double *out) {
  SAGA_FOR(i, n) {
    const float *a = h + (int64_t)src[i] * w, *b = h + (int64_t)dst[i] * w;
    double s = 0;
    for (int64_t k = 0; k < w; ++k)
      s += (double)a[k] * (double)b[k];
    double y = (double)label[i];
    out[i] = mode == 0 ? fmax(s, 0.0) - y * s + log1p(exp(-fabs(s)))
                       : (double)g[0] * (1.0 / (1.0 + exp(-s)) - y) /
                             (double)n;
  }
}

// One thread per (row, element): the sum over the row's incidences, in
// pair order, of coef[pair] * h[other end].
extern "C" __global__ void saga_rt_pair_grad(const float *h, int64_t w,
                                             const int64_t *offsets,
                                             const int32_t *pair,
                                             const int32_t *other,
                                             const double *coef, int64_t rows,
                                             float *dh) {
  SAGA_FOR(i, rows * w) {
    int64_t v = i / w, j = i % w;
    double acc = 0;
    for (int64_t k = offsets[v]; k < offsets[v + 1]; ++k)
      acc += coef[pair[k]] * (double)h[(int64_t)other[k] * w + j];
    dh[i] = (float)acc;
  }
}

// d[v] += g / count * (softmax(logits[v]) - onehot(label)) over the loss
// rows whose vertex is in [lo, hi) (d zeroed before).
extern "C" __global__ void saga_rt_cross_entropy_grad(
    const float *logits, int64_t c, const int32_t *labels,
    const int32_t *rows, int64_t n, int64_t first, int64_t lo, int64_t hi,
    const float *g, const double *count, float *d) {
  SAGA_FOR(i, n) {
    if (count[0] <= 0)
      return;
    int64_t v = rows ? rows[i] : first + i;
    if (v < lo || v >= hi)
      continue;
    int32_t label = labels[v];
    if (label < 0 || label >= c)
      continue;
    const float *row = logits + v * c;
    float m, sum;
    saga_rt_softmax_stats(row, c, m, sum);
    double scale = (double)g[0] / count[0], inv = 1.0 / (double)sum;
    // A mask that repeats a row (a weighted loss) has several threads add
    // into it: atomically, and the same bits in any order, as every place
    // of a row adds the same term.
    for (int64_t j = 0; j < c; ++j) {
      double p = (double)expf(row[j] - m) * inv;
      atomicAdd(&d[v * c + j], (float)(scale * (p - (j == label ? 1.0 : 0.0))));
    }
  }
}
)cuda";

} // namespace

const std::string &saga::cuda::runtimeKernelSource() {
  static const std::string s = kSource;
  return s;
}

const std::vector<std::string> &saga::cuda::runtimeKernelNames() {
  static const std::vector<std::string> names{
      "saga_rt_fill",        "saga_rt_iota",          "saga_rt_in_degree",
      "saga_rt_neg",         "saga_rt_binary",        "saga_rt_block_sums",
      "saga_rt_finish_sums", "saga_rt_reduce",        "saga_rt_scalar",
      "saga_rt_reduce_part", "saga_rt_reduce_finish",
      "saga_rt_label_valid", "saga_rt_sum_slices",
      "saga_rt_cross_entropy", "saga_rt_cross_entropy_grad",
      "saga_rt_readout",     "saga_rt_readout_grad",
      "saga_rt_pair_terms",  "saga_rt_pair_grad",
      "saga_rt_batch_norm",  "saga_rt_batch_norm_grad"};
  return names;
}
