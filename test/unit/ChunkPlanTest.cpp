//===- ChunkPlanTest.cpp - the chunked level in the IR --------------------===//
//
// A chunked plan written as the model's saga.schedule reads back as the
// same plan (every transfer, its issue point, the byte counts and the
// method), also after printing and parsing the module; a schedule edited
// into something the plan cannot run (a load taken out, a step moved to
// another chunk, a piece that is not in the plan) is refused with the
// location of what is wrong, never run. The executor runs what it reads
// back (OutOfCoreTest checks those runs bit for bit).
//
//===----------------------------------------------------------------------===//

#include "analysis/ChunkPlan.h"
#include "codegen/KernelEmitter.h"
#include "runtime/exec/ChunkedExecutor.h"
#include "parser/FrontEnd.h"
#include "passes/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

using namespace mlir;
using namespace saga;

namespace {

struct Compiled {
  std::unique_ptr<MLIRContext> ctx;
  OwningOpRef<ModuleOp> module;
  ModelOp model;
};

/// The training plan of an example, as sagac --emit=plan --training makes it.
Compiled trainingPlan(const std::string &example, unsigned optLevel = 2) {
  Compiled c;
  DialectRegistry registry;
  registerSagaDialects(registry);
  c.ctx = std::make_unique<MLIRContext>(registry);
  llvm::SourceMgr sources;
  auto file = llvm::MemoryBuffer::getFile(std::string(SAGA_EXAMPLES_DIR) + "/" +
                                          example);
  EXPECT_TRUE(bool(file));
  sources.AddNewSourceBuffer(std::move(*file), llvm::SMLoc());
  c.module = compileSaga(sources, *c.ctx);
  EXPECT_TRUE(bool(c.module));
  PassManager pm(c.ctx.get());
  buildLowerToPlanPipeline(pm, {optLevel, /*training=*/true, {}});
  EXPECT_TRUE(succeeded(pm.run(*c.module)));
  c.module->walk([&](ModelOp m) { c.model = m; });
  return c;
}

void expectSamePlan(const ChunkPlan &a, const ChunkPlan &b) {
  ASSERT_EQ(a.memory.bounds, b.memory.bounds);
  ASSERT_EQ(a.plan.transfers.size(), b.plan.transfers.size());
  for (size_t k = 0; k < a.plan.transfers.size(); ++k) {
    const Transfer &x = a.plan.transfers[k], &y = b.plan.transfers[k];
    EXPECT_EQ(x.kind, y.kind) << k;
    EXPECT_EQ(x.tensor, y.tensor) << k;
    EXPECT_EQ(x.op, y.op) << k;
  }
  EXPECT_EQ(a.plan.loadBytes, b.plan.loadBytes);
  EXPECT_EQ(a.plan.storeBytes, b.plan.storeBytes);
  EXPECT_EQ(a.plan.method, b.plan.method);
  EXPECT_EQ(a.memory.problem.budget, b.memory.problem.budget);
}

const GraphSize kCora{2708, 13264, {}};

// Edge values split by destination interval (GAT at -O0: attention scores
// and messages as edge values): each is P pieces holding the edges into
// its interval (the chunks' counts added up by destination), propagations
// over in-edges read piece j and reversed ones piece i; the smallest
// budget falls well below the one with whole edge values; the schedule
// carries the counts (chunk_edges) and reads back as the same plan, and
// counts that do not add up to the graph's edges are refused.
TEST(ChunkPlan, EdgeValuesSplitByDestinationInterval) {
  Compiled c = trainingPlan("gat.saga", 0);
  ASSERT_TRUE(c.model);
  ASSERT_TRUE(edgeValuesSplittable(c.model));
  // Dense enough that edge values outweigh a vertex interval's.
  const int64_t parts = 4, v = 1 << 10, e = 1 << 22;
  // Skewed counts: chunk (i, j) holds (i + 2 j + 1) shares.
  GraphSize whole{v, e, {}}, split = whole;
  split.chunkEdges = [&](const std::vector<int32_t> &bounds) {
    const int64_t p = int64_t(bounds.size()) - 1;
    std::vector<int64_t> counts(size_t(p * p));
    int64_t shares = 0, given = 0;
    for (int64_t i = 0; i < p; ++i)
      for (int64_t j = 0; j < p; ++j)
        shares += i + 2 * j + 1;
    for (int64_t i = 0; i < p; ++i)
      for (int64_t j = 0; j < p; ++j)
        given += counts[size_t(i * p + j)] = e * (i + 2 * j + 1) / shares;
    counts[0] += e - given;
    return counts;
  };
  auto a = planChunked(c.model, whole, int64_t(1) << 40, parts);
  auto b = planChunked(c.model, split, int64_t(1) << 40, parts);
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(a->memory.edgesSplit());
  ASSERT_TRUE(b->memory.edgesSplit());
  EXPECT_LT(b->minimum * 2, a->minimum)
      << "split " << b->minimum << ", whole " << a->minimum;
  const PlanMemory &pm = b->memory;
  std::map<void *, std::vector<int64_t>> pieces; // edge value -> piece bytes
  for (size_t t = 0; t < pm.pieces.size(); ++t) {
    const PlanPiece &p = pm.pieces[t];
    if (p.stateOf)
      continue;
    Value val = Value::getFromOpaquePointer(p.value);
    auto d = dyn_cast<DomainType>(val.getType());
    if (!d || !d.isEdgeDomain())
      continue;
    ASSERT_GE(p.piece, 0);
    pieces[p.value].push_back(pm.problem.tensors[t].bytes);
  }
  ASSERT_FALSE(pieces.empty());
  for (auto &[value, bytes] : pieces) {
    ASSERT_EQ(bytes.size(), size_t(parts));
    Value val = Value::getFromOpaquePointer(value);
    int64_t rowBytes = 4;
    for (int64_t s : cast<DomainType>(val.getType()).getShape())
      rowBytes *= s;
    for (int64_t j = 0; j < parts; ++j)
      EXPECT_EQ(bytes[size_t(j)],
                rowBytes * (pm.edgeFirst[size_t(j) + 1] - pm.edgeFirst[size_t(j)]));
  }
  EXPECT_EQ(pm.edgeFirst.back(), e);
  // Chunk bases: by destination interval, then source interval.
  EXPECT_EQ(pm.chunkBase[size_t(1 * parts + 0)], pm.chunkEdges[0]);
  EXPECT_EQ(pm.chunkBase[size_t(0 * parts + 1)], pm.edgeFirst[1]);
  // Each chunk step touches the piece of its destination interval.
  for (size_t k = 0; k < pm.steps.size(); ++k) {
    const PlanStep &step = pm.steps[k];
    auto launch = dyn_cast<LaunchOp>(step.op);
    if (!launch || step.i < 0)
      continue;
    auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        launch, launch.getCalleeAttr());
    const int64_t dst = fn->hasAttr("saga.reversed") ? step.i : step.j;
    for (const auto *list : {&pm.problem.ops[k].reads, &pm.problem.ops[k].writes,
                             &pm.problem.ops[k].updates})
      for (int t : *list) {
        const PlanPiece &p = pm.pieces[size_t(t)];
        if (!p.stateOf && pieces.count(p.value)) {
          EXPECT_EQ(p.piece, dst) << pm.problem.ops[k].name;
        }
      }
  }
  // The schedule says so, and reads back as the same plan.
  ScheduleOp schedule = writeSchedule(c.model, *b);
  ASSERT_TRUE(schedule.getChunkEdges());
  EXPECT_EQ(schedule.getChunkEdges()->size(), size_t(parts * parts));
  auto read = readSchedule(schedule);
  ASSERT_TRUE(bool(read)) << llvm::toString(read.takeError());
  ASSERT_TRUE(read->memory.edgesSplit());
  expectSamePlan(*b, *read);
  std::vector<int64_t> edited(schedule.getChunkEdges()->begin(),
                              schedule.getChunkEdges()->end());
  edited[1] += 1;
  schedule.setChunkEdges(edited);
  std::string diagnostic;
  ScopedDiagnosticHandler handler(c.ctx.get(), [&](Diagnostic &d) {
    diagnostic = d.str();
    return success();
  });
  EXPECT_TRUE(failed(schedule.verify()));
  EXPECT_NE(diagnostic.find("chunk_edges add up to 4194305 edges, not the "
                            "graph's 4194304"),
            std::string::npos)
      << diagnostic;
  // Counts for another P, or edges in a chunk listed empty.
  schedule.setChunkEdges(std::vector<int64_t>{e});
  EXPECT_TRUE(failed(schedule.verify()));
  EXPECT_NE(diagnostic.find("chunk_edges must hold P x P = 16 counts (found 1)"),
            std::string::npos)
      << diagnostic;
  edited[1] -= 1;
  schedule.setChunkEdges(edited);
  schedule.setEmptyChunks(std::vector<int32_t>{1});
  EXPECT_TRUE(failed(schedule.verify()));
  EXPECT_NE(diagnostic.find("chunk 1 is listed empty but chunk_edges gives it"),
            std::string::npos)
      << diagnostic;
  // A model whose edge values cannot be split (here: it has none) refuses
  // a schedule that splits them, at the schedule.
  Compiled gcn = trainingPlan("gcn.saga");
  auto plain = planChunked(gcn.model, whole, int64_t(1) << 40, parts);
  ASSERT_TRUE(bool(plain)) << llvm::toString(plain.takeError());
  ScheduleOp s = writeSchedule(gcn.model, *plain);
  ASSERT_FALSE(s.getChunkEdges());
  s.setChunkEdges(split.chunkEdges(plain->memory.bounds));
  auto refused = readSchedule(s);
  ASSERT_FALSE(bool(refused));
  EXPECT_NE(llvm::toString(refused.takeError())
                .find("the schedule splits edge values by interval, but the "
                      "model's cannot be"),
            std::string::npos);
}

