//===- Tiers.h - the device tier's pool and the next tier -------*- C++ -*-===//
//
// Two tiers of memory for runs larger than the device (docs/architecture.md,
// "Beyond one memory: the chunked level"). The device tier is a pool with a
// hard capacity: an allocation that would pass it fails with a message, it
// never overcommits. The next
// tier keeps what the memory plan stores: host RAM, or a spill file in a
// scratch folder (written with pwrite, read with pread, optionally
// O_DIRECT; each slot's checksum is checked on every read, so a torn or
// corrupted spill is never read as valid; a full or unwritable folder is an
// error naming the path). Host RAM copies are not checksummed: nothing
// outside the process writes them. On a GPU the same two roles are GPU memory and
// pinned host RAM.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_MEMORY_TIERS_H
#define SAGA_RUNTIME_MEMORY_TIERS_H

#include "runtime/memory/ArenaRanges.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace saga {

/// A block of device-tier memory (64-byte aligned; 4096 for O_DIRECT).
struct DeviceBuffer {
  void *data = nullptr;
  int64_t bytes = 0;
};

/// The device tier as a memory plan's runner sees it: memory with a hard
/// capacity. Host RAM (DevicePool, below) or a GPU's memory
/// (exec/cuda/CudaChunkedExecutor's pool, whose buffers hold device
/// addresses).
class DeviceTier {
public:
  virtual ~DeviceTier();
  /// A buffer of `bytes`, or an error saying what was asked for, what is
  /// in use and the capacity (naming `what`).
  virtual llvm::Expected<DeviceBuffer> allocate(int64_t bytes,
                                                const std::string &what) = 0;
  /// Whether `bytes` more fit now.
  virtual bool fits(int64_t bytes) const = 0;
  virtual void release(DeviceBuffer &buffer) = 0;
  virtual int64_t capacity() const = 0;
  virtual int64_t peak() const = 0;
};

/// The device tier in host RAM: an arena of the capacity, reserved once and
/// reused from run to run (best fit, neighbours coalesced), so a block taken
/// again costs no page faults; a request the arena's fragments cannot hold
/// is served from the heap, still within the capacity. What is resident
/// stays within the capacity too: the pool knows which arena pages it has
/// handed out since they were last given back to the OS, and when those
/// and the heap's blocks (out or cached) exceed the capacity, free arena
/// pages go back to the OS until they do not (free arena pages once
/// written would otherwise stay resident beside the heap's).
class DevicePool final : public DeviceTier {
public:
  explicit DevicePool(int64_t capacity) : capacity_(capacity) {}
  ~DevicePool() override;
  DevicePool(const DevicePool &) = delete;
  DevicePool &operator=(const DevicePool &) = delete;

  llvm::Expected<DeviceBuffer> allocate(int64_t bytes,
                                        const std::string &what) override;
  bool fits(int64_t bytes) const override;
  void release(DeviceBuffer &buffer) override;

  int64_t capacity() const override { return capacity_; }
  /// A new capacity (for the next run; nothing may be in use), freeing
  /// recycled blocks beyond it.
  void setCapacity(int64_t capacity);
  int64_t used() const;
  int64_t peak() const override;
  /// Allocations the arena could not hold (served from the heap).
  int64_t heapAllocations() const;
  /// Whether the resident set is kept within the capacity (default). Off,
  /// free arena pages stay resident for reuse without page faults: for a
  /// next tier in host RAM, which holds every value anyway.
  void boundResident(bool on);

private:
  bool takeFromArena(int64_t rounded, void *&p);
  void dropArena();
  /// Marks arena pages [offset, offset + bytes) as possibly resident.
  void noteTaken(int64_t offset, int64_t bytes);
  /// Gives free arena pages back to the OS while the pages possibly
  /// resident exceed the capacity.
  void trimResident();

  int64_t capacity_;
  mutable std::mutex mutex;
  int64_t used_ = 0, peak_ = 0;
  char *arena = nullptr;
  int64_t arenaBytes = 0, heapCount = 0;
  std::vector<uint8_t> touched; // per arena page: handed out since released
  int64_t touchedBytes = 0;
  int64_t heapBytes = 0;        // heap blocks out (rounded)
  bool bounded = true;          // boundResident
  ArenaRanges ranges; // of the arena
  std::multimap<int64_t, void *> cached; // freed heap blocks by rounded size
  int64_t cachedBytes = 0;
};

/// Rows of a slot to read (NGra's selective loading: the rows a 2-D chunk
/// reads of its source interval): ascending row indices, `rowBytes`
/// each. The rows land at their own offsets in the buffer; the others are
/// left as they were.
struct RowSelection {
  std::shared_ptr<const std::vector<int32_t>> rows;
  int64_t rowBytes = 0;
  int64_t bytes() const { return rows ? int64_t(rows->size()) * rowBytes : 0; }
};

/// Copies the selected rows of `from` into `to`, at their offsets.
void copyRows(void *to, const void *from, const RowSelection &rows);

/// Where stored tensors live: slots keyed by an integer (the tensor).
class NextTier {
public:
  virtual ~NextTier();
  /// Stores `bytes` from `data` as `key` (replacing an earlier slot).
  virtual llvm::Error write(int key, const void *data, int64_t bytes) = 0;
  /// Reads slot `key` (exactly `bytes`) into `data` (a spill file's slot
  /// checked against its checksum).
  virtual llvm::Error read(int key, void *data, int64_t bytes) = 0;
  /// Reads only `rows` of slot `key` (of `bytes`) into their places in
  /// `data`; the bytes it moved. By default the whole slot is read (into
  /// memory of its own) and the rows copied: a spill slot's checksum
  /// covers the whole slot. Host RAM moves the rows alone.
  virtual llvm::Expected<int64_t> readRows(int key, void *data, int64_t bytes,
                                           const RowSelection &rows);
  /// Bytes the tier holds now.
  virtual int64_t bytesHeld() const = 0;
  /// "host RAM" or the spill file's path, for messages.
  virtual std::string describe() const = 0;

  static std::unique_ptr<NextTier> inMemory();
  /// A spill file created in `folder` (removed when the tier goes). With
  /// `direct`, reads and writes bypass the page cache.
  static llvm::Expected<std::unique_ptr<NextTier>>
  inFolder(const std::string &folder, bool direct = false);
};

} // namespace saga

#endif // SAGA_RUNTIME_MEMORY_TIERS_H
