//===- PlanRunnerTest.cpp - memory plans carried out over two tiers -------===//
//
// Random operator sequences run under their memory plans with the next tier
// in RAM and in a spill file (buffered and O_DIRECT): every operator sees
// each tensor it reads with the contents its last writer or updater left,
// the pool never passes its capacity, and the bytes moved are exactly the
// plan's. Then the failures: a scratch folder that cannot be written, one
// that fills up mid-run, a corrupted spill.
//
//===----------------------------------------------------------------------===//

#include "runtime/memory/PlanRunner.h"

#include "TestRandom.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

using namespace saga;
using sagatest::Rng;

namespace {

MemoryProblem randomProblem(Rng &rng, int maxOps) {
  MemoryProblem p;
  int inputs = 1 + rng.below(3);
  for (int i = 0; i < inputs; ++i)
    p.tensors.push_back({"in" + std::to_string(i), 4 * (1 + rng.below(2000)), true});
  int ops = 1 + rng.below(maxOps);
  for (int i = 0; i < ops; ++i) {
    PlanOperator op;
    op.name = "op" + std::to_string(i);
    int reads = rng.below(4);
    for (int r = 0; r < reads; ++r) {
      int t = rng.below(int64_t(p.tensors.size()));
      if (std::find(op.reads.begin(), op.reads.end(), t) == op.reads.end())
        op.reads.push_back(t);
    }
    if (rng.below(4) == 0) {
      int t = rng.below(int64_t(p.tensors.size()));
      if (std::find(op.reads.begin(), op.reads.end(), t) == op.reads.end())
        op.updates.push_back(t);
    }
    int writes = rng.below(5) == 0 ? 0 : 1;
    for (int w = 0; w < writes; ++w) {
      op.writes.push_back(int(p.tensors.size()));
      p.tensors.push_back({"t" + std::to_string(p.tensors.size()),
                           4 * (1 + rng.below(2000)), false});
    }
    p.ops.push_back(op);
  }
  int64_t lo = minimumBudget(p), total = 0;
  for (auto &t : p.tensors)
    total += t.bytes;
  p.budget = lo + int64_t(rng.uniform() * double(total - lo + 1) / 2);
  return p;
}

/// Tensor contents: word k of tensor t at version v.
uint32_t word(int t, int version, int64_t k) {
  return uint32_t(t) * 2654435761u ^ uint32_t(version) * 40503u ^ uint32_t(k);
}

/// A compute that writes each written tensor's pattern, checks every read
/// and updated tensor against the version it should hold, and bumps the
/// version of updated tensors.
struct Checker {
  const MemoryProblem &p;
  std::vector<int> version;
  int checked = 0;
  explicit Checker(const MemoryProblem &p) : p(p), version(p.tensors.size(), 0) {}
  llvm::Error operator()(int op, Resident &r) {
    const PlanOperator &o = p.ops[size_t(op)];
    auto check = [&](int t) -> llvm::Error {
      auto *w = static_cast<uint32_t *>(r.at(t).data);
      for (int64_t k = 0; k < p.tensors[size_t(t)].bytes / 4; ++k)
        if (w[k] != word(t, version[size_t(t)], k))
          return llvm::createStringError("op " + std::to_string(op) +
                                         ": tensor " + std::to_string(t) +
                                         " word " + std::to_string(k) +
                                         " is wrong");
      ++checked;
      return llvm::Error::success();
    };
    auto fill = [&](int t) {
      auto *w = static_cast<uint32_t *>(r.at(t).data);
      for (int64_t k = 0; k < p.tensors[size_t(t)].bytes / 4; ++k)
        w[k] = word(t, version[size_t(t)], k);
    };
    for (int t : o.reads)
      if (llvm::Error e = check(t))
        return e;
    for (int t : o.updates) {
      if (llvm::Error e = check(t))
        return e;
      ++version[size_t(t)];
      fill(t);
    }
    for (int t : o.writes)
      fill(t);
    return llvm::Error::success();
  }
};

/// Puts every input tensor's pattern in the next tier.
void seedInputs(const MemoryProblem &p, NextTier &tier) {
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    if (!p.tensors[t].input)
      continue;
    std::vector<uint32_t> w(size_t(p.tensors[t].bytes / 4));
    for (size_t k = 0; k < w.size(); ++k)
      w[k] = word(int(t), 0, int64_t(k));
    ASSERT_FALSE(bool(tier.write(int(t), w.data(), p.tensors[t].bytes)));
  }
}