TEST(ChunkPlan, ScheduleReadsBackAsThePlan) {
  for (const char *example : {"gcn.saga", "gat.saga", "ggcn.saga"}) {
    SCOPED_TRACE(example);
    Compiled c = trainingPlan(example);
    for (int64_t p : {2, 5, 11}) {
      auto made = planChunked(c.model, kCora, 64 << 20, p);
      ASSERT_TRUE(bool(made)) << llvm::toString(made.takeError());
      ScheduleOp s = writeSchedule(c.model, *made);
      auto read = readSchedule(s);
      ASSERT_TRUE(bool(read)) << llvm::toString(read.takeError());
      expectSamePlan(*made, *read);
      EXPECT_EQ(read->plan.peakBytes, made->plan.peakBytes);
      // Loads ahead of their step are marked (prefetch) and none starts
      // more than two steps early.
      int ahead = 0;
      for (const Transfer &t : read->plan.transfers)
        if (t.kind == Transfer::Load) {
          EXPECT_LE(t.issueAt, t.op);
          EXPECT_GE(t.issueAt, t.op - kPrefetchDepth);
          ahead += t.issueAt < t.op;
        }
      EXPECT_GT(ahead, 0);
    }
  }
}

/// Chains of row-local ops run interval by interval: the interleaved
/// order is the op-major one permuted, each op's steps in their order;
/// every step runs after the steps that make what it reads (a vertex
/// value's pieces at the step's intervals, any other value whole); the
/// op after GCN's first propagation runs on the first chunk group's
/// intervals before the next group; and the plan moves fewer bytes.
TEST(ChunkPlan, RowLocalChainsRunIntervalByInterval) {
  for (const char *example : {"gcn.saga", "gat.saga", "ggcn.saga"}) {
    SCOPED_TRACE(example);
    Compiled c = trainingPlan(example);
    const int64_t parts = 4, group = 2;
    PlanMemory inter =
        planMemoryProblem(c.model, kCora, kPinBelow, parts, group, true);
    PlanMemory major =
        planMemoryProblem(c.model, kCora, kPinBelow, parts, group, false);
    ASSERT_EQ(inter.steps.size(), major.steps.size());
    // Per op, its steps in order, in both.
    auto perOp = [](const PlanMemory &pm) {
      std::map<Operation *, std::vector<std::pair<int64_t, int64_t>>> m;
      for (const PlanStep &s : pm.steps)
        m[s.op].push_back({s.i, s.j});
      return m;
    };
    EXPECT_EQ(perOp(inter), perOp(major));
    EXPECT_NE(inter.steps.size(), 0u);
    bool reordered = false;
    for (size_t k = 0; k < inter.steps.size(); ++k)
      reordered |= inter.steps[k].op != major.steps[k].op;
    EXPECT_TRUE(reordered);
    // Dependencies.
    for (size_t k = 0; k < inter.steps.size(); ++k) {
      const PlanStep &s = inter.steps[k];
      for (Value v : s.op->getOperands()) {
        Operation *def = v.getDefiningOp();
        auto d = dyn_cast<DomainType>(v.getType());
        bool rows = d && !d.isEdgeDomain();
        for (size_t q = k + 1; q < inter.steps.size(); ++q) {
          const PlanStep &later = inter.steps[q];
          if (later.op != def)
            continue;
          bool needed = !rows || (s.i < 0 && s.j < 0) ||
                        later.j == s.j || (s.i >= 0 && later.j == s.i);
          EXPECT_FALSE(needed)
              << "step " << k << " (" << inter.problem.ops[k].name
              << ") runs before step " << q << " ("
              << inter.problem.ops[q].name << ") that makes its operand";
        }
      }
    }
    // Cheaper under a budget that holds a few pieces.
    auto moved = [](PlanMemory &pm) {
      pm.problem.budget = minimumBudget(pm.problem) * 3 / 2;
      MemoryPlan plan = planGreedy(pm.problem);
      EXPECT_TRUE(plan.feasible) << plan.error;
      return plan.bytesMoved();
    };
    EXPECT_LT(moved(inter), moved(major));
  }
  // GCN: the op after the first propagation runs on interval 0 (of the
  // first group) before the propagation's chunks into interval 2.
  Compiled c = trainingPlan("gcn.saga");
  PlanMemory pm = planMemoryProblem(c.model, kCora, kPinBelow, 4, 2, true);
  size_t firstProp = 0;
  while (firstProp < pm.steps.size() && pm.steps[firstProp].i < 0)
    ++firstProp;
  ASSERT_LT(firstProp, pm.steps.size());
  Operation *prop = pm.steps[firstProp].op;
  size_t k = firstProp;
  while (pm.steps[k].op == prop)
    ++k;
  EXPECT_EQ(pm.steps[k].i, -1);
  EXPECT_EQ(pm.steps[k].j, 0);
  EXPECT_NE(pm.steps[k].op, prop);
  bool propLater = false;
  for (size_t q = k; q < pm.steps.size(); ++q)
    propLater |= pm.steps[q].op == prop && pm.steps[q].j == 2;
  EXPECT_TRUE(propLater);
}

