//===- MemoryLimitTest.cpp - absurd sizes are refused before allocating ---===//
//
// runtime/memory/MemoryLimit.h: what bounds the memory available, and one
// test per path a size reaches Saga by (a .saga parameter, a Planetoid
// header, an edge list's ids, a Matrix Market size line, a graph file, an
// edge input's default, a plan's buffers): each is refused with what it
// needs and what is available, before the allocation. (The .npz inflation
// and OGB growth paths: test/formats/; Python's set_graph: its pytest.)
// Every test runs in its own process (ctest), so setenv and setrlimit stay
// in it.
//
//===----------------------------------------------------------------------===//

#include "TestGraphs.h"

#include "api/Model.h"
#include "runtime/graph/GraphFile.h"
#include "runtime/memory/MemoryLimit.h"

#include "llvm/Support/FileSystem.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sys/resource.h>

using namespace saga;
using sagatest::errorText;

namespace {

std::string scratch(const std::string &name) {
  return std::string(SAGA_TEST_SCRATCH_DIR) + "/memory-limit-" +
         std::to_string(getpid()) + "-" + name;
}

std::string writeFile(const std::string &name, const std::string &text) {
  std::string path = scratch(name);
  std::ofstream(path) << text;
  return path;
}

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

TEST(MemoryLimit, BytesSaturateAndFormat) {
  EXPECT_EQ(bytesOf({1000000, 1000000}, 4), 4000000000000ull);
  EXPECT_EQ(bytesOf({int64_t(1) << 40, int64_t(1) << 40}, 4), UINT64_MAX);
  EXPECT_EQ(bytesOf({-3, 5}, 4), 0u);
  EXPECT_EQ(saturatingAdd(UINT64_MAX - 1, 5), UINT64_MAX);
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(1536), "1.50 KiB");
  EXPECT_EQ(formatBytes(4000000000000ull), "3.64 TiB");
  EXPECT_EQ(formatBytes(uint64_t(300) << 20), "300 MiB");
}

TEST(MemoryLimit, FindsTheMachinesMemory) {
  unsetenv("SAGA_AVAILABLE_MEMORY");
  AvailableMemory a = availableMemory();
  EXPECT_GT(a.bytes, uint64_t(16) << 20) << a.boundBy;
  EXPECT_LT(a.bytes, uint64_t(1) << 50) << a.boundBy;
}

TEST(MemoryLimit, EnvironmentReplacesIt) {
  setenv("SAGA_AVAILABLE_MEMORY", "3G", 1);
  AvailableMemory a = availableMemory();
  EXPECT_EQ(a.bytes, uint64_t(3) << 30);
  EXPECT_EQ(a.boundBy, "SAGA_AVAILABLE_MEMORY");
  EXPECT_EQ(errorText(checkMemory(uint64_t(4) << 30, "four")),
            "four needs 4.00 GiB; 3.00 GiB is available "
            "(SAGA_AVAILABLE_MEMORY)");
  EXPECT_EQ(errorText(checkMemory(uint64_t(2) << 30, "two")), "");
}

TEST(MemoryLimit, AddressSpaceLimitBoundsIt) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers' shadow memory needs an unlimited address "
                  "space";
#endif
  unsetenv("SAGA_AVAILABLE_MEMORY");
  auto vmSize = [] {
    std::ifstream status("/proc/self/status");
    std::string line;
    uint64_t kb = 0;
    while (std::getline(status, line))
      if (line.rfind("VmSize:", 0) == 0)
        kb = std::stoull(line.substr(7));
    return kb * 1024;
  };
  // Room for 1 GiB more than the process maps now.
  uint64_t before = vmSize();
  ASSERT_GT(before, 0u);
  struct rlimit r;
  ASSERT_EQ(getrlimit(RLIMIT_AS, &r), 0);
  r.rlim_cur = before + (uint64_t(1) << 30);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &r), 0);
  AvailableMemory a = availableMemory();
  uint64_t after = vmSize();
  EXPECT_EQ(a.boundBy, "RLIMIT_AS (ulimit -v)");
  // The limit less what was mapped when availableMemory() read it: the
  // mapping may grow in between (a thread's arena, OpenBLAS's buffers),
  // so the bound lies between the room before and the room after.
  EXPECT_LE(a.bytes, r.rlim_cur - before);
  EXPECT_GE(a.bytes, r.rlim_cur - after);
  r.rlim_cur = RLIM_INFINITY;
  setrlimit(RLIMIT_AS, &r);
}

