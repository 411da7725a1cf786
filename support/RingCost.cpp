//===- RingCost.cpp - what a ring of devices would take per epoch ---------===//

#include "support/RingCost.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

using namespace saga;

namespace {
constexpr int64_t kMinParts = 8;
} // namespace

RingEstimate saga::estimateRing(const RingWorkload &w, const RingRates &rates,
                                int devices, bool ring) {
  RingEstimate e;
  e.devices = std::max(devices, 1);
  e.ring = ring && e.devices > 1;
  const int n = e.devices;
  const double gb = 1e9;
  const int64_t half = rates.deviceBytes / 2;
  // Destination rows per device, in passes when they do not fit half.
  const int64_t destRows = (w.vertices + n - 1) / n;
  const int64_t destBytes = destRows * 2 * w.rowBytes;
  e.passes = std::max<int64_t>(1, (destBytes + half - 1) / half);
  // Source intervals: two, with the edges' share, in the other half.
  const int64_t edgeBytes = (w.edges + n - 1) / n * 8;
  const int64_t slots = half - edgeBytes;
  if (slots <= 2 * w.rowBytes) {
    e.error = "a device's share of the edges (" +
              std::to_string(edgeBytes >> 20) +
              " MiB) does not leave room for two source rows";
    return e;
  }
  const int64_t valueBytes = w.vertices * w.rowBytes;
  // At least kMinParts, so that every plan overlaps its transfers and
  // kernels alike (with one interval nothing overlaps).
  int64_t parts = std::max<int64_t>(kMinParts, (2 * valueBytes + slots - 1) / slots);
  if (e.ring) // every device starts a round with an interval of its own
    parts = (parts + n - 1) / n * n;
  e.parts = parts;

  RingSchedule s = planRing(n, std::vector<int64_t>(size_t(parts), 1), e.ring);
  const double slotBytes = double(valueBytes) / double(parts);
  std::vector<int64_t> sizes(static_cast<size_t>(parts), int64_t(slotBytes));
  const double perDevice = rates.hostGBps * gb;
  // Seconds of one step's transfers: every device's move at once.
  auto transfer = [&](size_t t) {
    int hosts = 0, peers = 0;
    for (const RingSchedule::Move &m : s.steps[t])
      if (m.interval >= 0)
        ++(m.from < 0 ? hosts : peers);
    double host = 0;
    if (hosts) {
      double rate = perDevice * hosts;
      if (rates.hostSharedGBps > 0)
        rate = std::min(rate, rates.hostSharedGBps * gb);
      host = slotBytes * hosts / rate;
    }
    double peer = peers ? slotBytes / (rates.peerGBps * gb) : 0;
    return std::pair<double, double>{host, peer};
  };
  // A device's kernel per step: its edges' source rows gathered, its
  // destination rows written, spread over the intervals it sees; a pass
  // does its share of the destinations.
  const double share = double(parts) * double(e.passes);
  const double edgesPerStep = double(w.edges) / n / share;
  const double kernel =
      edgesPerStep * w.rowBytes / (rates.dramGBps * gb * rates.gatherEfficiency) +
      double(destRows) * 2 * w.rowBytes / share / (rates.dramGBps * gb);
  double propagation = 0, hostS = 0, peerS = 0, kernelS = 0;
  for (size_t t = 0; t < s.steps.size(); ++t) {
    auto [h, p] = transfer(t);
    hostS += h;
    peerS += p;
    if (t == 0)
      propagation += std::max(h, p);
    bool busy = false;
    for (const RingSchedule::Move &m : s.steps[t])
      busy |= m.interval >= 0;
    double k = busy ? kernel : 0;
    kernelS += k;
    double next = 0;
    if (t + 1 < s.steps.size()) {
      auto [nh, np] = transfer(t + 1);
      next = std::max(nh, np);
    }
    propagation += std::max(k, next);
  }
  const double per = double(w.propagations) * double(e.passes);
  e.hostBytes = int64_t(per) * s.hostBytes(sizes);
  e.peerBytes = int64_t(per) * s.peerBytes(sizes);
  e.hostSeconds = per * hostS;
  e.peerSeconds = per * peerS;
  e.kernelSeconds = per * kernelS;
  e.seconds = per * propagation;
  return e;
}
