//===- FastExp.h - a vectorisable exp for the runtime's losses --*- C++ -*-===//
//
// exp(x) for x <= 0 (softmax terms x - max), branch-free so that the
// compiler vectorises a loop over a row: Cody-Waite reduction by ln 2 and
// Cephes' degree-5 polynomial on [-ln2/2, ln2/2] (the same scheme as
// Cephes' expf: about 1 ulp), rounding by the 1.5 * 2^23 trick. Arguments
// below -87.3 give exp(-87.3) ~ 1.2e-38 instead of a smaller value or 0:
// negligible beside the row's largest term, which is 1. libm's expf is a
// call per element, and cross-entropy over a million vertices and 16
// classes spent most of its 100 ms there.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_FASTEXP_H
#define SAGA_RUNTIME_FASTEXP_H

#include <bit>
#include <cstdint>

namespace saga {

inline float expNonPositive(float x) {
  // x = max(x, -87.3), on the bits of -x (non-negative floats order as
  // their bits do): a float compare would stay a branch, since without
  // -fno-trapping-math the compiler may not evaluate it speculatively,
  // and the loop would not vectorise.
  constexpr int32_t kLimit = std::bit_cast<int32_t>(87.3f);
  int32_t magnitude = std::bit_cast<int32_t>(-x);
  x = -std::bit_cast<float>(magnitude < kLimit ? magnitude : kLimit);
  constexpr float kRound = 12582912.0f; // 1.5 * 2^23
  float n = (x * 1.44269504088896341f + kRound) - kRound;
  float r = x - n * 0.693359375f - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = p * r * r + r + 1.0f;
  int32_t scale = (static_cast<int32_t>(n) + 127) << 23;
  return y * std::bit_cast<float>(scale);
}

} // namespace saga

#endif // SAGA_RUNTIME_FASTEXP_H
