//===- SagaBase.td - the saga dialect and its enums ---------*- tablegen -*-===//
//
// The dialect definition and the enum attributes shared by its types and ops.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_BASE_TD
#define SAGA_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Saga_Dialect : Dialect {
  let name = "saga";
  let cppNamespace = "::saga";
  let summary = "SAGA-NN vertex programs: graph neural networks as stages";
  let description = [{
    A GNN layer is four stages (NGra's SAGA-NN model): `saga.scatter` makes
    vertex values visible on edges, `saga.apply_edge` runs a per-edge network,
    `saga.gather` reduces edge values into their destination vertex and
    `saga.apply_vertex` runs a per-vertex network. Values of the whole graph
    carry their domain in their type (`!saga.vertex<16xf32>`,
    `!saga.edge<8x8xf32>`), so an edge value can only reach a vertex through a
    gather. Stage bodies are regions over per-element tensors.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    /// Defined next to the type storage classes (SagaTypes.cpp).
    void registerTypes();
  }];
}

class Saga_Op<string mnemonic, list<Trait> traits = []>
    : Op<Saga_Dialect, mnemonic, traits>;

// How a gather reduces the values on a vertex's in-edges.
def Saga_GatherKind : I32EnumAttr<"GatherKind", "edge-to-vertex reduction", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>,
    I32EnumAttrCase<"max", 2>, I32EnumAttrCase<"min", 3>,
    I32EnumAttrCase<"softmax_sum", 4>, I32EnumAttrCase<"logsumexp", 5>]> {
  let cppNamespace = "::saga";
}

// A reduction along one axis of a per-element tensor.
def Saga_ReduceKind : I32EnumAttr<"ReduceKind", "reduction along an axis", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>,
    I32EnumAttrCase<"max", 2>, I32EnumAttrCase<"min", 3>]> {
  let cppNamespace = "::saga";
}

// Which end of an edge a scattered vertex value is read from.
def Saga_EdgeEnd : I32EnumAttr<"EdgeEnd", "end of an edge", [
    I32EnumAttrCase<"src", 0>, I32EnumAttrCase<"dst", 1>]> {
  let cppNamespace = "::saga";
}

// How a parameter is initialised before training.
def Saga_Init : I32EnumAttr<"Init", "parameter initialiser", [
    I32EnumAttrCase<"glorot", 0>, I32EnumAttrCase<"zeros", 1>,
    I32EnumAttrCase<"ones", 2>, I32EnumAttrCase<"constant", 3>]> {
  let cppNamespace = "::saga";
}

#endif // SAGA_BASE_TD
