//===- Loaders.cpp - graph and feature files ------------------------------===//
//
// Each file is read whole (one MemoryBuffer) and cut into lines and
// space/tab-separated fields by hand; numbers are parsed without locale or
// iostreams. Every rejection is an llvm::Error "PATH:LINE: what" (or
// "PATH: what" for whole-file problems such as a wrong line count).
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
#include "runtime/memory/MemoryLimit.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Compiler.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <system_error>
#include <utility>

using namespace saga;
using llvm::Error;
using llvm::StringRef;
using llvm::Twine;

namespace {

/// Vertex ids are int32 and the vertex count must be an int32 too, so ids are
/// below INT32_MAX.
constexpr int64_t kMaxVertices = std::numeric_limits<int32_t>::max();
/// Largest dense feature matrix loadPlanetoid allocates (elements; 16 GiB).
constexpr int64_t kMaxFeatureElements = int64_t(1) << 32;

Error makeError(const Twine &msg) {
  return llvm::createStringError(
      std::make_error_code(std::errc::invalid_argument), msg);
}

/// A token for a message: quoted, non-printables escaped, cut at 40 chars.
std::string quote(StringRef tok) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << '\'';
  llvm::printEscapedString(tok.take_front(40), os);
  if (tok.size() > 40)
    os << "...";
  os << '\'';
  return s;
}

/// A token known to be printable (digits), cut at 40 chars, unquoted.
std::string shorten(StringRef tok) {
  return tok.size() <= 40 ? tok.str() : (tok.take_front(40) + "...").str();
}

/// Reads a whole file. A missing or unreadable file is "cannot open PATH:
/// reason".
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readFile(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (std::error_code ec = buf.getError())
    return llvm::createStringError(ec,
                                   "cannot open " + path + ": " + ec.message());
  return std::move(*buf);
}

enum class IntStatus { Ok, NotAnInteger, TooLarge };

/// Parses `-?[0-9]+` exactly. Magnitudes of 19 or more digits are TooLarge
/// (every caller's limit is far below 10^18).
IntStatus parseInt(StringRef tok, int64_t &out) {
  bool neg = !tok.empty() && tok[0] == '-';
  StringRef digits = neg ? tok.drop_front() : tok;
  if (digits.empty())
    return IntStatus::NotAnInteger;
  int64_t v = 0;
  size_t significant = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return IntStatus::NotAnInteger;
    if (significant || c != '0')
      ++significant;
    if (significant > 18) {
      // Keep scanning: "123...x" is still not an integer.
      continue;
    }
    v = v * 10 + (c - '0');
  }
  if (significant > 18)
    return IntStatus::TooLarge;
  out = neg ? -v : v;
  return IntStatus::Ok;
}

/// The lines of a file and the fields of the current line.
class TextReader {
public:
  TextReader(std::string path, const llvm::MemoryBuffer &buf)
      : path_(std::move(path)), cur_(buf.getBufferStart()),
        end_(buf.getBufferEnd()), size_(buf.getBufferSize()) {}

  const std::string &path() const { return path_; }
  size_t size() const { return size_; }
  StringRef line() const { return line_; }
  int64_t lineNo() const { return lineNo_; }

  /// Advances to the next line ('\n' or "\r\n" ended; the last may lack its
  /// end). False at the end of the file.
  bool next() {
    if (cur_ == end_)
      return false;
    const char *nl =
        static_cast<const char *>(std::memchr(cur_, '\n', end_ - cur_));
    const char *stop = nl ? nl : end_;
    line_ = StringRef(cur_, stop - cur_);
    if (line_.ends_with("\r"))
      line_ = line_.drop_back();
    cur_ = nl ? nl + 1 : end_;
    ++lineNo_;
    return true;
  }

  /// "PATH:LINE: msg".
  Error error(const Twine &msg) const {
    return makeError(path_ + ":" + Twine(lineNo_) + ": " + msg);
  }
  /// "PATH: msg".
  Error fileError(const Twine &msg) const {
    return makeError(path_ + ": " + msg);
  }

  // The checks below are split into an inlined fast path (valid input) and
  // an out-of-line diagnosis, which keeps the per-line cost to a few
  // compares.

