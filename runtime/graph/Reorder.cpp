//===- Reorder.cpp - relabelling vertices for locality --------------------===//

#include "runtime/graph/Reorder.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace saga;

VertexOrder saga::degreeOrder(const EdgeList &edges) {
  const int64_t n = edges.numVertices;
  std::vector<int64_t> degree(size_t(n), 0);
  for (size_t i = 0; i < edges.src.size(); ++i) {
    ++degree[size_t(edges.src[i])];
    ++degree[size_t(edges.dst[i])];
  }
  int64_t maxDegree = 0;
  for (int64_t d : degree)
    maxDegree = std::max(maxDegree, d);
  // Counting sort, highest degree first: start[d] is where degree d begins.
  std::vector<int64_t> start(size_t(maxDegree) + 2, 0);
  for (int64_t d : degree)
    ++start[size_t(maxDegree - d) + 1];
  for (size_t i = 1; i < start.size(); ++i)
    start[i] += start[i - 1];
  VertexOrder order;
  order.newId.resize(size_t(n));
  order.oldId.resize(size_t(n));
  for (int64_t v = 0; v < n; ++v) { // increasing id within a degree
    int64_t to = start[size_t(maxDegree - degree[size_t(v)])]++;
    order.newId[size_t(v)] = int32_t(to);
    order.oldId[size_t(to)] = int32_t(v);
  }
  return order;
}

void saga::relabel(EdgeList &edges, const VertexOrder &order) {
  if (int64_t(order.newId.size()) != edges.numVertices) {
    std::fprintf(stderr,
                 "saga: relabel: an order of %zu vertices for a graph of %d\n",
                 order.newId.size(), edges.numVertices);
    std::abort();
  }
  for (int32_t &v : edges.src)
    v = order.newId[size_t(v)];
  for (int32_t &v : edges.dst)
    v = order.newId[size_t(v)];
}

namespace {
/// out row to[i] = in row i for every i (4-byte elements: F32 and I32).
Tensor scatterRows(const Tensor &in, const std::vector<int32_t> &to) {
  if (in.rows() != int64_t(to.size())) {
    std::fprintf(stderr, "saga: permuting %s by an order of %zu vertices\n",
                 in.describe().c_str(), to.size());
    std::abort();
  }
  Tensor out = Tensor::uninitialized(in.shape(), in.dtype());
  const size_t rowBytes = size_t(in.rowSize()) * 4;
  const char *src = reinterpret_cast<const char *>(in.i32());
  char *dst = reinterpret_cast<char *>(out.i32());
  for (size_t i = 0; i < to.size(); ++i)
    std::memcpy(dst + size_t(to[i]) * rowBytes, src + i * rowBytes, rowBytes);
  return out;
}
} // namespace

Tensor saga::permuteRows(const Tensor &rows, const VertexOrder &order) {
  return scatterRows(rows, order.newId);
}

Tensor saga::unpermuteRows(const Tensor &rows, const VertexOrder &order) {
  return scatterRows(rows, order.oldId);
}

void saga::relabel(Dataset &data, const VertexOrder &order) {
  relabel(data.edges, order);
  if (data.features.rows() > 0) // left unread: nothing to permute
    data.features = permuteRows(data.features, order);
  std::vector<int32_t> labels(data.labels.size());
  for (size_t v = 0; v < labels.size(); ++v)
    labels[size_t(order.newId[v])] = data.labels[v];
  data.labels = std::move(labels);
  for (std::vector<int32_t> *split : {&data.train, &data.val, &data.test})
    for (int32_t &v : *split)
      v = order.newId[size_t(v)];
}