/// The model's schedule as printed (into `text`), parsed back and read.
llvm::Expected<ChunkPlan> printedAndReadBack(Compiled &c, std::string &text) {
  text.clear();
  llvm::raw_string_ostream os(text);
  c.module->print(os);
  OwningOpRef<ModuleOp> parsed = parseSourceString<ModuleOp>(text, c.ctx.get());
  if (!parsed)
    return llvm::createStringError("the printed module does not parse");
  ModelOp model;
  parsed->walk([&](ModelOp m) { model = m; });
  return readSchedule(findSchedule(model));
}

TEST(ChunkPlan, PrintedScheduleParsesBackToTheSamePlan) {
  Compiled c = trainingPlan("gcn.saga");
  auto made = planChunked(c.model, kCora, 6 << 20);
  ASSERT_TRUE(bool(made)) << llvm::toString(made.takeError());
  writeSchedule(c.model, *made);
  std::string text;
  auto read = printedAndReadBack(c, text);
  ASSERT_TRUE(bool(read)) << llvm::toString(read.takeError());
  expectSamePlan(*made, *read);
}

/// readSchedule's error after `edit` changes the written schedule.
std::string errorAfter(const std::function<void(ScheduleOp)> &edit) {
  Compiled c = trainingPlan("gcn.saga");
  auto made = planChunked(c.model, kCora, 16 << 20, 4);
  if (!made)
    return "plan: " + llvm::toString(made.takeError());
  ScheduleOp s = writeSchedule(c.model, *made);
  edit(s);
  auto read = readSchedule(s);
  if (read)
    return "";
  return llvm::toString(read.takeError());
}

