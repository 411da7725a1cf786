//===- LossTest.cpp - cross-entropy over many rows ------------------------===//
//
// The loss and its gradient run in parallel over fixed chunks of 8192 rows
// (runtime/exec/Executor.cpp). On 20,000 vertices (three chunks, the last one
// partial), with unlabelled vertices and with a loss mask, both must match a
// double-precision reference and be bit-identical with 1 and 2 threads.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/ExecHelpers.h"
#include "runtime/exec/FastExp.h"
#include "api/Model.h"
#include "runtime/graph/Synthetic.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace saga;

namespace {

const char *kSource = R"(
graph { vertex x: f32[3]; vertex label: class[3]; }
layer Scale() {
  param s: f32[3] = ones;
  apply_vertex(v, a) { return v.h * s; }
}
model M {
  out = Scale()(x);
  loss = cross_entropy(out, label);
}
)";

constexpr int32_t kVertices = 20000;

struct Reference {
  double loss = 0;
  double grad[3] = {0, 0, 0}; // d loss / d s
};

// Logits = x (s = ones); labels -1 for every 7th vertex.
Reference reference(const Tensor &x, const Tensor &labels,
                    const std::vector<int32_t> &rows) {
  Reference r;
  int64_t count = 0;
  for (int32_t v : rows)
    count += labels.i32()[v] >= 0;
  for (int32_t v : rows) {
    int32_t label = labels.i32()[v];
    if (label < 0)
      continue;
    const float *z = x.f32() + int64_t(v) * 3;
    double m = std::max({double(z[0]), double(z[1]), double(z[2])}), s = 0;
    for (int j = 0; j < 3; ++j)
      s += std::exp(z[j] - m);
    r.loss += (m + std::log(s) - z[label]) / double(count);
    for (int j = 0; j < 3; ++j) {
      double p = std::exp(z[j] - m) / s - (j == label ? 1.0 : 0.0);
      r.grad[j] += p * z[j] / double(count); // d out[v][j] / d s[j] = x[v][j]
    }
  }
  return r;
}

struct Outcome {
  double loss = 0, forwardLoss = 0;
  std::vector<float> grad;
};

Outcome run(unsigned threads, const Graph &g, const Tensor &x,
            const Tensor &labels, const std::vector<int32_t> &mask) {
  CompileOptions co;
  co.threads = threads;
  co.training = true;
  auto model = Model::compileSource(kSource, "loss.saga", co);
  EXPECT_TRUE(bool(model)) << (model ? "" : llvm::toString(model.takeError()));
  Outcome o;
  if (!model)
    return o;
  EXPECT_FALSE(bool((*model)->setGraph(g)));
  EXPECT_FALSE(bool((*model)->setInput("x", x)));
  EXPECT_FALSE(bool((*model)->setInput("label", labels)));
  (*model)->initParams(0);
  ForwardOptions options;
  options.lossMask = mask;
  auto forward = (*model)->forward(options);
  EXPECT_TRUE(bool(forward));
  if (!forward)
    return o;
  o.forwardLoss = forward->loss.value_or(NAN);
  auto step = (*model)->trainStep(options, /*seed=*/1);
  EXPECT_TRUE(bool(step));
  if (!step)
    return o;
  o.loss = step->loss;
  EXPECT_EQ(step->gradients.size(), 1u);
  if (step->gradients.size() == 1) {
    const Tensor &g = step->gradients[0].second;
    o.grad.assign(g.f32(), g.f32() + g.numElements());
  }
  return o;
}

void check(const std::vector<int32_t> &mask, const char *what) {
  Graph g = Graph::build(kVertices, {}, {}, /*addSelfLoops=*/false);
  Tensor x = randomFeatures(kVertices, 3, /*seed=*/5);
  Tensor labels({kVertices}, DType::I32);
  for (int32_t v = 0; v < kVertices; ++v)
    labels.i32()[v] = v % 7 == 0 ? -1 : (v * 7919) % 3;
  std::vector<int32_t> rows = mask;
  if (rows.empty())
    for (int32_t v = 0; v < kVertices; ++v)
      rows.push_back(v);
  Reference ref = reference(x, labels, rows);
  Outcome one = run(1, g, x, labels, mask), two = run(2, g, x, labels, mask);
  EXPECT_NEAR(one.forwardLoss, ref.loss, 1e-5 * std::fabs(ref.loss)) << what;
  EXPECT_NEAR(one.loss, ref.loss, 1e-5 * std::fabs(ref.loss)) << what;
  ASSERT_EQ(one.grad.size(), 3u) << what;
  for (int j = 0; j < 3; ++j)
    EXPECT_NEAR(one.grad[j], ref.grad[j], 1e-4 * std::fabs(ref.grad[j]) + 1e-7)
        << what << ": d loss / d s[" << j << "]";
  // Fixed chunks: the thread count changes nothing, to the bit.
  EXPECT_EQ(one.loss, two.loss) << what;
  EXPECT_EQ(one.forwardLoss, two.forwardLoss) << what;
  EXPECT_EQ(one.grad, two.grad) << what;
}

