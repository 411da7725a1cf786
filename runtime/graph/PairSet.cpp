//===- PairSet.cpp - labelled vertex pairs a link loss scores -------------===//

#include "runtime/graph/PairSet.h"

#include <climits>

using namespace saga;

PairSet PairSet::make(int32_t numVertices, std::vector<int32_t> src,
                      std::vector<int32_t> dst, std::vector<float> label,
                      std::string *error) {
  auto fail = [&](std::string why) {
    if (error)
      *error = std::move(why);
    return PairSet();
  };
  if (numVertices < 0)
    return fail("a negative vertex count");
  if (src.size() != dst.size() || src.size() != label.size())
    return fail("pairs of " + std::to_string(src.size()) + " sources, " +
                std::to_string(dst.size()) + " destinations and " +
                std::to_string(label.size()) + " labels");
  if (src.size() > size_t(INT32_MAX) / 2)
    return fail(std::to_string(src.size()) + " pairs; at most " +
                std::to_string(INT32_MAX / 2) + " in one set");
  for (size_t i = 0; i < src.size(); ++i) {
    for (int32_t v : {src[i], dst[i]})
      if (v < 0 || v >= numVertices)
        return fail("pair " + std::to_string(i) + " has vertex " +
                    std::to_string(v) + ", outside [0, " +
                    std::to_string(numVertices) + ")");
    if (label[i] != 0.0f && label[i] != 1.0f)
      return fail("pair " + std::to_string(i) + " has label " +
                  std::to_string(label[i]) + "; labels are 0 or 1");
  }
  PairSet p;
  p.numVertices = numVertices;
  p.incidenceOffsets.assign(size_t(numVertices) + 1, 0);
  for (size_t i = 0; i < src.size(); ++i) {
    ++p.incidenceOffsets[size_t(src[i]) + 1];
    ++p.incidenceOffsets[size_t(dst[i]) + 1];
  }
  for (size_t v = 0; v < size_t(numVertices); ++v)
    p.incidenceOffsets[v + 1] += p.incidenceOffsets[v];
  p.incidencePair.resize(src.size() * 2);
  p.incidenceOther.resize(src.size() * 2);
  std::vector<int64_t> at(p.incidenceOffsets.begin(),
                          p.incidenceOffsets.end() - 1);
  for (size_t i = 0; i < src.size(); ++i) {
    // Pairs in ascending order at each end: i is placed before i + 1.
    int64_t a = at[size_t(src[i])]++;
    p.incidencePair[size_t(a)] = int32_t(i);
    p.incidenceOther[size_t(a)] = dst[i];
    int64_t b = at[size_t(dst[i])]++;
    p.incidencePair[size_t(b)] = int32_t(i);
    p.incidenceOther[size_t(b)] = src[i];
  }
  p.src = std::move(src);
  p.dst = std::move(dst);
  p.label = std::move(label);
  return p;
}
