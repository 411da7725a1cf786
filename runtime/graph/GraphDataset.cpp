//===- GraphDataset.cpp - datasets of many small graphs -------------------===//

#include "runtime/graph/GraphDataset.h"

#include "runtime/graph/Numpy.h"
#include "runtime/graph/TextReader.h"
#include "runtime/memory/MemoryLimit.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <map>
#include <random>

using namespace saga;
using namespace saga::text;

namespace {

/// A TU line's comma-separated fields, trimmed ("1, 2" or "1,2").
void commaFields(StringRef line, llvm::SmallVectorImpl<StringRef> &out) {
  out.clear();
  llvm::SmallVector<StringRef, 8> parts;
  line.split(parts, ',');
  for (StringRef p : parts)
    out.push_back(p.trim(" \t"));
}

/// The integer lines of a TU file (one value each; blank lines at the end
/// allowed).
llvm::Expected<std::vector<int64_t>> readIntegers(const std::string &path,
                                                  const char *what) {
  auto buf = readFile(path);
  if (!buf)
    return buf.takeError();
  TextReader r(path, **buf);
  std::vector<int64_t> values;
  int64_t blankAt = 0;
  while (r.next()) {
    StringRef t = r.line().trim(" \t");
    if (t.empty()) {
      blankAt = blankAt ? blankAt : r.lineNo();
      continue;
    }
    if (blankAt)
      return makeError(path + ":" + Twine(blankAt) +
                       ": blank line before the last " + what);
    int64_t v = 0;
    if (Error e = r.integerIn(t, what, -(int64_t(1) << 40), int64_t(1) << 40,
                              v))
      return std::move(e);
    values.push_back(v);
  }
  return values;
}

/// Values as classes: `distinct` gets the values in ascending order, the
/// result each value's index among them.
std::vector<int32_t> classesOf(const std::vector<int64_t> &values,
                               std::vector<int64_t> &distinct) {
  distinct = values;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()),
                 distinct.end());
  std::vector<int32_t> classes;
  classes.reserve(values.size());
  for (int64_t v : values)
    classes.push_back(int32_t(
        std::lower_bound(distinct.begin(), distinct.end(), v) -
        distinct.begin()));
  return classes;
}

/// A TU file of one integer label per graph or vertex (`count` of them, as
/// `countedIn` counts them) as classes (classesOf).
llvm::Expected<std::vector<int32_t>>
readClasses(const std::string &path, const char *what, int64_t count,
            const char *units, const std::string &countedIn,
            std::vector<int64_t> &distinct) {
  auto values = readIntegers(path, what);
  if (!values)
    return values.takeError();
  if (int64_t(values->size()) != count)
    return makeError(path + ": has " + Twine(values->size()) + " labels; " +
                     countedIn + " has " + Twine(count) + " " + units);
  return classesOf(*values, distinct);
}

/// Graph offsets from each vertex's graph id (ids from `first`,
/// nondecreasing, none skipped): the index of the first id that breaks
/// this, or -1.
int64_t offsetsFromIndicator(const std::vector<int64_t> &graphOf, int64_t first,
                             std::vector<int64_t> &offsets) {
  offsets.clear();
  for (size_t v = 0; v < graphOf.size(); ++v) {
    int64_t next = first + int64_t(offsets.size()); // a new graph's id
    if (graphOf[v] == next)
      offsets.push_back(int64_t(v));
    else if (v == 0 || graphOf[v] != next - 1)
      return int64_t(v);
  }
  offsets.push_back(int64_t(graphOf.size()));
  return -1;
}

/// What is wrong with graphOf[v], the id offsetsFromIndicator stopped at.
std::string indicatorProblem(const std::vector<int64_t> &graphOf, size_t v,
                             int64_t first) {
  int64_t g = graphOf[v];
  if (v == 0)
    return ("graph id " + Twine(g) + " comes first; graph ids start at " +
            Twine(first))
        .str();
  int64_t current = graphOf[v - 1];
  return ("graph id " + Twine(g) + " follows " + Twine(current) + ": " +
          (g > current ? "graph " + Twine(current + 1) + " has no vertices"
                       : Twine("a graph's vertices must be consecutive")))
      .str();
}

