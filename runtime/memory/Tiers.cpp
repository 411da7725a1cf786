//===- Tiers.cpp - the device tier's pool and the next tier ---------------===//

#include "runtime/memory/Tiers.h"
#include "runtime/FaultInjection.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace saga;

namespace {

constexpr int64_t kAlign = 4096;

int64_t alignUp(int64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

/// A checksum of a spill slot: four independent multiply-rotate lanes over
/// 8-byte words (xxHash64's round), several GB/s where zlib's CRC-32 does
/// about one; it detects torn and corrupted writes, it is not a MAC.
uint64_t checksumOf(const void *data, int64_t bytes) {
  constexpr uint64_t p1 = 0x9E3779B185EBCA87ull, p2 = 0xC2B2AE3D27D4EB4Full;
  auto round = [&](uint64_t acc, uint64_t in) {
    acc += in * p2;
    acc = (acc << 31) | (acc >> 33);
    return acc * p1;
  };
  const char *p = static_cast<const char *>(data);
  uint64_t lane[4] = {p1 + p2, p2, 0, 0 - p1};
  int64_t i = 0;
  for (; i + 32 <= bytes; i += 32)
    for (int l = 0; l < 4; ++l) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * l, 8);
      lane[l] = round(lane[l], w);
    }
  uint64_t h = uint64_t(bytes);
  for (int l = 0; l < 4; ++l)
    h = round(h ^ lane[l], uint64_t(l + 1));
  for (; i < bytes; ++i)
    h = round(h, uint8_t(p[i]));
  h ^= h >> 29;
  h *= p1;
  return h ^ (h >> 32);
}

struct AlignedFree {
  void operator()(void *p) const { std::free(p); }
};

class MemoryTier : public NextTier {
public:
  llvm::Error write(int key, const void *data, int64_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex);
    Slot &s = slots[key];
    held -= int64_t(s.bytes.size());
    s.bytes.assign(static_cast<const char *>(data),
                   static_cast<const char *>(data) + bytes);
    held += bytes;
    return llvm::Error::success();
  }
  llvm::Error read(int key, void *data, int64_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex);
    auto from = stored(key, bytes);
    if (!from)
      return from.takeError();
    if (bytes > 0) // an empty piece: no storage on either side (null)
      std::memcpy(data, *from, size_t(bytes));
    return llvm::Error::success();
  }
  llvm::Expected<int64_t> readRows(int key, void *data, int64_t bytes,
                                   const RowSelection &rows) override {
    std::lock_guard<std::mutex> lock(mutex);
    auto from = stored(key, bytes);
    if (!from)
      return from.takeError();
    copyRows(data, *from, rows);
    return rows.bytes();
  }
  int64_t bytesHeld() const override {
    std::lock_guard<std::mutex> lock(mutex);
    return held;
  }
  std::string describe() const override { return "host RAM"; }

private:
  struct Slot {
    std::vector<char> bytes;
  };
  /// Slot `key` of exactly `bytes` (with the mutex held).
  llvm::Expected<const char *> stored(int key, int64_t bytes) const {
    auto it = slots.find(key);
    if (it == slots.end() || int64_t(it->second.bytes.size()) != bytes)
      return llvm::createStringError("host RAM tier: no stored copy of " +
                                     std::to_string(bytes) + " bytes for " +
                                     std::to_string(key));
    return it->second.bytes.data();
  }
  mutable std::mutex mutex;
  std::map<int, Slot> slots;
  int64_t held = 0;
};

class FileTier : public NextTier {
public:
  FileTier(std::string path, int fd, bool direct)
      : path(std::move(path)), fd(fd), direct(direct) {}
  ~FileTier() override {
    ::close(fd);
    ::unlink(path.c_str());
  }

