//===- Emulator.cpp - an emulated GPU for the test suite ------------------===//

#include "emulator/Emulator.h"
#include "emulator/cuda_emulator_abi.h" // IWYU pragma: keep
#include "support/DiskCache.h"

#include <boost/context/detail/fcontext.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
extern "C" void __sanitizer_start_switch_fiber(void **fakeStackSave,
                                               const void *bottom, size_t size);
extern "C" void __sanitizer_finish_switch_fiber(void *fakeStackSave,
                                                const void **bottomOld,
                                                size_t *sizeOld);
#if defined(__clang__) // GCC has it as a built-in
extern "C" void __asan_unpoison_stack_memory(void *addr, size_t size);
#endif
#define SAGA_ASAN 1
#endif

namespace ctx = boost::context::detail;
using namespace saga::emu;

namespace {

constexpr size_t kStackBytes = 128 << 10;
constexpr size_t kGuardBytes = 4096;

enum class State { Ready, AtBlock, AtWarp, Done };
enum class WarpKind { Sync, Shuffle };

/// Fiber stacks kept mapped between launches (up to kKeptStacks): mapping,
/// guarding, first-touch faults and unmapping a stack per thread of every
/// block of every launch were most of the emulated GPU's system time.
constexpr size_t kKeptStacks = 4096;
struct StackCache {
  std::mutex mutex;
  std::vector<char *> free;
};
StackCache &stackCache() {
  static StackCache *c = new StackCache(); // (outlives every launch)
  return *c;
}

struct Stack {
  char *base = nullptr; // the guard page, then the stack
  ~Stack() {
    if (!base)
      return;
#if SAGA_ASAN
    // A fiber that exits from inside a frame (yieldToScheduler) never runs
    // that frame's epilogue, so its redzones stay poisoned in ASan's
    // shadow, and the next fiber on this stack (or memory mapped there
    // later: a device pool's arena) was reported as stack-buffer-underflow.
    // The stack variant of unpoisoning: __asan_unpoison_memory_region is a
    // no-op under allow_user_poisoning=0, which the ASan suite sets.
    __asan_unpoison_stack_memory(bottom(), kStackBytes);
#endif
    {
      StackCache &c = stackCache();
      std::lock_guard<std::mutex> lock(c.mutex);
      if (c.free.size() < kKeptStacks) {
        c.free.push_back(base);
        return;
      }
    }
    munmap(base, kStackBytes + kGuardBytes);
  }
  bool allocate() {
    {
      StackCache &c = stackCache();
      std::lock_guard<std::mutex> lock(c.mutex);
      if (!c.free.empty()) {
        base = c.free.back();
        c.free.pop_back();
        return true;
      }
    }
    void *m = mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
      return false;
    base = static_cast<char *>(m);
    mprotect(base, kGuardBytes, PROT_NONE); // an overflow faults, loudly
    return true;
  }
  char *bottom() const { return base + kGuardBytes; }
  char *top() const { return base + kGuardBytes + kStackBytes; }
};

struct Fiber {
  State state = State::Ready;
  ctx::fcontext_t context = nullptr;
  saga_emu_thread info{};
  unsigned lane = 0, warp = 0;
  unsigned mask = 0;
  WarpKind kind = WarpKind::Sync;
  unsigned shuffles = 0; // this lane's shuffle count (buffer parity)
  Stack *stack = nullptr;
#if SAGA_ASAN
  void *fakeStack = nullptr;
#endif
};

struct Warp {
  uint32_t values[2][32];
};

struct BlockRun {
  std::vector<Fiber> fibers;
  std::vector<Warp> warps;
  ctx::fcontext_t scheduler = nullptr;
  Entry entry = nullptr;
  void **params = nullptr;
#if SAGA_ASAN
  const void *schedulerBottom = nullptr;
  size_t schedulerSize = 0;
#endif
};

thread_local BlockRun *currentBlock = nullptr;
thread_local Fiber *currentFiber = nullptr;

/// From the running fiber back to its block's scheduler; returns when the
/// scheduler resumes it.
void yieldToScheduler(bool exiting) {
  BlockRun *b = currentBlock;
#if SAGA_ASAN
  __sanitizer_start_switch_fiber(exiting ? nullptr : &currentFiber->fakeStack,
                                 b->schedulerBottom, b->schedulerSize);
#endif
  ctx::transfer_t t = ctx::jump_fcontext(b->scheduler, nullptr);
  b->scheduler = t.fctx;
#if SAGA_ASAN
  __sanitizer_finish_switch_fiber(currentFiber->fakeStack, &b->schedulerBottom,
                                  &b->schedulerSize);
#endif
  (void)exiting;
}

void fiberMain(ctx::transfer_t t) {
  BlockRun *b = currentBlock;
  b->scheduler = t.fctx;
#if SAGA_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &b->schedulerBottom,
                                  &b->schedulerSize);
#endif
  b->entry(b->params);
  currentFiber->state = State::Done;
  yieldToScheduler(true);
  std::abort(); // a finished fiber is never resumed
}

