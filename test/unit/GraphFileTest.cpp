//===- GraphFileTest.cpp - the on-disk graph format -----------------------===//

#include "runtime/graph/Crc32.h"
#include "runtime/graph/EdgeChunks.h"
#include "runtime/graph/GraphFile.h"
#include "support/Intervals.h"
#include "runtime/graph/Loaders.h"

#include "TestData.h"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include <unistd.h>

using namespace saga;

namespace {

const Dataset &cora() { return bundledCora(); }

/// A file in the build tree (a real disk: tmpfs refuses O_DIRECT).
std::string scratch(const std::string &name) {
  return std::string(SAGA_TEST_SCRATCH_DIR "/") + name + "." +
         std::to_string(getpid());
}

std::string errorOf(llvm::Error e) {
  return e ? llvm::toString(std::move(e)) : "";
}

std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

/// Writes Cora with `parts` intervals once per test binary (removed when
/// it exits).
const std::string &coraFile(int64_t parts) {
  static struct Files : std::map<int64_t, std::string> {
    ~Files() {
      for (auto &[p, f] : *this)
        std::remove(f.c_str());
    }
  } files;
  auto &f = files[parts];
  if (f.empty()) {
    f = scratch("cora" + std::to_string(parts) + ".sgf");
    EXPECT_EQ(errorOf(writeGraphFile(f, cora(), parts)), "");
  }
  return f;
}

void expectSame(const Dataset &a, const Dataset &b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.edges.numVertices, b.edges.numVertices);
  EXPECT_EQ(a.edges.src, b.edges.src);
  EXPECT_EQ(a.edges.dst, b.edges.dst);
  ASSERT_EQ(a.features.shape(), b.features.shape());
  EXPECT_EQ(std::memcmp(a.features.f32(), b.features.f32(),
                        size_t(a.features.numElements()) * 4),
            0);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.numClasses, b.numClasses);
  EXPECT_EQ(a.train, b.train);
  EXPECT_EQ(a.val, b.val);
  EXPECT_EQ(a.test, b.test);
}

} // namespace

TEST(GraphFile, RoundTripsCora) {
  for (int64_t parts : {1, 4, 7}) {
    for (bool direct : {false, true}) {
      SCOPED_TRACE(std::to_string(parts) + (direct ? " direct" : ""));
      auto file = GraphFile::open(coraFile(parts), direct);
      ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
      EXPECT_EQ((*file)->info().intervals, parts);
      EXPECT_EQ((*file)->info().numEdges, int64_t(cora().edges.src.size()));
      auto d = (*file)->readAll();
      ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
      expectSame(*d, cora());
      EXPECT_GT((*file)->bytesRead(), 2708 * 1433 * 4);
    }
  }
  auto d = loadDataset(coraFile(4));
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  expectSame(*d, cora());
}

