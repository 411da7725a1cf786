//===- PairSet.h - labelled vertex pairs a link loss scores -----*- C++ -*-===//
//
// Link prediction's training step scores vertex pairs: positives (edges of
// the graph, label 1) and sampled negatives (label 0). A PairSet holds them
// with each vertex's incidences, the pairs it is an end of in pair order:
// the loss's gradient on a row sums over them in that order, on every
// device, so no two threads add into one row (no atomics, the same bits
// for any thread count).
//
// Standard library only.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_GRAPH_PAIRSET_H
#define SAGA_RUNTIME_GRAPH_PAIRSET_H

#include <cstdint>
#include <string>
#include <vector>

namespace saga {

struct PairSet {
  int32_t numVertices = 0;
  std::vector<int32_t> src, dst;
  std::vector<float> label; // 1 for a positive pair, 0 for a negative
  /// Vertex v is an end of the pairs incidencePair[k] for k in
  /// [incidenceOffsets[v], incidenceOffsets[v + 1]), ascending; the pair's
  /// other end is incidenceOther[k]. A pair (v, v) is listed twice.
  std::vector<int64_t> incidenceOffsets;
  std::vector<int32_t> incidencePair, incidenceOther;

  int64_t size() const { return int64_t(src.size()); }

  /// The pairs (src[i], dst[i]) labelled label[i], over vertices
  /// [0, numVertices), with their incidences (O(V + pairs)). `error` is set
  /// (and the set left empty) when the arrays differ in length, an id is
  /// out of range or a label is neither 0 nor 1.
  static PairSet make(int32_t numVertices, std::vector<int32_t> src,
                      std::vector<int32_t> dst, std::vector<float> label,
                      std::string *error);
};

} // namespace saga

#endif // SAGA_RUNTIME_GRAPH_PAIRSET_H
