//===- NpzWriterTest.cpp - datasets written as NumPy .npz -----------------===//
//
// writeNpz / writeNpzDataset (runtime/graph/Numpy.h): what they write reads
// back through loadNpzDataset and readNpz with the same values, in the plain
// ZIP form and in the ZIP64 form (forced here with a low threshold; real
// files take it past 4 GiB), and NumPy's own np.load reads both.
//
//===----------------------------------------------------------------------===//

#include "runtime/graph/Numpy.h"
#include "runtime/graph/Synthetic.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace saga;

namespace {

std::string tempPath(const std::string &name) {
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("saga-npz", dir);
  return std::string(dir) + "/" + name;
}

TEST(NpzWriter, DatasetReadsBackTheSame) {
  auto d = loadSyntheticDataset("rmat:scale=8,edge-factor=4,features=5,classes=3");
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  const std::string path = tempPath("rmat.npz");
  ASSERT_FALSE(bool(writeNpzDataset(path, *d)));
  EXPECT_TRUE(isNpzFile(path));
  auto back = loadNpzDataset(path);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->edges.numVertices, d->edges.numVertices);
  EXPECT_EQ(back->edges.src, d->edges.src);
  EXPECT_EQ(back->edges.dst, d->edges.dst);
  ASSERT_EQ(back->features.shape(), d->features.shape());
  EXPECT_TRUE(std::equal(d->features.f32(),
                         d->features.f32() + d->features.numElements(),
                         back->features.f32()));
  EXPECT_EQ(back->labels, d->labels);
  EXPECT_EQ(back->train, d->train);
  EXPECT_EQ(back->val, d->val);
  EXPECT_EQ(back->test, d->test);
}

TEST(NpzWriter, Zip64FormReadsBack) {
  std::vector<float> a = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -0.5f};
  std::vector<int32_t> b = {4, 5, 6};
  std::vector<uint8_t> c = {1, 0, 1};
  for (uint64_t from : {uint64_t(0), uint64_t(100), uint64_t(0xffffffffu)}) {
    SCOPED_TRACE("ZIP64 from " + std::to_string(from));
    const std::string path = tempPath("z.npz");
    ASSERT_FALSE(bool(writeNpz(path,
                               {{"a", "<f4", {2, 3}, a.data(), a.size() * 4},
                                {"b", "<i4", {3}, b.data(), b.size() * 4},
                                {"c", "|b1", {3}, c.data(), c.size()}},
                               from)));
    auto arrays = readNpz(path);
    ASSERT_TRUE(bool(arrays)) << llvm::toString(arrays.takeError());
    ASSERT_EQ(arrays->size(), 3u);
    const NpyArray &x = arrays->at("a");
    EXPECT_EQ(x.shape, (std::vector<int64_t>{2, 3}));
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_EQ(x.asDouble(int64_t(i)), a[i]);
    for (size_t i = 0; i < b.size(); ++i)
      EXPECT_EQ(arrays->at("b").asInt(int64_t(i)), b[i]);
    EXPECT_EQ(arrays->at("c").kind, 'b');
    EXPECT_EQ(arrays->at("c").asInt(1), 0);
    // NumPy's reader, where Debian's python3 has numpy.
    if (std::system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") != 0)
      continue;
    std::string check =
        "/usr/bin/python3 -c \"import numpy as np, sys; z = np.load('" + path +
        "'); sys.exit(0 if z['a'].tolist() == [[1.5, -2.0, 3.25], [0.0, 7.0, "
        "-0.5]] and z['b'].tolist() == [4, 5, 6] and z['c'].tolist() == "
        "[True, False, True] else 1)\"";
    EXPECT_EQ(std::system(check.c_str()), 0) << check;
  }
}

} // namespace