// Chunk (i, j) holds exactly the edges from interval i into interval j, in
// in-edge CSR order; each feature interval is its rows.
TEST(GraphFile, ChunksAndFeatureIntervals) {
  for (bool direct : {false, true}) {
    auto file = GraphFile::open(coraFile(4), direct);
    ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
    const auto &b = (*file)->bounds();
    EXPECT_EQ(b, chunkIntervals(2708, 4)); // the chunked level's bounds
    std::set<int32_t> seen;
    for (int64_t j = 0; j < 4; ++j) {
      for (int64_t i = 0; i < 4; ++i) {
        auto chunk = (*file)->readChunk(i, j);
        ASSERT_TRUE(bool(chunk)) << llvm::toString(chunk.takeError());
        for (size_t k = 0; k < chunk->size(); ++k) {
          const ChunkEdge &e = (*chunk)[k];
          EXPECT_GE(e.src, b[size_t(i)]);
          EXPECT_LT(e.src, b[size_t(i) + 1]);
          EXPECT_GE(e.dst, b[size_t(j)]);
          EXPECT_LT(e.dst, b[size_t(j) + 1]);
          EXPECT_EQ(cora().edges.src[size_t(e.id)], e.src);
          EXPECT_EQ(cora().edges.dst[size_t(e.id)], e.dst);
          EXPECT_TRUE(seen.insert(e.id).second);
          if (k > 0) {
            const ChunkEdge &p = (*chunk)[k - 1];
            EXPECT_TRUE(p.dst < e.dst || (p.dst == e.dst && p.src <= e.src));
          }
        }
      }
      auto rows = (*file)->readFeatures(j);
      ASSERT_TRUE(bool(rows)) << llvm::toString(rows.takeError());
      EXPECT_EQ(rows->rows(), b[size_t(j) + 1] - b[size_t(j)]);
      EXPECT_EQ(std::memcmp(rows->f32(), cora().features.f32() + b[size_t(j)] * 1433,
                            size_t(rows->numElements()) * 4),
                0);
      // Into a page-aligned buffer (as the device pool's): with O_DIRECT
      // interval 0, at an aligned offset, reads its aligned bulk straight
      // in and the tail through the bounce buffer; the others go through
      // it whole. The bytes past the rows are left alone.
      const size_t bytes = size_t(rows->numElements()) * 4;
      const size_t padded = (bytes + 4096 + 4095) / 4096 * 4096;
      std::unique_ptr<char, decltype(&std::free)> aligned(
          static_cast<char *>(std::aligned_alloc(4096, padded)), &std::free);
      std::memset(aligned.get(), 0x7f, padded);
      ASSERT_EQ(errorOf((*file)->readFeatureRows(
                    j, reinterpret_cast<float *>(aligned.get()))),
                "");
      EXPECT_EQ(std::memcmp(aligned.get(),
                            cora().features.f32() + b[size_t(j)] * 1433, bytes),
                0);
      EXPECT_EQ(aligned.get()[bytes], 0x7f);
      EXPECT_EQ(aligned.get()[padded - 1], 0x7f);
      // Normalised as read (checksummed and divided a block of rows at a
      // time): each row divided by its sum in double, added one column
      // after another, bit for bit.
      const int64_t n = b[size_t(j) + 1] - b[size_t(j)];
      std::vector<float> want(cora().features.f32() + b[size_t(j)] * 1433,
                              cora().features.f32() + b[size_t(j) + 1] * 1433);
      for (int64_t v = 0; v < n; ++v) {
        double sum = 0;
        for (int64_t f = 0; f < 1433; ++f)
          sum += want[size_t(v * 1433 + f)];
        for (int64_t f = 0; sum != 0 && f < 1433; ++f)
          want[size_t(v * 1433 + f)] = float(want[size_t(v * 1433 + f)] / sum);
      }
      std::vector<float> got(want.size());
      ASSERT_EQ(errorOf((*file)->readFeatureRange(b[size_t(j)], b[size_t(j) + 1],
                                                  got.data(), true)),
                "");
      EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0);
      Tensor whole = Tensor::uninitialized({n, 1433}, DType::F32);
      std::memcpy(whole.f32(), cora().features.f32() + b[size_t(j)] * 1433,
                  want.size() * 4);
      rowNormalize(whole);
      EXPECT_EQ(std::memcmp(whole.f32(), want.data(), want.size() * 4), 0);
    }
    EXPECT_EQ(seen.size(), cora().edges.src.size());
    EXPECT_EQ(errorOf((*file)->readChunk(4, 0).takeError()),
              coraFile(4) + ": no chunk (4, 0) among 4 x 4");
  }
}

// Features that do not fit in memory are written interval by interval from
// a generator: the file is the same, byte for byte, as one written from the
// tensor.
TEST(GraphFile, StreamedFeatureRowsWriteTheSameFile) {
  std::string path = scratch("streamed.sgf");
  Dataset d = cora();
  Tensor features = std::move(d.features);
  d.features = Tensor();
  FeatureRows rows;
  rows.width = 1433;
  int calls = 0;
  rows.fill = [&](int64_t begin, int64_t end, float *to) {
    ++calls;
    std::memcpy(to, features.f32() + begin * 1433, size_t((end - begin) * 1433) * 4);
  };
  ASSERT_EQ(errorOf(writeGraphFile(path, d, 4, &rows)), "");
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(readBytes(path), readBytes(coraFile(4)));
  std::remove(path.c_str());
}

