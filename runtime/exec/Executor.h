//===- Executor.h - runs an execution plan ----------------------*- C++ -*-===//
//
// Walks the plan (a `saga.model` lowered by saga-lower-to-plan) op by op:
// binds graph inputs and parameters, allocates kernel results, launches
// kernels over row ranges on the thread pool, runs `saga.linear` as BLAS
// GEMMs, evaluates the losses, and frees buffers at `saga.release`.
// Work is split at boundaries that depend only on the graph, so results are
// bit-identical for any thread count.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXECUTOR_H
#define SAGA_RUNTIME_EXECUTOR_H

#include "runtime/graph/EdgeChunks.h"
#include "runtime/graph/Graph.h"
#include "runtime/graph/PairSet.h"
#include "runtime/memory/Tensor.h"
#include "runtime/exec/ThreadPool.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <vector>

namespace saga {

class Distribution;
class KernelDevice;
class RowExtentsCache;
class ModelOp;

/// Rows [begin, end) of a streamed graph input (e.g. features read from a
/// graph file), written to `to`.
using RowReader =
    std::function<llvm::Error(int64_t begin, int64_t end, float *to)>;

struct ExecutionContext {
  const Graph *graph = nullptr;
  ThreadPool *pool = nullptr;
  const KernelDevice *kernels = nullptr; // where generated kernels run
  const llvm::StringMap<Tensor> *inputs = nullptr; // by graph-input name
  const llvm::StringMap<Tensor> *params = nullptr; // by parameter name
  std::vector<int32_t> lossMask; // empty: all labelled vertices
  /// The labelled vertex pairs a link-prediction loss (saga.pair_bce)
  /// scores; null: none bound (such a loss is then an error).
  const PairSet *pairs = nullptr;
  bool exactLossMask = false;    // empty: none (ForwardOptions)
  uint64_t seed = 0;             // training-mode dropout masks
  /// Per-step wall times, in plan order (filled when non-null).
  std::vector<std::pair<std::string, double>> *profile = nullptr;
  /// The most bytes of plan buffers (kernel, GEMM and loss results; not
  /// inputs or parameters) alive at once (filled when non-null).
  size_t *peakBytes = nullptr;
  /// Write a kernel result over an operand that dies with the kernel when
  /// the kernel allows it (its saga.overwritable pairs) instead of
  /// allocating: same results, one buffer fewer alive.
  bool reuseBuffers = true;
  /// Source intervals for propagations (NGra's 2-D chunks in memory): 1
  /// runs each propagation over the whole CSR; P > 1 over P intervals of
  /// the other end, one after another (same results, bit for bit); 0 picks
  /// per propagation (cacheSizedIntervals). Needs `chunks`.
  int64_t sourceIntervals = 1;
  EdgeChunkCache *chunks = nullptr;
  /// What a chunked run hands back of the vertex values the plan returns
  /// (the in-memory executor always returns their rows): the rows, each
  /// row's argmax class (int32 [V]: a prediction's classes, a fraction of
  /// its size), or nothing (an empty tensor in its place).
  enum class VertexOutputs { Rows, Argmax, Drop };
  VertexOutputs vertexOutputs = VertexOutputs::Rows;
  /// Where a chunked run reads its 2-D chunks (default: `chunks`).
  ChunkSource *chunkSource = nullptr;
  /// Graph inputs read interval by interval when a chunked run loads them
  /// (not in `inputs`), by name.
  const std::map<std::string, RowReader> *rowReaders = nullptr;
  /// Graph inputs left to their default (not in `inputs`), by name: a
  /// chunked run fills each piece with the value when the plan loads it.
  const std::map<std::string, float> *inputDefaults = nullptr;
  /// The most source intervals any propagation ran over (filled when
  /// non-null; 1 when none was chunked).
  int64_t *intervalsUsed = nullptr;
  /// One part of a partitioned graph (runtime/distributed/Distribution.h):
  /// `graph` is the part's local graph; maps and GEMMs run over its owned
  /// rows, halos are exchanged before propagations, sums over rows are
  /// summed over the parts. Needs sourceIntervals = 1 (no 2-D chunks).
  Distribution *dist = nullptr;
  /// A sampled graph (ForwardOptions::degrees, vertexIds): per vertex, the
  /// degree and id the plan's degree and vertex-id ops read; null: the
  /// graph's own.
  const std::vector<float> *degrees = nullptr;
  const std::vector<int32_t> *vertexIds = nullptr;
  /// A sampled batch in hop order (ForwardOptions::rowLevels): rows
  /// [0, rowLevels[k]) lie within k hops of the loss rows; each op computes
  /// only the rows it needs (runtime/exec/RowExtents.h). Empty: all rows.
  std::vector<int64_t> rowLevels;
  /// Where the extents of a plan are kept between runs (null: computed
  /// each run).
  RowExtentsCache *extentsCache = nullptr;
  /// Row blocks of the in-edge kernels (ForwardOptions::propagationBlocks);
  /// null: about equal in-edges per block.
  const std::vector<int64_t> *propagationBlocks = nullptr;
};

/// Runs `model` and returns its results in order (vertex values as [V, ...]
/// tensors, scalars as rank-0 tensors).
llvm::Expected<std::vector<Tensor>> execute(ModelOp model,
                                            const ExecutionContext &ctx);

} // namespace saga

#endif // SAGA_RUNTIME_EXECUTOR_H
