//===- GraphPart.cpp - one part of a partitioned graph, with its halo -----===//

#include "runtime/distributed/GraphPart.h"

#include <algorithm>
#include <cstring>

using namespace saga;

int64_t GraphPart::interiorRows() const {
  return std::count(interior.begin(), interior.end(), true);
}

int64_t GraphPart::sentRows() const {
  int64_t n = 0;
  for (const auto &rows : sendRows)
    n += int64_t(rows.size());
  return n;
}

namespace {
/// Rows `rows` of `whole` (4-byte elements of any dtype), in that order,
/// after the contiguous rows [first, first + count).
Tensor gatherRows(const Tensor &whole, int64_t first, int64_t count,
                  const std::vector<int32_t> &rows) {
  std::vector<int64_t> shape = whole.shape();
  shape[0] = count + int64_t(rows.size());
  Tensor t = Tensor::uninitialized(shape, whole.dtype());
  const size_t rowBytes = size_t(whole.rowSize()) * 4;
  const char *from = static_cast<const char *>(
      static_cast<const void *>(whole.dtype() == DType::F32
                                    ? static_cast<const void *>(whole.f32())
                                    : static_cast<const void *>(whole.i32())));
  char *to = static_cast<char *>(t.data());
  if (count)
    std::memcpy(to, from + size_t(first) * rowBytes, size_t(count) * rowBytes);
  for (size_t i = 0; i < rows.size(); ++i)
    std::memcpy(to + (size_t(count) + i) * rowBytes,
                from + size_t(rows[i]) * rowBytes, rowBytes);
  return t;
}
} // namespace

Tensor GraphPart::localRowsOf(const Tensor &whole) const {
  return gatherRows(whole, begin, owned(), halo);
}

Tensor GraphPart::localEdgesOf(const Tensor &whole) const {
  return gatherRows(whole, 0, 0, edgeIds);
}

std::vector<int32_t>
GraphPart::ownedLocal(const std::vector<int32_t> &global) const {
  std::vector<int32_t> local;
  for (int32_t v : global)
    if (v >= begin && v < end)
      local.push_back(v - begin);
  return local;
}

