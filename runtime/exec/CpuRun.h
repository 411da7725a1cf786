//===- CpuRun.h - the CPU's steps of an in-memory run -----------*- C++ -*-===//
//
// The CPU device behind the in-memory walker (InMemoryWalker.h): values in
// host memory, generated kernels over row blocks on the thread pool, GEMMs
// by BLAS, reductions per fixed row block (the same bits for any thread
// count). Also a part of a partitioned graph (ctx.dist: halo exchanges
// around the propagations) and a sampled batch (ctx.rowLevels: each op over
// the rows it needs). Private to runtime/exec: CpuLaunch.cpp holds its
// kernel launches, Executor.cpp the rest.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_CPURUN_H
#define SAGA_RUNTIME_EXEC_CPURUN_H

#include "runtime/exec/Executor.h"
#include "runtime/exec/ExecHelpers.h"
#include "runtime/exec/FastExp.h"
#include "runtime/exec/InMemoryWalker.h"
#include "runtime/exec/BatchNorm.h"
#include "runtime/exec/PairLoss.h"
#include "runtime/exec/Readout.h"

#include "runtime/exec/KernelDevice.h"
#include "runtime/exec/RowExtents.h"
#include "runtime/distributed/Distribution.h"
#include "support/KernelAbi.h"
#include "dialect/Saga.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/ScopeExit.h"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <map>
#include <numeric>
#include <optional>
#include <thread>

namespace saga::exec {

/// The CPU's steps of an in-memory run: values in host memory, kernels
/// over row blocks on the thread pool, GEMMs by BLAS; on a part of a
/// partitioned graph (ctx.dist) with halo exchanges, on a sampled batch
/// (ctx.rowLevels) over each op's rows only.
class CpuRun : public InMemoryWalker {
public:
  explicit CpuRun(const ExecutionContext &ctx) : InMemoryWalker(ctx) {}

private:
  llvm::Error begin(ModelOp model) override;
  llvm::Error param(ParamOp op) override;
  llvm::Error degrees(Value result) override;
  llvm::Error vertexIds(Value result) override;
  llvm::Error launch(LaunchOp op) override;
  llvm::Error linear(LinearOp op) override;
  llvm::Error linearGradInput(LinearGradInputOp op) override;
  llvm::Error weightGradient(LinearGradWeightOp op) override;
  llvm::Error sumRows(SumRowsOp op) override;
  llvm::Error crossEntropy(CrossEntropyOp op) override;
  llvm::Error crossEntropyGrad(CrossEntropyGradOp op) override;
  llvm::Error readout(ReadoutOp op,
                      const std::vector<int64_t> &bounds) override;
  llvm::Error readoutGrad(ReadoutGradOp op,
                          const std::vector<int64_t> &bounds) override;
  llvm::Error batchNorm(BatchNormOp op) override;
  llvm::Error batchNormGrad(BatchNormGradOp op) override;
  llvm::Error pairBce(PairBceOp op, const PairSet &pairs) override;
  llvm::Error pairBceGrad(PairBceGradOp op, const PairSet &pairs) override;
  llvm::Error l2(L2Op op) override;
  llvm::Error fill(Value result, float value) override;
  llvm::Error neg(Operation *op) override;
  llvm::Error binary(Operation *op, int64_t na, int64_t nb,
                     int64_t n) override;
  void release(Value v) override;
  llvm::Expected<std::vector<Tensor>> results(ReturnOp op) override;
  void after(Operation *op) override {
    if (extents)
      zeroPastExtent(op);
  }
  std::string name() const override { return "CPU"; }

  const Tensor *lookup(Value v) {
    auto it = values.find(v);
    return it == values.end() ? nullptr : it->second;
  }
  /// Rows of a graph-wide value: one per edge (self loops included) or per
  /// vertex.
  int64_t rowsOf(Type type) const {
    auto d = dyn_cast<DomainType>(type);
    return d && d.isEdgeDomain() ? ctx.graph->numEdges
                                 : ctx.graph->numVertices;
  }
  Tensor *allocate(Value v) {
    auto t = std::make_unique<Tensor>(Tensor::uninitialized(
        shapeOf(v.getType(), rowsOf(v.getType())), dtypeOf(v.getType())));
    Tensor *raw = t.get();
    liveBytes += size_t(raw->numElements()) * 4;
    peakBytes = std::max(peakBytes, liveBytes);
    owned[v] = std::move(t);
    values[v] = raw;
    return raw;
  }

