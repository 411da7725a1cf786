//===- NeighborSampler.cpp - sampled neighbourhoods of seed vertices ------===//

#include "runtime/sample/NeighborSampler.h"

#include "runtime/exec/ThreadPool.h"
#include "runtime/memory/HugePages.h"
#include "support/KeyedStream.h"

#include <algorithm>

using namespace saga;

namespace {
constexpr int64_t kVerticesPerTask = 256;
} // namespace

void SampledBatch::block(int64_t layer, int64_t *dstRows, int64_t *srcRows,
                         int64_t *edges) const {
  const int64_t l = layers();
  *dstRows = levels[size_t(l - 1 - layer)];
  *srcRows = levels[size_t(l - layer)];
  *edges = dstEdges[size_t(*dstRows)];
}

NeighborSampler::NeighborSampler(const Graph &graph,
                                 std::vector<int64_t> fanouts, uint64_t seed)
    : g(graph), fanouts_(std::move(fanouts)), seed(seed) {}

int64_t NeighborSampler::candidates(int32_t v) const {
  return g.inDegree(v) - (g.selfLoops ? 1 : 0);
}

void NeighborSampler::drawIndexes(int32_t v, int64_t d, int64_t fanout,
                                  uint64_t batchKey, int64_t *out) const {
  if (fanout < 0 || fanout >= d) {
    for (int64_t i = 0; i < d; ++i)
      out[i] = i;
    return;
  }
  // Floyd's algorithm: a uniform k-subset of [0, d) in k draws.
  KeyedStream s{streamKey(seed, batchKey, uint64_t(v))};
  int64_t n = 0;
  for (int64_t j = d - fanout; j < d; ++j) {
    int64_t t = int64_t(s.below(uint64_t(j + 1)));
    bool taken = std::find(out, out + n, t) != out + n;
    out[n++] = taken ? j : t;
  }
  std::sort(out, out + n);
}

void NeighborSampler::mapIndexes(int32_t v, int64_t *picks, int64_t n,
                                 bool sources) const {
  const int64_t begin = g.inOffsets[size_t(v)], end = g.inOffsets[size_t(v) + 1];
  int64_t swapped = -1;
  for (int64_t j = 0; j < n; ++j) {
    int64_t p = begin + picks[j];
    int32_t u = g.inSources[size_t(p)];
    // The added loop is v's last in-edge from v (sources ascend; its id
    // follows the data's): index p stands for the row's last position
    // instead, which no index reaches (indexes stop one short of the end).
    if (g.selfLoops && u == v &&
        (p + 1 == end || g.inSources[size_t(p) + 1] != v)) {
      p = end - 1;
      u = g.inSources[size_t(p)];
      swapped = j;
    }
    picks[j] = sources ? int64_t(u) : p;
  }
  if (swapped >= 0) // the last position goes last: positions ascend
    std::rotate(picks + swapped, picks + swapped + 1, picks + n);
}

void NeighborSampler::choose(int32_t v, int64_t fanout, uint64_t batchKey,
                             std::vector<int64_t> &positions) const {
  const int64_t d = candidates(v);
  positions.resize(size_t(fanout < 0 ? d : std::min(d, fanout)));
  drawIndexes(v, d, fanout, batchKey, positions.data());
  mapIndexes(v, positions.data(), int64_t(positions.size()),
             /*sources=*/false);
}

