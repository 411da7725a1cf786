//===- GraphPart.h - one part of a partitioned graph, with its halo -*- C++ -*-===//
//
// A worker of a partitioned run holds the rows of its contiguous vertex
// range [begin, end) and the in-edges of those rows; the remote sources of
// those edges are its halo. Locally, rows are numbered owned first (global
// id - begin), then the halo in ascending global id, which groups it by
// owner (parts are contiguous ranges), so the rows part q sends arrive as
// one contiguous block. Local edges are the owned rows' in-edges, numbered
// by their position in the whole graph's destination-sorted CSR minus
// edgeBase (the same number whatever the partitioning).
//
// Every part can be made from the whole graph's structure alone, so each
// worker computes its own part and its peers' send lists without talking.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_DISTRIBUTED_GRAPHPART_H
#define SAGA_RUNTIME_DISTRIBUTED_GRAPHPART_H

#include "runtime/distributed/Partitioner.h"
#include "runtime/graph/Graph.h"
#include "runtime/memory/Tensor.h"

#include <cstdint>
#include <vector>

namespace saga {

struct GraphPart {
  int64_t part = 0, parts = 1;
  int32_t begin = 0, end = 0; // owned global rows
  int64_t edgeBase = 0;       // global CSR position of local edge 0
  /// Remote sources, ascending; rows from part q are halo rows
  /// [haloFrom[q], haloFrom[q + 1]) (parts + 1 entries).
  std::vector<int32_t> halo;
  std::vector<int64_t> haloFrom;
  /// Per part q: the owned local rows that q's halo holds, ascending (in
  /// the order q's halo lists them). Empty for q = part.
  std::vector<std::vector<int32_t>> sendRows;
  /// Owned + halo rows; in-edges of the owned rows (halo rows have none);
  /// out-edges of every local row to the owned rows. No self loops are
  /// added: the whole graph's are among the in-edges.
  Graph local;
  /// `local` in global numbers: sources and targets + begin (halo rows
  /// after the owned ones), edge ids + edgeBase; offsets shared in shape.
  Graph kernelView;
  /// Local edge e is edge edgeIds[e] of the whole graph (per-edge inputs).
  std::vector<int32_t> edgeIds;
  /// Per position of kernelView's in-edge and out-edge CSRs: the edge's id
  /// in the whole graph, by which dropout over edges keys its masks
  /// (saga.edge_keys), as one process does.
  std::vector<int32_t> inEdgeKeys, outEdgeKeys;
  /// Per owned row: all its in-edges come from owned rows (it can be
  /// computed before the halo arrives).
  std::vector<bool> interior;
  std::vector<float> inDegrees;  // whole-graph in-degree of every local row
  std::vector<int32_t> globalIds; // every local row's global id

  int64_t owned() const { return end - begin; }
  int64_t localRows() const { return owned() + int64_t(halo.size()); }
  /// Owned rows whose in-edges are all owned.
  int64_t interiorRows() const;
  /// Rows this part sends per gather (the others' halo rows it owns).
  int64_t sentRows() const;
  /// The local rows (owned, then halo) of a [V, ...] tensor of the whole
  /// graph; i32 rows too.
  Tensor localRowsOf(const Tensor &whole) const;
  /// The local edges' rows of an [E, ...] tensor in edge id order.
  Tensor localEdgesOf(const Tensor &whole) const;
  /// Global vertex ids in [begin, end) as local rows, in the list's order;
  /// the others dropped (a split's vertices that this part owns).
  std::vector<int32_t> ownedLocal(const std::vector<int32_t> &global) const;
};

/// Part `part` of `g` under `p`.
GraphPart makeGraphPart(const Graph &g, const Partitioning &p, int64_t part);

} // namespace saga

#endif // SAGA_RUNTIME_DISTRIBUTED_GRAPHPART_H
