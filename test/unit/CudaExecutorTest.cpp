//===- CudaExecutorTest.cpp - the CUDA executor on the stand-in driver ----===//
//
// The CUDA executor (runtime/exec/cuda) runs through the driver API, NVRTC
// and cuBLAS loaded at run time; here they are the CPU-backed stand-in
// (emulator/driver/StandIn.cpp), so the executor's code is the one a GPU
// would run and its kernels run on the emulated GPU. Every example's
// forward pass and training step match the CPU backend on the hub graph;
// the stand-in behaves as the driver does where the executor relies on it
// (pageable copies snapshot their source, device memory is bounded and
// checked, events order streams, a failed kernel poisons the context).
//
//===----------------------------------------------------------------------===//

#include "api/Model.h"
#include "analysis/PlanMemory.h"
#include "runtime/exec/cuda/CudaApi.h"
#include "runtime/exec/cuda/CudaDevice.h"
#include "runtime/exec/cuda/RuntimeKernels.h"
#include "runtime/exec/cuda/RuntimeOps.h"
#include "runtime/graph/GraphFile.h"
#include "support/Intervals.h"
#include "support/MemoryPlanner.h"

#include "CudaStandIn.h"
#include "TestGraphs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <unistd.h>
#include <vector>

using namespace saga;
using namespace saga::cuda;
using namespace sagatest;

namespace {


const char kImageMagic[] = "// SAGA-EMULATED-MODULE 1\n";

} // namespace

class CudaExecutor : public testing::TestWithParam<const char *> {};

TEST_P(CudaExecutor, MatchesTheCpuBackend) {
  if (!useStandIn())
    GTEST_SKIP() << "the stand-in driver was not built (no cuda.h)";
  const char *file = GetParam();
  std::unique_ptr<Model> cpu = compileExample(file, 2);
  std::unique_ptr<Model> gpu = compileExample(file, 2);
  ASSERT_TRUE(cpu && gpu);
  ASSERT_EQ(errorText(gpu->useCuda()), "");
  EXPECT_NE(gpu->deviceName().find("Saga emulated GPU"), std::string::npos);
  const Graph &g = graphFor("hub", cpu->selfLoops());
  for (Model *m : {cpu.get(), gpu.get()})
    bindInputs(*m, g, "hub", std::string(file) + "/cuda-executor");

  ForwardOptions fo;
  auto want = cpu->forward(fo);
  auto got = gpu->forward(fo);
  ASSERT_TRUE(bool(want)) << errorText(want.takeError());
  ASSERT_TRUE(bool(got)) << errorText(got.takeError());
  expectClose(got->prediction, want->prediction, "prediction");
  ASSERT_EQ(bool(got->loss), bool(want->loss));
  if (want->loss) {
    EXPECT_NEAR(*got->loss, *want->loss, 1e-5 * std::fabs(*want->loss));
  }

  // Twice: the second step reuses the resident graph and inputs.
  for (uint64_t seed : {7u, 8u}) {
    auto wantStep = cpu->trainStep(fo, seed);
    auto gotStep = gpu->trainStep(fo, seed);
    ASSERT_TRUE(bool(wantStep)) << errorText(wantStep.takeError());
    ASSERT_TRUE(bool(gotStep)) << errorText(gotStep.takeError());
    EXPECT_NEAR(gotStep->loss, wantStep->loss, 1e-5 * std::fabs(wantStep->loss));
    ASSERT_EQ(gotStep->gradients.size(), wantStep->gradients.size());
    // G-GCN's sigmoid gates amplify the last-bit differences of GEMMs
    // (cuBLAS's blocking against the CPU's row blocks) and of the CPU
    // kernels' fused multiply-adds, by how much depends on the dropout
    // masks: with the 32-bit dropout hash, at most 3e-5 of the largest
    // gradient for steps seeded 1-4 and 11-12, 1.2e-4 for 7 and 8 (measured
    // here, LLVM 22.1.8). Every element within 5e-4 of the largest
    // magnitude for it; 1e-5 for the others.
    const bool ggcn = std::string(file) == "ggcn.saga";
    for (size_t i = 0; i < wantStep->gradients.size(); ++i)
      expectClose(gotStep->gradients[i].second, wantStep->gradients[i].second,
                  "d loss / d " + wantStep->gradients[i].first,
                  ggcn ? 1.0 : 0.0, ggcn ? 5e-4 : 1e-4);
  }

}

