//===- MatrixMarket.cpp - Matrix Market (.mtx) adjacency matrices ---------===//
//
// isMatrixMarketFile and loadMatrixMarket: the %%MatrixMarket header
// (coordinate pattern/real/integer, general/symmetric/skew-symmetric), the
// size line (square, entry count bounded), then 1-based entries, each an
// edge, a symmetric matrix's off-diagonal entries both directions.
//
//===----------------------------------------------------------------------===//

#include "runtime/graph/Loaders.h"
#include "runtime/graph/TextReader.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

using namespace saga;
using namespace saga::text;

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
