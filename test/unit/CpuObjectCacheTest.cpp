//===- CpuObjectCacheTest.cpp - the CPU kernels' object cache -------------===//
//
// CpuKernels::compile keeps each kernel set's object code on disk
// ($SAGA_CPU_CACHE): a second compile of the same model loads it and runs
// bit for bit as the compiled one; another model, or the other math mode,
// is another entry; a damaged entry is a miss, compiled and replaced;
// SAGA_CPU_CACHE=off writes nothing.
//
//===----------------------------------------------------------------------===//

#include "TrainingTestUtil.h"
#include "codegen/cpu/CpuJit.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace saga;
using namespace sagatest::training;
namespace fs = std::filesystem;

namespace {

/// A fresh cache folder for one test, set as SAGA_CPU_CACHE.
struct CacheFolder {
  fs::path dir;
  explicit CacheFolder(const std::string &name)
      : dir(fs::path(SAGA_TEST_SCRATCH_DIR) / ("cpu-cache-" + name)) {
    fs::remove_all(dir);
    setenv("SAGA_CPU_CACHE", dir.c_str(), 1);
  }
  ~CacheFolder() { unsetenv("SAGA_CPU_CACHE"); }
  std::vector<fs::path> entries() const {
    std::vector<fs::path> out;
    if (fs::exists(dir))
      for (const auto &e : fs::directory_iterator(dir))
        out.push_back(e.path());
    return out;
  }
};

struct Step {
  CompileStats stats;
  TrainStepResult step;
};

Step compileAndStep(const std::string &source, const char *key) {
  auto m = tinyModel(source, key);
  EXPECT_TRUE(m);
  if (!m)
    return {};
  ForwardOptions fo;
  fo.lossMask = lossMask(graphFor("tiny", m->selfLoops()));
  auto step = m->trainStep(fo, 7);
  EXPECT_TRUE(bool(step)) << errorText(step.takeError());
  return {m->compileStats(), step ? std::move(*step) : TrainStepResult{}};
}

TEST(CpuObjectCache, ASecondCompileLoadsTheObjectsAndGivesTheSameBits) {
  CacheFolder cache("same");
  std::string gcn = example(kGcn, "0.5");
  Step first = compileAndStep(gcn, "cache_gcn");
  EXPECT_EQ(first.stats.kernelSets, 2); // inference and training
  EXPECT_EQ(first.stats.kernelSetsCached, 0);
  ASSERT_EQ(cache.entries().size(), 2u);
  for (const fs::path &p : cache.entries()) {
    EXPECT_EQ(p.extension(), ".o") << p; // no temporary left behind
    EXPECT_GT(fs::file_size(p), 0u);
  }

  Step second = compileAndStep(gcn, "cache_gcn");
  EXPECT_EQ(second.stats.kernelSetsCached, 2);
  EXPECT_TRUE(sameStep(first.step, second.step, "compiled vs cached"));
  EXPECT_EQ(cache.entries().size(), 2u);

  // Another model is another entry; the first model's stay.
  Step sage = compileAndStep(example(kSage, "0.5"), "cache_sage");
  EXPECT_EQ(sage.stats.kernelSetsCached, 0);
  EXPECT_EQ(cache.entries().size(), 4u);
}

TEST(CpuObjectCache, TheMathModeIsPartOfTheKey) {
  CacheFolder cache("math");
  std::string gcn = example(kGcn, "0.0");
  unsetenv("SAGA_EXACT_MATH");
  Step approximate = compileAndStep(gcn, "cache_math");
  setenv("SAGA_EXACT_MATH", "1", 1);
  Step exact = compileAndStep(gcn, "cache_math");
  unsetenv("SAGA_EXACT_MATH");
  EXPECT_EQ(exact.stats.kernelSetsCached, 0);
  EXPECT_EQ(cache.entries().size(), 4u);
  Step again = compileAndStep(gcn, "cache_math");
  EXPECT_EQ(again.stats.kernelSetsCached, 2);
  EXPECT_TRUE(sameStep(approximate.step, again.step, "approximate math"));
}

TEST(CpuObjectCache, ADamagedEntryIsCompiledAgainAndReplaced) {
  CacheFolder cache("damaged");
  std::string gcn = example(kGcn, "0.5");
  Step first = compileAndStep(gcn, "cache_damaged");
  auto entries = cache.entries();
  ASSERT_EQ(entries.size(), 2u);
  // One truncated to half, one overwritten with text: neither links.
  auto size = fs::file_size(entries[0]);
  fs::resize_file(entries[0], size / 2);
  std::ofstream(entries[1], std::ios::trunc) << "not an object file\n";

  Step second = compileAndStep(gcn, "cache_damaged");
  EXPECT_EQ(second.stats.kernelSetsCached, 0);
  EXPECT_TRUE(sameStep(first.step, second.step, "after damage"));
  EXPECT_EQ(fs::file_size(entries[0]), size); // replaced whole

  Step third = compileAndStep(gcn, "cache_damaged");
  EXPECT_EQ(third.stats.kernelSetsCached, 2);
  EXPECT_TRUE(sameStep(first.step, third.step, "the replaced entries"));
}

TEST(CpuObjectCache, OffWritesNothing) {
  CacheFolder cache("off");
  setenv("SAGA_CPU_CACHE", "off", 1);
  EXPECT_EQ(CpuKernels::objectCacheFolder(), "");
  std::string gcn = example(kGcn, "0.5");
  Step a = compileAndStep(gcn, "cache_off"), b = compileAndStep(gcn, "cache_off");
  EXPECT_EQ(a.stats.kernelSetsCached + b.stats.kernelSetsCached, 0);
  EXPECT_TRUE(sameStep(a.step, b.step, "uncached twice"));
  EXPECT_FALSE(fs::exists(cache.dir));
}

} // namespace