/// The stand-in device with a pool of `poolBytes`.
llvm::Expected<std::unique_ptr<CudaDevice>> openDevice(int64_t poolBytes) {
  CudaDevice::Options o;
  o.poolBytes = poolBytes;
  return CudaDevice::open(o);
}

/// The bytes of the plan's peak without a budget (the chunked tests' unit).
int64_t unboundedPeak(Model &m) {
  auto pm = m.memoryProblem(true, 1 << 20);
  EXPECT_TRUE(bool(pm));
  MemoryProblem &p = pm->problem;
  p.budget = int64_t(1) << 50;
  return planExact(p).peakBytes + pm->pinnedBytes;
}

// The chunked level's plan on the CUDA device: a budget of a quarter of the
// unbounded peak (the planner picks P, spills and reloads), and P = 3
// forced with spills to files; forward and training step match the CPU's
// chunked run under the same budget; the loads and stores moved what the
// plan said, through the device's copy stream.
// The chunked plans of the five original examples (the newer ones share
// their kernels' kinds: the same propagations, edge maps and GEMMs).
class CudaExecutorChunked : public testing::TestWithParam<const char *> {};

TEST_P(CudaExecutorChunked, RunsTheChunkedPlanUnderABudget) {
  if (!useStandIn())
    GTEST_SKIP() << "the stand-in driver was not built (no cuda.h)";
  const char *file = GetParam();
  std::unique_ptr<Model> cpu = compileExample(file, 2);
  std::unique_ptr<Model> gpu = compileExample(file, 2);
  ASSERT_TRUE(cpu && gpu);
  ASSERT_EQ(errorText(gpu->useCuda()), "");
  const Graph &g = graphFor("hub", cpu->selfLoops());
  for (Model *m : {cpu.get(), gpu.get()})
    bindInputs(*m, g, "hub", std::string(file) + "/cuda-chunked");
  int64_t peak = unboundedPeak(*cpu);
  ForwardOptions tight, forced;
  tight.memoryBudget = peak / 4;
  forced.memoryBudget = peak;
  forced.intervals = 3;
  forced.scratch = SAGA_TEST_SCRATCH_DIR;
  for (const ForwardOptions &fo : {tight, forced}) {
    SCOPED_TRACE(fo.intervals ? "P = 3, spill files" : "a quarter of the peak");
    auto want = cpu->forward(fo);
    auto got = gpu->forward(fo);
    ASSERT_TRUE(bool(want)) << errorText(want.takeError());
    ASSERT_TRUE(bool(got)) << errorText(got.takeError());
    expectClose(got->prediction, want->prediction, "prediction");
    EXPECT_EQ(got->chunked.intervals, want->chunked.intervals);
    auto wantStep = cpu->trainStep(fo, 3);
    auto gotStep = gpu->trainStep(fo, 3);
    ASSERT_TRUE(bool(wantStep)) << errorText(wantStep.takeError());
    ASSERT_TRUE(bool(gotStep)) << errorText(gotStep.takeError());
    EXPECT_GT(gotStep->chunked.intervals, 1);
    EXPECT_NEAR(gotStep->loss, wantStep->loss, 1e-5 * std::fabs(wantStep->loss));
    // Interval by interval, the GEMMs' rows may round differently in the
    // last bit (a BLAS picks its kernels by the rows' count); through
    // GGCN's gates that grows to 2.9e-4 of the largest gradient at these
    // seeds' masks (see MatchesTheCpuBackend). Others: at most 1 % of the
    // elements, each within 1e-4; G-GCN: every element within 5e-4.
    const bool ggcn = std::string(GetParam()) == "ggcn.saga";
    for (size_t i = 0; i < wantStep->gradients.size(); ++i)
      expectClose(gotStep->gradients[i].second, wantStep->gradients[i].second,
                  "d loss / d " + wantStep->gradients[i].first,
                  ggcn ? 1.0 : 0.01, ggcn ? 5e-4 : 1e-4);
    const PlanRunStats &run = gotStep->chunked.run;
    EXPECT_GT(run.transfers.loads, 0);
    EXPECT_EQ(run.transfers.bytesLoaded + run.transfers.bytesStored,
              gotStep->chunked.plannedBytes);
    EXPECT_LE(run.poolPeak, fo.memoryBudget);
    EXPECT_EQ(gotStep->chunked.rowLoads, wantStep->chunked.rowLoads);
  }
  // Mostly empty chunks (the islands graph at P = 8): their source pieces
  // are not loaded (null on the device) and middle ones not launched. (One
  // model: the emulated device is slow, and the skipping is the same for
  // every propagation; OutOfCoreTest runs all five on the CPU.)
  if (std::string(file) != "gcn.saga")
    return;
  const Graph &islands = graphFor("islands", cpu->selfLoops());
  for (Model *m : {cpu.get(), gpu.get()})
    bindInputs(*m, islands, "islands", std::string(file) + "/cuda-islands");
  ForwardOptions sparse;
  sparse.memoryBudget = unboundedPeak(*cpu);
  sparse.intervals = 8;
  auto want = cpu->trainStep(sparse, 3);
  auto got = gpu->trainStep(sparse, 3);
  ASSERT_TRUE(bool(want)) << errorText(want.takeError());
  ASSERT_TRUE(bool(got)) << errorText(got.takeError());
  EXPECT_GT(got->chunked.emptyChunks, 8 * 8 / 3);
  EXPECT_EQ(got->chunked.emptyChunks, want->chunked.emptyChunks);
  EXPECT_NEAR(got->loss, want->loss, 1e-5 * std::fabs(want->loss));
  for (size_t i = 0; i < want->gradients.size(); ++i)
    expectClose(got->gradients[i].second, want->gradients[i].second,
                "d loss / d " + want->gradients[i].first, 0.01, 1e-4);
  // Selective loading: the first propagation over the input's width (no
  // linear moved before it) on Cora, under a third of the peak: chunks
  // load only the source rows they read, uploaded run by run into their
  // places on the device; the bytes moved are the plan's.
  std::unique_ptr<Model> cpuWide = compileExample(file, 2, {"reorder-linear"});
  std::unique_ptr<Model> gpuWide = compileExample(file, 2, {"reorder-linear"});
  ASSERT_TRUE(cpuWide && gpuWide);
  ASSERT_EQ(errorText(gpuWide->useCuda()), "");
  const Graph &cora = graphFor("cora", cpuWide->selfLoops());
  for (Model *m : {cpuWide.get(), gpuWide.get()})
    bindInputs(*m, cora, "cora", std::string(file) + "/cuda-selective");
  ForwardOptions rows;
  rows.memoryBudget = unboundedPeak(*cpuWide) / 3;
  auto wantRows = cpuWide->trainStep(rows, 3);
  auto gotRows = gpuWide->trainStep(rows, 3);
  ASSERT_TRUE(bool(wantRows)) << errorText(wantRows.takeError());
  ASSERT_TRUE(bool(gotRows)) << errorText(gotRows.takeError());
  EXPECT_GT(gotRows->chunked.rowLoads, 0);
  EXPECT_EQ(gotRows->chunked.run.transfers.bytesLoaded +
                gotRows->chunked.run.transfers.bytesStored,
            gotRows->chunked.plannedBytes);
  EXPECT_NEAR(gotRows->loss, wantRows->loss, 1e-5 * std::fabs(wantRows->loss));
  for (size_t i = 0; i < wantRows->gradients.size(); ++i)
    expectClose(gotRows->gradients[i].second, wantRows->gradients[i].second,
                "d loss / d " + wantRows->gradients[i].first, 0.01, 1e-4);
  // The same streamed from a graph file, whose row lists give the rows:
  // the loads the CPU plans over the graph in memory, the same results.
  std::string path = std::string(SAGA_TEST_SCRATCH_DIR) + "/cuda-rows.sgf." +
                     std::to_string(getpid());
  ASSERT_EQ(errorText(writeGraphFile(path, sagatest::cora(false), 8)), "");
  auto sgf = GraphFile::open(path);
  ASSERT_TRUE(bool(sgf)) << errorText(sgf.takeError());
  ForwardOptions fromFile = rows;
  fromFile.intervals = int64_t((*sgf)->bounds().size()) - 1;
  auto wantFile = cpuWide->trainStep(fromFile, 3);
  ASSERT_TRUE(bool(wantFile)) << errorText(wantFile.takeError());
  auto skeleton = (*sgf)->readSkeleton(gpuWide->selfLoops());
  ASSERT_TRUE(bool(skeleton)) << errorText(skeleton.takeError());
  GraphFileChunks chunks(**sgf, gpuWide->selfLoops());
  ASSERT_EQ(errorText(gpuWide->setGraph(*skeleton)), "");
  gpuWide->setChunkSource(&chunks);
  setInputs(*gpuWide, cora, "cora", std::string(file) + "/cuda-selective");
  auto gotFile = gpuWide->trainStep(fromFile, 3);
  ASSERT_TRUE(bool(gotFile)) << errorText(gotFile.takeError());
  EXPECT_GT(gotFile->chunked.rowLoads, 0);
  EXPECT_EQ(gotFile->chunked.rowLoads, wantFile->chunked.rowLoads);
  EXPECT_EQ(gotFile->chunked.plannedBytes, wantFile->chunked.plannedBytes);
  EXPECT_NEAR(gotFile->loss, wantFile->loss, 1e-5 * std::fabs(wantFile->loss));
  for (size_t i = 0; i < wantFile->gradients.size(); ++i)
    expectClose(gotFile->gradients[i].second, wantFile->gradients[i].second,
                "d loss / d " + wantFile->gradients[i].first, 0.01, 1e-4);
  std::remove(path.c_str());
}

