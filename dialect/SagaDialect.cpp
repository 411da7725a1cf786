//===- SagaDialect.cpp - dialect registration -----------------------------===//

#include "dialect/Saga.h"

#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace saga;

#include "dialect/SagaDialect.cpp.inc"
#include "dialect/SagaEnums.cpp.inc"

namespace {
/// Layers are functions; lowering inlines them into the model. Every saga op
/// is a value computation with no ties to its enclosing function.
struct SagaInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Operation *, bool) const final {
    return true;
  }
  bool isLegalToInline(Region *, Region *, bool, IRMapping &) const final {
    return true;
  }
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void SagaDialect::initialize() {
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "dialect/SagaOps.cpp.inc"
      >();
  addInterfaces<SagaInlinerInterface>();
}

void saga::registerSagaDialects(DialectRegistry &registry) {
  registry.insert<SagaDialect, func::FuncDialect, arith::ArithDialect,
                  scf::SCFDialect, memref::MemRefDialect, math::MathDialect,
                  vector::VectorDialect>();
  func::registerInlinerExtension(registry);
}
