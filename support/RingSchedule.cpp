//===- RingSchedule.cpp - NGra's ring of devices over source intervals ----===//

#include "support/RingSchedule.h"

#include <algorithm>
#include <numeric>
#include <set>

using namespace saga;

std::vector<int64_t>
saga::destinationWeights(const std::vector<int32_t> &bounds,
                         const std::vector<int64_t> &chunkEdges) {
  const size_t parts = bounds.empty() ? 0 : bounds.size() - 1;
  std::vector<int64_t> weights(parts, 0);
  for (size_t j = 0; j < parts; ++j) {
    if (chunkEdges.empty()) {
      weights[j] = bounds[j + 1] - bounds[j];
      continue;
    }
    for (size_t i = 0; i < parts; ++i)
      weights[j] += chunkEdges[i * parts + j];
  }
  return weights;
}

RingSchedule saga::planRing(int devices, const std::vector<int64_t> &weights,
                            bool ring) {
  RingSchedule s;
  s.devices = std::max(devices, 1);
  s.parts = int64_t(weights.size());
  s.ring = ring && s.devices > 1;
  const int n = s.devices;
  const int64_t p = s.parts;

  // Owners: device d's run ends where the prefix weight first reaches
  // (d + 1) / N of the total, leaving at least one interval for each
  // device after it (while there are enough).
  s.owner.assign(size_t(p), 0);
  const int64_t total = std::accumulate(weights.begin(), weights.end(),
                                        int64_t(0));
  int64_t begin = 0, prefix = 0;
  for (int d = 0; d < n && begin < p; ++d) {
    int64_t end = begin;
    const int64_t after = n - 1 - d; // devices still to serve
    if (d == n - 1) {
      end = p;
    } else {
      // At least one interval, and leave one per later device.
      do {
        prefix += weights[size_t(end)];
        ++end;
      } while (end < p - after &&
               __int128(prefix) * n < __int128(total) * (d + 1));
    }
    for (int64_t j = begin; j < end; ++j)
      s.owner[size_t(j)] = d;
    begin = end;
  }

  using Move = RingSchedule::Move;
  if (!s.ring) {
    // Every device loads interval t at step t.
    for (int64_t t = 0; t < p; ++t)
      s.steps.push_back(std::vector<Move>(size_t(n), Move{t, -1}));
    return s;
  }
  const int64_t rounds = (p + n - 1) / n;
  for (int64_t r = 0; r < rounds; ++r)
    for (int t = 0; t < n; ++t) {
      std::vector<Move> step(static_cast<size_t>(n));
      for (int d = 0; d < n; ++d) {
        int64_t i = r * n + ((d - t) % n + n) % n;
        if (i >= p)
          continue;
        step[size_t(d)] = Move{i, t == 0 ? -1 : (d + n - 1) % n};
      }
      s.steps.push_back(std::move(step));
    }
  return s;
}

int64_t RingSchedule::hostLoads() const {
  int64_t k = 0;
  for (const auto &step : steps)
    for (const Move &m : step)
      k += m.interval >= 0 && m.from < 0;
  return k;
}

int64_t RingSchedule::peerCopies() const {
  int64_t k = 0;
  for (const auto &step : steps)
    for (const Move &m : step)
      k += m.interval >= 0 && m.from >= 0;
  return k;
}

int64_t RingSchedule::hostBytes(const std::vector<int64_t> &bytes) const {
  int64_t b = 0;
  for (const auto &step : steps)
    for (const Move &m : step)
      if (m.interval >= 0 && m.from < 0)
        b += bytes[size_t(m.interval)];
  return b;
}

int64_t RingSchedule::peerBytes(const std::vector<int64_t> &bytes) const {
  int64_t b = 0;
  for (const auto &step : steps)
    for (const Move &m : step)
      if (m.interval >= 0 && m.from >= 0)
        b += bytes[size_t(m.interval)];
  return b;
}

int64_t RingSchedule::firstOwned(int d) const {
  return std::lower_bound(owner.begin(), owner.end(), d) - owner.begin();
}

int64_t RingSchedule::endOwned(int d) const {
  return std::upper_bound(owner.begin(), owner.end(), d) - owner.begin();
}

std::string RingSchedule::check() const {
  auto at = [](size_t t, int d) {
    return "step " + std::to_string(t) + ", device " + std::to_string(d);
  };
  std::vector<std::set<int64_t>> seen(static_cast<size_t>(devices));
  std::vector<int64_t> held(size_t(devices), -1); // the step before
  for (size_t t = 0; t < steps.size(); ++t) {
    if (steps[t].size() != size_t(devices))
      return "step " + std::to_string(t) + " does not name every device";
    std::vector<int64_t> now(size_t(devices), -1);
    for (int d = 0; d < devices; ++d) {
      const Move &m = steps[t][size_t(d)];
      if (m.interval < 0)
        continue;
      if (m.interval >= parts)
        return at(t, d) + ": interval " + std::to_string(m.interval) +
               " out of range";
      if (!seen[size_t(d)].insert(m.interval).second)
        return at(t, d) + ": interval " + std::to_string(m.interval) +
               " a second time";
      if (m.from >= 0) {
        if (m.from >= devices || m.from == d)
          return at(t, d) + ": from device " + std::to_string(m.from);
        if (held[size_t(m.from)] != m.interval)
          return at(t, d) + ": interval " + std::to_string(m.interval) +
                 " from device " + std::to_string(m.from) +
                 ", which did not hold it the step before";
      }
      now[size_t(d)] = m.interval;
    }
    held = now;
  }
  for (int d = 0; d < devices; ++d)
    if (int64_t(seen[size_t(d)].size()) != parts)
      return "device " + std::to_string(d) + " sees " +
             std::to_string(seen[size_t(d)].size()) + " of " +
             std::to_string(parts) + " intervals";
  for (size_t j = 1; j < owner.size(); ++j)
    if (owner[j] < owner[j - 1])
      return "owners are not contiguous";
  return "";
}

std::string RingSchedule::describe() const {
  std::string s = (ring ? "ring" : "no ring (every device loads from the host)");
  s += ": " + std::to_string(devices) + " devices, " + std::to_string(parts) +
       " source intervals, " + std::to_string(hostLoads()) +
       " host loads, " + std::to_string(peerCopies()) + " peer copies\n";
  for (int d = 0; d < devices; ++d) {
    int64_t b = firstOwned(d), e = endOwned(d);
    s += "  d" + std::to_string(d) + " owns destination intervals " +
         (b < e ? "[" + std::to_string(b) + ", " + std::to_string(e) + ")"
                : std::string("none")) +
         "\n";
  }
  for (size_t t = 0; t < steps.size(); ++t) {
    s += "  step " + std::to_string(t) + ":";
    bool any = false;
    for (int d = 0; d < devices; ++d) {
      const Move &m = steps[t][size_t(d)];
      if (m.interval < 0)
        continue;
      s += std::string(any ? "," : "") + " d" + std::to_string(d) + " <- i" +
           std::to_string(m.interval) + " from " +
           (m.from < 0 ? std::string("host") : "d" + std::to_string(m.from));
      any = true;
    }
    s += "\n";
  }
  return s;
}
