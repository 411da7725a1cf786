//===- SourceIntervalsTest.cpp - propagations over 2-D edge chunks --------===//
//
// A propagation run over P source intervals (EdgeChunks) resumes each row's
// running reduction chunk after chunk; the chunks visit every row's edges in
// the unchunked order, so every example model's forward pass and training
// step give the same bits for any P, at -O0 and -O2, on Cora and on a
// random graph with a hub and isolated vertices.
//
//===----------------------------------------------------------------------===//

#include "api/Model.h"
#include "analysis/PlanMemory.h"
#include "runtime/graph/EdgeChunks.h"
#include "runtime/graph/Loaders.h"
#include "support/MemoryPlanner.h"

#include "TestGraphs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>

using namespace saga;
using namespace sagatest;


TEST(EdgeChunks, SplitKeepsEveryEdgeInOrder) {
  const Graph &g = graphFor("hub", true);
  for (bool reversed : {false, true}) {
    const auto &offsets = reversed ? g.outOffsets : g.inOffsets;
    const auto &others = reversed ? g.outTargets : g.inSources;
    const auto &ids = reversed ? g.outEdgeIds : g.inEdgeIds;
    for (int64_t parts : {1, 2, 3, 7, 16}) {
      EdgeChunks c = EdgeChunks::build(
          offsets, others, ids, EdgeChunks::equalIntervals(g.numVertices, parts));
      ASSERT_EQ(c.numChunks(), size_t(parts));
      int64_t total = 0;
      for (int32_t v = 0; v < g.numVertices; ++v) {
        std::vector<std::pair<int32_t, int32_t>> row;
        for (size_t i = 0; i < c.numChunks(); ++i) {
          const auto &ch = c.chunks[i];
          for (int64_t p = ch.offsets[size_t(v)]; p < ch.offsets[size_t(v) + 1];
               ++p) {
            int32_t u = ch.others[size_t(p)];
            EXPECT_GE(u, c.bounds[i]);
            EXPECT_LT(u, c.bounds[i + 1]);
            row.push_back({u, ch.edgeIds[size_t(p)]});
          }
        }
        std::vector<std::pair<int32_t, int32_t>> whole;
        for (int64_t p = offsets[size_t(v)]; p < offsets[size_t(v) + 1]; ++p)
          whole.push_back({others[size_t(p)], ids[size_t(p)]});
        ASSERT_EQ(row, whole) << "row " << v << ", " << parts << " chunks";
        total += int64_t(row.size());
      }
      EXPECT_EQ(total, g.numEdges);
    }
  }
}

