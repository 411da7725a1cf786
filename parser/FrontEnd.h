//===- FrontEnd.h - .saga source to saga IR ---------------------*- C++ -*-===//
//
// The .saga front end: ANTLR4 parsing, semantic checks and MLIR generation.
// Errors are MLIR diagnostics located at file:line:col of the source.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_PARSER_FRONTEND_H
#define SAGA_PARSER_FRONTEND_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

namespace saga {

/// Compiles the main buffer of `sourceMgr` (named by its buffer identifier)
/// into a module of saga IR. Every problem is reported through `ctx`'s
/// diagnostic handler; on any error the result is null. `outputs` names
/// vertex values of the model body to return as well (generateModule).
mlir::OwningOpRef<mlir::ModuleOp>
compileSaga(llvm::SourceMgr &sourceMgr, mlir::MLIRContext &ctx,
            llvm::ArrayRef<std::string> outputs = {});

/// Loads the dialects the generated IR uses.
void loadFrontEndDialects(mlir::MLIRContext &ctx);

} // namespace saga

#endif // SAGA_PARSER_FRONTEND_H
