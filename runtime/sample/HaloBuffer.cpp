//===- HaloBuffer.cpp - MassiveGNN's prefetched buffer of halo features ---===//

#include "runtime/sample/HaloBuffer.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace saga;

HaloBuffer::HaloBuffer(std::vector<int32_t> haloIds,
                       const std::vector<int64_t> &inDegree, int64_t width,
                       const HaloBufferOptions &options)
    : halo(std::move(haloIds)), width(width), options(options) {
  decay = float(1.0 - options.alpha);
  // tau = (1 - alpha)^Delta, rounded to 3 decimals as MassiveGNN does.
  tau = float(std::round(std::pow(1.0 - options.alpha,
                                  double(std::max<int64_t>(options.period, 1))) *
                         1000.0) /
              1000.0);
  normal.assign(halo.size(), 0.0f);
  // The top floor(f x |halo|) by in-degree (ties: the lower id first).
  int64_t n = int64_t(std::floor(options.fraction * double(halo.size())));
  n = std::clamp<int64_t>(n, 0, int64_t(halo.size()));
  std::vector<int64_t> order(halo.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return inDegree[size_t(a)] > inDegree[size_t(b)];
  });
  for (int64_t i = 0; i < n; ++i)
    slotIds.push_back(halo[size_t(order[size_t(i)])]);
  // Slots in vertex order, as the code sorts them before its first lookup.
  std::sort(slotIds.begin(), slotIds.end());
  for (int32_t v : slotIds)
    normal[size_t(haloIndex(v))] = -1; // buffered
  scores.assign(slotIds.size(), 1.0f);
  features.assign(slotIds.size() * size_t(width), 0.0f);
}

int64_t HaloBuffer::haloIndex(int32_t v) const {
  auto it = std::lower_bound(halo.begin(), halo.end(), v);
  return it != halo.end() && *it == v ? int64_t(it - halo.begin()) : -1;
}

float HaloBuffer::missCount(int32_t vertex) const {
  int64_t i = haloIndex(vertex);
  return i < 0 ? 0.0f : normal[size_t(i)];
}

void HaloBuffer::fill(const float *rows) {
  std::copy(rows, rows + features.size(), features.begin());
}

HaloBuffer::Plan HaloBuffer::lookup(const std::vector<int32_t> &needed) {
  Plan plan;
  ++counters_.lookups;
  const bool evictionRound = options.period > 0 &&
                             counters_.lookups % options.period == 0;
  for (float &s : scores)
    s *= decay;
  std::vector<int64_t> missedHalo;
  plan.slotOf.assign(needed.size(), -1);
  for (size_t i = 0; i < needed.size(); ++i) {
    int32_t v = needed[i];
    auto it = std::lower_bound(slotIds.begin(), slotIds.end(), v);
    if (it != slotIds.end() && *it == v) {
      int32_t slot = int32_t(it - slotIds.begin());
      plan.slotOf[i] = slot;
      scores[size_t(slot)] /= decay; // read: the decay undone
      ++counters_.hits;
      continue;
    }
    plan.fetch.push_back(v);
    if (int64_t h = haloIndex(v); h >= 0) {
      ++counters_.misses;
      missedHalo.push_back(h);
    }
  }
  std::vector<int32_t> candidates; // slots below the threshold
  if (evictionRound)
    for (size_t s = 0; s < scores.size(); ++s)
      if (scores[s] < tau)
        candidates.push_back(int32_t(s));
  if (candidates.empty()) {
    for (int64_t h : missedHalo)
      normal[size_t(h)] += 1;
    return plan;
  }
  // The most-missed halo vertices (count > 0, most first, then by id).
  std::vector<int64_t> wanted;
  for (size_t h = 0; h < halo.size(); ++h)
    if (normal[h] > 0)
      wanted.push_back(int64_t(h));
  std::stable_sort(wanted.begin(), wanted.end(), [&](int64_t a, int64_t b) {
    return normal[size_t(a)] > normal[size_t(b)];
  });
  size_t n = std::min(candidates.size(), wanted.size());
  for (size_t i = 0; i < n; ++i) {
    int32_t slot = candidates[i];
    int64_t newcomer = wanted[i];
    int64_t evicted = haloIndex(slotIds[size_t(slot)]);
    float newcomerScore = normal[size_t(newcomer)];
    normal[size_t(evicted)] = scores[size_t(slot)];
    normal[size_t(newcomer)] = -1;
    scores[size_t(slot)] = newcomerScore;
    plan.replacedSlots.push_back(slot);
    plan.newcomers.push_back(halo[size_t(newcomer)]);
  }
  counters_.replaced += int64_t(n);
  return plan;
}

void HaloBuffer::install(const Plan &plan, const float *newcomerRows) {
  if (plan.newcomers.empty())
    return;
  for (size_t i = 0; i < plan.newcomers.size(); ++i) {
    size_t slot = size_t(plan.replacedSlots[i]);
    slotIds[slot] = plan.newcomers[i];
    std::copy(newcomerRows + int64_t(i) * width,
              newcomerRows + int64_t(i + 1) * width,
              features.begin() + int64_t(slot) * width);
  }
  // Back in vertex order (MassiveGNN re-sorts before the next lookup).
  std::vector<size_t> order(slotIds.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return slotIds[a] < slotIds[b]; });
  std::vector<int32_t> ids(slotIds.size());
  std::vector<float> sc(scores.size()), rows(features.size());
  for (size_t i = 0; i < order.size(); ++i) {
    ids[i] = slotIds[order[i]];
    sc[i] = scores[order[i]];
    std::copy(features.begin() + int64_t(order[i]) * width,
              features.begin() + int64_t(order[i] + 1) * width,
              rows.begin() + int64_t(i) * width);
  }
  slotIds = std::move(ids);
  scores = std::move(sc);
  features = std::move(rows);
}
