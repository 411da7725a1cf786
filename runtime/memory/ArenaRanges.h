//===- ArenaRanges.h - best-fit ranges of one arena -------------*- C++ -*-===//
//
// The free ranges of an arena of `bytes`, by offset: best fit on take,
// neighbours coalesced on give. The host device tier (Tiers.h) and the CUDA
// device pool (exec/cuda/CudaDevice.h) carve their arenas with it. Not
// thread-safe: the owner locks.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_MEMORY_ARENARANGES_H
#define SAGA_RUNTIME_MEMORY_ARENARANGES_H

#include <cstdint>
#include <iterator>
#include <map>

namespace saga {

class ArenaRanges {
public:
  explicit ArenaRanges(int64_t bytes = 0) { reset(bytes); }
  /// All of [0, bytes) free again.
  void reset(int64_t bytes) {
    freeAt.clear();
    freeBySize.clear();
    used_ = 0;
    if (bytes > 0) {
      freeAt.emplace(0, bytes);
      freeBySize.emplace(bytes, 0);
    }
  }
  /// The offset of the smallest free range of at least `bytes` (taken), or
  /// -1.
  int64_t take(int64_t bytes) {
    auto fit = freeBySize.lower_bound(bytes);
    if (fit == freeBySize.end())
      return -1;
    int64_t size = fit->first, offset = fit->second;
    freeBySize.erase(fit);
    freeAt.erase(offset);
    if (size > bytes) {
      freeAt.emplace(offset + bytes, size - bytes);
      freeBySize.emplace(size - bytes, offset + bytes);
    }
    used_ += bytes;
    return offset;
  }
  /// Returns [offset, offset + bytes), joined with free neighbours.
  void give(int64_t offset, int64_t bytes) {
    used_ -= bytes;
    auto next = freeAt.lower_bound(offset);
    if (next != freeAt.end() && next->first == offset + bytes) {
      bytes += next->second;
      eraseBySize(next->second, next->first);
      next = freeAt.erase(next);
    }
    if (next != freeAt.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        offset = prev->first;
        bytes += prev->second;
        eraseBySize(prev->second, prev->first);
        freeAt.erase(prev);
      }
    }
    freeAt.emplace(offset, bytes);
    freeBySize.emplace(bytes, offset);
  }
  int64_t used() const { return used_; }
  /// The free ranges: offset -> size.
  const std::map<int64_t, int64_t> &freeRanges() const { return freeAt; }
  /// The largest range take() could return now.
  int64_t largestFree() const {
    return freeBySize.empty() ? 0 : std::prev(freeBySize.end())->first;
  }

private:
  void eraseBySize(int64_t size, int64_t at) {
    auto [lo, hi] = freeBySize.equal_range(size);
    for (auto it = lo; it != hi; ++it)
      if (it->second == at) {
        freeBySize.erase(it);
        return;
      }
  }
  std::map<int64_t, int64_t> freeAt;          // offset -> size
  std::multimap<int64_t, int64_t> freeBySize; // size -> offset
  int64_t used_ = 0;
};

} // namespace saga

#endif // SAGA_RUNTIME_MEMORY_ARENARANGES_H
