//===- GraphFileWriter.cpp - a dataset written as a graph file (.sgf) -----===//
//
// writeGraphFile: both CSRs, the chunk index over the chunked level's
// intervals (each chunk's edges, their CRC-32, each chunk end's distinct
// rows, listed where they are few), the features (streamed interval by
// interval from FeatureRows when given), labels and splits; then the header
// with every section's checksum. Written beside the target, flushed, then
// renamed over it.
//
//===----------------------------------------------------------------------===//

#include "runtime/graph/GraphFile.h"
#include "runtime/graph/Crc32.h"
#include "runtime/graph/GraphFileFormat.h"

#include "runtime/graph/EdgeChunks.h"
#include "support/Intervals.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

using namespace saga;
using namespace saga::sgf;

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
