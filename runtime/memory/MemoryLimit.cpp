//===- MemoryLimit.cpp - refuse what cannot fit before allocating ---------===//

#include "runtime/memory/MemoryLimit.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <sys/resource.h>

using namespace saga;

namespace {
constexpr uint64_t kUnbounded = std::numeric_limits<uint64_t>::max();

std::string slurp(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    return {};
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A number of bytes with an optional K/M/G/T suffix (powers of 1024);
/// kUnbounded for "max" or anything unreadable.
uint64_t parseBytes(llvm::StringRef text) {
  text = text.trim();
  if (text.empty() || text == "max")
    return kUnbounded;
  uint64_t scale = 1;
  switch (llvm::toUpper(text.back())) {
  case 'K':
    scale = 1ull << 10;
    break;
  case 'M':
    scale = 1ull << 20;
    break;
  case 'G':
    scale = 1ull << 30;
    break;
  case 'T':
    scale = 1ull << 40;
    break;
  default:
    break;
  }
  if (scale != 1)
    text = text.drop_back();
  if (text.ends_with_insensitive("i"))
    text = text.drop_back();
  uint64_t value;
  if (text.getAsInteger(10, value))
    return kUnbounded;
  return saturatingMul(value, scale);
}

/// A "Key:   123 kB" line of /proc/meminfo or /proc/self/status, in bytes.
uint64_t procField(const std::string &text, llvm::StringRef key) {
  llvm::StringRef t(text);
  size_t at = t.find(key);
  if (at == llvm::StringRef::npos)
    return kUnbounded;
  llvm::StringRef rest = t.drop_front(at + key.size()).ltrim(" \t:");
  uint64_t kb;
  if (rest.consumeInteger(10, kb))
    return kUnbounded;
  return saturatingMul(kb, 1024);
}

/// The cgroup's limit less its use, or kUnbounded.
uint64_t cgroupRoom() {
  // v2: the process's cgroup path from /proc/self/cgroup ("0::/path").
  std::string self = slurp("/proc/self/cgroup");
  std::string dir = "/sys/fs/cgroup";
  if (size_t at = self.find("0::"); at != std::string::npos) {
    size_t end = self.find('\n', at);
    std::string path = self.substr(
        at + 3, end == std::string::npos ? std::string::npos : end - at - 3);
    if (path != "/")
      dir += path;
  }
  for (const std::string &d : {dir, std::string("/sys/fs/cgroup")}) {
    uint64_t max = parseBytes(slurp(d + "/memory.max"));
    if (max != kUnbounded) {
      uint64_t cur = parseBytes(slurp(d + "/memory.current"));
      if (cur == kUnbounded) // usage unreadable: the limit alone
        return max;
      return cur >= max ? 0 : max - cur;
    }
  }
  // v1.
  uint64_t limit =
      parseBytes(slurp("/sys/fs/cgroup/memory/memory.limit_in_bytes"));
  if (limit != kUnbounded && limit < (1ull << 60)) {
    uint64_t used =
        parseBytes(slurp("/sys/fs/cgroup/memory/memory.usage_in_bytes"));
    return used == kUnbounded ? limit : (used >= limit ? 0 : limit - used);
  }
  return kUnbounded;
}

uint64_t rlimitRoom(int resource, const std::string &status,
                    llvm::StringRef field) {
  struct rlimit r;
  if (getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY)
    return kUnbounded;
  uint64_t used = procField(status, field);
  if (used == kUnbounded)
    used = 0;
  return used >= r.rlim_cur ? 0 : uint64_t(r.rlim_cur) - used;
}
} // namespace

uint64_t saga::saturatingMul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? kUnbounded : r;
}

uint64_t saga::saturatingAdd(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? kUnbounded : r;
}

uint64_t saga::bytesOf(llvm::ArrayRef<int64_t> dims, uint64_t elementBytes) {
  uint64_t n = elementBytes;
  for (int64_t d : dims)
    n = saturatingMul(n, d < 0 ? 0 : uint64_t(d));
  return n;
}

std::string saga::formatBytes(uint64_t bytes) {
  if (bytes == kUnbounded)
    return "more than 16 EiB";
  static const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " B";
  double v = double(bytes);
  int u = -1;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format(v < 10    ? "%.2f %s"
                     : v < 100 ? "%.1f %s"
                               : "%.0f %s",
                     v, units[u]);
  return s;
}

AvailableMemory saga::availableMemory() {
  if (const char *env = std::getenv("SAGA_AVAILABLE_MEMORY")) {
    uint64_t b = parseBytes(env);
    if (b != kUnbounded)
      return {b, "SAGA_AVAILABLE_MEMORY"};
  }
  AvailableMemory best{kUnbounded, "nothing (no limit found)"};
  auto consider = [&](uint64_t bytes, const char *what) {
    if (bytes < best.bytes)
      best = {bytes, what};
  };
  consider(procField(slurp("/proc/meminfo"), "MemAvailable"),
           "MemAvailable in /proc/meminfo");
  consider(cgroupRoom(), "the cgroup's memory limit");
  std::string status = slurp("/proc/self/status");
  consider(rlimitRoom(RLIMIT_AS, status, "VmSize"), "RLIMIT_AS (ulimit -v)");
  consider(rlimitRoom(RLIMIT_DATA, status, "VmData"),
           "RLIMIT_DATA (ulimit -d)");
  return best;
}

llvm::Error saga::checkMemory(uint64_t bytes, const llvm::Twine &what) {
  // Small requests pass without reading /proc and the cgroup's files (a
  // mini-batch graph is built ~130 times a second, and the reads cost ~3 %
  // of its loader thread); an override set for tests still applies.
  constexpr uint64_t kUnchecked = uint64_t(64) << 20;
  if (bytes < kUnchecked && !std::getenv("SAGA_AVAILABLE_MEMORY"))
    return llvm::Error::success();
  AvailableMemory a = availableMemory();
  if (bytes <= a.bytes)
    return llvm::Error::success();
  return llvm::createStringError(what + " needs " + formatBytes(bytes) + "; " +
                                 formatBytes(a.bytes) + " is available (" +
                                 a.boundBy + ")");
}