// A streamed chunk that a corrupt file garbles is refused, naming the file
// and the chunk: an edge outside the chunk or out of order (by destination)
// at once, any other change by the chunk's checksum, before its last part
// runs.
TEST(GraphFile, CorruptStreamedChunksAreRefused) {
  std::string good = readBytes(coraFile(4));
  // The chunk-edges section (kind 9): its offset in the section table.
  uint64_t at = 0;
  for (size_t k = 0; k < 17; ++k) {
    uint32_t kind;
    std::memcpy(&kind, good.data() + 96 + k * 32, 4);
    if (kind == 9)
      std::memcpy(&at, good.data() + 96 + k * 32 + 8, 8);
  }
  ASSERT_GT(at, 0u);
  std::string path = scratch("corrupt-chunk.sgf");
  enum Damage { Outside, Unsorted, UnsortedAcrossParts, Id };
  for (Damage damage : {Outside, Unsorted, UnsortedAcrossParts, Id}) {
    std::string bad = good;
    int32_t first[3], later[3]; // chunk (0, 0)'s edges 0 and 6: dst, src, id
    std::memcpy(first, bad.data() + at, 12);
    std::memcpy(later, bad.data() + at + 6 * 12, 12);
    if (damage == Outside) {
      first[0] = 2700; // a destination in the last interval
    } else if (damage == Unsorted) {
      // The first part's (7 records) first and last swapped: a later
      // destination first.
      ASSERT_LT(first[0], later[0]);
      std::memcpy(bad.data() + at + 6 * 12, first, 12);
      std::memcpy(first, later, 12);
    } else if (damage == UnsortedAcrossParts) {
      // Edge 6, the first part's last, swapped with the first later edge
      // of a larger destination: the first part stays in order, the
      // second starts below where the first ended.
      size_t k = 7;
      int32_t next[3];
      for (; k < 200; ++k) {
        std::memcpy(next, bad.data() + at + k * 12, 12);
        if (next[0] > later[0])
          break;
      }
      ASSERT_LT(k, 200u) << "chunk (0, 0) starts with 200 edges into 2 rows";
      std::memcpy(bad.data() + at + k * 12, later, 12);
      std::memcpy(bad.data() + at + 6 * 12, next, 12);
    } else {
      first[2] ^= 1; // another edge id
    }
    if (damage != UnsortedAcrossParts)
      std::memcpy(bad.data() + at, first, 12);
    writeBytes(path, bad);
    auto file = GraphFile::open(path);
    ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
    GraphFileChunks chunks(**file, false, /*partEdges=*/7);
    int ran = 0;
    std::string err = errorOf(chunks.forEachPart(
        false, (*file)->bounds(), 0, 0, [&](const ChunkView &, bool last) {
          EXPECT_FALSE(last);
          ++ran;
          return llvm::Error::success();
        }));
    if (damage == Outside) {
      EXPECT_EQ(err, path + ": chunk (0, 0) holds an edge outside it");
      EXPECT_EQ(ran, 0);
    } else if (damage == Unsorted || damage == UnsortedAcrossParts) {
      EXPECT_EQ(err, path + ": chunk (0, 0) holds its edges out of order (by "
                            "destination)");
      EXPECT_EQ(ran, damage == Unsorted ? 0 : 1);
    } else {
      EXPECT_EQ(err.rfind(path + ": chunk (0, 0) at offset", 0), 0u) << err;
      EXPECT_NE(err.find("checksum mismatch"), std::string::npos) << err;
      EXPECT_GT(ran, 0);
    }
  }
  std::remove(path.c_str());
}

