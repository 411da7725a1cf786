//===- Partitioner.h - contiguous vertex partitions, ROC's cost model -*- C++ -*-===//
//
// Partitions are contiguous vertex ranges (of the graph after its degree
// relabelling): bounds[0] = 0 <= bounds[1] <= ... <= bounds[N] = V. Three
// ways to cut them, one interface:
//
//  - equal vertices, equal in-edges (the baselines);
//  - ROC's learned cost: each vertex has cost features (ROC's table: the
//    vertex itself, its in-edges, the runs of consecutive ids among its
//    in-neighbours (how many separate rows a gather touches), their mean
//    length, its out-edges), a partition's features are their sums, and its
//    predicted step time is a non-negative weighted sum of them times the
//    layers' propagated widths. The weights are fitted by non-negative
//    least squares (Lawson-Hanson) to measured per-partition step times;
//    the cut falls where the prefix sum of predicted per-vertex cost crosses
//    equal shares.
//
//  - METIS (recursive bisection, minimising the edge cut of the undirected
//    graph), whose parts are relabelled into contiguous ranges: it returns
//    the VertexOrder that makes them so, and the graph, its inputs and
//    splits are relabelled with it (runtime/graph/Reorder.h).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_DISTRIBUTED_PARTITIONER_H
#define SAGA_RUNTIME_DISTRIBUTED_PARTITIONER_H

#include "runtime/graph/Graph.h"
#include "runtime/graph/Reorder.h"

#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace saga {

struct Partitioning {
  std::vector<int32_t> bounds; // N + 1 entries
  int64_t parts() const { return int64_t(bounds.size()) - 1; }
};

/// ROC's per-vertex cost features, in this order.
enum CostFeature {
  kCostVertex,         // 1
  kCostInEdges,        // in-degree
  kCostNeighbourRuns,  // runs of consecutive ids among the in-neighbours
  kCostMeanRunLength,  // in-degree / runs (0 without in-edges)
  kCostOutEdges,       // out-degree
  kCostFeatures
};
using CostFeatures = std::array<double, kCostFeatures>;
/// The features' names, for files and messages.
const char *costFeatureName(int feature);

/// Vertex v's features.
CostFeatures vertexCostFeatures(const Graph &g, int32_t v);
/// The sums over vertices [begin, end).
CostFeatures rangeCostFeatures(const Graph &g, int32_t begin, int32_t end);

/// min ||A x - b||_2 subject to x >= 0 (Lawson and Hanson's active set
/// method). A is rows x columns, row-major.
std::vector<double> nonNegativeLeastSquares(const std::vector<double> &a,
                                            int64_t rows, int64_t columns,
                                            const std::vector<double> &b);

/// ROC's cost model: predicted seconds of a partition's training step =
/// sum over features f of weight_f * feature_f * (the sum of the layers'
/// propagated widths).
class CostModel {
public:
  explicit CostModel(std::vector<int64_t> widths = {1});
  const std::vector<int64_t> &widths() const { return widths_; }
  const CostFeatures &weights() const { return weights_; }
  void setWeights(const CostFeatures &w) { weights_ = w; }

  /// The model's inputs for vertices [begin, end): the features times the
  /// total width.
  CostFeatures inputs(const Graph &g, int32_t begin, int32_t end) const;
  double predict(const CostFeatures &inputs) const;
  double predictVertex(const Graph &g, int32_t v) const;

  /// A measurement: a partition's inputs and its step's seconds.
  struct Sample {
    CostFeatures inputs;
    double seconds;
  };
  /// Fits the weights to `samples` (all of them so far: refining online is
  /// fitting again with the new ones added); returns the root mean square
  /// relative error of the fit.
  double fit(const std::vector<Sample> &samples);
  /// Refits to `samples` with the current weights as a prior (ROC's online
  /// refinement from the workers' measured steps): the prior, scaled to
  /// the samples' seconds, adds one row per feature pulling its share of a
  /// typical sample towards the prior's, weighted by `priorStrength`, so
  /// that a few samples (one per worker, the same cut each time) move the
  /// weights only as far as they say something. Returns the fit's root mean
  /// square relative error over `samples`.
  double refine(const std::vector<Sample> &samples, double priorStrength);

  /// "saga-cost-model 1", the widths, then one "name weight" line per
  /// feature: saved with a model's parameters (as '# ' comment lines of its
  /// parameter file) and reused for new graphs.
  std::string serialize() const;
  /// A serialized model, or a text (a parameter file) holding one as
  /// '# '-prefixed lines. Errors give the line in `text`.
  static llvm::Expected<CostModel> parse(const std::string &text);

private:
  std::vector<int64_t> widths_;
  CostFeatures weights_{};
};

Partitioning partitionByVertices(const Graph &g, int64_t parts);
Partitioning partitionByInEdges(const Graph &g, int64_t parts);
/// Cut where the prefix sum of the model's per-vertex cost crosses equal
/// shares of the total.
Partitioning partitionByCost(const Graph &g, int64_t parts,
                             const CostModel &model);

/// Row blocks for one process's thread pool cut by the model's cost:
/// `blocks` ranges (fewer where they would round to the same bound), inner
/// bounds rounded to multiples of `align` (ForwardOptions::
/// propagationBlocks).
std::vector<int64_t> rowBlocksByCost(const Graph &g, int64_t blocks,
                                     const CostModel &model, int64_t align);

/// METIS (recursive bisection of the undirected, loop-free graph, edge
/// weights: how many directed edges join the pair) into kMetisLeaves leaves
/// (more when `parts` is larger), the vertices relabelled leaf by leaf
/// (ascending id within a leaf), and the parts runs of whole leaves of
/// about equal size. The relabelling does not depend on `parts`. The bounds
/// are for the relabelled graph, `order` maps input ids to it; `edgeCut`
/// gets the directed edges between parts. Errors say what METIS returned.
constexpr int64_t kMetisLeaves = 64;
llvm::Expected<Partitioning> partitionByMetis(const Graph &g, int64_t parts,
                                              VertexOrder &order,
                                              int64_t *edgeCut = nullptr,
                                              uint64_t seed = 0);

/// A saved partitioning: "saga-partition 1", "method NAME", "vertices V",
/// "bounds b0 .. bN", and, when the parts came with a relabelling (METIS),
/// "order" then newId of every input vertex, one per line. A run reusing it
/// must have N workers and V vertices (parsePartitioning's callers check).
struct SavedPartitioning {
  std::string method;
  int64_t vertices = 0;
  Partitioning parts;
  VertexOrder order; // empty: the input's ids
};
std::string serializePartitioning(const SavedPartitioning &p);
/// Errors name `path` and the line.
llvm::Expected<SavedPartitioning> parsePartitioning(const std::string &text,
                                                    const std::string &path);

/// Directed edges whose ends lie in different parts.
int64_t edgeCut(const Graph &g, const Partitioning &p);

/// max / mean of `values` (1 when they are all equal; 0 for none).
double imbalance(const std::vector<double> &values);

} // namespace saga

#endif // SAGA_RUNTIME_DISTRIBUTED_PARTITIONER_H
