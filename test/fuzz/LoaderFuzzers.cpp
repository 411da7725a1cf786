//===- LoaderFuzzers.cpp - libFuzzer targets for every file a user gives --===//
//
// One fuzzer per format, chosen at compile time by SAGA_FUZZ_TARGET (each
// is its own executable, test/CMakeLists.txt): every input must load or
// give an error (llvm::Error), never crash, hang, abort on a loaded graph
// (FuzzFiles.h checks what trainers index without checking) or allocate
// what it was not refused. Seed corpora: test/fuzz/corpus/<target>/.
//
//===----------------------------------------------------------------------===//

#include "FuzzFiles.h"

#include "runtime/graph/EdgeSplit.h"
#include "runtime/graph/GraphDataset.h"
#include "runtime/graph/GraphFile.h"
#include "runtime/graph/Numpy.h"
#include "runtime/graph/OgbFolder.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/ParamsFile.h"

#include <zlib.h>

using namespace saga;

namespace {

#define SAGA_FUZZ_planetoid 1
#define SAGA_FUZZ_edgelist 2
#define SAGA_FUZZ_mtx 3
#define SAGA_FUZZ_npy 4
#define SAGA_FUZZ_npz 5
#define SAGA_FUZZ_ogb 6
#define SAGA_FUZZ_sgf 7
#define SAGA_FUZZ_params 8
#define SAGA_FUZZ_checkpoint 9
#define SAGA_FUZZ_tu 10
#define SAGA_FUZZ_graphnpz 11
#define SAGA_FUZZ_edgesplit 12
#define SAGA_FUZZ_ID_(t) SAGA_FUZZ_##t
#define SAGA_FUZZ_ID(t) SAGA_FUZZ_ID_(t)

[[maybe_unused]] void planetoid(const uint8_t *data, size_t size) {
  static const char *names[] = {"meta.txt",   "edges.txt", "features.txt",
                                "labels.txt", "train.txt", "val.txt",
                                "test.txt"};
  auto p = fuzz::parts(data, size, 7);
  for (size_t i = 0; i < 7; ++i)
    fuzz::write(std::string("planetoid/") + names[i], p[i]);
  auto d = loadPlanetoid(fuzz::dir() + "/planetoid");
  if (d)
    fuzz::check(*d);
  fuzz::drop(std::move(d));
}

[[maybe_unused]] void edgeList(const uint8_t *data, size_t size) {
  std::string path = fuzz::write("edges.txt", fuzz::bytes(data, size));
  for (int64_t n : {int64_t(-1), int64_t(64)}) {
    auto e = loadEdgeList(path, n, /*maxEdges=*/1 << 16);
    if (e)
      fuzz::build(*e);
    fuzz::drop(std::move(e));
  }
}

[[maybe_unused]] void matrixMarket(const uint8_t *data, size_t size) {
  std::string path = fuzz::write("graph.mtx", fuzz::bytes(data, size));
  auto e = loadMatrixMarket(path);
  if (e)
    fuzz::build(*e);
  fuzz::drop(std::move(e));
}

[[maybe_unused]] void npy(const uint8_t *data, size_t size) {
  auto a = parseNpy(fuzz::bytes(data, size), "fuzz.npy");
  if (a)
    for (int64_t i = 0; i < std::min<int64_t>(a->size(), 64); ++i)
      (void)(a->kind == 'f' ? a->asDouble(i) : double(a->asInt(i)));
  fuzz::drop(std::move(a));
}

[[maybe_unused]] void npz(const uint8_t *data, size_t size) {
  std::string path = fuzz::write("data.npz", fuzz::bytes(data, size));
  auto d = loadNpzDataset(path);
  if (d)
    fuzz::check(*d);
  fuzz::drop(std::move(d));
}

/// Each part gzipped, unless it starts as a gzip stream already (then
/// written as is, so corrupt streams are fuzzed too).
[[maybe_unused]] void ogb(const uint8_t *data, size_t size) {
  static const char *names[] = {
      "raw/num-node-list.csv.gz", "raw/node-feat.csv.gz",
      "raw/node-label.csv.gz",    "raw/edge.csv.gz",
      "split/fuzz/train.csv.gz",  "split/fuzz/valid.csv.gz",
      "split/fuzz/test.csv.gz"};
  auto p = fuzz::parts(data, size, 7);
  for (size_t i = 0; i < 7; ++i) {
    std::string name = std::string("ogb/") + names[i];
    if (p[i].starts_with("\x1f\x8b")) {
      fuzz::write(name, p[i]);
      continue;
    }
    std::string path = fuzz::write(name, "");
    gzFile f = gzopen(path.c_str(), "wb1");
    if (!p[i].empty())
      gzwrite(f, p[i].data(), unsigned(p[i].size()));
    gzclose(f);
  }
  // The vertex count file is optional: an empty part leaves it out.
  if (p[0].empty())
    std::remove((fuzz::dir() + "/ogb/raw/num-node-list.csv.gz").c_str());
  auto d = loadOgbFolder(fuzz::dir() + "/ogb");
  if (d)
    fuzz::check(*d);
  fuzz::drop(std::move(d));
}

[[maybe_unused]] void graphFile(const uint8_t *data, size_t size) {
  std::string path = fuzz::write("graph.sgf", fuzz::bytes(data, size));
  auto file = GraphFile::open(path);
  if (!file) {
    llvm::consumeError(file.takeError());
    return;
  }
  GraphFile &f = **file;
  auto all = f.readAll();
  if (all)
    fuzz::check(*all);
  fuzz::drop(std::move(all));
  fuzz::drop(f.readSkeleton(true));
  fuzz::drop(f.readLabelsOnly());
  const int64_t p = std::min<int64_t>(f.info().intervals, 4);
  for (int64_t j = 0; j < p; ++j) {
    fuzz::drop(f.readFeatures(j));
    for (int64_t i = 0; i < p; ++i) {
      auto chunk = f.readChunk(i, j);
      if (chunk)
        for (const ChunkEdge &e : *chunk)
          if (e.dst < f.bounds()[size_t(j)] ||
              e.dst >= f.bounds()[size_t(j) + 1] ||
              e.src < f.bounds()[size_t(i)] ||
              e.src >= f.bounds()[size_t(i) + 1])
            std::abort(); // a chunk read as valid holds only its edges
      fuzz::drop(std::move(chunk));
      for (bool targets : {false, true}) {
        auto rows = f.readChunkRows(i, j, targets);
        if (rows && *rows) {
          const int64_t end = targets ? j : i;
          const int32_t count = f.bounds()[size_t(end) + 1] - f.bounds()[size_t(end)];
          if (int64_t((*rows)->size()) != f.chunkRowCount(i, j, targets))
            std::abort(); // a list read as valid has its counted rows
          for (int32_t r : **rows)
            if (r < 0 || r >= count)
              std::abort(); // ... each in its interval
        }
        fuzz::drop(std::move(rows));
      }
    }
  }
  GraphFileChunks chunks(f, true);
  for (bool reversed : {false, true})
    (void)chunks.chunkRowCounts(reversed, f.bounds());
}

/// A dataset of many graphs as loaded: batches of its graphs build (the
/// trainers index offsets, edges and labels without checking again).
void checkGraphs(const GraphDataset &d) {
  if (d.numGraphs() < 1 || d.graphOffsets.front() != 0 ||
      d.edgeOffsets.size() != d.graphOffsets.size() ||
      int64_t(d.graphLabels.size()) != d.numGraphs() ||
      d.features.rows() != d.numVertices())
    std::abort();
  for (int32_t c : d.graphLabels)
    if (c < 0 || c >= d.numClasses())
      std::abort();
  std::vector<int32_t> ids;
  for (int64_t g = 0; g < std::min<int64_t>(d.numGraphs(), 16); ++g)
    ids.push_back(int32_t(d.numGraphs() - 1 - g));
  GraphBatch b = makeGraphBatch(d, ids, true);
  if (!b.graph.graphOffsetsError().empty())
    std::abort();
}

/// A TU folder: A, graph_indicator, graph_labels, node_labels and
/// node_attributes (an empty part leaves the optional ones out).
[[maybe_unused]] void tu(const uint8_t *data, size_t size) {
  static const char *names[] = {"A", "graph_indicator", "graph_labels",
                                "node_labels", "node_attributes"};
  auto p = fuzz::parts(data, size, 5);
  for (size_t i = 0; i < 5; ++i) {
    std::string name = std::string("tu/F_") + names[i] + ".txt";
    fuzz::write(name, p[i]);
    if (i >= 3 && p[i].empty())
      std::remove((fuzz::dir() + "/" + name).c_str());
  }
  auto d = loadTUDataset(fuzz::dir() + "/tu");
  if (d)
    checkGraphs(*d);
  fuzz::drop(std::move(d));
}

[[maybe_unused]] void graphNpz(const uint8_t *data, size_t size) {
  std::string path = fuzz::write("graphs.npz", fuzz::bytes(data, size));
  auto d = loadGraphDatasetNpz(path);
  if (d)
    checkGraphs(*d);
  fuzz::drop(std::move(d));
}

/// Link prediction's split files (train_pos, val_pos, val_neg, test_pos,
/// test_neg) for a graph of 8 vertices, read undirected and directed: a
/// loaded split has its ids in range and no held-out positive in train_pos.
[[maybe_unused]] void edgeSplit(const uint8_t *data, size_t size) {
  std::string path = fuzz::write("split.npz", fuzz::bytes(data, size));
  for (bool undirected : {true, false}) {
    auto s = loadEdgeSplitNpz(path, 8, undirected);
    if (s) {
      EdgeList g = s->messageGraph();
      for (size_t i = 0; i < g.src.size(); ++i)
        if (g.src[i] < 0 || g.src[i] >= 8 || g.dst[i] < 0 || g.dst[i] >= 8)
          __builtin_trap();
      for (const VertexPairs *p : {&s->valPos, &s->testPos})
        for (size_t i = 0; i < p->size(); ++i)
          for (size_t j = 0; j < s->trainPos.size(); ++j)
            if (p->src[i] == s->trainPos.src[j] &&
                p->dst[i] == s->trainPos.dst[j])
              __builtin_trap();
    }
    fuzz::drop(std::move(s));
  }
}

[[maybe_unused]] void params(const uint8_t *data, size_t size) {
  std::string path = fuzz::write("params.txt", fuzz::bytes(data, size));
  fuzz::drop(loadParamsFile(path));
}

[[maybe_unused]] void checkpoint(const uint8_t *data, size_t size) {
  std::string path = fuzz::write("run.ckpt", fuzz::bytes(data, size));
  fuzz::drop(loadCheckpoint(path));
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  fuzz::setUp();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
#if SAGA_FUZZ_ID(SAGA_FUZZ_TARGET) == SAGA_FUZZ_planetoid
  planetoid(data, size);
#elif SAGA_FUZZ_ID(SAGA_FUZZ_TARGET) == SAGA_FUZZ_edgelist
  edgeList(data, size);
#elif SAGA_FUZZ_ID(SAGA_FUZZ_TARGET) == SAGA_FUZZ_mtx
  matrixMarket(data, size);
#elif SAGA_FUZZ_ID(SAGA_FUZZ_TARGET) == SAGA_FUZZ_npy
  npy(data, size);
#elif SAGA_FUZZ_ID(SAGA_FUZZ_TARGET) == SAGA_FUZZ_npz
  npz(data, size);
#elif SAGA_FUZZ_ID(SAGA_FUZZ_TARGET) == SAGA_FUZZ_ogb
  ogb(data, size);
#elif SAGA_FUZZ_ID(SAGA_FUZZ_TARGET) == SAGA_FUZZ_sgf
  graphFile(data, size);
#elif SAGA_FUZZ_ID(SAGA_FUZZ_TARGET) == SAGA_FUZZ_params
  params(data, size);
#elif SAGA_FUZZ_ID(SAGA_FUZZ_TARGET) == SAGA_FUZZ_checkpoint
  checkpoint(data, size);
#elif SAGA_FUZZ_ID(SAGA_FUZZ_TARGET) == SAGA_FUZZ_tu
  tu(data, size);
#elif SAGA_FUZZ_ID(SAGA_FUZZ_TARGET) == SAGA_FUZZ_graphnpz
  graphNpz(data, size);
#elif SAGA_FUZZ_ID(SAGA_FUZZ_TARGET) == SAGA_FUZZ_edgesplit
  edgeSplit(data, size);
#else
#error                                                                         \
    "SAGA_FUZZ_TARGET: planetoid, edgelist, mtx, npy, npz, ogb, sgf, params, checkpoint, tu, graphnpz or edgesplit"
#endif
  return 0;
}