// Streaming a run from the file: the skeleton's offsets are Graph::build's
// (self loops included when asked), and every chunk the file gives the
// chunked executor, in both directions, is the in-memory chunk index's:
// the same rows, the same edges in the same order, the same ids (self
// loops numbered after the input edges, as Graph::build numbers them),
// whether the file hands a chunk over whole or in parts of a few records.
TEST(GraphFile, StreamedChunksAreTheInMemoryOnes) {
  for (bool loops : {false, true}) {
    SCOPED_TRACE(loops ? "self loops" : "no self loops");
    auto file = GraphFile::open(coraFile(4));
    ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
    Graph g = Graph::build(2708, cora().edges.src, cora().edges.dst, loops);
    auto skeleton = (*file)->readSkeleton(loops);
    ASSERT_TRUE(bool(skeleton)) << llvm::toString(skeleton.takeError());
    EXPECT_EQ(skeleton->numEdges, g.numEdges);
    EXPECT_EQ(skeleton->inOffsets, g.inOffsets);
    EXPECT_EQ(skeleton->outOffsets, g.outOffsets);
    EXPECT_TRUE(skeleton->inSources.empty());
    EdgeChunkCache memory(g);
    const std::vector<int32_t> &b = (*file)->bounds();
    // Each row's (other end, id) pairs over all parts, and the part count.
    auto rowsOf = [&](ChunkSource &source, bool reversed, int64_t i, int64_t j,
                      int *parts) {
      std::vector<std::vector<std::pair<int32_t, int32_t>>> rows(
          size_t(b[size_t(j) + 1] - b[size_t(j)]));
      *parts = 0;
      llvm::Error e = source.forEachPart(
          reversed, b, i, j, [&](const ChunkView &v, bool last) {
            ++*parts;
            for (int32_t r = b[size_t(j)]; r < b[size_t(j) + 1]; ++r)
              for (int64_t k = v.offsets[r]; k < v.offsets[r + 1]; ++k)
                rows[size_t(r - b[size_t(j)])].push_back(
                    {v.others[k], v.edgeIds[k]});
            return llvm::Error::success();
          });
      EXPECT_EQ(errorOf(std::move(e)), "");
      return rows;
    };
    // Whole chunks, and parts of 7 and 100 records (self loops placed in
    // the part where the file's order puts them).
    for (int64_t partEdges : {int64_t(1) << 23, int64_t(7), int64_t(100)}) {
      SCOPED_TRACE(partEdges);
      GraphFileChunks streamed(**file, loops, partEdges);
      int most = 0;
      for (bool reversed : {false, true})
        for (int64_t j = 0; j < 4; ++j)
          for (int64_t i = 0; i < 4; ++i) {
            int wantParts = 0, gotParts = 0;
            auto want = rowsOf(memory, reversed, i, j, &wantParts);
            auto got = rowsOf(streamed, reversed, i, j, &gotParts);
            EXPECT_EQ(wantParts, 1);
            EXPECT_GE(gotParts, 1);
            most = std::max(most, gotParts);
            ASSERT_EQ(got, want) << i << ", " << j << (reversed ? " reversed" : "");
          }
      if (partEdges < 1000) {
        EXPECT_GT(most, 10);
      }
    }
    // Intervals that are not the file's are refused, saying what to do.
    GraphFileChunks streamed(**file, loops);
    EXPECT_EQ(errorOf(streamed.forEachPart(
                  false, chunkIntervals(2708, 2), 0, 0,
                  [](const ChunkView &, bool) { return llvm::Error::success(); })),
              coraFile(4) +
                  ": the run's 2 row intervals are not the graph file's 4 "
                  "(its chunk index): convert it with --intervals 2");
  }
  // Feature rows of an interval, straight into the caller's buffer.
  auto file = GraphFile::open(coraFile(4));
  ASSERT_TRUE(bool(file));
  const std::vector<int32_t> &b = (*file)->bounds();
  std::vector<float> rows(size_t(b[2] - b[1]) * 1433);
  ASSERT_FALSE(errorOf((*file)->readFeatureRows(1, rows.data())).size());
  EXPECT_EQ(std::memcmp(rows.data(), cora().features.f32() + b[1] * 1433,
                        rows.size() * 4),
            0);
}

// A byte changed anywhere in a section is caught by its checksum, and the
// error names the file, the section and its offset.
TEST(GraphFile, CorruptionNamesTheSection) {
  std::string good = readBytes(coraFile(4));
  auto file = GraphFile::open(coraFile(4));
  ASSERT_TRUE(bool(file));
  // Section offsets from the header's table (kind, offset at +8, bytes at +16).
  int checked = 0;
  for (size_t k = 0; k < 17; ++k) {
    uint64_t offset, bytes;
    std::memcpy(&offset, good.data() + 96 + k * 32 + 8, 8);
    std::memcpy(&bytes, good.data() + 96 + k * 32 + 16, 8);
    if (bytes == 0)
      continue;
    std::string bad = good;
    bad[offset + bytes / 2] ^= 0x5a;
    std::string path = scratch("corrupt.sgf");
    writeBytes(path, bad);
    std::string err;
    auto f = GraphFile::open(path);
    if (!f)
      err = llvm::toString(f.takeError());
    else
      err = errorOf((*f)->readAll().takeError());
    if (err.empty()) // chunk/feature/row checksums: on partial reads
      for (int64_t j = 0; j < 4 && err.empty(); ++j) {
        err = errorOf((*f)->readFeatures(j).takeError());
        for (int64_t i = 0; i < 4 && err.empty(); ++i) {
          err = errorOf((*f)->readChunk(i, j).takeError());
          for (bool targets : {false, true})
            if (err.empty())
              err = errorOf((*f)->readChunkRows(i, j, targets).takeError());
        }
      }
    EXPECT_NE(err.find(path + ": "), std::string::npos) << err;
    EXPECT_NE(err.find("checksum mismatch"), std::string::npos)
        << "section " << k << ": " << err;
    EXPECT_NE(err.find("at offset "), std::string::npos) << err;
    ++checked;
    std::remove(path.c_str());
  }
  EXPECT_GE(checked, 16);
}