// A kernel whose scratch outgrows a block's shared memory (at -O0, the
// gradient of a rank-3 weight is an outer product per vertex: 51200 bytes a
// warp here, 733696 in examples/gatv2.saga) runs with its scratch in global
// memory (cuda::launchShape); before, its launch failed with
// CUDA_ERROR_INVALID_VALUE. test/codegen/cuda-global-scratch.test checks the
// CUDA printed for the same model.
TEST(CudaExecutorScratch, GlobalScratchMatchesTheCpu) {
  if (!useStandIn())
    GTEST_SKIP() << "the stand-in driver was not built (no cuda.h)";
  // The model of the lit test.
  const std::string path =
      SAGA_EXAMPLES_DIR "/../test/codegen/Inputs/wide-scratch.saga";
  CompileOptions co;
  co.training = true;
  co.optLevel = 0;
  co.threads = 2;
  auto cpu = Model::compileFile(path, co);
  auto gpu = Model::compileFile(path, co);
  ASSERT_TRUE(bool(cpu)) << errorText(cpu.takeError());
  ASSERT_TRUE(bool(gpu)) << errorText(gpu.takeError());
  ASSERT_EQ(errorText((*gpu)->useCuda()), "");
  const Graph &g = graphFor("hub", true);
  for (Model *m : {cpu->get(), gpu->get()})
    bindInputs(*m, g, "hub", "wide-scratch");
  auto want = (*cpu)->trainStep(ForwardOptions(), 3);
  auto got = (*gpu)->trainStep(ForwardOptions(), 3);
  ASSERT_TRUE(bool(want)) << errorText(want.takeError());
  ASSERT_TRUE(bool(got)) << errorText(got.takeError());
  EXPECT_NEAR(got->loss, want->loss, 1e-5 * std::fabs(want->loss));
  ASSERT_EQ(got->gradients.size(), 1u);
  expectClose(got->gradients[0].second, want->gradients[0].second,
              "d loss / d W");
}

