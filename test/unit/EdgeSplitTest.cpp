//===- EdgeSplitTest.cpp - link prediction's splits and metrics -----------===//
//
// splitEdges on Cora: the fractions, the five sets disjoint, negatives
// that are no edges, the message-passing graph without a held-out edge,
// the same split for a seed whatever the edge order; the .npz round trip;
// every malformed split file's one error (file, array, row, problem); and
// ROC AUC, Hits@K and MRR against their definitions counted pair by pair.
//
//===----------------------------------------------------------------------===//

#include "ErrorOf.h"
#include "runtime/graph/EdgeSplit.h"
#include "runtime/graph/Loaders.h"
#include "runtime/graph/Numpy.h"
#include "runtime/train/LinkMetrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <string>

using namespace saga;
using sagatest::errorOf;

namespace {

const EdgeList &cora() {
  static EdgeList e = [] {
    auto d = loadPlanetoid(SAGA_EXAMPLES_DIR "/data/cora");
    EXPECT_TRUE(bool(d)) << llvm::toString(d.takeError());
    return d ? d->edges : EdgeList{};
  }();
  return e;
}

using Pair = std::pair<int32_t, int32_t>;
Pair canon(int32_t a, int32_t b) { return a < b ? Pair{a, b} : Pair{b, a}; }
std::set<Pair> pairsOf(const VertexPairs &p, bool undirected = true) {
  std::set<Pair> out;
  for (size_t i = 0; i < p.size(); ++i)
    out.insert(undirected ? canon(p.src[i], p.dst[i])
                          : Pair{p.src[i], p.dst[i]});
  return out;
}

TEST(EdgeSplit, CoraSplitsLikeRandomLinkSplit) {
  const EdgeList &e = cora();
  ASSERT_EQ(e.numVertices, 2708);
  EdgeSplitOptions o;
  o.valFraction = 0.05;
  o.testFraction = 0.10;
  o.seed = 7;
  auto s = splitEdges(e, o);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  // Cora's 5278 undirected pairs (10556 directed edges, no self loop).
  std::set<Pair> all;
  for (size_t i = 0; i < e.src.size(); ++i)
    all.insert(canon(e.src[i], e.dst[i]));
  ASSERT_EQ(all.size(), 5278u);
  EXPECT_EQ(s->valPos.size(), 263u);  // floor(0.05 * 5278)
  EXPECT_EQ(s->testPos.size(), 527u); // floor(0.10 * 5278)
  EXPECT_EQ(s->trainPos.size(), 5278u - 263 - 527);
  EXPECT_EQ(s->valNeg.size(), s->valPos.size());
  EXPECT_EQ(s->testNeg.size(), s->testPos.size());

  auto train = pairsOf(s->trainPos), val = pairsOf(s->valPos),
       test = pairsOf(s->testPos), valNeg = pairsOf(s->valNeg),
       testNeg = pairsOf(s->testNeg);
  std::set<Pair> positives = train;
  positives.insert(val.begin(), val.end());
  positives.insert(test.begin(), test.end());
  EXPECT_EQ(positives, all); // a partition of the graph's pairs
  EXPECT_EQ(train.size() + val.size() + test.size(), all.size());
  EXPECT_EQ(valNeg.size(), s->valNeg.size()); // no negative twice
  for (const std::set<Pair> *neg : {&valNeg, &testNeg})
    for (const Pair &p : *neg) {
      EXPECT_FALSE(all.count(p)) << p.first << " " << p.second;
      EXPECT_NE(p.first, p.second);
      EXPECT_FALSE(neg == &testNeg && valNeg.count(p));
    }

  // The message-passing graph: train_pos both ways, nothing held out.
  EdgeList g = s->messageGraph();
  EXPECT_EQ(g.numVertices, 2708);
  ASSERT_EQ(g.src.size(), 2 * s->trainPos.size());
  for (size_t i = 0; i < g.src.size(); ++i) {
    Pair p = canon(g.src[i], g.dst[i]);
    EXPECT_TRUE(train.count(p));
    EXPECT_EQ(g.src[i ^ 1], g.dst[i]); // edge 2i + 1 reverses edge 2i
  }
}

TEST(EdgeSplit, TheSeedAloneDecides) {
  EdgeSplitOptions o;
  o.seed = 3;
  auto a = splitEdges(cora(), o);
  // The same edges listed backwards and each reversed.
  EdgeList shuffled = cora();
  std::reverse(shuffled.src.begin(), shuffled.src.end());
  std::reverse(shuffled.dst.begin(), shuffled.dst.end());
  std::swap(shuffled.src, shuffled.dst);
  auto b = splitEdges(shuffled, o);
  o.seed = 4;
  auto c = splitEdges(cora(), o);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->testPos.src, b->testPos.src);
  EXPECT_EQ(a->testPos.dst, b->testPos.dst);
  EXPECT_EQ(a->valNeg.src, b->valNeg.src);
  EXPECT_EQ(a->valNeg.dst, b->valNeg.dst);
  EXPECT_NE(pairsOf(a->testPos), pairsOf(c->testPos));
}