  llvm::Error bindInput(ModelOp model, BlockArgument arg);
  /// How many source intervals a propagate kernel runs over (1: unchunked).
  int64_t intervalsFor(func::FuncOp kernel, bool reversed) const;
  void rowGemm(const Tensor &x, const Tensor &w, Tensor &y,
               bool transposeWeight, const std::vector<int64_t> &blocks);
  double lossOf(const Tensor &logits, const Tensor &labels);
  /// The rows a loss reads: the loss mask, or every row.
  std::vector<int32_t> lossRows(int64_t numRows) const;
  /// fn(chunk, begin, end) over fixed chunks of [0, n), in parallel.
  void forChunks(size_t n,
                 const std::function<void(int64_t, size_t, size_t)> &fn);

  /// A vertex result of a map or propagate kernel that is only ever summed
  /// over its rows: its saga.sum_rows, else null.
  static SumRowsOp onlySummed(Value result);
  /// Kernel result `result` written over a dying operand's buffer, when the
  /// kernel allows it (its saga.overwritable pairs, from the emitter) and
  /// the operand is read by nothing after `op`; else null.
  Tensor *reuse(LaunchOp op, Value result,
                llvm::ArrayRef<int64_t> overwritable);
  /// `operand`'s buffer, now `result`'s (reinterpreted to its shape), when
  /// `operand` is a plan buffer (not an input or parameter) that nothing
  /// reads after `op` (only its release follows); else null, and nothing
  /// changes.
  Tensor *takeOver(Operation *op, Value operand, Value result);
  /// sum_rows results formed inside the kernel that produced their input,
  /// keyed by that input (which is never stored whole).
  llvm::DenseMap<Value, Tensor> summedInKernel;
  size_t liveBytes = 0, peakBytes = 0; // plan buffers (4-byte elements)

  llvm::DenseMap<Value, const Tensor *> values;
  llvm::DenseMap<Value, std::unique_ptr<Tensor>> owned;

  std::vector<int64_t> mapBlocks, inBlocks, outBlocks;
  /// On a sampled batch (ctx.rowLevels): the rows each op computes
  /// (runtime/exec/RowExtents.h) and their row blocks.
  std::optional<RowExtents> extents;
  enum BlockKind { kMapBlocks, kInBlocks, kOutBlocks };
  std::map<std::pair<int, int64_t>, std::vector<int64_t>> extentBlocks;
  /// The row blocks `op` runs: of its extent on a sampled batch, else all
  /// of `kind`'s.
  const std::vector<int64_t> &blocksOf(Operation *op, BlockKind kind);
  /// Zeros past a value's computed rows that a later op reads.
  void zeroPastExtent(Operation *op);
  /// Local row ranges a kernel's tasks run, in order.
  using Ranges = std::vector<std::pair<int64_t, int64_t>>;
  static Ranges rangesOf(const std::vector<int64_t> &blocks);
  /// A part's in-edge tasks split around a halo gather (ctx.dist): the
  /// interior rows, whose in-edges are all owned, run while the gather is
  /// in flight; the others after it. Whole blocks when the kernel sums its
  /// rows per block (`blockwise`), else runs of interior rows within them.
  struct InteriorSplit {
    Ranges interior, boundary;
  };
  InteriorSplit interiorSplit[2]; // [blockwise]
  void splitInterior();
  /// Row blocks a sum over rows adds up (kRowsPerTask rows each, over all
  /// local rows).
  int64_t sumBlocks = 0;

  // A part of a partitioned graph (ctx.dist): vertex values whose halo rows
  // hold their owners' values (inputs, degrees, ids, gathered values).
  llvm::DenseSet<Value> haloValid;
  /// Whether `v` (on a part) has halo rows that do not hold their owners'
  /// values yet.
  bool needsHalo(Value v) const;
  /// Starts fetching the halo rows of plan buffer `v` (ctx.dist->finish()
  /// completes it).
  llvm::Error startGather(Value v);
  /// The halo rows of `v` fetched from their owners, unless they hold them.
  llvm::Error refreshHalo(Value v);
  /// Sums over the parts (no-ops in one process).
  llvm::Error sumOverParts(double *values, int64_t n) {
    return ctx.dist ? ctx.dist->sum(values, n) : llvm::Error::success();
  }
  llvm::Error sumOverParts(float *values, int64_t n) {
    return ctx.dist ? ctx.dist->sum(values, n) : llvm::Error::success();
  }
  /// A kernel's view of buffer `data` of `type`: moved back by the part's
  /// first global row (or edge), so that global numbers index it.
  FlatMemRef kernelBuffer(void *data, int64_t size, Type type) const;
};

} // namespace saga::exec

#endif // SAGA_RUNTIME_EXEC_CPURUN_H