SampledBatch NeighborSampler::sample(const std::vector<int32_t> &seeds,
                                     uint64_t batchKey, ThreadPool *pool) {
  if (seen.size() != size_t(g.numVertices)) {
    seen.assign(size_t(g.numVertices), Seen{0, 0});
    adviseHugePages(seen.data(), seen.size() * sizeof(Seen));
    generation = 0;
  }
  if (++generation == 0) { // wrapped: no stale stamp may match
    std::fill(seen.begin(), seen.end(), Seen{0, 0});
    generation = 1;
  }
  SampledBatch b;
  auto reach = [&](int32_t u) {
    Seen &s = seen[size_t(u)];
    if (s.stamp != generation) {
      s.stamp = generation;
      s.row = int32_t(b.vertices.size());
      b.vertices.push_back(u);
    }
    return s.row;
  };
  for (int32_t s : seeds)
    reach(s);
  b.levels.push_back(int64_t(b.vertices.size()));
  b.dstEdges.push_back(0);
  const int64_t layers = int64_t(fanouts_.size());
  std::vector<int64_t> offsets, picks;
  for (int64_t hop = 1; hop <= layers; ++hop) {
    const int64_t fanout = fanouts_[size_t(layers - hop)];
    const int64_t from = hop == 1 ? 0 : b.levels[size_t(hop - 2)],
                  to = b.levels[size_t(hop - 1)];
    // Each frontier vertex's draw, in parallel, into its slice of `picks`
    // (as source vertex ids).
    offsets.assign(size_t(to - from) + 1, 0);
    // Each frontier vertex's offsets are a cache miss: fetched ahead.
    constexpr int64_t kOffsetsAhead = 16;
    for (int64_t r = from; r < to; ++r) {
      if (r + kOffsetsAhead < to)
        __builtin_prefetch(
            &g.inOffsets[size_t(b.vertices[size_t(r + kOffsetsAhead)])]);
      int64_t d = candidates(b.vertices[size_t(r)]);
      offsets[size_t(r - from) + 1] =
          offsets[size_t(r - from)] + (fanout < 0 ? d : std::min(d, fanout));
    }
    picks.resize(size_t(offsets.back()));
    auto task = [&](int64_t t) {
      const int64_t lo = from + t * kVerticesPerTask,
                    hi = std::min(to, lo + kVerticesPerTask);
      // Every row's draw first (indexes into its candidates; no memory but
      // the offsets, cached by the count above), ...
      for (int64_t r = lo; r < hi; ++r) {
        int32_t v = b.vertices[size_t(r)];
        drawIndexes(v, candidates(v), fanout, batchKey,
                    &picks[size_t(offsets[size_t(r - from)])]);
      }
      // ... then their sources: a cache miss each, fetched two rows ahead.
      constexpr int64_t kRowsAhead = 2;
      auto fetch = [&](int64_t r) {
        const int64_t begin = g.inOffsets[size_t(b.vertices[size_t(r)])];
        for (int64_t i = offsets[size_t(r - from)];
             i < offsets[size_t(r - from) + 1]; ++i)
          __builtin_prefetch(&g.inSources[size_t(begin + picks[size_t(i)])]);
      };
      for (int64_t r = lo; r < std::min(hi, lo + kRowsAhead); ++r)
        fetch(r);
      for (int64_t r = lo; r < hi; ++r) {
        if (r + kRowsAhead < hi)
          fetch(r + kRowsAhead);
        const int64_t at = offsets[size_t(r - from)];
        mapIndexes(b.vertices[size_t(r)], &picks[size_t(at)],
                   offsets[size_t(r - from) + 1] - at, /*sources=*/true);
      }
    };
    int64_t tasks = (to - from + kVerticesPerTask - 1) / kVerticesPerTask;
    if (pool)
      pool->parallelFor(tasks, task);
    else
      for (int64_t t = 0; t < tasks; ++t)
        task(t);
    // New vertices in order of first appearance: the same for any threads.
    // Each source's entry in `seen` is a cache miss: fetched ahead.
    constexpr int64_t kAhead = 16;
    const int64_t drawn = int64_t(picks.size());
    b.vertices.reserve(b.vertices.size() + size_t(drawn));
    b.src.reserve(b.src.size() + size_t(drawn));
    b.dst.reserve(b.dst.size() + size_t(drawn));
    b.dstEdges.reserve(b.dstEdges.size() + size_t(to - from));
    for (int64_t r = from; r < to; ++r) {
      for (int64_t i = offsets[size_t(r - from)];
           i < offsets[size_t(r - from) + 1]; ++i) {
        if (i + kAhead < drawn)
          __builtin_prefetch(&seen[size_t(picks[size_t(i + kAhead)])], 1);
        b.src.push_back(reach(int32_t(picks[size_t(i)])));
        b.dst.push_back(int32_t(r));
      }
      b.dstEdges.push_back(int64_t(b.src.size()));
    }
    b.levels.push_back(int64_t(b.vertices.size()));
  }
  return b;
}