TEST(ChunkPlan, EditedSchedulesAreRefused) {
  // A load taken out: the step reads a piece that is not resident.
  std::string e = errorAfter([](ScheduleOp s) {
    for (Operation &op : s.getBody().front())
      if (isa<LoadOp>(op)) {
        op.erase();
        return;
      }
  });
  EXPECT_NE(e.find("gcn.saga:"), std::string::npos) << e;
  EXPECT_NE(e.find("not a valid memory plan"), std::string::npos) << e;
  // A step moved to another chunk.
  e = errorAfter([](ScheduleOp s) {
    for (Operation &op : s.getBody().front())
      if (auto step = dyn_cast<StepOp>(op); step && step.getJ() == 1) {
        step.setJ(2);
        return;
      }
  });
  EXPECT_NE(e.find("is launch"), std::string::npos) << e;
  // A step left out.
  e = errorAfter([](ScheduleOp s) {
    Operation *last = nullptr;
    for (Operation &op : s.getBody().front())
      if (isa<StepOp>(op))
        last = &op;
    last->erase();
  });
  EXPECT_NE(e.find("steps, the model"), std::string::npos) << e;
  // A transfer of a value the plan pins (a parameter under 1 MiB).
  e = errorAfter([](ScheduleOp s) {
    ModelOp model = s->getParentOfType<ModelOp>();
    ParamOp small;
    model.walk([&](ParamOp p) {
      if (!small && cast<RankedTensorType>(p.getType()).getNumElements() < 1000)
        small = p;
    });
    OpBuilder b(s.getContext());
    b.setInsertionPointToStart(&s.getBody().front());
    LoadOp::create(b, s.getLoc(), small, b.getI64IntegerAttr(-1), UnitAttr(), IntegerAttr());
  });
  EXPECT_NE(e.find("not in the plan's memory"), std::string::npos) << e;
  // Intervals that are not the graph's.
  e = errorAfter([](ScheduleOp s) {
    std::vector<int32_t> b(s.getIntervals().begin(), s.getIntervals().end());
    b[1] += 1;
    s.setIntervals(b);
  });
  EXPECT_NE(e.find("intervals are not"), std::string::npos) << e;
}

