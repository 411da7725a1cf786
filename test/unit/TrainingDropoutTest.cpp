//===- TrainingDropoutTest.cpp - dropout seeds, profiled training steps ---===//
//
// Dropout is a function of the seed: one seed gives the same step, two
// give different ones, inference has none; at rate p it keeps about 1 - p
// of the elements and the backward scales them as the forward did. A
// profiled training step times its plan steps and changes no result.
//
//===----------------------------------------------------------------------===//

#include "TrainingTestUtil.h"
#include "api/Model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

using namespace saga;
using namespace sagatest::training;

namespace {

TEST(TrainingDropout, DeterministicPerSeedAndDifferentAcrossSeeds) {
  auto m = tinyModel(example(kGcn, "0.5"), "gcn_seeds");
  ASSERT_TRUE(m);
  ForwardOptions fo;
  fo.lossMask = lossMask(graphFor("tiny", true));
  auto inferenceBefore = m->forward(fo);
  ASSERT_TRUE(bool(inferenceBefore));
  auto a = m->trainStep(fo, 7), b = m->trainStep(fo, 7),
       c = m->trainStep(fo, 8);
  ASSERT_TRUE(a && b && c);
  EXPECT_TRUE(sameStep(*a, *b, "seed 7 twice"));
  EXPECT_FALSE(sameStep(*a, *c, "seeds 7 and 8", /*report=*/false))
      << "dropout under seeds 7 and 8 gave the same step";
  EXPECT_NE(a->loss, c->loss);
  // Dropout is on in training (the loss differs from inference's) and off
  // in inference, which training steps leave unchanged.
  EXPECT_NE(a->loss, *inferenceBefore->loss);
  auto inferenceAfter = m->forward(fo);
  ASSERT_TRUE(bool(inferenceAfter));
  EXPECT_TRUE(
      bitEqual(inferenceBefore->prediction, inferenceAfter->prediction));
  EXPECT_EQ(*inferenceBefore->loss, *inferenceAfter->loss);

  // A model with dropout rate 0 trains on inference's loss, whatever the
  // seed.
  auto plain = tinyModel(example(kGcn, "0.0"), "gcn_seeds");
  ASSERT_TRUE(plain);
  auto p7 = plain->trainStep(fo, 7), p8 = plain->trainStep(fo, 8);
  auto inference = plain->forward(fo);
  ASSERT_TRUE(p7 && p8 && inference);
  EXPECT_TRUE(sameStep(*p7, *p8, "rate 0, seeds 7 and 8"));
  EXPECT_NEAR(p7->loss, *inference->loss, 1e-6);
}

// With ForwardOptions::profile a training step times its plan steps (kernel
// launches, GEMMs, the loss and its gradient), in plan order, and the
// timed steps add up to no more than the step; without it there is no
// profile, and profiling changes no result.
TEST(TrainingProfile, StepsTimedInPlanOrder) {
  auto m = tinyModel(example(kGcn, "0.5"), "gcn_profile");
  ASSERT_TRUE(m);
  ForwardOptions fo;
  fo.lossMask = lossMask(graphFor("tiny", true));
  ForwardOptions profiled = fo;
  profiled.profile = true;
  auto plain = m->trainStep(fo, 7), timed = m->trainStep(profiled, 7);
  ASSERT_TRUE(plain && timed);
  EXPECT_TRUE(plain->profile.empty());
  EXPECT_TRUE(sameStep(*plain, *timed, "profiled vs not"));
  ASSERT_FALSE(timed->profile.empty());
  double total = 0;
  bool launch = false, gradient = false;
  for (const auto &[what, seconds] : timed->profile) {
    EXPECT_GE(seconds, 0) << what;
    total += seconds;
    launch |= what.rfind("launch saga_kernel_", 0) == 0;
    gradient |= what.find("cross_entropy_grad") != std::string::npos;
  }
  EXPECT_TRUE(launch);
  EXPECT_TRUE(gradient) << "the backward's steps are timed too";
  EXPECT_LE(total, timed->seconds * 1.01 + 1e-4);
}

// Dropout at rate p keeps about 1 - p of the elements, and the backward
// pass scales the kept ones by 1 / (1 - p) as the forward did. With x = 1
// and a loss over one vertex v, d loss / d s_j (s a per-feature scale before
// the dropout) is zero exactly where element j of v was dropped and
// (dL/dh_vj) / (1 - p) where it was kept.
TEST(TrainingDropout, KeepsTheExpectedFraction) {
  const char *source = R"(
graph { vertex x: f32[64]; vertex label: class[2]; }
layer Scale(n: int) {
  param s: f32[n] = ones;
  apply_vertex(v, a) { return v.h * s; }
}
layer Linear(in: int, out: int) {
  param W: f32[in, out] = glorot;
  apply_vertex(v, a) { return v.h @ W; }
}
model M {
  h = dropout(Scale(64)(x), 0.25);
  out = Linear(64, 2)(h);
  loss = cross_entropy(out, label);
}
)";
  CompileOptions co;
  co.training = true;
  auto model = Model::compileSource(source, "dropout.saga", co);
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  Model &m = **model;
  const Graph &g = graphFor("large", false);
  ASSERT_EQ(errorText(bindRandom(m, g, 2, "dropout")), "");
  Tensor ones({g.numVertices, 64});
  std::fill(ones.f32(), ones.f32() + ones.numElements(), 1.0f);
  ASSERT_EQ(errorText(m.setInput("x", std::move(ones))), "");
  Tensor labels({g.numVertices}, DType::I32);
  std::fill(labels.i32(), labels.i32() + g.numVertices, 1);
  ASSERT_EQ(errorText(m.setInput("label", std::move(labels))), "");
  Tensor s({64});
  std::fill(s.f32(), s.f32() + 64, 1.0f);
  ASSERT_EQ(errorText(m.setParam("Scale#0.s", std::move(s))), "");
  const Tensor *W = m.param("Linear#0.W");
  ASSERT_TRUE(W);
  int64_t kept = 0, total = 0;
  for (int32_t v = 0; v < 400; ++v) {
    ForwardOptions fo;
    fo.lossMask = {v};
    auto step = m.trainStep(fo, 5);
    ASSERT_TRUE(bool(step)) << llvm::toString(step.takeError());
    ASSERT_EQ(step->gradients[0].first, "Scale#0.s");
    const Tensor &gs = step->gradients[0].second;
    // dL/dh_vj = sum_k W[j][k] (p_k - y_k) = (W[j][0] - W[j][1]) p0: with
    // two classes and label 1, p - y = (p0, -p0).
    double ratio = 0;
    for (int64_t j = 0; j < 64; ++j) {
      ++total;
      if (gs.f32()[j] == 0)
        continue;
      ++kept;
      double dh = W->f32()[j * 2] - W->f32()[j * 2 + 1];
      if (ratio == 0)
        ratio = gs.f32()[j] / dh; // p0 / (1 - p), the same for every j
      EXPECT_NEAR(gs.f32()[j] / dh, ratio, 1e-4 * std::fabs(ratio))
          << "vertex " << v << " element " << j;
    }
    // The kept elements give the training forward's logits, W's rows
    // scaled by 1 / (1 - p), and so p0: the ratio is p0 / (1 - p).
    double z0 = 0, z1 = 0;
    for (int64_t j = 0; j < 64; ++j)
      if (gs.f32()[j] != 0) {
        z0 += W->f32()[j * 2] / 0.75;
        z1 += W->f32()[j * 2 + 1] / 0.75;
      }
    double p0 = 1 / (1 + std::exp(z1 - z0));
    EXPECT_NEAR(ratio, p0 / 0.75, 1e-4 * (p0 / 0.75)) << "vertex " << v;
  }
  double fraction = double(kept) / double(total);
  EXPECT_NEAR(fraction, 0.75, 0.02) << kept << " of " << total << " kept";
}

} // namespace
