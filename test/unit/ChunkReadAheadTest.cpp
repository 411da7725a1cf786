//===- ChunkReadAheadTest.cpp - chunks read ahead of compute --------------===//
//
// ChunkReadAhead against a source whose parts name their chunk: requests
// in the expected order get every part, in order, read on the reader
// thread; an unexpected request, a consumer's error and a read error each
// give what a direct read gives.
//
//===----------------------------------------------------------------------===//

#include "runtime/memory/ChunkReadAhead.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace saga;

namespace {

// Chunk (reversed, i, j) in kParts parts; part p's numEdges encodes all
// four, and its `hold` keeps the same number alive.
class LabelledChunks : public ChunkSource {
public:
  static constexpr int kParts = 3;
  static int64_t label(bool reversed, int64_t i, int64_t j, int part) {
    return (reversed ? 1000 : 0) + 100 * i + 10 * j + part;
  }
  llvm::Error forEachPart(bool reversed, const std::vector<int32_t> &,
                          int64_t i, int64_t j, const PartFn &fn) override {
    ++calls;
    if (std::this_thread::get_id() != owner)
      ++readerCalls;
    for (int p = 0; p < kParts; ++p) {
      if (failAt && *failAt == ChunkRequest{reversed, i, j} && p == 1)
        return llvm::createStringError("chunk is corrupt (checksum mismatch)");
      ChunkView view;
      auto value = std::make_shared<int64_t>(label(reversed, i, j, p));
      view.numEdges = *value;
      view.hold = value;
      if (llvm::Error e = fn(view, p + 1 == kParts))
        return e;
    }
    return llvm::Error::success();
  }
  std::thread::id owner = std::this_thread::get_id();
  std::atomic<int> calls{0}, readerCalls{0};
  std::optional<ChunkRequest> failAt;
};

const std::vector<int32_t> kBounds{0, 10, 20, 30};

std::vector<ChunkRequest> schedule() {
  std::vector<ChunkRequest> r;
  for (bool reversed : {false, true})
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t i = 0; i < 3; ++i)
        r.push_back({reversed, i, j});
  return r;
}

// Asks for `r` and checks it gets its parts, in order; "" or the error.
std::string expectChunk(ChunkSource &source, const ChunkRequest &r) {
  int next = 0;
  llvm::Error e = source.forEachPart(
      r.reversed, kBounds, r.i, r.j,
      [&](const ChunkView &view, bool last) -> llvm::Error {
        EXPECT_EQ(view.numEdges, LabelledChunks::label(r.reversed, r.i, r.j, next));
        EXPECT_EQ(*static_cast<const int64_t *>(view.hold.get()), view.numEdges);
        EXPECT_EQ(last, next + 1 == LabelledChunks::kParts);
        ++next;
        return llvm::Error::success();
      });
  if (e)
    return llvm::toString(std::move(e));
  EXPECT_EQ(next, LabelledChunks::kParts);
  return "";
}

} // namespace

TEST(ChunkReadAhead, ReadsTheScheduleOnItsThreadInOrder) {
  LabelledChunks inner;
  ChunkReadAhead ahead(inner, kBounds, schedule());
  for (const ChunkRequest &r : schedule())
    EXPECT_EQ(expectChunk(ahead, r), "");
  ChunkReadAhead::Counters c = ahead.counters();
  EXPECT_EQ(c.parts, int64_t(schedule().size()) * LabelledChunks::kParts);
  EXPECT_EQ(c.directReads, 0);
  EXPECT_EQ(inner.readerCalls.load(), int(schedule().size()));
}

TEST(ChunkReadAhead, AnUnexpectedRequestIsReadDirectly) {
  LabelledChunks inner;
  std::vector<ChunkRequest> plan = schedule();
  ChunkReadAhead ahead(inner, kBounds, plan);
  EXPECT_EQ(expectChunk(ahead, plan[0]), "");
  // Out of order (the read-ahead may hold plan[1] already), then a
  // different interval count: both as a direct read gives them.
  EXPECT_EQ(expectChunk(ahead, plan[5]), "");
  EXPECT_EQ(expectChunk(ahead, plan[1]), "");
  int before = inner.calls;
  llvm::Error e = ahead.forEachPart(false, {0, 30}, 0, 0,
                                    [](const ChunkView &, bool) {
                                      return llvm::Error::success();
                                    });
  EXPECT_FALSE(bool(e));
  EXPECT_EQ(inner.calls, before + 1);
  EXPECT_EQ(ahead.counters().directReads, 3);
}

TEST(ChunkReadAhead, AReadErrorReachesTheRequestItFailed) {
  LabelledChunks inner;
  std::vector<ChunkRequest> plan = schedule();
  inner.failAt = plan[4];
  ChunkReadAhead ahead(inner, kBounds, plan);
  for (size_t k = 0; k < 4; ++k)
    EXPECT_EQ(expectChunk(ahead, plan[k]), "");
  // Part 0 of the failing chunk was handed over; the error comes next.
  EXPECT_EQ(expectChunk(ahead, plan[4]),
            "chunk is corrupt (checksum mismatch)");
}

TEST(ChunkReadAhead, AConsumersErrorStopsTheReader) {
  LabelledChunks inner;
  std::vector<ChunkRequest> plan = schedule();
  ChunkReadAhead ahead(inner, kBounds, plan);
  int seen = 0;
  llvm::Error e = ahead.forEachPart(
      plan[0].reversed, kBounds, plan[0].i, plan[0].j,
      [&](const ChunkView &, bool) -> llvm::Error {
        ++seen;
        return llvm::createStringError("the kernel failed");
      });
  EXPECT_EQ(llvm::toString(std::move(e)), "the kernel failed");
  EXPECT_EQ(seen, 1);
  // The rest of chunk 0 is not handed to chunk 1's request.
  EXPECT_EQ(expectChunk(ahead, plan[1]), "");
  EXPECT_EQ(ahead.counters().directReads, 1);
}

TEST(ChunkReadAhead, StaysWithinItsBytesAhead) {
  // Room for one part only: the reader holds one and waits on the next.
  LabelledChunks inner;
  {
    ChunkReadAhead ahead(inner, kBounds, schedule(), /*aheadBytes=*/1);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(inner.calls, 1);
  } // and stops when dropped unread
  // Room for everything (the parts are a few KiB): all of it is read
  // before the first request, and handed over in order.
  LabelledChunks all;
  ChunkReadAhead ahead(all, kBounds, schedule());
  for (int waited = 0; all.calls < int(schedule().size()) && waited < 5000;
       waited += 10)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(all.calls, int(schedule().size()));
  for (const ChunkRequest &r : schedule())
    EXPECT_EQ(expectChunk(ahead, r), "");
  EXPECT_EQ(ahead.counters().directReads, 0);
}