// The losses' exp: within 2 ulp of libm's over the range where float is
// normal, monotone, exactly 1 at 0, and tiny (not NaN or negative) below.
TEST(FastExp, MatchesLibmOnNonPositiveArguments) {
  float previous = 0;
  for (int i = 873000; i >= 0; --i) {
    float x = -float(i) * 1e-4f;
    float got = saga::expNonPositive(x), want = std::exp(x);
    ASSERT_NEAR(got, want, 2.4e-7f * want) << "x = " << x;
    ASSERT_GE(got, previous) << "x = " << x;
    previous = got;
  }
  EXPECT_EQ(saga::expNonPositive(0.0f), 1.0f);
  for (float x : {-87.4f, -100.0f, -1e30f, -INFINITY}) {
    float got = saga::expNonPositive(x);
    EXPECT_GT(got, 0.0f) << x;
    EXPECT_LT(got, 1.3e-38f) << x;
  }
}

TEST(CrossEntropyChunks, AllVerticesMatchTheReference) { check({}, "all"); }

TEST(CrossEntropyChunks, MaskedVerticesMatchTheReference) {
  std::vector<int32_t> mask;
  for (int32_t v = kVertices - 1; v >= 0; v -= 2) // descending, every other
    mask.push_back(v);
  check(mask, "mask");
}

} // namespace

namespace {

// A loss mask that repeats rows (a weighted loss), in any order: the
// gradient's tasks (rowTasks) hold each row's places in one task, in the
// mask's order, and cover every place once; without repeats an ascending
// mask keeps its order and is cut at the block size. TSan found two tasks
// adding into one gradient row before (OutOfCoreLoss.AnyMaskOrder...).
TEST(CrossEntropyChunks, RepeatedRowsStayInOneTask) {
  std::vector<int32_t> rows;
  for (int32_t k = 0; k < 5000; ++k)
    rows.push_back((k * 7919) % 1237); // each row about 4 times, scattered
  std::vector<int32_t> places(rows.size());
  for (size_t q = 0; q < places.size(); ++q)
    places[q] = int32_t(q);
  const exec::RowTasks tasks = exec::rowTasks(rows, places, 64);
  ASSERT_GT(tasks.count(), 10);
  EXPECT_EQ(tasks.bounds.front(), 0);
  EXPECT_EQ(tasks.bounds.back(), int64_t(rows.size()));
  std::vector<int> taskOfRow(1237, -1), seen(rows.size(), 0);
  std::vector<int32_t> lastPlace(1237, -1);
  for (int64_t t = 0; t < tasks.count(); ++t)
    for (int64_t k = tasks.bounds[size_t(t)]; k < tasks.bounds[size_t(t) + 1];
         ++k) {
      int32_t q = tasks.places[size_t(k)], v = rows[size_t(q)];
      ++seen[size_t(q)];
      if (taskOfRow[size_t(v)] < 0)
        taskOfRow[size_t(v)] = int(t);
      EXPECT_EQ(taskOfRow[size_t(v)], int(t)) << "row " << v;
      EXPECT_GT(q, lastPlace[size_t(v)]) << "row " << v;
      lastPlace[size_t(v)] = q;
    }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), int64_t(rows.size()));

  std::vector<int32_t> ascending(1000);
  for (size_t q = 0; q < ascending.size(); ++q)
    ascending[q] = int32_t(3 * q);
  std::vector<int32_t> first(places.begin(), places.begin() + 1000);
  const exec::RowTasks plain = exec::rowTasks(ascending, first, 64);
  EXPECT_EQ(plain.count(), (1000 + 63) / 64);
  for (size_t q = 0; q < 1000; ++q)
    EXPECT_EQ(plain.places[q], int32_t(q));
}

} // namespace
