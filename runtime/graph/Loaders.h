//===- Loaders.h - graph and feature files ----------------------*- C++ -*-===//
//
// Readers for the formats users have. Malformed input is an llvm::Error whose
// message names the file, the line and what was wrong ("cora/edges.txt:17:
// vertex id 2708 is out of range [0, 2708)"); never a crash or a silent
// truncation.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_LOADERS_H
#define SAGA_RUNTIME_LOADERS_H

#include "runtime/graph/Graph.h"
#include "runtime/memory/Tensor.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace saga {

/// An edge list: `src dst` per line.
struct EdgeList {
  int32_t numVertices = 0; // 1 + the largest id, or as given
  std::vector<int32_t> src, dst;
};

/// A node-classification dataset: graph, features, labels, split.
struct Dataset {
  std::string name;
  /// Directed edges: undirected inputs listed both ways, line i of edges.txt
  /// (u v) as edge 2i = u -> v and edge 2i+1 = v -> u (the reverse of e is
  /// e ^ 1).
  EdgeList edges;
  Tensor features;       // [numVertices, numFeatures] f32
  std::vector<int32_t> labels; // -1 where unlabelled
  int32_t numClasses = 0;
  std::vector<int32_t> train, val, test;
};

/// Reads a plain edge list: one `src dst` pair of non-negative integers per
/// line; blank lines and lines starting with '#' or '%' are skipped. With
/// `numVertices` < 0 the vertex count is 1 + the largest id; otherwise ids
/// must be below it. More than `maxEdges` edges is an error at the first
/// line beyond (the default: what 32-bit edge ids can number).
llvm::Expected<EdgeList> loadEdgeList(const std::string &path,
                                      int64_t numVertices = -1,
                                      int64_t maxEdges = Graph::kMaxEdges);

/// Reads a Matrix Market file (SuiteSparse's `.mtx`): a `%%MatrixMarket
/// matrix coordinate pattern|real|integer general|symmetric|skew-symmetric`
/// header, `%` comments, an `M N NNZ` size line (square: M = N vertices),
/// then NNZ 1-based `i j [value]` entries, each the edge i -> j (values are
/// checked and dropped); a symmetric matrix stores its lower triangle and
/// each off-diagonal entry is both edges. Errors name the file and line.
llvm::Expected<EdgeList> loadMatrixMarket(const std::string &path);
/// Whether the file starts with a Matrix Market header.
bool isMatrixMarketFile(const std::string &path);

/// Reads the Planetoid text form (examples/data/<name>/: meta.txt, edges.txt,
/// features.txt, labels.txt, train.txt, val.txt, test.txt; see
/// examples/data/README.md). Undirected edges become both directions.
/// Besides the syntax it checks line counts against meta.txt, self loops and
/// repeated edges, repeated feature entries, label ranges and the splits
/// (labelled, disjoint). A dataset whose meta.txt says its features are
/// `missing` is rejected.
llvm::Expected<Dataset> loadPlanetoid(const std::string &dir);

/// Divides each row by its sum (rows summing to 0 stay 0): the feature
/// preprocessing of the GCN paper's Planetoid experiments.
void rowNormalize(Tensor &features);
/// The same over `n` rows of `f` floats.
void rowNormalize(float *rows, int64_t n, int64_t f);

} // namespace saga

#endif // SAGA_RUNTIME_LOADERS_H