  llvm::Error write(int key, const void *data, int64_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex);
    // A slot is reused when the new value fits; else the file grows. The
    // slot stays invalid until the whole write has succeeded.
    Slot s;
    auto it = slots.find(key);
    if (it != slots.end() && it->second.capacity >= bytes) {
      s = it->second;
      slots.erase(it);
    } else {
      if (it != slots.end())
        slots.erase(it);
      s.offset = end;
      s.capacity = alignUp(std::max<int64_t>(bytes, 1));
      end += s.capacity;
    }
    if (llvm::Error e = move(/*out=*/true,
                             const_cast<char *>(static_cast<const char *>(data)),
                             bytes, s.offset))
      return e;
    s.bytes = bytes;
    s.checksum = checksumOf(data, bytes);
    slots[key] = s;
    return llvm::Error::success();
  }

  llvm::Error read(int key, void *data, int64_t bytes) override {
    Slot s;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = slots.find(key);
      if (it == slots.end() || it->second.bytes != bytes)
        return llvm::createStringError(
            "spill file " + path + ": no complete stored copy of " +
            std::to_string(bytes) + " bytes for " + std::to_string(key));
      s = it->second;
    }
    if (llvm::Error e =
            move(/*out=*/false, static_cast<char *>(data), bytes, s.offset))
      return e;
    if (checksumOf(data, bytes) != s.checksum)
      return llvm::createStringError("spill file " + path + ": the copy at offset " +
                                     std::to_string(s.offset) +
                                     " is corrupt (checksum mismatch)");
    return llvm::Error::success();
  }

  int64_t bytesHeld() const override {
    std::lock_guard<std::mutex> lock(mutex);
    int64_t n = 0;
    for (auto &[k, s] : slots)
      n += s.bytes;
    return n;
  }
  std::string describe() const override { return path; }

private:
  struct Slot {
    int64_t offset = 0, capacity = 0, bytes = 0;
    uint64_t checksum = 0;
  };

  /// Moves `bytes` between `buffer` and the file at `offset` (a slot's
  /// start, page-aligned). With O_DIRECT the page-aligned bulk of a
  /// page-aligned buffer (the device pool's are) goes straight; the rest,
  /// or all of an unaligned buffer, through a bounce buffer of at most
  /// kBounce bytes, zero-padded to whole pages on the way out.
  llvm::Error move(bool out, char *buffer, int64_t bytes, int64_t offset) {
    auto io = [&](char *p, int64_t length, int64_t at) -> llvm::Error {
      for (int64_t done = 0; done < length;) {
        if (out && done > 0)
          faultPoint("spill"); // tests kill here: half a slot written
        // A write goes in two halves (the kill point above between them).
        const int64_t piece =
            out && done == 0 && length > 1 ? length / 2 : length - done;
        ssize_t n = out ? ::pwrite(fd, p + done, size_t(piece),
                                   off_t(at + done))
                        : ::pread(fd, p + done, size_t(length - done),
                                  off_t(at + done));
        if (n < 0 && errno == EINTR)
          continue;
        if (n <= 0) {
          int err = n == 0 ? (out ? EIO : 0) : errno;
          if (out)
            return llvm::createStringError(
                "spill file " + path + ": cannot write " +
                std::to_string(bytes) + " bytes at offset " +
                std::to_string(at + done) + ": " + std::strerror(err) +
                " (the scratch folder is full or not writable; the run "
                "stops)");
          return llvm::createStringError(
              "spill file " + path + ": cannot read " + std::to_string(bytes) +
              " bytes at offset " + std::to_string(offset) + ": " +
              (err ? std::strerror(err) : "unexpected end of file"));
        }
        done += n;
      }
      return llvm::Error::success();
    };
    if (!direct)
      return io(buffer, bytes, offset);
    int64_t bulk = reinterpret_cast<uintptr_t>(buffer) % kAlign == 0
                       ? bytes / kAlign * kAlign
                       : 0;
    if (bulk)
      if (llvm::Error e = io(buffer, bulk, offset))
        return e;
    constexpr int64_t kBounce = int64_t(16) << 20;
    std::unique_ptr<char, AlignedFree> bounce;
    for (int64_t done = bulk; done < bytes;) {
      int64_t n = std::min(kBounce, bytes - done), length = alignUp(n);
      if (!bounce)
        bounce.reset(static_cast<char *>(
            std::aligned_alloc(kAlign, size_t(std::min(kBounce, alignUp(bytes - bulk))))));
      if (out) {
        std::memcpy(bounce.get(), buffer + done, size_t(n));
        std::memset(bounce.get() + n, 0, size_t(length - n));
      }
      if (llvm::Error e = io(bounce.get(), length, offset + done))
        return e;
      if (!out)
        std::memcpy(buffer + done, bounce.get(), size_t(n));
      done += n;
    }
    return llvm::Error::success();
  }
  std::string path;
  int fd;
  bool direct;
  mutable std::mutex mutex;
  std::map<int, Slot> slots;
  int64_t end = 0;
};

} // namespace