// Each chunk's distinct rows at either end, counted in the file for every
// chunk and listed where they are at most a quarter of their interval,
// are the in-memory chunk index's (EdgeChunkCache), with or without self
// loops, in both directions; a version 1 file (no rows) still opens and
// reports none.
TEST(GraphFile, ChunkRowsAreTheInMemoryIndexs) {
  int64_t listed = 0;
  for (int64_t parts : {4, 8}) {
    auto file = GraphFile::open(coraFile(parts));
    ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
    ASSERT_TRUE((*file)->hasChunkRows());
    const std::vector<int32_t> &b = (*file)->bounds();
    const int64_t p = int64_t(b.size()) - 1;
    for (bool loops : {false, true}) {
      Graph g = Graph::build(cora().edges.numVertices, cora().edges.src,
                             cora().edges.dst, loops);
      EdgeChunkCache memory(g);
      GraphFileChunks streamed(**file, loops);
      for (bool reversed : {false, true}) {
        SCOPED_TRACE(std::to_string(parts) + (loops ? " loops" : "") +
                     (reversed ? " reversed" : ""));
        std::vector<int64_t> want = memory.chunkRowCounts(reversed, b);
        ASSERT_EQ(streamed.chunkRowCounts(reversed, b), want);
        for (int64_t i = 0; i < p; ++i)
          for (int64_t j = 0; j < p; ++j) {
            auto rows = streamed.chunkRows(reversed, b, i, j);
            ASSERT_TRUE(bool(rows)) << llvm::toString(rows.takeError());
            auto all = memory.chunkRows(reversed, b, i, j);
            ASSERT_TRUE(bool(all) && *all);
            const bool few = int64_t((*all)->size()) * kFewRows <=
                             b[size_t(i) + 1] - b[size_t(i)];
            if (few && !(loops && i == j)) {
              ASSERT_TRUE(*rows);
              EXPECT_EQ(**rows, **all);
              ++listed;
            } else {
              EXPECT_FALSE(*rows);
            }
          }
      }
    }
    // Other intervals than the file's: not known.
    GraphFileChunks streamed(**file, false);
    EXPECT_TRUE(streamed.chunkRowCounts(false, chunkIntervals(2708, 3)).empty());
  }
  EXPECT_GT(listed, 0);
  // Version 1: the file's header without its last two sections.
  std::string bytes = readBytes(coraFile(4));
  bytes[8] = 1;
  bytes[80] = 15;
  std::memset(bytes.data() + 96 + 15 * 32, 0, 2 * 32);
  uint32_t crc = crc32Update(0, bytes.data(), 4092);
  std::memcpy(bytes.data() + 4092, &crc, 4);
  std::string path = scratch("version1.sgf");
  writeBytes(path, bytes);
  auto v1 = GraphFile::open(path);
  ASSERT_TRUE(bool(v1)) << llvm::toString(v1.takeError());
  EXPECT_FALSE((*v1)->hasChunkRows());
  auto none = (*v1)->readChunkRows(0, 0, false);
  ASSERT_TRUE(bool(none));
  EXPECT_FALSE(*none);
  GraphFileChunks streamed(**v1, false);
  EXPECT_TRUE(streamed.chunkRowCounts(false, (*v1)->bounds()).empty());
  auto all = (*v1)->readAll();
  ASSERT_TRUE(bool(all)) << llvm::toString(all.takeError());
  expectSame(*all, cora());
  std::remove(path.c_str());
}