// A .saga file: located at the parameter's declaration, at compile time.
TEST(MemoryLimit, HugeParameterIsACompileError) {
  const char *source = "graph { vertex x: f32[4]; vertex label: class[2]; }\n"
                       "layer Big(i: int, o: int) {\n"
                       "  param W: f32[i, o] = glorot;\n"
                       "  gather(sum);\n"
                       "  apply_vertex(v, a) { return a @ W; }\n"
                       "}\n"
                       "model M { h = Big(4, 1000000)(x);\n"
                       "  h = Big(1000000, 1000000)(h);\n"
                       "  out = Big(1000000, 2)(h);\n"
                       "  loss = cross_entropy(out, label); }\n";
  auto m = Model::compileSource(source, "big.saga", {});
  ASSERT_FALSE(bool(m));
  std::string err = llvm::toString(m.takeError());
  EXPECT_TRUE(contains(err, "big.saga:3:9: error: parameter 'Big#1.W' "
                            "f32[1000000, 1000000] needs 3.64 TiB; "))
      << err;
  EXPECT_TRUE(contains(err, " is available (")) << err;
  EXPECT_FALSE(contains(err, "Big#0.W")) << err; // 16 MB fits
}

TEST(MemoryLimit, PlanetoidHeader) {
  setenv("SAGA_AVAILABLE_MEMORY", "1G", 1);
  std::string dir = scratch("planetoid");
  ASSERT_FALSE(llvm::sys::fs::create_directories(dir));
  std::ofstream(dir + "/meta.txt")
      << "num_nodes 2000000000\nnum_edges 3\nnum_features 2\n"
         "num_classes 3\n";
  EXPECT_EQ(errorText(loadPlanetoid(dir).takeError()),
            dir + "/meta.txt: num_nodes 2000000000 with num_features 2 and "
                  "num_edges 3 needs 59.6 GiB; 1.00 GiB is available "
                  "(SAGA_AVAILABLE_MEMORY)");
  std::ofstream(dir + "/meta.txt")
      << "num_nodes 1099511627776\nnum_edges 3\nnum_features 4\n"
         "num_classes 3\n";
  EXPECT_TRUE(contains(errorText(loadPlanetoid(dir).takeError()),
                       "num_nodes '1099511627776' is out of range"));
  std::ofstream(dir + "/meta.txt")
      << "num_nodes 5\nnum_edges 3\nnum_features 1000000000\n"
         "num_classes 3\n";
  EXPECT_EQ(errorText(loadPlanetoid(dir).takeError()),
            dir + "/meta.txt: num_nodes 5 x num_features 1000000000 needs "
                  "5000000000 feature entries (18.6 GiB), more than a dense "
                  "feature matrix holds (4294967296 entries)");
  llvm::sys::fs::remove_directories(dir);
}

TEST(MemoryLimit, EdgeListIds) {
  setenv("SAGA_AVAILABLE_MEMORY", "1G", 1);
  std::string path = writeFile("ids.txt", "0 1\n1 2000000000\n");
  EXPECT_EQ(errorText(loadEdgeList(path).takeError()),
            path + ": ids up to 2000000000: a graph of 2000000001 vertices "
                   "and 2 edges needs 44.7 GiB; 1.00 GiB is available "
                   "(SAGA_AVAILABLE_MEMORY)");
  std::remove(path.c_str());
}

TEST(MemoryLimit, MatrixMarketSizeLine) {
  setenv("SAGA_AVAILABLE_MEMORY", "1G", 1);
  std::string path =
      writeFile("big.mtx", "%%MatrixMarket matrix coordinate pattern general\n"
                           "100000000 100000000 1000000000\n1 2\n");
  EXPECT_EQ(errorText(loadMatrixMarket(path).takeError()),
            path + ":2: the size line's graph: a graph of 100000000 vertices "
                   "and 1000000000 edges needs 17.1 GiB; 1.00 GiB is "
                   "available (SAGA_AVAILABLE_MEMORY)");
  std::remove(path.c_str());
}