// Chunk order (PlanMemory::chunkEdges): numbering each chunk's edges from
// its in-edge view and from its out-edge view gives every edge the same
// number, the edges into interval j take [first_j, first_{j+1}) once each,
// and chunk (i, j)'s edges run from its base in the in-edge CSR's order.
TEST(EdgeChunks, ChunkOrderIsTheSameFromBothEnds) {
  for (const char *name : {"hub", "islands"}) {
    const Graph &g = graphFor(name, true);
    EdgeChunkCache cache(g);
    for (int64_t parts : {2, 3, 7}) {
      SCOPED_TRACE(std::string(name) + ", " + std::to_string(parts) + " intervals");
      std::vector<int32_t> bounds = EdgeChunks::equalIntervals(g.numVertices, parts);
      std::vector<int64_t> counts = cache.chunkEdgeCounts(bounds);
      ASSERT_EQ(counts.size(), size_t(parts * parts));
      // Chunk bases: by destination interval, then source interval.
      std::vector<int64_t> base(counts.size()), first(size_t(parts) + 1);
      int64_t next = 0;
      for (int64_t j = 0; j < parts; ++j) {
        first[size_t(j)] = next;
        for (int64_t i = 0; i < parts; ++i) {
          base[size_t(i * parts + j)] = next;
          next += counts[size_t(i * parts + j)];
        }
      }
      first[size_t(parts)] = next;
      ASSERT_EQ(next, g.numEdges);
      std::vector<int64_t> byId[2];
      for (bool reversed : {false, true}) {
        std::vector<int64_t> &numberOf = byId[reversed];
        numberOf.assign(size_t(g.numEdges), -1);
        for (int64_t i = 0; i < parts; ++i)
          for (int64_t j = 0; j < parts; ++j) {
            const int64_t inChunk = reversed ? j * parts + i : i * parts + j;
            llvm::Error e = cache.forEachPart(
                reversed, bounds, i, j, [&](const ChunkView &view, bool) {
                  std::vector<int32_t> numbers(size_t(view.numEdges) + 1, -1);
                  numberInChunkOrder(view, reversed, bounds[size_t(j)],
                                     bounds[size_t(j) + 1], bounds[size_t(i)],
                                     bounds[size_t(i) + 1],
                                     base[size_t(inChunk)], numbers.data());
                  for (int64_t p = view.offsets[bounds[size_t(j)]];
                       p < view.offsets[bounds[size_t(j) + 1]]; ++p) {
                    int32_t id = view.edgeIds[p];
                    EXPECT_EQ(numberOf[size_t(id)], -1) << "edge " << id;
                    numberOf[size_t(id)] = numbers[size_t(p)];
                    EXPECT_GE(numbers[size_t(p)], base[size_t(inChunk)]);
                    EXPECT_LT(numbers[size_t(p)],
                              base[size_t(inChunk)] + counts[size_t(inChunk)]);
                  }
                  return llvm::Error::success();
                });
            ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
          }
      }
      EXPECT_EQ(byId[0], byId[1]);
      // In-edge CSR order within each destination interval's chunks.
      for (int64_t j = 0; j < parts; ++j) {
        std::vector<int64_t> seen;
        for (int32_t v = bounds[size_t(j)]; v < bounds[size_t(j) + 1]; ++v)
          for (int64_t e = g.inOffsets[size_t(v)]; e < g.inOffsets[size_t(v) + 1]; ++e)
            seen.push_back(byId[0][size_t(g.inEdgeIds[size_t(e)])]);
        std::vector<int64_t> sorted = seen;
        std::sort(sorted.begin(), sorted.end());
        for (size_t k = 0; k < sorted.size(); ++k)
          ASSERT_EQ(sorted[k], first[size_t(j)] + int64_t(k));
      }
    }
  }
}

TEST(EdgeChunks, IntervalsCoverTheVertices) {
  EXPECT_EQ(EdgeChunks::equalIntervals(10, 3),
            (std::vector<int32_t>{0, 3, 6, 10}));
  // More parts than vertices: one vertex each.
  EXPECT_EQ(EdgeChunks::equalIntervals(2, 5), (std::vector<int32_t>{0, 1, 2}));
  // Sparse graphs and graphs whose rows fit the cache stay unchunked.
  EXPECT_EQ(EdgeChunks::cacheSizedIntervals(1 << 20, 16 << 20, 256), 1);
  EXPECT_EQ(EdgeChunks::cacheSizedIntervals(1000, 64000, 256), 1);
  int64_t llc = EdgeChunks::lastLevelCacheBytes();
  EXPECT_EQ(EdgeChunks::cacheSizedIntervals(1 << 20, 64 << 20, 256),
            ((int64_t(1) << 28) + llc / 2 - 1) / (llc / 2));
}

class SourceIntervals
    : public testing::TestWithParam<ExampleParam> {};

