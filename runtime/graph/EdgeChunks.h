//===- EdgeChunks.h - a CSR split by the interval of the other end -*- C++ -*-===//
//
// NGra's 2-D chunks over one CSR order: the vertices at the edges' other
// ends (sources for the in-edge CSR, targets for the out-edge CSR) are cut
// into P contiguous intervals, and chunk i keeps, for every row, the edges
// whose other end lies in interval i. A propagation run chunk by chunk reads
// one interval's rows at a time: the interval stays in cache (in-memory
// runs) or is the only part resident (out-of-core). Rows keep their edges in
// CSR order within a chunk, and a row's edges in chunk i precede those in
// chunk i + 1, so walking the chunks in order visits every row's edges in
// the unchunked order.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_GRAPH_EDGECHUNKS_H
#define SAGA_RUNTIME_GRAPH_EDGECHUNKS_H

#include "runtime/graph/Graph.h"
#include "support/Intervals.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace saga {

struct EdgeChunks {
  /// Interval i of the other end is [bounds[i], bounds[i + 1]).
  std::vector<int32_t> bounds;
  struct Chunk {
    std::vector<int64_t> offsets; // numVertices + 1, over all rows
    std::vector<int32_t> others;  // the edges' other ends
    std::vector<int32_t> edgeIds;
  };
  std::vector<Chunk> chunks;

  size_t numChunks() const { return chunks.size(); }
  /// Bytes held by the chunk index.
  size_t bytes() const;

  /// Splits a CSR (rows by `offsets`; each row's edges sorted by their
  /// other end, as Graph builds them) at `bounds` (ascending, from 0 to the
  /// vertex count).
  static EdgeChunks build(const std::vector<int64_t> &offsets,
                          const std::vector<int32_t> &others,
                          const std::vector<int32_t> &edgeIds,
                          std::vector<int32_t> bounds);
  /// How many source intervals make a propagation that reads `rowBytes`
  /// per edge from the other end's rows faster in memory: enough that one
  /// interval's rows fit in half the last-level cache, and only where
  /// edges are dense enough (average degree >= kDenseDegree) for the
  /// reuse to pay for the extra passes over the running reductions;
  /// otherwise 1.
  static int64_t cacheSizedIntervals(int64_t numVertices, int64_t numEdges,
                                     int64_t rowBytes);
  static constexpr int64_t kDenseDegree = 32;
  /// The last-level cache's size in bytes (sysconf; 32 MiB if unknown).
  static int64_t lastLevelCacheBytes();

  /// `parts` intervals of (nearly) equal vertex counts over [0, n).
  static std::vector<int32_t> equalIntervals(int32_t n, int64_t parts);
};

/// One 2-D chunk as a kernel reads it: the edges whose row (destination,
/// or source when reversed) lies in row interval j and whose other end lies
/// in interval i, as a CSR over the rows of interval j. `offsets` is
/// indexed by the global row id (offsets[lo] .. offsets[hi]); `others` and
/// `edgeIds` hold the chunk's edges in CSR order. `hold` keeps the arrays
/// alive when the source made them for this request.
struct ChunkView {
  const int64_t *offsets = nullptr;
  const int32_t *others = nullptr;
  const int32_t *edgeIds = nullptr;
  int64_t numEdges = 0;
  std::shared_ptr<const void> hold;
  /// The edges' ids in the graph where edgeIds holds other numbers (chunk
  /// order: chunked::forEachKernelPart); null: edgeIds. Dropout over edges
  /// keys its masks by them.
  const int32_t *keys = nullptr;
  const int32_t *edgeKeys() const { return keys ? keys : edgeIds; }
};

/// Chunk order (PlanMemory::chunkEdges): a chunk's edges numbered from
/// `first` as the in-edge CSR orders them (destination, source, id). For a
/// view of in-edges (rows: destinations in [rowLo, rowHi)) that is the
/// view's own order; for out-edges (`reversed`: rows are sources, the
/// other ends destinations in [otherLo, otherHi)) each edge's rank by
/// destination, a destination's edges keeping the view's order (by
/// source, then id). `numbers` is indexed like view.edgeIds: positions
/// view.offsets[rowLo] .. view.offsets[rowHi] are set.
void numberInChunkOrder(const ChunkView &view, bool reversed, int64_t rowLo,
                        int64_t rowHi, int32_t otherLo, int32_t otherHi,
                        int64_t first, int32_t *numbers);