// Chunks the graph says are empty read no source piece: the plan moves
// fewer bytes, the schedule lists them (and reads back, printed and parsed,
// as the same plan), and a list the verifier cannot accept is refused.
/// At budgets from 420 to 800 MiB over `parts` intervals (one chunk per
/// group): the plans for `better` never move more bytes than those for
/// `base`, and are valid; how many move fewer.
int cheaperPlans(Compiled &c, const GraphSize &base, const GraphSize &better,
                 int64_t parts) {
  int cheaper = 0;
  for (int64_t mib : {420, 480, 560, 640, 800}) {
    auto a = planChunked(c.model, base, mib << 20, parts, 1);
    auto b = planChunked(c.model, better, mib << 20, parts, 1);
    EXPECT_TRUE(a && b) << mib;
    if (!a || !b) {
      llvm::consumeError(a.takeError());
      llvm::consumeError(b.takeError());
      continue;
    }
    EXPECT_LE(b->plan.bytesMoved(), a->plan.bytesMoved()) << mib;
    EXPECT_EQ(validatePlan(b->memory.problem, b->plan), "") << mib;
    cheaper += b->plan.bytesMoved() < a->plan.bytesMoved();
  }
  return cheaper;
}

TEST(ChunkPlan, EmptyChunksLoadNoSources) {
  // The benchmark's 64-wide GCN sized for R-MAT scale 20: its propagated
  // values are as large as its input.
  Compiled c = trainingPlan("../bench/models/gcn64.saga");
  const GraphSize rmat{1 << 20, 17133117, {}};
  const int64_t parts = 4;
  GraphSize diagonal = rmat;
  diagonal.occupancy = [&](const std::vector<int32_t> &bounds) {
    std::vector<uint8_t> occupied(size_t(parts * parts), 0);
    if (int64_t(bounds.size()) - 1 != parts)
      return std::vector<uint8_t>();
    for (int64_t i = 0; i < parts; ++i)
      occupied[size_t(i * parts + i)] = 1;
    return occupied;
  };
  // Never more bytes; fewer at the budgets where source pieces are loaded
  // again for each destination interval.
  EXPECT_GT(cheaperPlans(c, rmat, diagonal, parts), 0);
  auto dense = planChunked(c.model, rmat, 480 << 20, parts, 1);
  auto sparse = planChunked(c.model, diagonal, 480 << 20, parts, 1);
  ASSERT_TRUE(bool(dense)) << llvm::toString(dense.takeError());
  ASSERT_TRUE(bool(sparse)) << llvm::toString(sparse.takeError());
  EXPECT_EQ(sparse->memory.emptyChunks(), parts * parts - parts);
  EXPECT_EQ(dense->memory.emptyChunks(), 0);
  // Step by step: an off-diagonal chunk of a propagation reads fewer
  // tensors (no source piece); every other step reads the same.
  const MemoryProblem &a = sparse->memory.problem, &b = dense->memory.problem;
  ASSERT_EQ(a.ops.size(), b.ops.size());
  int fewer = 0;
  for (size_t k = 0; k < a.ops.size(); ++k) {
    const PlanStep &step = sparse->memory.steps[k];
    bool offDiagonal = step.i >= 0 && step.i != step.j;
    if (offDiagonal) {
      EXPECT_LT(a.ops[k].reads.size(), b.ops[k].reads.size()) << a.ops[k].name;
      fewer += a.ops[k].reads.size() < b.ops[k].reads.size();
    } else {
      EXPECT_EQ(a.ops[k].reads, b.ops[k].reads) << a.ops[k].name;
    }
  }
  EXPECT_GT(fewer, 0);
  ScheduleOp s = writeSchedule(c.model, *sparse);
  ASSERT_TRUE(s.getEmptyChunks().has_value());
  EXPECT_EQ(int64_t(s.getEmptyChunks()->size()), parts * parts - parts);
  std::string text;
  auto read = printedAndReadBack(c, text);
  EXPECT_NE(text.find("empty_chunks = array<i32: 1, 2, 3, 4, 6, 7, 8, 9, 11, "
                      "12, 13, 14>"),
            std::string::npos);
  ASSERT_TRUE(bool(read)) << llvm::toString(read.takeError());
  expectSamePlan(*sparse, *read);
  EXPECT_EQ(read->memory.occupied, sparse->memory.occupied);
  // A chunk number past P x P does not verify.
  s.setEmptyChunks(std::vector<int32_t>{1, 16});
  ScopedDiagnosticHandler quiet(c.ctx.get(), [](Diagnostic &) { return success(); });
  EXPECT_TRUE(failed(s.verify()));
}

