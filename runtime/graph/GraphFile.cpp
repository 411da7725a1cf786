//===- GraphFile.cpp - Saga's on-disk graph format (.sgf) -----------------===//

#include "runtime/graph/GraphFile.h"
#include "runtime/graph/Crc32.h"
#include "runtime/memory/MemoryLimit.h"

#include "runtime/graph/EdgeChunks.h"
#include "support/Intervals.h"
#include "runtime/graph/Numpy.h"
#include "runtime/graph/OgbFolder.h"
#include "runtime/graph/Synthetic.h"


#include "llvm/ADT/ScopeExit.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <tuple>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace saga;

namespace {

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

const char *kindName(uint32_t k) {
  static const char *names[] = {"?",          "in-offsets",   "in-sources",
                                "in-edge-ids", "out-offsets", "out-targets",
                                "out-edge-ids", "bounds",     "chunk-table",
                                "chunk-edges", "features",    "feature-crcs",
                                "labels",      "train",       "val",
                                "test",        "chunk-row-table",
                                "chunk-rows"};
  return k < NumKinds ? names[k] : "?";
}

uint32_t crcOf(const void *data, uint64_t bytes) {
  return crc32Update(0, data, size_t(bytes));
}

uint64_t alignUp(uint64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

bool littleEndian() {
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

llvm::Error ioError(const std::string &path, const std::string &what) {
  return llvm::createStringError(path + ": " + what + ": " +
                                 std::strerror(errno));
}

/// Section entries start at byte 96 of the header, 32 bytes each.
constexpr size_t kSectionsAt = 96, kSectionBytes = 32;

} // namespace

llvm::Error saga::writeGraphFile(const std::string &path, const Dataset &d,
                                 int64_t intervals, const FeatureRows *rows) {
  if (!littleEndian())
    return llvm::createStringError(path + ": graph files are little-endian; "
                                   "this machine is not");
  const int32_t v = d.edges.numVertices;
  const int64_t e = int64_t(d.edges.src.size());
  if (intervals < 1 || intervals > std::max<int64_t>(1, v))
    return llvm::createStringError(
        path + ": the chunk index needs 1 to " + std::to_string(std::max(1, v)) +
        " intervals, not " + std::to_string(intervals));
  if (std::string why = Graph::buildError(v, e, false); !why.empty())
    return llvm::createStringError(path + ": " + why);
  Graph g = Graph::build(v, d.edges.src, d.edges.dst, /*addSelfLoops=*/false);
  EdgeChunks byInterval = EdgeChunks::build(
      g.inOffsets, g.inSources, g.inEdgeIds,
      chunkIntervals(v, intervals));
  const std::vector<int32_t> &bounds = byInterval.bounds;
  const int64_t parts = int64_t(bounds.size()) - 1;
  // Chunk (i, j) = chunk i's rows in interval j, in row order.
  std::vector<ChunkEdge> chunkEdges;
  chunkEdges.reserve(size_t(e));
  std::vector<uint64_t> table; // per chunk: first, count, crc
  for (int64_t j = 0; j < parts; ++j)
    for (int64_t i = 0; i < parts; ++i) {
      const auto &c = byInterval.chunks[size_t(i)];
      uint64_t first = chunkEdges.size();
      for (int32_t row = bounds[size_t(j)]; row < bounds[size_t(j) + 1]; ++row)
        for (int64_t p = c.offsets[size_t(row)]; p < c.offsets[size_t(row) + 1];
             ++p)
          chunkEdges.push_back({row, c.others[size_t(p)], c.edgeIds[size_t(p)]});
      uint64_t count = chunkEdges.size() - first;
      table.insert(table.end(),
                   {first, count,
                    crcOf(chunkEdges.data() + first, count * sizeof(ChunkEdge))});
    }
  // Each chunk's distinct sources and destinations (NGra's selective
  // loading reads only those rows of the other end's interval): counted
  // for every chunk, listed where they are few.
  std::vector<uint64_t> rowTable;
  std::vector<int32_t> rowLists;
  {
    std::vector<int64_t> seen(size_t(v), -1); // per vertex: last chunk
    std::vector<int32_t> list;
    auto add = [&](int64_t interval) {
      const int64_t lo = bounds[size_t(interval)];
      const int64_t rows = bounds[size_t(interval) + 1] - lo;
      std::sort(list.begin(), list.end());
      uint64_t first = kNotListed, crc = 0;
      if (int64_t(list.size()) * kFewRows <= rows) {
        first = rowLists.size();
        for (int32_t &r : list)
          r -= int32_t(lo);
        rowLists.insert(rowLists.end(), list.begin(), list.end());
        crc = crcOf(list.data(), list.size() * sizeof(int32_t));
      }
      rowTable.insert(rowTable.end(), {uint64_t(list.size()), first, crc});
      list.clear();
    };
    for (int64_t j = 0; j < parts; ++j)
      for (int64_t i = 0; i < parts; ++i) {
        const int64_t c = j * parts + i;
        const ChunkEdge *at = chunkEdges.data() + table[size_t(3 * c)];
        const ChunkEdge *end = at + table[size_t(3 * c + 1)];
        for (const ChunkEdge *p = at; p < end; ++p)
          if (seen[size_t(p->src)] != c) {
            seen[size_t(p->src)] = c;
            list.push_back(p->src);
          }
        add(i);
        for (const ChunkEdge *p = at; p < end; ++p) // sorted by destination
          if (list.empty() || list.back() != p->dst)
            list.push_back(p->dst);
        add(j);
      }
  }
  const int64_t f = rows ? rows->width
                   : d.features.rows() == v && d.features.shape().size() == 2
                       ? d.features.shape()[1]
                       : 0;
  // Per interval (filled in as the rows are written when they stream).
  std::vector<uint32_t> featureCrcs(size_t(parts), 0);
  uint32_t featuresCrc = 0;
  for (int64_t j = 0; j < parts && !rows; ++j) {
    int64_t lo = bounds[size_t(j)], hi = bounds[size_t(j) + 1];
    featureCrcs[size_t(j)] =
        crcOf(f ? d.features.f32() + lo * f : nullptr, uint64_t((hi - lo) * f) * 4);
  }
  std::vector<int32_t> labels = d.labels;
  labels.resize(size_t(v), -1);

  struct Out {
    uint32_t kind;
    const void *data;
    uint64_t bytes;
  };
  auto bytesOf = [](const auto &vec) {
    return uint64_t(vec.size() * sizeof(vec[0]));
  };
  std::vector<Out> outs{
      {InOffsets, g.inOffsets.data(), bytesOf(g.inOffsets)},
      {InSources, g.inSources.data(), bytesOf(g.inSources)},
      {InEdgeIds, g.inEdgeIds.data(), bytesOf(g.inEdgeIds)},
      {OutOffsets, g.outOffsets.data(), bytesOf(g.outOffsets)},
      {OutTargets, g.outTargets.data(), bytesOf(g.outTargets)},
      {OutEdgeIds, g.outEdgeIds.data(), bytesOf(g.outEdgeIds)},
      {Bounds, bounds.data(), bytesOf(bounds)},
      {ChunkTable, table.data(), bytesOf(table)},
      {ChunkEdges, chunkEdges.data(), bytesOf(chunkEdges)},
      {Features, f && !rows ? d.features.f32() : nullptr, uint64_t(v * f) * 4},
      {FeatureCrcs, featureCrcs.data(), bytesOf(featureCrcs)},
      {Labels, labels.data(), bytesOf(labels)},
      {Train, d.train.data(), bytesOf(d.train)},
      {Val, d.val.data(), bytesOf(d.val)},
      {Test, d.test.data(), bytesOf(d.test)},
      {ChunkRowTable, rowTable.data(), bytesOf(rowTable)},
      {ChunkRows, rowLists.data(), bytesOf(rowLists)}};

  std::vector<char> header(kHeaderBytes, 0);
  std::memcpy(header.data(), kMagic, 8);
  put<uint32_t>(header, 8, kGraphFileVersion);
  put<uint32_t>(header, 12, uint32_t(kHeaderBytes));
  put<int64_t>(header, 16, v);
  put<int64_t>(header, 24, e);
  put<int64_t>(header, 32, f);
  put<int64_t>(header, 40, d.numClasses);
  put<int64_t>(header, 48, parts);
  put<int64_t>(header, 56, int64_t(d.train.size()));
  put<int64_t>(header, 64, int64_t(d.val.size()));
  put<int64_t>(header, 72, int64_t(d.test.size()));
  put<uint32_t>(header, 80, uint32_t(outs.size()));
  uint64_t at = kHeaderBytes;
  for (size_t k = 0; k < outs.size(); ++k) {
    size_t h = kSectionsAt + k * kSectionBytes;
    put<uint32_t>(header, h, outs[k].kind);
    put<uint64_t>(header, h + 8, at);
    put<uint64_t>(header, h + 16, outs[k].bytes);
    if (outs[k].data || !outs[k].bytes)
      put<uint32_t>(header, h + 24, crcOf(outs[k].data, outs[k].bytes));
    at = alignUp(at + outs[k].bytes);
  }
  std::string name = d.name.substr(0, kNameBytes - 1);
  std::memcpy(header.data() + kNameAt, name.data(), name.size());

  // Written beside the target, flushed, then renamed over it: a reader
  // never sees a partial file, and a failed write leaves nothing behind.
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return ioError(path, "cannot create its temporary file " + tmp);
  auto fail = [&](const std::string &what) {
    llvm::Error err = ioError(path, what + " (its temporary file " + tmp + ")");
    ::close(fd);
    ::unlink(tmp.c_str());
    return err;
  };
  auto writeAll = [&](const void *data, uint64_t bytes, uint64_t offset) {
    const char *p = static_cast<const char *>(data);
    while (bytes > 0) {
      ssize_t n = ::pwrite(fd, p, size_t(std::min<uint64_t>(bytes, 1u << 30)),
                           off_t(offset));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        if (n == 0)
          errno = EIO;
        return false;
      }
      p += n;
      bytes -= uint64_t(n);
      offset += uint64_t(n);
    }
    return true;
  };
  std::vector<float> buffer;
  for (size_t k = 0; k < outs.size(); ++k) {
    size_t h = kSectionsAt + k * kSectionBytes;
    uint64_t offset = get<uint64_t>(header, h + 8);
    if (outs[k].kind == Features && rows && f) {
      // Streamed rows: made, checksummed and written interval by interval.
      for (int64_t j = 0; j < parts; ++j) {
        int64_t lo = bounds[size_t(j)], hi = bounds[size_t(j) + 1];
        buffer.resize(size_t((hi - lo) * f));
        rows->fill(lo, hi, buffer.data());
        uint64_t bytes = uint64_t(buffer.size()) * 4;
        featureCrcs[size_t(j)] = crcOf(buffer.data(), bytes);
        featuresCrc = crc32Update(featuresCrc, buffer.data(), size_t(bytes));
        if (!writeAll(buffer.data(), bytes, offset + uint64_t(lo * f) * 4))
          return fail("cannot write section features");
      }
      put<uint32_t>(header, h + 24, featuresCrc);
      continue;
    }
    if (outs[k].kind == FeatureCrcs && rows) // known now
      put<uint32_t>(header, h + 24, crcOf(featureCrcs.data(), outs[k].bytes));
    if (outs[k].bytes && !writeAll(outs[k].data, outs[k].bytes, offset))
      return fail(std::string("cannot write section ") + kindName(outs[k].kind));
  }
  // The header last: its section checksums are known now.
  put<uint32_t>(header, kHeaderBytes - 4, crcOf(header.data(), kHeaderBytes - 4));
  if (!writeAll(header.data(), kHeaderBytes, 0))
    return fail("cannot write the header");
  if (::ftruncate(fd, off_t(at)) != 0)
    return fail("cannot size the file");
  if (::fsync(fd) != 0)
    return fail("cannot flush the file to disk");
  if (::close(fd) != 0) {
    llvm::Error err = ioError(path, "cannot close its temporary file " + tmp);
    ::unlink(tmp.c_str());
    return err;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    llvm::Error err = ioError(path, "cannot rename " + tmp + " to");
    ::unlink(tmp.c_str());
    return err;
  }
  return llvm::Error::success();
}

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

GraphFileChunks::GraphFileChunks(GraphFile &file, bool selfLoops,
                                 int64_t partEdges)
    : file(file), selfLoops(selfLoops), partEdges(std::max<int64_t>(1, partEdges)) {}

std::shared_ptr<GraphFileChunks::PartArrays> GraphFileChunks::takeArrays() {
  // A view being computed, one ready and one being read (ChunkReadAhead)
  // are the most in use at once; keep a few more than that.
  constexpr size_t kKeep = 2;
  std::unique_ptr<PartArrays> arrays;
  {
    std::lock_guard<std::mutex> lock(pool->mutex);
    if (!pool->spare.empty()) {
      arrays = std::move(pool->spare.back());
      pool->spare.pop_back();
    }
  }
  if (!arrays)
    arrays = std::make_unique<PartArrays>();
  return std::shared_ptr<PartArrays>(
      arrays.release(), [pool = pool](PartArrays *done) {
        std::unique_ptr<PartArrays> owned(done);
        std::lock_guard<std::mutex> lock(pool->mutex);
        if (pool->spare.size() < kKeep)
          pool->spare.push_back(std::move(owned));
      });
}

std::vector<int64_t>
GraphFileChunks::chunkEdgeCounts(const std::vector<int32_t> &bounds) {
  if (bounds != file.bounds())
    return {};
  const int64_t parts = int64_t(bounds.size()) - 1;
  std::vector<int64_t> counts(size_t(parts * parts));
  for (int64_t i = 0; i < parts; ++i)
    for (int64_t j = 0; j < parts; ++j)
      counts[size_t(i * parts + j)] =
          file.chunkEdgeCount(i, j) +
          (selfLoops && i == j ? bounds[size_t(i) + 1] - bounds[size_t(i)] : 0);
  return counts;
}

std::vector<int64_t>
GraphFileChunks::chunkRowCounts(bool reversed,
                                const std::vector<int32_t> &bounds) {
  const int64_t parts = int64_t(bounds.size()) - 1;
  if (bounds != file.bounds() || !file.hasChunkRows() || parts < 2)
    return {};
  // Chunk (i, j) reads the sources in i of the file's chunk (i, j), or
  // reversed the destinations in i of the file's chunk (j, i); a self loop
  // on every row makes a diagonal chunk read all of its interval.
  std::vector<int64_t> counts(size_t(parts * parts));
  for (int64_t i = 0; i < parts; ++i)
    for (int64_t j = 0; j < parts; ++j)
      counts[size_t(i * parts + j)] =
          selfLoops && i == j ? int64_t(bounds[size_t(i) + 1] - bounds[size_t(i)])
          : reversed          ? file.chunkRowCount(j, i, /*targets=*/true)
                              : file.chunkRowCount(i, j, /*targets=*/false);
  return counts;
}

llvm::Expected<std::shared_ptr<const std::vector<int32_t>>>
GraphFileChunks::chunkRows(bool reversed, const std::vector<int32_t> &bounds,
                           int64_t i, int64_t j) {
  if (bounds != file.bounds() || (selfLoops && i == j))
    return nullptr;
  return reversed ? file.readChunkRows(j, i, /*targets=*/true)
                  : file.readChunkRows(i, j, /*targets=*/false);
}

llvm::Error GraphFileChunks::forEachPart(bool reversed,
                                         const std::vector<int32_t> &bounds,
                                         int64_t i, int64_t j,
                                         const PartFn &fn) {
  if (bounds != file.bounds())
    return llvm::createStringError(
        file.filePath() + ": the run's " + std::to_string(bounds.size() - 1) +
        " row intervals are not the graph file's " +
        std::to_string(file.bounds().size() - 1) +
        " (its chunk index): convert it with --intervals " +
        std::to_string(bounds.size() - 1));
  // In-edges of rows in j from sources in i: the file's chunk (i, j);
  // out-edges of rows in j to targets in i: chunk (j, i), each part
  // placed by source. Parts are runs of the file's records (sorted by
  // destination, source, id), so each row's edges keep their order across
  // parts.
  const int64_t fi = reversed ? j : i, fj = reversed ? i : j;
  const int64_t total = file.chunkEdgeCount(fi, fj);
  const int32_t lo = bounds[size_t(j)], hi = bounds[size_t(j) + 1];
  const int32_t numInput = int32_t(file.info().numEdges);
  const bool loops = selfLoops && i == j;
  auto key = [](const ChunkEdge &e) { return std::make_tuple(e.dst, e.src, e.id); };
  const int64_t parts = std::max<int64_t>(1, (total + partEdges - 1) / partEdges);
  int32_t nextLoop = lo; // the first self loop not yet in a part
  int32_t lastRow = lo;  // in-edges: the destination of the last record so
                         // far (records ascend by it, across parts too)
  uint32_t crc = 0;
  // Scratch kept by the thread that reads (each chunk would otherwise map
  // and zero fresh pages).
  thread_local MappedVector<ChunkEdge> list, merged;
  thread_local MappedVector<int64_t> at;
  for (int64_t part = 0, first = 0; part < parts; ++part) {
    const bool last = part + 1 == parts;
    const int64_t count = std::min(partEdges, total - first);
    list.resize(size_t(count));
    if (llvm::Error e = file.readChunkPart(fi, fj, first, count, list.data(), &crc))
      return e;
    first += count;
    if (loops) {
      // Self loops (v, v) with Graph::build's ids, each in the part where
      // the file's order puts it (before the next part's first record),
      // merged into the part's records in that order.
      ChunkEdge next{};
      if (!last)
        if (llvm::Error e = file.readChunkPart(fi, fj, first, 1, &next, nullptr))
          return e;
      merged.clear();
      merged.reserve(list.size() + size_t(hi - nextLoop));
      auto in = list.begin();
      for (; nextLoop < hi; ++nextLoop) {
        ChunkEdge loop{nextLoop, nextLoop, numInput + nextLoop};
        if (!last && !(key(loop) < key(next)))
          break;
        for (; in != list.end() && key(*in) < key(loop); ++in)
          merged.push_back(*in);
        merged.push_back(loop);
      }
      merged.insert(merged.end(), in, list.end());
      list.swap(merged);
    }
    // A CSR over the rows of interval j. The records are in the file's
    // order (destination, source, id): for in-edges that is the CSR's own
    // order, copied through in one pass; for out-edges, placing them
    // stably by their row gives Graph's order (row, other end, id) in
    // linear time.
    std::shared_ptr<PartArrays> arrays = takeArrays();
    arrays->offsets.assign(size_t(hi - lo) + 1, 0);
    arrays->others.resize(list.size());
    arrays->ids.resize(list.size());
    const int32_t otherLo = bounds[size_t(i)], otherHi = bounds[size_t(i) + 1];
    auto outside = [&] {
      return llvm::createStringError(
          file.filePath() + ": chunk (" + std::to_string(fi) + ", " +
          std::to_string(fj) + ") holds an edge outside it");
    };
    if (!reversed) {
      int64_t *offsets = arrays->offsets.data();
      int32_t *others = arrays->others.data(), *ids = arrays->ids.data();
      const ChunkEdge *records = list.data();
      int32_t previous = lo;
      for (size_t k = 0; k < list.size(); ++k) {
        const ChunkEdge &e = records[k];
        if (e.dst < lastRow || e.dst >= hi || e.src < otherLo ||
            e.src >= otherHi) {
          if (e.dst >= lo && e.dst < lastRow)
            return llvm::createStringError(
                file.filePath() + ": chunk (" + std::to_string(fi) + ", " +
                std::to_string(fj) +
                ") holds its edges out of order (by destination)");
          return outside();
        }
        lastRow = e.dst;
        // Rows up to this edge's end where every edge before it does.
        for (; previous < e.dst; ++previous)
          offsets[size_t(previous - lo) + 1] = int64_t(k);
        others[k] = e.src;
        ids[k] = e.id;
      }
      for (; previous < hi; ++previous)
        offsets[size_t(previous - lo) + 1] = int64_t(list.size());
    } else {
      for (const ChunkEdge &e : list) {
        if (e.src < lo || e.src >= hi || e.dst < otherLo || e.dst >= otherHi)
          return outside();
        ++arrays->offsets[size_t(e.src - lo) + 1];
      }
      for (size_t r = 1; r < arrays->offsets.size(); ++r)
        arrays->offsets[r] += arrays->offsets[r - 1];
      at.assign(arrays->offsets.begin(), arrays->offsets.end() - 1);
      for (const ChunkEdge &e : list) {
        int64_t k = at[size_t(e.src - lo)]++;
        arrays->others[size_t(k)] = e.dst;
        arrays->ids[size_t(k)] = e.id;
      }
    }
    list.clear();
    // The whole chunk's checksum is known before its last part runs; a
    // mismatch stops the run.
    if (last)
      if (llvm::Error e = file.checkChunk(fi, fj, crc))
        return e;
    ChunkView view;
    view.offsets = arrays->offsets.data() - lo; // indexed by global row
    view.others = arrays->others.data();
    view.edgeIds = arrays->ids.data();
    view.numEdges = int64_t(arrays->others.size());
    view.hold = arrays;
    if (llvm::Error e = fn(view, last))
      return e;
  }
  return llvm::Error::success();
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

llvm::Expected<Dataset> saga::loadDataset(const std::string &path,
                                          const VertexArrays &arrays) {
  if (arrays.empty())
    return loadDataset(path);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return ioError(path, "cannot open");
  if (S_ISDIR(st.st_mode) || isGraphFile(path) || isNpzFile(path))
    return llvm::createStringError(
        path + " has its own vertex arrays; --features, --labels and "
               "--split go with a graph-only file (Matrix Market, an edge "
               "list)");
  auto edges = isMatrixMarketFile(path) ? loadMatrixMarket(path)
                                        : loadEdgeList(path);
  if (!edges)
    return edges.takeError();
  return attachVertexArrays(std::move(*edges), path, arrays);
}

llvm::Expected<Dataset> saga::loadDataset(const std::string &path,
                                          const VertexArrays &arrays,
                                          const std::string &format) {
  if (format.empty())
    return loadDataset(path, arrays);
  const bool graphOnly = format == "mtx" || format == "edgelist";
  if (!graphOnly && format != "planetoid" && format != "ogb" &&
      format != "npz" && format != "sgf")
    return llvm::createStringError(
        "--format: '" + format +
        "' is not planetoid, ogb, npz, sgf, mtx or edgelist");
  if (!graphOnly && !arrays.empty())
    return llvm::createStringError(
        path + " (" + format + ") has its own vertex arrays; --features, "
        "--labels and --split go with --format mtx or edgelist");
  if (format == "planetoid")
    return loadPlanetoid(path);
  if (format == "ogb")
    return loadOgbFolder(path);
  if (format == "npz")
    return loadNpzDataset(path);
  if (format == "sgf") {
    auto file = GraphFile::open(path);
    if (!file)
      return file.takeError();
    return (*file)->readAll();
  }
  auto edges = format == "mtx" ? loadMatrixMarket(path) : loadEdgeList(path);
  if (!edges)
    return edges.takeError();
  return attachVertexArrays(std::move(*edges), path, arrays);
}

llvm::Expected<Dataset> saga::loadDataset(const std::string &path) {
  if (isSyntheticSpec(path))
    return loadSyntheticDataset(path);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return ioError(path, "cannot open");
  if (S_ISDIR(st.st_mode))
    return isOgbFolder(path) ? loadOgbFolder(path) : loadPlanetoid(path);
  if (isGraphFile(path)) {
    auto file = GraphFile::open(path);
    if (!file)
      return file.takeError();
    return (*file)->readAll();
  }
  if (isNpzFile(path))
    return loadNpzDataset(path);
  if (isMatrixMarketFile(path))
    return attachVertexArrays(EdgeList(), path, VertexArrays());
  return llvm::createStringError(
      path + ": not a dataset Saga reads: not a Planetoid folder, a Saga "
             "graph file (sagac convert writes one) or a NumPy .npz archive "
             "(a Matrix Market file or an edge list needs --features, "
             "--labels and --split)");
}
