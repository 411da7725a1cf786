//===- Graph.cpp - a directed graph in both CSR orders --------------------===//
//
// Both orders come from three stable counting sorts (LSD radix sort on the
// key (vertex, vertex, id)), O(V + E) time and memory:
//   1. edge ids 0..E'-1 (already in id order) by source -> (src, id);
//   2. that sequence by destination                     -> (dst, src, id),
//      the in-CSR;
//   3. the in-CSR sequence by source                    -> (src, dst, id),
//      the out-CSR.
// The offsets are the exclusive prefix sums of the degree histograms.
//
//===----------------------------------------------------------------------===//

#include "runtime/graph/Graph.h"
#include "runtime/memory/MemoryLimit.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <limits>
#include <string>

using namespace saga;

namespace {
/// Exclusive prefix sum of per-vertex counts (held in offsets[v + 1]) into
/// offsets[0..V].
void prefixSum(std::vector<int64_t> &offsets) {
  offsets[0] = 0;
  for (size_t v = 1; v < offsets.size(); ++v)
    offsets[v] += offsets[v - 1];
}

/// The out-CSR, (src, dst, id), from the in-CSR, (dst, src, id), and the
/// out-degree offsets: the in-CSR's entries stably by source.
void fillOutOrder(Graph &g) {
  const size_t V = size_t(g.numVertices), E = size_t(g.numEdges);
  std::vector<int64_t> cursor(g.outOffsets.begin(), g.outOffsets.end() - 1);
  g.outEdgeIds.resize(E);
  g.outTargets.resize(E);
  for (size_t v = 0; v < V; ++v)
    for (int64_t i = g.inOffsets[v]; i < g.inOffsets[v + 1]; ++i) {
      int64_t o = cursor[size_t(g.inSources[size_t(i)])]++;
      g.outEdgeIds[size_t(o)] = g.inEdgeIds[size_t(i)];
      g.outTargets[size_t(o)] = int32_t(v);
    }
}
} // namespace

std::string Graph::sizeError(int64_t numVertices, int64_t numInput,
                             bool addSelfLoops) {
  int64_t loops = addSelfLoops ? numVertices : 0;
  if (numInput + loops <= kMaxEdges)
    return "";
  return std::to_string(numInput) + " edges" +
         (loops ? " and " + std::to_string(loops) + " self loops" : "") +
         " exceed the " + std::to_string(kMaxEdges) +
         " that 32-bit edge ids can number in one graph";
}

uint64_t Graph::buildBytes(int64_t numVertices, int64_t numInput,
                           bool addSelfLoops) {
  uint64_t v = uint64_t(std::max<int64_t>(numVertices, 0)) + 1;
  uint64_t e = uint64_t(std::max<int64_t>(numInput, 0)) +
               (addSelfLoops ? v - 1 : 0);
  return saturatingAdd(saturatingMul(v, 3 * sizeof(int64_t)),
                       saturatingMul(e, 4 * sizeof(int32_t)));
}

std::string Graph::buildError(int64_t numVertices, int64_t numInput,
                              bool addSelfLoops) {
  if (std::string why = sizeError(numVertices, numInput, addSelfLoops);
      !why.empty())
    return why;
  if (llvm::Error e = checkMemory(
          buildBytes(numVertices, numInput, addSelfLoops),
          "a graph of " + std::to_string(numVertices) + " vertices and " +
              std::to_string(numInput) + " edges" +
              (addSelfLoops ? " (and self loops)" : "")))
    return llvm::toString(std::move(e));
  return "";
}

