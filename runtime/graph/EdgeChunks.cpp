//===- EdgeChunks.cpp - a CSR split by the interval of the other end ------===//

#include "runtime/graph/EdgeChunks.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace saga;

size_t EdgeChunks::bytes() const {
  size_t n = bounds.size() * sizeof(int32_t);
  for (const Chunk &c : chunks)
    n += c.offsets.size() * sizeof(int64_t) +
         (c.others.size() + c.edgeIds.size()) * sizeof(int32_t);
  return n;
}

int64_t EdgeChunks::lastLevelCacheBytes() {
  // sysfs first: in a virtual machine sysconf may report the host's whole
  // last-level cache (320 MiB here, where this VM's share is 32 MiB).
  int64_t best = 0;
  for (int index = 0; index < 8; ++index) {
    std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::ifstream size(dir + "/size"), type(dir + "/type");
    std::string s, t;
    if (!(size >> s) || !(type >> t) || t == "Instruction")
      continue;
    int64_t n = std::atoll(s.c_str());
    if (!s.empty() && (s.back() == 'K' || s.back() == 'k'))
      n <<= 10;
    else if (!s.empty() && s.back() == 'M')
      n <<= 20;
    best = std::max(best, n);
  }
  if (best > 0)
    return best;
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    long bytes = sysconf(name);
    if (bytes > 0)
      return bytes;
  }
  return int64_t(32) << 20;
}

int64_t EdgeChunks::cacheSizedIntervals(int64_t numVertices, int64_t numEdges,
                                        int64_t rowBytes) {
  if (numVertices <= 0 || rowBytes <= 0 ||
      numEdges < kDenseDegree * numVertices)
    return 1;
  int64_t budget = lastLevelCacheBytes() / 2;
  int64_t total = numVertices * rowBytes;
  return std::max<int64_t>(1, (total + budget - 1) / budget);
}

std::vector<int32_t> EdgeChunks::equalIntervals(int32_t n, int64_t parts) {
  parts = std::max<int64_t>(1, std::min<int64_t>(parts, std::max(n, 1)));
  std::vector<int32_t> bounds;
  for (int64_t i = 0; i <= parts; ++i)
    bounds.push_back(int32_t(int64_t(n) * i / parts));
  return bounds;
}

EdgeChunks EdgeChunks::build(const std::vector<int64_t> &offsets,
                             const std::vector<int32_t> &others,
                             const std::vector<int32_t> &edgeIds,
                             std::vector<int32_t> bounds) {
  assert(bounds.size() >= 2 && bounds.front() == 0);
  EdgeChunks result;
  result.bounds = std::move(bounds);
  size_t parts = result.bounds.size() - 1;
  size_t rows = offsets.size() - 1;
  result.chunks.resize(parts);
  // Count each row's edges per interval: the row's edges are sorted by
  // their other end, so each interval's edges are one run of the row.
  for (auto &c : result.chunks)
    c.offsets.assign(rows + 1, 0);
  for (size_t v = 0; v < rows; ++v) {
    size_t chunk = 0;
    for (int64_t p = offsets[v]; p < offsets[v + 1]; ++p) {
      while (others[size_t(p)] >= result.bounds[chunk + 1])
        ++chunk;
      ++result.chunks[chunk].offsets[v + 1];
    }
  }
  for (auto &c : result.chunks) {
    for (size_t v = 0; v < rows; ++v)
      c.offsets[v + 1] += c.offsets[v];
    c.others.resize(size_t(c.offsets[rows]));
    c.edgeIds.resize(size_t(c.offsets[rows]));
  }
  std::vector<int64_t> at(parts);
  for (size_t v = 0; v < rows; ++v) {
    for (size_t c = 0; c < parts; ++c)
      at[c] = result.chunks[c].offsets[v];
    size_t chunk = 0;
    for (int64_t p = offsets[v]; p < offsets[v + 1]; ++p) {
      while (others[size_t(p)] >= result.bounds[chunk + 1])
        ++chunk;
      Chunk &c = result.chunks[chunk];
      c.others[size_t(at[chunk])] = others[size_t(p)];
      c.edgeIds[size_t(at[chunk])] = edgeIds[size_t(p)];
      ++at[chunk];
    }
  }
  return result;
}

