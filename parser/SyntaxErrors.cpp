//===- SyntaxErrors.cpp - ANTLR errors as MLIR diagnostics ----------------===//

#include "parser/SyntaxErrors.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"

#include <regex>

using namespace saga;

static std::string spellTokens(std::string s) {
  static const std::pair<std::regex, const char *> names[] = {
      {std::regex("'<EOF>'|<EOF>"), "end of file"},
      {std::regex("\\bID\\b"), "a name"},
      {std::regex("\\bINT\\b"), "an integer"},
      {std::regex("\\bFLOAT\\b"), "a number"},
  };
  for (const auto &[re, name] : names)
    s = std::regex_replace(s, re, name);
  // "{';', '='}" reads better as "one of ';', '='".
  if (s.size() > 1 && s.front() == '{' && s.back() == '}')
    s = "one of " + s.substr(1, s.size() - 2);
  return s;
}

std::string saga::rewriteSyntaxMessage(const std::string &msg) {
  llvm::StringRef m(msg);
  auto split = [&](llvm::StringRef prefix, llvm::StringRef sep)
      -> std::pair<std::string, std::string> {
    auto [found, rest] = m.drop_front(prefix.size()).split(sep);
    return {found.str(), rest.str()};
  };
  if (m.starts_with("mismatched input ")) {
    auto [found, expected] = split("mismatched input ", " expecting ");
    return "unexpected " + spellTokens(found) + "; expected " +
           spellTokens(expected);
  }
  if (m.starts_with("extraneous input ")) {
    auto [found, expected] = split("extraneous input ", " expecting ");
    return "unexpected " + spellTokens(found) + "; expected " +
           spellTokens(expected);
  }
  if (m.starts_with("missing ")) {
    auto [missing, at] = split("missing ", " at ");
    return "expected " + spellTokens(missing) + " before " + spellTokens(at);
  }
  if (m.starts_with("no viable alternative at input ")) {
    std::string input = m.drop_front(31).str();
    return "cannot parse " + spellTokens(input) +
           "; check for a missing operator, ';' or bracket";
  }
  if (m.starts_with("token recognition error at: "))
    return "unexpected character " + m.drop_front(28).str();
  return msg;
}

void SyntaxErrorListener::syntaxError(antlr4::Recognizer *recognizer,
                                      antlr4::Token *, size_t line,
                                      size_t charPositionInLine,
                                      const std::string &msg,
                                      std::exception_ptr) {
  // A bad character is dropped by the lexer; what the parser then trips over
  // on the same line is a consequence, not a second error.
  bool fromLexer = dynamic_cast<antlr4::Lexer *>(recognizer) != nullptr;
  if (fromLexer)
    lexerErrorLines.insert(line);
  else if (lexerErrorLines.count(line))
    return;
  ++errors;
  auto loc = mlir::FileLineColLoc::get(file, line, charPositionInLine + 1);
  mlir::emitError(loc) << rewriteSyntaxMessage(msg);
}
