//===- GraphFile.cpp - reading Saga's graph format (.sgf) -----------------===//
//
// GraphFile: open checks the header (magic, version, checksum, the section
// table against the counts and the file's size) and loads the small indexes;
// reads go through readAt (pread, optionally O_DIRECT through an aligned
// bounce buffer) and are checked against their CRC-32s: whole sections, the
// skeleton, chunks and parts of chunks, feature intervals and rows, chunk
// row lists. isGraphFile looks for the magic. The writer is
// GraphFileWriter.cpp, the chunked executor's adapter GraphFileChunks.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/graph/GraphFile.h"
#include "runtime/graph/Crc32.h"
#include "runtime/graph/GraphFileFormat.h"
#include "runtime/memory/MemoryLimit.h"

#include "llvm/ADT/ScopeExit.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace saga;
using namespace saga::sgf;

bool saga::isGraphFile(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  char magic[8] = {};
  bool yes = ::pread(fd, magic, 8, 0) == 8 && std::memcmp(magic, kMagic, 8) == 0;
  ::close(fd);
  return yes;
}

GraphFile::~GraphFile() {
  if (fd >= 0)
    ::close(fd);
}

llvm::Error GraphFile::corrupt(const std::string &what, uint64_t offset,
                               const std::string &why) const {
  return llvm::createStringError(path + ": " + what + " at offset " +
                                 std::to_string(offset) + ": " + why);
}