DeviceTier::~DeviceTier() = default;

DevicePool::~DevicePool() {
  for (auto &[size, p] : cached)
    std::free(p);
  dropArena();
}

void DevicePool::dropArena() {
  if (arena)
    ::munmap(arena, size_t(arenaBytes));
  arena = nullptr;
  arenaBytes = 0;
  ranges.reset(0);
  touched.clear();
  touchedBytes = 0;
}

bool DevicePool::takeFromArena(int64_t rounded, void *&p) {
  if (!arena && capacity_ > 0) {
    // Reserved, not committed: pages become resident as blocks are first
    // written and stay so, never more than the capacity of them.
    int64_t bytes = alignUp(capacity_);
    void *m = ::mmap(nullptr, size_t(bytes), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
      return false; // e.g. an unbounded capacity: the heap serves
    arena = static_cast<char *>(m);
    arenaBytes = bytes;
    ranges.reset(bytes);
    touched.assign(size_t(bytes / kAlign), 0);
    touchedBytes = 0;
  }
  int64_t offset = ranges.take(rounded);
  if (offset < 0)
    return false;
  p = arena + offset;
  noteTaken(offset, rounded);
  return true;
}

void DevicePool::noteTaken(int64_t offset, int64_t bytes) {
  for (int64_t p = offset / kAlign; p < (offset + bytes) / kAlign; ++p)
    if (!touched[size_t(p)]) {
      touched[size_t(p)] = 1;
      touchedBytes += kAlign;
    }
}

void DevicePool::trimResident() {
  int64_t over = touchedBytes + heapBytes + cachedBytes - capacity_;
  if (!arena || !bounded || over <= 0)
    return;
  for (auto [offset, size] : ranges.freeRanges()) {
    // Runs of touched pages in the free range (blocks are page-aligned).
    const int64_t end = (offset + size) / kAlign;
    for (int64_t p = offset / kAlign; p < end && over > 0;) {
      if (!touched[size_t(p)]) {
        ++p;
        continue;
      }
      int64_t q = p;
      while (q < end && touched[size_t(q)] && (q - p) * kAlign < over) {
        touched[size_t(q)] = 0;
        ++q;
      }
      ::madvise(arena + p * kAlign, size_t((q - p) * kAlign), MADV_DONTNEED);
      touchedBytes -= (q - p) * kAlign;
      over -= (q - p) * kAlign;
      p = q;
    }
    if (over <= 0)
      return;
  }
}

llvm::Expected<DeviceBuffer> DevicePool::allocate(int64_t bytes,
                                                  const std::string &what) {
  const int64_t rounded = alignUp(std::max<int64_t>(bytes, 1));
  void *p = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (bytes < 0 || used_ + bytes > capacity_)
      return llvm::createStringError(
          "device pool: cannot allocate " + std::to_string(bytes) +
          " bytes for " + what + ": " + std::to_string(used_) + " of " +
          std::to_string(capacity_) + " bytes in use");
    used_ += bytes;
    peak_ = std::max(peak_, used_);
    if (takeFromArena(rounded, p)) {
      // Cached heap blocks stay resident: within the capacity with what
      // is in use.
      while (!cached.empty() && used_ + cachedBytes > capacity_) {
        auto it = cached.begin();
        std::free(it->second);
        cachedBytes -= it->first;
        cached.erase(it);
      }
      trimResident();
      return DeviceBuffer{p, bytes};
    }
    ++heapCount;
    heapBytes += rounded;
    // A freed heap block of the same size is reused (no page faults);
    // cached blocks count against the capacity, so some go when room is
    // needed.
    if (auto it = cached.find(rounded); it != cached.end()) {
      p = it->second;
      cachedBytes -= rounded;
      cached.erase(it);
    }
    while (!p && !cached.empty() &&
           used_ + cachedBytes > capacity_) {
      auto it = cached.begin();
      std::free(it->second);
      cachedBytes -= it->first;
      cached.erase(it);
    }
    trimResident(); // before a new heap block is written
  }
  if (!p)
    p = std::aligned_alloc(kAlign, size_t(rounded));
  if (!p) {
    std::lock_guard<std::mutex> lock(mutex);
    used_ -= bytes;
    heapBytes -= rounded;
    return llvm::createStringError("device pool: out of host memory "
                                   "allocating " +
                                   std::to_string(bytes) + " bytes for " + what);
  }
  return DeviceBuffer{p, bytes};
}