  /// Splits the line at runs of spaces and tabs into exactly `n` fields.
  Error split(StringRef *fields, size_t n) const {
    size_t count = 0;
    const char *p = line_.begin(), *e = line_.end();
    while (true) {
      while (p != e && (*p == ' ' || *p == '\t'))
        ++p;
      if (p == e)
        break;
      const char *start = p;
      while (p != e && *p != ' ' && *p != '\t')
        ++p;
      if (count < n)
        fields[count] = StringRef(start, p - start);
      ++count;
    }
    if (LLVM_LIKELY(count == n))
      return Error::success();
    return columnsError(n, count);
  }

  /// A non-negative integer below `limit`; `what` names it in the range
  /// message ("vertex id 2708 is out of range [0, 2708)").
  Error index(StringRef tok, const char *what, int64_t limit,
              int64_t &out) const {
    // Fast path: 1..18 plain digits, below the limit.
    if (LLVM_LIKELY(!tok.empty() && tok.size() <= 18)) {
      // Unsigned: garbage characters only wrap around, and fail `digits`.
      uint64_t v = 0;
      bool digits = true;
      for (char c : tok) {
        uint64_t d = uint64_t(static_cast<unsigned char>(c)) - uint64_t('0');
        digits &= d <= 9;
        v = v * 10 + d;
      }
      if (LLVM_LIKELY(digits && v < static_cast<uint64_t>(limit))) {
        out = static_cast<int64_t>(v);
        return Error::success();
      }
    }
    return indexError(tok, what, limit);
  }

  /// An integer in [lo, hi).
  Error integerIn(StringRef tok, const char *what, int64_t lo, int64_t hi,
                  int64_t &out) const {
    int64_t v = 0;
    if (LLVM_LIKELY(parseInt(tok, v) == IntStatus::Ok && v >= lo && v < hi)) {
      out = v;
      return Error::success();
    }
    return integerError(tok, what, lo, hi);
  }

  /// A finite float32 in plain decimal or exponent notation.
  Error number(StringRef tok, float &out) const {
    // The binary data sets are all "1".
    if (tok.size() == 1 && tok[0] >= '0' && tok[0] <= '9') {
      out = static_cast<float>(tok[0] - '0');
      return Error::success();
    }
    auto [ptr, ec] = std::from_chars(tok.begin(), tok.end(), out);
    if (LLVM_LIKELY(ec == std::errc() && ptr == tok.end() &&
                    std::isfinite(out)))
      return Error::success();
    return numberError(tok, ec, ptr);
  }

private:
  LLVM_ATTRIBUTE_NOINLINE Error columnsError(size_t n, size_t count) const {
    return error("expected " + Twine(n) + (n == 1 ? " column" : " columns") +
                 ", found " + Twine(count));
  }

  LLVM_ATTRIBUTE_NOINLINE Error indexError(StringRef tok, const char *what,
                                           int64_t limit) const {
    int64_t v = 0;
    IntStatus st = parseInt(tok, v);
    if (st == IntStatus::NotAnInteger || tok[0] == '-')
      return error(quote(tok) + " is not a non-negative integer");
    return error(Twine(what) + " " + shorten(tok) + " is out of range [0, " +
                 Twine(limit) + ")");
  }

  LLVM_ATTRIBUTE_NOINLINE Error integerError(StringRef tok, const char *what,
                                             int64_t lo, int64_t hi) const {
    int64_t v = 0;
    if (parseInt(tok, v) == IntStatus::NotAnInteger)
      return error(quote(tok) + " is not an integer");
    return error(Twine(what) + " " + shorten(tok) + " is out of range [" +
                 Twine(lo) + ", " + Twine(hi) + ")");
  }

  LLVM_ATTRIBUTE_NOINLINE Error numberError(StringRef tok, std::errc ec,
                                            const char *ptr) const {
    if (ec == std::errc::invalid_argument || ptr != tok.end())
      return error(quote(tok) + " is not a number");
    if (ec == std::errc::result_out_of_range)
      return error(quote(tok) + " is out of the float32 range");
    return error(quote(tok) + " is not a finite number");
  }

private:
  std::string path_;
  const char *cur_, *end_;
  size_t size_;
  StringRef line_;
  int64_t lineNo_ = 0;
};

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

