//===- sagac.cpp - the Saga compiler driver -------------------------------===//
//
//   sagac model.saga [--emit=saga] [-o FILE]
//   sagac - < model.saga
//
// Diagnostics are printed clang-style: file:line:col, the source line and a
// caret. The exit status is 1 if any error was reported.
//
//===----------------------------------------------------------------------===//

#include "parser/FrontEnd.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum class Emit { Saga };

cl::OptionCategory category("sagac options");
cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.saga | ->"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Write the output to <file>"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(category));
cl::opt<Emit> emit("emit", cl::desc("What to produce"), cl::init(Emit::Saga),
                   cl::values(clEnumValN(Emit::Saga, "saga",
                                         "stage-level saga dialect IR")),
                   cl::cat(category));
cl::opt<bool> verifyDiagnostics(
    "verify-diagnostics",
    cl::desc("Check diagnostics against expected-* comments in the input "
             "(for tests)"),
    cl::init(false), cl::cat(category));
cl::opt<bool> splitInputFile(
    "split-input-file",
    cl::desc("Compile each '// -----' separated chunk on its own (for tests)"),
    cl::init(false), cl::cat(category));

LogicalResult compileChunk(std::unique_ptr<llvm::MemoryBuffer> buffer,
                           llvm::raw_ostream &os) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  MLIRContext ctx;
  ctx.printOpOnDiagnostic(false);
  if (verifyDiagnostics) {
    SourceMgrDiagnosticVerifierHandler handler(sourceMgr, &ctx);
    OwningOpRef<ModuleOp> module = saga::compileSaga(sourceMgr, ctx);
    if (module)
      module->print(os);
    return handler.verify();
  }
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx);
  OwningOpRef<ModuleOp> module = saga::compileSaga(sourceMgr, ctx);
  if (!module)
    return failure();
  module->print(os);
  os << "\n";
  return success();
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "sagac: compile SAGA-NN models (.saga) to the saga MLIR dialect\n");

  std::string message;
  auto input = openInputFile(inputFile, &message);
  if (!input) {
    llvm::errs() << "sagac: error: " << message << "\n";
    return 1;
  }
  if (inputFile == "-")
    input = llvm::MemoryBuffer::getMemBufferCopy(input->getBuffer(), "<stdin>");
  auto output = openOutputFile(outputFile, &message);
  if (!output) {
    llvm::errs() << "sagac: error: " << message << "\n";
    return 1;
  }
  LogicalResult result =
      splitInputFile ? splitAndProcessBuffer(std::move(input), compileChunk,
                                             output->os())
                     : compileChunk(std::move(input), output->os());
  if (failed(result))
    return 1;
  output->keep();
  return 0;
}