TEST(EdgeSplit, DirectedPairsAreTheirOwn) {
  // 0 -> 1 and 1 -> 0 are two pairs of a directed split, one undirected.
  EdgeList e;
  e.numVertices = 40;
  for (int32_t v = 0; v < 40; ++v) {
    e.src.push_back(v);
    e.dst.push_back((v + 1) % 40);
    e.src.push_back((v + 1) % 40);
    e.dst.push_back(v);
  }
  e.src.push_back(5); // a self loop: dropped
  e.dst.push_back(5);
  EdgeSplitOptions o;
  o.valFraction = 0.25;
  o.testFraction = 0.25;
  auto u = splitEdges(e, o);
  o.undirected = false;
  auto d = splitEdges(e, o);
  ASSERT_TRUE(u && d);
  EXPECT_EQ(u->trainPos.size() + u->valPos.size() + u->testPos.size(), 40u);
  EXPECT_EQ(d->trainPos.size() + d->valPos.size() + d->testPos.size(), 80u);
  EXPECT_EQ(d->messageGraph().src.size(), d->trainPos.size());
  for (size_t i = 0; i < u->valNeg.size(); ++i)
    EXPECT_LT(u->valNeg.src[i], u->valNeg.dst[i]); // stored src < dst
}

TEST(EdgeSplit, RefusesWhatCannotBeSplit) {
  EdgeList triangle;
  triangle.numVertices = 3;
  triangle.src = {0, 1, 2};
  triangle.dst = {1, 2, 0};
  EdgeSplitOptions o;
  o.valFraction = 0.4;
  o.testFraction = 0.4;
  EXPECT_EQ(errorOf(splitEdges(triangle, o)),
            "splitting edges: val_neg needs 1 pairs that are not edges; the "
            "graph has 0 left");
  o.valFraction = 0.6;
  EXPECT_EQ(errorOf(splitEdges(triangle, o)),
            "splitting edges: the validation (0.6) and test (0.4) fractions "
            "must be in [0, 1) and leave edges to train on");
  EdgeList loops;
  loops.numVertices = 2;
  loops.src = {0, 1};
  loops.dst = {0, 1};
  EXPECT_EQ(errorOf(splitEdges(loops, EdgeSplitOptions())),
            "splitting edges: the graph has no edge between two distinct "
            "vertices");
}

TEST(EdgeSplit, NpzRoundTrip) {
  auto s = splitEdges(cora(), EdgeSplitOptions());
  ASSERT_TRUE(bool(s));
  std::string path = SAGA_TEST_SCRATCH_DIR "/cora-split.npz";
  ASSERT_FALSE(bool(writeEdgeSplitNpz(path, *s)));
  auto back = loadEdgeSplitNpz(path, 2708);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->trainPos.src, s->trainPos.src);
  EXPECT_EQ(back->trainPos.dst, s->trainPos.dst);
  EXPECT_EQ(back->testNeg.src, s->testNeg.src);
  EXPECT_EQ(back->valPos.dst, s->valPos.dst);
  EXPECT_EQ(errorOf(loadEdgeSplitNpz(path, 2709)),
            path + ": num_nodes is 2708; the graph has 2709 vertices");
  EXPECT_EQ(errorOf(loadEdgeSplitNpz(path, 2708, /*undirected=*/false)),
            path + ": the split is undirected; it is read as directed");
}