llvm::Expected<EdgeList> saga::loadEdgeList(const std::string &path,
                                            int64_t numVertices,
                                            int64_t maxEdges) {
  if (numVertices > kMaxVertices)
    return makeError(path + ": vertex count " + Twine(numVertices) +
                     " is out of range [0, " + Twine(kMaxVertices) + "]");
  auto buf = readFile(path);
  if (!buf)
    return buf.takeError();
  TextReader r(path, **buf);
  if (r.size() == 0)
    return r.fileError("is empty; expected `src dst` lines");

  const int64_t limit = numVertices >= 0 ? numVertices : kMaxVertices;
  EdgeList el;
  // Every edge line is at least 4 bytes ("0 1\n").
  el.src.reserve(r.size() / 4 + 1);
  el.dst.reserve(r.size() / 4 + 1);
  int64_t maxId = -1;
  while (r.next()) {
    StringRef t = r.line().ltrim(" \t");
    if (t.empty() || t[0] == '#' || t[0] == '%')
      continue;
    StringRef f[2];
    int64_t u = 0, v = 0;
    if (Error err = r.split(f, 2))
      return err;
    if (Error err = r.index(f[0], "vertex id", limit, u))
      return err;
    if (Error err = r.index(f[1], "vertex id", limit, v))
      return err;
    if (int64_t(el.src.size()) == maxEdges)
      return r.error("more than " + Twine(maxEdges) +
                     " edges; Saga numbers edges with 32-bit ids");
    el.src.push_back(static_cast<int32_t>(u));
    el.dst.push_back(static_cast<int32_t>(v));
    maxId = std::max({maxId, u, v});
  }
  if (el.src.empty())
    return r.fileError("has no edges (only blank and comment lines)");
  el.numVertices =
      static_cast<int32_t>(numVertices >= 0 ? numVertices : maxId + 1);
  if (std::string why = Graph::buildError(el.numVertices,
                                          int64_t(el.src.size()), false);
      !why.empty())
    return r.fileError("ids up to " + Twine(maxId) + ": " + why);
  return el;
}

bool saga::isMatrixMarketFile(const std::string &path) {
  char head[14] = {};
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return false;
  size_t n = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  return n == sizeof head && std::memcmp(head, "%%MatrixMarket", 14) == 0;
}

llvm::Expected<EdgeList> saga::loadMatrixMarket(const std::string &path) {
  auto buf = readFile(path);
  if (!buf)
    return buf.takeError();
  TextReader r(path, **buf);
  if (!r.next())
    return r.fileError("is empty; expected a %%MatrixMarket header");
  llvm::SmallVector<StringRef> h;
  r.line().split(h, ' ', -1, /*KeepEmpty=*/false);
  if (h.size() != 5 || h[0] != "%%MatrixMarket")
    return r.error("expected '%%MatrixMarket matrix coordinate FIELD "
                   "SYMMETRY'");
  std::string object = h[1].lower(), format = h[2].lower(),
              field = h[3].lower(), symmetry = h[4].lower();
  if (object != "matrix")
    return r.error("a Matrix Market '" + h[1] + "', not a matrix");
  if (format != "coordinate")
    return r.error("a dense '" + h[2] +
                   "' matrix; a graph is a sparse 'coordinate' matrix");
  if (field != "pattern" && field != "real" && field != "integer" &&
      field != "double")
    return r.error("'" + h[3] +
                   "' entries; Saga reads pattern, real and integer");
  if (symmetry != "general" && symmetry != "symmetric" &&
      symmetry != "skew-symmetric")
    return r.error("'" + h[4] + "' symmetry; Saga reads general, symmetric "
                   "and skew-symmetric");
  const bool symmetric = symmetry != "general";
  const size_t columns = field == "pattern" ? 2 : 3;
  // The size line, after comments.
  int64_t m = -1, n = -1, nnz = -1, sizeLine = 0;
  EdgeList el;
  int64_t entries = 0;
  while (r.next()) {
    StringRef t = r.line().ltrim(" \t");
    if (t.empty() || t[0] == '%')
      continue;
    if (m < 0) {
      StringRef f[3];
      if (Error err = r.split(f, 3))
        return err;
      if (Error err = r.integerIn(f[0], "row count", 1, kMaxVertices + 1, m))
        return err;
      if (Error err = r.integerIn(f[1], "column count", 1, kMaxVertices + 1, n))
        return err;
      if (m != n)
        return r.error("a " + Twine(m) + " x " + Twine(n) +
                       " matrix; an adjacency matrix is square");
      if (Error err = r.integerIn(f[2], "entry count", 0,
                                  Graph::kMaxEdges / (symmetric ? 2 : 1) + 1,
                                  nnz))
        return err;
      sizeLine = r.lineNo();
      const int64_t edges = nnz * (symmetric ? 2 : 1);
      if (std::string why = Graph::buildError(m, edges, false); !why.empty())
        return r.error("the size line's graph: " + why);
      // Every entry line is at least 4 bytes ("1 2\n").
      const size_t reserve =
          size_t(std::min<int64_t>(edges, int64_t(r.size() / 4 + 1) * 2));
      el.src.reserve(reserve);
      el.dst.reserve(reserve);
      continue;
    }
    StringRef f[3];
    if (Error err = r.split(f, columns))
      return err;
    int64_t i = 0, j = 0;
    if (Error err = r.integerIn(f[0], "row", 1, m + 1, i))
      return err;
    if (Error err = r.integerIn(f[1], "column", 1, n + 1, j))
      return err;
    if (columns == 3) {
      float value;
      if (Error err = r.number(f[2], value))
        return err;
    }
    if (++entries > nnz)
      return r.error("more entries than the " + Twine(nnz) +
                     " of the size line (line " + Twine(sizeLine) + ")");
    if (symmetric && j > i)
      return r.error("entry (" + Twine(i) + ", " + Twine(j) +
                     ") above the diagonal of a " + symmetry +
                     " matrix, which stores its lower triangle");
    el.src.push_back(int32_t(i - 1));
    el.dst.push_back(int32_t(j - 1));
    if (symmetric && i != j) {
      el.src.push_back(int32_t(j - 1));
      el.dst.push_back(int32_t(i - 1));
    }
  }
  if (m < 0)
    return r.fileError("has no size line ('M N NNZ')");
  if (entries < nnz)
    return r.fileError("has " + Twine(entries) + " entries; its size line (line " +
                       Twine(sizeLine) + ") declares " + Twine(nnz));
  el.numVertices = int32_t(m);
  return el;
}

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