std::string describe(const Fiber &f) {
  const saga_dim3 &t = f.info.threadIdx;
  return "(" + std::to_string(t.x) + "," + std::to_string(t.y) + "," +
         std::to_string(t.z) + ")";
}

std::string where(const Fiber &f) {
  switch (f.state) {
  case State::AtBlock:
    return "waits at __syncthreads";
  case State::AtWarp:
    return f.kind == WarpKind::Sync ? "waits at __syncwarp" : "waits at a shuffle";
  case State::Done:
    return "has exited";
  case State::Ready:
    return "is ready";
  }
  return "?";
}

/// Releases what can be released; "" or the reason the block cannot go on.
std::string releaseBarriers(BlockRun &b, bool &released) {
  released = false;
  size_t atBlock = 0, done = 0;
  for (const Fiber &f : b.fibers) {
    atBlock += f.state == State::AtBlock;
    done += f.state == State::Done;
  }
  if (atBlock && atBlock + done == b.fibers.size()) {
    if (done) {
      const Fiber *waiting = nullptr, *exited = nullptr;
      for (const Fiber &f : b.fibers)
        (f.state == State::Done ? exited : waiting) = &f;
      return "divergent __syncthreads: thread " + describe(*waiting) +
             " waits at it while thread " + describe(*exited) +
             " has exited";
    }
    for (Fiber &f : b.fibers)
      f.state = State::Ready;
    released = true;
    return "";
  }
  for (size_t w = 0; w < b.warps.size(); ++w) {
    size_t first = w * 32, last = std::min(b.fibers.size(), first + 32);
    for (size_t l = first; l < last; ++l) {
      const Fiber &f = b.fibers[l];
      if (f.state != State::AtWarp)
        continue;
      bool all = true;
      for (size_t k = first; k < last; ++k) {
        if (!(f.mask >> (k - first) & 1))
          continue;
        const Fiber &g = b.fibers[k];
        if (g.state == State::Done)
          return "divergent warp barrier: lane " + std::to_string(f.lane) +
                 " of warp " + std::to_string(w) + " " + where(f) +
                 " (mask 0x" + [&] {
                   char s[16];
                   std::snprintf(s, sizeof s, "%08x", f.mask);
                   return std::string(s);
                 }() + ") while lane " + std::to_string(g.lane) +
                 " has exited";
        if (g.state != State::AtWarp || g.mask != f.mask || g.kind != f.kind)
          all = false;
      }
      if (!all)
        continue;
      for (size_t k = first; k < last; ++k)
        if (f.mask >> (k - first) & 1)
          b.fibers[k].state = State::Ready;
      released = true;
      break;
    }
  }
  if (released)
    return "";
  // Deadlock: the first thread at each place one waits.
  std::string what = "deadlock: no barrier can complete;";
  std::vector<std::string> places;
  for (const Fiber &f : b.fibers) {
    std::string place = where(f);
    if (f.state == State::Done ||
        std::find(places.begin(), places.end(), place) != places.end())
      continue;
    places.push_back(place);
    what += " thread " + describe(f) + " " + place + ";";
  }
  return what;
}

