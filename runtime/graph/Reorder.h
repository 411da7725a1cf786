//===- Reorder.h - relabelling vertices for locality -----------*- C++ -*-===//
//
// A propagation kernel reads one feature row per edge, at the source's id.
// On a power-law graph most of those reads hit a few thousand hubs; when the
// hubs' ids are scattered over the whole id range, their rows share cache
// lines and pages with rows nobody reads, and the kernel stalls on memory.
// Relabelling the vertices in order of decreasing degree puts the hot rows
// side by side (Wei et al., "Speedup Graph Processing by Graph Ordering",
// SIGMOD 2016, and Balaji & Lucia, IISWC 2018, measure the same effect).
//
// A relabelling changes ids only: edges keep their ids (their position in
// the edge list), so per-edge inputs need no permutation, and every
// per-vertex array (features, labels, splits, outputs) is permuted with the
// same VertexOrder. Results that do not name vertices (losses, accuracies)
// are unchanged up to floating-point summation order, since each vertex's
// in-edges are summed in their new source order.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_REORDER_H
#define SAGA_RUNTIME_REORDER_H

#include "runtime/graph/Loaders.h"
#include "runtime/memory/Tensor.h"

#include <cstdint>
#include <vector>

namespace saga {

/// A permutation of vertex ids: vertex `v` of the input is vertex newId[v]
/// of the relabelled graph; oldId is the inverse.
struct VertexOrder {
  std::vector<int32_t> newId, oldId;
};

/// Vertices by decreasing total degree (in + out over `edges`), ties by
/// increasing id; O(V + E) (a counting sort by degree).
VertexOrder degreeOrder(const EdgeList &edges);

/// Rewrites the endpoints of every edge; edge order (and so edge ids) stays.
void relabel(EdgeList &edges, const VertexOrder &order);

/// Row newId[v] of the result is row v of `rows` (any dtype, any row size).
Tensor permuteRows(const Tensor &rows, const VertexOrder &order);

/// Row v of the result is row newId[v] of `rows`: results of a relabelled
/// graph back in the input's order.
Tensor unpermuteRows(const Tensor &rows, const VertexOrder &order);

/// Relabels a whole dataset: its edges, feature rows, labels, and the
/// vertex lists of its splits (each list keeps its order).
void relabel(Dataset &data, const VertexOrder &order);

} // namespace saga

#endif // SAGA_RUNTIME_REORDER_H
