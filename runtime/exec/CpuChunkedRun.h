//===- CpuChunkedRun.h - the CPU's steps of a chunked run -------*- C++ -*-===//
//
// The CPU device behind the chunked walker (ChunkedWalker.h): the plan's
// pieces in host memory (the device tier), generated kernels over the row
// blocks of interval j on the thread pool, GEMMs by BLAS, sums over rows
// and losses formed as the in-memory run forms them (the same bits).
// Private to runtime/exec: ChunkedExecutor.cpp runs it.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_CPUCHUNKEDRUN_H
#define SAGA_RUNTIME_EXEC_CPUCHUNKEDRUN_H

#include "runtime/exec/ChunkedExecutor.h"
#include "runtime/exec/ChunkedWalker.h"

#include "analysis/ChunkPlan.h"
#include "runtime/exec/ExecHelpers.h"

#include "runtime/exec/KernelDevice.h"
#include "support/KernelAbi.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cblas.h>

#include <cstring>
#include <set>

namespace saga::exec {

/// The CPU's steps of a chunked run: pieces in host memory, kernels over
/// row blocks on the thread pool, GEMMs by BLAS.
class CpuChunkedRun : public ChunkedWalker {
public:
  CpuChunkedRun(ModelOp model, const ExecutionContext &ctx, const PlanMemory &pm)
      : ChunkedWalker(model, ctx, pm) {
    mapBlocks = rowBlocks(g, nullptr);
    inBlocks = rowBlocks(g, &g.inOffsets);
    outBlocks = rowBlocks(g, &g.outOffsets);
  }

  /// Reads input tensor t of the problem (a piece of a graph input, a
  /// parameter, a constant) from where it lives: the caller's tensor, a
  /// streamed input's reader, or the constant's value. The next tier's
  /// loads of inputs come here: inputs are never copied down first.
  llvm::Expected<int64_t> readInput(int t, void *to, int64_t bytes,
                                    const RowSelection *rows);

private:
  /// The caller's tensor behind a graph input or parameter, or null.
  const Tensor *external(Value v) const;
  /// Row 0 of `v` as seen from interval j (a piece's base shifted back by
  /// its first row), or the whole value; allocates small plan values.
  char *addr(Value v, int64_t j, Resident &r);
  /// The task boundaries of `blocks` inside interval j.
  std::vector<int64_t> window(const std::vector<int64_t> &blocks,
                              int64_t j) const;
  llvm::Error launch(LaunchOp op, int64_t i, int64_t j, Resident &r) override;
  llvm::Error gemm(Value x, Value w, Value y, bool transpose, int64_t j,
                   Resident &r) override;
  llvm::Error degrees(Value result, int64_t j, Resident &r) override;
  llvm::Error vertexIds(Value result, int64_t j, Resident &r) override;
  llvm::Error sumRows(SumRowsOp op, int64_t j, bool first, bool last,
                      Resident &r) override;
  llvm::Error weightGradient(LinearGradWeightOp op, int64_t j, bool first,
                             bool last, Resident &r) override;
  llvm::Error crossEntropy(CrossEntropyOp op, int64_t j, bool first, bool last,
                           Resident &r) override;
  llvm::Error crossEntropyGrad(CrossEntropyGradOp op, int64_t j, bool first,
                               Resident &r) override;
  llvm::Error l2(Operation *op, int64_t n, int64_t j, Resident &r) override;
  llvm::Error neg(Operation *op, int64_t n, int64_t j, Resident &r) override;
  llvm::Error binary(Operation *op, int64_t na, int64_t nb, int64_t n,
                     int64_t j, Resident &r) override;
  llvm::Error read(Value v, int64_t j, Resident &r, int64_t offset,
                   int64_t bytes, void *to) override;
  llvm::Expected<const char *> hostBytes(Value v, int64_t j, Resident &r,
                                         int64_t offset, int64_t,
                                         std::vector<char> &) override {
    return addr(v, j, r) + offset; // the piece itself, no copy
  }
  std::string unsupported() const override {
    return "run under a memory budget";
  }
  /// The loss rows and labels a loss over interval j reads.
  struct Loss {
    const float *logits;
    const int32_t *labels;
    int64_t c;
    const std::vector<int32_t> &rows;
  };
  Loss loss(Value logits, Value labels, int64_t j, Resident &r);

  std::vector<int64_t> mapBlocks, inBlocks, outBlocks;
  llvm::DenseMap<Value, Tensor> pinned;   // small values the plan makes
  // Reductions over rows, accumulated interval by interval.
  llvm::DenseMap<Operation *, std::vector<double>> blockSums;
  llvm::DenseMap<Operation *, std::vector<float>> slices;
  /// A loss's sum, formed as the in-memory executor forms it: each loss
  /// row's term, per 8192-entry chunk of the loss rows in order, chunks
  /// in order. With ascending loss rows each interval's terms arrive in
  /// that order, so only the chunks' running sums are kept; otherwise
  /// every term, summed at the last interval.
  struct LossSum {
    std::vector<double> chunks; // ascending rows: the chunks' running sums
    std::vector<double> terms;  // otherwise: each row's term
    std::vector<char> counted;  // ... and whether it has a label
    int64_t n = 0;              // the terms added to the chunks
  };
  llvm::DenseMap<Operation *, LossSum> lossSums;
  std::vector<int32_t> allRows;       // every row, without a loss mask
  const std::vector<int32_t> *lossRowsOnce = nullptr; // mask, or allRows
  /// Whether the loss rows ascend: interval j's places in them are then
  /// [lossBegin[j], lossBegin[j + 1]).
  bool lossAscending = false;
  std::vector<int64_t> lossBegin;
  /// Otherwise, per interval, the places in *lossRowsOnce of the rows it
  /// holds, in order (a loss over interval j visits only those); then all
  /// places.
  std::vector<std::vector<int32_t>> lossPlaces;
  const std::vector<int32_t> &lossPlacesIn(int64_t j);
  /// The loss rows, once.
  const std::vector<int32_t> &lossRows();
  /// The places [begin, end) of interval j's loss rows when they ascend.
  std::pair<int64_t, int64_t> lossRange(int64_t j) const {
    return j < 0 ? std::pair<int64_t, int64_t>(0, int64_t(lossRowsOnce->size()))
                 : std::pair(lossBegin[size_t(j)], lossBegin[size_t(j) + 1]);
  }
  /// fn(q, row, e) for the loss rows of interval j with a label in [0, c),
  /// in parallel (e: c floats of scratch per task); `byRow` when fn writes
  /// into the row (a repeated row's places then run in one task, in order).
  void forLossRows(int64_t j, const int32_t *labels, int64_t c, bool byRow,
                   const std::function<void(int32_t, int32_t,
                                            std::vector<float> &)> &fn);
  llvm::DenseMap<Operation *, int64_t> lossCounts; // rows with a label
};

} // namespace saga::exec

#endif // SAGA_RUNTIME_EXEC_CPUCHUNKEDRUN_H
