//===- LinkMetrics.cpp - what link prediction reports ---------------------===//

#include "runtime/train/LinkMetrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

using namespace saga;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
/// A diverged model's NaN scores make every metric NaN (and would break
/// the sort's ordering).
bool anyNaN(const std::vector<float> &a, const std::vector<float> &b) {
  auto nan = [](float x) { return std::isnan(x); };
  return std::any_of(a.begin(), a.end(), nan) ||
         std::any_of(b.begin(), b.end(), nan);
}
} // namespace

double saga::rocAuc(const std::vector<float> &positive,
                    const std::vector<float> &negative) {
  if (positive.empty() || negative.empty() || anyNaN(positive, negative))
    return kNaN;
  // Ranks of all scores together (1-based, ties the mean of their ranks);
  // AUC = (rank sum of the positives - P (P + 1) / 2) / (P N).
  std::vector<std::pair<float, bool>> all;
  all.reserve(positive.size() + negative.size());
  for (float s : positive)
    all.push_back({s, true});
  for (float s : negative)
    all.push_back({s, false});
  std::sort(all.begin(), all.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  double rankSum = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    int64_t pos = 0;
    while (j < all.size() && all[j].first == all[i].first)
      pos += all[j++].second;
    double meanRank = (double(i + 1) + double(j)) / 2;
    rankSum += meanRank * double(pos);
    i = j;
  }
  double P = double(positive.size()), N = double(negative.size());
  return (rankSum - P * (P + 1) / 2) / (P * N);
}

double saga::hitsAtK(const std::vector<float> &positive,
                     const std::vector<float> &negative, int64_t k) {
  if (positive.empty() || k < 1 || anyNaN(positive, negative))
    return kNaN;
  if (int64_t(negative.size()) < k)
    return 1.0;
  std::vector<float> top = negative;
  std::nth_element(top.begin(), top.begin() + (k - 1), top.end(),
                   std::greater<float>());
  float kth = top[size_t(k - 1)];
  int64_t hits = 0;
  for (float s : positive)
    hits += s > kth;
  return double(hits) / double(positive.size());
}

double saga::meanReciprocalRank(const std::vector<float> &positive,
                                const std::vector<float> &negative,
                                int64_t perPositive) {
  if (positive.empty() || perPositive < 0 ||
      negative.size() != positive.size() * size_t(perPositive) ||
      anyNaN(positive, negative))
    return kNaN;
  double sum = 0;
  for (size_t i = 0; i < positive.size(); ++i) {
    int64_t above = 0, tied = 0;
    for (int64_t j = 0; j < perPositive; ++j) {
      float s = negative[i * size_t(perPositive) + size_t(j)];
      above += s > positive[i];
      tied += s == positive[i];
    }
    sum += 1.0 / (double(above) + double(tied) / 2 + 1);
  }
  return sum / double(positive.size());
}