std::string runBlock(BlockRun &b, std::vector<Stack> &stacks, Order order,
                     std::mt19937_64 &rng) {
  for (size_t i = 0; i < b.fibers.size(); ++i) {
    Fiber &f = b.fibers[i];
    f.stack = &stacks[i];
    f.context = ctx::make_fcontext(f.stack->top(), kStackBytes, fiberMain);
  }
  currentBlock = &b;
  std::vector<size_t> ready;
  for (;;) {
    ready.clear();
    for (size_t i = 0; i < b.fibers.size(); ++i)
      if (b.fibers[i].state == State::Ready)
        ready.push_back(i);
    if (ready.empty()) {
      if (std::all_of(b.fibers.begin(), b.fibers.end(),
                      [](const Fiber &f) { return f.state == State::Done; }))
        return "";
      bool released;
      std::string err = releaseBarriers(b, released);
      if (!err.empty())
        return err;
      continue;
    }
    if (order == Order::Reverse)
      std::reverse(ready.begin(), ready.end());
    else if (order == Order::Random)
      std::shuffle(ready.begin(), ready.end(), rng);
    for (size_t i : ready) {
      Fiber &f = b.fibers[i];
      currentFiber = &f;
#if SAGA_ASAN
      void *save = nullptr;
      __sanitizer_start_switch_fiber(&save, f.stack->bottom(), kStackBytes);
#endif
      ctx::transfer_t t = ctx::jump_fcontext(f.context, &f);
#if SAGA_ASAN
      __sanitizer_finish_switch_fiber(save, nullptr, nullptr);
#endif
      f.context = t.fctx;
    }
  }
}

} // namespace

extern "C" const saga_emu_thread *saga_emu_self() { return &currentFiber->info; }

extern "C" void saga_emu_syncthreads() {
  currentFiber->state = State::AtBlock;
  yieldToScheduler(false);
}

extern "C" void saga_emu_syncwarp(unsigned mask) {
  currentFiber->state = State::AtWarp;
  currentFiber->mask = mask;
  currentFiber->kind = WarpKind::Sync;
  yieldToScheduler(false);
}

extern "C" uint32_t saga_emu_shfl(unsigned mask, uint32_t value, int lane,
                                  int xorMask) {
  Fiber &f = *currentFiber;
  Warp &w = currentBlock->warps[f.warp];
  unsigned parity = f.shuffles++ & 1;
  w.values[parity][f.lane] = value;
  f.state = State::AtWarp;
  f.mask = mask;
  f.kind = WarpKind::Shuffle;
  yieldToScheduler(false);
  unsigned src = lane >= 0 ? unsigned(lane) & 31 : (f.lane ^ unsigned(xorMask)) & 31;
  // A source outside the mask gives the caller's own value (undefined on
  // the GPU; defined here so tests are repeatable).
  if (!(mask >> src & 1))
    return value;
  return w.values[parity][src];
}

bool saga::emu::parseOrder(const std::string &text, Order &order) {
  if (text == "forward")
    order = Order::Forward;
  else if (text == "reverse")
    order = Order::Reverse;
  else if (text == "random")
    order = Order::Random;
  else
    return false;
  return true;
}

Order saga::emu::orderFromEnvironment() {
  Order o = Order::Forward;
  if (const char *e = std::getenv("SAGA_EMU_ORDER"))
    parseOrder(e, o);
  return o;
}

