//===- PairLossTest.cpp - link prediction's pairs, loss and gradient -----===//
//
// PairSet's checks and incidences, and runtime/exec/PairLoss.h against a
// direct float64 computation written independently here (scores, the mean
// binary cross-entropy, and the gradient scattered pair by pair), with the
// same bits for any thread count. The whole model's loss and gradients are
// checked against a NumPy reference in test/models/ (graphsage-link).
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/PairLoss.h"
#include "runtime/exec/ThreadPool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace saga;

namespace {

PairSet makeOrDie(int32_t n, std::vector<int32_t> s, std::vector<int32_t> d,
                  std::vector<float> y) {
  std::string why;
  PairSet p = PairSet::make(n, std::move(s), std::move(d), std::move(y), &why);
  EXPECT_EQ(why, "");
  return p;
}

TEST(PairSet, EachBadSetGivesOneError) {
  std::string why;
  PairSet::make(4, {0, 1}, {1}, {1, 0}, &why);
  EXPECT_EQ(why, "pairs of 2 sources, 1 destinations and 2 labels");
  why.clear();
  PairSet::make(4, {0, 1}, {1, 4}, {1, 0}, &why);
  EXPECT_EQ(why, "pair 1 has vertex 4, outside [0, 4)");
  why.clear();
  PairSet::make(4, {0, -1}, {1, 2}, {1, 0}, &why);
  EXPECT_EQ(why, "pair 1 has vertex -1, outside [0, 4)");
  why.clear();
  PairSet::make(4, {0, 1}, {1, 2}, {1, 0.5f}, &why);
  EXPECT_EQ(why, "pair 1 has label 0.500000; labels are 0 or 1");
}

TEST(PairSet, IncidencesListEachVertexsPairsInOrder) {
  // Pairs: 0 (2, 0), 1 (0, 1), 2 (2, 2), 3 (1, 2).
  PairSet p = makeOrDie(4, {2, 0, 2, 1}, {0, 1, 2, 2}, {1, 0, 1, 0});
  EXPECT_EQ(p.incidenceOffsets, (std::vector<int64_t>{0, 2, 4, 8, 8}));
  EXPECT_EQ(p.incidencePair, (std::vector<int32_t>{0, 1, 1, 3, 0, 2, 2, 3}));
  EXPECT_EQ(p.incidenceOther, (std::vector<int32_t>{2, 1, 0, 2, 0, 2, 2, 1}));
}

struct Problem {
  int32_t n = 50;
  int64_t w = 9;
  std::vector<float> h;
  PairSet pairs;
};

Problem problem() {
  Problem p;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.5f);
  p.h.resize(size_t(p.n * p.w));
  for (float &x : p.h)
    x = normal(rng);
  std::vector<int32_t> s, d;
  std::vector<float> y;
  for (int i = 0; i < 300; ++i) {
    // Vertex 0 is an end of many pairs; vertices 40.. of none.
    s.push_back(i % 3 == 0 ? 0 : int32_t(rng() % 40));
    d.push_back(int32_t(rng() % 40));
    y.push_back(float(rng() % 2));
  }
  s.push_back(7); // a pair (v, v) and a repeated pair
  d.push_back(7);
  y.push_back(1);
  s.insert(s.end(), {3, 3});
  d.insert(d.end(), {4, 4});
  y.insert(y.end(), {1, 0});
  p.pairs = makeOrDie(p.n, s, d, y);
  return p;
}