Graph Graph::build(int32_t numVertices, const std::vector<int32_t> &src,
                   const std::vector<int32_t> &dst, bool addSelfLoops) {
  // Always-on checks: the project builds with NDEBUG and a bad id here would
  // be an out-of-bounds write, so this is a hard error rather than an assert.
  if (numVertices < 0)
    llvm::report_fatal_error("saga::Graph::build: negative vertex count");
  if (src.size() != dst.size())
    llvm::report_fatal_error("saga::Graph::build: src and dst differ in size");
  const int64_t numInput = static_cast<int64_t>(src.size());
  for (int64_t e = 0; e < numInput; ++e)
    if (src[e] < 0 || src[e] >= numVertices || dst[e] < 0 ||
        dst[e] >= numVertices)
      llvm::report_fatal_error(
          ("saga::Graph::build: edge " + std::to_string(e) + " (" +
           std::to_string(src[e]) + " -> " + std::to_string(dst[e]) +
           ") has a vertex id outside [0, " + std::to_string(numVertices) + ")")
              .c_str());

  if (std::string why = buildError(numVertices, numInput, addSelfLoops);
      !why.empty())
    llvm::report_fatal_error(("saga::Graph::build: " + why).c_str());

  Graph g;
  g.numVertices = numVertices;
  g.selfLoops = addSelfLoops;
  const int64_t numEdges = numInput + (addSelfLoops ? numVertices : 0);
  g.numEdges = numEdges;

  // Edge e's endpoints; ids >= numInput are the appended self loops.
  auto srcOf = [&](int64_t e) -> int32_t {
    return e < numInput ? src[e] : static_cast<int32_t>(e - numInput);
  };
  auto dstOf = [&](int64_t e) -> int32_t {
    return e < numInput ? dst[e] : static_cast<int32_t>(e - numInput);
  };

  const size_t V = static_cast<size_t>(numVertices);
  const size_t E = static_cast<size_t>(numEdges);

  // Degree histograms -> offsets.
  g.inOffsets.assign(V + 1, 0);
  g.outOffsets.assign(V + 1, 0);
  for (int64_t e = 0; e < numInput; ++e) {
    ++g.outOffsets[src[e] + 1];
    ++g.inOffsets[dst[e] + 1];
  }
  if (addSelfLoops)
    for (size_t v = 0; v < V; ++v) {
      ++g.outOffsets[v + 1];
      ++g.inOffsets[v + 1];
    }
  prefixSum(g.inOffsets);
  prefixSum(g.outOffsets);

  std::vector<int64_t> cursor(V);

  // 1. ids by source, stable: (src, id).
  std::vector<int32_t> bySrc(E);
  std::copy(g.outOffsets.begin(), g.outOffsets.end() - 1, cursor.begin());
  for (int64_t e = 0; e < numEdges; ++e)
    bySrc[cursor[srcOf(e)]++] = static_cast<int32_t>(e);

  // 2. by destination, stable: (dst, src, id).
  g.inEdgeIds.resize(E);
  g.inSources.resize(E);
  std::copy(g.inOffsets.begin(), g.inOffsets.end() - 1, cursor.begin());
  for (int32_t e : bySrc)
    g.inEdgeIds[cursor[dstOf(e)]++] = e;
  for (size_t i = 0; i < E; ++i)
    g.inSources[i] = srcOf(g.inEdgeIds[i]);

  // 3. the in-order by source, stable: (src, dst, id); bySrc's and the
  // cursors' memory released first, so the peak stays buildBytes.
  std::vector<int32_t>().swap(bySrc);
  std::vector<int64_t>().swap(cursor);
  fillOutOrder(g);
  return g;
}

