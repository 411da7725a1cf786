//===- saga-opt.cpp - run saga passes on .mlir files ----------------------===//
//
// mlir-opt with the saga dialect, its passes and the upstream dialects and
// passes Saga's pipelines use.
//
//===----------------------------------------------------------------------===//

#include "dialect/Saga.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  saga::registerAllSagaPasses();
  mlir::DialectRegistry registry;
  saga::registerSagaDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Saga optimizer driver\n", registry));
}