// The kernel calls over a chunk's parts: the checks against the schedule
// and the propagation phases (a source of two parts, the second holding
// one edge into row 1).
class TwoParts : public ChunkSource {
public:
  llvm::Error forEachPart(bool, const std::vector<int32_t> &, int64_t,
                          int64_t, const PartFn &fn) override {
    ChunkView none, one;
    none.offsets = zeros;
    one.offsets = oneEdge;
    one.others = &other;
    one.edgeIds = &other;
    one.numEdges = 1;
    if (llvm::Error e = fn(none, false))
      return e;
    return fn(one, true);
  }
  const int64_t zeros[3] = {0, 0, 0}, oneEdge[3] = {0, 0, 1};
  const int32_t other = 0;
};

// NGra's selective loading in the plan: where the graph says how many
// rows of its source interval each chunk reads, and that is fewer than the
// interval's, the chunk's read of the source piece may load only those;
// the planner takes it where it moves fewer bytes. The schedule writes
// such a load as `saga.load %v [i] rows N` and reads it back as the same
// plan; a rows count on a piece the step does not read at a chunk's other
// end, or as large as the interval, is refused.
TEST(ChunkPlan, ChunksLoadOnlyTheRowsTheyRead) {
  Compiled c = trainingPlan("../bench/models/gcn64.saga");
  const GraphSize rmat{1 << 20, 17133117, {}};
  const int64_t parts = 4;
  GraphSize few = rmat;
  // Off the diagonal a chunk reads a sixteenth of its source interval.
  few.rowCounts = [&](bool, const std::vector<int32_t> &bounds) {
    std::vector<int64_t> counts;
    if (int64_t(bounds.size()) - 1 != parts)
      return counts;
    for (int64_t i = 0; i < parts; ++i)
      for (int64_t j = 0; j < parts; ++j) {
        int64_t rows = bounds[size_t(i) + 1] - bounds[size_t(i)];
        counts.push_back(i == j ? rows : rows / 16);
      }
    return counts;
  };
  EXPECT_GT(cheaperPlans(c, rmat, few, parts), 0);
  auto made = planChunked(c.model, few, 480 << 20, parts, 1);
  ASSERT_TRUE(bool(made)) << llvm::toString(made.takeError());
  int partial = 0;
  for (const Transfer &t : made->plan.transfers)
    if (t.kind == Transfer::LoadRows) {
      ++partial;
      const PlanStep &step = made->memory.steps[size_t(t.op)];
      EXPECT_NE(step.i, step.j); // only off the diagonal
      EXPECT_EQ(transferBytes(made->memory.problem, t) * 16,
                made->memory.problem.tensors[size_t(t.tensor)].bytes);
    }
  EXPECT_GT(partial, 0);
  ScheduleOp s = writeSchedule(c.model, *made);
  EXPECT_TRUE(s.getSelective());
  std::string text;
  auto read = printedAndReadBack(c, text);
  ASSERT_TRUE(bool(read)) << llvm::toString(read.takeError());
  expectSamePlan(*made, *read);
  EXPECT_NE(text.find("] rows 16384 : !saga.vertex<64xf32>"), std::string::npos);
  EXPECT_NE(text.find("selective"), std::string::npos);

  // Edits that cannot run.
  auto refused = [&](const std::function<void(Operation *)> &edit) {
    writeSchedule(c.model, *made);
    ScheduleOp sched = findSchedule(c.model);
    for (Operation &op : sched.getBody().front())
      if (isa<LoadOp>(op) && op.hasAttr("rows")) {
        edit(&op);
        break;
      }
    ScopedDiagnosticHandler quiet(c.ctx.get(),
                                  [](Diagnostic &) { return success(); });
    if (failed(sched.verify()))
      return std::string("does not verify");
    auto r = readSchedule(sched);
    return r ? std::string() : llvm::toString(r.takeError());
  };
  std::string e = refused([&](Operation *op) {
    op->setAttr("rows", IntegerAttr::get(IntegerType::get(c.ctx.get(), 64),
                                         (1 << 20) / parts));
  });
  EXPECT_NE(e.find("rows of an interval of"), std::string::npos) << e;
  e = refused([&](Operation *op) {
    op->setAttr("rows", IntegerAttr::get(IntegerType::get(c.ctx.get(), 64), 0));
  });
  EXPECT_EQ(e, "does not verify");
  // Rows of a piece the next step reads whole: the row side of a chunk,
  // or a map's interval.
  e = refused([&](Operation *load) {
    Operation *next = load->getNextNode();
    while (next && !isa<StepOp>(next))
      next = next->getNextNode();
    for (Operation *op = next->getNextNode(); op; op = op->getNextNode())
      if (auto step = dyn_cast<StepOp>(op); step && int64_t(step.getI()) == -1) {
        for (Operation *l = step->getPrevNode(); l; l = l->getPrevNode())
          if (isa<LoadOp>(l) && !l->hasAttr("rows") &&
              l->getAttrOfType<IntegerAttr>("piece").getInt() >= 0 &&
              !l->hasAttr("state")) {
            l->setAttr("rows", load->getAttr("rows"));
            load->removeAttr("rows");
            return;
          }
      }
  });
  EXPECT_NE(e.find("cannot load some of its rows"), std::string::npos) << e;
}