namespace {
/// The five first examples (test/models/check_models.py runs the newer ones
/// on the stand-in driver), named by their files' stems.
auto firstFive() {
  return testing::Values("gcn.saga", "gat.saga", "graphsage.saga", "gin.saga",
                         "ggcn.saga");
}
std::string stem(const testing::TestParamInfo<const char *> &info) {
  std::string name = info.param;
  return name.substr(0, name.find('.'));
}
} // namespace

INSTANTIATE_TEST_SUITE_P(Examples, CudaExecutorChunked, firstFive(), stem);
INSTANTIATE_TEST_SUITE_P(Examples, CudaExecutor, firstFive(), stem);

// Edge values split by destination interval on the device: GAT-style
// attention whose scores read an edge input (TestGraphs.h's
// edgeAttention), at -O2 (the fused propagation reads the input's pieces)
// and -O0 (edge maps write the scores and messages as edge values). At
// P = 3 the kernels index the pieces by the chunks' edge numbers and key
// attention dropout by the graph's edge ids (saga.edge_keys, uploaded
// beside the chunk's CSR); forward and training step match the CPU's
// chunked run, which gives the in-memory bits (OutOfCoreTest).
TEST(CudaChunked, SplitEdgeValuesMatchTheCpu) {
  if (!useStandIn())
    GTEST_SKIP() << "the stand-in driver was not built (no cuda.h)";
  for (unsigned opt : {2u, 0u}) {
    SCOPED_TRACE("-O" + std::to_string(opt));
    std::unique_ptr<Model> cpu = compileAttention(8, 3, true, opt);
    std::unique_ptr<Model> gpu = compileAttention(8, 3, true, opt);
    ASSERT_TRUE(cpu && gpu);
    ASSERT_EQ(errorText(gpu->useCuda()), "");
    const Graph &g = graphFor("hub", cpu->selfLoops());
    for (Model *m : {cpu.get(), gpu.get()})
      bindInputs(*m, g, "hub", "attention/cuda-edge-values");
    ForwardOptions fo;
    fo.memoryBudget = unboundedPeak(*cpu);
    fo.intervals = 3;
    auto want = cpu->forward(fo);
    auto got = gpu->forward(fo);
    ASSERT_TRUE(bool(want)) << errorText(want.takeError());
    ASSERT_TRUE(bool(got)) << errorText(got.takeError());
    EXPECT_TRUE(got->chunked.edgesSplit);
    expectClose(got->prediction, want->prediction, "prediction");
    // Each kernel over edges sends every edge up once, whatever P (a
    // chunk's rows only, not its whole source interval's).
    ForwardOptions two = fo;
    two.intervals = 2;
    auto gotTwo = gpu->forward(two);
    ASSERT_TRUE(bool(gotTwo)) << errorText(gotTwo.takeError());
    EXPECT_GT(got->chunked.csrEdgesUploaded, 0);
    EXPECT_EQ(got->chunked.csrEdgesUploaded % g.numEdges, 0);
    EXPECT_EQ(got->chunked.csrEdgesUploaded, gotTwo->chunked.csrEdgesUploaded);
    EXPECT_GT(got->chunked.csrBytesUploaded, gotTwo->chunked.csrBytesUploaded)
        << "one more row interval's offsets per kernel";
    expectClose(gotTwo->prediction, want->prediction, "prediction at P = 2");
    auto wantStep = cpu->trainStep(fo, 3);
    auto gotStep = gpu->trainStep(fo, 3);
    ASSERT_TRUE(bool(wantStep)) << errorText(wantStep.takeError());
    ASSERT_TRUE(bool(gotStep)) << errorText(gotStep.takeError());
    EXPECT_TRUE(gotStep->chunked.edgesSplit);
    EXPECT_NEAR(gotStep->loss, wantStep->loss, 1e-5 * std::fabs(wantStep->loss));
    for (size_t i = 0; i < wantStep->gradients.size(); ++i)
      expectClose(gotStep->gradients[i].second, wantStep->gradients[i].second,
                  "d loss / d " + wantStep->gradients[i].first, 0.01, 1e-4);
  }
}