/// Refuses, before the features are allocated, a dataset whose features
/// [V, F] and batch of every graph (makeGraphBatch, self loops) do not fit.
llvm::Error checkFits(const GraphDataset &d, int64_t F,
                      const std::string &where, const Twine &features) {
  int64_t V = d.numVertices(), E = int64_t(d.src.size());
  if (std::string why = Graph::sizeError(V, E, true); !why.empty())
    return makeError(where + ": " + why);
  return checkMemory(
      saturatingAdd(bytesOf({V, F}, 4), Graph::buildBytes(V, E, true)),
      where + ": " + features + " and " + Twine(E) + " edges");
}

/// Sorts the edges by graph (stably) and sets edgeOffsets.
void groupEdges(GraphDataset &d) {
  size_t G = size_t(d.numGraphs()), E = d.src.size();
  std::vector<int64_t> graphOf(E);
  d.edgeOffsets.assign(G + 1, 0);
  for (size_t e = 0; e < E; ++e) {
    graphOf[e] = std::upper_bound(d.graphOffsets.begin(),
                                  d.graphOffsets.end(), int64_t(d.src[e])) -
                 d.graphOffsets.begin() - 1;
    ++d.edgeOffsets[size_t(graphOf[e]) + 1];
  }
  for (size_t g = 0; g < G; ++g)
    d.edgeOffsets[g + 1] += d.edgeOffsets[g];
  std::vector<int64_t> at(d.edgeOffsets.begin(), d.edgeOffsets.end() - 1);
  std::vector<int32_t> src(E), dst(E);
  for (size_t e = 0; e < E; ++e) {
    int64_t to = at[size_t(graphOf[e])]++;
    src[size_t(to)] = d.src[e];
    dst[size_t(to)] = d.dst[e];
  }
  d.src = std::move(src);
  d.dst = std::move(dst);
}

llvm::Error checkClasses(GraphDataset &d, const std::string &where) {
  if (d.labelValues.size() < 2)
    return makeError(where + ": every graph has the same label; a "
                             "classifier needs two classes or more");
  return llvm::Error::success();
}

} // namespace

