//===- ChunkedStats.h - what a run under a memory budget did ----*- C++ -*-===//
//
// The figures a chunked run (ChunkedExecutor.h) reports: its intervals and
// plan, what moved, and what the device held. Part of the C++ API's
// results (api/Model.h), so standard library and runtime/memory only: no
// MLIR header.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_CHUNKEDSTATS_H
#define SAGA_RUNTIME_EXEC_CHUNKEDSTATS_H

#include "runtime/memory/PlanRunner.h"

#include <cstdint>
#include <string>

namespace saga {

struct ChunkedStats {
  int64_t intervals = 1;
  int64_t emptyChunks = 0;  // of the P x P, those holding no edges
  int64_t group = 1;        // destination intervals per chunk group
  int64_t minimumBytes = 0; // the largest step's working set at that P
  /// Edge values split by destination interval (PlanMemory::chunkEdges).
  bool edgesSplit = false;
  int64_t pinnedBytes = 0;  // values under 1 MiB, kept out of the plan
  std::string method;       // the planner's (exact, or its fallback)
  int64_t plannedBytes = 0; // what the plan moves
  /// Loads of only the rows a chunk reads (selective loading): how many
  /// the plan makes, their bytes, and the pieces' bytes had they been
  /// loaded whole.
  int64_t rowLoads = 0, rowLoadBytes = 0, rowLoadWholeBytes = 0;
  PlanRunStats run;         // what moved, stalls, the pool's peak
  /// Devices the run used (CudaDevicesExecutor.cpp); the bytes they read
  /// of what another device handed over, over peer links and through host
  /// memory, and the bytes of graph inputs and parameters they read from
  /// where these live.
  int64_t devices = 1, handoffPeerBytes = 0, handoffHostBytes = 0,
          sourceBytes = 0;
  /// The chunks' CSR sent to a device as kernels over edges ran (CUDA: a
  /// graph held in host memory streams each chunk's rows up; 0 on the CPU),
  /// and the edges in it: each kernel over edges sends every edge once.
  int64_t csrBytesUploaded = 0, csrEdgesUploaded = 0;
  /// Device memory a CUDA run holds outside the plan's pieces, besides the
  /// streamed CSR and the graph inputs kept resident: values outside the
  /// plan, the loss rows, a loss's terms (one interval's when the loss
  /// rows ascend), partial sums and weight-gradient slices. 0 on the CPU.
  int64_t deviceOutsideBytes = 0;
  /// Chunks read ahead from a file: parts handed over, requests read in
  /// place (out of the schedule's order), the reader's busy time and the
  /// time kernels waited for a part.
  int64_t chunkParts = 0, chunkDirectReads = 0;
  double chunkReadSeconds = 0, chunkStallSeconds = 0;
};

} // namespace saga

#endif // SAGA_RUNTIME_EXEC_CHUNKEDSTATS_H
