//===- MappedAllocator.h - large blocks straight from the kernel -*- C++ -*-===//
//
// An allocator for the large buffers a reader thread makes and another
// thread frees (a graph file's chunk parts): blocks of 1 MiB and more are
// mapped and unmapped directly, so they go back to the system when freed
// instead of staying in the reading thread's malloc arena, which otherwise
// grows with every size the parts take (160 MiB more resident at scale 20).
// Smaller blocks come from std::allocator.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_MEMORY_MAPPEDALLOCATOR_H
#define SAGA_RUNTIME_MEMORY_MAPPEDALLOCATOR_H

#include <sys/mman.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace saga {

template <typename T> struct MappedAllocator {
  using value_type = T;
  static constexpr size_t kMappedBytes = size_t(1) << 20;
  MappedAllocator() = default;
  template <typename U> MappedAllocator(const MappedAllocator<U> &) {}

  T *allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kMappedBytes)
      return std::allocator<T>().allocate(n);
    void *p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { // as operator new would: out of memory
      std::fprintf(stderr, "saga: out of memory mapping %zu bytes\n", bytes);
      std::abort();
    }
    return static_cast<T *>(p);
  }
  void deallocate(T *p, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kMappedBytes)
      std::allocator<T>().deallocate(p, n);
    else
      ::munmap(p, bytes);
  }
  template <typename U> bool operator==(const MappedAllocator<U> &) const {
    return true;
  }
  template <typename U> bool operator!=(const MappedAllocator<U> &) const {
    return false;
  }
};

/// A vector whose large buffers are mapped (MappedAllocator).
template <typename T> using MappedVector = std::vector<T, MappedAllocator<T>>;

} // namespace saga

#endif // SAGA_RUNTIME_MEMORY_MAPPEDALLOCATOR_H
