//===- Crc32.h - CRC-32 (gzip, zip, .sgf) at memory speed -------*- C++ -*-===//
//
// The CRC-32 zlib computes (polynomial 0x04C11DB7, bit-reflected), the
// checksum of a graph file's sections and chunks and of zip members. On
// CPUs with carry-less multiplication (PCLMULQDQ, every x86-64 since 2010)
// 64 bytes are folded at a time, about 13 GB/s against zlib's 2.3 on this
// project's machine; elsewhere, and for the last bytes, zlib's. Any length,
// any alignment; chained calls give the checksum of the concatenation.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_GRAPH_CRC32_H
#define SAGA_RUNTIME_GRAPH_CRC32_H

#include <cstddef>
#include <cstdint>

namespace saga {

/// The CRC-32 of `bytes` at `data` continuing `crc` (0 to start), as
/// zlib's crc32(crc, data, bytes) gives it.
uint32_t crc32Update(uint32_t crc, const void *data, size_t bytes);

/// zlib's alone (the reference the tests compare against).
uint32_t crc32Zlib(uint32_t crc, const void *data, size_t bytes);

} // namespace saga

#endif // SAGA_RUNTIME_GRAPH_CRC32_H