// A chunked run's loss keeps one interval's terms on the device, not every
// loss row's: a loss over every vertex of the hub graph holds 8 bytes per
// row of its largest interval for each loss op (the loss and its
// gradient's count), so P = 4 holds less than P = 2 by at least that
// much (every row's 16 bytes before, whatever P); the losses agree.
TEST(CudaChunked, LossKeepsOneIntervalsTerms) {
  if (!useStandIn())
    GTEST_SKIP() << "the stand-in driver was not built (no cuda.h)";
  std::unique_ptr<Model> gpu = compileExample("gcn.saga", 2);
  ASSERT_TRUE(gpu);
  ASSERT_EQ(errorText(gpu->useCuda()), "");
  const Graph &g = graphFor("hub", gpu->selfLoops());
  bindInputs(*gpu, g, "hub", "gcn/cuda-loss-terms");
  ForwardOptions fo;
  fo.memoryBudget = unboundedPeak(*gpu);
  ASSERT_TRUE(fo.lossMask.empty()); // every vertex a loss row
  auto largest = [&](int64_t parts) {
    std::vector<int32_t> b = chunkIntervals(g.numVertices, parts);
    int64_t most = 0;
    for (size_t k = 0; k + 1 < b.size(); ++k)
      most = std::max<int64_t>(most, b[k + 1] - b[k]);
    return most;
  };
  std::map<int64_t, TrainStepResult> steps;
  for (int64_t parts : {2, 4}) {
    fo.intervals = parts;
    auto step = gpu->trainStep(fo, 3);
    ASSERT_TRUE(bool(step)) << errorText(step.takeError());
    ASSERT_EQ(step->chunked.intervals, parts);
    EXPECT_GT(step->chunked.deviceOutsideBytes, 0);
    steps.emplace(parts, std::move(*step));
  }
  EXPECT_GE(steps[2].chunked.deviceOutsideBytes -
                steps[4].chunked.deviceOutsideBytes,
            2 * 8 * (largest(2) - largest(4)));
  EXPECT_NEAR(steps[4].loss, steps[2].loss, 1e-5 * std::fabs(steps[2].loss));
}