std::string saga::emu::launch(Entry entry, void **params,
                              const LaunchConfig &c) {
  uint64_t threads = uint64_t(c.block.x) * c.block.y * c.block.z;
  uint64_t blocks = uint64_t(c.grid.x) * c.grid.y * c.grid.z;
  if (threads == 0 || threads > 1024)
    return "a block of " + std::to_string(threads) +
           " threads (1 to 1024 allowed)";
  if (blocks == 0)
    return "an empty grid";
  if (!entry)
    return "no kernel";
  unsigned workers = c.workers ? c.workers : std::max(1u, std::thread::hardware_concurrency());
  workers = unsigned(std::min<uint64_t>(workers, blocks));
  std::atomic<uint64_t> next{0};
  std::mutex mutex;
  std::string error;
  auto work = [&]() {
    std::vector<Stack> stacks(threads);
    for (Stack &s : stacks)
      if (!s.allocate()) {
        std::lock_guard<std::mutex> lock(mutex);
        error = "cannot map fiber stacks";
        return;
      }
    std::vector<char> shared(c.sharedBytes + 16);
    char *sharedBase = reinterpret_cast<char *>(
        (reinterpret_cast<uintptr_t>(shared.data()) + 15) / 16 * 16);
    for (uint64_t id; (id = next++) < blocks;) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error.empty())
          return;
      }
      BlockRun b;
      b.entry = entry;
      b.params = params;
      b.fibers.resize(threads);
      b.warps.resize((threads + 31) / 32);
      saga_dim3 bid{unsigned(id % c.grid.x), unsigned(id / c.grid.x % c.grid.y),
                    unsigned(id / (uint64_t(c.grid.x) * c.grid.y))};
      std::memset(sharedBase, 0, c.sharedBytes); // deterministic contents
      for (uint64_t t = 0; t < threads; ++t) {
        Fiber &f = b.fibers[t];
        f.info.threadIdx = {unsigned(t % c.block.x),
                            unsigned(t / c.block.x % c.block.y),
                            unsigned(t / (uint64_t(c.block.x) * c.block.y))};
        f.info.blockIdx = bid;
        f.info.blockDim = {c.block.x, c.block.y, c.block.z};
        f.info.gridDim = {c.grid.x, c.grid.y, c.grid.z};
        f.info.shared = sharedBase;
        f.lane = unsigned(t % 32);
        f.warp = unsigned(t / 32);
      }
      std::mt19937_64 rng(c.seed * 0x9E3779B97F4A7C15ull + id);
      std::string err = runBlock(b, stacks, c.order, rng);
      currentBlock = nullptr;
      currentFiber = nullptr;
      if (!err.empty()) {
        std::lock_guard<std::mutex> lock(mutex);
        if (error.empty())
          error = "block (" + std::to_string(bid.x) + "," +
                  std::to_string(bid.y) + "," + std::to_string(bid.z) +
                  "): " + err;
        return;
      }
    }
  };
  if (workers == 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (unsigned w = 0; w < workers; ++w)
      pool.emplace_back(work);
    for (std::thread &t : pool)
      t.join();
  }
  return error;
}

// --- modules -----------------------------------------------------------

