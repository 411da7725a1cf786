//===- KeyedStream.h - random streams keyed by what they are for -*- C++ -*-===//
//
// SplitMix64 streams started from a key (a seed and the indices of what is
// drawn: a batch and a vertex, an epoch and a pair), so that every draw
// depends on its key alone: any thread count, any order of work and a run
// resumed from a checkpoint draw the same numbers. The neighbour sampler
// and link prediction's edge splits and negative samples draw from these.
//
// Standard library only.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_SUPPORT_KEYEDSTREAM_H
#define SAGA_SUPPORT_KEYEDSTREAM_H

#include <cstdint>

namespace saga {

/// SplitMix64's finaliser: a bijection of 64-bit words that mixes well.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// A stream's start from a seed and two indices (each mixed with its own
/// constant, so that (a, b) and (b, a) differ).
inline uint64_t streamKey(uint64_t seed, uint64_t a, uint64_t b = 0) {
  return mix64(seed ^ mix64(a + 0x632be59bd9b4e019ULL) ^
               mix64(b + 0x8cb92ba72f3d8dd7ULL));
}

/// SplitMix64 from a key.
struct KeyedStream {
  uint64_t state;
  uint64_t next() { return mix64(state += 0x9e3779b97f4a7c15ULL); }
  /// Uniform in [0, n) (Lemire's multiply-shift; the bias is below 2^-32
  /// for n below 2^32).
  uint64_t below(uint64_t n) {
    return uint64_t((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
};

} // namespace saga

#endif // SAGA_SUPPORT_KEYEDSTREAM_H
