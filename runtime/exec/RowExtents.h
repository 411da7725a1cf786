//===- RowExtents.h - which rows of a plan a sampled batch needs -*- C++ -*-===//
//
// On a sampled mini-batch (runtime/sample/NeighborSampler.h) the rows are in
// hop order: levels[k] rows lie within k hops of the seeds, and the loss
// reads the seeds only. A layer's result is then needed on fewer rows the
// closer it is to the loss: the last layer's on the seeds, the one before
// on the rows within one hop, and so on, which is what DGL's message-flow
// blocks compute. This analysis gives every op of a training or inference
// plan the level of rows it computes (rows [0, levels[k])), so that the
// executor runs each layer over its block only:
//
//  - need, from the results back: a row-wise op (map kernel, GEMM, a GEMM's
//    input gradient) needs its operands on its own rows; a propagation
//    needs the values it reads at the sources one hop farther; the loss
//    needs the seeds; a sum over rows (bias and weight gradients) needs its
//    operand wherever that can be non-zero;
//  - support, from the loss forward: a gradient is non-zero only within
//    the hops the loss reaches back (the seeds, then one hop more per
//    reversed propagation). Backward ops are linear in the gradients they
//    read, so a gradient's support is the union of its gradient operands'.
//
// An op computes the most rows its results need, a gradient no farther
// than its support. Rows past a value's computed extent that a later op
// still reads (a gradient past its support, read by a reversed propagation
// at the targets of its rows' edges) are zeros: `zeroFill`. Only rows within
// layers - 1 hops have sampled in-edges, so those targets lie within them
// (or are the row itself, through a self loop).
//
// The loss gradient is made on the seeds and zeroed past them only where a
// later op reads.
//
// Plans with values per edge (unfused propagation) have no row structure
// per edge: they get no extents and run every row.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_ROWEXTENTS_H
#define SAGA_RUNTIME_EXEC_ROWEXTENTS_H

#include "dialect/Saga.h"

#include "llvm/ADT/DenseMap.h"

#include <map>
#include <optional>
#include <utility>

namespace saga {

struct RowExtents {
  /// The level of rows each op computes (ops absent: all rows).
  llvm::DenseMap<mlir::Operation *, int64_t> opLevel;
  /// Values to zero past their computed level, up to the level a later op
  /// reads: value -> (computed level, read level).
  llvm::DenseMap<mlir::Value, std::pair<int64_t, int64_t>> zeroFill;
};

/// The extents of `plan` on a batch with `layers` hops (levels 0..layers;
/// level `layers` is every row); none for plans with edge values.
std::optional<RowExtents> rowExtents(ModelOp plan, int64_t layers);

/// rowExtents, computed once per plan and hop count (a model keeps one:
/// every mini-batch of a run asks the same).
class RowExtentsCache {
public:
  const std::optional<RowExtents> &get(ModelOp plan, int64_t layers) {
    auto key = std::make_pair(plan.getOperation(), layers);
    auto it = cache.find(key);
    if (it == cache.end())
      it = cache.emplace(key, rowExtents(plan, layers)).first;
    return it->second;
  }

private:
  std::map<std::pair<mlir::Operation *, int64_t>, std::optional<RowExtents>>
      cache;
};

} // namespace saga

#endif // SAGA_RUNTIME_EXEC_ROWEXTENTS_H
