//===- PartitionBench.cpp - ROC's partitioner on this machine -------------===//
//
//   saga-bench-partition [--scale 20] [--edge-factor 16] [--partitions 4]
//       [--samples 24] [--holdout 8] [--repeats 3] [--part-threads 1]
//       [--model bench/models/gcn64.saga] [--cost-model-out FILE]
//
// ROC's claim, measured: a partitioner driven by a learned cost model
// balances a GNN's training step better than equal vertices, equal edges or
// METIS. Each partition's training step is timed alone in this process (one
// thread: one rank's share of the machine), on its part of the graph with
// its halo, as a rank would run it (IsolatedDistribution: halo rows zero,
// nothing sent).
//
//  1. samples: random contiguous ranges of the degree-ordered R-MAT graph
//     (every third a prefix: the hubs), each timed (median of --repeat
//     steps after a warm-up);
//  2. ROC's cost model fitted to the first samples - holdout by
//     non-negative least squares; its error on the held-out ranges;
//  3. each partitioner cuts the graph into --parts parts; every part's step
//     is timed: max / mean is the imbalance; the learned model's
//     predictions are printed beside; METIS's edge cut and every
//     partitioner's halo (the rows, and the bytes a step gathers and sends
//     back per the plan's widths) too;
//  4. in one process, the thread pool's row blocks: a whole-graph training
//     step on --pool-threads threads with the executor's blocks (about
//     equal in-edges each) against as many blocks cut by the fitted model
//     (rowBlocksByCost), median of --repeats steps each.
//
//===----------------------------------------------------------------------===//

#include "BenchCommon.h"

#include "api/Model.h"
#include "runtime/distributed/GraphPart.h"
#include "runtime/distributed/IsolatedDistribution.h"
#include "runtime/distributed/Partitioner.h"
#include "runtime/exec/ExecHelpers.h"
#include "runtime/graph/Reorder.h"
#include "runtime/graph/Synthetic.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <random>

using namespace saga;
using namespace sagabench;
namespace cl = llvm::cl;

namespace {
cl::opt<int> scale("scale", cl::desc("R-MAT scale (2^scale vertices)"),
                   cl::init(20));
cl::opt<int> edgeFactor("edge-factor", cl::desc("R-MAT edges per vertex"),
                        cl::init(16));
cl::opt<int64_t> parts("partitions", cl::desc("Partitions"), cl::init(4));
cl::opt<int> samples("samples", cl::desc("Timed ranges for the fit"),
                     cl::init(24));
cl::opt<int> holdout("holdout",
                     cl::desc("Of the samples, held out of the fit"),
                     cl::init(8));
cl::opt<int> repeat("repeats", cl::desc("Timed steps per part (median)"),
                    cl::init(3));
cl::opt<unsigned> threads("part-threads", cl::desc("Threads per part"),
                          cl::init(1));
cl::opt<std::string> modelPath("model", cl::desc("A .saga model"),
                               cl::init(SAGA_SOURCE_DIR
                                        "/bench/models/gcn64.saga"));
cl::opt<unsigned> poolThreads("pool-threads",
                               cl::desc("Threads of the one-process step"),
                               cl::init(2));
cl::opt<std::string> costModelOut("cost-model-out",
                                  cl::desc("Write the fitted cost model"),
                                  cl::init(""));

struct Bench {
  std::unique_ptr<Model> model;
  Graph graph;
  Tensor features;
  std::vector<int32_t> labels;
  std::string featureName, labelName;

