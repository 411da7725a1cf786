//===- OgbFolder.cpp - OGB node-property datasets as OGB unpacks them -----===//

#include "runtime/graph/OgbFolder.h"
#include "runtime/memory/MemoryLimit.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>

using namespace saga;

namespace {

/// The lines of a gzip file, numbered from 1.
class GzLines {
public:
  explicit GzLines(std::string path) : path(std::move(path)) {}
  ~GzLines() {
    if (file)
      gzclose(file);
  }
  llvm::Error open() {
    if (!llvm::sys::fs::exists(path))
      return llvm::createStringError(path + ": missing");
    file = gzopen(path.c_str(), "rb");
    if (!file)
      return llvm::createStringError(path + ": cannot open");
    gzbuffer(file, 1 << 20);
    return llvm::Error::success();
  }
  /// The next line (without its newline) into `line`; false at the end.
  llvm::Expected<bool> next(std::string &line) {
    line.clear();
    while (true) {
      if (pos < filled) {
        const char *start = buffer.data() + pos;
        const char *nl = static_cast<const char *>(
            std::memchr(start, '\n', size_t(filled - pos)));
        if (nl) {
          line.append(start, size_t(nl - start));
          pos += int64_t(nl - start) + 1;
          ++number;
          if (!line.empty() && line.back() == '\r')
            line.pop_back();
          return true;
        }
        line.append(start, size_t(filled - pos));
        pos = filled;
        if (line.size() >= (size_t(1) << 26) &&
            line.size() >= line.capacity() - buffer.size())
          // One line growing past 64 MiB: a gzip bomb or not a CSV.
          if (llvm::Error e = checkMemory(
                  line.size() * 2, path + ":" + std::to_string(number + 1) +
                                       ": a line of " +
                                       std::to_string(line.size()) +
                                       " bytes so far, growing"))
            return std::move(e);
      }
      if (ended) {
        if (line.empty())
          return false;
        ++number; // a last line without its newline
        return true;
      }
      int n = gzread(file, buffer.data(), unsigned(buffer.size()));
      if (n < 0) {
        int code = 0;
        const char *why = gzerror(file, &code);
        return llvm::createStringError(
            path + ": the gzip stream is corrupt after line " +
            std::to_string(number) + " (" + (why ? why : "?") + ")");
      }
      if (n == 0) {
        int code = 0;
        const char *why = gzerror(file, &code);
        if (code != Z_OK && code != Z_STREAM_END)
          return llvm::createStringError(
              path + ": the gzip stream is corrupt or truncated after line " +
              std::to_string(number) + " (" + (why ? why : "?") + ")");
        ended = true;
      }
      pos = 0;
      filled = n;
    }
  }
  /// `fn` on every line left, until it or the stream fails.
  llvm::Error forEach(const std::function<llvm::Error(const std::string &)> &fn) {
    std::string line;
    while (true) {
      auto more = next(line);
      if (!more)
        return more.takeError();
      if (!*more)
        return llvm::Error::success();
      if (llvm::Error e = fn(line))
        return e;
    }
  }
  /// "path:line: what".
  llvm::Error error(const std::string &what) const {
    return llvm::createStringError(path + ":" + std::to_string(number) + ": " +
                                   what);
  }
  const std::string path;
  int64_t number = 0;

private:
  gzFile file = nullptr;
  std::vector<char> buffer = std::vector<char>(1 << 20);
  int64_t pos = 0, filled = 0;
  bool ended = false;
};

/// A non-negative integer filling `text`, or -1.
int64_t integer(llvm::StringRef text) {
  text = text.trim();
  int64_t v;
  if (text.empty() || text.getAsInteger(10, v) || v < 0)
    return -1;
  return v;
}

/// Vertex ids, one per line, each in [0, n).
llvm::Expected<std::vector<int32_t>> readIds(const std::string &path,
                                             int64_t n) {
  GzLines in(path);
  if (llvm::Error e = in.open())
    return std::move(e);
  std::vector<int32_t> ids;
  if (llvm::Error e = in.forEach([&](const std::string &line) -> llvm::Error {
        int64_t v = integer(line);
        if (v < 0)
          return in.error("'" + line + "' is not a vertex id");
        if (v >= n)
          return in.error("vertex " + std::to_string(v) +
                          " is out of range [0, " + std::to_string(n) + ")");
        ids.push_back(int32_t(v));
        return llvm::Error::success();
      }))
    return std::move(e);
  return ids;
}

} // namespace