std::string scratchDir() { return SAGA_TEST_SCRATCH_DIR; }

} // namespace

TEST(PlanRunner, RandomPlansKeepEveryValueAndTheBudget) {
  Rng rng(99);
  int runs = 0;
  for (int n = 0; n < 150; ++n) {
    MemoryProblem p = randomProblem(rng, 12);
    for (int kind = 0; kind < 3; ++kind) {
      MemoryPlan plan = kind == 0   ? planExact(p, 1 << 16)
                        : kind == 1 ? planLru(p)
                                    : planStreamAll(p);
      ASSERT_TRUE(plan.feasible) << plan.error;
      for (int tierKind = 0; tierKind < 3; ++tierKind) {
        SCOPED_TRACE("instance " + std::to_string(n) + " plan " + plan.method +
                     " tier " + std::to_string(tierKind));
        std::unique_ptr<NextTier> tier;
        if (tierKind == 0) {
          tier = NextTier::inMemory();
        } else {
          auto t = NextTier::inFolder(scratchDir(), tierKind == 2);
          ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
          tier = std::move(*t);
        }
        seedInputs(p, *tier);
        // A third more than the plan's budget: room to load ahead.
        DevicePool pool(p.budget + p.budget / 3);
        Checker checker(p);
        auto stats = runMemoryPlan(p, plan, pool, *tier, std::ref(checker));
        ASSERT_TRUE(bool(stats)) << llvm::toString(stats.takeError());
        EXPECT_EQ(stats->transfers.bytesLoaded, plan.loadBytes);
        EXPECT_EQ(stats->transfers.bytesStored, plan.storeBytes);
        EXPECT_LE(stats->poolPeak, pool.capacity());
        EXPECT_EQ(pool.used(), 0);
        ++runs;
      }
    }
  }
  EXPECT_EQ(runs, 150 * 9);
}

// With no room above the plan's budget nothing loads early, and the plan
// still runs within the pool.
TEST(PlanRunner, NoReserveMeansNoPrefetch) {
  Rng rng(5);
  for (int n = 0; n < 50; ++n) {
    MemoryProblem p = randomProblem(rng, 10);
    MemoryPlan plan = planLru(p);
    auto tier = NextTier::inMemory();
    seedInputs(p, *tier);
    DevicePool pool(p.budget);
    Checker checker(p);
    auto stats = runMemoryPlan(p, plan, pool, *tier, std::ref(checker));
    ASSERT_TRUE(bool(stats)) << llvm::toString(stats.takeError());
    EXPECT_LE(stats->poolPeak, p.budget);
  }
}

TEST(PlanRunner, PoolRefusesPastItsCapacity) {
  DevicePool pool(100);
  auto a = pool.allocate(60, "a");
  ASSERT_TRUE(bool(a));
  auto b = pool.allocate(50, "tensor %7#2");
  ASSERT_FALSE(bool(b));
  EXPECT_EQ(llvm::toString(b.takeError()),
            "device pool: cannot allocate 50 bytes for tensor %7#2: 60 of 100 "
            "bytes in use");
  pool.release(*a);
  EXPECT_EQ(pool.used(), 0);
  EXPECT_EQ(pool.peak(), 60);
}