  /// A training step on part `k` of `p`, alone: its median seconds, and
  /// the bytes its halo gathers and scatters would move.
  struct PartTime {
    double seconds = 0;
    int64_t halo = 0, gatherBytes = 0, scatterBytes = 0;
  };
  PartTime time(const Partitioning &p, int64_t k) {
    GraphPart part = makeGraphPart(graph, p, k);
    IsolatedDistribution dist(part);
    Model &m = *model;
    if (llvm::Error e = m.setDistribution(nullptr))
      fail(llvm::toString(std::move(e)));
    if (llvm::Error e = m.setGraph(part.local))
      fail(llvm::toString(std::move(e)));
    if (llvm::Error e = m.setDistribution(&dist))
      fail(llvm::toString(std::move(e)));
    if (llvm::Error e = m.setInput(featureName, part.localRowsOf(features)))
      fail(llvm::toString(std::move(e)));
    Tensor local({part.localRows()}, DType::I32);
    for (int64_t r = 0; r < part.localRows(); ++r)
      local.i32()[r] = labels[size_t(part.globalIds[size_t(r)])];
    if (llvm::Error e = m.setInput(labelName, std::move(local)))
      fail(llvm::toString(std::move(e)));
    ForwardOptions fo; // the loss over every owned row
    std::vector<double> times;
    for (int i = 0; i <= repeat; ++i) {
      dist.resetCounters();
      auto step = m.trainStep(fo, 1);
      if (!step)
        fail(llvm::toString(step.takeError()));
      if (i > 0) // the first warms up
        times.push_back(step->seconds);
    }
    if (llvm::Error e = m.setDistribution(nullptr))
      fail(llvm::toString(std::move(e)));
    return {median(times), int64_t(part.halo.size()), dist.gatheredBytes(),
            dist.scatteredBytes()};
  }
};

} // namespace