llvm::Expected<GraphDataset> saga::loadTUDataset(const std::string &folder) {
  std::vector<std::string> found;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(folder, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef file = llvm::sys::path::filename(it->path());
    if (file.ends_with("_graph_indicator.txt"))
      found.push_back(file.drop_back(strlen("_graph_indicator.txt")).str());
  }
  if (ec)
    return makeError("cannot read the folder " + folder + ": " + ec.message());
  if (found.size() != 1) {
    std::sort(found.begin(), found.end());
    std::string names;
    for (const std::string &f : found)
      names += (names.empty() ? "" : ", ") + f;
    return makeError(folder + ": a TU dataset folder holds one "
                              "NAME_graph_indicator.txt; found " +
                     (found.empty() ? std::string("none") : names));
  }
  GraphDataset d;
  d.name = found[0];
  auto file = [&](const char *suffix) {
    llvm::SmallString<256> p(folder);
    llvm::sys::path::append(p, d.name + "_" + suffix + ".txt");
    return std::string(p);
  };

  // Each vertex's graph: 1, 1, ..., 2, ... (nondecreasing, none skipped).
  std::string indicatorPath = file("graph_indicator");
  auto indicator = readIntegers(indicatorPath, "graph id");
  if (!indicator)
    return indicator.takeError();
  if (indicator->empty())
    return makeError(indicatorPath + ": has no vertices");
  if (indicator->size() > size_t(kMaxVertices))
    return makeError(indicatorPath + ": more than 2^31 - 1 vertices");
  if (int64_t v = offsetsFromIndicator(*indicator, 1, d.graphOffsets); v >= 0)
    return makeError(indicatorPath + ":" + Twine(v + 1) + ": " +
                     indicatorProblem(*indicator, size_t(v), 1));
  const int64_t V = int64_t(indicator->size()), G = d.numGraphs();

  std::string labelsPath = file("graph_labels");
  auto labels = readClasses(labelsPath, "graph label", G, "graphs",
                            indicatorPath, d.labelValues);
  if (!labels)
    return labels.takeError();
  d.graphLabels = std::move(*labels);
  if (Error e = checkClasses(d, labelsPath))
    return std::move(e);

  std::string edgesPath = file("A");
  auto buf = readFile(edgesPath);
  if (!buf)
    return buf.takeError();
  TextReader r(edgesPath, **buf);
  llvm::SmallVector<StringRef, 4> f;
  while (r.next()) {
    if (r.line().trim(" \t").empty())
      continue;
    commaFields(r.line(), f);
    if (f.size() != 2)
      return r.error("expected 'i, j' (two vertex ids), found " +
                     Twine(f.size()) + " fields");
    int64_t a = 0, b = 0;
    if (Error e = r.integerIn(f[0], "vertex id", 1, V + 1, a))
      return std::move(e);
    if (Error e = r.integerIn(f[1], "vertex id", 1, V + 1, b))
      return std::move(e);
    int64_t ga = (*indicator)[size_t(a - 1)], gb = (*indicator)[size_t(b - 1)];
    if (ga != gb)
      return r.error("the edge " + Twine(a) + " -> " + Twine(b) +
                     " joins graph " + Twine(ga) + " to graph " + Twine(gb));
    if (d.src.size() >= size_t(Graph::kMaxEdges))
      return r.error("more edges than 32-bit edge ids number");
    d.src.push_back(int32_t(a - 1));
    d.dst.push_back(int32_t(b - 1));
  }

  // Features: one-hot node labels, then attributes.
  std::vector<int64_t> nodeValues;
  std::vector<int32_t> nodeClass;
  std::string nodeLabelsPath = file("node_labels");
  if (llvm::sys::fs::exists(nodeLabelsPath)) {
    auto nl = readClasses(nodeLabelsPath, "node label", V, "vertices",
                          indicatorPath, nodeValues);
    if (!nl)
      return nl.takeError();
    nodeClass = std::move(*nl);
  }
  std::vector<float> attributes;
  int64_t A = 0;
  std::string attributesPath = file("node_attributes");
  if (llvm::sys::fs::exists(attributesPath)) {
    auto ab = readFile(attributesPath);
    if (!ab)
      return ab.takeError();
    TextReader ar(attributesPath, **ab);
    int64_t rows = 0;
    while (ar.next()) {
      if (ar.line().trim(" \t").empty())
        continue;
      commaFields(ar.line(), f);
      if (rows == 0)
        A = int64_t(f.size());
      else if (int64_t(f.size()) != A)
        return ar.error("has " + Twine(f.size()) + " attributes; the first "
                        "line has " + Twine(A));
      for (StringRef t : f) {
        float x = 0;
        if (Error e = ar.number(t, x))
          return std::move(e);
        attributes.push_back(x);
      }
      ++rows;
    }
    if (rows != V)
      return makeError(attributesPath + ": has " + Twine(rows) + " rows; " +
                       indicatorPath + " has " + Twine(V) + " vertices");
  }
  int64_t L = int64_t(nodeValues.size()), F = L + A;
  if (Error e = checkFits(
          d, std::max<int64_t>(F, 1), folder,
          Twine(V) + " vertices x " + Twine(F) + " feature columns (" +
              Twine(L) + " node labels one-hot, " + Twine(A) + " attributes)"))
    return std::move(e);
  d.features = Tensor({V, std::max<int64_t>(F, 1)});
  float *x = d.features.f32();
  for (int64_t v = 0; v < V; ++v) {
    float *row = x + v * std::max<int64_t>(F, 1);
    if (F == 0) {
      row[0] = 1;
      continue;
    }
    if (L)
      row[nodeClass[size_t(v)]] = 1;
    std::copy(attributes.begin() + v * A, attributes.begin() + (v + 1) * A,
              row + L);
  }
  groupEdges(d);
  return d;
}

