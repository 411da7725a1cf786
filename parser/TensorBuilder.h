//===- TensorBuilder.h - shape-checked per-element ops ----------*- C++ -*-===//
//
// Emits the saga tensor ops a .saga expression denotes, inferring result
// shapes and reporting mismatches at the user's source location in source
// terms (the operator or function the user wrote).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_PARSER_TENSORBUILDER_H
#define SAGA_PARSER_TENSORBUILDER_H

#include "dialect/Saga.h"

#include "mlir/IR/Builders.h"

namespace saga {

/// Every method returns a null Value after reporting an error.
class TensorBuilder {
public:
  /// `errors` counts every error reported, so callers know to stop.
  TensorBuilder(mlir::OpBuilder &b, unsigned &errors) : b(b), errors(errors) {}

  mlir::Value constant(mlir::Location loc, double value);
  /// `+ - * /` with broadcasting, or `@`.
  mlir::Value binary(mlir::Location loc, char op, mlir::Value lhs,
                     mlir::Value rhs);
  /// relu, elu, sigmoid, tanh, exp, log, rsqrt, abs, neg.
  mlir::Value unary(mlir::Location loc, llvm::StringRef fn, mlir::Value x);
  mlir::Value leakyRelu(mlir::Location loc, mlir::Value x, double slope);
  mlir::Value dropout(mlir::Location loc, mlir::Value x, double rate);
  mlir::Value reduce(mlir::Location loc, ReduceKind kind, mlir::Value x,
                     int64_t axis);
  mlir::Value concat(mlir::Location loc, llvm::ArrayRef<mlir::Value> xs);
  mlir::Value reshape(mlir::Location loc, mlir::Value x,
                      llvm::ArrayRef<int64_t> shape);

  static bool isUnary(llvm::StringRef fn);

private:
  mlir::Value matmul(mlir::Location loc, mlir::Value lhs, mlir::Value rhs);
  mlir::InFlightDiagnostic error(mlir::Location loc) {
    ++errors;
    return mlir::emitError(loc);
  }
  mlir::OpBuilder &b;
  unsigned &errors;
};

/// A number as a user wrote it: `0.5`, `1e-05`, not `5.000000e-01`.
std::string formatNumber(double value);

} // namespace saga

#endif // SAGA_PARSER_TENSORBUILDER_H
