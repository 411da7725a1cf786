//===- NeighborSampler.h - sampled neighbourhoods of seed vertices -*- C++ -*-===//
//
// GraphSAGE-style node-wise sampling for mini-batch training: from a batch
// of seed vertices, each layer's vertices keep up to `fanout` of their
// in-neighbours, chosen uniformly without replacement (-1: all of them).
//
// The result is one small graph in hop order: the seeds are local rows
// [0, levels[0]), the vertices first reached at hop h follow, and
// levels[h] counts the rows within h hops. A vertex keeps the one sample it
// drew at the hop it was first reached, with that hop's fan-out: the seeds
// the last layer's, hop-1 vertices the one before, and so on (a seed's
// neighbours are the same in every layer; DGL draws a fresh sample per
// layer). Layer l's message-flow block is then the in-edges of the rows
// within L - 1 - l hops: its destinations are a prefix of its sources, as in
// DGL's MFGs, so one graph holds every block (`block`).
//
// Choices depend only on (seed, batch key, vertex): the same for any thread
// count, and a vertex's sample never depends on which other vertices are in
// the batch. Edge ids of the graph's added self loops are not candidates (a
// batch graph adds its own).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_SAMPLE_NEIGHBORSAMPLER_H
#define SAGA_RUNTIME_SAMPLE_NEIGHBORSAMPLER_H

#include "runtime/graph/Graph.h"

#include <cstdint>
#include <vector>

namespace saga {

class ThreadPool;

/// A sampled computation graph, local ids in hop order.
struct SampledBatch {
  /// The whole graph's id of each local row.
  std::vector<int32_t> vertices;
  /// levels[h]: rows within h hops of the seeds (levels[0]: the seeds,
  /// levels.back(): all rows); layers + 1 entries.
  std::vector<int64_t> levels;
  /// Sampled edges, src[i] -> dst[i] in local rows, grouped by destination
  /// (rows in order, each row's sources in the whole graph's CSR order).
  std::vector<int32_t> src, dst;
  /// dstEdges[r] .. dstEdges[r + 1]: the edges into row r (every row of
  /// levels[layers - 1] has its sample; farther rows have none).
  std::vector<int64_t> dstEdges;

  int64_t layers() const { return int64_t(levels.size()) - 1; }
  int64_t seeds() const { return levels.empty() ? 0 : levels[0]; }
  /// Layer l's block (0: the input layer): its destinations are rows
  /// [0, *dstRows) and its sources rows [0, *srcRows); its edges are
  /// positions [0, edges) of src/dst.
  void block(int64_t layer, int64_t *dstRows, int64_t *srcRows,
             int64_t *edges) const;
};

class NeighborSampler {
public:
  /// `fanouts` per layer, input layer first (the command line's
  /// `--fanout 10,25`: 10 neighbours for the first layer, 25 for the
  /// second, which the seeds draw); -1 takes every in-neighbour. `graph`
  /// outlives the sampler.
  NeighborSampler(const Graph &graph, std::vector<int64_t> fanouts,
                  uint64_t seed);

  /// The sampled neighbourhood of `seeds` (distinct whole-graph ids);
  /// `batchKey` makes each batch's draw different (e.g. epoch and batch).
  /// Sampling runs over `pool`'s threads when given.
  SampledBatch sample(const std::vector<int32_t> &seeds, uint64_t batchKey,
                      ThreadPool *pool = nullptr);

  const std::vector<int64_t> &fanouts() const { return fanouts_; }

  /// The in-neighbour positions (in g's in-CSR, not counting the added
  /// self loops) that vertex v draws with `fanout` under key (seed,
  /// batchKey): ascending. Exposed for tests.
  void choose(int32_t v, int64_t fanout, uint64_t batchKey,
              std::vector<int64_t> &positions) const;

private:
  /// v's in-edges that may be drawn (not the added self loop).
  int64_t candidates(int32_t v) const;
  /// v's draw with `fanout` from its d candidates: indexes in [0, d),
  /// ascending, min(d, fanout) of them (all d with -1) into `out`.
  void drawIndexes(int32_t v, int64_t d, int64_t fanout, uint64_t batchKey,
                   int64_t *out) const;
  /// The n indexes of v's draw in `picks` to in-CSR positions (`sources`:
  /// to their source vertices), in place. Index i is position begin + i,
  /// except that the added self loop's position stands for the row's last
  /// one: a bijection onto the candidates that needs no search for the
  /// loop (a binary search over a hub's sources was a chain of misses).
  void mapIndexes(int32_t v, int64_t *picks, int64_t n, bool sources) const;

  const Graph &g;
  std::vector<int64_t> fanouts_;
  uint64_t seed;
  /// Per vertex: its local row in the batch being built, valid when its
  /// stamp is the generation (one cache line holds both).
  struct Seen {
    uint32_t stamp;
    int32_t row;
  };
  std::vector<Seen> seen;
  uint32_t generation = 0;
};

} // namespace saga

#endif // SAGA_RUNTIME_SAMPLE_NEIGHBORSAMPLER_H