const EdgeChunks &EdgeChunkCache::get(bool reversed, int64_t parts) {
  return get(reversed, EdgeChunks::equalIntervals(graph.numVertices, parts));
}

const EdgeChunks &EdgeChunkCache::get(bool reversed,
                                      const std::vector<int32_t> &bounds) {
  std::lock_guard<std::mutex> lock(mutex);
  auto &slot = built[{reversed, bounds}];
  if (!slot) {
    const auto &offsets = reversed ? graph.outOffsets : graph.inOffsets;
    const auto &others = reversed ? graph.outTargets : graph.inSources;
    const auto &ids = reversed ? graph.outEdgeIds : graph.inEdgeIds;
    slot = std::make_unique<EdgeChunks>(
        EdgeChunks::build(offsets, others, ids, bounds));
  }
  return *slot;
}

void saga::numberInChunkOrder(const ChunkView &view, bool reversed,
                              int64_t rowLo, int64_t rowHi, int32_t otherLo,
                              int32_t otherHi, int64_t first,
                              int32_t *numbers) {
  const int64_t begin = view.offsets[rowLo], end = view.offsets[rowHi];
  if (!reversed) {
    for (int64_t p = begin; p < end; ++p)
      numbers[p] = int32_t(first + (p - begin));
    return;
  }
  const int64_t n = end - begin, width = int64_t(otherHi) - otherLo;
  if (n * 4 < width) {
    // Few edges for the interval: sort their places by destination.
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k)
      order[size_t(k)] = begin + k;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return view.others[a] < view.others[b];
    });
    for (int64_t r = 0; r < n; ++r)
      numbers[order[size_t(r)]] = int32_t(first + r);
    return;
  }
  // A counting sort's cursors, one per destination (n >= width / 4: the
  // buffer is no larger than the numbers).
  std::vector<int32_t> at(size_t(width) + 1, 0);
  for (int64_t p = begin; p < end; ++p)
    ++at[size_t(view.others[p] - otherLo) + 1];
  for (size_t r = 1; r < at.size(); ++r)
    at[r] += at[r - 1];
  for (int64_t p = begin; p < end; ++p)
    numbers[p] = int32_t(first + at[size_t(view.others[p] - otherLo)]++);
}

ChunkSource::~ChunkSource() = default;

std::vector<uint8_t>
ChunkSource::occupancy(const std::vector<int32_t> &bounds) {
  std::vector<int64_t> counts = chunkEdgeCounts(bounds);
  std::vector<uint8_t> occupied(counts.size());
  for (size_t c = 0; c < counts.size(); ++c)
    occupied[c] = counts[c] > 0;
  return occupied;
}

llvm::Expected<std::shared_ptr<const std::vector<int32_t>>>
ChunkSource::chunkRows(bool, const std::vector<int32_t> &, int64_t, int64_t) {
  return nullptr;
}

std::vector<int64_t> ChunkSource::chunkRowCounts(bool,
                                                 const std::vector<int32_t> &) {
  return {};
}

const EdgeChunkCache::ChunkRowLists &
EdgeChunkCache::rowLists(bool reversed, const std::vector<int32_t> &bounds) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = rows.find({reversed, bounds});
    if (it != rows.end())
      return it->second;
  }
  const EdgeChunks &chunks = get(reversed, bounds);
  const size_t parts = bounds.size() - 1;
  ChunkRowLists lists(parts * parts);
  std::vector<int64_t> seen; // per row of interval i: the last j reading it
  for (size_t i = 0; i < parts; ++i) {
    const EdgeChunks::Chunk &c = chunks.chunks[i];
    const int32_t base = bounds[i];
    seen.assign(size_t(bounds[i + 1] - base), -1);
    for (size_t j = 0; j < parts; ++j) {
      auto list = std::make_shared<std::vector<int32_t>>();
      for (int64_t e = c.offsets[size_t(bounds[j])];
           e < c.offsets[size_t(bounds[j + 1])]; ++e) {
        int32_t r = c.others[size_t(e)] - base;
        if (seen[size_t(r)] != int64_t(j)) {
          seen[size_t(r)] = int64_t(j);
          list->push_back(r);
        }
      }
      std::sort(list->begin(), list->end());
      lists[i * parts + j] = std::move(list);
    }
  }
  std::lock_guard<std::mutex> lock(mutex);
  return rows.emplace(std::make_pair(reversed, bounds), std::move(lists))
      .first->second;
}