/// Where the chunked executor gets its chunks: the graph in memory, or a
/// graph file read chunk by chunk (GraphFileChunks).
class ChunkSource {
public:
  using PartFn = std::function<llvm::Error(const ChunkView &, bool last)>;
  virtual ~ChunkSource();
  /// Chunk (i, j) over the intervals `bounds`, in-edges or (reversed)
  /// out-edges, handed to `fn` in one or more parts, in order: each part a
  /// CSR over the rows of interval j, every row's edges across the parts
  /// in the chunk's order (a row's edges may continue in the next part:
  /// kernels resume its reduction). A source reading from a file bounds
  /// the memory a part takes this way, however skewed the chunk.
  virtual llvm::Error forEachPart(bool reversed,
                                  const std::vector<int32_t> &bounds,
                                  int64_t i, int64_t j, const PartFn &fn) = 0;
  /// Which chunks over `bounds` hold edges: P x P flags, [i * P + j] for
  /// the in-edges of interval j's rows from sources in interval i; empty
  /// when not known (then every chunk may). The planner loads no source
  /// rows for an empty chunk. By default, from chunkEdgeCounts.
  virtual std::vector<uint8_t> occupancy(const std::vector<int32_t> &bounds);
  /// The rows of interval i that chunk (i, j) reads at its other end
  /// (sources; targets when `reversed`), ascending, relative to bounds[i];
  /// null when not known; an error when the source fails to read them.
  /// The plan may load only these (NGra's selective loading).
  virtual llvm::Expected<std::shared_ptr<const std::vector<int32_t>>>
  chunkRows(bool reversed, const std::vector<int32_t> &bounds, int64_t i,
            int64_t j);
  /// Their counts for every chunk: P x P, [i * P + j]; empty when not known.
  virtual std::vector<int64_t> chunkRowCounts(bool reversed,
                                              const std::vector<int32_t> &bounds);
  /// How many edges each chunk over `bounds` holds: P x P, [i * P + j] for
  /// the in-edges of interval j's rows from sources in interval i (a
  /// model's self loops included); empty when not known (then edge values
  /// stay whole: PlanMemory::chunkEdges).
  virtual std::vector<int64_t> chunkEdgeCounts(const std::vector<int32_t> &bounds);
  /// Whether chunks come from storage (a file), worth reading ahead of the
  /// kernels on another thread (runtime/memory/ChunkReadAhead.h).
  virtual bool fromStorage() const { return false; }
};

/// Chunk indexes of one graph, built on first use and kept: per direction
/// (in-edges for propagations, out-edges for reversed ones) and chunk count.
class EdgeChunkCache : public ChunkSource {
public:
  explicit EdgeChunkCache(const Graph &graph) : graph(graph) {}
  /// One part: a view into get(reversed, bounds), or the graph's own CSR
  /// when there is one interval.
  llvm::Error forEachPart(bool reversed, const std::vector<int32_t> &bounds,
                          int64_t i, int64_t j, const PartFn &fn) override;
  /// From the graph's in-CSR (one pass over its edges).
  std::vector<int64_t> chunkEdgeCounts(const std::vector<int32_t> &bounds) override;
  /// From the chunk index at these bounds (one pass over its edges, kept).
  llvm::Expected<std::shared_ptr<const std::vector<int32_t>>>
  chunkRows(bool reversed, const std::vector<int32_t> &bounds, int64_t i,
            int64_t j) override;
  std::vector<int64_t> chunkRowCounts(bool reversed,
                                      const std::vector<int32_t> &bounds) override;
  const EdgeChunks &get(bool reversed, int64_t parts);
  /// The chunks over intervals with these bounds.
  const EdgeChunks &get(bool reversed, const std::vector<int32_t> &bounds);
  const Graph &graphOf() const { return graph; }

private:
  const Graph &graph;
  std::mutex mutex;
  std::map<std::pair<bool, std::vector<int32_t>>, std::unique_ptr<EdgeChunks>>
      built;
  using ChunkRowLists = std::vector<std::shared_ptr<const std::vector<int32_t>>>;
  /// Per direction and bounds: each chunk's other-end rows (P x P).
  const ChunkRowLists &rowLists(bool reversed,
                                const std::vector<int32_t> &bounds);
  std::map<std::pair<bool, std::vector<int32_t>>, ChunkRowLists> rows;
};

} // namespace saga

#endif // SAGA_RUNTIME_GRAPH_EDGECHUNKS_H
