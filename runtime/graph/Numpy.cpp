//===- Numpy.cpp - datasets as .npz archives ------------------------------===//
//
// The keys of a dataset archive (Numpy.h): writeNpzDataset, loadNpzDataset
// (features, edges as edge_index or src and dst, labels and the split as
// masks or index arrays), and attachVertexArrays for a graph-only file.
// Reading and writing the arrays themselves: NpyReader.cpp, NpzReader.cpp,
// NumpyWriter.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/graph/Numpy.h"

#include "llvm/Support/Path.h"

#include <functional>
#include <limits>

using namespace saga;

llvm::Error saga::writeNpzDataset(const std::string &path, const Dataset &d) {
  const int64_t n = d.edges.numVertices;
  const int64_t e = int64_t(d.edges.src.size());
  std::vector<NpyView> members;
  std::vector<int64_t> xShape = d.features.shape();
  members.push_back({"x", "<f4", xShape, d.features.f32(),
                     size_t(d.features.numElements()) * 4});
  members.push_back({"src", "<i4", {e}, d.edges.src.data(), size_t(e) * 4});
  members.push_back({"dst", "<i4", {e}, d.edges.dst.data(), size_t(e) * 4});
  if (!d.labels.empty())
    members.push_back({"y", "<i4", {n}, d.labels.data(), size_t(n) * 4});
  std::vector<uint8_t> masks[3];
  const std::vector<int32_t> *splits[3] = {&d.train, &d.val, &d.test};
  const char *names[3] = {"train_mask", "val_mask", "test_mask"};
  for (int s = 0; s < 3; ++s) {
    if (splits[s]->empty())
      continue;
    masks[s].assign(size_t(n), 0);
    for (int32_t v : *splits[s])
      masks[s][size_t(v)] = 1;
    members.push_back({names[s], "|b1", {n}, masks[s].data(), size_t(n)});
  }
  return writeNpz(path, members);
}

namespace {

/// Vertex ids of an index array (any integer type, 1-D), each in [0, n).
llvm::Expected<std::vector<int32_t>> idsOf(const NpyArray &a,
                                           const std::string &where,
                                           int64_t n) {
  if (a.kind == 'f' || a.shape.size() != 1)
    return llvm::createStringError(where + ": a 1-D integer array of vertex "
                                           "ids, not " + a.dtypeName() +
                                   " of " + std::to_string(a.shape.size()) +
                                   " dimensions");
  std::vector<int32_t> ids;
  for (int64_t i = 0; i < a.size(); ++i) {
    int64_t v = a.asInt(i);
    if (v < 0 || v >= n)
      return llvm::createStringError(where + "[" + std::to_string(i) +
                                     "]: vertex " + std::to_string(v) +
                                     " is out of range [0, " +
                                     std::to_string(n) + ")");
    ids.push_back(int32_t(v));
  }
  return ids;
}

} // namespace