llvm::Expected<GraphDataset>
saga::loadGraphDatasetNpz(const std::string &path) {
  auto arrays = readNpz(path);
  if (!arrays)
    return arrays.takeError();
  auto get = [&](const char *name) -> const NpyArray * {
    auto it = arrays->find(name);
    return it == arrays->end() ? nullptr : &it->second;
  };
  auto isInt = [](const NpyArray *a) {
    return a && (a->kind == 'i' || a->kind == 'u') && a->shape.size() == 1;
  };
  GraphDataset d;
  d.name = llvm::sys::path::stem(path).str();
  const NpyArray *offsets = get("graph_offsets"),
                 *indicator = get("graph_indicator"), *src = get("src"),
                 *dst = get("dst"), *labels = get("graph_labels"),
                 *x = get("x");
  if (!isInt(offsets) && !isInt(indicator))
    return makeError(path + ": needs 'graph_offsets' (int, one per graph "
                            "plus one) or 'graph_indicator' (int, one per "
                            "vertex)");
  if (!isInt(src) || !isInt(dst) || !isInt(labels))
    return makeError(path + ": needs one-dimensional integer arrays 'src', "
                            "'dst' and 'graph_labels'");
  if (isInt(offsets)) {
    for (int64_t i = 0; i < offsets->size(); ++i)
      d.graphOffsets.push_back(offsets->asInt(i));
  } else {
    std::vector<int64_t> graphOf;
    for (int64_t v = 0; v < indicator->size(); ++v)
      graphOf.push_back(indicator->asInt(v));
    if (int64_t v = offsetsFromIndicator(graphOf, 0, d.graphOffsets); v >= 0)
      return makeError(path + ": graph_indicator[" + Twine(v) +
                       "]: " + indicatorProblem(graphOf, size_t(v), 0));
  }
  int64_t G = d.numGraphs();
  if (G < 1)
    return makeError(path + ": holds no graph");
  if (d.graphOffsets.front() != 0)
    return makeError(path + ": graph_offsets must start at 0");
  for (int64_t g = 0; g < G; ++g)
    if (d.graphOffsets[g + 1] <= d.graphOffsets[g])
      return makeError(path + ": graph " + Twine(g) + " has no vertices "
                              "(graph_offsets must increase)");
  if (d.graphOffsets.back() > kMaxVertices)
    return makeError(path + ": more than 2^31 - 1 vertices");
  int64_t V = d.graphOffsets.back();
  if (labels->size() != G)
    return makeError(path + ": graph_labels has " + Twine(labels->size()) +
                     " entries for " + Twine(G) + " graphs");
  std::vector<int64_t> values;
  for (int64_t g = 0; g < G; ++g)
    values.push_back(labels->asInt(g));
  d.graphLabels = classesOf(values, d.labelValues);
  if (Error e = checkClasses(d, path))
    return std::move(e);
  if (src->size() != dst->size())
    return makeError(path + ": src has " + Twine(src->size()) +
                     " entries, dst " + Twine(dst->size()));
  for (int64_t e = 0; e < src->size(); ++e) {
    int64_t a = src->asInt(e), b = dst->asInt(e);
    if (a < 0 || a >= V || b < 0 || b >= V)
      return makeError(path + ": edge " + Twine(e) + " (" + Twine(a) +
                       " -> " + Twine(b) + ") is out of range [0, " +
                       Twine(V) + ")");
    auto graphOf = [&](int64_t v) {
      return std::upper_bound(d.graphOffsets.begin(), d.graphOffsets.end(),
                              v) -
             d.graphOffsets.begin() - 1;
    };
    if (graphOf(a) != graphOf(b))
      return makeError(path + ": edge " + Twine(e) + " (" + Twine(a) +
                       " -> " + Twine(b) + ") joins two graphs");
    d.src.push_back(int32_t(a));
    d.dst.push_back(int32_t(b));
  }
  if (x && (x->kind != 'f' || x->shape.size() != 2 || x->shape[0] != V ||
            x->shape[1] < 1))
    return makeError(path + ": x must be a float array of " + Twine(V) +
                     " rows (one per vertex) and one column or more");
  int64_t F = x ? x->shape[1] : 1;
  if (Error e =
          checkFits(d, F, path,
                    Twine(V) + " vertices x " + Twine(F) +
                        (F == 1 ? " feature column" : " feature columns")))
    return std::move(e);
  if (x) {
    d.features = Tensor({V, F});
    for (int64_t i = 0; i < x->size(); ++i) {
      float v = float(x->asDouble(i));
      if (!std::isfinite(v))
        return makeError(path + ": x[" + Twine(i / F) + ", " + Twine(i % F) +
                         "] is not finite in float32");
      d.features.f32()[i] = v;
    }
  } else {
    d.features = Tensor({V, 1});
    std::fill(d.features.f32(), d.features.f32() + V, 1.0f);
  }
  groupEdges(d);
  return d;
}