TEST(PlanRunner, PoolArenaReusesCoalescesAndFallsBackToTheHeap) {
  constexpr int64_t kPage = 4096;
  DevicePool pool(8 * kPage);
  auto a = pool.allocate(3 * kPage, "a"), b = pool.allocate(2 * kPage, "b"),
       c = pool.allocate(3 * kPage, "c");
  ASSERT_TRUE(a && b && c);
  // Blocks are page aligned, disjoint and writable; all eight pages held.
  char *pa = static_cast<char *>(a->data), *pb = static_cast<char *>(b->data),
       *pc = static_cast<char *>(c->data);
  for (char *p : {pa, pb, pc})
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kPage, 0u);
  EXPECT_EQ(pb, pa + 3 * kPage);
  EXPECT_EQ(pc, pb + 2 * kPage);
  std::memset(pa, 1, 3 * kPage);
  std::memset(pc, 3, 3 * kPage);
  // Freed neighbours merge: a (3 pages) and b (2) give back one 5-page hole
  // that a 5-page block takes, at a's address.
  pool.release(*b);
  pool.release(*a);
  auto d = pool.allocate(5 * kPage, "d");
  ASSERT_TRUE(bool(d));
  EXPECT_EQ(d->data, pa);
  EXPECT_EQ(pool.heapAllocations(), 0);
  // Blocks are split from the front of a hole, the smallest that fits.
  pool.release(*d);
  auto e = pool.allocate(3 * kPage, "e");
  ASSERT_TRUE(bool(e));
  EXPECT_EQ(e->data, pa);
  pool.release(*c);
  auto f = pool.allocate(1 * kPage, "f");
  ASSERT_TRUE(bool(f));
  EXPECT_EQ(static_cast<char *>(f->data), pa + 3 * kPage); // best fit
  pool.release(*e);
  auto g = pool.allocate(3 * kPage + 1, "g"); // rounds to 4 pages: 3 + 4 free
  ASSERT_TRUE(bool(g));
  EXPECT_EQ(static_cast<char *>(g->data), pa + 4 * kPage);
  auto h = pool.allocate(3 * kPage, "h");
  ASSERT_TRUE(bool(h));
  EXPECT_EQ(h->data, pa);
  EXPECT_EQ(pool.heapAllocations(), 0);
  pool.release(*h);
  pool.release(*f);
  // g holds pages 4-7: a 4-page block fits the hole before it, 5 pages do
  // not fit the capacity at all.
  EXPECT_FALSE(bool(pool.allocate(5 * kPage, "too big")));
  auto i = pool.allocate(4 * kPage, "i");
  ASSERT_TRUE(bool(i));
  EXPECT_EQ(i->data, pa);
  pool.release(*i);
  pool.release(*g);
  EXPECT_EQ(pool.used(), 0);
  // Fragmentation with room left in the capacity: the heap serves it,
  // after enough of the arena's free pages leave the resident set (all
  // eight were handed out before: k's two, written, and one more go).
  auto j = pool.allocate(2 * kPage, "j"), k = pool.allocate(2 * kPage, "k"),
       l = pool.allocate(2 * kPage, "l");
  ASSERT_TRUE(j && k && l);
  for (auto *x : {&*j, &*k, &*l})
    std::memset(x->data, 5, 2 * kPage);
  auto resident = [&](const void *at) {
    unsigned char in = 0;
    EXPECT_EQ(::mincore(const_cast<void *>(at), kPage, &in), 0);
    return (in & 1) != 0;
  };
  char *pk = static_cast<char *>(k->data);
  pool.release(*k); // free: pages 2-3 and 6-7, 4 pages of 8 in use
  EXPECT_TRUE(resident(pk));
  auto m = pool.allocate(3 * kPage, "m");
  ASSERT_TRUE(bool(m));
  EXPECT_EQ(pool.heapAllocations(), 1);
  EXPECT_FALSE(resident(pk));
  EXPECT_FALSE(resident(pk + kPage));
  EXPECT_TRUE(resident(j->data)); // blocks in use keep their pages
  EXPECT_EQ(static_cast<char *>(j->data)[0], 5);
  std::memset(m->data, 7, 3 * kPage);
  EXPECT_EQ(pool.used(), 7 * kPage);
  int arenaResident = 0;
  for (int page = 0; page < 8; ++page)
    arenaResident += resident(pa + page * kPage);
  EXPECT_LE(arenaResident + 3, 8);
  // With nothing over the capacity, pages given back stay resident (no
  // page faults when taken again).
  char *pj = static_cast<char *>(j->data);
  for (auto *x : {&*j, &*l, &*m})
    pool.release(*x);
  EXPECT_TRUE(resident(pj));
  EXPECT_EQ(pool.used(), 0);
}

