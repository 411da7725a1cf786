//===- InMemoryWalker.h - the in-memory plan's walk, for every device -*- C++ -*-===//
//
// An in-memory run holds every value of the plan whole on one device and
// executes the plan's ops in order. What every device does the same way
// lives here, once: which op a step is, the checks of model-level
// arithmetic and constants, the per-step profile, and the order of
// binding, running and releasing. What differs per device (where values
// live, how a kernel, a GEMM or a reduction runs) is the steps below: the
// CPU's in Executor.cpp (with the distributed and sampled-batch cases),
// CUDA's in cuda/CudaExecutor.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_INMEMORYWALKER_H
#define SAGA_RUNTIME_EXEC_INMEMORYWALKER_H

#include "runtime/exec/Executor.h"

#include "dialect/Saga.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace saga {

class InMemoryWalker {
public:
  explicit InMemoryWalker(const ExecutionContext &ctx) : ctx(ctx) {}
  virtual ~InMemoryWalker();

  /// Runs `model` and returns its results in order.
  llvm::Expected<std::vector<Tensor>> walk(ModelOp model);

protected:
  /// Before the first op: the graph's arrays and inputs bound.
  virtual llvm::Error begin(ModelOp model) = 0;
  virtual llvm::Error param(ParamOp op) = 0;
  virtual llvm::Error degrees(mlir::Value result) = 0;
  virtual llvm::Error vertexIds(mlir::Value result) = 0;
  virtual llvm::Error launch(LaunchOp op) = 0;
  virtual llvm::Error linear(LinearOp op) = 0;
  virtual llvm::Error linearGradInput(LinearGradInputOp op) = 0;
  virtual llvm::Error weightGradient(LinearGradWeightOp op) = 0;
  virtual llvm::Error sumRows(SumRowsOp op) = 0;
  virtual llvm::Error crossEntropy(CrossEntropyOp op) = 0;
  virtual llvm::Error crossEntropyGrad(CrossEntropyGradOp op) = 0;
  /// Graph readouts over `bounds` (Graph::graphBounds, checked): a graph's
  /// reduction on each of its rows, and a max or min readout's gradient
  /// (runtime/exec/Readout.h says the order of the arithmetic).
  virtual llvm::Error readout(ReadoutOp op,
                              const std::vector<int64_t> &bounds) = 0;
  virtual llvm::Error readoutGrad(ReadoutGradOp op,
                                  const std::vector<int64_t> &bounds) = 0;
  /// Batch norm and its gradient over all `rows` of the value
  /// (runtime/exec/BatchNorm.h says the order of the arithmetic).
  virtual llvm::Error batchNorm(BatchNormOp op) = 0;
  virtual llvm::Error batchNormGrad(BatchNormGradOp op) = 0;
  /// Link prediction's loss and its gradient over `pairs` (ctx.pairs,
  /// checked against the graph; runtime/exec/PairLoss.h says the order of
  /// the arithmetic).
  virtual llvm::Error pairBce(PairBceOp op, const PairSet &pairs) = 0;
  virtual llvm::Error pairBceGrad(PairBceGradOp op, const PairSet &pairs) = 0;
  /// Model-level values: sum of squares / 2, a splat constant, -x, and
  /// x (op) y with na, nb in {n, 1} elements (checked).
  virtual llvm::Error l2(L2Op op) = 0;
  virtual llvm::Error fill(mlir::Value result, float value) = 0;
  virtual llvm::Error neg(mlir::Operation *op) = 0;
  virtual llvm::Error binary(mlir::Operation *op, int64_t na, int64_t nb,
                             int64_t n) = 0;
  virtual void release(mlir::Value v) = 0;
  /// The returned values, on the host.
  virtual llvm::Expected<std::vector<Tensor>> results(ReturnOp op) = 0;
  /// Waits for the ops issued so far (a profile times the ops, not their
  /// issue).
  virtual llvm::Error synchronize() { return llvm::Error::success(); }
  /// After each op.
  virtual void after(mlir::Operation *) {}
  /// The device, in messages ("CPU").
  virtual std::string name() const = 0;

  const ExecutionContext &ctx;

private:
  llvm::Error step(mlir::Operation &op);
};

} // namespace saga

#endif // SAGA_RUNTIME_EXEC_INMEMORYWALKER_H