GraphPart saga::makeGraphPart(const Graph &g, const Partitioning &p,
                              int64_t part) {
  GraphPart gp;
  gp.part = part;
  gp.parts = p.parts();
  gp.begin = p.bounds[size_t(part)];
  gp.end = p.bounds[size_t(part) + 1];
  const int32_t begin = gp.begin, end = gp.end;
  const int64_t e0 = g.inOffsets[size_t(begin)], e1 = g.inOffsets[size_t(end)];
  gp.edgeBase = e0;

  // The halo: remote sources of the owned rows' in-edges.
  for (int64_t i = e0; i < e1; ++i) {
    int32_t u = g.inSources[size_t(i)];
    if (u < begin || u >= end)
      gp.halo.push_back(u);
  }
  std::sort(gp.halo.begin(), gp.halo.end());
  gp.halo.erase(std::unique(gp.halo.begin(), gp.halo.end()), gp.halo.end());
  for (int32_t b : p.bounds)
    gp.haloFrom.push_back(
        std::lower_bound(gp.halo.begin(), gp.halo.end(), b) - gp.halo.begin());

  const int64_t owned = gp.owned();
  auto localId = [&](int32_t u) -> int32_t {
    if (u >= begin && u < end)
      return u - begin;
    return int32_t(owned + (std::lower_bound(gp.halo.begin(), gp.halo.end(), u) -
                            gp.halo.begin()));
  };
  // The local CSRs keep the whole graph's order within every row (a row's
  // sums then add the same terms in the same order as in one process):
  // in-edges of the owned rows as they are, local edge e = position e0 + e;
  // each local row's out-edges to owned rows, in its whole out-list order.
  Graph &l = gp.local;
  l.numVertices = int32_t(gp.localRows());
  l.numEdges = e1 - e0;
  l.selfLoops = g.selfLoops;
  l.inOffsets.assign(size_t(l.numVertices) + 1, e1 - e0);
  for (int32_t v = begin; v <= end; ++v)
    l.inOffsets[size_t(v - begin)] = g.inOffsets[size_t(v)] - e0;
  l.inSources.resize(size_t(e1 - e0));
  l.inEdgeIds.resize(size_t(e1 - e0));
  for (int64_t i = e0; i < e1; ++i) {
    l.inSources[size_t(i - e0)] = localId(g.inSources[size_t(i)]);
    l.inEdgeIds[size_t(i - e0)] = int32_t(i - e0);
  }
  // Whole edge id -> local edge, for the out-lists.
  std::vector<std::pair<int32_t, int32_t>> byId;
  byId.reserve(size_t(e1 - e0));
  for (int64_t i = e0; i < e1; ++i)
    byId.emplace_back(g.inEdgeIds[size_t(i)], int32_t(i - e0));
  std::sort(byId.begin(), byId.end());
  auto localEdge = [&](int32_t id) {
    return std::lower_bound(byId.begin(), byId.end(),
                            std::make_pair(id, int32_t(-1)))
        ->second;
  };
  l.outOffsets.assign(size_t(l.numVertices) + 1, 0);
  for (int64_t r = 0; r < l.numVertices; ++r) {
    int32_t u = r < owned ? int32_t(begin + r) : gp.halo[size_t(r - owned)];
    for (int64_t i = g.outOffsets[size_t(u)]; i < g.outOffsets[size_t(u) + 1];
         ++i) {
      int32_t t = g.outTargets[size_t(i)];
      if (t < begin || t >= end)
        continue;
      l.outTargets.push_back(t - begin);
      l.outEdgeIds.push_back(localEdge(g.outEdgeIds[size_t(i)]));
    }
    l.outOffsets[size_t(r) + 1] = int64_t(l.outTargets.size());
  }
  gp.edgeIds.assign(g.inEdgeIds.begin() + e0, g.inEdgeIds.begin() + e1);
  for (auto [keys, ids] : {std::pair{&gp.inEdgeKeys, &l.inEdgeIds},
                           std::pair{&gp.outEdgeKeys, &l.outEdgeIds}}) {
    keys->resize(ids->size());
    for (size_t p = 0; p < ids->size(); ++p)
      (*keys)[p] = gp.edgeIds[size_t((*ids)[p])];
  }
  gp.interior.assign(size_t(owned), true);
  for (int64_t r = 0; r < owned; ++r)
    for (int64_t i = l.inOffsets[size_t(r)]; i < l.inOffsets[size_t(r) + 1];
         ++i)
      if (l.inSources[size_t(i)] >= owned)
        gp.interior[size_t(r)] = false;

  gp.kernelView = gp.local;
  for (int32_t &u : gp.kernelView.inSources)
    u += begin;
  for (int32_t &v : gp.kernelView.outTargets)
    v += begin;
  for (int32_t &e : gp.kernelView.inEdgeIds)
    e += int32_t(e0);
  for (int32_t &e : gp.kernelView.outEdgeIds)
    e += int32_t(e0);

  for (int32_t v = begin; v < end; ++v) {
    gp.inDegrees.push_back(float(g.inDegree(v)));
    gp.globalIds.push_back(v);
  }
  for (int32_t u : gp.halo) {
    gp.inDegrees.push_back(float(g.inDegree(u)));
    gp.globalIds.push_back(u);
  }

  // What the other parts' halos hold of this part: owned vertices with an
  // out-edge into part q, ascending.
  gp.sendRows.assign(size_t(gp.parts), {});
  std::vector<int32_t> lastSent(size_t(gp.parts), -1);
  for (int32_t u = begin; u < end; ++u)
    for (int64_t i = g.outOffsets[size_t(u)]; i < g.outOffsets[size_t(u) + 1];
         ++i) {
      int32_t t = g.outTargets[size_t(i)];
      if (t >= begin && t < end)
        continue;
      size_t q = size_t(std::upper_bound(p.bounds.begin(), p.bounds.end(), t) -
                        p.bounds.begin() - 1);
      if (lastSent[q] != u) {
        lastSent[q] = u;
        gp.sendRows[q].push_back(u - begin);
      }
    }
  return gp;
}
