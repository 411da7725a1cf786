//===- GraphFileChunks.cpp - graph file chunks for the chunked executor ---===//
//
// GraphFileChunks: the ChunkSource that reads each chunk of a graph file in
// parts of at most partEdges records, merges in the self loops a model adds
// (with Graph::build's ids), turns each part into a CSR over the rows of its
// interval (in-edges in the file's order, out-edges placed by source), and
// checks the whole chunk's CRC-32 before its last part runs. Parts' arrays
// are pooled for reuse.
//
//===----------------------------------------------------------------------===//

#include "runtime/graph/GraphFile.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

using namespace saga;

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