TEST(PlanRunner, UnwritableScratchFolderIsAnError) {
  auto tier = NextTier::inFolder("/nonexistent-scratch");
  ASSERT_FALSE(bool(tier));
  std::string err = llvm::toString(tier.takeError());
  EXPECT_EQ(err.rfind("scratch folder /nonexistent-scratch: cannot create the "
                      "spill file /nonexistent-scratch/saga-spill-",
                      0),
            0u)
      << err;
  EXPECT_NE(err.find("No such file or directory"), std::string::npos) << err;
}

// A spill file that cannot grow (the file size limit stands in for a full
// disk) stops the run with an error naming the file; nothing after the
// failed store is loaded.
TEST(PlanRunner, DirectSpillsOfAnyBufferAndSize) {
  // O_DIRECT moves a page-aligned buffer's whole pages straight and the
  // rest (or all of an unaligned buffer) through a bounded bounce buffer:
  // every size and alignment comes back intact, over slots rewritten in
  // place.
  auto tier = NextTier::inFolder(scratchDir(), /*direct=*/true);
  ASSERT_TRUE(bool(tier)) << llvm::toString(tier.takeError());
  std::vector<char> backing((40 << 20) + 8192);
  char *aligned = reinterpret_cast<char *>(
      (reinterpret_cast<uintptr_t>(backing.data()) + 4095) & ~uintptr_t(4095));
  int key = 0;
  for (int64_t bytes : {int64_t(1), int64_t(4096), int64_t(5000),
                        int64_t(17 << 20) + 123, int64_t(33 << 20)})
    for (char *buffer : {aligned, aligned + 8}) {
      for (int64_t k = 0; k < bytes; ++k)
        buffer[k] = char(k * 7 + bytes + key);
      std::vector<char> want(buffer, buffer + bytes);
      ASSERT_FALSE(bool((*tier)->write(key % 3, buffer, bytes)));
      std::memset(buffer, 0, size_t(bytes));
      llvm::Error e = (*tier)->read(key % 3, buffer, bytes);
      ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
      EXPECT_TRUE(std::equal(want.begin(), want.end(), buffer)) << bytes;
      ++key;
    }
}

TEST(PlanRunner, EmptyPiecesMoveNothing) {
  // A piece of no bytes (an interval without rows or in-edges) has no
  // storage on either side: null pointers, which memcpy must never see
  // (UBSan's nonnull check stopped an out-of-core run here, issue 41). It
  // writes and reads back as nothing, in host RAM and in a spill file.
  auto file = NextTier::inFolder(scratchDir());
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  std::unique_ptr<NextTier> ram = NextTier::inMemory();
  for (NextTier *tier : {ram.get(), file->get()}) {
    SCOPED_TRACE(tier->describe());
    ASSERT_FALSE(bool(tier->write(3, nullptr, 0)));
    ASSERT_FALSE(bool(tier->read(3, nullptr, 0)));
    TransferEngine engine(*tier);
    ASSERT_FALSE(bool(engine.wait(engine.load(3, nullptr, 0))));
    EXPECT_EQ(engine.counters().bytesLoaded, 0);
  }
}

