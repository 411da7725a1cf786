//===- Loaders.cpp - Planetoid datasets (meta.txt and its files) ----------===//
//
// loadPlanetoid: meta.txt's `key value` lines, then labels.txt, edges.txt,
// features.txt and the train, val and test splits, read with the line and
// field reader of TextReader.h.
//
// Checks beyond the syntax: vertex ids in range; in Planetoid directories the
// line counts agree with meta.txt, no self loop or repeated edge in edges.txt,
// no repeated (node, col) in features.txt, labels in [-1, num_classes), split
// members labelled and in one split only. Repeats are found in O(1) per line
// while the file is sorted (as the format guarantees) and by one sort of the
// keys otherwise.
//
//===----------------------------------------------------------------------===//

#include "runtime/graph/Loaders.h"
#include "runtime/graph/TextReader.h"
#include "runtime/memory/MemoryLimit.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using namespace saga;
using namespace saga::text;

namespace {

/// Largest dense feature matrix loadPlanetoid allocates (elements; 16 GiB).
constexpr int64_t kMaxFeatureElements = int64_t(1) << 32;

/// Finds a repeated key among `keys` (key i is on line i + 1). Without one
/// returns 0; else the earliest line that repeats an earlier key, with that
/// key's first line in `firstLine`. `increasing` says the keys were seen in
/// strictly increasing order, so that there is no repeat and nothing to sort.
int64_t findRepeat(bool increasing, const std::vector<uint64_t> &keys,
                   int64_t &firstLine) {
  if (increasing)
    return 0;
  std::vector<std::pair<uint64_t, int64_t>> sorted(keys.size());
  for (size_t i = 0; i < keys.size(); ++i)
    sorted[i] = {keys[i], static_cast<int64_t>(i) + 1};
  std::sort(sorted.begin(), sorted.end());
  int64_t found = 0;
  for (size_t i = 1; i < sorted.size(); ++i) {
    // Within a run of equal keys the lines ascend: sorted[i] is the first
    // repeat of its key when sorted[i - 1] is the key's first occurrence.
    bool firstRepeat = sorted[i].first == sorted[i - 1].first &&
                       (i == 1 || sorted[i - 2].first != sorted[i].first);
    if (firstRepeat && (!found || sorted[i].second < found)) {
      found = sorted[i].second;
      firstLine = sorted[i - 1].second;
    }
  }
  return found;
}

std::string joinPath(const std::string &dir, StringRef file) {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, file);
  return std::string(p);
}

/// meta.txt: `key value` lines.
class Meta {
public:
  static llvm::Expected<Meta> read(const std::string &path) {
    auto buf = readFile(path);
    if (!buf)
      return buf.takeError();
    Meta m;
    m.path_ = path;
    m.buf_ = std::move(*buf);
    TextReader r(path, *m.buf_);
    if (r.size() == 0)
      return r.fileError("is empty");
    while (r.next()) {
      StringRef f[2];
      if (Error err = r.split(f, 2))
        return err;
      auto [it, inserted] = m.entries_.try_emplace(f[0], f[1], r.lineNo());
      if (!inserted)
        return r.error("duplicate key " + quote(f[0]) + " (first on line " +
                       Twine(it->second.line) + ")");
    }
    return m;
  }

  bool has(StringRef key) const { return entries_.count(key); }
  StringRef value(StringRef key) const { return entries_.lookup(key).value; }
  int64_t line(StringRef key) const { return entries_.lookup(key).line; }

  Error missing(StringRef key) const {
    return makeError(path_ + ": missing key '" + key + "'");
  }
  Error error(StringRef key, const Twine &msg) const {
    return makeError(path_ + ":" + Twine(line(key)) + ": " + msg);
  }

  /// The integer value of `key`, in [lo, hi].
  Error count(StringRef key, int64_t lo, int64_t hi, int64_t &out) const {
    if (!has(key))
      return missing(key);
    StringRef tok = value(key);
    int64_t v = 0;
    IntStatus st = parseInt(tok, v);
    if (st == IntStatus::NotAnInteger || tok[0] == '-')
      return error(key,
                   key + ": " + quote(tok) + " is not a non-negative integer");
    if (st == IntStatus::TooLarge || v < lo || v > hi)
      return error(key, key + " " + quote(tok) + " is out of range [" +
                            Twine(lo) + ", " + Twine(hi) + "]");
    out = v;
    return Error::success();
  }

private:
  struct Entry {
    StringRef value;
    int64_t line = 0;
    Entry() = default;
    Entry(StringRef value, int64_t line) : value(value), line(line) {}
  };
  std::string path_;
  std::unique_ptr<llvm::MemoryBuffer> buf_; // owns the StringRefs
  llvm::StringMap<Entry> entries_;
};

} // namespace

