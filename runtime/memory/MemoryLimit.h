//===- MemoryLimit.h - refuse what cannot fit before allocating -*- C++ -*-===//
//
// A file or model that asks for absurd sizes (a parameter f32[1000000,
// 1000000], num_nodes 2^40, a feature width of 10^9) must be refused with a
// message, not answered by the kernel's OOM killer. Every loader and the
// engine size what they are about to allocate from the header or the model,
// then call checkMemory first:
//
//   if (llvm::Error e = checkMemory(bytes, path + ": num_nodes x
//   num_features"))
//     return e;  // "<what> needs 3.6 TiB; 21.4 GiB is available (...)"
//
// "Available" is the least of: MemAvailable (/proc/meminfo), the cgroup's
// memory.max less its memory.current (v2) or limit_in_bytes less usage
// (v1), and RLIMIT_AS / RLIMIT_DATA less what the process maps. The
// environment variable SAGA_AVAILABLE_MEMORY (bytes, or with K/M/G/T)
// replaces it, to test the limits or leave room for other work.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_MEMORY_MEMORYLIMIT_H
#define SAGA_RUNTIME_MEMORY_MEMORYLIMIT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace saga {

/// The bytes this process may still allocate, and what bounds them (e.g.
/// "MemAvailable", "the cgroup's memory.max", "RLIMIT_AS",
/// "SAGA_AVAILABLE_MEMORY").
struct AvailableMemory {
  uint64_t bytes = 0;
  std::string boundBy;
};
AvailableMemory availableMemory();

/// "3.6 TiB", "21.4 GiB", "512 B": two significant decimals past 1 KiB.
std::string formatBytes(uint64_t bytes);

/// elementBytes times the product of `dims`, saturating at UINT64_MAX
/// (negative dimensions count as 0).
uint64_t bytesOf(llvm::ArrayRef<int64_t> dims, uint64_t elementBytes);
/// a * b, saturating.
uint64_t saturatingMul(uint64_t a, uint64_t b);
/// a + b, saturating.
uint64_t saturatingAdd(uint64_t a, uint64_t b);

/// Success when `bytes` fit in availableMemory(); otherwise "<what> needs
/// N; M is available (bound by ...)". Requests under 64 MiB pass unchecked
/// unless SAGA_AVAILABLE_MEMORY is set.
llvm::Error checkMemory(uint64_t bytes, const llvm::Twine &what);

} // namespace saga

#endif // SAGA_RUNTIME_MEMORY_MEMORYLIMIT_H