namespace {

/// The labels (`y`, N integer classes) and the split (masks or index
/// arrays, from `m`) of `d`, whose features give N; `where(key)` names a
/// key in errors, `file` the archive holding the split.
llvm::Error labelsAndSplit(Dataset &d, const NpyArray *y,
                           const std::map<std::string, NpyArray> &m,
                           const std::function<std::string(const std::string &)> &key,
                           const std::string &file) {
  const int64_t n = d.features.rows();
  auto find = [&](const std::string &k) -> const NpyArray * {
    auto it = m.find(k);
    return it == m.end() ? nullptr : &it->second;
  };
  const std::string &path = file;
  // Labels.
  if (!y)
    return llvm::createStringError(key("y") + ": missing (the N vertex "
                                              "classes; -1 unlabelled)");
  if (y->kind == 'f' || !(y->shape.size() == 1 ||
                          (y->shape.size() == 2 && y->shape[1] == 1)) ||
      y->shape[0] != n)
    return llvm::createStringError(
        key("y") + ": must be " + std::to_string(n) +
        " integer classes (one per row of 'x'), not " + y->dtypeName() +
        " of shape (" + [&] {
          std::string s;
          for (int64_t dim : y->shape)
            s += (s.empty() ? "" : ", ") + std::to_string(dim);
          return s;
        }() + ")");
  for (int64_t i = 0; i < n; ++i) {
    int64_t c = y->asInt(i);
    if (c < -1 || c >= (int64_t(1) << 20))
      return llvm::createStringError(key("y") + "[" + std::to_string(i) +
                                     "]: class " + std::to_string(c) +
                                     " is not -1 or a class number");
    d.labels.push_back(int32_t(c));
    d.numClasses = std::max<int32_t>(d.numClasses, int32_t(c + 1));
  }
  // The split: masks or index arrays.
  std::vector<int32_t> *lists[3] = {&d.train, &d.val, &d.test};
  const char *names[3] = {"train", "val", "test"};
  std::vector<int8_t> taken(size_t(n), -1);
  for (int k = 0; k < 3; ++k) {
    std::string maskKey = std::string(names[k]) + "_mask",
                idxKey = std::string(names[k]) + "_idx";
    if (const NpyArray *mask = find(maskKey)) {
      if (mask->kind == 'f' || mask->shape.size() != 1 || mask->shape[0] != n)
        return llvm::createStringError(key(maskKey) + ": must be " +
                                       std::to_string(n) +
                                       " booleans (one per row of 'x')");
      for (int64_t i = 0; i < n; ++i) {
        int64_t b = mask->asInt(i);
        if (b != 0 && b != 1)
          return llvm::createStringError(key(maskKey) + "[" +
                                         std::to_string(i) + "]: " +
                                         std::to_string(b) +
                                         " is not 0 or 1");
        if (b)
          lists[k]->push_back(int32_t(i));
      }
    } else if (const NpyArray *idx = find(idxKey)) {
      auto ids = idsOf(*idx, key(idxKey), n);
      if (!ids)
        return ids.takeError();
      *lists[k] = std::move(*ids);
    } else {
      return llvm::createStringError(path + ": no '" + maskKey + "' or '" +
                                     idxKey + "' (the " + names[k] +
                                     " split)");
    }
    for (int32_t v : *lists[k]) {
      if (d.labels[size_t(v)] < 0)
        return llvm::createStringError(path + ": vertex " + std::to_string(v) +
                                       " of the " + names[k] +
                                       " split has no label (y = -1)");
      if (taken[size_t(v)] >= 0)
        return llvm::createStringError(
            path + ": vertex " + std::to_string(v) + " is in both the " +
            names[taken[size_t(v)]] + " and the " + names[k] + " split");
      taken[size_t(v)] = int8_t(k);
    }
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<Dataset> saga::loadNpzDataset(const std::string &path) {
  auto arrays = readNpz(path);
  if (!arrays)
    return arrays.takeError();
  auto &m = *arrays;
  auto key = [&](const std::string &k) { return path + ": '" + k + "'"; };
  auto find = [&](const std::string &k) -> const NpyArray * {
    auto it = m.find(k);
    return it == m.end() ? nullptr : &it->second;
  };
  Dataset d;
  d.name = llvm::sys::path::stem(path).str();
  const NpyArray *x = find("x");
  if (!x)
    return llvm::createStringError(
        path + ": no 'x' (the N x F vertex features); the archive has: " +
        [&] {
          std::string names;
          for (auto &[k, v] : m)
            names += (names.empty() ? "" : ", ") + k;
          return names.empty() ? std::string("no arrays") : names;
        }());
  if (x->kind != 'f' || x->shape.size() != 2)
    return llvm::createStringError(key("x") + ": features must be a 2-D "
                                              "float array, not " +
                                   x->dtypeName() + " of " +
                                   std::to_string(x->shape.size()) +
                                   " dimensions");
  const int64_t n = x->shape[0], f = x->shape[1];
  if (n > std::numeric_limits<int32_t>::max())
    return llvm::createStringError(key("x") + ": " + std::to_string(n) +
                                   " vertices; Saga numbers at most 2^31 - 1");
  d.features = Tensor::uninitialized({n, f});
  for (int64_t i = 0; i < n * f; ++i)
    d.features.f32()[i] = float(x->asDouble(i));
  // Edges.
  const NpyArray *ei = find("edge_index"), *src = find("src"),
                 *dst = find("dst");
  std::vector<int32_t> from, to;
  if (ei) {
    if (ei->kind == 'f' || ei->shape.size() != 2 || ei->shape[0] != 2)
      return llvm::createStringError(key("edge_index") +
                                     ": must be a 2 x E integer array");
    NpyArray row = *ei, col = *ei;
    int64_t e = ei->shape[1];
    row.shape = {e};
    col.shape = {e};
    row.data.assign(ei->data.begin(), ei->data.begin() + e * ei->itemSize);
    col.data.assign(ei->data.begin() + e * ei->itemSize, ei->data.end());
    auto a = idsOf(row, key("edge_index") + "[0]", n);
    if (!a)
      return a.takeError();
    auto b = idsOf(col, key("edge_index") + "[1]", n);
    if (!b)
      return b.takeError();
    from = std::move(*a);
    to = std::move(*b);
  } else if (src && dst) {
    auto a = idsOf(*src, key("src"), n);
    if (!a)
      return a.takeError();
    auto b = idsOf(*dst, key("dst"), n);
    if (!b)
      return b.takeError();
    if (a->size() != b->size())
      return llvm::createStringError(path + ": 'src' has " +
                                     std::to_string(a->size()) +
                                     " edges, 'dst' " +
                                     std::to_string(b->size()));
    from = std::move(*a);
    to = std::move(*b);
  } else {
    return llvm::createStringError(path + ": no edges: give 'edge_index' "
                                          "(2 x E) or 'src' and 'dst'");
  }
  if (int64_t(from.size()) > Graph::kMaxEdges)
    return llvm::createStringError(path + ": " + std::to_string(from.size()) +
                                   " edges; Saga numbers at most " +
                                   std::to_string(Graph::kMaxEdges));
  d.edges.numVertices = int32_t(n);
  d.edges.src = std::move(from);
  d.edges.dst = std::move(to);
  if (llvm::Error e = labelsAndSplit(d, find("y"), m, key, path))
    return std::move(e);
  return d;
}

llvm::Expected<Dataset> saga::attachVertexArrays(EdgeList edges,
                                                 const std::string &graphPath,
                                                 const VertexArrays &arrays) {
  if (arrays.features.empty() || arrays.labels.empty() || arrays.split.empty())
    return llvm::createStringError(
        graphPath + " holds only a graph: give its vertex arrays with "
                    "--features X.npy, --labels Y.npy and --split S.npz");
  Dataset d;
  d.name = llvm::sys::path::stem(graphPath).str();
  auto x = readNpy(arrays.features);
  if (!x)
    return x.takeError();
  if (x->kind != 'f' || x->shape.size() != 2)
    return llvm::createStringError(arrays.features +
                                   ": features must be a 2-D float array, "
                                   "not " + x->dtypeName() + " of " +
                                   std::to_string(x->shape.size()) +
                                   " dimensions");
  const int64_t n = x->shape[0], f = x->shape[1];
  if (n > std::numeric_limits<int32_t>::max())
    return llvm::createStringError(arrays.features + ": " + std::to_string(n) +
                                   " vertices; Saga numbers at most 2^31 - 1");
  if (edges.numVertices > n)
    return llvm::createStringError(
        graphPath + " has " + std::to_string(edges.numVertices) +
        " vertices but " + arrays.features + " has " + std::to_string(n) +
        " feature rows");
  d.features = Tensor::uninitialized({n, f});
  for (int64_t i = 0; i < n * f; ++i)
    d.features.f32()[i] = float(x->asDouble(i));
  edges.numVertices = int32_t(n);
  d.edges = std::move(edges);
  auto y = readNpy(arrays.labels);
  if (!y)
    return y.takeError();
  auto split = readNpz(arrays.split);
  if (!split)
    return split.takeError();
  auto key = [&](const std::string &k) {
    return k == "y" ? arrays.labels : arrays.split + ": '" + k + "'";
  };
  if (llvm::Error e = labelsAndSplit(d, &*y, *split, key, arrays.split))
    return std::move(e);
  return d;
}