llvm::Expected<Dataset> saga::loadPlanetoid(const std::string &dir) {
  // meta.txt.
  const std::string metaPath = joinPath(dir, "meta.txt");
  auto metaOr = Meta::read(metaPath);
  if (!metaOr)
    return metaOr.takeError();
  const Meta &meta = *metaOr;

  int64_t numNodes = 0, numEdges = 0, numFeatures = 0, numClasses = 0;
  if (Error err = meta.count("num_nodes", 1, kMaxVertices, numNodes))
    return err;
  if (Error err = meta.count("num_edges", 0, Graph::kMaxEdges, numEdges))
    return err;
  if (Error err = meta.count("num_features", 1, kMaxVertices, numFeatures))
    return err;
  if (Error err = meta.count("num_classes", 1, kMaxVertices, numClasses))
    return err;
  if (numNodes * numFeatures > kMaxFeatureElements)
    return makeError(metaPath + ": num_nodes " + Twine(numNodes) +
                     " x num_features " + Twine(numFeatures) + " needs " +
                     Twine(numNodes * numFeatures) + " feature entries (" +
                     formatBytes(uint64_t(numNodes * numFeatures) * 4) +
                     "), more than a dense feature matrix holds (" +
                     Twine(kMaxFeatureElements) + " entries)");
  if (Error err = checkMemory(
          saturatingAdd(bytesOf({numNodes, numFeatures}, 4),
                        Graph::buildBytes(numNodes, 2 * numEdges, false)),
          metaPath + ": num_nodes " + Twine(numNodes) + " with num_features " +
              Twine(numFeatures) + " and num_edges " + Twine(numEdges)))
    return err;

  bool binary = false;
  if (meta.has("feature_values")) {
    StringRef fv = meta.value("feature_values");
    if (fv == "missing")
      return meta.error("feature_values",
                        "feature_values is 'missing': this dataset has no "
                        "features.txt, which loadPlanetoid needs");
    if (fv != "binary" && fv != "float32")
      return meta.error("feature_values", "feature_values " + quote(fv) +
                                              " is not 'binary' or 'float32'");
    binary = fv == "binary";
  }
  int64_t featureNnz = -1; // unchecked when absent
  if (meta.has("feature_nnz")) {
    if (meta.value("feature_nnz") == "missing")
      return meta.error("feature_nnz",
                        "feature_nnz is 'missing': this dataset has no "
                        "features.txt, which loadPlanetoid needs");
    if (Error err =
            meta.count("feature_nnz", 0, numNodes * numFeatures, featureNnz))
      return err;
  }

  Dataset ds;
  if (meta.has("name")) {
    ds.name = meta.value("name").str();
  } else {
    StringRef d = StringRef(dir).rtrim("/");
    ds.name = llvm::sys::path::filename(d.empty() ? StringRef(dir) : d).str();
  }
  ds.numClasses = static_cast<int32_t>(numClasses);
  const int32_t N = static_cast<int32_t>(numNodes);

  // labels.txt: exactly num_nodes lines.
  {
    const std::string path = joinPath(dir, "labels.txt");
    auto buf = readFile(path);
    if (!buf)
      return buf.takeError();
    TextReader r(path, **buf);
    // Each line is at least 2 bytes: do not trust num_nodes for the reserve.
    ds.labels.reserve(std::min<size_t>(N, r.size() / 2 + 1));
    while (r.next()) {
      if (r.lineNo() > numNodes)
        continue; // counted below
      StringRef f[1];
      int64_t label = 0;
      if (Error err = r.split(f, 1))
        return err;
      if (Error err = r.integerIn(f[0], "label", -1, numClasses, label))
        return err;
      ds.labels.push_back(static_cast<int32_t>(label));
    }
    if (r.lineNo() != numNodes)
      return r.fileError("has " + Twine(r.lineNo()) +
                         " lines, meta.txt says num_nodes " + Twine(numNodes));
  }

  // edges.txt: num_edges undirected edges u v -> directed 2i: u->v, 2i+1: v->u.
  {
    const std::string path = joinPath(dir, "edges.txt");
    auto buf = readFile(path);
    if (!buf)
      return buf.takeError();
    TextReader r(path, **buf);
    EdgeList &el = ds.edges;
    el.numVertices = N;
    // Each line is at least 4 bytes: do not trust num_edges for the reserve.
    const size_t lines = std::min<size_t>(numEdges, r.size() / 4 + 1);
    el.src.reserve(2 * lines);
    el.dst.reserve(2 * lines);
    std::vector<uint64_t> keys; // one per line, for findRepeat
    keys.reserve(lines);
    bool increasing = true;
    uint64_t prev = 0;
    while (r.next()) {
      StringRef f[2];
      int64_t u = 0, v = 0;
      if (Error err = r.split(f, 2))
        return err;
      if (Error err = r.index(f[0], "vertex id", numNodes, u))
        return err;
      if (Error err = r.index(f[1], "vertex id", numNodes, v))
        return err;
      if (u == v)
        return r.error("self loop " + Twine(u) + " " + Twine(v) +
                       " (edges.txt has none; they are added when the graph "
                       "is built)");
      uint64_t key =
          (uint64_t(std::min(u, v)) << 32) | uint64_t(std::max(u, v));
      if (r.lineNo() > 1 && key <= prev)
        increasing = false;
      prev = key;
      keys.push_back(key);
      el.src.push_back(static_cast<int32_t>(u));
      el.dst.push_back(static_cast<int32_t>(v));
      el.src.push_back(static_cast<int32_t>(v));
      el.dst.push_back(static_cast<int32_t>(u));
    }
    if (r.lineNo() != numEdges)
      return r.fileError("has " + Twine(r.lineNo()) +
                         " lines, meta.txt says num_edges " + Twine(numEdges));
    int64_t first = 0;
    if (int64_t again = findRepeat(increasing, keys, first)) {
      uint64_t key = keys[again - 1];
      return makeError(path + ":" + Twine(again) + ": edge {" +
                       Twine(key >> 32) + ", " + Twine(key & 0xffffffffu) +
                       "} is repeated (first on line " + Twine(first) + ")");
    }
  }

  // features.txt: node col value, the nonzeros.
  {
    const std::string path = joinPath(dir, "features.txt");
    auto buf = readFile(path);
    if (!buf)
      return buf.takeError();
    TextReader r(path, **buf);
    ds.features = Tensor({numNodes, numFeatures}, DType::F32);
    float *x = ds.features.f32();
    std::vector<uint64_t> keys;     // one per line, for findRepeat
    keys.reserve(r.size() / 6 + 1); // each line is at least 6 bytes
    bool increasing = true;
    uint64_t prev = 0;
    while (r.next()) {
      StringRef f[3];
      int64_t node = 0, col = 0;
      float value = 0;
      if (Error err = r.split(f, 3))
        return err;
      if (Error err = r.index(f[0], "vertex id", numNodes, node))
        return err;
      if (Error err = r.index(f[1], "column", numFeatures, col))
        return err;
      if (Error err = r.number(f[2], value))
        return err;
      if (binary && value != 0.0f && value != 1.0f)
        return r.error("value " + quote(f[2]) +
                       " is not 0 or 1 (meta.txt says feature_values binary)");
      uint64_t key = uint64_t(node) * uint64_t(numFeatures) + uint64_t(col);
      if (r.lineNo() > 1 && key <= prev)
        increasing = false;
      prev = key;
      x[key] = value;
      keys.push_back(key);
    }
    if (featureNnz >= 0 && r.lineNo() != featureNnz)
      return r.fileError("has " + Twine(r.lineNo()) +
                         " lines, meta.txt says feature_nnz " +
                         Twine(featureNnz));
    int64_t first = 0;
    if (int64_t again = findRepeat(increasing, keys, first)) {
      uint64_t key = keys[again - 1];
      return makeError(path + ":" + Twine(again) + ": entry (" +
                       Twine(key / numFeatures) + ", " +
                       Twine(key % numFeatures) +
                       ") is repeated (first on line " + Twine(first) + ")");
    }
  }

  // train.txt, val.txt, test.txt: labelled vertices, each in one split only.
  {
    struct Split {
      const char *file, *key;
      std::vector<int32_t> *ids;
    } splits[] = {{"train.txt", "num_train", &ds.train},
                  {"val.txt", "num_val", &ds.val},
                  {"test.txt", "num_test", &ds.test}};
    std::vector<uint8_t> inSplit(N, 0); // 1 + index into splits, 0 = none
    std::vector<int64_t> lineOf(N, 0);
    for (size_t s = 0; s < 3; ++s) {
      const Split &sp = splits[s];
      int64_t expected = -1;
      if (meta.has(sp.key))
        if (Error err = meta.count(sp.key, 0, numNodes, expected))
          return err;
      const std::string path = joinPath(dir, sp.file);
      auto buf = readFile(path);
      if (!buf)
        return buf.takeError();
      TextReader r(path, **buf);
      sp.ids->reserve(std::min<size_t>(N, r.size() / 2 + 1));
      while (r.next()) {
        StringRef f[1];
        int64_t v = 0;
        if (Error err = r.split(f, 1))
          return err;
        if (Error err = r.index(f[0], "vertex id", numNodes, v))
          return err;
        if (ds.labels[v] < 0)
          return r.error("vertex " + Twine(v) +
                         " has no label (-1 in labels.txt)");
        if (inSplit[v])
          return r.error("vertex " + Twine(v) + " is already in " +
                         splits[inSplit[v] - 1].file + " (line " +
                         Twine(lineOf[v]) + ")");
        inSplit[v] = static_cast<uint8_t>(s + 1);
        lineOf[v] = r.lineNo();
        sp.ids->push_back(static_cast<int32_t>(v));
      }
      if (expected >= 0 && r.lineNo() != expected)
        return r.fileError("has " + Twine(r.lineNo()) +
                           " lines, meta.txt says " + sp.key + " " +
                           Twine(expected));
      if (expected < 0 && r.lineNo() == 0)
        return r.fileError("is empty; expected one vertex id per line");
    }
  }

  return ds;
}
