//===- RingModelBench.cpp - the ring's cost model as a table --------------===//
//
// saga-bench-ring-model [--scales 24,25,26] [--devices 1,2,4,8]
//   [--row-bytes 512] [--edge-factor 16] [--propagations 4]
//   [--host-gbps 50] [--host-shared-gbps 0] [--peer-gbps 450]
//   [--dram-gbps 3350] [--gather 0.35] [--device-gib 80]
//
// Prints, per R-MAT scale and device count, the ring's and the no-ring
// plan's predicted epoch (support/RingCost.h) as a Markdown table, with the
// assumptions first. A model, not a measurement: README says what a
// multi-GPU machine must confirm.
//
//===----------------------------------------------------------------------===//

#include "support/RingCost.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace saga;

namespace {

std::vector<int64_t> listOf(const char *text) {
  std::vector<int64_t> out;
  for (const char *p = text; *p;) {
    char *end = nullptr;
    long long v = std::strtoll(p, &end, 10);
    if (end == p || v <= 0) {
      std::fprintf(stderr, "saga-bench-ring-model: '%s' is not a list of "
                           "positive integers\n", text);
      std::exit(2);
    }
    out.push_back(v);
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

double number(const char *flag, const char *text) {
  char *end = nullptr;
  double v = std::strtod(text, &end);
  if (end == text || *end || v < 0) {
    std::fprintf(stderr, "saga-bench-ring-model: %s wants a number >= 0, not "
                         "'%s'\n", flag, text);
    std::exit(2);
  }
  return v;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int64_t> scales = {24, 25, 26}, devices = {1, 2, 4, 8};
  RingRates rates;
  RingWorkload w;
  int64_t edgeFactor = 16;
  for (int a = 1; a < argc; ++a) {
    std::string f = argv[a];
    if (a + 1 >= argc) {
      std::fprintf(stderr, "saga-bench-ring-model: %s wants a value (see the "
                           "file's header for the flags)\n", f.c_str());
      return 2;
    }
    const char *v = argv[++a];
    if (f == "--scales") scales = listOf(v);
    else if (f == "--devices") devices = listOf(v);
    else if (f == "--row-bytes") w.rowBytes = int64_t(number(f.c_str(), v));
    else if (f == "--edge-factor") edgeFactor = int64_t(number(f.c_str(), v));
    else if (f == "--propagations") w.propagations = int(number(f.c_str(), v));
    else if (f == "--host-gbps") rates.hostGBps = number(f.c_str(), v);
    else if (f == "--host-shared-gbps") rates.hostSharedGBps = number(f.c_str(), v);
    else if (f == "--peer-gbps") rates.peerGBps = number(f.c_str(), v);
    else if (f == "--dram-gbps") rates.dramGBps = number(f.c_str(), v);
    else if (f == "--gather") rates.gatherEfficiency = number(f.c_str(), v);
    else if (f == "--device-gib")
      rates.deviceBytes = int64_t(number(f.c_str(), v) * double(1 << 30));
    else {
      std::fprintf(stderr, "saga-bench-ring-model: unknown flag %s\n", f.c_str());
      return 2;
    }
  }
  if (w.rowBytes <= 0 || rates.hostGBps <= 0 || rates.peerGBps <= 0 ||
      rates.dramGBps <= 0 || rates.gatherEfficiency <= 0 ||
      rates.deviceBytes <= 0 || w.propagations <= 0) {
    std::fprintf(stderr, "saga-bench-ring-model: rates, sizes and counts must "
                         "be positive\n");
    return 2;
  }
  std::printf("# Ring cost model (support/RingCost.h): R-MAT, %lld edges per "
              "vertex, %lld-byte rows, %d propagations per epoch\n",
              (long long)edgeFactor, (long long)w.rowBytes, w.propagations);
  std::printf("# host %.0f GB/s per device%s, peer %.0f GB/s, DRAM %.0f GB/s "
              "(gathers at %.2f of it), %.0f GiB per device\n",
              rates.hostGBps,
              rates.hostSharedGBps > 0
                  ? (", " + std::to_string(int(rates.hostSharedGBps)) +
                     " GB/s shared").c_str()
                  : "",
              rates.peerGBps, rates.dramGBps, rates.gatherEfficiency,
              double(rates.deviceBytes) / double(1 << 30));
  std::printf("| scale | GPUs | plan | intervals | passes | host GB | peer GB "
              "| host s | peer s | kernel s | epoch s | vs 1 GPU |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | "
              "--- | --- |\n");
  for (int64_t scale : scales) {
    if (scale > 40) {
      std::fprintf(stderr, "saga-bench-ring-model: scale %lld is too large\n",
                   (long long)scale);
      return 2;
    }
    w.vertices = int64_t(1) << scale;
    w.edges = w.vertices * edgeFactor;
    RingEstimate one = estimateRing(w, rates, 1, false);
    for (int64_t n : devices)
      for (bool ring : {false, true}) {
        if (n == 1 && ring)
          continue;
        RingEstimate e = estimateRing(w, rates, int(n), ring);
        const char *plan = n == 1 ? "one device" : ring ? "ring" : "no ring";
        if (!e.error.empty()) {
          std::printf("| %lld | %lld | %s | %s |\n", (long long)scale,
                      (long long)n, plan, e.error.c_str());
          continue;
        }
        std::printf("| %lld | %lld | %s | %lld | %lld | %.1f | %.1f | %.3f | "
                    "%.3f | %.3f | %.3f | %.2fx |\n",
                    (long long)scale, (long long)n, plan, (long long)e.parts,
                    (long long)e.passes, double(e.hostBytes) / 1e9,
                    double(e.peerBytes) / 1e9, e.hostSeconds, e.peerSeconds,
                    e.kernelSeconds, e.seconds,
                    one.error.empty() ? one.seconds / e.seconds : 0.0);
      }
  }
  return 0;
}