TEST(PlanRunner, TiersReadOnlyTheRowsAskedFor) {
  // Selective loading: the selected rows land at their places (runs of
  // consecutive rows and lone ones), every other byte of the buffer stays
  // as it was; host RAM moves the rows alone, a spill file reads its slot
  // whole (its checksum covers the slot) and says so; the transfer engine
  // counts what the tier moved.
  const int64_t rowBytes = 12, rows = 100, bytes = rowBytes * rows;
  std::vector<char> slot(static_cast<size_t>(bytes));
  for (int64_t k = 0; k < bytes; ++k)
    slot[size_t(k)] = char(k * 13 + 1);
  RowSelection pick{std::make_shared<const std::vector<int32_t>>(
                        std::vector<int32_t>{0, 1, 2, 7, 40, 41, 99}),
                    rowBytes};
  auto file = NextTier::inFolder(scratchDir());
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  std::unique_ptr<NextTier> ram = NextTier::inMemory();
  for (NextTier *tier : {ram.get(), file->get()}) {
    SCOPED_TRACE(tier->describe());
    ASSERT_FALSE(bool(tier->write(5, slot.data(), bytes)));
    std::vector<char> got(static_cast<size_t>(bytes), 'x');
    auto moved = tier->readRows(5, got.data(), bytes, pick);
    ASSERT_TRUE(bool(moved)) << llvm::toString(moved.takeError());
    EXPECT_EQ(*moved, tier == ram.get() ? 7 * rowBytes : bytes);
    for (int64_t r = 0; r < rows; ++r) {
      bool picked = std::binary_search(pick.rows->begin(), pick.rows->end(),
                                       int32_t(r));
      for (int64_t b = r * rowBytes; b < (r + 1) * rowBytes; ++b)
        ASSERT_EQ(got[size_t(b)], picked ? slot[size_t(b)] : 'x') << r;
    }
    // Through the transfer engine: its counter is the tier's bytes.
    TransferEngine engine(*tier);
    std::vector<char> again(static_cast<size_t>(bytes), 'x');
    ASSERT_FALSE(bool(engine.wait(engine.loadRows(5, again.data(), bytes, pick))));
    EXPECT_EQ(again, got);
    EXPECT_EQ(engine.counters().bytesLoaded, *moved);
    // A slot that is not there is an error, as for a whole read.
    auto missing = tier->readRows(6, got.data(), bytes, pick);
    EXPECT_FALSE(bool(missing));
    llvm::consumeError(missing.takeError());
  }
}

TEST(PlanRunner, FullScratchStopsTheRun) {
  MemoryProblem p;
  p.tensors = {{"x", 4096, true}, {"a", 1 << 20, false}, {"b", 1 << 20, false}};
  p.ops = {{"0", {0}, {1}, {}}, {"1", {0}, {2}, {}}, {"2", {1}, {}, {}},
           {"3", {2}, {}, {}}};
  p.budget = (1 << 20) + 8192;
  MemoryPlan plan = planExact(p);
  ASSERT_TRUE(plan.feasible) << plan.error;
  ASSERT_GT(plan.storeBytes, 0); // a must go down while b is made
  auto tier = NextTier::inFolder(scratchDir());
  ASSERT_TRUE(bool(tier)) << llvm::toString(tier.takeError());
  seedInputs(p, **tier);
  struct rlimit old;
  getrlimit(RLIMIT_FSIZE, &old);
  auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 64 * 1024; // the input fits, a megabyte does not
  setrlimit(RLIMIT_FSIZE, &small);
  DevicePool pool(p.budget);
  Checker checker(p);
  auto stats = runMemoryPlan(p, plan, pool, **tier, std::ref(checker));
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, oldHandler);
  ASSERT_FALSE(bool(stats));
  std::string err = llvm::toString(stats.takeError());
  EXPECT_EQ(err.rfind("spill file " + scratchDir() + "/saga-spill-", 0), 0u)
      << err;
  EXPECT_NE(err.find("cannot write 1048576 bytes"), std::string::npos) << err;
  EXPECT_NE(err.find("File too large"), std::string::npos) << err;
  EXPECT_LT(checker.checked, 3); // operators 2 and 3 never ran
}

// A stored copy changed on disk is never read as valid.
TEST(PlanRunner, CorruptSpillIsCaught) {
  auto tier = NextTier::inFolder(scratchDir());
  ASSERT_TRUE(bool(tier)) << llvm::toString(tier.takeError());
  std::vector<char> data(10000, 'x');
  ASSERT_FALSE(bool((*tier)->write(3, data.data(), 10000)));
  std::string path = (*tier)->describe();
  int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "y", 1, 5000), 1);
  ::close(fd);
  std::vector<char> back(10000);
  llvm::Error e = (*tier)->read(3, back.data(), 10000);
  ASSERT_TRUE(bool(e));
  EXPECT_EQ(llvm::toString(std::move(e)),
            "spill file " + path +
                ": the copy at offset 0 is corrupt (checksum mismatch)");
}