llvm::Error saga::writeGraphDatasetNpz(const GraphDataset &d,
                                       const std::string &path) {
  int64_t G = d.numGraphs(), E = int64_t(d.src.size());
  std::vector<NpyView> members{
      {"graph_offsets", "<i8", {G + 1}, d.graphOffsets.data(),
       size_t(G + 1) * 8},
      {"src", "<i4", {E}, d.src.data(), size_t(E) * 4},
      {"dst", "<i4", {E}, d.dst.data(), size_t(E) * 4},
      {"graph_labels", "<i4", {G}, d.graphLabels.data(), size_t(G) * 4},
      {"x", "<f4", d.features.shape(), d.features.f32(),
       size_t(d.features.numElements()) * 4}};
  return writeNpz(path, members);
}

llvm::Expected<GraphDataset> saga::loadGraphDataset(const std::string &path) {
  if (llvm::sys::fs::is_directory(path))
    return loadTUDataset(path);
  return loadGraphDatasetNpz(path);
}

GraphBatch saga::makeGraphBatch(const GraphDataset &data,
                                llvm::ArrayRef<int32_t> ids,
                                bool addSelfLoops) {
  GraphBatch b;
  b.offsets.push_back(0);
  for (int32_t g : ids)
    b.offsets.push_back(b.offsets.back() + data.graphOffsets[g + 1] -
                        data.graphOffsets[g]);
  int64_t V = b.offsets.back(), F = data.features.rowSize();
  b.features = Tensor::uninitialized({V, F});
  b.labels = Tensor({V}, DType::I32);
  std::fill(b.labels.i32(), b.labels.i32() + V, -1);
  std::vector<int32_t> src, dst;
  for (size_t i = 0; i < ids.size(); ++i) {
    int64_t lo = data.graphOffsets[ids[i]], hi = data.graphOffsets[ids[i] + 1];
    std::copy(data.features.f32() + lo * F, data.features.f32() + hi * F,
              b.features.f32() + b.offsets[i] * F);
    b.labels.i32()[b.offsets[i]] = data.graphLabels[size_t(ids[i])];
    b.firsts.push_back(int32_t(b.offsets[i]));
    int32_t shift = int32_t(b.offsets[i] - lo);
    for (int64_t e = data.edgeOffsets[ids[i]]; e < data.edgeOffsets[ids[i] + 1];
         ++e) {
      src.push_back(data.src[size_t(e)] + shift);
      dst.push_back(data.dst[size_t(e)] + shift);
    }
  }
  b.graph = Graph::build(int32_t(V), src, dst, addSelfLoops);
  b.graph.graphOffsets = b.offsets;
  return b;
}

std::vector<std::vector<int32_t>>
saga::stratifiedFolds(const std::vector<int32_t> &labels, int32_t k,
                      uint64_t seed) {
  std::map<int32_t, std::vector<int32_t>> byClass;
  for (size_t g = 0; g < labels.size(); ++g)
    byClass[labels[g]].push_back(int32_t(g));
  std::vector<std::vector<int32_t>> folds(size_t(std::max(k, 1)));
  std::mt19937_64 rng(seed);
  size_t next = 0; // continue dealing where the last class stopped
  for (auto &[label, members] : byClass) {
    std::shuffle(members.begin(), members.end(), rng);
    for (int32_t g : members) {
      folds[next].push_back(g);
      next = (next + 1) % folds.size();
    }
  }
  for (auto &f : folds)
    std::sort(f.begin(), f.end());
  return folds;
}