// A row table whose checksums hold but whose entries do not (written so
// by a faulty writer) is refused when the file opens, naming the section,
// the offset and the chunk; so is a chunk-rows section that holds more
// rows than the table lists.
TEST(GraphFile, InconsistentChunkRowsAreRefused) {
  std::string good = readBytes(coraFile(8)); // some chunk ends listed
  // Section k's table entry: kind at +0, offset at +8, bytes at +16, CRC
  // at +24; the header's own CRC in its last 4 bytes.
  auto field = [&](const std::string &b, size_t k, size_t at) {
    uint64_t x = 0;
    std::memcpy(&x, b.data() + 96 + k * 32 + at, 8);
    return x;
  };
  auto reseal = [](std::string &b, size_t k) {
    uint64_t offset, bytes;
    std::memcpy(&offset, b.data() + 96 + k * 32 + 8, 8);
    std::memcpy(&bytes, b.data() + 96 + k * 32 + 16, 8);
    uint32_t crc = crc32Update(0, b.data() + offset, size_t(bytes));
    std::memcpy(b.data() + 96 + k * 32 + 24, &crc, 4);
    uint32_t header = crc32Update(0, b.data(), 4092);
    std::memcpy(b.data() + 4092, &header, 4);
  };
  std::string path = scratch("rows-inconsistent.sgf");
  auto openError = [&](const std::string &bytes) {
    writeBytes(path, bytes);
    auto f = GraphFile::open(path);
    return f ? std::string() : llvm::toString(f.takeError());
  };
  const size_t table = 15, lists = 16; // chunk-row-table, chunk-rows
  ASSERT_EQ(field(good, table, 0) & 0xffffffff, 16u);
  // Chunk 0's source count past its interval's 768 rows.
  std::string big = good;
  uint64_t count = 100000;
  std::memcpy(big.data() + field(good, table, 8), &count, 8);
  reseal(big, table);
  EXPECT_EQ(openError(big),
            path + ": chunk-row-table at offset " +
                std::to_string(field(good, table, 8)) +
                ": chunk 0's rows are inconsistent");
  // One more row in chunk-rows than the table lists (its size grown by
  // 4 bytes into the section's padding).
  std::string more = good;
  uint64_t bytes = field(good, lists, 16) + 4;
  std::memcpy(more.data() + 96 + lists * 32 + 16, &bytes, 8);
  reseal(more, lists);
  EXPECT_EQ(openError(more),
            path + ": chunk-rows at offset " +
                std::to_string(field(good, lists, 8)) + ": the table lists " +
                std::to_string(field(good, lists, 16) / 4) +
                " rows, the section holds " + std::to_string(bytes / 4));
  std::remove(path.c_str());
}

TEST(GraphFile, HeaderErrors) {
  std::string good = readBytes(coraFile(4));
  std::string path = scratch("header.sgf");
  auto openError = [&](const std::string &bytes) {
    writeBytes(path, bytes);
    auto f = GraphFile::open(path);
    return f ? std::string() : llvm::toString(f.takeError());
  };
  EXPECT_EQ(openError("not a graph at all, just text\n"),
            path + ": not a Saga graph file (no SAGAGRF1 magic)");
  EXPECT_EQ(openError(good.substr(0, 100)),
            path + ": header at offset 0: truncated: 100 bytes, the header "
                   "alone has 4096");
  std::string v3 = good;
  v3[8] = 3;
  EXPECT_EQ(openError(v3),
            path + ": graph file version 3; this Saga reads versions 1 to 2");
  std::string flipped = good;
  flipped[20] ^= 1; // the vertex count
  EXPECT_EQ(openError(flipped), path + ": header at offset 0: checksum "
                                       "mismatch: the header is corrupt");
  // Truncated inside the features: named before any of it is read.
  std::string err = openError(good.substr(0, good.size() / 2));
  EXPECT_NE(err.find("truncated: the section ends at"), std::string::npos)
      << err;
  std::remove(path.c_str());
}

