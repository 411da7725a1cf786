//===- SagaDialect.cpp - dialect registration -----------------------------===//

#include "dialect/Saga.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace saga;

#include "dialect/SagaDialect.cpp.inc"
#include "dialect/SagaEnums.cpp.inc"

void SagaDialect::initialize() {
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "dialect/SagaOps.cpp.inc"
      >();
}