/// A split file of the five arrays, each given as rows of pairs (or a
/// shape of its own).
struct SplitFile {
  std::vector<std::vector<int64_t>> rows{{0, 1, 1, 2, 2, 3}, {3, 4}, {0, 5},
                                         {4, 5}, {0, 6}};
  std::vector<std::vector<int64_t>> shapes{{3, 2}, {1, 2}, {1, 2}, {1, 2},
                                           {1, 2}};
  std::vector<std::string> names{"train_pos", "val_pos", "val_neg",
                                 "test_pos", "test_neg"};
  std::string write(const std::string &name) {
    std::string path = SAGA_TEST_SCRATCH_DIR "/split-" + name + ".npz";
    std::vector<NpyView> members;
    for (size_t i = 0; i < names.size(); ++i)
      members.push_back({names[i], "<i8", shapes[i], rows[i].data(),
                         rows[i].size() * 8});
    EXPECT_FALSE(bool(writeNpz(path, members)));
    return path;
  }
};

TEST(EdgeSplit, EachMalformedFileGivesOneLocatedError) {
  SplitFile good;
  std::string path = good.write("good");
  auto s = loadEdgeSplitNpz(path, 8);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_EQ(s->trainPos.size(), 3u);

  struct Case {
    const char *name;
    std::function<void(SplitFile &)> edit;
    std::string message; // after "PATH: "
  };
  std::vector<Case> cases = {
      {"missing", [](SplitFile &f) { f.names[2] = "val_negatives"; },
       "has no 'val_neg' (expected train_pos, val_pos, val_neg, test_pos "
       "and test_neg, each [pairs, 2] integers)"},
      {"transposed",
       [](SplitFile &f) {
         f.rows[0] = {0, 1, 1, 2};
         f.shapes[0] = {2, 2};
         f.rows[1] = {3, 4, 4, 5, 5, 6};
         f.shapes[1] = {2, 3};
       },
       "val_pos: shape [2, 3], expected [pairs, 2] (a PyG edge_index is "
       "[2, pairs]: save its transpose)"},
      {"range", [](SplitFile &f) { f.rows[3] = {4, 8}; },
       "test_pos row 0: vertex 8 is out of range [0, 8)"},
      {"negative-id", [](SplitFile &f) { f.rows[0][3] = -1; },
       "train_pos row 1: vertex -1 is out of range [0, 8)"},
      {"self", [](SplitFile &f) { f.rows[4] = {6, 6}; },
       "test_neg row 0: (6, 6) pairs a vertex with itself"},
      {"leak", [](SplitFile &f) { f.rows[3] = {2, 1}; },
       "test_pos row 0: (2, 1) is also train_pos row 1 (pairs are "
       "undirected)"},
      {"repeat", [](SplitFile &f) { f.rows[0] = {0, 1, 1, 2, 1, 0}; },
       "train_pos row 2: (1, 0) is also train_pos row 0 (pairs are "
       "undirected)"},
      {"negative-edge", [](SplitFile &f) { f.rows[2] = {4, 3}; },
       "val_neg row 0: (4, 3) is a positive pair (val_pos row 0)"},
      {"empty-train",
       [](SplitFile &f) {
         f.rows[0] = {};
         f.shapes[0] = {0, 2};
       },
       "train_pos is empty: nothing to train on"},
  };
  for (Case &c : cases) {
    SplitFile f;
    c.edit(f);
    std::string p = f.write(c.name);
    EXPECT_EQ(errorOf(loadEdgeSplitNpz(p, 8)), p + ": " + c.message)
        << c.name;
  }
  // Floats are not ids.
  std::string p = SAGA_TEST_SCRATCH_DIR "/split-float.npz";
  SplitFile f;
  std::vector<float> x{0, 1};
  std::vector<NpyView> members;
  for (size_t i = 0; i < 5; ++i)
    members.push_back(i == 1 ? NpyView{"val_pos", "<f4", {1, 2}, x.data(), 8}
                             : NpyView{f.names[i], "<i8", f.shapes[i],
                                       f.rows[i].data(), f.rows[i].size() * 8});
  ASSERT_FALSE(bool(writeNpz(p, members)));
  EXPECT_EQ(errorOf(loadEdgeSplitNpz(p, 8)),
            p + ": val_pos: float32, expected integer vertex ids");
}

