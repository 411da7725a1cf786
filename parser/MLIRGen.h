//===- MLIRGen.h - .saga parse tree to saga IR ------------------*- C++ -*-===//
//
// Semantic analysis and IR generation in one walk: names, compile-time
// shapes and domains are checked while the saga ops are built, so every op
// carries the FileLineColLoc of the source it came from.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_PARSER_MLIRGEN_H
#define SAGA_PARSER_MLIRGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace saga::grammar {
class SagaParser;
}

namespace antlr4 {
class ParserRuleContext;
}

namespace saga {

/// Generates a module from a parsed file (a `SagaParser::FileContext`).
/// `outputs` names vertex values of the model body (the value a name holds
/// at the end of the model) to return after `out` and `loss`; their names
/// go in the model's `saga.outputs` attribute. Returns null if any error
/// was reported.
mlir::OwningOpRef<mlir::ModuleOp>
generateModule(antlr4::ParserRuleContext *file, mlir::MLIRContext &ctx,
               mlir::StringAttr filename,
               llvm::ArrayRef<std::string> outputs = {});

} // namespace saga

#endif // SAGA_PARSER_MLIRGEN_H
