//===- Crc32.cpp - CRC-32 (gzip, zip, .sgf) at memory speed ---------------===//

#include "runtime/graph/Crc32.h"

#include <zlib.h>

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

using namespace saga;

namespace {

#if defined(__x86_64__)
#define SAGA_CLMUL __attribute__((target("pclmul,sse4.1")))

SAGA_CLMUL inline __m128i load16(const unsigned char *p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
}

/// `a` carried forward over the fold's distance (both 64-bit halves times
/// k's constants, x^d mod P) and added to the block `next`.
SAGA_CLMUL inline __m128i fold(__m128i a, __m128i k, __m128i next) {
  __m128i lo = _mm_clmulepi64_si128(a, k, 0x00);
  __m128i hi = _mm_clmulepi64_si128(a, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(hi, lo), next);
}

/// The running CRC register (not inverted) over `bytes` at `p`, a multiple
/// of 16 and at least 64: four 16-byte lanes folded 64 bytes at a time,
/// then into one lane, then 16 bytes at a time, then reduced to 32 bits
/// (Barrett). Gopal et al., "Fast CRC Computation for Generic Polynomials
/// Using PCLMULQDQ Instruction" (Intel, 2009); the constants are the
/// bit-reflected ones for P = 0x04C11DB7.
SAGA_CLMUL uint32_t foldClmul(const unsigned char *p, size_t bytes,
                              uint32_t crc) {
  const __m128i by64 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
  const __m128i by16 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
  const __m128i to32 = _mm_set_epi64x(0, 0x0163cd6124);
  const __m128i barrett = _mm_set_epi64x(0x01f7011641, 0x01db710641);
  __m128i x1 = _mm_xor_si128(load16(p), _mm_cvtsi32_si128(int(crc)));
  __m128i x2 = load16(p + 16), x3 = load16(p + 32), x4 = load16(p + 48);
  for (p += 64, bytes -= 64; bytes >= 64; p += 64, bytes -= 64) {
    x1 = fold(x1, by64, load16(p));
    x2 = fold(x2, by64, load16(p + 16));
    x3 = fold(x3, by64, load16(p + 32));
    x4 = fold(x4, by64, load16(p + 48));
  }
  x1 = fold(fold(fold(x1, by16, x2), by16, x3), by16, x4);
  for (; bytes >= 16; p += 16, bytes -= 16)
    x1 = fold(x1, by16, load16(p));
  // 128 bits to 64, to 32, then Barrett's reduction modulo P.
  const __m128i low32 = _mm_setr_epi32(~0, 0, ~0, 0);
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), _mm_clmulepi64_si128(x1, by16, 0x10));
  x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, low32), to32, 0x00),
                     _mm_srli_si128(x1, 4));
  __m128i q = _mm_clmulepi64_si128(_mm_and_si128(x1, low32), barrett, 0x10);
  q = _mm_clmulepi64_si128(_mm_and_si128(q, low32), barrett, 0x00);
  return uint32_t(_mm_extract_epi32(_mm_xor_si128(x1, q), 1));
}

bool hasClmul() {
  static const bool yes =
      __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  return yes;
}
#endif

} // namespace

uint32_t saga::crc32Zlib(uint32_t crc, const void *data, size_t bytes) {
  auto *p = static_cast<const Bytef *>(data);
  // zlib takes at most a uInt at a time.
  for (; bytes > 0;) {
    uInt n = uInt(std::min<size_t>(bytes, size_t(1) << 30));
    crc = uint32_t(::crc32(crc, p, n));
    p += n;
    bytes -= n;
  }
  return crc;
}

uint32_t saga::crc32Update(uint32_t crc, const void *data, size_t bytes) {
  auto *p = static_cast<const unsigned char *>(data);
#if defined(__x86_64__)
  if (bytes >= 64 && hasClmul()) {
    size_t whole = bytes & ~size_t(15);
    crc = ~foldClmul(p, whole, ~crc);
    p += whole;
    bytes -= whole;
  }
#endif
  return crc32Zlib(crc, p, bytes);
}