namespace {
uint64_t fnv1a(const std::string &s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return h;
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The modules' folder: the CUDA cache's `emulated/` (support/DiskCache.h);
/// with SAGA_CUDA_CACHE=off, one of this process's own (dlopen needs a
/// file).
std::string defaultCache() {
  std::string f = saga::disk_cache::folder("SAGA_CUDA_CACHE", "cuda");
  if (f.empty())
    return "/tmp/saga-emulated-" + std::to_string(getpid());
  return f + "/emulated";
}

std::string quote(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}
} // namespace

std::unique_ptr<EmulatedModule>
EmulatedModule::compile(const std::string &source, std::string &error,
                        const std::string &cacheFolder) {
  std::unique_ptr<EmulatedModule> m(new EmulatedModule());
  static const std::regex kernel(R"(extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\()");
  std::string full = source + "\n// Entries for the emulator (cuLaunchKernel's argument arrays).\n";
  for (auto it = std::sregex_iterator(source.begin(), source.end(), kernel);
       it != std::sregex_iterator(); ++it) {
    std::string name = (*it)[1];
    m->names.push_back(name);
    full += "extern \"C\" void saga_emu_entry_" + name +
            "(void **p) { saga_emu_invoke(" + name + ", p); }\n" +
            "extern \"C\" int saga_emu_sizes_" + name +
            "(unsigned long *s, int max) { return saga_emu_param_sizes(" +
            name + ", s, max); }\n";
  }
  const std::string header = SAGA_EMU_HEADER;
  const std::string compiler =
      std::getenv("SAGA_EMU_CXX") ? std::getenv("SAGA_EMU_CXX") : SAGA_EMU_CXX;
  const std::string flags = std::string("-std=c++20 -O1 -g -fPIC -shared "
                                        "-ffp-contract=off -fno-strict-aliasing -w ") +
                            SAGA_EMU_EXTRA_FLAGS + " " +
                            (std::getenv("SAGA_EMU_FLAGS") ? std::getenv("SAGA_EMU_FLAGS") : "");
  std::string key = full + "\n" + readAll(header) + "\n" + compiler + " " + flags;
  char hash[40];
  std::snprintf(hash, sizeof hash, "%016llx%016llx",
                (unsigned long long)fnv1a(key, 0xcbf29ce484222325ull),
                (unsigned long long)fnv1a(key, 0x84222325cbf29ce4ull));
  std::string folder = cacheFolder.empty() ? defaultCache() : cacheFolder;
  std::string so = folder + "/" + hash + ".so";
  if (access(so.c_str(), R_OK) != 0) {
    std::string mk = "mkdir -p " + quote(folder);
    if (std::system(mk.c_str()) != 0) {
      error = "cannot create the emulator's cache folder " + folder;
      return nullptr;
    }
    std::string base = folder + "/" + hash + "." + std::to_string(getpid());
    {
      std::ofstream out(base + ".cu.cpp");
      out << full;
      if (!out) {
        error = "cannot write " + base + ".cu.cpp";
        return nullptr;
      }
    }
    std::string cmd = quote(compiler) + " " + flags + " -include " +
                      quote(header) + " " + quote(base + ".cu.cpp") + " -o " +
                      quote(base + ".so") + " > " + quote(base + ".log") +
                      " 2>&1";
    int rc = std::system(cmd.c_str());
    if (rc != 0) {
      error = "the emulated module does not compile (" + cmd + "):\n" +
              readAll(base + ".log");
      return nullptr;
    }
    std::rename((base + ".so").c_str(), so.c_str());
    std::remove((base + ".cu.cpp").c_str());
    std::remove((base + ".log").c_str());
  }
  m->handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m->handle) {
    error = std::string("cannot load the emulated module: ") + dlerror();
    return nullptr;
  }
  for (const std::string &n : m->names) {
    auto e = reinterpret_cast<Entry>(dlsym(m->handle, ("saga_emu_entry_" + n).c_str()));
    if (!e) {
      error = "the emulated module lacks " + n;
      return nullptr;
    }
    m->entries[n] = e;
    using SizesFn = int (*)(unsigned long *, int);
    auto sizes = reinterpret_cast<SizesFn>(
        dlsym(m->handle, ("saga_emu_sizes_" + n).c_str()));
    unsigned long s[256];
    int count = sizes ? sizes(s, 256) : -1;
    if (count < 0 || count > 256) {
      error = "the emulated module lacks the parameter sizes of " + n;
      return nullptr;
    }
    m->sizes[n].assign(s, s + count);
  }
  return m;
}

EmulatedModule::~EmulatedModule() {
  if (handle)
    dlclose(handle);
}

const std::vector<size_t> *
EmulatedModule::paramSizes(const std::string &kernel) const {
  auto it = sizes.find(kernel);
  return it == sizes.end() ? nullptr : &it->second;
}

Entry EmulatedModule::lookup(const std::string &kernel) const {
  auto it = entries.find(kernel);
  return it == entries.end() ? nullptr : it->second;
}
