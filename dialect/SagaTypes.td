//===- SagaTypes.td - vertex- and edge-domain types ---------*- tablegen -*-===//
//
// A graph-wide value: one feature tensor per vertex or per edge. The domain is
// part of the type so that mixing vertex and edge values is a type error.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_TYPES_TD
#define SAGA_TYPES_TD

include "SagaBase.td"

def Saga_DomainTypeInterface : TypeInterface<"DomainType"> {
  let cppNamespace = "::saga";
  let description = [{
    A value with one feature tensor per element of a graph domain (vertices or
    edges). `getShape` and `getElementType` describe one element's tensor.
  }];
  let methods = [
    InterfaceMethod<"The per-element feature shape.",
                    "::llvm::ArrayRef<int64_t>", "getShape">,
    InterfaceMethod<"The feature element type.", "::mlir::Type",
                    "getElementType">,
    InterfaceMethod<"Whether the domain is the edges of the graph.", "bool",
                    "isEdgeDomain">,
  ];
  let extraSharedClassDeclaration = [{
    /// The tensor type a stage body sees for one element of this domain.
    ::mlir::RankedTensorType getElementTensorType() {
      return ::mlir::RankedTensorType::get($_type.getShape(),
                                           $_type.getElementType());
    }
  }];
}

class Saga_DomainType<string name, string typeMnemonic, bit edge>
    : TypeDef<Saga_Dialect, name, [Saga_DomainTypeInterface]> {
  let mnemonic = typeMnemonic;
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool isEdgeDomain() const { return }] # !if(edge, "true", "false") # [{; }
  }];
}

def Saga_VertexType : Saga_DomainType<"Vertex", "vertex", 0> {
  let summary = "one feature tensor per vertex";
  let description = [{
    `!saga.vertex<16xf32>`: a 16-wide f32 feature vector on every vertex;
    `!saga.vertex<f32>` holds one scalar per vertex (a degree, a score).
  }];
}

def Saga_EdgeType : Saga_DomainType<"Edge", "edge", 1> {
  let summary = "one feature tensor per edge";
  let description = [{
    `!saga.edge<4x8xf32>`: a 4x8 tensor on every edge (4 attention heads of 8
    features each).
  }];
}

def Saga_AnyDomain : Type<CPred<"::llvm::isa<::saga::DomainType>($_self)">,
                          "vertex- or edge-domain value">;
def Saga_VertexValue : Type<CPred<"::llvm::isa<::saga::VertexType>($_self)">,
                            "vertex-domain value">;
def Saga_EdgeValue : Type<CPred<"::llvm::isa<::saga::EdgeType>($_self)">,
                          "edge-domain value">;

#endif // SAGA_TYPES_TD
