//===- EdgeList.cpp - plain `src dst` edge lists --------------------------===//
//
// loadEdgeList: one pair of vertex ids per line, blank and comment lines
// skipped, the vertex count given or 1 + the largest id, the edge count
// bounded by 32-bit edge ids.
//
//===----------------------------------------------------------------------===//

#include "runtime/graph/Loaders.h"
#include "runtime/graph/TextReader.h"

#include <algorithm>

using namespace saga;
using namespace saga::text;

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
