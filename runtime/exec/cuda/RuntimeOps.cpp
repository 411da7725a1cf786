//===- RuntimeOps.cpp - the runtime kernels as calls ----------------------===//

#include "runtime/exec/cuda/RuntimeOps.h"

#include "runtime/exec/cuda/RuntimeKernels.h"
#include "support/Intervals.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace saga::cuda;

llvm::Error RuntimeOps::run(const char *name, int64_t n,
                            std::initializer_list<void *> params,
                            unsigned block, unsigned shared) {
  CUfunction f = module.function(name);
  if (!f)
    return llvm::createStringError(std::string("runtime kernel ") + name +
                                   " is not loaded");
  // Grid-strided: a few blocks per SM are enough; one block for the
  // fixed-order reductions (shared memory).
  int64_t blocks = (std::max<int64_t>(n, 1) + block - 1) / block;
  unsigned grid = shared ? 1
                         : unsigned(std::clamp<int64_t>(
                               blocks, 1, int64_t(device.multiprocessors()) * 8));
  std::vector<void *> p(params);
  return device.launch(f, grid, block, shared, p.data(), name);
}

llvm::Error RuntimeOps::fill(CUdeviceptr x, int64_t n, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return device.fill32(x, bits, n);
}

llvm::Error RuntimeOps::iota(CUdeviceptr x, int64_t begin, int64_t end) {
  return run("saga_rt_iota", end - begin, {&x, &begin, &end});
}

llvm::Error RuntimeOps::inDegree(CUdeviceptr offsets, CUdeviceptr out,
                                 int64_t begin, int64_t end) {
  return run("saga_rt_in_degree", end - begin, {&offsets, &out, &begin, &end});
}

llvm::Error RuntimeOps::neg(CUdeviceptr a, CUdeviceptr r, int64_t n) {
  return run("saga_rt_neg", n, {&a, &r, &n});
}

llvm::Error RuntimeOps::binary(int64_t op, CUdeviceptr a, int64_t na,
                               CUdeviceptr b, int64_t nb, CUdeviceptr r,
                               int64_t n) {
  return run("saga_rt_binary", n, {&op, &a, &na, &b, &nb, &r, &n});
}

llvm::Error RuntimeOps::blockSums(CUdeviceptr x, int64_t begin, int64_t end,
                                  int64_t w, int64_t block,
                                  CUdeviceptr partial) {
  if (end <= begin)
    return llvm::Error::success();
  int64_t blocks = (end - 1) / block - begin / block + 1;
  return run("saga_rt_block_sums", blocks * w,
             {&x, &begin, &end, &w, &block, &partial});
}

llvm::Error RuntimeOps::finishSums(CUdeviceptr partial, int64_t blocks,
                                   int64_t w, CUdeviceptr out) {
  return run("saga_rt_finish_sums", w, {&partial, &blocks, &w, &out});
}

llvm::Error RuntimeOps::sumSlices(CUdeviceptr partial, int64_t slices,
                                  int64_t n, CUdeviceptr out) {
  return run("saga_rt_sum_slices", n, {&partial, &slices, &n, &out});
}

int64_t RuntimeOps::slicesFor(int64_t rows) {
  int64_t blocks = (rows + saga::kRowsPerTask - 1) / saga::kRowsPerTask;
  return std::max<int64_t>(std::min(blocks, saga::kWeightGradSlices), 1);
}

llvm::Error RuntimeOps::weightGradSlices(CUdeviceptr x, CUdeviceptr dy,
                                         int64_t k, int64_t n, int64_t rows,
                                         int64_t begin, int64_t end,
                                         CUdeviceptr partial) {
  // The CPU's slices: `count` runs of whole 256-row blocks.
  int64_t blocks = (rows + saga::kRowsPerTask - 1) / saga::kRowsPerTask;
  int64_t count = slicesFor(rows);
  auto bound = [&](int64_t t) {
    return std::min(rows, (t * blocks / count) * saga::kRowsPerTask);
  };
  for (int64_t t = 0; t < count; ++t) {
    int64_t lo = bound(t), hi = t + 1 == count ? rows : bound(t + 1);
    if (lo < begin || hi > end)
      continue;
    CUdeviceptr slot = partial + CUdeviceptr(t * k * n * 4);
    if (hi == lo) {
      if (auto e = device.fill32(slot, 0, k * n))
        return e;
      continue;
    }
    if (auto e = device.gemm(true, false, k, n, hi - lo,
                             x + CUdeviceptr(lo * k * 4),
                             dy + CUdeviceptr(lo * n * 4), slot))
      return e;
  }
  return llvm::Error::success();
}