// A loss mask that repeats rows (a weighted loss: vertex 5 three times,
// vertex 0 twice, out of mask order) gives the CPU's loss and gradients on
// the device, in memory and out of core: the gradient kernel adds a
// repeated row's places atomically (on a GPU, plain adds from several
// threads into one row lost updates; the CPU groups them,
// CrossEntropyChunks.RepeatedRowsStayInOneTask).
TEST(CudaExecutorLoss, RepeatedMaskRowsMatchTheCpu) {
  if (!useStandIn())
    GTEST_SKIP() << "the stand-in driver was not built (no cuda.h)";
  std::unique_ptr<Model> cpu = compileExample("gcn.saga", 2);
  std::unique_ptr<Model> gpu = compileExample("gcn.saga", 2);
  ASSERT_TRUE(cpu && gpu);
  ASSERT_EQ(errorText(gpu->useCuda()), "");
  const Graph &g = graphFor("hub", cpu->selfLoops());
  for (Model *m : {cpu.get(), gpu.get()})
    bindInputs(*m, g, "hub", "gcn/cuda-repeated-rows");
  ForwardOptions fo;
  fo.lossMask = {5, 9, 5, 0, 3000, 5, 0, 17};
  auto want = cpu->trainStep(fo, 4);
  ASSERT_TRUE(bool(want)) << errorText(want.takeError());
  ForwardOptions once = fo;
  once.lossMask = {5, 9, 0, 3000, 17};
  auto unweighted = cpu->trainStep(once, 4);
  ASSERT_TRUE(bool(unweighted)) << errorText(unweighted.takeError());
  EXPECT_NE(want->loss, unweighted->loss); // the repeats count
  for (int64_t budget : {int64_t(0), unboundedPeak(*gpu)}) {
    fo.memoryBudget = budget;
    fo.intervals = budget ? 3 : 0;
    auto got = gpu->trainStep(fo, 4);
    ASSERT_TRUE(bool(got)) << errorText(got.takeError());
    EXPECT_NEAR(got->loss, want->loss, 1e-5 * std::fabs(want->loss));
    ASSERT_EQ(got->gradients.size(), want->gradients.size());
    for (size_t i = 0; i < want->gradients.size(); ++i)
      expectClose(got->gradients[i].second, want->gradients[i].second,
                  "d loss / d " + want->gradients[i].first +
                      (budget ? " under a budget" : ""));
  }
}