llvm::Error GraphFile::readAt(uint64_t offset, uint64_t bytes, void *to,
                              const std::string &what) {
  if (offset + bytes > fileBytes)
    return corrupt(what, offset,
                   "truncated: needs " + std::to_string(bytes) +
                       " bytes but the file has " + std::to_string(fileBytes));
  char *out = static_cast<char *>(to);
  auto started = std::chrono::steady_clock::now();
  llvm::scope_exit timed([&] {
    readNanos_ += std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count();
  });
  // O_DIRECT wants aligned offsets, lengths and buffers. A request at an
  // aligned offset into an aligned buffer (a feature interval into the
  // device pool) reads its aligned bulk straight into it; the rest, or
  // any other request, reads the aligned range around it through an
  // aligned bounce buffer.
  if (direct && offset % kAlign == 0 &&
      reinterpret_cast<uintptr_t>(out) % kAlign == 0) {
    const uint64_t bulk = bytes / kAlign * kAlign;
    uint64_t done = 0;
    while (done < bulk) {
      ssize_t got = ::pread(fd, out + done,
                            size_t(std::min<uint64_t>(bulk - done, 1u << 30)),
                            off_t(offset + done));
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        return ioError(path, "cannot read " + what);
      if (got == 0)
        return corrupt(what, offset + done, "unexpected end of file");
      bytesRead_ += got;
      done += uint64_t(got);
      if (done % kAlign != 0)
        break; // a short read: the rest through the bounce buffer
    }
    out += done;
    offset += done;
    bytes -= done;
    if (bytes == 0)
      return llvm::Error::success();
  }
  uint64_t lo = direct ? offset / kAlign * kAlign : offset;
  uint64_t hi = direct ? alignUp(offset + bytes) : offset + bytes;
  constexpr uint64_t kStep = uint64_t(16) << 20;
  // One bounce buffer per reading thread, kept (a fresh one's pages would
  // be zeroed by the kernel at every read).
  thread_local std::unique_ptr<char, decltype(&std::free)> bounce(nullptr,
                                                                  &std::free);
  if (direct && !bounce)
    bounce.reset(static_cast<char *>(std::aligned_alloc(kAlign, kStep)));
  if (direct && !bounce)
    return llvm::createStringError(path + ": no memory for a read buffer");
  for (uint64_t at = lo; at < hi;) {
    uint64_t n = std::min(kStep, hi - at);
    char *dst = direct ? bounce.get() : out + (at - offset);
    ssize_t got = ::pread(fd, dst, size_t(n), off_t(at));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return ioError(path, "cannot read " + what);
    if (got == 0)
      return corrupt(what, at, "unexpected end of file");
    bytesRead_ += got;
    if (direct) {
      // Copy the requested part of [at, at + got).
      uint64_t from = std::max(at, offset);
      uint64_t upto = std::min(at + uint64_t(got), offset + bytes);
      if (upto > from)
        std::memcpy(out + (from - offset), dst + (from - at), size_t(upto - from));
    }
    at += uint64_t(got);
  }
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<GraphFile>>
GraphFile::open(const std::string &path, bool direct) {
  std::unique_ptr<GraphFile> file(new GraphFile());
  file->path = path;
  file->direct = direct;
  file->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
  if (file->fd < 0)
    return ioError(path, "cannot open");
  struct stat st;
  if (::fstat(file->fd, &st) != 0)
    return ioError(path, "cannot stat");
  file->fileBytes = uint64_t(st.st_size);
  if (!littleEndian())
    return llvm::createStringError(path + ": graph files are little-endian; "
                                   "this machine is not");
  std::vector<char> h(kHeaderBytes);
  if (file->fileBytes < kHeaderBytes) {
    char magic[8] = {};
    if (::pread(file->fd, magic, 8, 0) != 8 || std::memcmp(magic, kMagic, 8))
      return llvm::createStringError(path + ": not a Saga graph file (no "
                                     "SAGAGRF1 magic)");
    return file->corrupt("header", 0,
                         "truncated: " + std::to_string(file->fileBytes) +
                             " bytes, the header alone has 4096");
  }
  if (auto e = file->readAt(0, kHeaderBytes, h.data(), "header"))
    return std::move(e);
  if (std::memcmp(h.data(), kMagic, 8) != 0)
    return llvm::createStringError(path +
                                   ": not a Saga graph file (no SAGAGRF1 magic)");
  uint32_t version = get<uint32_t>(h, 8);
  if (version < 1 || version > kGraphFileVersion)
    return llvm::createStringError(
        path + ": graph file version " + std::to_string(version) +
        "; this Saga reads versions 1 to " + std::to_string(kGraphFileVersion));
  uint32_t stored = get<uint32_t>(h, kHeaderBytes - 4);
  if (crcOf(h.data(), kHeaderBytes - 4) != stored)
    return file->corrupt("header", 0, "checksum mismatch: the header is corrupt");
  GraphFileInfo &info = file->info_;
  info.numVertices = get<int64_t>(h, 16);
  info.numEdges = get<int64_t>(h, 24);
  info.numFeatures = get<int64_t>(h, 32);
  info.numClasses = get<int64_t>(h, 40);
  info.intervals = get<int64_t>(h, 48);
  info.numTrain = get<int64_t>(h, 56);
  info.numVal = get<int64_t>(h, 64);
  info.numTest = get<int64_t>(h, 72);
  info.name.assign(h.data() + kNameAt, strnlen(h.data() + kNameAt, kNameBytes));
  uint32_t count = get<uint32_t>(h, 80);
  const uint32_t sectionCount = version == 1 ? kVersion1Sections : NumKinds - 1;
  if (count != sectionCount)
    return file->corrupt("header", 80,
                         "expected " + std::to_string(sectionCount) +
                             " sections, the table has " + std::to_string(count));
  // Sizes follow from the counts; the table must agree with them, so a
  // header that asks for absurd sizes is refused before any allocation.
  int64_t v = info.numVertices, e = info.numEdges, f = info.numFeatures,
          p = info.intervals;
  if (v < 0 || v > Graph::kMaxEdges || e < 0 || e > Graph::kMaxEdges || f < 0 ||
      p < 1 || p > std::max<int64_t>(1, v) || info.numTrain < 0 ||
      info.numVal < 0 || info.numTest < 0 || info.numClasses < 0)
    return file->corrupt("header", 16, "counts out of range");
  const uint64_t expected[NumKinds] = {
      0,
      uint64_t(v + 1) * 8, uint64_t(e) * 4, uint64_t(e) * 4,
      uint64_t(v + 1) * 8, uint64_t(e) * 4, uint64_t(e) * 4,
      uint64_t(p + 1) * 4, uint64_t(p * p) * 24, uint64_t(e) * 12,
      uint64_t(v) * uint64_t(f) * 4, uint64_t(p) * 4, uint64_t(v) * 4,
      uint64_t(info.numTrain) * 4, uint64_t(info.numVal) * 4,
      uint64_t(info.numTest) * 4, uint64_t(p * p) * kRowEntryWords * 8, 0};
  for (uint32_t k = 0; k < count; ++k) {
    size_t at = kSectionsAt + k * kSectionBytes;
    Section s{get<uint32_t>(h, at), get<uint64_t>(h, at + 8),
              get<uint64_t>(h, at + 16), get<uint32_t>(h, at + 24)};
    // The chunk rows' size follows from their table, checked below.
    const uint64_t want = s.kind == ChunkRows ? s.bytes / 4 * 4 : expected[s.kind];
    if (s.kind != k + 1 || s.bytes != want ||
        s.offset % kAlign != 0 || s.offset < kHeaderBytes)
      return file->corrupt("header", at,
                           std::string("section table entry for ") +
                               kindName(k + 1) + " is inconsistent");
    if (s.offset + s.bytes > file->fileBytes)
      return file->corrupt(kindName(s.kind), s.offset,
                           "truncated: the section ends at " +
                               std::to_string(s.offset + s.bytes) +
                               " but the file has " +
                               std::to_string(file->fileBytes) + " bytes");
    file->sections.push_back(s);
  }
  // The small indexes: interval bounds, chunk table, feature checksums.
  auto small = [&](uint32_t kind, auto &vec) -> llvm::Error {
    auto bytes = file->readSection(kind);
    if (!bytes)
      return bytes.takeError();
    vec.resize(bytes->size() / sizeof(vec[0]));
    std::memcpy(vec.data(), bytes->data(), bytes->size());
    return llvm::Error::success();
  };
  if (auto err = small(Bounds, file->bounds_))
    return std::move(err);
  std::vector<uint64_t> table;
  if (auto err = small(ChunkTable, table))
    return std::move(err);
  if (auto err = small(FeatureCrcs, file->featureCrcs))
    return std::move(err);
  uint64_t next = 0;
  for (size_t c = 0; c < size_t(p * p); ++c) {
    ChunkEntry entry{table[3 * c], table[3 * c + 1], uint32_t(table[3 * c + 2])};
    if (entry.first != next || entry.first + entry.count > uint64_t(e))
      return file->corrupt("chunk-table", file->sections[ChunkTable - 1].offset +
                                              c * 24,
                           "chunk " + std::to_string(c) + " out of order");
    next += entry.count;
    file->chunkTable.push_back(entry);
  }
  const auto &b = file->bounds_;
  if (b.front() != 0 || b.back() != v || !std::is_sorted(b.begin(), b.end()))
    return file->corrupt("bounds", file->sections[Bounds - 1].offset,
                         "interval bounds do not cover the vertices");
  if (version >= 2) {
    std::vector<uint64_t> rows;
    if (auto err = small(ChunkRowTable, rows))
      return std::move(err);
    const uint64_t listed = file->sections[ChunkRows - 1].bytes / 4;
    uint64_t nextRow = 0;
    for (size_t c = 0; c < size_t(p * p); ++c)
      for (size_t end = 0; end < 2; ++end) {
        const uint64_t *w = rows.data() + c * kRowEntryWords + end * 3;
        // Chunk c = j * p + i reads sources of interval i, destinations of j.
        const size_t interval = end == 0 ? c % size_t(p) : c / size_t(p);
        RowListEntry entry{w[0], w[1], uint32_t(w[2])};
        const uint64_t rowsOf = uint64_t(b[interval + 1] - b[interval]);
        bool ok = entry.count <= rowsOf &&
                  entry.count <= file->chunkTable[c].count;
        if (entry.first != kNotListed) {
          ok = ok && entry.first == nextRow && entry.first + entry.count <= listed;
          nextRow += entry.count;
        }
        if (!ok)
          return file->corrupt("chunk-row-table",
                               file->sections[ChunkRowTable - 1].offset +
                                   (c * kRowEntryWords + end * 3) * 8,
                               "chunk " + std::to_string(c) +
                                   "'s rows are inconsistent");
        file->rowTable.push_back(entry);
      }
    if (nextRow != listed)
      return file->corrupt("chunk-rows", file->sections[ChunkRows - 1].offset,
                           "the table lists " + std::to_string(nextRow) +
                               " rows, the section holds " +
                               std::to_string(listed));
  }
  return file;
}

llvm::Expected<std::vector<char>> GraphFile::readSection(uint32_t kind) {
  const Section &s = sections[kind - 1];
  std::vector<char> bytes(s.bytes);
  if (auto e = readAt(s.offset, s.bytes, bytes.data(), kindName(kind)))
    return std::move(e);
  uint32_t crc = crcOf(bytes.data(), bytes.size());
  if (crc != s.crc)
    return corrupt(kindName(kind), s.offset,
                   "checksum mismatch: the section is corrupt");
  return bytes;
}

llvm::Expected<Dataset> GraphFile::readAll(bool features) {
  Dataset d;
  d.name = info_.name;
  const int64_t v = info_.numVertices, e = info_.numEdges, f = info_.numFeatures;
  if (llvm::Error err = checkMemory(
          saturatingAdd(saturatingAdd(bytesOf({v + 1}, 8), bytesOf({e}, 16)),
                        features ? bytesOf({v, f}, 4) : 0),
          path + ": the whole graph (" + std::to_string(v) + " vertices, " +
              std::to_string(e) + " edges" +
              (features ? ", " + std::to_string(f) + " features" : "") +
              "; a run with --memory-budget streams it instead)"))
    return std::move(err);
  // Edges in id order from the in-edge CSR.
  auto offsets = readSection(InOffsets);
  if (!offsets)
    return offsets.takeError();
  auto sources = readSection(InSources);
  if (!sources)
    return sources.takeError();
  auto ids = readSection(InEdgeIds);
  if (!ids)
    return ids.takeError();
  const auto *off = reinterpret_cast<const int64_t *>(offsets->data());
  const auto *src = reinterpret_cast<const int32_t *>(sources->data());
  const auto *id = reinterpret_cast<const int32_t *>(ids->data());
  d.edges.numVertices = int32_t(v);
  d.edges.src.assign(size_t(e), -1);
  d.edges.dst.assign(size_t(e), -1);
  if (off[0] != 0 || off[v] != e)
    return corrupt("in-offsets", sections[InOffsets - 1].offset,
                   "offsets do not span the edges");
  for (int64_t row = 0; row < v; ++row) {
    if (off[row + 1] < off[row])
      return corrupt("in-offsets", sections[InOffsets - 1].offset + uint64_t(row) * 8,
                     "offsets decrease at vertex " + std::to_string(row));
    for (int64_t q = off[row]; q < off[row + 1]; ++q) {
      if (id[q] < 0 || id[q] >= e || d.edges.src[size_t(id[q])] != -1 ||
          src[q] < 0 || src[q] >= v)
        return corrupt("in-edge-ids", sections[InEdgeIds - 1].offset + uint64_t(q) * 4,
                       "edge " + std::to_string(q) + " is out of range or repeated");
      d.edges.src[size_t(id[q])] = src[q];
      d.edges.dst[size_t(id[q])] = int32_t(row);
    }
  }
  // The out-edge CSR and the chunks are checked for integrity too.
  for (uint32_t kind : {OutOffsets, OutTargets, OutEdgeIds, ChunkEdges}) {
    auto bytes = readSection(kind);
    if (!bytes)
      return bytes.takeError();
  }
  if (!features) {
    if (llvm::Error e = readLabels(d))
      return std::move(e);
    return d;
  }
  d.features = Tensor::uninitialized({v, f});
  if (f > 0) {
    const Section &s = sections[Features - 1];
    if (auto err = readAt(s.offset, s.bytes, d.features.data(), "features"))
      return std::move(err);
    if (crcOf(d.features.data(), s.bytes) != s.crc)
      return corrupt("features", s.offset,
                     "checksum mismatch: the section is corrupt");
  }
  if (llvm::Error e = readLabels(d))
    return std::move(e);
  return d;
}

llvm::Error GraphFile::readLabels(Dataset &d) {
  const int64_t v = info_.numVertices;
  auto labels = readSection(Labels);
  if (!labels)
    return labels.takeError();
  d.labels.resize(size_t(v));
  std::memcpy(d.labels.data(), labels->data(), labels->size());
  d.numClasses = int32_t(info_.numClasses);
  for (int32_t l : d.labels)
    if (l < -1 || l >= d.numClasses)
      return corrupt("labels", sections[Labels - 1].offset,
                     "label " + std::to_string(l) + " out of range");
  for (auto [kind, list] : {std::pair{uint32_t(Train), &d.train},
                            std::pair{uint32_t(Val), &d.val},
                            std::pair{uint32_t(Test), &d.test}}) {
    auto bytes = readSection(kind);
    if (!bytes)
      return bytes.takeError();
    list->resize(bytes->size() / 4);
    std::memcpy(list->data(), bytes->data(), bytes->size());
    for (int32_t x : *list)
      if (x < 0 || x >= v)
        return corrupt(kindName(kind), sections[kind - 1].offset,
                       "vertex " + std::to_string(x) + " out of range");
  }
  return llvm::Error::success();
}

llvm::Expected<Dataset> GraphFile::readLabelsOnly() {
  Dataset d;
  d.name = info_.name;
  d.edges.numVertices = int32_t(info_.numVertices);
  if (llvm::Error e = readLabels(d))
    return std::move(e);
  return d;
}

llvm::Expected<Graph> GraphFile::readSkeleton(bool selfLoops) {
  const int64_t v = info_.numVertices, e = info_.numEdges;
  if (std::string why = Graph::sizeError(v, e, selfLoops); !why.empty())
    return llvm::createStringError(path + ": " + why);
  if (llvm::Error err = checkMemory(bytesOf({v + 1}, 16),
                                    path + ": the graph's offsets"))
    return std::move(err);
  Graph g;
  g.numVertices = int32_t(v);
  g.numEdges = e + (selfLoops ? v : 0);
  g.selfLoops = selfLoops;
  for (auto [kind, to] : {std::pair{uint32_t(InOffsets), &g.inOffsets},
                          std::pair{uint32_t(OutOffsets), &g.outOffsets}}) {
    auto bytes = readSection(kind);
    if (!bytes)
      return bytes.takeError();
    to->resize(size_t(v) + 1);
    std::memcpy(to->data(), bytes->data(), bytes->size());
    for (int64_t row = 0; row < v; ++row)
      if ((*to)[size_t(row) + 1] < (*to)[size_t(row)])
        return corrupt(kindName(kind), sections[kind - 1].offset + uint64_t(row) * 8,
                       "offsets decrease at vertex " + std::to_string(row));
    if ((*to)[0] != 0 || (*to)[size_t(v)] != e)
      return corrupt(kindName(kind), sections[kind - 1].offset,
                     "offsets do not span the edges");
    if (selfLoops) // one more edge per vertex
      for (int64_t row = 0; row <= v; ++row)
        (*to)[size_t(row)] += row;
  }
  return g;
}

llvm::Error GraphFile::readFeatureRows(int64_t j, float *to, bool normalize) {
  if (j < 0 || j >= info_.intervals)
    return llvm::createStringError(path + ": no feature interval " +
                                   std::to_string(j));
  int64_t lo = bounds_[size_t(j)], hi = bounds_[size_t(j) + 1];
  const int64_t width = info_.numFeatures;
  uint64_t bytes = uint64_t((hi - lo) * width) * 4;
  uint64_t offset = sections[Features - 1].offset + uint64_t(lo * width) * 4;
  std::string what = "feature interval " + std::to_string(j);
  // One read (the disk's speed wants large requests), then checksummed
  // and normalised a cache-sized block of rows at a time: one pass over
  // memory instead of two.
  if (auto e = readAt(offset, bytes, to, what))
    return e;
  constexpr int64_t kBlockBytes = int64_t(1) << 20;
  const int64_t blockRows =
      std::max<int64_t>(1, kBlockBytes / std::max<int64_t>(1, width * 4));
  uint32_t crc = 0;
  for (int64_t row = 0; row < hi - lo; row += blockRows) {
    const int64_t n = std::min(blockRows, hi - lo - row);
    float *rows = to + row * width;
    crc = crc32Update(crc, rows, size_t(n * width) * 4);
    if (normalize)
      rowNormalize(rows, n, width);
  }
  if (crc != featureCrcs[size_t(j)])
    return corrupt(what, offset, "checksum mismatch: the rows are corrupt");
  return llvm::Error::success();
}

llvm::Error GraphFile::readFeatureRange(int64_t begin, int64_t end, float *to,
                                        bool normalize) {
  const int64_t width = info_.numFeatures;
  auto at = std::find(bounds_.begin(), bounds_.end(), int32_t(begin));
  for (size_t j = size_t(at - bounds_.begin());
       at != bounds_.end() && j + 1 < bounds_.size() && bounds_[j] < end; ++j) {
    float *rows = to + (bounds_[j] - begin) * width;
    if (llvm::Error e = readFeatureRows(int64_t(j), rows, normalize))
      return e;
    if (bounds_[j + 1] == end)
      return llvm::Error::success();
  }
  return llvm::createStringError(
      path + ": rows [" + std::to_string(begin) + ", " + std::to_string(end) +
      ") are not whole intervals of the graph file");
}

int64_t GraphFile::chunkEdgeCount(int64_t i, int64_t j) const {
  return int64_t(chunkTable[size_t(j * info_.intervals + i)].count);
}

llvm::Error GraphFile::readChunkPart(int64_t i, int64_t j, int64_t first,
                                     int64_t count, ChunkEdge *to,
                                     uint32_t *crc) {
  const ChunkEntry &c = chunkTable[size_t(j * info_.intervals + i)];
  if (first < 0 || count < 0 || uint64_t(first + count) > c.count)
    return llvm::createStringError(path + ": no edges [" + std::to_string(first) +
                                   ", " + std::to_string(first + count) +
                                   ") in chunk (" + std::to_string(i) + ", " +
                                   std::to_string(j) + ")");
  uint64_t offset = sections[ChunkEdges - 1].offset +
                    (c.first + uint64_t(first)) * sizeof(ChunkEdge);
  std::string what = "chunk (" + std::to_string(i) + ", " + std::to_string(j) + ")";
  if (auto e = readAt(offset, uint64_t(count) * sizeof(ChunkEdge), to, what))
    return e;
  if (crc)
    *crc = crc32Update(*crc, to, size_t(count) * sizeof(ChunkEdge));
  return llvm::Error::success();
}

llvm::Error GraphFile::checkChunk(int64_t i, int64_t j, uint32_t crc) {
  const ChunkEntry &c = chunkTable[size_t(j * info_.intervals + i)];
  if (crc == c.crc)
    return llvm::Error::success();
  return corrupt("chunk (" + std::to_string(i) + ", " + std::to_string(j) + ")",
                 sections[ChunkEdges - 1].offset + c.first * sizeof(ChunkEdge),
                 "checksum mismatch: the chunk is corrupt");
}

int64_t GraphFile::listedChunkRows() const {
  return std::count_if(rowTable.begin(), rowTable.end(),
                       [](const RowListEntry &r) { return r.first != kNotListed; });
}

int64_t GraphFile::chunkRowCount(int64_t i, int64_t j, bool targets) const {
  return int64_t(
      rowTable[size_t(2 * (j * info_.intervals + i) + (targets ? 1 : 0))].count);
}

llvm::Expected<std::shared_ptr<const std::vector<int32_t>>>
GraphFile::readChunkRows(int64_t i, int64_t j, bool targets) {
  const int64_t p = info_.intervals;
  if (rowTable.empty() || i < 0 || j < 0 || i >= p || j >= p)
    return nullptr;
  const RowListEntry &r =
      rowTable[size_t(2 * (j * p + i) + (targets ? 1 : 0))];
  if (r.first == kNotListed)
    return nullptr;
  auto list = std::make_shared<std::vector<int32_t>>(size_t(r.count));
  const uint64_t offset = sections[ChunkRows - 1].offset + r.first * 4;
  std::string what = std::string("the ") + (targets ? "destinations" : "sources") +
                     " of chunk (" + std::to_string(i) + ", " +
                     std::to_string(j) + ")";
  if (auto e = readAt(offset, r.count * 4, list->data(), what))
    return std::move(e);
  const int32_t rows = bounds_[size_t(targets ? j : i) + 1] -
                       bounds_[size_t(targets ? j : i)];
  if (crcOf(list->data(), r.count * 4) != r.crc)
    return corrupt(what, offset, "checksum mismatch: the list is corrupt");
  for (size_t k = 0; k < list->size(); ++k)
    if ((*list)[k] < 0 || (*list)[k] >= rows || (k && (*list)[k] <= (*list)[k - 1]))
      return corrupt(what, offset + k * 4, "rows out of order or range");
  return std::shared_ptr<const std::vector<int32_t>>(std::move(list));
}

llvm::Expected<std::vector<ChunkEdge>> GraphFile::readChunk(int64_t i,
                                                             int64_t j) {
  const int64_t p = info_.intervals;
  if (i < 0 || j < 0 || i >= p || j >= p)
    return llvm::createStringError(path + ": no chunk (" + std::to_string(i) +
                                   ", " + std::to_string(j) + ") among " +
                                   std::to_string(p) + " x " + std::to_string(p));
  const ChunkEntry &c = chunkTable[size_t(j * p + i)];
  std::vector<ChunkEdge> edges(c.count);
  uint64_t offset = sections[ChunkEdges - 1].offset + c.first * sizeof(ChunkEdge);
  std::string what = "chunk (" + std::to_string(i) + ", " + std::to_string(j) + ")";
  if (auto e = readAt(offset, c.count * sizeof(ChunkEdge), edges.data(), what))
    return std::move(e);
  if (crcOf(edges.data(), c.count * sizeof(ChunkEdge)) != c.crc)
    return corrupt(what, offset, "checksum mismatch: the chunk is corrupt");
  return edges;
}

llvm::Expected<Tensor> GraphFile::readFeatures(int64_t j) {
  if (j < 0 || j >= info_.intervals)
    return llvm::createStringError(path + ": no feature interval " +
                                   std::to_string(j));
  int64_t lo = bounds_[size_t(j)], hi = bounds_[size_t(j) + 1];
  Tensor t = Tensor::uninitialized({hi - lo, info_.numFeatures});
  uint64_t bytes = uint64_t((hi - lo) * info_.numFeatures) * 4;
  uint64_t offset = sections[Features - 1].offset + uint64_t(lo * info_.numFeatures) * 4;
  std::string what = "feature interval " + std::to_string(j);
  if (auto e = readAt(offset, bytes, t.data(), what))
    return std::move(e);
  if (crcOf(t.data(), bytes) != featureCrcs[size_t(j)])
    return corrupt(what, offset, "checksum mismatch: the rows are corrupt");
  return t;
}

llvm::Expected<Tensor>
GraphFile::readFeatureRowsOf(const std::vector<int32_t> &rows,
                             int64_t *intervalsRead) {
  const int64_t f = info_.numFeatures;
  Tensor out = Tensor::uninitialized({int64_t(rows.size()), f});
  // The rows each interval holds, by their place in `rows`.
  std::vector<std::vector<size_t>> byInterval(size_t(info_.intervals));
  for (size_t k = 0; k < rows.size(); ++k) {
    int32_t v = rows[k];
    if (v < 0 || v >= info_.numVertices)
      return llvm::createStringError(path + ": no vertex " + std::to_string(v));
    size_t j = size_t(std::upper_bound(bounds_.begin(), bounds_.end(), v) -
                      bounds_.begin() - 1);
    byInterval[j].push_back(k);
  }
  int64_t read = 0;
  for (size_t j = 0; j < byInterval.size(); ++j) {
    if (byInterval[j].empty())
      continue;
    auto interval = readFeatures(int64_t(j));
    if (!interval)
      return interval.takeError();
    ++read;
    const int32_t lo = bounds_[j];
    for (size_t k : byInterval[j])
      std::memcpy(out.f32() + int64_t(k) * f,
                  interval->f32() + int64_t(rows[k] - lo) * f,
                  size_t(f) * sizeof(float));
  }
  if (intervalsRead)
    *intervalsRead = read;
  return out;
}
