//===- KernelEmitter.h - loop kernels from stage bodies ---------*- C++ -*-===//
//
// Turns an `apply_vertex`, a `propagate` or an `edge_map` into a kernel
// function over a range of vertex rows, written in scf/memref/arith/math on
// flat row-major buffers.
// The kernel level is backend-neutral: the CPU backend lowers it to LLVM,
// and a CUDA backend emits from the same functions.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_CODEGEN_KERNELEMITTER_H
#define SAGA_CODEGEN_KERNELEMITTER_H

#include "dialect/Saga.h"
#include "support/KernelAbi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace saga {

struct Kernel {
  mlir::func::FuncOp func;
  /// The values to pass, in the kernel's buffer order (after the row range
  /// and the graph arrays): the op's domain inputs, then the tensors its body
  /// captures (parameters, scalars).
  llvm::SmallVector<mlir::Value> operands;
  /// A propagate kernel (reduces over each row's in- or out-edges).
  bool propagate = false;
  /// An edge_map kernel (writes a row per in-edge of each row).
  bool edgeMap = false;
};

/// Emits the kernel for `op` (an ApplyVertexOp, PropagateOp or EdgeMapOp) as a
/// `func.func` named `name` at `moduleBuilder`'s insertion point. With an
/// `epilogue` (an apply_vertex of a PropagateOp's result, the only user of
/// that result, whose other operands are available where `op` runs) the
/// kernel runs the epilogue's body on each reduced row and writes the
/// epilogue's results instead: the propagation's result never exists.
/// Reports an error on `op` and fails for bodies it cannot lower.
mlir::FailureOr<Kernel> emitKernel(mlir::Operation *op, llvm::StringRef name,
                                   mlir::OpBuilder &moduleBuilder,
                                   ApplyVertexOp epilogue = nullptr);

} // namespace saga

#endif // SAGA_CODEGEN_KERNELEMITTER_H
