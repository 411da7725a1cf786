// agg_ceiling.cpp - how much source intervals can speed the sum aggregation
// on this machine, measured without Saga.
//
//   g++ -O3 -march=native -fopenmp bench/agg_ceiling.cpp -o agg_ceiling
//   OMP_NUM_THREADS=2 ./agg_ceiling DUMP_DIR [REPEAT]
//
// DUMP_DIR is what `saga-bench-suite agg --dump DIR --widths 64` writes:
// src.npy and dst.npy (the edges as generated), x64.npy (the features) and
// out64.npy (Saga's result). The graph is relabelled in degree order as Saga
// relabels it (highest total degree first, increasing id within a degree),
// and the in-edge CSR sorted by source, so every variant below adds each
// destination's rows in the same order and gives the same bits.
//
// out[v] = sum_{u->v} x[u] at F = 64, with the row accumulated in registers
// and the 64 sums stored once per destination and pass:
//   - unchunked: one pass over the CSR;
//   - P uniform source intervals: P passes, pass p adding the edges whose
//     source is in interval p and re-reading the running sums of pass p-1
//     (NGra's 2-D chunks in memory);
//   - uneven intervals cut at given source ids (degree order puts the hot
//     rows first, so a first interval of a few thousand rows fits the L2);
// each with software prefetch of the row `d` edges ahead (d = 0: none).
// Prints the median of REPEAT (default 7) timed passes after one warm-up,
// the best speed-up of a chunked variant over the best unchunked one, and
// checks that every variant gives Saga's out64.npy bit for bit.
// The last line, `RESULT key=value ...`, is for bench/intervals.sh.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace {

constexpr int F = 64;

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "agg_ceiling: %s\n", message.c_str());
  std::exit(1);
}

/// A little-endian 1-D or 2-D .npy file of 4-byte elements ("<i4"/"<f4").
template <typename T>
std::vector<T> loadNpy(const std::string &path, const char *dtype) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    fail("cannot open " + path);
  std::fseek(f, 0, SEEK_END);
  long size = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  std::vector<char> bytes(size_t(std::max(size, 0L)));
  if (std::fread(bytes.data(), 1, bytes.size(), f) != bytes.size())
    fail("cannot read " + path);
  std::fclose(f);
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    fail(path + " is not a .npy file");
  uint16_t headerLength;
  std::memcpy(&headerLength, &bytes[8], 2);
  size_t offset = 10 + headerLength;
  if (offset > bytes.size())
    fail(path + " is truncated");
  std::string header(bytes.data() + 10, headerLength);
  if (header.find(dtype) == std::string::npos)
    fail(path + ": expected dtype " + dtype + " in " + header);
  std::vector<T> values((bytes.size() - offset) / sizeof(T));
  std::memcpy(values.data(), bytes.data() + offset, values.size() * sizeof(T));
  return values;
}

struct Csr {
  int32_t vertices = 0;
  std::vector<int64_t> offsets; // in-edges of v: [offsets[v], offsets[v+1])
  std::vector<int32_t> sources; // sorted within each destination
};

/// Passes p over source ids [bounds[p], bounds[p+1]): cut[p][v] is where
/// destination v's edges from interval p begin (cut[P][v] = its end).
struct Intervals {
  std::vector<std::vector<int64_t>> cut;
};

Intervals cutAt(const Csr &g, const std::vector<int32_t> &bounds) {
  size_t P = bounds.size() - 1;
  Intervals in;
  in.cut.assign(P + 1, std::vector<int64_t>(size_t(g.vertices)));
  for (int32_t v = 0; v < g.vertices; ++v) {
    auto begin = g.sources.begin() + g.offsets[v];
    auto end = g.sources.begin() + g.offsets[v + 1];
    for (size_t p = 0; p <= P; ++p)
      in.cut[p][size_t(v)] =
          p == 0   ? g.offsets[v]
          : p == P ? g.offsets[v + 1]
                   : std::lower_bound(begin, end, bounds[p]) - g.sources.begin();
  }
  return in;
}