TEST(PairLoss, MatchesADirectFloat64Computation) {
  Problem p = problem();
  const PairSet &q = p.pairs;
  const double g = 0.75;
  std::vector<double> ref(p.h.size(), 0.0);
  double loss = 0;
  for (int64_t i = 0; i < q.size(); ++i) {
    int32_t u = q.src[size_t(i)], v = q.dst[size_t(i)];
    double s = 0;
    for (int64_t k = 0; k < p.w; ++k)
      s += double(p.h[size_t(u * p.w + k)]) * p.h[size_t(v * p.w + k)];
    double y = q.label[size_t(i)];
    // -log sigmoid(s) for an edge, -log(1 - sigmoid(s)) for a non-edge,
    // as log(1 + exp(-+s)) (1 - sigmoid(s) itself cancels for large s).
    double sig = 1 / (1 + std::exp(-s));
    loss += y == 1 ? std::log1p(std::exp(-s)) : std::log1p(std::exp(s));
    double c = g * (sig - y) / double(q.size());
    for (int64_t k = 0; k < p.w; ++k) {
      ref[size_t(u * p.w + k)] += c * p.h[size_t(v * p.w + k)];
      ref[size_t(v * p.w + k)] += c * p.h[size_t(u * p.w + k)];
    }
  }
  loss /= double(q.size());
  ThreadPool pool(2);
  EXPECT_NEAR(pairBceLoss(p.h.data(), p.w, q, pool), loss, 1e-12 * loss);
  std::vector<float> dh(p.h.size(), -1.0f);
  pairBceGrad(p.h.data(), p.w, q, float(g), dh.data(), pool);
  double scale = 0;
  for (double r : ref)
    scale = std::max(scale, std::fabs(r));
  for (size_t i = 0; i < dh.size(); ++i)
    ASSERT_NEAR(dh[i], ref[i], 1e-6 * scale) << "element " << i;
  for (size_t i = 40 * size_t(p.w); i < dh.size(); ++i)
    ASSERT_EQ(dh[i], 0.0f) << "a row in no pair, element " << i;
  std::vector<float> scores = pairScores(p.h.data(), p.w, q.src, q.dst, pool);
  ASSERT_EQ(int64_t(scores.size()), q.size());
  EXPECT_EQ(scores[0], float(pairDot(p.h.data(), p.w, q.src[0], q.dst[0])));
}

TEST(PairLoss, ExtremeScoresStayFinite) {
  // Scores of +-1e4: log(1 + exp(1e4)) written naively overflows.
  std::vector<float> h = {100, 0, 0, 100, -100, 0};
  PairSet q = makeOrDie(3, {0, 0, 2}, {0, 2, 0}, {0, 1, 0});
  ThreadPool pool(1);
  double loss = pairBceLoss(h.data(), 2, q, pool);
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_NEAR(loss, (1e4 + 1e4 + 0) / 3, 1e-6);
  std::vector<float> dh(6);
  pairBceGrad(h.data(), 2, q, 1.0f, dh.data(), pool);
  for (float x : dh)
    EXPECT_TRUE(std::isfinite(x));
}

TEST(PairLoss, SameBitsForAnyThreadCount) {
  Problem p = problem();
  std::vector<float> first;
  double firstLoss = 0;
  for (unsigned threads : {1u, 2u, 3u, 4u, 7u}) {
    ThreadPool pool(threads);
    std::vector<float> dh(p.h.size());
    pairBceGrad(p.h.data(), p.w, p.pairs, 1.0f, dh.data(), pool);
    double loss = pairBceLoss(p.h.data(), p.w, p.pairs, pool);
    if (first.empty()) {
      first = dh;
      firstLoss = loss;
      continue;
    }
    EXPECT_EQ(std::memcmp(first.data(), dh.data(), dh.size() * 4), 0)
        << threads << " threads";
    EXPECT_EQ(loss, firstLoss) << threads << " threads";
  }
}

TEST(PairLoss, NoPairsNoLossNoGradient) {
  PairSet q = makeOrDie(3, {}, {}, {});
  std::vector<float> h(6, 1.0f), dh(6, 5.0f);
  ThreadPool pool(1);
  EXPECT_EQ(pairBceLoss(h.data(), 2, q, pool), 0.0);
  pairBceGrad(h.data(), 2, q, 1.0f, dh.data(), pool);
  EXPECT_EQ(dh, std::vector<float>(6, 0.0f));
}

} // namespace