void DevicePool::setCapacity(int64_t capacity) {
  std::lock_guard<std::mutex> lock(mutex);
  capacity_ = capacity;
  // A larger capacity gets a larger arena once nothing is in it; a smaller
  // one keeps the arena (its pages are bounded by the largest capacity).
  if (arena && alignUp(capacity) > arenaBytes && ranges.used() == 0)
    dropArena();
  while (!cached.empty() && used_ + cachedBytes > capacity_) {
    auto it = cached.begin();
    std::free(it->second);
    cachedBytes -= it->first;
    cached.erase(it);
  }
}

bool DevicePool::fits(int64_t bytes) const {
  std::lock_guard<std::mutex> lock(mutex);
  return used_ + bytes <= capacity_;
}

void DevicePool::release(DeviceBuffer &buffer) {
  if (!buffer.data)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  used_ -= buffer.bytes;
  int64_t rounded = alignUp(std::max<int64_t>(buffer.bytes, 1));
  char *at = static_cast<char *>(buffer.data);
  if (arena && at >= arena && at < arena + arenaBytes) {
    ranges.give(at - arena, rounded);
    buffer = DeviceBuffer();
    return;
  }
  heapBytes -= rounded;
  cached.emplace(rounded, buffer.data);
  cachedBytes += rounded;
  buffer = DeviceBuffer();
}

int64_t DevicePool::used() const {
  std::lock_guard<std::mutex> lock(mutex);
  return used_;
}

int64_t DevicePool::peak() const {
  std::lock_guard<std::mutex> lock(mutex);
  return peak_;
}

void DevicePool::boundResident(bool on) {
  std::lock_guard<std::mutex> lock(mutex);
  bounded = on;
}

int64_t DevicePool::heapAllocations() const {
  std::lock_guard<std::mutex> lock(mutex);
  return heapCount;
}

NextTier::~NextTier() = default;

void saga::copyRows(void *to, const void *from, const RowSelection &rows) {
  if (!rows.rows)
    return;
  const size_t rb = size_t(rows.rowBytes);
  char *dst = static_cast<char *>(to);
  const char *src = static_cast<const char *>(from);
  const std::vector<int32_t> &r = *rows.rows;
  // Runs of consecutive rows in one copy each; the rows eight ahead are
  // prefetched (scattered rows are latency-bound: 10-20 % faster here).
  constexpr size_t kAhead = 8;
  for (size_t k = 0; k < r.size();) {
    if (k + kAhead < r.size()) {
      const char *next = src + size_t(r[k + kAhead]) * rb;
      for (size_t b = 0; b < rb; b += 64)
        __builtin_prefetch(next + b);
    }
    size_t end = k + 1;
    while (end < r.size() && r[end] == r[end - 1] + 1)
      ++end;
    std::memcpy(dst + size_t(r[k]) * rb, src + size_t(r[k]) * rb,
                (end - k) * rb);
    k = end;
  }
}

llvm::Expected<int64_t> NextTier::readRows(int key, void *data, int64_t bytes,
                                           const RowSelection &rows) {
  std::vector<char> whole(static_cast<size_t>(bytes));
  if (llvm::Error e = read(key, whole.data(), bytes))
    return std::move(e);
  copyRows(data, whole.data(), rows);
  return bytes;
}

std::unique_ptr<NextTier> NextTier::inMemory() {
  return std::make_unique<MemoryTier>();
}

llvm::Expected<std::unique_ptr<NextTier>>
NextTier::inFolder(const std::string &folder, bool direct) {
  static std::atomic<int> counter{0};
  std::string path = folder + "/saga-spill-" + std::to_string(getpid()) + "-" +
                     std::to_string(counter++) + ".bin";
  int fd = ::open(path.c_str(),
                  O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | (direct ? O_DIRECT : 0),
                  0600);
  if (fd < 0)
    return llvm::createStringError("scratch folder " + folder +
                                   ": cannot create the spill file " + path +
                                   ": " + std::strerror(errno));
  return std::make_unique<FileTier>(path, fd, direct);
}
