//===- BatchRows.h - where a mini-batch's feature rows come from -*- C++ -*-===//
//
// The loader of a mini-batch run (MiniBatches) copies the feature rows of a
// batch's vertices into the batch's input. On one process they are rows of
// the whole feature matrix in memory (LocalBatchRows); a trainer of a
// distributed run holds only its partition's rows and fetches the others
// from their owners (runtime/distributed/RemoteFeatures.h).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_SAMPLE_BATCHROWS_H
#define SAGA_RUNTIME_SAMPLE_BATCHROWS_H

#include "runtime/memory/Tensor.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace saga {

class ThreadPool;

class BatchRows {
public:
  virtual ~BatchRows() = default;
  /// Floats per row.
  virtual int64_t width() const = 0;
  /// Writes the rows of `vertices` (whole-graph ids, distinct) to `out`
  /// (vertices.size() x width()), in that order. Called from one thread
  /// (the loader), batch after batch; `pool` may share the copying.
  virtual llvm::Error gather(const std::vector<int32_t> &vertices, float *out,
                             ThreadPool &pool) = 0;
};

/// Rows of a matrix in memory, the whole graph's (row v: vertex v).
class LocalBatchRows : public BatchRows {
public:
  explicit LocalBatchRows(const Tensor &rows) : rows(rows) {}
  int64_t width() const override { return rows.rowSize(); }
  llvm::Error gather(const std::vector<int32_t> &vertices, float *out,
                     ThreadPool &pool) override;

  /// The copy itself: row `first[i] - base` of `rows` to row `to[i]` of
  /// `out` for every i (to: null, row i), in parallel, fetching the rows
  /// a few ahead (rows far apart in a large matrix).
  static void copyRows(const float *rows, int64_t width, int32_t base,
                       const std::vector<int32_t> &first,
                       const std::vector<int64_t> *to, float *out,
                       ThreadPool &pool);

private:
  const Tensor &rows;
};

} // namespace saga

#endif // SAGA_RUNTIME_SAMPLE_BATCHROWS_H