void saga::rowNormalize(Tensor &features) {
  rowNormalize(features.f32(), features.rows(), features.rowSize());
}

namespace {
/// row[j] = float(row[j] / s), compiled for AVX2 (four lanes, against
/// SSE2's two) and for any x86-64, picked once at run time: IEEE division
/// rounds the same at any vector width, so both give the same bits. Not a
/// target_clones ifunc: its resolver runs inside the dynamic loader, before
/// ThreadSanitizer's runtime is initialised, and crashed every TSan binary
/// at start-up.
using DivideRow = void (*)(float *, int64_t, double);
#define SAGA_DIVIDE_ROW_BODY                                                   \
  for (int64_t j = 0; j < f; ++j)                                              \
    row[j] = float(row[j] / s);
void divideRowPlain(float *row, int64_t f, double s) { SAGA_DIVIDE_ROW_BODY }
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) void divideRowAvx2(float *row, int64_t f,
                                                   double s) {
  SAGA_DIVIDE_ROW_BODY
}
#endif
#undef SAGA_DIVIDE_ROW_BODY
DivideRow chosenDivideRow() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const DivideRow chosen =
      __builtin_cpu_supports("avx2") ? divideRowAvx2 : divideRowPlain;
  return chosen;
#else
  return divideRowPlain;
#endif
}
} // namespace

void saga::rowNormalize(float *rows, int64_t n, int64_t f) {
  const DivideRow divideRow = chosenDivideRow();
  auto divide = [f, divideRow](float *row, double s) {
    if (s != 0)
      divideRow(row, f, s);
  };
  // Each row's sum in double, added in column order; kRows rows at a time
  // so that their additions overlap (the same sums, bit for bit, as one
  // row at a time: each row's additions keep their order).
  constexpr int64_t kRows = 8;
  int64_t v = 0;
  for (; v + kRows <= n; v += kRows) {
    float *block = rows + v * f;
    double s[kRows] = {};
    for (int64_t j = 0; j < f; ++j)
      for (int64_t k = 0; k < kRows; ++k)
        s[k] += block[k * f + j];
    for (int64_t k = 0; k < kRows; ++k)
      divide(block + k * f, s[k]);
  }
  for (; v < n; ++v) {
    float *row = rows + v * f;
    double s = 0;
    for (int64_t j = 0; j < f; ++j)
      s += row[j];
    divide(row, s);
  }
}