int main(int argc, char **argv) {
  toolName = "saga-bench-partition";
  cl::ParseCommandLineOptions(argc, argv, "ROC's partitioner, measured\n");
  Bench b;
  CompileOptions co;
  co.training = true;
  co.distributed = true;
  co.threads = threads;
  auto compiled = Model::compileFile(modelPath, co);
  if (!compiled)
    fail(llvm::toString(compiled.takeError()));
  b.model = std::move(*compiled);
  b.model->initParams(0);
  int64_t classes = 0;
  for (const ValueInfo &in : b.model->inputs()) {
    if (in.domain != ValueInfo::Vertex)
      continue;
    if (in.dtype == DType::F32)
      b.featureName = in.name;
    else
      b.labelName = in.name;
  }
  for (const ValueInfo &p : b.model->params())
    if (p.shape.size() == 1)
      classes = std::max(classes, p.shape[0]);
  if (b.featureName.empty() || b.labelName.empty())
    fail("the model needs an f32 vertex input and a class input");
  int64_t width = featureWidth(*b.model);

  auto start = std::chrono::steady_clock::now();
  EdgeList edges = rmatGraph(scale, edgeFactor, 1);
  VertexOrder degree = degreeOrder(edges);
  relabel(edges, degree);
  b.graph = Graph::build(edges.numVertices, edges.src, edges.dst,
                         b.model->selfLoops());
  const int32_t n = b.graph.numVertices;
  b.features = randomFeatures(n, width, 2);
  std::mt19937_64 rng(3);
  b.labels.resize(size_t(n));
  for (int32_t &l : b.labels)
    l = int32_t(rng() % uint64_t(std::max<int64_t>(classes, 2)));
  llvm::outs() << llvm::format(
      "graph     R-MAT scale %d, edge factor %d, degree order: %d vertices, "
      "%lld edges (self loops: %s), %lld features; made in %.1f s\n",
      int(scale), int(edgeFactor), n, (long long)b.graph.numEdges,
      b.model->selfLoops() ? "yes" : "no", (long long)width,
      secondsSince(start));
  llvm::outs() << "model     " << modelPath << ", training step, " << threads
               << " thread(s) per part\n";

  // 1. Samples: random ranges, from a 32nd to a half of the vertices;
  // every third a prefix, where the degree order puts the hubs (a cut's
  // first part always starts there, and a uniform start almost never
  // does).
  CostModel cost(b.model->layerWidths());
  std::vector<CostModel::Sample> fitSet, heldOut;
  std::uniform_real_distribution<double> fraction(1.0 / 32, 0.5);
  for (int s = 0; s < samples; ++s) {
    int64_t size = int64_t(fraction(rng) * n);
    int64_t lo = int64_t(rng() % uint64_t(n - size + 1));
    if (s % 3 == 0)
      lo = 0;
    Partitioning p{{0, int32_t(lo), int32_t(lo + size), n}};
    Bench::PartTime t = b.time(p, 1);
    CostModel::Sample sample{cost.inputs(b.graph, int32_t(lo),
                                         int32_t(lo + size)),
                             t.seconds};
    (s < samples - holdout ? fitSet : heldOut).push_back(sample);
    llvm::outs() << llvm::format("sample    %2d: vertices [%d, %d) %5.1f %% "
                                 "of V: %.1f ms\n",
                                 s, int(lo), int(lo + size),
                                 100.0 * double(size) / n, t.seconds * 1e3);
    llvm::outs().flush();
  }
  // 2. The fit and its held-out error.
  double fitError = cost.fit(fitSet);
  double worst = 0, sum2 = 0;
  for (const CostModel::Sample &s : heldOut) {
    double e = std::abs(cost.predict(s.inputs) - s.seconds) / s.seconds;
    worst = std::max(worst, e);
    sum2 += e * e;
  }
  llvm::outs() << llvm::format(
      "fit       %zu samples: RMS relative error %.1f %%; held out %zu: RMS "
      "%.1f %%, worst %.1f %%\n",
      fitSet.size(), 100 * fitError, heldOut.size(),
      heldOut.empty() ? 0.0 : 100 * std::sqrt(sum2 / double(heldOut.size())),
      100 * worst);
  llvm::outs() << "weights  ";
  for (int f = 0; f < kCostFeatures; ++f)
    llvm::outs() << llvm::format(" %s %.3g", costFeatureName(f),
                                 cost.weights()[size_t(f)]);
  llvm::outs() << "\n";
  if (!costModelOut.empty()) {
    std::ofstream out(costModelOut);
    out << cost.serialize();
    llvm::outs() << "wrote     " << costModelOut << "\n";
  }

  // 4. One process: the thread pool's blocks, the executor's or the
  // model's. Measured before METIS relabels the graph.
  {
    CompileOptions whole;
    whole.training = true;
    whole.threads = poolThreads;
    auto one = Model::compileFile(modelPath, whole);
    if (!one)
      fail(llvm::toString(one.takeError()));
    Model &m = **one;
    m.initParams(0);
    if (llvm::Error e = m.setGraph(b.graph))
      fail(llvm::toString(std::move(e)));
    if (llvm::Error e = m.setInput(b.featureName, b.features))
      fail(llvm::toString(std::move(e)));
    Tensor labels({n}, DType::I32);
    std::copy(b.labels.begin(), b.labels.end(), labels.i32());
    if (llvm::Error e = m.setInput(b.labelName, std::move(labels)))
      fail(llvm::toString(std::move(e)));
    // As many blocks as the executor makes (about equal in-edges each).
    const int64_t executorBlocks =
        int64_t(exec::rowBlocks(b.graph, &b.graph.inOffsets).size()) - 1;
    std::vector<int64_t> byCost =
        rowBlocksByCost(b.graph, executorBlocks, cost, kRowsPerTask);
    auto stepTime = [&](const std::vector<int64_t> *blocks) {
      ForwardOptions fo;
      fo.propagationBlocks = blocks;
      std::vector<double> times;
      for (int i = 0; i <= repeat; ++i) {
        auto step = m.trainStep(fo, 1);
        if (!step)
          fail(llvm::toString(step.takeError()));
        if (i > 0)
          times.push_back(step->seconds);
      }
      return median(times);
    };
    // Alternated, so that drift hits both alike.
    std::vector<double> equal, learned;
    for (int round = 0; round < 3; ++round) {
      equal.push_back(stepTime(nullptr));
      learned.push_back(stepTime(&byCost));
    }
    llvm::outs() << llvm::format(
        "pool      one process, %u threads, whole-graph step: the executor's "
        "%lld blocks (about equal in-edges) %.1f ms, %zu blocks by the "
        "fitted cost model %.1f ms (%+.1f %%)\n",
        unsigned(poolThreads), (long long)executorBlocks,
        median(equal) * 1e3, byCost.size() - 1, median(learned) * 1e3,
        100.0 * (median(learned) / median(equal) - 1));
    llvm::outs().flush();
  }

  // 3. The partitioners.
  auto report = [&](const std::string &name, const Partitioning &p,
                    const Graph &g, int64_t cut) {
    std::vector<double> measured, predicted;
    int64_t halo = 0, gathered = 0, scattered = 0;
    for (int64_t k = 0; k < p.parts(); ++k) {
      Bench::PartTime t = b.time(p, k);
      measured.push_back(t.seconds);
      predicted.push_back(cost.predict(
          cost.inputs(g, p.bounds[size_t(k)], p.bounds[size_t(k) + 1])));
      halo += t.halo;
      gathered += t.gatherBytes;
      scattered += t.scatterBytes;
    }
    llvm::outs() << llvm::format("%-9s max/mean step %.3f (predicted %.3f); "
                                 "edge cut %.1f %%; halo %lld rows; a step "
                                 "gathers %.1f MiB, sends back %.1f MiB; "
                                 "steps:",
                                 name.c_str(), imbalance(measured),
                                 imbalance(predicted),
                                 100.0 * double(cut) / double(g.numEdges),
                                 (long long)halo, double(gathered) / (1 << 20),
                                 double(scattered) / (1 << 20));
    for (size_t k = 0; k < measured.size(); ++k)
      llvm::outs() << llvm::format(" %.0f/%.0f", measured[k] * 1e3,
                                   predicted[k] * 1e3);
    llvm::outs() << " ms (measured/predicted)\n";
    llvm::outs().flush();
  };
  Partitioning byV = partitionByVertices(b.graph, parts);
  report("vertices", byV, b.graph, edgeCut(b.graph, byV));
  Partitioning byE = partitionByInEdges(b.graph, parts);
  report("edges", byE, b.graph, edgeCut(b.graph, byE));
  Partitioning byCost = partitionByCost(b.graph, parts, cost);
  report("roc", byCost, b.graph, edgeCut(b.graph, byCost));
  start = std::chrono::steady_clock::now();
  VertexOrder order;
  int64_t cut = 0;
  auto metis = partitionByMetis(b.graph, parts, order, &cut);
  if (!metis)
    fail(llvm::toString(metis.takeError()));
  double metisSeconds = secondsSince(start);
  // The graph and its rows relabelled into METIS's ranges.
  {
    std::vector<int32_t> src, dst;
    for (int32_t v = 0; v < n; ++v)
      for (int64_t i = b.graph.inOffsets[size_t(v)];
           i < b.graph.inOffsets[size_t(v) + 1]; ++i)
        if (b.graph.inEdgeIds[size_t(i)] < b.graph.numEdges - (b.graph.selfLoops ? n : 0)) {
          src.push_back(order.newId[size_t(b.graph.inSources[size_t(i)])]);
          dst.push_back(order.newId[size_t(v)]);
        }
    bool loops = b.graph.selfLoops;
    b.graph = Graph::build(n, src, dst, loops);
    b.features = permuteRows(b.features, order);
    std::vector<int32_t> labels(static_cast<size_t>(n), 0);
    for (int32_t v = 0; v < n; ++v)
      labels[size_t(order.newId[size_t(v)])] = b.labels[size_t(v)];
    b.labels = std::move(labels);
  }
  llvm::outs() << llvm::format("metis     cut in %.1f s\n", metisSeconds);
  report("metis", *metis, b.graph, cut);
  return 0;
}