Graph Graph::buildGrouped(int32_t numVertices,
                          const std::vector<int64_t> &rowEdges,
                          const std::vector<int32_t> &src, bool addSelfLoops) {
  const int64_t rows = int64_t(rowEdges.size()) - 1;
  const int64_t numInput = int64_t(src.size());
  if (numVertices < 0 || rows < 0 || rows > numVertices || rowEdges[0] != 0 ||
      rowEdges.back() != numInput)
    llvm::report_fatal_error("saga::Graph::buildGrouped: row offsets do not "
                             "cover the edges of at most numVertices rows");
  for (int64_t r = 0; r < rows; ++r)
    if (rowEdges[size_t(r + 1)] < rowEdges[size_t(r)])
      llvm::report_fatal_error("saga::Graph::buildGrouped: row offsets "
                               "decrease at row " + llvm::Twine(r));
  for (int64_t e = 0; e < numInput; ++e)
    if (src[size_t(e)] < 0 || src[size_t(e)] >= numVertices)
      llvm::report_fatal_error(
          ("saga::Graph::buildGrouped: edge " + std::to_string(e) +
           " has source " + std::to_string(src[size_t(e)]) + " outside [0, " +
           std::to_string(numVertices) + ")")
              .c_str());
  if (std::string why = buildError(numVertices, numInput, addSelfLoops);
      !why.empty())
    llvm::report_fatal_error(("saga::Graph::buildGrouped: " + why).c_str());

  Graph g;
  g.numVertices = numVertices;
  g.selfLoops = addSelfLoops;
  const size_t V = size_t(numVertices);
  const int64_t numEdges = numInput + (addSelfLoops ? numVertices : 0);
  g.numEdges = numEdges;
  const size_t E = size_t(numEdges);

  // The in-CSR, (dst, src, id): each row's edges in id order (the loop's id
  // after all input ids), stably sorted by source.
  g.inOffsets.resize(V + 1);
  g.inSources.resize(E);
  g.inEdgeIds.resize(E);
  g.outOffsets.assign(V + 1, 0);
  int64_t at = 0;
  for (size_t v = 0; v < V; ++v) {
    g.inOffsets[v] = at;
    const int64_t begin = int64_t(v) < rows ? rowEdges[v] : 0,
                  end = int64_t(v) < rows ? rowEdges[v + 1] : 0;
    const int64_t first = at;
    auto place = [&](int32_t s, int32_t id) {
      // Insertion: rows hold a fan-out's few edges.
      int64_t i = at++;
      while (i > first && g.inSources[size_t(i - 1)] > s) {
        g.inSources[size_t(i)] = g.inSources[size_t(i - 1)];
        g.inEdgeIds[size_t(i)] = g.inEdgeIds[size_t(i - 1)];
        --i;
      }
      g.inSources[size_t(i)] = s;
      g.inEdgeIds[size_t(i)] = id;
      ++g.outOffsets[size_t(s) + 1];
    };
    if (end - begin > 64) { // a long row: its edges sorted whole
      std::vector<std::pair<int32_t, int32_t>> row;
      for (int64_t e = begin; e < end; ++e) {
        row.emplace_back(src[size_t(e)], int32_t(e));
        ++g.outOffsets[size_t(src[size_t(e)]) + 1];
      }
      std::stable_sort(row.begin(), row.end(),
                       [](auto a, auto b) { return a.first < b.first; });
      for (auto [s, id] : row) {
        g.inSources[size_t(at)] = s;
        g.inEdgeIds[size_t(at++)] = id;
      }
    } else {
      for (int64_t e = begin; e < end; ++e)
        place(src[size_t(e)], int32_t(e));
    }
    if (addSelfLoops)
      place(int32_t(v), int32_t(numInput + int64_t(v)));
  }
  g.inOffsets[V] = at;
  prefixSum(g.outOffsets);
  fillOutOrder(g);
  return g;
}

std::vector<float> Graph::inDegrees() const {
  std::vector<float> deg(static_cast<size_t>(numVertices));
  for (int32_t v = 0; v < numVertices; ++v)
    deg[v] = static_cast<float>(inOffsets[v + 1] - inOffsets[v]);
  return deg;
}

std::vector<int64_t> Graph::graphBounds() const {
  if (graphOffsets.empty())
    return {0, int64_t(numVertices)};
  return graphOffsets;
}

std::string Graph::graphOffsetsError() const {
  if (graphOffsets.empty())
    return "";
  if (graphOffsets.size() < 2 || graphOffsets.front() != 0 ||
      graphOffsets.back() != numVertices)
    return "graph offsets must run from 0 to the vertex count (" +
           std::to_string(numVertices) + ")";
  for (size_t g = 1; g < graphOffsets.size(); ++g)
    if (graphOffsets[g] < graphOffsets[g - 1])
      return "graph offsets must not decrease (graph " + std::to_string(g - 1) +
             " ends at " + std::to_string(graphOffsets[g]) +
             ", before it begins at " + std::to_string(graphOffsets[g - 1]) +
             ")";
  return "";
}
