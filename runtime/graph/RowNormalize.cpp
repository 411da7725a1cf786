//===- RowNormalize.cpp - features divided by their row sums --------------===//
//
// rowNormalize: each row's sum in double, eight rows at a time (the same
// sums, bit for bit, as one row at a time), then the row divided by it with
// an AVX2 or a plain loop picked once at run time.
//
//===----------------------------------------------------------------------===//

#include "runtime/graph/Loaders.h"

#include <cstdint>

using namespace saga;

void saga::rowNormalize(Tensor &features) {
  rowNormalize(features.f32(), features.rows(), features.rowSize());
}

namespace {
/// row[j] = float(row[j] / s), compiled for AVX2 (four lanes, against
/// SSE2's two) and for any x86-64, picked once at run time: IEEE division
/// rounds the same at any vector width, so both give the same bits. Not a
/// target_clones ifunc: its resolver runs inside the dynamic loader, before
/// ThreadSanitizer's runtime is initialised, and crashed every TSan binary
/// at start-up.
using DivideRow = void (*)(float *, int64_t, double);
#define SAGA_DIVIDE_ROW_BODY                                                   \
  for (int64_t j = 0; j < f; ++j)                                              \
    row[j] = float(row[j] / s);
void divideRowPlain(float *row, int64_t f, double s) { SAGA_DIVIDE_ROW_BODY }
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) void divideRowAvx2(float *row, int64_t f,
                                                   double s) {
  SAGA_DIVIDE_ROW_BODY
}
#endif
#undef SAGA_DIVIDE_ROW_BODY
DivideRow chosenDivideRow() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const DivideRow chosen =
      __builtin_cpu_supports("avx2") ? divideRowAvx2 : divideRowPlain;
  return chosen;
#else
  return divideRowPlain;
#endif
}
} // namespace

void saga::rowNormalize(float *rows, int64_t n, int64_t f) {
  const DivideRow divideRow = chosenDivideRow();
  auto divide = [f, divideRow](float *row, double s) {
    if (s != 0)
      divideRow(row, f, s);
  };
  // Each row's sum in double, added in column order; kRows rows at a time
  // so that their additions overlap (the same sums, bit for bit, as one
  // row at a time: each row's additions keep their order).
  constexpr int64_t kRows = 8;
  int64_t v = 0;
  for (; v + kRows <= n; v += kRows) {
    float *block = rows + v * f;
    double s[kRows] = {};
    for (int64_t j = 0; j < f; ++j)
      for (int64_t k = 0; k < kRows; ++k)
        s[k] += block[k * f + j];
    for (int64_t k = 0; k < kRows; ++k)
      divide(block + k * f, s[k]);
  }
  for (; v < n; ++v) {
    float *row = rows + v * f;
    double s = 0;
    for (int64_t j = 0; j < f; ++j)
      s += row[j];
    divide(row, s);
  }
}