TEST(ChunkPlan, KernelPartsAreCheckedAgainstTheSchedule) {
  TwoParts source;
  ExecutionContext ctx;
  ctx.chunkSource = &source;
  const std::vector<int32_t> bounds{0, 2, 4, 6};
  auto calls = [&](chunked::ChunkCall c, std::string *error = nullptr) {
    std::vector<std::pair<int64_t, bool>> seen; // phase, writes
    llvm::Error e = chunked::forEachKernelPart(
        ctx, bounds, false, c,
        [&](const ChunkView &, int64_t phase, bool writes) -> llvm::Error {
          seen.push_back({phase, writes});
          return llvm::Error::success();
        });
    if (error)
      *error = e ? llvm::toString(std::move(e)) : "";
    else
      EXPECT_FALSE(bool(e)) << llvm::toString(std::move(e));
    return seen;
  };
  // A propagation's last chunk: resumes after its first part, finishes
  // (and writes) at its last.
  auto last = calls({true, true, false, 2, 0, 3, 0, 2});
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last[0], std::make_pair(kPhaseResume, false));
  EXPECT_EQ(last[1], std::make_pair(kPhaseResume | kPhaseFinish, true));
  // An edge map runs whole, writing each time.
  auto map = calls({false, true, false, 1, 0, 3, 0, 2});
  EXPECT_EQ(map, (std::vector<std::pair<int64_t, bool>>{{kPhaseWhole, true},
                                                        {kPhaseWhole, true}}));
  // Errors: a propagation over one interval in two parts; a chunk the
  // schedule lists as empty that holds an edge (in its second part).
  std::string error;
  calls({true, false, false, 0, 0, 1, 0, 6}, &error);
  EXPECT_EQ(error, "a propagation over one interval needs its chunk in one part");
  auto listed = calls({true, true, true, 1, 0, 3, 0, 2}, &error);
  EXPECT_EQ(error, "chunk [1, 0] holds edges but the schedule lists it as empty");
  EXPECT_TRUE(listed.empty()); // a middle empty chunk calls nothing
  // Split edge values: the parts' ids are the edges' numbers in chunk
  // order (chunk [1, 0]'s one edge is number 5 here), the source's ids
  // their keys; a chunk whose edges are not the schedule's count stops.
  PlanMemory pm;
  pm.bounds = bounds;
  pm.chunkEdges = {4, 0, 0, 1, 0, 0, 0, 0, 1};
  pm.chunkBase = {0, 5, 5, 4, 5, 5, 5, 5, 5};
  pm.edgeFirst = {0, 5, 5, 6};
  std::vector<std::pair<int32_t, int32_t>> numbered; // id, key
  llvm::Error e = chunked::forEachKernelPart(
      ctx, bounds, false, {false, true, false, 1, 0, 3, 0, 2, &pm},
      [&](const ChunkView &view, int64_t, bool) -> llvm::Error {
        for (int64_t p = view.offsets[0]; p < view.offsets[2]; ++p)
          numbered.push_back({view.edgeIds[p], view.edgeKeys()[p]});
        return llvm::Error::success();
      });
  ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
  EXPECT_EQ(numbered, (std::vector<std::pair<int32_t, int32_t>>{{4, 0}}));
  pm.chunkEdges[3] = 2;
  calls({false, true, false, 1, 0, 3, 0, 2, &pm}, &error);
  EXPECT_EQ(error, "chunk [1, 0] holds 1 edges, the schedule's 2");
  pm.chunkEdges[3] = 0;
  calls({false, true, false, 1, 0, 3, 0, 2, &pm}, &error);
  EXPECT_EQ(error, "chunk [1, 0] holds more edges than the schedule's 0");
}

} // namespace
