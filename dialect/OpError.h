//===- OpError.h - an llvm::Error located at an operation -------*- C++ -*-===//
//
// Errors found while planning or running a model name the `.saga` source
// position of the operation they concern, as compile-time diagnostics do:
// `file:line:col: message`. Used by analysis/ (the chunk plan's checks)
// and runtime/ (the executors).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_DIALECT_OPERROR_H
#define SAGA_DIALECT_OPERROR_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace saga {

inline llvm::Error errorAt(mlir::Operation *op, const llvm::Twine &message) {
  // `file:line:col`, as compile-time diagnostics print it.
  std::string loc;
  llvm::raw_string_ostream os(loc);
  if (auto flc = llvm::dyn_cast<mlir::FileLineColLoc>(op->getLoc()))
    os << flc.getFilename().getValue() << ':' << flc.getLine() << ':'
       << flc.getColumn();
  else
    os << op->getLoc();
  return llvm::createStringError(os.str() + ": " + message);
}

} // namespace saga

#endif // SAGA_DIALECT_OPERROR_H
