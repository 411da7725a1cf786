//===- Synthetic.cpp - generated graphs and features for benchmarks -------===//

#include "runtime/graph/Synthetic.h"
#include "runtime/memory/MemoryLimit.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <numeric>

using namespace saga;

namespace {
uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// xoshiro256** (Blackman and Vigna), its state filled from splitmix64.
class Xoshiro256 {
public:
  explicit Xoshiro256(uint64_t seed) {
    for (uint64_t &word : s)
      word = splitmix64(seed);
  }
  uint64_t next() {
    const uint64_t result = rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }
  /// Uniform in [0, bound), bound >= 1 (multiply-shift; the bias is below
  /// bound / 2^64, far under anything a benchmark graph can show).
  uint64_t below(uint64_t bound) {
    return uint64_t((unsigned __int128)next() * bound >> 64);
  }

private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s[4];
};

/// Distinct streams for the parts of one seed's output.
constexpr uint64_t kEdgeStream = 0x52a7e1c6b3d90f41ULL;
constexpr uint64_t kPermutationStream = 0x7c1f3a9d85e26b07ULL;
constexpr uint64_t kFeatureStream = 0x3e8b5d2f9a14c6e3ULL;
constexpr uint64_t kLabelStream = 0x9d2c5680a1b3e7f5ULL;
} // namespace

EdgeList saga::rmatGraph(int scale, int edgeFactor, uint64_t seed) {
  if (scale < 1 || scale > 30)
    llvm::report_fatal_error("saga::rmatGraph: scale must be in [1, 30]");
  if (edgeFactor < 1)
    llvm::report_fatal_error("saga::rmatGraph: edge factor must be >= 1");
  const uint64_t numVertices = uint64_t(1) << scale;
  const uint64_t requested = numVertices * uint64_t(edgeFactor);

  // Quadrant thresholds on a 64-bit uniform draw: a | b | c | d.
  const uint64_t ta = uint64_t(0.57 * 0x1p64);
  const uint64_t tb = uint64_t((0.57 + 0.19) * 0x1p64);
  const uint64_t tc = uint64_t((0.57 + 0.19 + 0.19) * 0x1p64);

  // Random relabelling of the vertices (Fisher-Yates).
  std::vector<uint32_t> perm(numVertices);
  std::iota(perm.begin(), perm.end(), 0u);
  Xoshiro256 permRng(seed ^ kPermutationStream);
  for (uint64_t i = numVertices - 1; i > 0; --i)
    std::swap(perm[i], perm[permRng.below(i + 1)]);

  // Each edge descends `scale` levels of the adjacency matrix, choosing a
  // quadrant per level: bit (scale-1-level) of src from the row half, of dst
  // from the column half. Edges are kept as (src << 32 | dst) keys.
  Xoshiro256 rng(seed ^ kEdgeStream);
  std::vector<uint64_t> keys;
  keys.reserve(requested);
  for (uint64_t e = 0; e < requested; ++e) {
    uint32_t u = 0, v = 0;
    for (int level = 0; level < scale; ++level) {
      uint64_t r = rng.next();
      uint32_t row = r >= tb, col = (r >= ta && r < tb) || r >= tc;
      u = (u << 1) | row;
      v = (v << 1) | col;
    }
    u = perm[u];
    v = perm[v];
    if (u != v)
      keys.push_back(uint64_t(u) << 32 | v);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());

  EdgeList list;
  list.numVertices = int32_t(numVertices);
  list.src.resize(keys.size());
  list.dst.resize(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    list.src[i] = int32_t(keys[i] >> 32);
    list.dst[i] = int32_t(keys[i] & 0xffffffffu);
  }
  return list;
}

Tensor saga::randomFeatures(int64_t rows, int64_t cols, uint64_t seed) {
  Tensor t({rows, cols});
  Xoshiro256 rng(seed ^ kFeatureStream);
  float *data = t.f32();
  const int64_t n = t.numElements();
  for (int64_t i = 0; i < n; ++i) // 24 random bits -> [-1, 1)
    data[i] = float(int64_t(rng.next() >> 40) - (int64_t(1) << 23)) *
              (1.0f / 8388608.0f);
  return t;
}

bool saga::isSyntheticSpec(const std::string &path) {
  return llvm::StringRef(path).starts_with("rmat:");
}

llvm::Expected<Dataset> saga::loadSyntheticDataset(const std::string &spec) {
  int64_t scale = 0, edgeFactor = 16, features = 64, classes = 16, seed = 1;
  struct Key {
    const char *name;
    int64_t *value;
    int64_t low, high;
  } keys[] = {{"scale", &scale, 1, 30},
              {"edge-factor", &edgeFactor, 1, 1024},
              {"features", &features, 1, 1 << 16},
              {"classes", &classes, 1, 1 << 20},
              {"seed", &seed, 0, int64_t(1) << 62}};
  auto bad = [&](const std::string &what) {
    return llvm::createStringError(
        spec + ": " + what +
        " (a synthetic graph: rmat:scale=S[,edge-factor=16][,features=64]"
        "[,classes=16][,seed=1])");
  };
  llvm::SmallVector<llvm::StringRef> fields;
  llvm::StringRef(spec).drop_front(5).split(fields, ',', -1, false);
  for (llvm::StringRef field : fields) {
    auto [name, text] = field.split('=');
    Key *key = nullptr;
    for (Key &k : keys)
      if (name == k.name)
        key = &k;
    if (!key)
      return bad("unknown key '" + name.str() + "'");
    int64_t value = 0;
    if (text.getAsInteger(10, value) || value < key->low || value > key->high)
      return bad(std::string(key->name) + " must be an integer in [" +
                 std::to_string(key->low) + ", " + std::to_string(key->high) +
                 "], not '" + text.str() + "'");
    *key->value = value;
  }
  if (scale == 0)
    return bad("no scale");
  if ((int64_t(1) << scale) * edgeFactor > (int64_t(1) << 31) - 1)
    return bad("2^scale * edge-factor edges do not fit 32-bit edge ids");
  // What generating takes at its peak (the edge keys, the permutation, the
  // features), refused before allocating when it cannot fit.
  const uint64_t n = uint64_t(1) << scale;
  if (llvm::Error e = checkMemory(
          saturatingAdd(saturatingMul(n * uint64_t(edgeFactor), 8),
                        saturatingMul(n, 4 + 4 * uint64_t(features))),
          spec + ": generating it"))
    return std::move(e);
  Dataset d;
  d.name = "rmat-" + std::to_string(scale) + "-" + std::to_string(edgeFactor);
  d.edges = rmatGraph(int(scale), int(edgeFactor), uint64_t(seed));
  d.features = randomFeatures(int64_t(n), features, uint64_t(seed));
  d.numClasses = int32_t(classes);
  d.labels.resize(size_t(n));
  Xoshiro256 rng(uint64_t(seed) ^ kLabelStream);
  for (int64_t v = 0; v < int64_t(n); ++v) {
    d.labels[size_t(v)] = int32_t(rng.below(uint64_t(classes)));
    uint64_t r = rng.below(10); // 10 % train, 10 % validation, 80 % test
    (r == 0 ? d.train : r == 1 ? d.val : d.test).push_back(int32_t(v));
  }
  return d;
}
