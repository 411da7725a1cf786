//===- HugePages.cpp - transparent huge pages for randomly read arrays ----===//

#include "runtime/memory/HugePages.h"

#include <sys/mman.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 // Linux 6.1; older headers lack it
#endif

size_t saga::adviseHugePages(const void *p, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  const uintptr_t begin = (uintptr_t(p) + kHuge - 1) & ~(kHuge - 1),
                  end = (uintptr_t(p) + bytes) & ~(kHuge - 1);
  if (end <= begin)
    return 0;
  void *start = reinterpret_cast<void *>(begin);
  // Errors (EINVAL on kernels without the advice, THP disabled) leave the
  // pages as they were: nothing to report.
  (void)madvise(start, end - begin, MADV_HUGEPAGE);
  (void)madvise(start, end - begin, MADV_COLLAPSE);
  return size_t(end - begin);
}
