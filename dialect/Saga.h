//===- Saga.h - the saga dialect: types, attributes, ops --------*- C++ -*-===//
//
// The one header users of the dialect include.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_DIALECT_SAGA_H
#define SAGA_DIALECT_SAGA_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialect/SagaDialect.h.inc"
#include "dialect/SagaEnums.h.inc"

#include "dialect/SagaTypeInterfaces.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialect/SagaTypes.h.inc"

namespace saga {
/// Registers the saga dialect and every dialect and interface its pipelines
/// use (func with its inliner, arith, scf, memref, math).
void registerSagaDialects(mlir::DialectRegistry &registry);

/// Shared verifiers named from ODS (`extraClassDefinition`).
llvm::LogicalResult verifyBroadcastOp(mlir::Operation *op);
llvm::LogicalResult verifyApplyOp(mlir::Operation *op, bool edgeDomain);
/// Canonicalisation of apply_vertex (apply_edge is left alone): a result that
/// yields a body argument unchanged is that input (its uses move there);
/// results nobody reads and inputs the body does not read are dropped, so
/// that the kernel neither copies a tensor nor keeps one alive for nothing.
llvm::LogicalResult canonicalizeApplyOp(mlir::Operation *op,
                                        mlir::PatternRewriter &rewriter);

/// The NumPy broadcast of two shapes, or failure if they are incompatible.
llvm::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// `[2, 3]` for diagnostics; `[]` for a scalar.
std::string formatShape(llvm::ArrayRef<int64_t> shape);
} // namespace saga

#define GET_OP_CLASSES
#include "dialect/SagaOps.h.inc"

#endif // SAGA_DIALECT_SAGA_H