llvm::Error RuntimeOps::reduce(CUdeviceptr xf, CUdeviceptr xd, int64_t n,
                               bool square, CUdeviceptr out) {
  int64_t sq = square;
  return run("saga_rt_reduce", 1, {&xf, &xd, &n, &sq, &out}, kReduceThreads,
             kReduceThreads * 8);
}

llvm::Error RuntimeOps::reducePart(CUdeviceptr xf, CUdeviceptr xd, int64_t n,
                                   int64_t first, bool square,
                                   CUdeviceptr state) {
  if (n == 0)
    return llvm::Error::success();
  int64_t sq = square;
  return run("saga_rt_reduce_part", 1, {&xf, &xd, &n, &first, &sq, &state},
             kReduceThreads);
}

llvm::Error RuntimeOps::reduceFinish(CUdeviceptr state, CUdeviceptr out) {
  return run("saga_rt_reduce_finish", 1, {&state, &out}, kReduceThreads,
             kReduceThreads * 8);
}

llvm::Error RuntimeOps::scalar(CUdeviceptr s, CUdeviceptr count, double scale,
                               CUdeviceptr out) {
  return run("saga_rt_scalar", 1, {&s, &count, &scale, &out});
}

llvm::Error RuntimeOps::labelValid(CUdeviceptr labels, int64_t c,
                                   CUdeviceptr rows, int64_t n, int64_t first,
                                   CUdeviceptr valid) {
  return run("saga_rt_label_valid", n,
             {&labels, &c, &rows, &n, &first, &valid});
}

llvm::Error RuntimeOps::crossEntropy(CUdeviceptr logits, int64_t c,
                                     CUdeviceptr labels, CUdeviceptr rows,
                                     int64_t n, int64_t first, int64_t lo,
                                     int64_t hi, CUdeviceptr terms) {
  return run("saga_rt_cross_entropy", n,
             {&logits, &c, &labels, &rows, &n, &first, &lo, &hi, &terms});
}

llvm::Error RuntimeOps::crossEntropyGrad(CUdeviceptr logits, int64_t c,
                                         CUdeviceptr labels, CUdeviceptr rows,
                                         int64_t n, int64_t first, int64_t lo,
                                         int64_t hi, CUdeviceptr g,
                                         CUdeviceptr count, CUdeviceptr d) {
  return run("saga_rt_cross_entropy_grad", n,
             {&logits, &c, &labels, &rows, &n, &first, &lo, &hi, &g, &count,
              &d});
}

llvm::Error RuntimeOps::readout(CUdeviceptr x, int64_t w, CUdeviceptr bounds,
                                int64_t graphs, int64_t kind, CUdeviceptr r) {
  return run("saga_rt_readout", graphs * w,
             {&x, &w, &bounds, &graphs, &kind, &r});
}

llvm::Error RuntimeOps::readoutGrad(CUdeviceptr x, CUdeviceptr y,
                                    CUdeviceptr dy, int64_t w,
                                    CUdeviceptr bounds, int64_t graphs,
                                    CUdeviceptr dx) {
  return run("saga_rt_readout_grad", graphs * w,
             {&x, &y, &dy, &w, &bounds, &graphs, &dx});
}

llvm::Error RuntimeOps::pairTerms(CUdeviceptr h, int64_t w, CUdeviceptr src,
                                  CUdeviceptr dst, CUdeviceptr label,
                                  int64_t n, int64_t mode, CUdeviceptr g,
                                  CUdeviceptr out) {
  return run("saga_rt_pair_terms", n,
             {&h, &w, &src, &dst, &label, &n, &mode, &g, &out});
}

llvm::Error RuntimeOps::pairGrad(CUdeviceptr h, int64_t w, CUdeviceptr offsets,
                                 CUdeviceptr pair, CUdeviceptr other,
                                 CUdeviceptr coef, int64_t rows,
                                 CUdeviceptr dh) {
  return run("saga_rt_pair_grad", rows * w,
             {&h, &w, &offsets, &pair, &other, &coef, &rows, &dh});
}

llvm::Error RuntimeOps::batchNorm(CUdeviceptr x, int64_t rows, int64_t w,
                                  CUdeviceptr y) {
  return run("saga_rt_batch_norm", w, {&x, &rows, &w, &y});
}

llvm::Error RuntimeOps::batchNormGrad(CUdeviceptr x, CUdeviceptr dy,
                                      int64_t rows, int64_t w,
                                      CUdeviceptr dx) {
  return run("saga_rt_batch_norm_grad", w, {&x, &dy, &rows, &w, &dx});
}