// The runtime's streamed sum (reducePart, then reduceFinish) over parts in
// order gives reduce's bits over the whole: doubles of mixed magnitudes
// whose sum depends on the order of its additions, floats, squares, parts
// of every size (empty, under and over the block's 256 threads).
TEST(CudaStandIn, StreamedReduceGivesTheWholeSumsBits) {
  if (!useStandIn())
    GTEST_SKIP() << "the stand-in driver was not built (no cuda.h)";
  auto dev = openDevice(1 << 20);
  ASSERT_TRUE(bool(dev)) << errorText(dev.takeError());
  auto module = (*dev)->load(runtimeKernelSource(), runtimeKernelNames());
  ASSERT_TRUE(bool(module)) << errorText(module.takeError());
  RuntimeOps ops(**dev, **module);
  const int64_t n = 1000;
  std::vector<double> xd(n);
  std::vector<float> xf(n);
  for (int64_t i = 0; i < n; ++i) {
    xd[size_t(i)] = std::ldexp(double((i * 7919) % 1000 + 1) / 7.0,
                               int((i * 31) % 60) - 30);
    xf[size_t(i)] = float(xd[size_t(i)]);
  }
  auto x = (*dev)->allocate(n * 8, "x");
  auto f = (*dev)->allocate(n * 4, "xf");
  auto out = (*dev)->allocate(16, "sums");
  auto state = (*dev)->allocate(kReduceThreads * 8, "state");
  ASSERT_TRUE(x && f && out && state);
  ASSERT_EQ(errorText((*dev)->upload(*x, xd.data(), n * 8)), "");
  ASSERT_EQ(errorText((*dev)->upload(*f, xf.data(), n * 4)), "");
  for (bool floats : {false, true})
    for (bool square : {false, true}) {
      SCOPED_TRACE(std::string(floats ? "floats" : "doubles") +
                   (square ? ", squared" : ""));
      CUdeviceptr xs = floats ? 0 : *x, fs = floats ? *f : 0;
      ASSERT_EQ(errorText(ops.reduce(fs, xs, n, square, *out)), "");
      ASSERT_EQ(errorText((*dev)->fill32(*state, 0, kReduceThreads * 2)), "");
      const int64_t cuts[] = {0, 37, 37, 293, 300, 811, n};
      for (size_t k = 0; k + 1 < std::size(cuts); ++k) {
        const int64_t b = cuts[k], m = cuts[k + 1] - cuts[k];
        ASSERT_EQ(errorText(ops.reducePart(fs ? fs + CUdeviceptr(b * 4) : 0,
                                           xs ? xs + CUdeviceptr(b * 8) : 0, m,
                                           b, square, *state)),
                  "");
      }
      ASSERT_EQ(errorText(ops.reduceFinish(*state, *out + 8)), "");
      double sums[2];
      ASSERT_EQ(errorText((*dev)->download(sums, *out, 16)), "");
      EXPECT_NE(sums[0], 0.0);
      EXPECT_EQ(std::memcmp(&sums[0], &sums[1], 8), 0)
          << sums[0] << " vs " << sums[1];
    }
}

// The device pool reports what it cannot fit, naming the buffer.
TEST(CudaStandIn, ThePoolSaysWhatDoesNotFit) {
  if (!useStandIn())
    GTEST_SKIP() << "the stand-in driver was not built (no cuda.h)";
  auto dev = openDevice(1 << 20);
  ASSERT_TRUE(bool(dev)) << errorText(dev.takeError());
  auto a = (*dev)->allocate(600 << 10, "the first buffer");
  ASSERT_TRUE(bool(a)) << errorText(a.takeError());
  auto b = (*dev)->allocate(600 << 10, "the second buffer");
  ASSERT_FALSE(bool(b));
  std::string text = errorText(b.takeError());
  EXPECT_NE(text.find("out of device memory"), std::string::npos) << text;
  EXPECT_NE(text.find("the second buffer needs 614400 bytes"), std::string::npos)
      << text;
  (*dev)->release(*a);
  auto c = (*dev)->allocate(900 << 10, "after a release");
  EXPECT_TRUE(bool(c)) << errorText(c.takeError());
  // Uploads and downloads through the staging buffers, larger than them.
  std::vector<float> up(200000), down(200000);
  for (size_t i = 0; i < up.size(); ++i)
    up[i] = float(i);
  ASSERT_EQ(errorText((*dev)->upload(*c, up.data(), 800000)), "");
  ASSERT_EQ(errorText((*dev)->download(down.data(), *c, 800000)), "");
  EXPECT_EQ(up, down);
}