TEST_P(SourceIntervals, SameBitsForAnyChunkCount) {
  auto [file, opt] = GetParam();
  std::unique_ptr<Model> model = compileExample(file, opt);
  ASSERT_TRUE(model);
  Model &m = *model;
  for (const char *graphName : {"cora", "hub"}) {
    SCOPED_TRACE(graphName);
    const Graph &g = graphFor(graphName, m.selfLoops());
    bindInputs(m, g, graphName, std::string(file) + graphName);
    ForwardOptions fo;
    fo.sourceIntervals = 1;
    auto refFwd = m.forward(fo);
    ASSERT_TRUE(bool(refFwd)) << llvm::toString(refFwd.takeError());
    auto refStep = m.trainStep(fo, 5);
    ASSERT_TRUE(bool(refStep)) << llvm::toString(refStep.takeError());
    EXPECT_EQ(refStep->sourceIntervals, 1);
    for (int64_t parts : {2, 5, 16}) {
      SCOPED_TRACE(parts);
      fo.sourceIntervals = parts;
      auto fwd = m.forward(fo);
      ASSERT_TRUE(bool(fwd)) << llvm::toString(fwd.takeError());
      EXPECT_TRUE(sameBits(fwd->prediction, refFwd->prediction));
      EXPECT_EQ(fwd->loss, refFwd->loss);
      auto step = m.trainStep(fo, 5);
      ASSERT_TRUE(bool(step)) << llvm::toString(step.takeError());
      expectSameStep(*step, *refStep);
      EXPECT_EQ(fwd->sourceIntervals, parts);
      EXPECT_EQ(step->sourceIntervals, parts);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, SourceIntervals, exampleModels(), exampleName);

TEST(SourceIntervalsErrors, NegativeCountIsAnError) {
  auto model = Model::compileFile(SAGA_EXAMPLES_DIR "/gcn.saga");
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  const Graph &g = graphFor("cora", (*model)->selfLoops());
  bindInputs(**model, g, "cora", "neg");
  ForwardOptions fo;
  fo.sourceIntervals = -2;
  auto r = (*model)->forward(fo);
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(llvm::toString(r.takeError()),
            "source intervals must be 0 (automatic), 1 (off) or more, not -2");
}

// The training plan as a memory problem: at tensor granularity every step
// is one operator; at the chunked level a map runs per row interval and a
// propagation per 2-D chunk, so the largest working set shrinks and the
// planner finds plans under budgets the tensor level cannot meet.
TEST(PlanMemory, TrainingPlanAtTensorAndChunkGranularity) {
  CompileOptions co;
  co.training = true;
  auto model = Model::compileFile(SAGA_EXAMPLES_DIR "/gcn.saga", co);
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  const Graph &g = graphFor("cora", (*model)->selfLoops());
  ASSERT_EQ(errorText((*model)->setGraph(g)), "");
  auto whole = (*model)->memoryProblem(/*training=*/true, /*pinBelow=*/0);
  ASSERT_TRUE(bool(whole)) << llvm::toString(whole.takeError());
  auto chunked = (*model)->memoryProblem(true, 0, /*intervals=*/4);
  ASSERT_TRUE(bool(chunked)) << llvm::toString(chunked.takeError());
  MemoryProblem &p1 = whole->problem, &p4 = chunked->problem;
  size_t propagations = 0;
  for (const PlanOperator &op : p1.ops)
    propagations += op.name.find("launch") == 0 &&
                    std::count_if(p4.ops.begin(), p4.ops.end(),
                                  [&](const PlanOperator &o) {
                                    return o.name.rfind(op.name + " [", 0) ==
                                               0 &&
                                           o.name.find(", ") != std::string::npos;
                                  }) == 16;
  EXPECT_EQ(propagations, 4u); // GCN's two forward and two backward
  EXPECT_GT(p4.ops.size(), 4 * p1.ops.size() / 2);
  // The features are the biggest input; a quarter of them at a time.
  int64_t min1 = minimumBudget(p1), min4 = minimumBudget(p4);
  EXPECT_LT(2 * min4, min1);
  p1.budget = p4.budget = min1 - 1;
  EXPECT_FALSE(planExact(p1).feasible);
  MemoryPlan plan = planExact(p4);
  ASSERT_TRUE(plan.feasible) << plan.error;
  EXPECT_EQ(validatePlan(p4, plan), "") << plan.method;
  EXPECT_LE(plan.bytesMoved(), planLru(p4).bytesMoved());
  EXPECT_LE(plan.bytesMoved(), planStreamAll(p4).bytesMoved());
  EXPECT_EQ((*model)->memoryProblem(true, 0, 4)->problem.ops.size(),
            p4.ops.size());
}