bool saga::isOgbFolder(const std::string &dir) {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, "raw", "edge.csv.gz");
  return llvm::sys::fs::exists(p);
}

llvm::Expected<Dataset> saga::loadOgbFolder(const std::string &dir) {
  auto file = [&](std::initializer_list<llvm::StringRef> parts) {
    llvm::SmallString<256> p(dir);
    for (llvm::StringRef part : parts)
      llvm::sys::path::append(p, part);
    return std::string(p);
  };
  Dataset d;
  d.name = llvm::sys::path::filename(llvm::StringRef(dir).rtrim('/')).str();
  std::string line;
  // The vertex count, if given.
  int64_t n = -1;
  if (std::string path = file({"raw", "num-node-list.csv.gz"});
      llvm::sys::fs::exists(path)) {
    GzLines in(path);
    if (llvm::Error e = in.open())
      return std::move(e);
    auto more = in.next(line);
    if (!more)
      return more.takeError();
    n = *more ? integer(line) : -1;
    if (n < 0 || n > std::numeric_limits<int32_t>::max())
      return in.error(*more ? "'" + line + "' is not a vertex count below 2^31"
                            : std::string("empty: no vertex count"));
  }
  // Features: their rows give the count when the list is absent.
  {
    GzLines in(file({"raw", "node-feat.csv.gz"}));
    if (llvm::Error e = in.open())
      return std::move(e);
    std::vector<float> values;
    int64_t width = -1, rows = 0;
    while (true) {
      auto more = in.next(line);
      if (!more)
        return more.takeError();
      if (!*more)
        break;
      if (n >= 0 && rows == n)
        return in.error("more feature rows than the " + std::to_string(n) +
                        " vertices of num-node-list.csv.gz");
      int64_t count = 0;
      const char *p = line.c_str();
      while (true) {
        char *end;
        errno = 0;
        float v = std::strtof(p, &end);
        if (end == p || errno == ERANGE || !std::isfinite(v))
          return in.error("value " + std::to_string(count + 1) +
                          " is not a finite number");
        if (values.size() == values.capacity() && values.size() >= (1 << 20))
          // Growing: a gzip stream may inflate far past its file (a bomb).
          if (llvm::Error e = checkMemory(
                  values.size() * 2 * sizeof(float),
                  in.path + ":" + std::to_string(in.number) + ": " +
                      std::to_string(values.size()) +
                      " feature values so far, growing"))
            return std::move(e);
        values.push_back(v);
        ++count;
        p = end;
        while (*p == ' ')
          ++p;
        if (*p == ',') {
          ++p;
          continue;
        }
        if (*p != '\0')
          return in.error("value " + std::to_string(count) +
                          " is followed by '" + std::string(1, *p) +
                          "', not a comma");
        break;
      }
      if (width < 0)
        width = count;
      else if (count != width)
        return in.error(std::to_string(count) + " features; the rows before "
                        "have " + std::to_string(width));
      ++rows;
    }
    if (n < 0)
      n = rows;
    if (rows != n)
      return in.error("the file ends after " + std::to_string(rows) +
                      " feature rows; num-node-list.csv.gz says " +
                      std::to_string(n) + " vertices");
    if (n > std::numeric_limits<int32_t>::max())
      return in.error("more vertices than Saga numbers (2^31 - 1)");
    d.features = Tensor::uninitialized({n, std::max<int64_t>(width, 0)});
    std::copy(values.begin(), values.end(), d.features.f32());
  }
  // Edges.
  {
    GzLines in(file({"raw", "edge.csv.gz"}));
    if (llvm::Error e = in.open())
      return std::move(e);
    if (llvm::Error e = in.forEach([&](const std::string &line) -> llvm::Error {
          auto [a, b] = llvm::StringRef(line).split(',');
          int64_t u = integer(a), v = integer(b);
          if (u < 0 || v < 0 || b.contains(','))
            return in.error("'" + line + "' is not a 'src,dst' pair of "
                            "vertex ids");
          for (int64_t w : {u, v})
            if (w >= n)
              return in.error("vertex " + std::to_string(w) +
                              " is out of range [0, " + std::to_string(n) +
                              ")");
          if (int64_t(d.edges.src.size()) >= Graph::kMaxEdges)
            return in.error("more edges than Saga numbers (" +
                            std::to_string(Graph::kMaxEdges) + ")");
          d.edges.src.push_back(int32_t(u));
          d.edges.dst.push_back(int32_t(v));
          return llvm::Error::success();
        }))
      return std::move(e);
    d.edges.numVertices = int32_t(n);
  }
  // Labels.
  {
    GzLines in(file({"raw", "node-label.csv.gz"}));
    if (llvm::Error e = in.open())
      return std::move(e);
    if (llvm::Error e = in.forEach([&](const std::string &line) -> llvm::Error {
          if (int64_t(d.labels.size()) == n)
            return in.error("more labels than the " + std::to_string(n) +
                            " vertices");
          llvm::StringRef t = llvm::StringRef(line).trim();
          bool nan = t == "nan" || t == "NaN";
          int64_t c = nan ? -1 : integer(t);
          if (c < 0 && !nan)
            return in.error("'" + line + "' is not a class (a non-negative "
                            "integer, or nan)");
          if (c >= (int64_t(1) << 20))
            return in.error("class " + std::to_string(c) +
                            " is absurdly large");
          d.labels.push_back(int32_t(c));
          d.numClasses = std::max<int32_t>(d.numClasses, int32_t(c + 1));
          return llvm::Error::success();
        }))
      return std::move(e);
    if (int64_t(d.labels.size()) != n)
      return in.error("the file ends after " + std::to_string(d.labels.size()) +
                      " labels, not one per vertex (" + std::to_string(n) +
                      ")");
  }
  // The split: the one kind under split/.
  std::vector<std::string> kinds;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(file({"split"}), ec), end;
       it != end && !ec; it.increment(ec))
    if (llvm::sys::fs::is_directory(it->path()))
      kinds.push_back(it->path());
  std::sort(kinds.begin(), kinds.end());
  if (kinds.empty())
    return llvm::createStringError(file({"split"}) +
                                   ": missing (a folder of train, valid and "
                                   "test vertex lists)");
  if (kinds.size() > 1)
    return llvm::createStringError(
        file({"split"}) + ": " + std::to_string(kinds.size()) +
        " splits (" + llvm::sys::path::filename(kinds[0]).str() + ", " +
        llvm::sys::path::filename(kinds[1]).str() +
        (kinds.size() > 2 ? ", ..." : "") + "); keep the one to train on");
  std::vector<int32_t> *lists[3] = {&d.train, &d.val, &d.test};
  const char *names[3] = {"train", "valid", "test"};
  std::vector<int8_t> taken(size_t(n), -1);
  for (int k = 0; k < 3; ++k) {
    llvm::SmallString<256> path(kinds[0]);
    llvm::sys::path::append(path, std::string(names[k]) + ".csv.gz");
    auto ids = readIds(std::string(path), n);
    if (!ids)
      return ids.takeError();
    for (int32_t v : *ids) {
      if (d.labels[size_t(v)] < 0)
        return llvm::createStringError(std::string(path) + ": vertex " +
                                       std::to_string(v) +
                                       " has no label (nan)");
      if (taken[size_t(v)] >= 0)
        return llvm::createStringError(
            std::string(path) + ": vertex " + std::to_string(v) +
            " is also in the " + names[taken[size_t(v)]] + " split");
      taken[size_t(v)] = int8_t(k);
    }
    *lists[k] = std::move(*ids);
  }
  return d;
}
