//===- GraphDataset.h - datasets of many small graphs -----------*- C++ -*-===//
//
// Graph classification's data (api/GraphTrainer.h): many small graphs,
// each with a class. Read from the TU Dortmund format
// (chrsmrrs.github.io/datasets: NAME_A.txt, NAME_graph_indicator.txt,
// NAME_graph_labels.txt, optional NAME_node_labels.txt and
// NAME_node_attributes.txt in one folder) or from an .npz; batched into
// disjoint unions for training; split into stratified folds for
// cross-validation. Malformed input is an error naming the file and line;
// a dataset whose features and batch of every graph cannot fit is refused
// before they are allocated (runtime/memory/MemoryLimit.h).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_GRAPH_GRAPHDATASET_H
#define SAGA_RUNTIME_GRAPH_GRAPHDATASET_H

#include "runtime/graph/Graph.h"
#include "runtime/memory/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace saga {

struct GraphDataset {
  std::string name;
  /// G + 1 entries: graph g owns vertices [graphOffsets[g], graphOffsets[g+1])
  /// (at least one each).
  std::vector<int64_t> graphOffsets;
  /// Edges in vertex ids, grouped by graph (file order within a graph);
  /// both ends in one graph: graph g's are [edgeOffsets[g],
  /// edgeOffsets[g+1]).
  std::vector<int32_t> src, dst;
  std::vector<int64_t> edgeOffsets;
  /// Per graph, its class in [0, C): the file's values in ascending order.
  std::vector<int32_t> graphLabels;
  /// The file's value of each class (TU uses e.g. -1/1 or 1/2).
  std::vector<int64_t> labelValues;
  /// [V, F]: the one-hot node labels (their values in ascending order),
  /// then the node attributes; a column of ones without either.
  Tensor features;

  int64_t numGraphs() const { return int64_t(graphOffsets.size()) - 1; }
  int32_t numVertices() const { return int32_t(graphOffsets.back()); }
  int32_t numClasses() const { return int32_t(labelValues.size()); }
};

/// The TU dataset in `folder` (its one NAME_graph_indicator.txt names it).
llvm::Expected<GraphDataset> loadTUDataset(const std::string &folder);

/// An .npz of arrays `graph_offsets` (int, G + 1; or `graph_indicator`:
/// int, V, each vertex's 0-based graph, nondecreasing, none skipped),
/// `src` and `dst` (int, E), `graph_labels` (int, G; the classes are its
/// values in ascending order) and optionally `x` (float, [V, F]; default a
/// column of ones).
llvm::Expected<GraphDataset> loadGraphDatasetNpz(const std::string &path);
/// Writes what loadGraphDatasetNpz reads (graph_offsets, src, dst,
/// graph_labels as classes, x).
llvm::Error writeGraphDatasetNpz(const GraphDataset &data,
                                 const std::string &path);

/// A folder: loadTUDataset; a file: loadGraphDatasetNpz.
llvm::Expected<GraphDataset> loadGraphDataset(const std::string &path);

/// A training batch: the disjoint union of some graphs, renumbered in the
/// order given.
struct GraphBatch {
  Graph graph; // with graphOffsets = offsets
  Tensor features;
  /// int32 [V]: each graph's class on its first vertex, -1 elsewhere.
  Tensor labels;
  std::vector<int64_t> offsets;
  std::vector<int32_t> firsts; // each graph's first vertex (its loss row)
};

/// The union of graphs `ids` (each in range; a graph may repeat).
GraphBatch makeGraphBatch(const GraphDataset &data,
                          llvm::ArrayRef<int32_t> ids, bool addSelfLoops);

/// k disjoint folds covering the graphs, each class dealt round-robin in a
/// seeded shuffle: every fold's count of a class is within one of the
/// others'. Each fold ascending.
std::vector<std::vector<int32_t>>
stratifiedFolds(const std::vector<int32_t> &labels, int32_t k, uint64_t seed);

} // namespace saga

#endif // SAGA_RUNTIME_GRAPH_GRAPHDATASET_H