TEST(MemoryLimit, GraphFileReadWhole) {
  std::string path = scratch("cora.sgf");
  ASSERT_EQ(errorText(writeGraphFile(path, sagatest::cora(false), 2)), "");
  setenv("SAGA_AVAILABLE_MEMORY", "4M", 1);
  auto file = GraphFile::open(path);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_EQ(errorText((*file)->readAll().takeError()),
            path + ": the whole graph (2708 vertices, 10556 edges, 1433 "
                   "features; a run with --memory-budget streams it "
                   "instead) needs 15.0 MiB; 4.00 MiB is available "
                   "(SAGA_AVAILABLE_MEMORY)");
  // Without the features it fits.
  EXPECT_EQ(errorText((*file)->readAll(false).takeError()), "");
  std::remove(path.c_str());
}

const char *kWide = "graph { vertex x: f32[1433]; vertex label: class[7];\n"
                    "  edge w: f32[512] = 1.0; }\n"
                    "layer Lin(i: int, o: int) {\n"
                    "  param W: f32[i, o] = glorot;\n"
                    "  apply_vertex(v, a) { return v.h @ W; }\n"
                    "}\n"
                    "layer Weigh() {\n"
                    "  apply_edge(e) { return e.src.h * e.w; }\n"
                    "  gather(sum);\n"
                    "  apply_vertex(v, a) { return a; }\n"
                    "}\n"
                    "model M { h = relu(Lin(1433, 512)(x));\n"
                    "  h = Weigh()(h);\n"
                    "  out = Lin(512, 7)(h);\n"
                    "  loss = cross_entropy(out, label); }\n";

std::unique_ptr<Model> wideModel() {
  auto m = Model::compileSource(kWide, "wide.saga", {});
  if (!m) {
    ADD_FAILURE() << llvm::toString(m.takeError());
    return nullptr;
  }
  const Dataset &d = sagatest::cora();
  EXPECT_EQ(errorText((*m)->setGraph(sagatest::graphFor("cora", false))), "");
  EXPECT_EQ(errorText((*m)->setInput("x", d.features)), "");
  Tensor labels({int64_t(d.labels.size())}, DType::I32);
  std::copy(d.labels.begin(), d.labels.end(), labels.i32());
  EXPECT_EQ(errorText((*m)->setInput("label", std::move(labels))), "");
  (*m)->initParams(0);
  return std::move(*m);
}

// An edge input left to its default is made for the graph: E x 512 floats.
TEST(MemoryLimit, DefaultedEdgeInput) {
  auto m = wideModel();
  ASSERT_TRUE(m);
  setenv("SAGA_AVAILABLE_MEMORY", "1M", 1);
  EXPECT_EQ(errorText(m->forward().takeError()),
            "graph input 'w' (its default, one row per edge) needs 20.6 MiB; "
            "1.00 MiB is available (SAGA_AVAILABLE_MEMORY)");
}

// The plan's own buffers: 2708 x 512 activations and more, refused with
// the way out (a memory budget), which then runs.
TEST(MemoryLimit, PlanBuffersPointToTheMemoryBudget) {
  auto m = wideModel();
  ASSERT_TRUE(m);
  Tensor w({sagatest::graphFor("cora", false).numEdges, 512});
  std::fill(w.f32(), w.f32() + w.numElements(), 1.0f);
  ASSERT_EQ(errorText(m->setInput("w", std::move(w))), "");
  setenv("SAGA_AVAILABLE_MEMORY", "4M", 1);
  std::string err = errorText(m->forward().takeError());
  EXPECT_TRUE(contains(err, "the forward pass on this graph (2708 vertices, "
                            "10556 edges) keeps buffers alive at once that "
                            "needs "))
      << err;
  EXPECT_TRUE(contains(err, "; 4.00 MiB is available (SAGA_AVAILABLE_MEMORY): "
                            "run it out of core with a memory budget"))
      << err;
  ForwardOptions o;
  o.memoryBudget = 24 << 20;
  auto out = m->forward(o);
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  EXPECT_EQ(out->prediction.rows(), 2708);
}

} // namespace
