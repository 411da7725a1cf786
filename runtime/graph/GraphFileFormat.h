//===- GraphFileFormat.h - the .sgf layout and its helpers ------*- C++ -*-===//
//
// Private to runtime/graph (GraphFile.h is the interface): the magic, the
// header's and the sections' alignment, the section kinds and their names,
// the chunk row table's entry, and the little helpers (CRC-32 of a range,
// alignment, fields at a header offset, errno errors) that
// GraphFileWriter.cpp, GraphFile.cpp (the reader) and LoadDataset.cpp use.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_GRAPH_GRAPHFILEFORMAT_H
#define SAGA_RUNTIME_GRAPH_GRAPHFILEFORMAT_H

#include "runtime/graph/Crc32.h"

#include "llvm/Support/Error.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace saga::sgf {

constexpr char kMagic[8] = {'S', 'A', 'G', 'A', 'G', 'R', 'F', '1'};
constexpr uint64_t kHeaderBytes = 4096, kAlign = 4096;
constexpr size_t kNameBytes = 256, kNameAt = 3584;

enum Kind : uint32_t {
  InOffsets = 1, InSources, InEdgeIds, OutOffsets, OutTargets, OutEdgeIds,
  Bounds, ChunkTable, ChunkEdges, Features, FeatureCrcs, Labels, Train, Val,
  Test, ChunkRowTable, ChunkRows, NumKinds
};
/// Sections in a version 1 file (no chunk rows).
constexpr uint32_t kVersion1Sections = Test;
/// A chunk row table entry: per end (sources, then destinations) the
/// distinct rows' count, their list's first index in chunk-rows (or
/// kNotListed) and the list's CRC-32.
constexpr size_t kRowEntryWords = 6;
constexpr uint64_t kNotListed = ~uint64_t(0);

inline const char *kindName(uint32_t k) {
  static const char *names[] = {"?",          "in-offsets",   "in-sources",
                                "in-edge-ids", "out-offsets", "out-targets",
                                "out-edge-ids", "bounds",     "chunk-table",
                                "chunk-edges", "features",    "feature-crcs",
                                "labels",      "train",       "val",
                                "test",        "chunk-row-table",
                                "chunk-rows"};
  return k < NumKinds ? names[k] : "?";
}

inline uint32_t crcOf(const void *data, uint64_t bytes) {
  return crc32Update(0, data, size_t(bytes));
}

inline uint64_t alignUp(uint64_t x) {
  return (x + kAlign - 1) / kAlign * kAlign;
}

inline bool littleEndian() {
  uint16_t x = 1;
  return *reinterpret_cast<uint8_t *>(&x) == 1;
}

template <typename T> void put(std::vector<char> &h, size_t at, T v) {
  std::memcpy(h.data() + at, &v, sizeof v);
}
template <typename T> T get(const std::vector<char> &h, size_t at) {
  T v;
  std::memcpy(&v, h.data() + at, sizeof v);
  return v;
}

inline llvm::Error ioError(const std::string &path, const std::string &what) {
  return llvm::createStringError(path + ": " + what + ": " +
                                 std::strerror(errno));
}

/// Section entries start at byte 96 of the header, 32 bytes each.
constexpr size_t kSectionsAt = 96, kSectionBytes = 32;

} // namespace saga::sgf

#endif // SAGA_RUNTIME_GRAPH_GRAPHFILEFORMAT_H