TEST(GraphFile, WriteErrorsNameThePath) {
  std::string path = "/nonexistent-folder/x.sgf";
  std::string err = errorOf(writeGraphFile(path, cora(), 2));
  EXPECT_EQ(err, path + ": cannot create its temporary file " + path +
                     ".tmp." + std::to_string(getpid()) +
                     ": No such file or directory");
  EXPECT_EQ(errorOf(writeGraphFile(scratch("x.sgf"), cora(), 0)),
            scratch("x.sgf") + ": the chunk index needs 1 to 2708 intervals, "
                               "not 0");
}

TEST(GraphFile, LoadDatasetDetectsTheFormat) {
  auto planetoid = loadDataset(SAGA_EXAMPLES_DIR "/data/cora");
  ASSERT_TRUE(bool(planetoid)) << llvm::toString(planetoid.takeError());
  std::string path = scratch("text.txt");
  writeBytes(path, "0 1\n1 2\n");
  EXPECT_EQ(errorOf(loadDataset(path).takeError()),
            path + ": not a dataset Saga reads: not a Planetoid folder, a "
                   "Saga graph file (sagac convert writes one) or a NumPy "
                   ".npz archive (a Matrix Market file or an edge list needs "
                   "--features, --labels and --split)");
  std::remove(path.c_str());
  std::string missing = scratch("missing");
  EXPECT_EQ(errorOf(loadDataset(missing).takeError()),
            missing + ": cannot open: No such file or directory");
}

// The folded CRC-32 is zlib's for every length around its 16- and 64-byte
// steps, any alignment, chained or not.
TEST(Crc32, MatchesZlib) {
  // Room for the largest offset plus the largest length (the test once read
  // past its own buffer: 13 + 3 * 4096 + 63 bytes from a 3 * 4096 + 64 one).
  std::vector<unsigned char> bytes(13 + 3 * 4096 + 63);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (unsigned char &b : bytes) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    b = static_cast<unsigned char>(state >> 56);
  }
  int checked = 0;
  for (size_t n : {0, 1, 15, 16, 17, 63, 64, 65, 79, 80, 127, 128, 129, 255,
                   256, 1000, 4096, 4097, 3 * 4096 + 63})
    for (size_t offset : {0, 1, 7, 13})
      for (uint32_t seed : {0u, 0xffffffffu, 0x12345678u}) {
        uint32_t want = crc32Zlib(seed, bytes.data() + offset, n);
        EXPECT_EQ(crc32Update(seed, bytes.data() + offset, n), want)
            << n << " bytes at " << offset;
        // In two pieces, split anywhere.
        size_t cut = n / 3;
        EXPECT_EQ(crc32Update(crc32Update(seed, bytes.data() + offset, cut),
                              bytes.data() + offset + cut, n - cut),
                  want);
        ++checked;
      }
  // zlib's check value for "123456789".
  EXPECT_EQ(crc32Update(0, "123456789", 9), 0xcbf43926u);
  std::string repeated(1000, '\0');
  for (size_t k = 0; k < repeated.size(); ++k)
    repeated[k] = "123456789"[k % 9];
  EXPECT_EQ(crc32Update(0, repeated.data(), repeated.size()),
            crc32Zlib(0, repeated.data(), repeated.size()));
  EXPECT_EQ(checked, 19 * 4 * 3);
}

// The folded CRC reads nothing past the data: buffers that end exactly at a
// page boundary, the next page unmapped (a read past the end is a crash,
// under any build), for every length up to 600 bytes and every start modulo
// 16, against zlib, whole and in two pieces.
TEST(Crc32, ReadsNothingPastTheEnd) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  void *map = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  auto *base = static_cast<unsigned char *>(map);
  ASSERT_EQ(mprotect(base + page, page, PROT_NONE), 0);
  uint64_t state = 0x2545f4914f6cdd1dull;
  for (size_t i = 0; i < page; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    base[i] = static_cast<unsigned char>(state >> 56);
  }
  for (size_t n = 0; n <= 600; ++n) {
    const unsigned char *p = base + page - n; // ends at the boundary
    uint32_t want = crc32Zlib(0x89abcdefu, p, n);
    ASSERT_EQ(crc32Update(0x89abcdefu, p, n), want) << n << " bytes";
    size_t cut = n / 3;
    ASSERT_EQ(crc32Update(crc32Update(0x89abcdefu, p, cut), p + cut, n - cut),
              want)
        << n << " bytes in two";
  }
  munmap(map, 2 * page);
}
