//===- TestRandom.h - deterministic random numbers for tests ---*- C++ -*-===//
//
// SplitMix64 and FNV-1a: the same numbers with any compiler or standard
// library, so random graphs, inputs and parameters in tests are stable.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_TEST_UNIT_TESTRANDOM_H
#define SAGA_TEST_UNIT_TESTRANDOM_H

#include <cstdint>
#include <string>

namespace sagatest {

struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next() { // SplitMix64
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; } // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  int32_t below(int64_t n) { return int32_t(next() % uint64_t(n)); }
};

/// FNV-1a of a string (seeds derived from names).
inline uint64_t hashString(const std::string &s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

} // namespace sagatest

#endif // SAGA_TEST_UNIT_TESTRANDOM_H
