//===- CudaDevicesTest.cpp - one chunked run over several emulated GPUs ---===//
//
// CudaBackend::executeChunked over 2, 3 and 4 of the stand-in's devices
// (SAGA_EMU_DEVICES=4) against one device: each destination interval's
// steps on its device, reductions on device 0, the same sums in the same
// order, so the same bits: the forward pass and two training steps (an SGD
// update between them) of every example a budget runs.
//
//===----------------------------------------------------------------------===//

#include "api/Model.h"
#include "analysis/PlanMemory.h"
#include "support/MemoryPlanner.h"
#include "CudaStandIn.h"
#include "TestGraphs.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

using namespace saga;
using namespace sagatest;

namespace {

void expectSameBits(const Tensor &got, const Tensor &want,
                    const std::string &what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  EXPECT_TRUE(sameBits(got, want)) << what;
}

/// 800 vertices, built once per seed and self-loop choice: `hub` edges into
/// vertex 123 and `random` edges, both from the first `connected` vertices
/// (the rest isolated).
const Graph &graphOf(uint64_t seed, int hub, int random, int connected,
                     bool selfLoops) {
  static std::map<std::pair<uint64_t, bool>, std::unique_ptr<Graph>> built;
  std::unique_ptr<Graph> &slot = built[{seed, selfLoops}];
  if (!slot) {
    Rng rng(seed);
    EdgeList e;
    e.numVertices = 800;
    for (int i = 0; i < hub + random; ++i) {
      e.src.push_back(int32_t(rng.below(connected)));
      e.dst.push_back(i < hub ? 123 : int32_t(rng.below(connected)));
    }
    slot = std::make_unique<Graph>(
        Graph::build(e.numVertices, e.src, e.dst, selfLoops));
  }
  return *slot;
}
/// The hub graph's shape at a fifth of its size (the emulated devices are
/// slow): 300 edges into the hub, 1500 random, the last 40 isolated.
const Graph &smallHub(bool selfLoops) {
  return graphOf(2026, 300, 1500, 760, selfLoops);
}
/// 4000 uniform random edges: at 4 intervals every 2-D chunk holds edges,
/// so every device reads every source interval.
const Graph &uniform(bool selfLoops) {
  return graphOf(2027, 0, 4000, 800, selfLoops);
}

/// w -= 0.5 * dw for every parameter.
void sgd(Model &m, const TrainStepResult &step) {
  for (const auto &[name, grad] : step.gradients) {
    Tensor w = *m.param(name);
    for (int64_t e = 0; e < w.numElements(); ++e)
      w.f32()[e] -= 0.5f * grad.f32()[e];
    ASSERT_EQ(errorText(m.setParam(name, std::move(w))), "");
  }
}

} // namespace

class CudaDevices : public testing::TestWithParam<const char *> {};

