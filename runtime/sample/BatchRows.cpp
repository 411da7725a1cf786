//===- BatchRows.cpp - where a mini-batch's feature rows come from ------===//

#include "runtime/sample/BatchRows.h"

#include "runtime/exec/ThreadPool.h"

#include <algorithm>

using namespace saga;

void LocalBatchRows::copyRows(const float *rows, int64_t width, int32_t base,
                                const std::vector<int32_t> &first,
                                const std::vector<int64_t> *to, float *out,
                                ThreadPool &pool) {
  const int64_t n = int64_t(first.size());
  constexpr int64_t kRows = 1024;
  // Rows fetched ahead: each is a few cache misses (4 at 64 features).
  constexpr int64_t kAhead = 12;
  pool.parallelFor((n + kRows - 1) / kRows, [&](int64_t t) {
    const int64_t end = std::min(n, (t + 1) * kRows);
    for (int64_t i = t * kRows; i < end; ++i) {
      if (i + kAhead < end) {
        const char *next = reinterpret_cast<const char *>(
            rows + int64_t(first[size_t(i + kAhead)] - base) * width);
        for (int64_t b = 0; b < width * 4; b += 64)
          __builtin_prefetch(next + b);
      }
      const float *from = rows + int64_t(first[size_t(i)] - base) * width;
      std::copy(from, from + width,
                out + (to ? (*to)[size_t(i)] : i) * width);
    }
  });
}

llvm::Error LocalBatchRows::gather(const std::vector<int32_t> &vertices,
                                     float *out, ThreadPool &pool) {
  copyRows(rows.f32(), width(), 0, vertices, nullptr, out, pool);
  return llvm::Error::success();
}
