//===- Intervals.h - the row intervals every chunked level uses -*- C++ -*-===//
//
// Row blocks of kRowsPerTask rows are the unit of vertex-parallel work, and
// the weight gradient is summed in at most kWeightGradSlices slices of
// whole blocks, so that results do not depend on the thread count. The
// chunked level's row intervals are slice bounds: an executor working
// interval by interval forms every sum over rows exactly as the in-memory
// one does. Graph files (.sgf) cut their chunk index at the same bounds, so
// a run can stream its chunks from the file.
//
// Standard library only: the planner (analysis/) and the runtime share it.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_SUPPORT_INTERVALS_H
#define SAGA_SUPPORT_INTERVALS_H

#include <algorithm>
#include <cstdint>
#include <vector>

namespace saga {

/// Rows per task for vertex-parallel work.
constexpr int64_t kRowsPerTask = 256;
/// Slices of whole row blocks the weight gradient is summed in (fewer when
/// the graph has fewer blocks).
constexpr int64_t kWeightGradSlices = 64;

/// `parts` row intervals over [0, numVertices) (fewer if the graph has
/// fewer weight-gradient slices) whose bounds are slice bounds.
inline std::vector<int32_t> chunkIntervals(int64_t numVertices, int64_t parts) {
  std::vector<int64_t> blocks{0};
  for (int64_t r = kRowsPerTask; r < numVertices; r += kRowsPerTask)
    blocks.push_back(r);
  blocks.push_back(numVertices);
  int64_t numBlocks = int64_t(blocks.size()) - 1;
  int64_t slices = std::min(numBlocks, kWeightGradSlices);
  parts = std::max<int64_t>(1, std::min(parts, slices));
  std::vector<int32_t> bounds;
  for (int64_t j = 0; j <= parts; ++j)
    bounds.push_back(
        int32_t(blocks[size_t((j * slices / parts) * numBlocks / slices)]));
  return bounds;
}

/// A chunk reading at most 1/kFewRows of its source interval's rows may
/// load only those (NGra: "few distinct sources"): the planner's partial
/// reads (analysis/PlanMemory.h) and the row lists a graph file keeps
/// (runtime/graph/GraphFile.h). Gathering scattered rows runs at 1.5-3.5 GB/s on this
/// machine where copying a whole piece runs at 8: above a quarter a
/// partial load saves bytes but no time, and a piece loaded whole may
/// serve a group of chunks.
constexpr int64_t kFewRows = 4;

} // namespace saga

#endif // SAGA_SUPPORT_INTERVALS_H
