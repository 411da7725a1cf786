//===- GcnReferenceTest.cpp - GCN on Cora against fixed-weight logits -----===//
//
// examples/gcn.saga with the closed-form weights of
// test/data/gcn_cora_forward/README.md must reproduce its logits.txt (computed
// in float64) to 1e-4, with 1 and 2 threads, bit-identically, and on the
// graph relabelled in degree order (runtime/graph/Reorder.h) once its rows are put
// back in the input's order.
//
//===----------------------------------------------------------------------===//

#include "runtime/graph/Loaders.h"
#include "api/Model.h"
#include "runtime/graph/Reorder.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cstring>

#include <cmath>
#include <cstdlib>

using namespace saga;

namespace {

Tensor matrix(int64_t rows, int64_t cols, int64_t a, int64_t b, int64_t c,
              int64_t mod, int64_t shift, double scale) {
  Tensor t({rows, cols});
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      t.f32()[i * cols + j] =
          float(double((i * a + j * b + c) % mod - shift) / scale);
  return t;
}

Tensor vector(int64_t n, int64_t a, int64_t c, int64_t mod, int64_t shift,
              double scale) {
  Tensor t({n});
  for (int64_t j = 0; j < n; ++j)
    t.f32()[j] = float(double((j * a + c) % mod - shift) / scale);
  return t;
}

std::vector<double> readNumbers(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  EXPECT_TRUE(bool(buffer)) << "cannot open " << path;
  std::vector<double> values;
  if (!buffer)
    return values;
  std::string text = (*buffer)->getBuffer().str();
  const char *p = text.c_str();
  char *end;
  for (double v = std::strtod(p, &end); end != p; v = std::strtod(p, &end)) {
    values.push_back(v);
    p = end;
  }
  return values;
}

/// The logits in Cora's vertex order; with `reorder`, computed on the graph
/// relabelled in degree order.
Tensor runGcn(unsigned threads, bool reorder = false) {
  auto data = loadPlanetoid(SAGA_EXAMPLES_DIR "/data/cora");
  EXPECT_TRUE(bool(data)) << llvm::toString(data.takeError());
  rowNormalize(data->features);
  VertexOrder order = degreeOrder(data->edges);
  if (reorder)
    relabel(*data, order);
  CompileOptions options;
  options.threads = threads;
  auto model = Model::compileFile(SAGA_EXAMPLES_DIR "/gcn.saga", options);
  EXPECT_TRUE(bool(model)) << llvm::toString(model.takeError());
  Graph graph = Graph::build(data->edges.numVertices, data->edges.src,
                             data->edges.dst, (*model)->selfLoops());
  Model &m = **model;
  EXPECT_FALSE(bool(m.setGraph(graph)));
  EXPECT_FALSE(bool(m.setInput("x", data->features)));
  Tensor labels({graph.numVertices}, DType::I32);
  std::copy(data->labels.begin(), data->labels.end(), labels.i32());
  EXPECT_FALSE(bool(m.setInput("label", std::move(labels))));
  EXPECT_FALSE(bool(m.setParam("GCNConv#0.W",
                               matrix(1433, 16, 131, 71, 7, 257, 128, 128))));
  EXPECT_FALSE(bool(m.setParam("GCNConv#0.b", vector(16, 37, 11, 29, 14, 128))));
  EXPECT_FALSE(bool(m.setParam("GCNConv#1.W",
                               matrix(16, 7, 53, 97, 3, 61, 30, 32))));
  EXPECT_FALSE(bool(m.setParam("GCNConv#1.b", vector(7, 19, 5, 13, 6, 64))));
  auto result = m.forward();
  EXPECT_TRUE(bool(result)) << llvm::toString(result.takeError());
  return reorder ? unpermuteRows(result->prediction, order)
                 : std::move(result->prediction);
}

void expectCoraLogits(const Tensor &logits) {
  std::vector<double> expected =
      readNumbers(SAGA_TEST_DATA_DIR "/gcn_cora_forward/logits.txt");
  ASSERT_EQ(logits.shape(), (std::vector<int64_t>{2708, 7}));
  ASSERT_EQ(expected.size(), size_t(2708 * 7));
  double worst = 0;
  for (size_t i = 0; i < expected.size(); ++i)
    worst = std::max(worst, std::fabs(double(logits.f32()[i]) - expected[i]));
  EXPECT_LT(worst, 1e-4) << "largest difference from logits.txt";
}

TEST(GcnReference, ReproducesCoraLogits) { expectCoraLogits(runGcn(1)); }

TEST(GcnReference, ReproducesCoraLogitsInDegreeOrder) {
  expectCoraLogits(runGcn(2, /*reorder=*/true));
}

TEST(GcnReference, IdenticalAcrossThreadCounts) {
  Tensor one = runGcn(1), two = runGcn(2);
  ASSERT_EQ(one.shape(), two.shape());
  for (int64_t i = 0; i < one.numElements(); ++i)
    ASSERT_EQ(one.f32()[i], two.f32()[i]) << "element " << i;
  for (unsigned threads : {3u, 4u, 7u}) {
    Tensor t = runGcn(threads);
    ASSERT_EQ(std::memcmp(one.f32(), t.f32(), size_t(one.numElements()) * 4), 0)
        << "1 vs " << threads << " threads";
  }
  Tensor again = runGcn(2);
  for (int64_t i = 0; i < one.numElements(); ++i)
    ASSERT_EQ(two.f32()[i], again.f32()[i]) << "element " << i;
}

} // namespace
