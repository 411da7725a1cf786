//===- Graph.h - a directed graph in both CSR orders ------------*- C++ -*-===//
//
// Edges are numbered in input order (ids 0..E-1); optional self loops are
// appended after them (ids E..E+V-1). CSR by destination drives pull-style
// gathers; CSR by source drives push-style (backward) propagation. Both keep
// each edge's id, which is the mapping between the two orders and the index
// of per-edge inputs. 32-bit vertex and edge ids (at most 2^31 - 1 edges,
// self loops included: `sizeError` says why a graph is too large, loaders
// and sagac report it, `build` stops with it), 64-bit offsets.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_GRAPH_H
#define SAGA_RUNTIME_GRAPH_H

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace saga {

struct Graph {
  int32_t numVertices = 0;
  int64_t numEdges = 0; // including self loops added by `build`
  bool selfLoops = false;

  // In-edges of v: positions inOffsets[v] .. inOffsets[v+1]-1, with source
  // inSources[i] and edge id inEdgeIds[i]. Sorted by (dst, src, id).
  std::vector<int64_t> inOffsets;
  std::vector<int32_t> inSources;
  std::vector<int32_t> inEdgeIds;

  // Out-edges of u, likewise: outTargets[i], outEdgeIds[i].
  std::vector<int64_t> outOffsets;
  std::vector<int32_t> outTargets;
  std::vector<int32_t> outEdgeIds;

  /// The most edges (self loops included) 32-bit edge ids can number.
  static constexpr int64_t kMaxEdges = std::numeric_limits<int32_t>::max();
  /// Why `numInput` edges plus, with `addSelfLoops`, one loop per vertex
  /// make too large a graph to build; empty when they do not.
  static std::string sizeError(int64_t numVertices, int64_t numInput,
                               bool addSelfLoops);
  /// The bytes `build` allocates for such a graph (both CSR orders and its
  /// counting sort's cursors).
  static uint64_t buildBytes(int64_t numVertices, int64_t numInput,
                             bool addSelfLoops);
  /// sizeError, or else why the graph cannot fit in the memory available
  /// (runtime/memory/MemoryLimit.h); empty when `build` may go ahead.
  static std::string buildError(int64_t numVertices, int64_t numInput,
                                bool addSelfLoops);

  /// Builds both CSR orders from an edge list (src[i] -> dst[i]); with
  /// `addSelfLoops`, appends v -> v for every vertex (self loops already in
  /// the input are kept: such a vertex then has two). Ids must be in range
  /// (loaders check and report; this aborts with a message, in release builds
  /// too), and so must the size (`sizeError`). O(V + E): counting sorts, no per-vertex containers.
  static Graph build(int32_t numVertices, const std::vector<int32_t> &src,
                     const std::vector<int32_t> &dst, bool addSelfLoops);

  /// The graph `build` makes from edges grouped by destination: rows
  /// [0, rowEdges.size() - 1) have in-edges src[rowEdges[r]] ..
  /// src[rowEdges[r + 1] - 1] (edge ids their positions), the rows after
  /// them none. Sorts each row's few edges in place of build's three
  /// passes over all of them: a sampled mini-batch's graph, every batch.
  static Graph buildGrouped(int32_t numVertices,
                            const std::vector<int64_t> &rowEdges,
                            const std::vector<int32_t> &src,
                            bool addSelfLoops);

  /// A batch of graphs (graph classification): the disjoint union of G
  /// graphs, graph g owning vertices [graphOffsets[g], graphOffsets[g+1])
  /// (G + 1 entries from 0 to numVertices, nondecreasing). The model's
  /// readouts (`sum_nodes`, ...) reduce each graph on its own. Empty: the
  /// whole graph is one graph.
  std::vector<int64_t> graphOffsets;
  /// graphOffsets, or {0, numVertices} when it is empty.
  std::vector<int64_t> graphBounds() const;
  /// Why graphOffsets is not a partition of the vertices; empty when it is.
  std::string graphOffsetsError() const;

  int64_t inDegree(int32_t v) const { return inOffsets[v + 1] - inOffsets[v]; }
  /// In-degrees as floats (the `v.deg` of the language).
  std::vector<float> inDegrees() const;
};

} // namespace saga

#endif // SAGA_RUNTIME_GRAPH_H