// The driver behaviours the executor relies on, through the same dlopen'd
// entry points it uses. Last: it leaves the context failed, as a real
// kernel failure does.
TEST(CudaStandIn, BehavesAsTheDriverWhereTheExecutorRelies) {
  if (!useStandIn("forward"))
    GTEST_SKIP() << "the stand-in driver was not built (no cuda.h)";
  std::string why;
  const DriverApi *api = DriverApi::load(why);
  ASSERT_TRUE(api) << why;
  ASSERT_EQ(api->init(0), 0);
  CUcontext ctx;
  ASSERT_EQ(api->primaryRetain(&ctx, 0), 0);
  ASSERT_EQ(api->setCurrent(ctx), 0);
  CUstream a, b;
  ASSERT_EQ(api->streamCreate(&a, kStreamNonBlocking), 0);
  ASSERT_EQ(api->streamCreate(&b, kStreamNonBlocking), 0);

  // A pageable copy takes its source when queued.
  CUdeviceptr d;
  ASSERT_EQ(api->memAlloc(&d, 4096), 0);
  std::vector<int> host(1024, 1), back(1024, 0);
  ASSERT_EQ(api->copyToDevice(d, host.data(), 4096, a), 0);
  std::fill(host.begin(), host.end(), 2);
  ASSERT_EQ(api->copyToHost(back.data(), d, 4096, a), 0);
  ASSERT_EQ(api->streamSync(a), 0);
  EXPECT_EQ(back[0], 1);
  EXPECT_EQ(back[1023], 1);

  // Copies outside an allocation, and allocations beyond the capacity, fail.
  EXPECT_NE(api->copyToDevice(d + 4000, host.data(), 200, a), 0);
  size_t freeBytes = 0, total = 0;
  ASSERT_EQ(api->memInfo(&freeBytes, &total), 0);
  EXPECT_LE(freeBytes, total - 4096);
  CUdeviceptr big;
  EXPECT_EQ(api->memAlloc(&big, freeBytes + 1), kErrorOutOfMemory);

  // An event orders stream b after stream a's work.
  CUevent e;
  ASSERT_EQ(api->eventCreate(&e, 0), 0);
  ASSERT_EQ(api->set32(d, 7, 1024, a), 0);
  ASSERT_EQ(api->eventRecord(e, a), 0);
  ASSERT_EQ(api->streamWait(b, e, 0), 0);
  ASSERT_EQ(api->copyToHost(back.data(), d, 4096, b), 0);
  ASSERT_EQ(api->streamSync(b), 0);
  EXPECT_EQ(back[512], 7);
  float ms = -1;
  ASSERT_EQ(api->eventElapsed(&ms, e, e), 0);
  EXPECT_EQ(ms, 0.0f);

  // A launch captures its arguments when called; a kernel that fails (here
  // a barrier half the block never reaches) poisons the context.
  std::string source = std::string(kImageMagic) +
                       "extern \"C\" __global__ void put(int *p, int v) {\n"
                       "  p[threadIdx.x] = v;\n}\n"
                       "extern \"C\" __global__ void divergent(int *p) {\n"
                       "  if (threadIdx.x < 16) return;\n"
                       "  __syncthreads();\n}\n";
  CUmodule module;
  ASSERT_EQ(api->moduleLoad(&module, source.c_str()), 0);
  CUfunction put, divergent;
  ASSERT_EQ(api->moduleFunction(&put, module, "put"), 0);
  ASSERT_EQ(api->moduleFunction(&divergent, module, "divergent"), 0);
  int value = 41;
  void *params[] = {&d, &value};
  ASSERT_EQ(api->launch(put, 1, 1, 1, 32, 1, 1, 0, a, params, nullptr), 0);
  value = 99; // too late to change the launch
  ASSERT_EQ(api->copyToHost(back.data(), d, 128, a), 0);
  ASSERT_EQ(api->streamSync(a), 0);
  EXPECT_EQ(back[31], 41);
  CUmodule bad = nullptr;
  EXPECT_NE(api->moduleLoad(&bad, "not an image"), 0);
  void *dparams[] = {&d};
  ASSERT_EQ(api->launch(divergent, 1, 1, 1, 32, 1, 1, 0, a, dparams, nullptr), 0);
  EXPECT_NE(api->streamSync(a), 0);
  EXPECT_NE(api->streamSync(b), 0) << "a failed kernel poisons the context";
  api->moduleUnload(module); // freed (its result after a failure is moot)
}
