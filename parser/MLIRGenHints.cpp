//===- MLIRGenHints.cpp - spelling hints ----------------------------------===//
//
// "did you mean" notes: the names visible where an unknown name is used, and
// the closest of a list of candidates by optimal string alignment distance.
//
//===----------------------------------------------------------------------===//

#include "parser/GeneratorImpl.h"

#include <algorithm>
#include <vector>

namespace saga::mlirgen {

std::vector<std::string> Generator::visibleNames(Frame &f) {
  std::vector<std::string> names;
  for (auto &kv : f.locals)
    names.push_back(kv.getKey().str());
  if (f.layer) {
    for (auto &kv : f.layer->params)
      names.push_back(kv.getKey().str());
    for (auto &kv : f.layer->intArgs)
      names.push_back(kv.getKey().str());
  }
  for (const char *bi : kBuiltins)
    names.push_back(bi);
  return names;
}

namespace {

/// The optimal string alignment distance between `a` and `b`: insertions,
/// deletions, substitutions and transpositions of two adjacent characters
/// each count one edit (`rleu` is one edit from `relu`). Returns `limit` as
/// soon as the distance is known to be at least `limit`.
unsigned osaDistance(StringRef a, StringRef b, unsigned limit) {
  size_t n = a.size(), m = b.size();
  if ((n > m ? n - m : m - n) >= limit)
    return limit;
  // Three rows of the dynamic programming table: i - 2, i - 1 and i.
  std::vector<unsigned> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j)
    prev[j] = j;
  unsigned prevMin = 0;
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    unsigned rowMin = cur[0];
    for (size_t j = 1; j <= m; ++j) {
      unsigned cost = a[i - 1] == b[j - 1] ? 0 : 1;
      unsigned d = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d = std::min(d, prev2[j - 2] + 1);
      cur[j] = d;
      rowMin = std::min(rowMin, d);
    }
    // Every later entry is at least the smallest of this row or the one
    // before it (a transposition reaches back two rows).
    if (std::min(rowMin, prevMin) >= limit)
      return limit;
    prevMin = rowMin;
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return std::min(prev[m], limit);
}

} // namespace

void Generator::suggest(InFlightDiagnostic &d, StringRef name,
                        ArrayRef<std::string> candidates) {
  // Up to a third of the name may differ (at least one edit), so that short
  // names are not matched to unrelated built-ins.
  std::string best;
  unsigned bestDist = std::max<unsigned>(1, name.size() / 3) + 1;
  for (const std::string &c : candidates) {
    unsigned dist = osaDistance(name, c, bestDist);
    if (dist < bestDist) {
      bestDist = dist;
      best = c;
    }
  }
  if (!best.empty())
    d.attachNote() << "did you mean '" << best << "'?";
}

} // namespace saga::mlirgen