llvm::Expected<std::shared_ptr<const std::vector<int32_t>>>
EdgeChunkCache::chunkRows(bool reversed, const std::vector<int32_t> &bounds,
                          int64_t i, int64_t j) {
  const int64_t parts = int64_t(bounds.size()) - 1;
  if (parts < 2 || bounds.back() != graph.numVertices ||
      int64_t(graph.inSources.size()) != graph.numEdges || i < 0 || j < 0 ||
      i >= parts || j >= parts)
    return nullptr;
  return rowLists(reversed, bounds)[size_t(i * parts + j)];
}

std::vector<int64_t>
EdgeChunkCache::chunkRowCounts(bool reversed,
                               const std::vector<int32_t> &bounds) {
  const int64_t parts = int64_t(bounds.size()) - 1;
  if (parts < 2 || bounds.back() != graph.numVertices ||
      int64_t(graph.inSources.size()) != graph.numEdges)
    return {};
  const ChunkRowLists &lists = rowLists(reversed, bounds);
  std::vector<int64_t> counts(lists.size());
  for (size_t c = 0; c < lists.size(); ++c)
    counts[c] = int64_t(lists[c]->size());
  return counts;
}

std::vector<int64_t> ChunkSource::chunkEdgeCounts(const std::vector<int32_t> &) {
  return {};
}

std::vector<int64_t>
EdgeChunkCache::chunkEdgeCounts(const std::vector<int32_t> &bounds) {
  const int64_t parts = int64_t(bounds.size()) - 1;
  if (parts < 1 || bounds.back() != graph.numVertices ||
      int64_t(graph.inSources.size()) != graph.numEdges)
    return {};
  std::vector<int64_t> counts(size_t(parts * parts), 0);
  // Each row's sources are sorted: walk the intervals along them.
  for (int64_t j = 0; j < parts; ++j)
    for (int32_t v = bounds[size_t(j)]; v < bounds[size_t(j) + 1]; ++v) {
      int64_t i = 0;
      for (int64_t e = graph.inOffsets[size_t(v)];
           e < graph.inOffsets[size_t(v) + 1]; ++e) {
        while (graph.inSources[size_t(e)] >= bounds[size_t(i) + 1])
          ++i;
        ++counts[size_t(i * parts + j)];
      }
    }
  return counts;
}

llvm::Error EdgeChunkCache::forEachPart(bool reversed,
                                        const std::vector<int32_t> &bounds,
                                        int64_t i, int64_t j, const PartFn &fn) {
  if (graph.numEdges > 0 && graph.inSources.empty())
    return llvm::createStringError(
        "the graph's edges are not in memory (it streams from a file)");
  if (bounds.size() == 2)
    return fn(reversed ? ChunkView{graph.outOffsets.data(),
                                   graph.outTargets.data(),
                                   graph.outEdgeIds.data(), graph.numEdges,
                                   nullptr}
                       : ChunkView{graph.inOffsets.data(),
                                   graph.inSources.data(),
                                   graph.inEdgeIds.data(), graph.numEdges,
                                   nullptr},
              true);
  const EdgeChunks::Chunk &c = get(reversed, bounds).chunks[size_t(i)];
  return fn(ChunkView{c.offsets.data(), c.others.data(), c.edgeIds.data(),
                      int64_t(c.others.size()), nullptr},
            true);
}
