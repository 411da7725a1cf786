//===- EdgeSplit.h - link prediction's held-out edges -----------*- C++ -*-===//
//
// Link prediction trains on some of a graph's edges and scores the others
// against pairs that are not edges. An EdgeSplit holds the five sets users
// exchange (train_pos, val_pos, val_neg, test_pos, test_neg); splitEdges
// makes one as PyG's RandomLinkSplit and DGL's tutorial do, and .npz files
// carry them (`sagac split-edges`, loadEdgeSplitNpz).
//
// The message-passing graph is train_pos alone: the held-out edges are not
// in it, so a model cannot read the answer from the graph.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_GRAPH_EDGESPLIT_H
#define SAGA_RUNTIME_GRAPH_EDGESPLIT_H

#include "runtime/graph/Loaders.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace saga {

/// Vertex pairs (src[i], dst[i]).
struct VertexPairs {
  std::vector<int32_t> src, dst;
  size_t size() const { return src.size(); }
  void push(int32_t a, int32_t b) {
    src.push_back(a);
    dst.push_back(b);
  }
};

struct EdgeSplit {
  int32_t numVertices = 0;
  /// Whether each pair stands for both directions (an undirected graph):
  /// pairs are then stored with src < dst.
  bool undirected = true;
  VertexPairs trainPos, valPos, valNeg, testPos, testNeg;

  /// The graph to propagate over: trainPos, both ways when undirected
  /// (edge 2i = src -> dst, 2i + 1 = dst -> src, as the loaders list
  /// undirected edges).
  EdgeList messageGraph() const;
};

struct EdgeSplitOptions {
  double valFraction = 0.05, testFraction = 0.1;
  /// Negative pairs per held-out positive (val and test).
  double negativesPerPositive = 1.0;
  uint64_t seed = 0;
  bool undirected = true;
};

/// The graph's distinct pairs (self loops dropped; with `undirected`, u -> v
/// and v -> u one pair) in a seeded random order: the first
/// floor(valFraction * m) are val_pos, the next floor(testFraction * m)
/// test_pos, the rest train_pos (RandomLinkSplit's order). Negatives are
/// uniform pairs of distinct vertices that are no pair of the graph, none
/// drawn twice. Errors: fractions outside [0, 1) or summing to 1 or more, a
/// graph without pairs, too few non-edges for the negatives asked.
llvm::Expected<EdgeSplit> splitEdges(const EdgeList &edges,
                                     const EdgeSplitOptions &options);

/// The five sets as [pairs, 2] int32 arrays named train_pos, val_pos,
/// val_neg, test_pos and test_neg, with num_nodes and undirected (int32
/// scalars of one element).
llvm::Error writeEdgeSplitNpz(const std::string &path, const EdgeSplit &s);

/// An .npz of the five sets for a graph of `numVertices` vertices: each a
/// [pairs, 2] integer array (OGB's and PyG's edge_index.T). `undirected`
/// (the file's own `undirected`, when it has one, must agree) compares
/// pairs both ways. Each problem is one error naming the file, the array
/// and the row: a missing or misshapen array, an id out of range, a self
/// pair, a held-out positive also in train_pos or in the other held-out
/// set, a negative that is a positive.
llvm::Expected<EdgeSplit> loadEdgeSplitNpz(const std::string &path,
                                           int32_t numVertices,
                                           bool undirected = true);

} // namespace saga

#endif // SAGA_RUNTIME_GRAPH_EDGESPLIT_H
