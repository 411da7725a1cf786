//===- OutOfCoreTest.cpp - plans run under a memory budget ----------------===//
//
// Every example model's forward pass and training step, run by the chunked
// executor under device budgets that force 2 to 16 row intervals (next tier
// in host RAM and in a spill file), give the in-memory executor's results
// bit for bit: kernels see the same rows, and every sum over rows (block
// sums, weight-gradient slices, the loss) is formed in the same order,
// because interval bounds are slice bounds (and chains of row-local ops
// run interval by interval, or op-major, each op's intervals in order).
// Errors: a budget below one chunk's minimum says what that minimum is.
//
//===----------------------------------------------------------------------===//

#include "api/Model.h"
#include "analysis/PlanMemory.h"
#include "runtime/graph/GraphFile.h"
#include "runtime/graph/Loaders.h"

#include "TestGraphs.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <tuple>

#include <unistd.h>

using namespace saga;
using namespace sagatest;

namespace {

/// The unbounded run's resident bytes at its peak, as the budget counts
/// them: every planned tensor kept (inputs, parameters, plan buffers).
int64_t unboundedPeak(Model &m, bool training) {
  auto pm = m.memoryProblem(training, 1 << 20);
  EXPECT_TRUE(bool(pm));
  MemoryProblem &p = pm->problem;
  p.budget = int64_t(1) << 50;
  return planExact(p).peakBytes + pm->pinnedBytes;
}

/// A training step under `budget` with P left to the planner: more than
/// one interval, the device pool within the budget, `ref`'s bits.
void expectStepUnderBudget(Model &m, ForwardOptions bo, int64_t budget,
                           const TrainStepResult &ref) {
  bo.memoryBudget = budget;
  auto step = m.trainStep(bo, 5);
  ASSERT_TRUE(bool(step)) << llvm::toString(step.takeError());
  EXPECT_GT(step->chunked.intervals, 1);
  EXPECT_LE(step->chunked.run.poolPeak, bo.memoryBudget);
  expectSameStep(*step, ref);
}

} // namespace

class OutOfCore
    : public testing::TestWithParam<ExampleParam> {};

