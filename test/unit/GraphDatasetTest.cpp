//===- GraphDatasetTest.cpp - TU folders, .npz, batches and folds ---------===//
//
// The bundled MUTAG and PROTEINS, hand-written TU folders checked field by
// field, every malformed input's message in full (file, line, problem),
// sizes refused before allocating, the .npz round trip and its
// graph_indicator form, batches of graphs and stratified folds.
//
//===----------------------------------------------------------------------===//

#include "ErrorOf.h"
#include "runtime/graph/GraphDataset.h"
#include "runtime/graph/Numpy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>

using namespace saga;
using sagatest::errorOf;

namespace {

/// A fresh folder under the test scratch holding TU files NAME_<suffix>.txt.
class TUFolder {
public:
  explicit TUFolder(const std::string &test) {
    dir = std::string(SAGA_TEST_SCRATCH_DIR) + "/tu-" + test;
    llvm::sys::fs::remove_directories(dir);
    llvm::sys::fs::create_directories(dir);
  }
  std::string path(const std::string &suffix) const {
    return dir + "/T_" + suffix + ".txt";
  }
  void write(const std::string &suffix, const std::string &text) const {
    std::error_code ec;
    llvm::raw_fd_ostream os(path(suffix), ec);
    os << text;
  }
  /// Two graphs: 1-2-3 (a path, both directions) and 4-5 (one edge, both
  /// directions), labels -1 and 1, node labels 7, 3, 7, 5, 3.
  void writeSmall() const {
    write("A", "1, 2\n2, 1\n2,3\n3, 2\n4, 5\r\n5, 4\n\n");
    write("graph_indicator", "1\n1\n1\n2\n2\n");
    write("graph_labels", "-1\n1\n");
    write("node_labels", "7\n3\n7\n5\n3\n");
  }
  std::string dir;
};

TEST(GraphDataset, LoadsMutag) {
  auto d = loadTUDataset(SAGA_EXAMPLES_DIR "/data/MUTAG");
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(d->name, "MUTAG");
  EXPECT_EQ(d->numGraphs(), 188);
  EXPECT_EQ(d->numVertices(), 3371);
  EXPECT_EQ(d->src.size(), 7442u);
  EXPECT_EQ(d->numClasses(), 2);
  EXPECT_EQ(std::count(d->graphLabels.begin(), d->graphLabels.end(), 1), 125);
  EXPECT_EQ(d->features.rowSize(), 7); // one-hot atom types
  // Each row one-hot.
  for (int64_t v = 0; v < d->numVertices(); ++v) {
    const float *row = d->features.f32() + v * 7;
    ASSERT_EQ(std::accumulate(row, row + 7, 0.0f), 1.0f) << "vertex " << v;
  }
}

TEST(GraphDataset, LoadsProteins) {
  auto d = loadTUDataset(SAGA_EXAMPLES_DIR "/data/PROTEINS");
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(d->numGraphs(), 1113);
  EXPECT_EQ(d->numVertices(), 43471);
  EXPECT_EQ(d->src.size(), 162088u);
  EXPECT_EQ(std::count(d->graphLabels.begin(), d->graphLabels.end(), 1), 450);
  EXPECT_EQ(d->features.rowSize(), 3);
}

TEST(GraphDataset, ReadsEveryFieldOfATUFolder) {
  TUFolder t("fields");
  t.writeSmall();
  t.write("node_attributes", "0.5, 1\n2,3\n-1, 0\n4, 4\n1e-3, 2\n");
  auto d = loadTUDataset(t.dir);
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(d->name, "T");
  EXPECT_EQ(d->graphOffsets, (std::vector<int64_t>{0, 3, 5}));
  EXPECT_EQ(d->edgeOffsets, (std::vector<int64_t>{0, 4, 6}));
  EXPECT_EQ(d->src, (std::vector<int32_t>{0, 1, 1, 2, 3, 4}));
  EXPECT_EQ(d->dst, (std::vector<int32_t>{1, 0, 2, 1, 4, 3}));
  EXPECT_EQ(d->graphLabels, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(d->labelValues, (std::vector<int64_t>{-1, 1}));
  // Node labels 3, 5, 7 one-hot, then the two attributes.
  ASSERT_EQ(d->features.rowSize(), 5);
  std::vector<float> row0(d->features.f32(), d->features.f32() + 5);
  EXPECT_EQ(row0, (std::vector<float>{0, 0, 1, 0.5f, 1}));
  std::vector<float> row4(d->features.f32() + 20, d->features.f32() + 25);
  EXPECT_EQ(row4, (std::vector<float>{1, 0, 0, 1e-3f, 2}));
}

TEST(GraphDataset, GivesOnesWithoutNodeLabelsOrAttributes) {
  TUFolder t("ones");
  t.writeSmall();
  llvm::sys::fs::remove(t.path("node_labels"));
  auto d = loadTUDataset(t.dir);
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  ASSERT_EQ(d->features.rowSize(), 1);
  EXPECT_EQ(std::vector<float>(d->features.f32(), d->features.f32() + 5),
            std::vector<float>(5, 1.0f));
}

TEST(GraphDataset, ReportsEachMalformedFileAtItsLine) {
  TUFolder t("errors");
  auto expect = [&](const char *suffix, const std::string &text,
                    const std::string &message) {
    t.writeSmall();
    t.write(suffix, text);
    EXPECT_EQ(errorOf(loadTUDataset(t.dir)), message) << suffix << ": " << text;
  };
  std::string A = t.path("A"), gi = t.path("graph_indicator"),
              gl = t.path("graph_labels"), nl = t.path("node_labels"),
              na = t.path("node_attributes");
  expect("A", "1, 2\n1 2\n", A + ":2: expected 'i, j' (two vertex ids), found 1 fields");
  expect("A", "1, 2\n1, x\n", A + ":2: 'x' is not an integer");
  expect("A", "1, 0\n", A + ":1: vertex id 0 is out of range [1, 6)");
  expect("A", "1, 6\n", A + ":1: vertex id 6 is out of range [1, 6)");
  expect("A", "3, 4\n", A + ":1: the edge 3 -> 4 joins graph 1 to graph 2");
  expect("graph_indicator", "1\n1\n2\n1\n2\n",
         gi + ":4: graph id 1 follows 2: a graph's vertices must be consecutive");
  expect("graph_indicator", "1\n1\n1\n3\n3\n",
         gi + ":4: graph id 3 follows 1: graph 2 has no vertices");
  expect("graph_indicator", "2\n2\n", gi + ":1: graph id 2 comes first; graph ids start at 1");
  expect("graph_indicator", "1\n\n1\n", gi + ":2: blank line before the last graph id");
  expect("graph_labels", "1\n", gl + ": has 1 labels; " + gi + " has 2 graphs");
  expect("graph_labels", "1\n1\n",
         gl + ": every graph has the same label; a classifier needs two classes or more");
  expect("node_labels", "1\n2\n", nl + ": has 2 labels; " + gi + " has 5 vertices");
  t.writeSmall();
  t.write("node_attributes", "1, 2\n3\n");
  EXPECT_EQ(errorOf(loadTUDataset(t.dir)), na + ":2: has 1 attributes; the first line has 2");
  t.write("node_attributes", "1\n2\nnan\n4\n5\n");
  EXPECT_EQ(errorOf(loadTUDataset(t.dir)), na + ":3: 'nan' is not a finite number");
  t.write("node_attributes", "1\n2\n3\n");
  EXPECT_EQ(errorOf(loadTUDataset(t.dir)), na + ": has 3 rows; " + gi + " has 5 vertices");
  llvm::sys::fs::remove(na);
  llvm::sys::fs::remove(t.path("A"));
  EXPECT_EQ(errorOf(loadTUDataset(t.dir)).rfind("cannot open " + A + ": ", 0), 0u);
  llvm::sys::fs::remove(gi);
  EXPECT_EQ(errorOf(loadTUDataset(t.dir)),
            t.dir + ": a TU dataset folder holds one NAME_graph_indicator.txt; found none");
}

TEST(GraphDataset, NamesAMissingOrAmbiguousDataset) {
  TUFolder t("folder");
  t.writeSmall();
  llvm::sys::fs::remove(t.path("graph_labels"));
  EXPECT_EQ(errorOf(loadTUDataset(t.dir))
                .rfind("cannot open " + t.path("graph_labels") + ": ", 0),
            0u);
  t.writeSmall();
  std::error_code ec;
  llvm::raw_fd_ostream(t.dir + "/U_graph_indicator.txt", ec) << "1\n";
  EXPECT_EQ(errorOf(loadTUDataset(t.dir)),
            t.dir + ": a TU dataset folder holds one "
                    "NAME_graph_indicator.txt; found T, U");
}

// One-hot node labels are as wide as the labels are many: a small file
// can ask for V x V floats, refused before they are allocated.
TEST(GraphDataset, RefusesFeaturesThatCannotFit) {
  setenv("SAGA_AVAILABLE_MEMORY", "1M", 1);
  TUFolder t("memory");
  std::string indicator, nodeLabels;
  for (int v = 0; v < 1000; ++v) {
    indicator += v < 500 ? "1\n" : "2\n";
    nodeLabels += std::to_string(v) + "\n";
  }
  t.writeSmall();
  t.write("A", "");
  t.write("graph_indicator", indicator);
  t.write("node_labels", nodeLabels);
  EXPECT_EQ(errorOf(loadTUDataset(t.dir)),
            t.dir + ": 1000 vertices x 1000 feature columns (1000 node "
                    "labels one-hot, 0 attributes) and 0 edges needs "
                    "3.85 MiB; 1.00 MiB is available (SAGA_AVAILABLE_MEMORY)");
  // An .npz's offsets can name 2^31 - 1 vertices in a few bytes.
  std::vector<int64_t> offsets{0, 1, (int64_t(1) << 31) - 1};
  std::vector<int32_t> none, labels{0, 1};
  std::string path = t.dir + "/huge.npz";
  ASSERT_FALSE(
      bool(writeNpz(path, {{"graph_offsets", "<i8", {3}, offsets.data(), 24},
                           {"src", "<i4", {0}, none.data(), 0},
                           {"dst", "<i4", {0}, none.data(), 0},
                           {"graph_labels", "<i4", {2}, labels.data(), 8}})));
  EXPECT_EQ(errorOf(loadGraphDatasetNpz(path)),
            path + ": 2147483647 vertices x 1 feature column and 0 edges "
                   "needs 88.0 GiB; 1.00 MiB is available "
                   "(SAGA_AVAILABLE_MEMORY)");
}

TEST(GraphDataset, ReadsAnNpzByGraphIndicator) {
  TUFolder t("npz-indicator");
  std::string path = t.dir + "/ind.npz";
  auto write = [&](std::vector<int64_t> indicator) {
    std::vector<int32_t> src{0, 1, 3}, dst{1, 2, 4}, labels{5, 2};
    return writeNpz(path, {{"graph_indicator",
                            "<i8",
                            {int64_t(indicator.size())},
                            indicator.data(),
                            indicator.size() * 8},
                           {"src", "<i4", {3}, src.data(), 12},
                           {"dst", "<i4", {3}, dst.data(), 12},
                           {"graph_labels", "<i4", {2}, labels.data(), 8}});
  };
  ASSERT_FALSE(bool(write({0, 0, 0, 1, 1})));
  auto d = loadGraphDatasetNpz(path);
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(d->name, "ind");
  EXPECT_EQ(d->graphOffsets, (std::vector<int64_t>{0, 3, 5}));
  EXPECT_EQ(d->edgeOffsets, (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(d->graphLabels, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(d->labelValues, (std::vector<int64_t>{2, 5}));
  ASSERT_EQ(d->features.shape(), (std::vector<int64_t>{5, 1}));
  EXPECT_EQ(std::vector<float>(d->features.f32(), d->features.f32() + 5),
            std::vector<float>(5, 1.0f));
  ASSERT_FALSE(bool(write({1, 1, 1, 2, 2})));
  EXPECT_EQ(errorOf(loadGraphDatasetNpz(path)),
            path + ": graph_indicator[0]: graph id 1 comes first; graph ids "
                   "start at 0");
  ASSERT_FALSE(bool(write({0, 0, 0, 2, 2})));
  EXPECT_EQ(errorOf(loadGraphDatasetNpz(path)),
            path + ": graph_indicator[3]: graph id 2 follows 0: graph 1 has "
                   "no vertices");
  ASSERT_FALSE(bool(write({0, 0, 1, 0, 1})));
  EXPECT_EQ(errorOf(loadGraphDatasetNpz(path)),
            path + ": graph_indicator[3]: graph id 0 follows 1: a graph's "
                   "vertices must be consecutive");
}

TEST(GraphDataset, RoundTripsThroughNpz) {
  TUFolder t("npz");
  t.writeSmall();
  auto d = loadTUDataset(t.dir);
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  std::string path = t.dir + "/small.npz";
  ASSERT_FALSE(bool(writeGraphDatasetNpz(*d, path)));
  auto back = loadGraphDataset(path);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->name, "small");
  EXPECT_EQ(back->graphOffsets, d->graphOffsets);
  EXPECT_EQ(back->edgeOffsets, d->edgeOffsets);
  EXPECT_EQ(back->src, d->src);
  EXPECT_EQ(back->dst, d->dst);
  EXPECT_EQ(back->graphLabels, d->graphLabels);
  ASSERT_EQ(back->features.shape(), d->features.shape());
  EXPECT_TRUE(std::equal(d->features.f32(),
                         d->features.f32() + d->features.numElements(),
                         back->features.f32()));
}

TEST(GraphDataset, ReportsAMalformedNpz) {
  TUFolder t("npz-errors");
  t.writeSmall();
  auto d = loadTUDataset(t.dir);
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  std::string path = t.dir + "/bad.npz";
  GraphDataset joined = *d;
  joined.dst[0] = 3; // 0 -> 3 joins the two graphs
  ASSERT_FALSE(bool(writeGraphDatasetNpz(joined, path)));
  EXPECT_EQ(errorOf(loadGraphDatasetNpz(path)),
            path + ": edge 0 (0 -> 3) joins two graphs");
  GraphDataset empty = *d;
  empty.graphOffsets = {0, 0, 5};
  ASSERT_FALSE(bool(writeGraphDatasetNpz(empty, path)));
  EXPECT_EQ(errorOf(loadGraphDatasetNpz(path)),
            path + ": graph 0 has no vertices (graph_offsets must increase)");
}

TEST(GraphDataset, BatchesAreDisjointUnionsInTheOrderGiven) {
  TUFolder t("batch");
  t.writeSmall();
  auto d = loadTUDataset(t.dir);
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  GraphBatch b = makeGraphBatch(*d, {1, 0, 1}, /*addSelfLoops=*/true);
  EXPECT_EQ(b.offsets, (std::vector<int64_t>{0, 2, 5, 7}));
  EXPECT_EQ(b.graph.graphOffsets, b.offsets);
  EXPECT_EQ(b.firsts, (std::vector<int32_t>{0, 2, 5}));
  EXPECT_EQ(std::vector<int32_t>(b.labels.i32(), b.labels.i32() + 7),
            (std::vector<int32_t>{1, -1, 0, -1, -1, 1, -1}));
  ASSERT_EQ(b.graph.numVertices, 7);
  EXPECT_EQ(b.graph.numEdges, 2 + 4 + 2 + 7); // with one self loop each
  // Graph 1's edge 3 <-> 4 at rows 0 <-> 1 and 5 <-> 6; graph 0's path at 2..4.
  auto inNeighbours = [&](int32_t v) {
    std::vector<int32_t> n(b.graph.inSources.begin() + b.graph.inOffsets[v],
                           b.graph.inSources.begin() + b.graph.inOffsets[v + 1]);
    return n;
  };
  EXPECT_EQ(inNeighbours(0), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(inNeighbours(3), (std::vector<int32_t>{2, 3, 4}));
  EXPECT_EQ(inNeighbours(6), (std::vector<int32_t>{5, 6}));
  // Rows keep their vertex's features: row 2 is graph 0's vertex 0.
  EXPECT_EQ(b.features.f32()[2 * 3 + 2], 1.0f); // node label 7
}

TEST(GraphDataset, StratifiedFoldsPartitionAndBalance) {
  std::vector<int32_t> labels;
  for (int i = 0; i < 188; ++i)
    labels.push_back(i % 3 == 0 ? 0 : 1);
  auto folds = stratifiedFolds(labels, 10, 7);
  ASSERT_EQ(folds.size(), 10u);
  std::vector<int32_t> all;
  std::map<int32_t, std::vector<int64_t>> perClass;
  for (const auto &f : folds) {
    EXPECT_TRUE(std::is_sorted(f.begin(), f.end()));
    all.insert(all.end(), f.begin(), f.end());
    int64_t c0 = std::count_if(f.begin(), f.end(),
                               [&](int32_t g) { return labels[g] == 0; });
    perClass[0].push_back(c0);
    perClass[1].push_back(int64_t(f.size()) - c0);
  }
  std::sort(all.begin(), all.end());
  std::vector<int32_t> every(188);
  std::iota(every.begin(), every.end(), 0);
  EXPECT_EQ(all, every);
  for (auto &[label, counts] : perClass)
    EXPECT_LE(*std::max_element(counts.begin(), counts.end()) -
                  *std::min_element(counts.begin(), counts.end()),
              1)
        << "class " << label;
  EXPECT_EQ(stratifiedFolds(labels, 10, 7), folds);
  EXPECT_NE(stratifiedFolds(labels, 10, 8), folds);
}

} // namespace