TEST(EdgeSplit, TheFuzzersSeedLoads) {
  // test/fuzz/corpus/edgesplit/small (make_corpus.py): NumPy's own .npz.
  auto s = loadEdgeSplitNpz(
      SAGA_EXAMPLES_DIR "/../test/fuzz/corpus/edgesplit/small", 8);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_EQ(s->trainPos.size(), 3u);
  EXPECT_EQ(s->testNeg.src, std::vector<int32_t>{0});
  EXPECT_EQ(s->testNeg.dst, std::vector<int32_t>{6});
}

//===----------------------------------------------------------------------===//
// Metrics
//===----------------------------------------------------------------------===//

TEST(LinkMetrics, SmallCasesByHand) {
  // scikit-learn's roc_auc_score example: y [0, 0, 1, 1], scores
  // [0.1, 0.4, 0.35, 0.8] -> 0.75.
  EXPECT_DOUBLE_EQ(rocAuc({0.35f, 0.8f}, {0.1f, 0.4f}), 0.75);
  EXPECT_DOUBLE_EQ(rocAuc({1, 1}, {1, 1, 1}), 0.5); // all tied
  EXPECT_DOUBLE_EQ(rocAuc({2}, {1, 3}), 0.5);
  EXPECT_TRUE(std::isnan(rocAuc({}, {1})));
  EXPECT_TRUE(std::isnan(rocAuc({1, NAN}, {0})));
  // Negatives 5 4 3 2 1: the 2nd highest is 4; positives above it: 4.5, 9.
  EXPECT_DOUBLE_EQ(hitsAtK({4.5f, 9, 4, 1}, {1, 2, 3, 4, 5}, 2), 0.5);
  EXPECT_DOUBLE_EQ(hitsAtK({0}, {1, 2}, 3), 1.0); // fewer negatives than K
  // Ranks: 0.9 above its three negatives (1); 0.5 below two (3); 0.3 tied
  // with one, below one (2.5).
  EXPECT_DOUBLE_EQ(meanReciprocalRank({0.9f, 0.5f, 0.3f},
                                      {0.1f, 0.2f, 0.3f, 0.6f, 0.7f, 0.1f,
                                       0.3f, 0.4f, 0.2f},
                                      3),
                   (1.0 + 1.0 / 3 + 1.0 / 2.5) / 3);
  EXPECT_TRUE(std::isnan(meanReciprocalRank({1}, {1, 2}, 3)));
}

TEST(LinkMetrics, AgreeWithTheirPairwiseDefinitions) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    // Scores on a coarse grid, so that many tie.
    std::uniform_int_distribution<int> grid(0, 9);
    std::vector<float> pos(size_t(1 + rng() % 40)), neg(size_t(1 + rng() % 60));
    for (float &s : pos)
      s = float(grid(rng)) + 0.5f * (rng() % 2);
    for (float &s : neg)
      s = float(grid(rng));
    double wins = 0;
    for (float p : pos)
      for (float n : neg)
        wins += p > n ? 1 : p == n ? 0.5 : 0;
    EXPECT_NEAR(rocAuc(pos, neg), wins / double(pos.size() * neg.size()),
                1e-12);
    int64_t k = 1 + int64_t(rng() % 10);
    std::vector<float> sorted = neg;
    std::sort(sorted.rbegin(), sorted.rend());
    double hits = 0;
    if (int64_t(sorted.size()) < k)
      hits = double(pos.size());
    else
      for (float p : pos)
        hits += p > sorted[size_t(k - 1)];
    EXPECT_DOUBLE_EQ(hitsAtK(pos, neg, k), hits / double(pos.size()));
  }
}

} // namespace
