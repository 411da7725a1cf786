//===- SyntaxErrors.h - ANTLR errors as MLIR diagnostics --------*- C++ -*-===//
//
// Installed on the lexer and the parser; rewrites ANTLR's messages in the
// user's terms and reports them at the offending file:line:col.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_PARSER_SYNTAXERRORS_H
#define SAGA_PARSER_SYNTAXERRORS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

#include "antlr4-runtime.h"

#include <set>

namespace saga {

class SyntaxErrorListener : public antlr4::BaseErrorListener {
public:
  explicit SyntaxErrorListener(mlir::StringAttr file) : file(file) {}

  void syntaxError(antlr4::Recognizer *recognizer,
                   antlr4::Token *offendingSymbol, size_t line,
                   size_t charPositionInLine, const std::string &msg,
                   std::exception_ptr e) override;

  unsigned numErrors() const { return errors; }

private:
  mlir::StringAttr file;
  unsigned errors = 0;
  std::set<size_t> lexerErrorLines;
};

/// ANTLR's message with token names spelled for users ("a name", "end of
/// file") and its phrasing turned into "expected ... " form.
std::string rewriteSyntaxMessage(const std::string &msg);

} // namespace saga

#endif // SAGA_PARSER_SYNTAXERRORS_H
