//===- SagaTypes.cpp - vertex- and edge-domain types ----------------------===//

#include "dialect/Saga.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace saga;

#include "dialect/SagaTypeInterfaces.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialect/SagaTypes.cpp.inc"

// `<4x8xf32>` or `<f32>`: the per-element shape, then the element type.
static ParseResult parseDomainParams(AsmParser &parser,
                                     SmallVectorImpl<int64_t> &shape,
                                     Type &elementType) {
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseGreater())
    return failure();
  return success();
}

static void printDomainParams(AsmPrinter &printer, ArrayRef<int64_t> shape,
                              Type elementType) {
  printer << '<';
  for (int64_t d : shape)
    printer << d << 'x';
  printer << elementType << '>';
}

static LogicalResult verifyDomainParams(function_ref<InFlightDiagnostic()> emitError,
                                        StringRef domain, ArrayRef<int64_t> shape,
                                        Type elementType) {
  for (int64_t d : shape)
    if (d <= 0)
      return emitError() << domain << " feature shape " << formatShape(shape)
                         << " has a non-positive dimension";
  if (!isa<FloatType, IntegerType>(elementType))
    return emitError() << domain << " element type must be a float or an "
                       << "integer, got " << elementType;
  return success();
}

#define SAGA_DOMAIN_TYPE_METHODS(Class, Domain)                                \
  Type Class::parse(AsmParser &parser) {                                       \
    SmallVector<int64_t> shape;                                                \
    Type elementType;                                                          \
    if (failed(parseDomainParams(parser, shape, elementType)))                 \
      return {};                                                               \
    return Class::getChecked(                                                  \
        [&] { return parser.emitError(parser.getNameLoc()); },                 \
        parser.getContext(), shape, elementType);                              \
  }                                                                            \
  void Class::print(AsmPrinter &printer) const {                               \
    printDomainParams(printer, getShape(), getElementType());                  \
  }                                                                            \
  LogicalResult Class::verify(function_ref<InFlightDiagnostic()> emitError,    \
                              ArrayRef<int64_t> shape, Type elementType) {     \
    return verifyDomainParams(emitError, Domain, shape, elementType);          \
  }

SAGA_DOMAIN_TYPE_METHODS(VertexType, "vertex")
SAGA_DOMAIN_TYPE_METHODS(EdgeType, "edge")

void SagaDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialect/SagaTypes.cpp.inc"
      >();
}