// Forward, a training step, an update, a second step: on 2, 3 and 4
// devices the bits of one device's, with P = 4 row intervals (so each
// device owns at least one) under half the unchunked peak.
TEST_P(CudaDevices, SameBitsAsOneDevice) {
  if (!useStandIn("forward"))
    GTEST_SKIP() << "the stand-in driver was not built (no cuda.h)";
  const std::string file = GetParam();
  std::unique_ptr<Model> one = compileExample(file, 2);
  ASSERT_TRUE(one);
  ASSERT_EQ(errorText(one->useCuda()), "");
  const Graph &g = smallHub(one->selfLoops());
  bindInputs(*one, g, "small hub", file + "/cuda-devices");
  auto pm = one->memoryProblem(true, 1 << 20);
  ASSERT_TRUE(bool(pm)) << errorText(pm.takeError());
  pm->problem.budget = int64_t(1) << 50;
  ForwardOptions fo;
  // Half the unchunked peak, P = 4: one device streams the pieces through
  // it; on several, each plans its share under the same budget.
  fo.memoryBudget = (planExact(pm->problem).peakBytes + pm->pinnedBytes) / 2;
  fo.intervals = 4;
  auto want = one->forward(fo);
  ASSERT_TRUE(bool(want)) << errorText(want.takeError());
  auto want1 = one->trainStep(fo, 5);
  ASSERT_TRUE(bool(want1)) << errorText(want1.takeError());
  ASSERT_EQ(want1->chunked.intervals, 4);
  sgd(*one, *want1);
  auto want2 = one->trainStep(fo, 6);
  ASSERT_TRUE(bool(want2)) << errorText(want2.takeError());
  for (int n : {2, 3, 4}) {
    SCOPED_TRACE(std::to_string(n) + " devices");
    std::unique_ptr<Model> many = compileExample(file, 2);
    ASSERT_TRUE(many);
    std::vector<int> ordinals;
    for (int d = 0; d < n; ++d)
      ordinals.push_back(d);
    ASSERT_EQ(errorText(many->useCuda(ordinals)), "");
    bindInputs(*many, g, "small hub", file + "/cuda-devices");
    auto got = many->forward(fo);
    ASSERT_TRUE(bool(got)) << errorText(got.takeError());
    expectSameBits(got->prediction, want->prediction, "prediction");
    ASSERT_EQ(bool(got->loss), bool(want->loss));
    if (want->loss) {
      EXPECT_EQ(*got->loss, *want->loss);
    }
    auto got1 = many->trainStep(fo, 5);
    ASSERT_TRUE(bool(got1)) << errorText(got1.takeError());
    EXPECT_EQ(got1->chunked.devices, n);
    EXPECT_EQ(got1->loss, want1->loss);
    ASSERT_EQ(got1->gradients.size(), want1->gradients.size());
    for (size_t i = 0; i < want1->gradients.size(); ++i)
      expectSameBits(got1->gradients[i].second, want1->gradients[i].second,
                     "step 1: d loss / d " + want1->gradients[i].first);
    sgd(*many, *got1);
    auto got2 = many->trainStep(fo, 6);
    ASSERT_TRUE(bool(got2)) << errorText(got2.takeError());
    EXPECT_EQ(got2->loss, want2->loss);
    for (size_t i = 0; i < want2->gradients.size(); ++i)
      expectSameBits(got2->gradients[i].second, want2->gradients[i].second,
                     "step 2: d loss / d " + want2->gradients[i].first);
    // Each device within its budget; the devices hand values over.
    EXPECT_LE(got2->chunked.run.poolPeak, fo.memoryBudget);
    EXPECT_GT(got2->chunked.handoffPeerBytes, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Examples, CudaDevices,
    testing::Values("gcn.saga", "gat.saga", "graphsage.saga", "gin.saga",
                    "ggcn.saga", "appnp.saga", "gatv2.saga", "gcnii.saga",
                    "jknet.saga", "pna.saga", "rgcn.saga", "sgc.saga",
                    "gcn_citeseer.saga"),
    [](const testing::TestParamInfo<const char *> &info) {
      std::string name = info.param;
      return name.substr(0, name.find('.'));
    });

// NGra's ring in the run: a propagation whose messages are the input's
// rows as they are (the features live in host memory, and chunks on every
// device read every source interval of them). With peer handoffs the host
// sends each interval once and the devices pass it on; without, each
// device reads each interval from the host: four times the bytes. What the
// devices make and hand each other goes over peer links, or through the
// host without them.
TEST(CudaDevicesRing, HostSendsEachSourceIntervalOnce) {
  if (!useStandIn("forward"))
    GTEST_SKIP() << "the stand-in driver was not built (no cuda.h)";
  const char *source = R"saga(
graph {
  vertex x: f32[64];
  vertex label: class[4];
}
layer Sum() {
  scatter(v)         { h = v.h; }
  gather(sum);
  apply_vertex(v, a) { return a; }
}
layer Linear(in: int, out: int) {
  param W: f32[in, out] = glorot;
  apply_vertex(v, a) { return v.h @ W; }
}
model Ring {
  h = Sum()(x);
  out = Linear(64, 4)(h);
  loss = cross_entropy(out, label);
}
)saga";
  CompileOptions co;
  co.training = true;
  co.threads = 2;
  auto compiled = Model::compileSource(source, "ring.saga", co);
  ASSERT_TRUE(bool(compiled)) << errorText(compiled.takeError());
  std::unique_ptr<Model> m = std::move(*compiled);
  ASSERT_EQ(errorText(m->useCuda({0, 1, 2, 3})), "");
  const Graph &g = uniform(m->selfLoops());
  bindInputs(*m, g, "uniform", "ring/cuda-devices-ring");
  ForwardOptions ring;
  ring.memoryBudget = 1 << 20;
  ring.intervals = 4;
  ring.selectiveLoading = false; // whole source intervals
  ForwardOptions host = ring;
  host.peerHandoffs = false;
  auto a = m->forward(ring);
  ASSERT_TRUE(bool(a)) << errorText(a.takeError());
  auto b = m->forward(host);
  ASSERT_TRUE(bool(b)) << errorText(b.takeError());
  EXPECT_TRUE(sameBits(a->prediction, b->prediction));
  const ChunkedStats &r = a->chunked, &h = b->chunked;
  ASSERT_EQ(r.intervals, 4);
  const int64_t x = 800 * 64 * 4, labels = 800 * 4;
  // The host sends the features once with the ring, to every device
  // without: N times the bytes. (The labels: once, to device 0's loss.)
  EXPECT_EQ(r.sourceBytes, x + labels);
  EXPECT_EQ(h.sourceBytes, 4 * x + labels);
  // The ring passes each interval on to the three other devices; what the
  // devices make and hand over (the logits' intervals, to device 0's loss)
  // goes over peer links with it and through the host without.
  EXPECT_EQ(r.handoffHostBytes, 0);
  EXPECT_EQ(h.handoffPeerBytes, 0);
  EXPECT_GT(h.handoffHostBytes, 0);
  EXPECT_EQ(r.handoffPeerBytes, 3 * x + h.handoffHostBytes);
}