TEST_P(OutOfCore, SameBitsUnderABudget) {
  auto [file, opt] = GetParam();
  std::unique_ptr<Model> model = compileExample(file, opt);
  ASSERT_TRUE(model);
  Model &m = *model;
  // -O0 plans (unfused: edge maps and edge tensors) are slow to run; they
  // get the hub graph, one interval count and the spill file.
  const bool full = opt == 2;
  std::vector<const char *> graphs{"hub"};
  if (full)
    graphs = {"cora", "hub", "islands"};
  for (const char *graphName : graphs) {
    SCOPED_TRACE(graphName);
    const Graph &g = graphFor(graphName, m.selfLoops());
    bindInputs(m, g, graphName, std::string(file) + graphName);
    ForwardOptions fo;
    fo.lossMask = cora().train;
    if (std::string(graphName) != "cora")
      fo.lossMask.clear();
    auto refFwd = m.forward(fo);
    ASSERT_TRUE(bool(refFwd)) << llvm::toString(refFwd.takeError());
    auto refStep = m.trainStep(fo, 5);
    ASSERT_TRUE(bool(refStep)) << llvm::toString(refStep.takeError());
    int64_t peak = unboundedPeak(m, true);
    int maxParts = (g.numVertices + 255) / 256;
    std::vector<int64_t> partsList{3};
    std::vector<bool> spills{true};
    if (full) {
      partsList = {2, 5, maxParts};
      spills = {false, true};
    }
    for (int64_t parts : partsList) {
      for (bool spill : spills) {
        SCOPED_TRACE(std::to_string(parts) + (spill ? " spill" : " ram"));
        ForwardOptions bo = fo;
        bo.intervals = parts;
        bo.memoryBudget = peak; // enough at any P; the planner keeps less
        if (spill)
          bo.scratch = SAGA_TEST_SCRATCH_DIR;
        auto fwd = m.forward(bo);
        ASSERT_TRUE(bool(fwd)) << llvm::toString(fwd.takeError());
        EXPECT_EQ(fwd->chunked.intervals, parts);
        // The islands' chunks are mostly empty: their sources are never
        // loaded, and propagations skip them between the first and last.
        if (std::string(graphName) == "islands" && parts >= 5) {
          EXPECT_GT(fwd->chunked.emptyChunks, parts * parts / 3);
        }
        EXPECT_TRUE(sameBits(fwd->prediction, refFwd->prediction));
        EXPECT_EQ(fwd->loss, refFwd->loss);
        auto step = m.trainStep(bo, 5);
        ASSERT_TRUE(bool(step)) << llvm::toString(step.takeError());
        expectSameStep(*step, *refStep);
        EXPECT_EQ(step->chunked.run.transfers.bytesLoaded +
                      step->chunked.run.transfers.bytesStored,
                  step->chunked.plannedBytes);
      }
    }
    // Chunks in groups of destination intervals (2, and 3 that does not
    // divide P = 5): each row's chunks still run in source order.
    for (int64_t group : {2, 3}) {
      SCOPED_TRACE("group " + std::to_string(group));
      ForwardOptions bo = fo;
      bo.intervals = 5;
      bo.chunkGroup = group;
      bo.memoryBudget = peak;
      auto step = m.trainStep(bo, 5);
      ASSERT_TRUE(bool(step)) << llvm::toString(step.takeError());
      expectSameStep(*step, *refStep);
    }
    // The budget picks P: a quarter of the unbounded peak on the hub graph.
    if (std::string(graphName) == "hub") {
      expectStepUnderBudget(m, fo, peak / 4, *refStep);
      ForwardOptions bo = fo;
      bo.memoryBudget = peak / 4;
      // Op-major (each op over every interval before the next, no
      // row-local chains interleaved): the same bits.
      bo.interleaveRows = false;
      auto opMajor = m.trainStep(bo, 5);
      ASSERT_TRUE(bool(opMajor)) << llvm::toString(opMajor.takeError());
      EXPECT_LE(opMajor->chunked.run.poolPeak, bo.memoryBudget);
      expectSameStep(*opMajor, *refStep);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, OutOfCore, exampleModels(), exampleName);

// The loss under a budget is the in-memory executor's sum bit for bit for
// a loss mask in any order: ascending masks keep only running sums per
// chunk of 8192 loss rows (the chunked executor's fast path), others
// every term until the last interval.
TEST(OutOfCoreLoss, AnyMaskOrderGivesTheInMemorySum) {
  std::unique_ptr<Model> model = compileExample("gcn.saga", 2);
  ASSERT_TRUE(model);
  Model &m = *model;
  const Graph &g = graphFor("cora", m.selfLoops());
  bindInputs(m, g, "cora", "gcn.saga-loss-order");
  // Each row four times (a weighted loss): 10832 loss rows, so the sums'
  // chunks of 8192 straddle intervals.
  std::vector<int32_t> ascending;
  for (int32_t v = 0; v < g.numVertices; ++v)
    ascending.insert(ascending.end(), 4, v);
  std::vector<int32_t> descending(ascending.rbegin(), ascending.rend());
  std::vector<int32_t> mixed = ascending;
  for (size_t k = 0; k + 7 < mixed.size(); k += 7)
    std::swap(mixed[k], mixed[k + 7]);
  for (const auto &mask : {ascending, descending, mixed}) {
    ForwardOptions fo;
    fo.lossMask = mask;
    auto refStep = m.trainStep(fo, 5);
    ASSERT_TRUE(bool(refStep)) << llvm::toString(refStep.takeError());
    ForwardOptions bo = fo;
    bo.memoryBudget = unboundedPeak(m, true) / 4;
    auto step = m.trainStep(bo, 5);
    ASSERT_TRUE(bool(step)) << llvm::toString(step.takeError());
    EXPECT_GT(step->chunked.intervals, 2);
    expectSameStep(*step, *refStep);
  }
}

// NGra's selective loading: under a tight budget with the next tier in host
// RAM, chunks that read few rows of their source interval load only those
// (into their places in the piece's buffer). Same bits as in memory, bytes
// moved as planned and fewer than the whole pieces; off, or with spills in
// files (whose slots are checked whole), every piece loads whole, with the
// same bits. G-GCN loads rows for its backward propagations (over
// out-edges: rows of their targets' intervals) too, at least at 6 MiB
// (`sagac train --print-schedule` shows them).
TEST(OutOfCoreSelective, LoadsOnlyTheRowsAChunkReads) {
  int64_t rowLoads = 0;
  for (const char *file : {"gcn.saga", "gat.saga", "ggcn.saga"}) {
    // Propagations over the input's width (no linear moved before them):
    // source pieces worth loading in part.
    std::unique_ptr<Model> model =
        compileExample(file, 2, {"reorder-linear"});
    ASSERT_TRUE(model);
    Model &m = *model;
    const bool ggcn = std::string(file) == "ggcn.saga";
    for (const char *graphName : {"cora", "hub"}) {
      if (ggcn && std::string(graphName) == "hub")
        continue; // (Cora's chunks are enough, and G-GCN is slow to run)
      SCOPED_TRACE(std::string(file) + " " + graphName);
      const Graph &g = graphFor(graphName, m.selfLoops());
      bindInputs(m, g, graphName, std::string(file) + graphName + "-sel");
      ForwardOptions fo;
      if (std::string(graphName) == "cora")
        fo.lossMask = cora().train;
      auto ref = m.trainStep(fo, 5);
      ASSERT_TRUE(bool(ref)) << llvm::toString(ref.takeError());
      const int64_t peak = unboundedPeak(m, true);
      for (int64_t divisor : {3, 6}) {
        SCOPED_TRACE("budget peak / " + std::to_string(divisor));
        ForwardOptions bo = fo;
        bo.memoryBudget = peak / divisor;
        auto step = m.trainStep(bo, 5);
        ASSERT_TRUE(bool(step)) << llvm::toString(step.takeError());
        expectSameStep(*step, *ref);
        const ChunkedStats &c = step->chunked;
        EXPECT_EQ(c.run.transfers.bytesLoaded + c.run.transfers.bytesStored,
                  c.plannedBytes);
        EXPECT_LE(c.rowLoadBytes, c.rowLoadWholeBytes);
        if (c.rowLoads > 0) {
          EXPECT_LT(c.rowLoadBytes, c.rowLoadWholeBytes);
        }
        rowLoads += c.rowLoads;
        if (ggcn) {
          EXPECT_GT(c.rowLoads, 0);
        }
        for (bool spill : {false, true}) {
          SCOPED_TRACE(spill ? "spill file" : "selective loading off");
          ForwardOptions whole = bo;
          if (spill)
            whole.scratch = SAGA_TEST_SCRATCH_DIR;
          else
            whole.selectiveLoading = false;
          auto w = m.trainStep(whole, 5);
          ASSERT_TRUE(bool(w)) << llvm::toString(w.takeError());
          expectSameStep(*w, *ref);
          EXPECT_EQ(w->chunked.rowLoads, 0);
          // Whole pieces never move much less: the chunk group may be
          // one within 1 % of the fewest bytes (and the fallback plans
          // are heuristics).
          if (!spill) {
            EXPECT_GE(w->chunked.plannedBytes * 101, c.plannedBytes * 100);
          }
        }
      }
    }
  }
  EXPECT_GT(rowLoads, 0);
}

// Selective loading from a graph file: the file lists the rows of its
// chunks with few, so a run streamed from it plans the partial loads a run
// over the graph in memory plans (the same counts, the same bytes), reads
// each list from the file when its load comes, and gives the same bits.
// A corrupt list stops the run with the file's name.
TEST(OutOfCoreFromFile, SelectiveLoadingReadsTheFilesRowLists) {
  std::string path = std::string(SAGA_TEST_SCRATCH_DIR) + "/rows.sgf." +
                     std::to_string(getpid());
  ASSERT_EQ(errorText(writeGraphFile(path, cora(false), 8)), "");
  auto file = GraphFile::open(path);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  const int64_t parts = int64_t((*file)->bounds().size()) - 1;
  // Propagations over the input's width: pieces worth loading in part.
  std::unique_ptr<Model> ref = compileExample("gcn.saga", 2, {"reorder-linear"}),
                         streamed =
                             compileExample("gcn.saga", 2, {"reorder-linear"});
  ASSERT_TRUE(ref && streamed);
  Model &a = *ref, &b = *streamed;
  const Graph &g = graphFor("cora", a.selfLoops());
  bindInputs(a, g, "cora", "file-rows");
  ForwardOptions fo;
  fo.lossMask = cora().train;
  auto want = a.trainStep(fo, 5);
  ASSERT_TRUE(bool(want)) << llvm::toString(want.takeError());
  ForwardOptions bo = fo;
  bo.memoryBudget = unboundedPeak(a, true) / 3;
  bo.intervals = parts;
  auto inMemory = a.trainStep(bo, 5);
  ASSERT_TRUE(bool(inMemory)) << llvm::toString(inMemory.takeError());
  ASSERT_GT(inMemory->chunked.rowLoads, 0);

  auto skeleton = (*file)->readSkeleton(b.selfLoops());
  ASSERT_TRUE(bool(skeleton)) << llvm::toString(skeleton.takeError());
  GraphFileChunks chunks(**file, b.selfLoops());
  ASSERT_EQ(errorText(b.setGraph(*skeleton)), "");
  b.setChunkSource(&chunks);
  setInputs(b, g, "cora", "file-rows"); // a's inputs and parameters
  auto got = b.trainStep(bo, 5);
  ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
  expectSameStep(*got, *want);
  EXPECT_EQ(got->chunked.rowLoads, inMemory->chunked.rowLoads);
  EXPECT_EQ(got->chunked.rowLoadBytes, inMemory->chunked.rowLoadBytes);
  EXPECT_EQ(got->chunked.plannedBytes, inMemory->chunked.plannedBytes);

  // The row lists' section damaged: the first list read is refused.
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  uint64_t offset = 0, size = 0; // chunk-rows: the 17th section
  std::memcpy(&offset, bytes.data() + 96 + 16 * 32 + 8, 8);
  std::memcpy(&size, bytes.data() + 96 + 16 * 32 + 16, 8);
  ASSERT_GT(size, 0u);
  for (uint64_t k = 0; k < size; ++k)
    bytes[offset + k] ^= 0x5a;
  std::string bad = path + ".bad";
  std::ofstream(bad, std::ios::binary | std::ios::trunc) << bytes;
  auto badFile = GraphFile::open(bad);
  ASSERT_TRUE(bool(badFile)) << llvm::toString(badFile.takeError());
  GraphFileChunks badChunks(**badFile, b.selfLoops());
  b.setChunkSource(&badChunks);
  auto refused = b.trainStep(bo, 5);
  ASSERT_FALSE(bool(refused));
  std::string err = errorText(refused.takeError());
  EXPECT_NE(err.find(bad + ": the "), std::string::npos) << err;
  EXPECT_NE(err.find("checksum mismatch: the list is corrupt"),
            std::string::npos)
      << err;
  std::remove(bad.c_str());
  std::remove(path.c_str());
}

// A chunk source whose row lists disagree with the counts it gave the
// planner: the run refuses the load, naming the step and the counts, and
// does not compute with rows missing.
TEST(OutOfCoreSelective, RowsThatAreNotTheCountsAreRefused) {
  struct Inconsistent : EdgeChunkCache {
    using EdgeChunkCache::EdgeChunkCache;
    llvm::Expected<std::shared_ptr<const std::vector<int32_t>>>
    chunkRows(bool reversed, const std::vector<int32_t> &bounds, int64_t i,
              int64_t j) override {
      auto rows = EdgeChunkCache::chunkRows(reversed, bounds, i, j);
      if (!rows || !*rows || (*rows)->empty())
        return rows;
      auto fewer = std::make_shared<std::vector<int32_t>>(**rows);
      fewer->pop_back();
      return std::shared_ptr<const std::vector<int32_t>>(std::move(fewer));
    }
  };
  std::unique_ptr<Model> model = compileExample("gcn.saga", 2, {"reorder-linear"});
  ASSERT_TRUE(model);
  const Graph &g = graphFor("cora", model->selfLoops());
  bindInputs(*model, g, "cora", "inconsistent-rows");
  Inconsistent source(g);
  model->setChunkSource(&source);
  ForwardOptions bo;
  bo.lossMask = cora().train;
  bo.memoryBudget = unboundedPeak(*model, true) / 3;
  auto step = model->trainStep(bo, 5);
  ASSERT_FALSE(bool(step));
  std::string err = errorText(step.takeError());
  EXPECT_NE(err.find("the schedule loads "), std::string::npos) << err;
  EXPECT_NE(err.find("the graph's chunk reads "), std::string::npos) << err;
  EXPECT_NE(err.find("the schedule was made for another graph"),
            std::string::npos)
      << err;
}

TEST(OutOfCoreErrors, BudgetBelowTheMinimumSaysWhatItNeeds) {
  auto model = Model::compileFile(SAGA_EXAMPLES_DIR "/gcn.saga");
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  const Graph &g = graphFor("cora", (*model)->selfLoops());
  bindInputs(**model, g, "cora", "budget");
  ForwardOptions fo;
  fo.memoryBudget = 1000;
  auto r = (*model)->forward(fo);
  ASSERT_FALSE(bool(r));
  std::string err = llvm::toString(r.takeError());
  EXPECT_EQ(err.rfind("memory budget of 1000 bytes is below the minimum for "
                      "one chunk: ",
                      0),
            0u)
      << err;
  EXPECT_NE(err.find("(11 intervals: step "), std::string::npos) << err;
}

TEST(OutOfCoreErrors, UnwritableScratchIsAnError) {
  auto model = Model::compileFile(SAGA_EXAMPLES_DIR "/gcn.saga");
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  const Graph &g = graphFor("cora", (*model)->selfLoops());
  bindInputs(**model, g, "cora", "scratch");
  ForwardOptions fo;
  fo.memoryBudget = int64_t(1) << 30;
  fo.scratch = "/nonexistent-scratch";
  auto r = (*model)->forward(fo);
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(llvm::toString(r.takeError())
                .rfind("scratch folder /nonexistent-scratch: cannot create the "
                       "spill file",
                       0),
            0u);
}

// Edge values split by destination interval (PlanMemory::chunkEdges): an
// edge input read by GAT-style attention scores, with attention dropout
// (masks keyed by the graph's edge ids, not the chunk-order numbers the
// split values are indexed by). At -O0 the scores are edge values made by
// an edge map; at -O2 the fused propagation reads the edge input itself.
// Under budgets forcing 2 to 5 intervals (next tier in RAM and a spill
// file), and at a budget a fifth of the unbounded peak, the forward pass
// and the training step give the in-memory bits (ChunkPlanTest checks the
// pieces and the smaller minimum budget).
TEST(OutOfCoreEdgeValues, SplitByDestinationIntervalGiveTheSameBits) {
  for (unsigned opt : {0u, 2u}) {
    SCOPED_TRACE("-O" + std::to_string(opt));
    std::unique_ptr<Model> compiled = compileAttention(8, 3, true, opt);
    ASSERT_TRUE(compiled);
    Model &m = *compiled;
    const Graph &g = graphFor("hub", m.selfLoops());
    bindInputs(m, g, "hub", "edge-attention");
    ForwardOptions fo;
    auto refFwd = m.forward(fo);
    ASSERT_TRUE(bool(refFwd)) << llvm::toString(refFwd.takeError());
    auto refStep = m.trainStep(fo, 5);
    ASSERT_TRUE(bool(refStep)) << llvm::toString(refStep.takeError());
    const int64_t peak = unboundedPeak(m, true);
    for (int64_t parts : {2, 3, 5}) {
      for (bool spill : {false, true}) {
        SCOPED_TRACE(std::to_string(parts) + (spill ? " spill" : " ram"));
        ForwardOptions bo = fo;
        bo.intervals = parts;
        bo.memoryBudget = peak;
        if (spill)
          bo.scratch = SAGA_TEST_SCRATCH_DIR;
        auto fwd = m.forward(bo);
        ASSERT_TRUE(bool(fwd)) << llvm::toString(fwd.takeError());
        EXPECT_TRUE(fwd->chunked.edgesSplit);
        EXPECT_TRUE(sameBits(fwd->prediction, refFwd->prediction));
        auto step = m.trainStep(bo, 5);
        ASSERT_TRUE(bool(step)) << llvm::toString(step.takeError());
        EXPECT_TRUE(step->chunked.edgesSplit);
        expectSameStep(*step, *refStep);
        EXPECT_EQ(step->chunked.run.transfers.bytesLoaded +
                      step->chunked.run.transfers.bytesStored,
                  step->chunked.plannedBytes);
      }
    }
    // The budget picks P: a fifth of the unbounded peak.
    expectStepUnderBudget(m, fo, peak / 5, *refStep);
    // Left to its default (as sagac leaves it: datasets have no edge
    // values), the edge input is filled piece by piece under a budget and
    // never made whole: the same bits as the in-memory run, which fills a
    // whole [E, 2] tensor.
    ASSERT_TRUE(bool(m.takeInput("w")));
    auto refDefault = m.trainStep(fo, 5);
    ASSERT_TRUE(bool(refDefault)) << llvm::toString(refDefault.takeError());
    ASSERT_TRUE(bool(m.takeInput("w"))); // the in-memory run's filled tensor
    ForwardOptions bo = fo;
    bo.memoryBudget = peak;
    bo.intervals = 3;
    auto step = m.trainStep(bo, 5);
    ASSERT_TRUE(bool(step)) << llvm::toString(step.takeError());
    EXPECT_TRUE(step->chunked.edgesSplit);
    expectSameStep(*step, *refDefault);
    auto never = m.takeInput("w");
    EXPECT_FALSE(bool(never));
    llvm::consumeError(never.takeError());
  }
}

// Without self loops an interval may have no in-edges: a piece of an edge
// input then holds no rows (nothing to place), and the run still gives
// the in-memory bits. Vertices 0..511 of 1024 only send edges.
TEST(OutOfCoreEdgeValues, AnIntervalWithoutInEdges) {
  Rng rng(77);
  EdgeList edges;
  edges.numVertices = 1024;
  for (int k = 0; k < 6000; ++k) {
    edges.src.push_back(int32_t(rng.below(1024)));
    edges.dst.push_back(512 + int32_t(rng.below(512)));
  }
  const Graph g = Graph::build(1024, edges.src, edges.dst, false);
  std::unique_ptr<Model> m = compileAttention(8, 3, true, 2, false);
  ASSERT_TRUE(m);
  bindInputs(*m, g, "sources", "no-in-edges");
  ForwardOptions fo;
  auto ref = m->trainStep(fo, 5);
  ASSERT_TRUE(bool(ref)) << llvm::toString(ref.takeError());
  ForwardOptions bo = fo;
  bo.memoryBudget = unboundedPeak(*m, true);
  bo.intervals = 4;
  auto step = m->trainStep(bo, 5);
  ASSERT_TRUE(bool(step)) << llvm::toString(step.takeError());
  EXPECT_TRUE(step->chunked.edgesSplit);
  expectSameStep(*step, *ref);
}

// Streamed from a graph file: a training step whose chunks come from the
// file in parts of a few dozen records (so rows' edges continue from part
// to part, and the self loops are placed among them) and whose features
// are read by interval gives the in-memory step's bits.
TEST(OutOfCoreFromFile, ChunksInPartsGiveTheSameBits) {
  std::string path = std::string(SAGA_TEST_SCRATCH_DIR) + "/parts.sgf." +
                     std::to_string(getpid());
  ASSERT_EQ(errorText(writeGraphFile(path, cora(false), 4)), "");
  auto file = GraphFile::open(path);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  // Attention at -O0 keeps its scores and messages as edge values, split
  // by destination interval: the file's parts number their edges in chunk
  // order from both ends (reversed parts too), attention dropout keyed by
  // the file's edge ids.
  for (const char *example :
       {"gcn.saga", "gat.saga", "graphsage.saga", "attention -O0"}) {
    SCOPED_TRACE(example);
    const bool attention = std::string(example) == "attention -O0";
    auto compile = [&] {
      return attention ? compileAttention(1433, 7, false, 0)
                       : compileExample(example);
    };
    std::unique_ptr<Model> ref = compile(), streamed = compile();
    ASSERT_TRUE(ref && streamed);
    Model &a = *ref, &b = *streamed;
    const Graph &g = graphFor("cora", a.selfLoops());
    bindInputs(a, g, "cora", example);
    ForwardOptions fo;
    fo.lossMask = cora().train;
    auto want = a.trainStep(fo, 5);
    ASSERT_TRUE(bool(want)) << llvm::toString(want.takeError());

    auto skeleton = (*file)->readSkeleton(b.selfLoops());
    ASSERT_TRUE(bool(skeleton)) << llvm::toString(skeleton.takeError());
    GraphFileChunks chunks(**file, b.selfLoops(), /*partEdges=*/50);
    ASSERT_EQ(errorText(b.setGraph(*skeleton)), "");
    b.setChunkSource(&chunks);
    for (const ValueInfo &in : b.inputs()) {
      if (in.dtype == DType::I32) {
        Tensor labels({int64_t(g.numVertices)}, DType::I32);
        std::copy(cora().labels.begin(), cora().labels.end(), labels.i32());
        ASSERT_EQ(errorText(b.setInput(in.name, std::move(labels))), "");
      } else {
        GraphFile *f = file->get();
        ASSERT_EQ(errorText(b.setInputRows(
                      in.name, [f](int64_t lo, int64_t hi, float *to) {
                        return f->readFeatureRange(lo, hi, to, true);
                      })),
                  "");
      }
    }
    b.initParams(hashString(example));
    // In memory, a streamed graph is refused with a reason.
    auto refused = b.trainStep(fo, 5);
    ASSERT_FALSE(bool(refused));
    EXPECT_NE(errorText(refused.takeError()).find("needs a memory budget"),
              std::string::npos);
    // Chunks read ahead on their own thread, or on the kernels' thread.
    for (bool readAhead : {true, false}) {
      SCOPED_TRACE(readAhead ? "read ahead" : "read in place");
      ForwardOptions bo = fo;
      bo.memoryBudget = int64_t(1) << 30;
      bo.intervals = 4;
      bo.chunkReadAhead = readAhead;
      // Progress after every step of the schedule, in order.
      int64_t calls = 0, total = -1;
      bo.chunkProgress = [&](int64_t done, int64_t steps) {
        EXPECT_EQ(done, ++calls);
        EXPECT_TRUE(total < 0 || steps == total);
        total = steps;
      };
      auto got = b.trainStep(bo, 5);
      ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
      EXPECT_GT(calls, 4 * 4); // at least one step per chunk
      EXPECT_EQ(calls, total);
      EXPECT_EQ(got->chunked.intervals, 4);
      EXPECT_EQ(got->chunked.chunkParts > 0, readAhead);
      EXPECT_EQ(got->chunked.chunkDirectReads, 0); // the order foreseen
      EXPECT_EQ(got->chunked.edgesSplit, attention);
      expectSameStep(*got, *want);
    }
  }
  std::remove(path.c_str());
}
