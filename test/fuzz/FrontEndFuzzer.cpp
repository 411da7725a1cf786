//===- FrontEndFuzzer.cpp - libFuzzer target for the .saga front end -----===//
//
// Feeds arbitrary bytes through parsing, semantic checks and IR generation.
// Any input must end in a module or in diagnostics: never a crash, an
// assertion or an uncaught exception. Build with clang and
// -DSAGA_ENABLE_FUZZER=ON (see docs/user-guide.md).
//
//===----------------------------------------------------------------------===//

#include "parser/FrontEnd.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::DialectRegistry registry;
  mlir::MLIRContext ctx(registry, mlir::MLIRContext::Threading::DISABLED);
  // Diagnostics are expected on most inputs; drop them.
  mlir::ScopedDiagnosticHandler quiet(
      &ctx, [](mlir::Diagnostic &) { return mlir::success(); });
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.saga"),
      llvm::SMLoc());
  (void)saga::compileSaga(sourceMgr, ctx);
  return 0;
}
