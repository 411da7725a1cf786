//===- EdgeSplit.cpp - link prediction's held-out edges -------------------===//

#include "runtime/graph/EdgeSplit.h"

#include "runtime/graph/Numpy.h"
#include "support/KeyedStream.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace saga;
using llvm::Twine;

namespace {

llvm::Error makeError(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// 0.05, 1e-06: as %g prints it.
std::string num(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", x);
  return b;
}

/// A pair as one word; undirected pairs with the smaller id first.
uint64_t pairKey(int32_t a, int32_t b, bool undirected) {
  if (undirected && a > b)
    std::swap(a, b);
  return uint64_t(uint32_t(a)) << 32 | uint32_t(b);
}
int32_t first(uint64_t key) { return int32_t(key >> 32); }
int32_t second(uint64_t key) { return int32_t(key & 0xffffffffu); }

const char *const kSetNames[] = {"train_pos", "val_pos", "val_neg",
                                 "test_pos", "test_neg"};

/// The i-th of kSetNames.
template <typename Split> auto &setOf(Split &s, int i) {
  decltype(&s.trainPos) sets[] = {&s.trainPos, &s.valPos, &s.valNeg,
                                  &s.testPos, &s.testNeg};
  return *sets[i];
}

/// `count` uniform pairs of distinct vertices, none in `taken` (sorted),
/// none drawn twice (added to `drawn`).
llvm::Error drawNegatives(int64_t count, int32_t n, bool undirected,
                          const std::vector<uint64_t> &taken,
                          llvm::DenseSet<uint64_t> &drawn, KeyedStream rng,
                          VertexPairs &out, const char *what) {
  double pairs = double(n) * double(n - 1) / (undirected ? 2.0 : 1.0);
  double free = pairs - double(taken.size()) - double(drawn.size());
  if (double(count) > free)
    return makeError("splitting edges: " + Twine(what) + " needs " +
                     Twine(count) + " pairs that are not edges; the graph " +
                     "has " + Twine(int64_t(std::max(free, 0.0))) +
                     " left");
  // Rejection: at most half the pairs are taken when this bound holds
  // comfortably; a nearly complete graph may need many draws.
  const int64_t attempts = 64 * count + (int64_t(1) << 22);
  int64_t made = 0;
  for (int64_t a = 0; made < count; ++a) {
    if (a == attempts)
      return makeError("splitting edges: drew " + Twine(attempts) +
                       " pairs and found only " + Twine(made) + " of the " +
                       Twine(count) + " " + what + " pairs that are not " +
                       "edges (the graph is nearly complete)");
    int32_t u = int32_t(rng.below(uint64_t(n))),
            v = int32_t(rng.below(uint64_t(n)));
    if (u == v)
      continue;
    uint64_t k = pairKey(u, v, undirected);
    if (std::binary_search(taken.begin(), taken.end(), k) ||
        !drawn.insert(k).second)
      continue;
    out.push(first(k), second(k));
    ++made;
  }
  return llvm::Error::success();
}

} // namespace

EdgeList EdgeSplit::messageGraph() const {
  EdgeList e;
  e.numVertices = numVertices;
  for (size_t i = 0; i < trainPos.size(); ++i) {
    e.src.push_back(trainPos.src[i]);
    e.dst.push_back(trainPos.dst[i]);
    if (undirected) {
      e.src.push_back(trainPos.dst[i]);
      e.dst.push_back(trainPos.src[i]);
    }
  }
  return e;
}

llvm::Expected<EdgeSplit> saga::splitEdges(const EdgeList &edges,
                                           const EdgeSplitOptions &o) {
  auto fraction = [](double f) { return f >= 0 && f < 1; };
  if (!fraction(o.valFraction) || !fraction(o.testFraction) ||
      o.valFraction + o.testFraction >= 1)
    return makeError("splitting edges: the validation (" +
                     num(o.valFraction) + ") and test (" +
                     num(o.testFraction) + ") fractions must be in [0, 1) "
                     "and leave edges to train on");
  if (!(o.negativesPerPositive >= 0) || o.negativesPerPositive > 1000)
    return makeError("splitting edges: " + num(o.negativesPerPositive) +
                     " negatives per positive: expected 0 to 1000");
  EdgeSplit s;
  s.numVertices = edges.numVertices;
  s.undirected = o.undirected;
  std::vector<uint64_t> pairs;
  pairs.reserve(edges.src.size());
  for (size_t i = 0; i < edges.src.size(); ++i)
    if (edges.src[i] != edges.dst[i])
      pairs.push_back(pairKey(edges.src[i], edges.dst[i], o.undirected));
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  if (pairs.empty())
    return makeError("splitting edges: the graph has no edge between two "
                     "distinct vertices");
  // Fisher-Yates over the sorted pairs: the split depends on the seed and
  // the set of pairs, not on the order the file lists them in.
  std::vector<uint64_t> order = pairs;
  KeyedStream shuffle{streamKey(o.seed, 1)};
  for (size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[shuffle.below(i)]);
  const size_t m = order.size();
  const size_t nVal = size_t(std::floor(o.valFraction * double(m))),
               nTest = size_t(std::floor(o.testFraction * double(m)));
  for (size_t i = 0; i < m; ++i) {
    VertexPairs &to = i < nVal ? s.valPos
                      : i < nVal + nTest ? s.testPos
                                         : s.trainPos;
    to.push(first(order[i]), second(order[i]));
  }
  llvm::DenseSet<uint64_t> drawn;
  auto negatives = [&](size_t positives) {
    return int64_t(std::llround(o.negativesPerPositive * double(positives)));
  };
  if (llvm::Error e = drawNegatives(negatives(nVal), s.numVertices,
                                    o.undirected, pairs, drawn,
                                    KeyedStream{streamKey(o.seed, 2)},
                                    s.valNeg, "val_neg"))
    return std::move(e);
  if (llvm::Error e = drawNegatives(negatives(nTest), s.numVertices,
                                    o.undirected, pairs, drawn,
                                    KeyedStream{streamKey(o.seed, 3)},
                                    s.testNeg, "test_neg"))
    return std::move(e);
  return s;
}

llvm::Error saga::writeEdgeSplitNpz(const std::string &path,
                                    const EdgeSplit &s) {
  std::vector<std::vector<int32_t>> rows(5);
  std::vector<NpyView> members;
  for (int i = 0; i < 5; ++i) {
    const VertexPairs &p = setOf(s, i);
    for (size_t r = 0; r < p.size(); ++r) {
      rows[size_t(i)].push_back(p.src[r]);
      rows[size_t(i)].push_back(p.dst[r]);
    }
    members.push_back({kSetNames[i], "<i4", {int64_t(p.size()), 2},
                       rows[size_t(i)].data(), rows[size_t(i)].size() * 4});
  }
  int32_t n = s.numVertices, u = s.undirected;
  members.push_back({"num_nodes", "<i4", {1}, &n, 4});
  members.push_back({"undirected", "<i4", {1}, &u, 4});
  return writeNpz(path, members);
}

llvm::Expected<EdgeSplit> saga::loadEdgeSplitNpz(const std::string &path,
                                                 int32_t numVertices,
                                                 bool undirected) {
  auto arrays = readNpz(path);
  if (!arrays)
    return arrays.takeError();
  auto scalar = [&](const char *name, int64_t &value) -> llvm::Error {
    auto it = arrays->find(name);
    if (it == arrays->end())
      return llvm::Error::success();
    const NpyArray &a = it->second;
    if ((a.kind != 'i' && a.kind != 'u' && a.kind != 'b') || a.size() != 1)
      return makeError(path + ": " + name + ": " + a.dtypeName() +
                       " of " + Twine(a.size()) +
                       " elements, expected one integer");
    value = a.asInt(0);
    return llvm::Error::success();
  };
  int64_t fileVertices = numVertices, fileUndirected = undirected;
  if (llvm::Error e = scalar("num_nodes", fileVertices))
    return std::move(e);
  if (llvm::Error e = scalar("undirected", fileUndirected))
    return std::move(e);
  if (fileVertices != numVertices)
    return makeError(path + ": num_nodes is " + Twine(fileVertices) +
                     "; the graph has " + Twine(numVertices) + " vertices");
  if (bool(fileUndirected) != undirected)
    return makeError(path + ": the split is " +
                     (fileUndirected ? "undirected" : "directed") +
                     "; it is read as " +
                     (undirected ? "undirected" : "directed"));
  EdgeSplit s;
  s.numVertices = numVertices;
  s.undirected = undirected;
  // Where each positive pair was first seen: (set, row).
  llvm::DenseMap<uint64_t, std::pair<int, int64_t>> positives;
  auto where = [&](std::pair<int, int64_t> at) {
    return std::string(kSetNames[at.first]) + " row " +
           std::to_string(at.second);
  };
  // Positives first (train, val, test), then the negatives against them.
  for (int i : {0, 1, 3, 2, 4}) {
    const char *name = kSetNames[i];
    auto it = arrays->find(name);
    if (it == arrays->end())
      return makeError(path + ": has no '" + name + "' (expected " +
                       "train_pos, val_pos, val_neg, test_pos and test_neg, " +
                       "each [pairs, 2] integers)");
    const NpyArray &a = it->second;
    if (a.kind != 'i' && a.kind != 'u')
      return makeError(path + ": " + name + ": " + a.dtypeName() +
                       ", expected integer vertex ids");
    bool shaped = a.shape.size() == 2 && a.shape[1] == 2;
    if (!shaped) {
      std::string dims;
      for (size_t d = 0; d < a.shape.size(); ++d)
        dims += (d ? ", " : "") + std::to_string(a.shape[d]);
      return makeError(path + ": " + name + ": shape [" + dims +
                       "], expected [pairs, 2]" +
                       (a.shape.size() == 2 && a.shape[0] == 2
                            ? " (a PyG edge_index is [2, pairs]: save its "
                              "transpose)"
                            : ""));
    }
    VertexPairs &to = setOf(s, i);
    const bool negative = i == 2 || i == 4;
    for (int64_t r = 0; r < a.shape[0]; ++r) {
      int64_t u = a.asInt(2 * r), v = a.asInt(2 * r + 1);
      for (int64_t x : {u, v})
        if (x < 0 || x >= numVertices)
          return makeError(path + ": " + name + " row " + Twine(r) +
                           ": vertex " + Twine(x) + " is out of range [0, " +
                           Twine(numVertices) + ")");
      if (u == v)
        return makeError(path + ": " + name + " row " + Twine(r) + ": (" +
                         Twine(u) + ", " + Twine(v) +
                         ") pairs a vertex with itself");
      uint64_t k = pairKey(int32_t(u), int32_t(v), undirected);
      if (negative) {
        auto seen = positives.find(k);
        if (seen != positives.end())
          return makeError(path + ": " + name + " row " + Twine(r) + ": (" +
                           Twine(u) + ", " + Twine(v) +
                           ") is a positive pair (" + where(seen->second) +
                           ")");
      } else {
        auto [seen, fresh] = positives.try_emplace(k, i, r);
        if (!fresh)
          return makeError(path + ": " + name + " row " + Twine(r) + ": (" +
                           Twine(u) + ", " + Twine(v) + ") is also " +
                           where(seen->second) +
                           (undirected ? " (pairs are undirected)" : ""));
      }
      to.push(int32_t(u), int32_t(v));
    }
  }
  if (s.trainPos.size() == 0)
    return makeError(path + ": train_pos is empty: nothing to train on");
  return s;
}
