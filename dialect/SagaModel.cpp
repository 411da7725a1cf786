//===- SagaModel.cpp - saga.model, saga.param, saga.return ----------------===//

#include "dialect/Saga.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace saga;

void ModelOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                    FunctionType type) {
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name), TypeAttr::get(type));
  state.addRegion();
}

ParseResult ModelOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildType = [](Builder &builder, ArrayRef<Type> args,
                      ArrayRef<Type> results, function_interface_impl::VariadicFlag,
                      std::string &) {
    return builder.getFunctionType(args, results);
  };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void ModelOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(
      p, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

LogicalResult ModelOp::verify() {
  for (auto [i, type] : llvm::enumerate(getArgumentTypes()))
    if (!isa<DomainType>(type))
      return emitOpError() << "input #" << i << " must be a vertex or edge "
                           << "value (a graph input), not " << type;
  llvm::StringMap<ParamOp> seen;
  WalkResult result = walk([&](ParamOp param) {
    auto [it, inserted] = seen.try_emplace(param.getName(), param);
    if (inserted)
      return WalkResult::advance();
    InFlightDiagnostic diag = param.emitOpError()
                              << "redefines parameter '" << param.getName()
                              << "'";
    diag.attachNote(it->second.getLoc()) << "first defined here";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

LogicalResult ParamOp::verify() {
  bool constant = getInit() == Init::constant;
  if (constant && !getValue())
    return emitOpError() << "a constant initialiser needs a value: "
                         << "'constant(0.5)'";
  if (!constant && getValue())
    return emitOpError() << "only the constant initialiser takes a value; '"
                         << stringifyInit(getInit()) << "' does not";
  if (getName().empty())
    return emitOpError() << "needs a non-empty name";
  if (getInit() == Init::glorot &&
      cast<RankedTensorType>(getType()).getRank() < 2)
    return emitOpError() << "glorot needs a tensor of rank >= 2 (fan-in and "
                         << "fan-out), got " << getType();
  return success();
}

LogicalResult ReturnOp::verify() {
  auto model = cast<ModelOp>((*this)->getParentOp());
  ArrayRef<Type> expected = model.getResultTypes();
  if (getNumOperands() != expected.size())
    return emitOpError() << "returns " << getNumOperands()
                         << (getNumOperands() == 1 ? " value" : " values")
                         << " but the model has " << expected.size()
                         << (expected.size() == 1 ? " result" : " results");
  for (auto [i, pair] : llvm::enumerate(llvm::zip(getOperandTypes(), expected)))
    if (std::get<0>(pair) != std::get<1>(pair))
      return emitOpError() << "value #" << i << " has type "
                           << std::get<0>(pair) << " but the model returns "
                           << std::get<1>(pair);
  return success();
}
