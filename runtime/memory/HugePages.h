//===- HugePages.h - transparent huge pages for randomly read arrays -*- C++ -*-===//
//
// A mini-batch's loader reads a few hundred thousand scattered entries of
// arrays of many MiB every batch (the in-CSR, the feature rows, labels,
// degrees, the sampler's per-vertex stamps). On 4 KiB pages nearly every
// such read also misses the TLB; on 2 MiB pages it does not.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_MEMORY_HUGEPAGES_H
#define SAGA_RUNTIME_MEMORY_HUGEPAGES_H

#include <cstddef>
#include <cstdint>

namespace saga {

/// Asks the kernel to back the whole 2 MiB pages inside [p, p + bytes) with
/// transparent huge pages: MADV_HUGEPAGE for pages faulted in later and
/// MADV_COLLAPSE (Linux 6.1 and later) for those already there. Best
/// effort: a kernel without them, or with THP off, leaves the pages as they
/// are (nothing else changes). Returns the bytes asked for (0 when the
/// range holds no whole huge page).
size_t adviseHugePages(const void *p, size_t bytes);

} // namespace saga

#endif // SAGA_RUNTIME_MEMORY_HUGEPAGES_H
