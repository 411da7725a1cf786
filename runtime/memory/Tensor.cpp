//===- Tensor.cpp - dense row-major host tensors --------------------------===//

#include "runtime/memory/Tensor.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iterator>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>

#include <sys/mman.h>
#include <utility>

using namespace saga;

namespace {
/// Product of `shape[from..]`; aborts on a negative dimension or on a product
/// that does not fit in int64_t (a programming error, not user input).
int64_t product(const std::vector<int64_t> &shape, size_t from) {
  int64_t n = 1;
  for (size_t i = from; i < shape.size(); ++i) {
    int64_t d = shape[i];
    if (d < 0)
      llvm::report_fatal_error("saga::Tensor: negative dimension in shape");
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      llvm::report_fatal_error("saga::Tensor: element count overflows int64");
    n *= d;
  }
  return n;
}
} // namespace

namespace {
/// Freed large blocks, kept for the next allocation of about the same size:
/// a training step allocates the same tensors every epoch (mini-batches
/// tensors of a few rows more or less each batch), and a block returned to
/// the kernel comes back as fresh pages that must be faulted in and zeroed
/// (a quarter of a GCN epoch at 1M vertices). A request takes the smallest
/// cached block of at least its size and at most a quarter more. The cache
/// never raises the resident peak: live + cached bytes stay at or below the
/// highest live total so far, evicting (largest first) on a miss.
class BlockCache {
public:
  /// A cached block of `bytes` to `bytes` + 25 % (its size into `bytes`),
  /// or null (allocate one of `bytes`: it is counted as live either way).
  void *take(size_t &bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = blocks.lower_bound(bytes);
    if (it != blocks.end() && it->first <= bytes + bytes / 4) {
      void *p = it->second;
      bytes = it->first;
      live += bytes;
      peak = std::max(peak, live);
      blocks.erase(it);
      cached -= bytes;
      return p;
    }
    live += bytes;
    peak = std::max(peak, live);
    while (!blocks.empty() && live + cached > peak) {
      auto last = std::prev(blocks.end());
      std::free(last->second);
      cached -= last->first;
      blocks.erase(last);
    }
    return nullptr;
  }
  void give(void *p, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    live -= bytes;
    cached += bytes;
    blocks.emplace(bytes, p);
  }

private:
  std::mutex mutex;
  std::multimap<size_t, void *> blocks;
  size_t live = 0, cached = 0, peak = 0;
};

BlockCache &blockCache() {
  static auto *cache = new BlockCache(); // outlives static destructors
  return *cache;
}
} // namespace

void Tensor::Free::operator()(uint32_t *p) const {
  if (!owned)
    return;
  if (bytes)
    blockCache().give(p, bytes);
  else
    std::free(p);
}

Tensor::Tensor(std::vector<int64_t> shape, DType dtype)
    : Tensor(std::move(shape), dtype, /*zero=*/true) {}

namespace {
std::atomic<bool> poison{false};
} // namespace

void Tensor::poisonUninitialized(bool on) { poison = on; }

Tensor Tensor::uninitialized(std::vector<int64_t> shape, DType dtype) {
  return Tensor(std::move(shape), dtype, /*zero=*/false);
}

Tensor::Tensor(std::vector<int64_t> shape, DType dtype, bool zero)
    : shape_(std::move(shape)), dtype_(dtype) {
  size_t bytes = static_cast<size_t>(product(shape_, 0)) * 4;
  // Blocks of 256 KiB and more are cached (page-aligned; from 4 MiB on in
  // transparent huge pages); smaller ones come from malloc.
  constexpr size_t kHuge = size_t(2) << 20, kCached = size_t(256) << 10;
  bool cached = bytes >= kCached, huge = bytes >= 2 * kHuge;
  size_t align = huge ? kHuge : cached ? 4096 : 64;
  size_t rounded = (std::max<size_t>(bytes, 4) + align - 1) / align * align;
  auto *p =
      cached ? static_cast<uint32_t *>(blockCache().take(rounded)) : nullptr;
  if (!p) {
    p = static_cast<uint32_t *>(std::aligned_alloc(align, rounded));
    if (!p)
      llvm::report_fatal_error("saga::Tensor: out of memory allocating " +
                               llvm::Twine(bytes) + " bytes");
    if (huge)
      madvise(p, rounded, MADV_HUGEPAGE);
  }
  if (zero || poison.load(std::memory_order_relaxed))
    std::memset(p, zero ? 0 : 0xFF, bytes);
  data_ = std::unique_ptr<uint32_t[], Free>(p, Free(cached ? rounded : 0));
}

Tensor Tensor::view(const Tensor &other) {
  Tensor t;
  t.shape_ = other.shape_;
  t.dtype_ = other.dtype_;
  t.data_ = std::unique_ptr<uint32_t[], Free>(
      const_cast<uint32_t *>(other.data_.get()), Free(0, /*owned=*/false));
  return t;
}

Tensor Tensor::borrow(void *data, std::vector<int64_t> shape, DType dtype) {
  Tensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.data_ = std::unique_ptr<uint32_t[], Free>(static_cast<uint32_t *>(data),
                                              Free(0, /*owned=*/false));
  return t;
}

Tensor::Tensor(const Tensor &other)
    : Tensor(other.shape_, other.dtype_, /*zero=*/false) {
  if (other.numElements() > 0) // an empty tensor's data may be null (UBSan)
    std::memcpy(data_.get(), other.data_.get(), other.numElements() * 4);
}

Tensor &Tensor::operator=(const Tensor &other) {
  if (this != &other)
    *this = Tensor(other);
  return *this;
}

void Tensor::reinterpret(std::vector<int64_t> shape, DType dtype) {
  if (product(shape, 0) != numElements())
    llvm::report_fatal_error(
        "saga::Tensor::reinterpret: element counts differ");
  shape_ = std::move(shape);
  dtype_ = dtype;
}

int64_t Tensor::rowSize() const { return product(shape_, 1); }

int64_t Tensor::numElements() const { return product(shape_, 0); }

std::string Tensor::describe(const std::vector<int64_t> &shape, DType dtype) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  s += dtype == DType::F32 ? "] f32" : "] i32";
  return s;
}
