//===- ChunkedWalker.h - the chunked plan's walk, for every device -*- C++ -*-===//
//
// A chunked run (ChunkedExecutor.h) executes the interval problem's
// operators in the memory plan's order (runMemoryPlan calls compute(k) for
// operator k): a plan op over row interval j, a propagation over 2-D chunk
// (i, j). What every device does the same way lives here, once: which op a
// step is and what it needs (first and last interval of a reduction, the
// element counts of model-level arithmetic), the per-op profile, handing
// each returned vertex value's rows to the caller once they are final, and
// the results at the return. What differs per device (where a piece lives,
// how a kernel, a GEMM or a reduction runs) is the steps below: the CPU's
// in ChunkedExecutor.cpp, CUDA's in cuda/CudaChunkedExecutor.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_CHUNKEDWALKER_H
#define SAGA_RUNTIME_EXEC_CHUNKEDWALKER_H

#include "analysis/PlanMemory.h"
#include "runtime/exec/Executor.h"
#include "runtime/memory/PlanRunner.h"

#include "dialect/Saga.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Error.h"

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace saga {

class ChunkedWalker {
public:
  ChunkedWalker(ModelOp model, const ExecutionContext &ctx,
                const PlanMemory &pm);
  virtual ~ChunkedWalker();

  bool isInput(int t) const { return pm.problem.tensors[size_t(t)].input; }
  /// Runs operator k of the problem (timed into ctx.profile per plan op,
  /// in first-run order), then hands the rows it made of returned vertex
  /// values to the caller's outputs.
  llvm::Error compute(int k, Resident &r);
  std::vector<Tensor> takeResults() { return std::move(results); }
  /// The returned vertex values' rows, as they are made; walkers of one
  /// run on several devices share one (each keeps the rows it finishes,
  /// the one that runs the return hands them over).
  using KeptRows = llvm::DenseMap<mlir::Value, Tensor>;
  void shareKeptRows(KeptRows *shared, std::mutex *guard) {
    kept = shared;
    keptMutex = guard;
  }

protected:
  int64_t lo(int64_t j) const { return j < 0 ? 0 : pm.bounds[size_t(j)]; }
  int64_t hi(int64_t j) const {
    return j < 0 ? g.numVertices : pm.bounds[size_t(j) + 1];
  }
  /// Elements per row of a graph-wide value (0 on an empty graph).
  int64_t width(mlir::Value v) const;

  // The steps, per device. `j` is the row interval (-1: the whole value),
  // `first` and `last` whether this is the op's first and last interval
  // (a reduction over rows starts and finishes there).
  virtual llvm::Error launch(LaunchOp op, int64_t i, int64_t j,
                             Resident &r) = 0;
  /// y = x @ w (or w^T) over interval j's rows.
  virtual llvm::Error gemm(mlir::Value x, mlir::Value w, mlir::Value y,
                           bool transpose, int64_t j, Resident &r) = 0;
  virtual llvm::Error degrees(mlir::Value result, int64_t j, Resident &r) = 0;
  virtual llvm::Error vertexIds(mlir::Value result, int64_t j,
                                Resident &r) = 0;
  virtual llvm::Error sumRows(SumRowsOp op, int64_t j, bool first, bool last,
                              Resident &r) = 0;
  virtual llvm::Error weightGradient(LinearGradWeightOp op, int64_t j,
                                     bool first, bool last, Resident &r) = 0;
  virtual llvm::Error crossEntropy(CrossEntropyOp op, int64_t j, bool first,
                                   bool last, Resident &r) = 0;
  virtual llvm::Error crossEntropyGrad(CrossEntropyGradOp op, int64_t j,
                                       bool first, Resident &r) = 0;
  /// Model-level values (whole): sum of squares / 2 of `n` elements, -x,
  /// and x (op) y with na, nb in {n, 1} (checked).
  virtual llvm::Error l2(mlir::Operation *op, int64_t n, int64_t j,
                         Resident &r) = 0;
  virtual llvm::Error neg(mlir::Operation *op, int64_t n, int64_t j,
                          Resident &r) = 0;
  virtual llvm::Error binary(mlir::Operation *op, int64_t na, int64_t nb,
                             int64_t n, int64_t j, Resident &r) = 0;
  /// Copies `bytes` bytes of `v` from byte `offset` of its row 0 as seen
  /// from interval j (-1: the whole value) to host memory at `to`.
  virtual llvm::Error read(mlir::Value v, int64_t j, Resident &r,
                           int64_t offset, int64_t bytes, void *to) = 0;
  /// The same bytes readable on the host: read() into `buffer` here; a
  /// device whose pieces are host memory points at them instead.
  virtual llvm::Expected<const char *> hostBytes(mlir::Value v, int64_t j,
                                                 Resident &r, int64_t offset,
                                                 int64_t bytes,
                                                 std::vector<char> &buffer);
  /// Waits for the steps issued so far (a profile times the steps, not
  /// their issue).
  virtual llvm::Error synchronize() { return llvm::Error::success(); }
  /// What a run on this device cannot do yet, for an op it does not know
  /// ("run under a memory budget").
  virtual std::string unsupported() const = 0;

  mutable ModelOp model;
  const ExecutionContext &ctx;
  const PlanMemory &pm;
  const Graph &g;
  int64_t parts = 1;
  /// The problem's tensor of (value, piece) and of (propagation, interval)
  /// (its running state).
  std::map<std::pair<void *, int64_t>, int> tensorOf;
  std::map<std::pair<mlir::Operation *, int64_t>, int> states;

private:
  llvm::Error dispatch(int k, Resident &r);
  llvm::Error finish(ReturnOp ret, Resident &r);
  void noteTime(mlir::Operation *op, double seconds);

  KeptRows outputs; // returned vertex values
  KeptRows *kept = &outputs;
  std::mutex *keptMutex = nullptr; // walkers on several threads
  llvm::DenseSet<mlir::Value> returned;
  llvm::DenseSet<mlir::Operation *> started;
  llvm::DenseMap<mlir::Operation *, size_t> profiled; // place in ctx.profile
  std::vector<Tensor> results;
};

} // namespace saga

#endif // SAGA_RUNTIME_EXEC_CHUNKEDWALKER_H
