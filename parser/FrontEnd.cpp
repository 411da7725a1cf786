//===- FrontEnd.cpp - .saga source to saga IR -----------------------------===//

#include "parser/FrontEnd.h"

#include "dialect/Saga.h"
#include "parser/MLIRGen.h"
#include "parser/SyntaxErrors.h"

#include "SagaLexer.h"
#include "SagaParser.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/thread.h"

using namespace mlir;
using namespace saga;

namespace {
/// Brackets nested deeper than this are rejected before parsing: the parser
/// and the generator recurse once per level. The same scan finds unterminated
/// block comments, which ANTLR would report as a stray '/'.
constexpr unsigned kMaxNesting = 256;

/// The generator recurses once per expression level, and left-leaning
/// chains (`a + a + ... + a`) are as deep as they are long; the front end
/// runs on a thread with a stack to match.
constexpr unsigned kStackBytes = 512u << 20;

// The location of byte `offset` of `src`, 1-based line and column.
Location locationOf(StringRef src, size_t offset, StringAttr file) {
  StringRef before = src.take_front(offset);
  unsigned line = 1 + before.count('\n');
  size_t lineStart = before.rfind('\n');
  unsigned col = offset - (lineStart == StringRef::npos ? 0 : lineStart + 1) + 1;
  return FileLineColLoc::get(file, line, col);
}

LogicalResult checkUTF8(StringRef src, StringAttr file) {
  auto *begin = reinterpret_cast<const llvm::UTF8 *>(src.data());
  const llvm::UTF8 *cursor = begin;
  if (llvm::isLegalUTF8String(&cursor, begin + src.size()))
    return success();
  emitError(locationOf(src, cursor - begin, file))
      << "invalid UTF-8 byte; .saga files are UTF-8 text";
  return failure();
}

LogicalResult prescan(StringRef src, StringAttr file, MLIRContext &ctx) {
  unsigned depth = 0, line = 1, col = 1;
  unsigned commentLine = 0, commentCol = 0;
  bool inLineComment = false, inBlockComment = false;
  for (size_t i = 0; i < src.size(); ++i) {
    char c = src[i];
    if (c == '\n') {
      ++line;
      col = 1;
      inLineComment = false;
      continue;
    }
    ++col;
    if (inLineComment)
      continue;
    if (inBlockComment) {
      if (c == '*' && i + 1 < src.size() && src[i + 1] == '/')
        inBlockComment = false;
      continue;
    }
    if (c == '/' && i + 1 < src.size() && src[i + 1] == '/')
      inLineComment = true;
    else if (c == '/' && i + 1 < src.size() && src[i + 1] == '*') {
      inBlockComment = true;
      commentLine = line;
      commentCol = col - 1;
      ++i;
      ++col;
    }
    else if (c == '(' || c == '[' || c == '{') {
      if (++depth > kMaxNesting) {
        emitError(FileLineColLoc::get(file, line, col - 1))
            << "brackets nested more than " << kMaxNesting
            << " levels deep; split the expression";
        return failure();
      }
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  if (inBlockComment) {
    emitError(FileLineColLoc::get(file, commentLine, commentCol))
        << "unterminated comment: '/*' without a closing '*/'";
    return failure();
  }
  return success();
}
} // namespace

void saga::loadFrontEndDialects(MLIRContext &ctx) {
  ctx.loadDialect<SagaDialect, func::FuncDialect, arith::ArithDialect>();
}

OwningOpRef<ModuleOp> saga::compileSaga(llvm::SourceMgr &sourceMgr,
                                        MLIRContext &ctx,
                                        ArrayRef<std::string> outputs) {
  loadFrontEndDialects(ctx);
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  StringAttr file = StringAttr::get(&ctx, buffer->getBufferIdentifier());
  if (failed(checkUTF8(buffer->getBuffer(), file)) ||
      failed(prescan(buffer->getBuffer(), file, ctx)))
    return nullptr;

  OwningOpRef<ModuleOp> result;
  auto work = [&] {
    try {
      antlr4::ANTLRInputStream input(buffer->getBufferStart(),
                                     buffer->getBufferSize());
      grammar::SagaLexer lexer(&input);
      grammar::SagaParser parser(nullptr);
      SyntaxErrorListener listener(file);
      lexer.removeErrorListeners();
      lexer.addErrorListener(&listener);
      antlr4::CommonTokenStream tokens(&lexer);
      parser.setTokenStream(&tokens);
      parser.removeErrorListeners();
      parser.addErrorListener(&listener);
      grammar::SagaParser::FileContext *tree = parser.file();
      if (listener.numErrors())
        return;
      result = generateModule(tree, ctx, file, outputs);
    } catch (const std::exception &e) {
      emitError(FileLineColLoc::get(file, 1, 1))
          << "internal error in the front end: " << e.what();
    }
  };
  llvm::thread worker(std::optional<unsigned>(kStackBytes), work);
  worker.join();
  return result;
}