void aggregate(const Csr &g, const Intervals &in, int prefetch, const float *x,
               float *out) {
  const size_t P = in.cut.size() - 1;
  const int32_t *src = g.sources.data();
  for (size_t p = 0; p < P; ++p) {
    const int64_t *first = in.cut[p].data(), *last = in.cut[p + 1].data();
#pragma omp parallel for schedule(dynamic, 256)
    for (int32_t v = 0; v < g.vertices; ++v) {
      int64_t begin = first[v], end = last[v];
      float *o = out + int64_t(v) * F;
      if (p > 0 && begin == end)
        continue;
      float acc[F];
      for (int f = 0; f < F; ++f)
        acc[f] = p == 0 ? 0.0f : o[f];
      for (int64_t k = begin; k < end; ++k) {
        if (prefetch && k + prefetch < end) {
          const char *ahead =
              reinterpret_cast<const char *>(x + int64_t(src[k + prefetch]) * F);
          for (int line = 0; line < F * 4; line += 64)
            __builtin_prefetch(ahead + line, 0, 3);
        }
        const float *row = x + int64_t(src[k]) * F;
#pragma omp simd
        for (int f = 0; f < F; ++f)
          acc[f] += row[f];
      }
      for (int f = 0; f < F; ++f)
        o[f] = acc[f];
    }
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    fail("usage: agg_ceiling DUMP_DIR [REPEAT]");
  std::string dir = argv[1];
  int repeat = argc > 2 ? std::atoi(argv[2]) : 7;
  if (repeat < 1)
    fail("REPEAT must be at least 1");
  auto src = loadNpy<int32_t>(dir + "/src.npy", "<i4");
  auto dst = loadNpy<int32_t>(dir + "/dst.npy", "<i4");
  auto xOld = loadNpy<float>(dir + "/x64.npy", "<f4");
  auto saga = loadNpy<float>(dir + "/out64.npy", "<f4");
  if (src.size() != dst.size() || xOld.size() % F || saga.size() != xOld.size())
    fail("inconsistent files in " + dir);
  const int32_t n = int32_t(xOld.size() / F);
  const int64_t e = int64_t(src.size());

  // Degree order, as runtime/graph/Reorder.cpp numbers it.
  std::vector<int64_t> degree(size_t(n), 0);
  for (int64_t i = 0; i < e; ++i) {
    if (src[i] < 0 || src[i] >= n || dst[i] < 0 || dst[i] >= n)
      fail("edge " + std::to_string(i) + " names a vertex out of range");
    ++degree[size_t(src[i])];
    ++degree[size_t(dst[i])];
  }
  std::vector<int32_t> oldId(static_cast<size_t>(n)), newId(static_cast<size_t>(n));
  std::iota(oldId.begin(), oldId.end(), 0);
  std::stable_sort(oldId.begin(), oldId.end(), [&](int32_t a, int32_t b) {
    return degree[size_t(a)] > degree[size_t(b)];
  });
  for (int32_t i = 0; i < n; ++i)
    newId[size_t(oldId[size_t(i)])] = i;

  Csr g;
  g.vertices = n;
  g.offsets.assign(size_t(n) + 1, 0);
  for (int64_t i = 0; i < e; ++i)
    ++g.offsets[size_t(newId[size_t(dst[i])]) + 1];
  for (int32_t v = 0; v < n; ++v)
    g.offsets[size_t(v) + 1] += g.offsets[size_t(v)];
  g.sources.resize(size_t(e));
  {
    std::vector<int64_t> next(g.offsets.begin(), g.offsets.end() - 1);
    for (int64_t i = 0; i < e; ++i)
      g.sources[size_t(next[size_t(newId[size_t(dst[i])])]++)] =
          newId[size_t(src[i])];
  }
  for (int32_t v = 0; v < n; ++v)
    std::sort(g.sources.begin() + g.offsets[v], g.sources.begin() + g.offsets[v + 1]);

  float *x = static_cast<float *>(std::aligned_alloc(64, size_t(n) * F * 4));
  float *out = static_cast<float *>(std::aligned_alloc(64, size_t(n) * F * 4));
  if (!x || !out)
    fail("out of memory");
#pragma omp parallel for schedule(static)
  for (int32_t v = 0; v < n; ++v) {
    std::memcpy(x + int64_t(v) * F, xOld.data() + int64_t(oldId[size_t(v)]) * F, F * 4);
    std::memset(out + int64_t(v) * F, 0, F * 4);
  }
  xOld.clear();
  xOld.shrink_to_fit();

  std::printf("graph     %d vertices, %lld edges; %d threads, median of %d\n",
              n, (long long)e, omp_get_max_threads(), repeat);
  for (int32_t hot : {2048, 4096, 16384, 65536, 131072}) {
    int64_t covered = 0;
    for (int32_t s : g.sources)
      covered += s < hot;
    std::printf("coverage  the first %6d sources (%5.1f MiB of rows) are the "
                "sources of %4.1f %% of the edges\n",
                hot, hot * F * 4 / 1048576.0, 100.0 * covered / double(e));
  }

  double bestUnchunked = 1e30, bestChunked = 1e30;
  std::string bestName;
  auto run = [&](const std::string &name, std::vector<int32_t> bounds,
                 int prefetch) {
    bounds.front() = 0;
    bounds.back() = n;
    Intervals in = cutAt(g, bounds);
    aggregate(g, in, prefetch, x, out); // warm-up
    std::vector<double> times;
    for (int r = 0; r < repeat; ++r) {
      auto start = std::chrono::steady_clock::now();
      aggregate(g, in, prefetch, x, out);
      times.push_back(std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count() *
                      1e3);
    }
    // Against Saga's result (its rows in the original order): the same
    // additions in the same order, so the same bits (the relative
    // difference printed is 0 unless something is wrong).
    double worst = 0;
    bool same = true;
    for (int32_t v = 0; v < n; ++v)
      for (int f = 0; f < F; ++f) {
        float a = out[int64_t(v) * F + f];
        float b = saga[size_t(oldId[size_t(v)]) * F + size_t(f)];
        same = same && std::memcmp(&a, &b, 4) == 0;
        worst = std::max(worst, double(std::fabs(a - b)) /
                                    std::max(1.0, double(std::fabs(b))));
      }
    if (!same)
      fail(name + " differs from Saga's out64.npy (largest relative "
                  "difference " + std::to_string(worst) + ")");
    double ms = median(times);
    size_t P = bounds.size() - 1;
    std::printf("variant   %-26s P=%-3zu prefetch=%-2d median %7.1f ms "
                "(min %.1f), max rel. diff from Saga %.1e\n",
                name.c_str(), P, prefetch, ms,
                *std::min_element(times.begin(), times.end()), worst);
    std::fflush(stdout);
    if (P == 1)
      bestUnchunked = std::min(bestUnchunked, ms);
    else if (ms < bestChunked) {
      bestChunked = ms;
      bestName = name + " prefetch " + std::to_string(prefetch);
    }
  };
  auto uniform = [&](int P) {
    std::vector<int32_t> b;
    for (int p = 0; p <= P; ++p)
      b.push_back(int32_t(int64_t(n) * p / P));
    return b;
  };
  for (int prefetch : {0, 4, 8, 16}) {
    run("unchunked", {0, n}, prefetch);
    for (int P : {4, 8, 12, 16, 32})
      run("uniform " + std::to_string(P), uniform(P), prefetch);
    run("hot 60000 | rest", {0, 60000, n}, prefetch);
    run("hot 120000 | rest", {0, 120000, n}, prefetch);
    run("L2 4000 | 60000 | rest", {0, 4000, 60000, n}, prefetch);
    run("geometric 1k..120k", {0, 1000, 3000, 8000, 30000, 120000, n}, prefetch);
  }
  std::printf("best      unchunked %.1f ms; chunked %.1f ms (%s): %.2fx\n",
              bestUnchunked, bestChunked, bestName.c_str(),
              bestUnchunked / bestChunked);
  std::printf("RESULT kind=agg_ceiling vertices=%d edges=%lld threads=%d "
              "unchunked_ms=%.3f chunked_ms=%.3f speedup=%.3f\n",
              n, (long long)e, omp_get_max_threads(), bestUnchunked,
              bestChunked, bestUnchunked / bestChunked);
  std::free(x);
  std::free(out);
  return 0;
}
