//===- SagaOps.td - saga dialect operations -----------------*- tablegen -*-===//
//
// Stage-level IR (docs/architecture.md, Levels: the stage level): the four
// SAGA-NN stages over domain values, the per-element tensor operations their
// bodies are written in, and the model that owns parameters and composes
// layers.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_OPS_TD
#define SAGA_OPS_TD

include "SagaTypes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Saga_Tensor : RankedTensorOf<[AnyFloat]>;

//===----------------------------------------------------------------------===//
// Graph built-ins
//===----------------------------------------------------------------------===//

def Saga_DegreeOp : Saga_Op<"degree", [Pure]> {
  let summary = "in-degree of every vertex";
  let description = [{
    The number of in-edges of each vertex (counting self loops if the graph
    has them), as a float scalar per vertex.

    ```mlir
    %deg = saga.degree : !saga.vertex<f32>
    ```
  }];
  let results = (outs Saga_VertexValue:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def Saga_VertexIdOp : Saga_Op<"vertex_id", [Pure]> {
  let summary = "the id of every vertex";
  let description = [{
    ```mlir
    %id = saga.vertex_id : !saga.vertex<i32>
    ```
  }];
  let results = (outs Saga_VertexValue:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// The four stages
//===----------------------------------------------------------------------===//

def Saga_ScatterOp : Saga_Op<"scatter", [Pure]> {
  let summary = "make a vertex value visible on edges";
  let description = [{
    Each edge reads the value of its source (`src`) or destination (`dst`)
    vertex. The feature shape is unchanged; only the domain changes.

    ```mlir
    %hs = saga.scatter src %h : !saga.vertex<16xf32> -> !saga.edge<16xf32>
    ```
  }];
  let arguments = (ins Saga_EdgeEnd:$end, Saga_AnyDomain:$input);
  let results = (outs Saga_AnyDomain:$result);
  let assemblyFormat = [{
    $end $input attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

class Saga_ApplyOp<string mnemonic, string domain>
    : Saga_Op<mnemonic, [RecursiveMemoryEffects]> {
  let arguments = (ins Variadic<Saga_AnyDomain>:$inputs);
  let results = (outs Variadic<Saga_AnyDomain>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
  let hasCanonicalizeMethod = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return verifyApplyOp(*this, /*edgeDomain=*/}] # domain # [{);
    }
    ::llvm::LogicalResult $cppClass::canonicalize($cppClass op,
                                                  ::mlir::PatternRewriter &rewriter) {
      return canonicalizeApplyOp(op, rewriter);
    }
  }];
}

def Saga_ApplyEdgeOp : Saga_ApplyOp<"apply_edge", "true"> {
  let summary = "a neural network run on every edge";
  let description = [{
    The body sees one edge's tensors (one block argument per input, typed as
    that input's per-edge tensor) and yields one tensor per result. It may use
    parameters (tensors defined outside) but no vertex or edge value except
    through its inputs.

    ```mlir
    %m = saga.apply_edge(%hs, %w) : (!saga.edge<16xf32>, !saga.edge<f32>)
                                    -> !saga.edge<16xf32> {
    ^bb0(%x: tensor<16xf32>, %ew: tensor<f32>):
      %y = saga.mul %x, %ew : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
      saga.yield %y : tensor<16xf32>
    }
    ```
  }];
}

def Saga_ApplyVertexOp : Saga_ApplyOp<"apply_vertex", "false"> {
  let summary = "a neural network run on every vertex";
  let description = [{
    Like `saga.apply_edge`, over vertex values.

    ```mlir
    %o = saga.apply_vertex(%a) : (!saga.vertex<16xf32>) -> !saga.vertex<7xf32> {
    ^bb0(%x: tensor<16xf32>):
      %y = saga.matmul %x, %W : tensor<16xf32>, tensor<16x7xf32> -> tensor<7xf32>
      saga.yield %y : tensor<7xf32>
    }
    ```
  }];
}

def Saga_GatherOp : Saga_Op<"gather", [Pure]> {
  let summary = "reduce the values on each vertex's in-edges";
  let description = [{
    `sum`, `mean`, `max` and `min` reduce elementwise over the in-edges of each
    vertex (a vertex without in-edges gets zeros). `softmax_sum` takes a
    `score` per edge whose shape is a prefix of the value's shape (one score
    per attention head) and sums the values weighted by the softmax of the
    scores over each vertex's in-edges. Its optional `dropout` rate is
    attention dropout: in training each edge's softmax weight is zeroed per
    head with that probability and the survivors are scaled by 1 / (1 - rate)
    (the softmax normaliser still counts every edge, as in GAT).

    ```mlir
    %a = saga.gather sum %m : !saga.edge<16xf32> -> !saga.vertex<16xf32>
    %g = saga.gather softmax_sum %z score %s
           : !saga.edge<8x8xf32>, !saga.edge<8xf32> -> !saga.vertex<8x8xf32>
    ```
  }];
  let arguments = (ins Saga_GatherKind:$kind, Saga_AnyDomain:$input,
                       Optional<Saga_AnyDomain>:$score,
                       OptionalAttr<F64Attr>:$dropout);
  let results = (outs Saga_AnyDomain:$result);
  let assemblyFormat = [{
    $kind $input (`score` $score^)? attr-dict `:` qualified(type($input))
    (`,` qualified(type($score))^)? `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Saga_YieldOp : Saga_Op<"yield", [Pure, Terminator,
    ParentOneOf<["ApplyEdgeOp", "ApplyVertexOp", "PropagateOp",
                 "EdgeMapOp"]>]> {
  let summary = "the per-element results of a stage body";
  let arguments = (ins Variadic<Saga_Tensor>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

//===----------------------------------------------------------------------===//
// Per-element tensor operations (stage bodies, parameters, scalars)
//===----------------------------------------------------------------------===//

class Saga_UnaryOp<string mnemonic, string what>
    : Saga_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = what;
  let arguments = (ins Saga_Tensor:$input);
  let results = (outs Saga_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Saga_NegOp : Saga_UnaryOp<"neg", "elementwise negation">;
def Saga_ReluOp : Saga_UnaryOp<"relu", "elementwise max(x, 0)">;
def Saga_EluOp : Saga_UnaryOp<"elu", "elementwise x if x > 0 else exp(x) - 1">;
def Saga_SigmoidOp : Saga_UnaryOp<"sigmoid", "elementwise 1 / (1 + exp(-x))">;
def Saga_TanhOp : Saga_UnaryOp<"tanh", "elementwise hyperbolic tangent">;
def Saga_ExpOp : Saga_UnaryOp<"exp", "elementwise exponential">;
def Saga_LogOp : Saga_UnaryOp<"log", "elementwise natural logarithm">;
def Saga_RsqrtOp : Saga_UnaryOp<"rsqrt", "elementwise 1 / sqrt(x)">;
def Saga_AbsOp : Saga_UnaryOp<"abs", "elementwise absolute value">;

def Saga_SelectPositiveOp : Saga_Op<"select_positive", [Pure,
    AllTypesMatch<["cond", "ifPositive", "otherwise", "result"]>]> {
  let summary = "elementwise `x > 0 ? a : b` (derivatives of ReLU-like ops)";
  let description = [{
    All three operands have the result's shape.

    ```mlir
    %d = saga.select_positive %x, %g, %zero : tensor<16xf32>
    ```
  }];
  let arguments = (ins Saga_Tensor:$cond, Saga_Tensor:$ifPositive,
                       Saga_Tensor:$otherwise);
  let results = (outs Saga_Tensor:$result);
  let assemblyFormat = [{
    $cond `,` $ifPositive `,` $otherwise attr-dict `:` type($result)
  }];
}

def Saga_LeakyReluOp : Saga_Op<"leaky_relu", [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise x if x > 0 else slope * x";
  let arguments = (ins Saga_Tensor:$input, F64Attr:$slope);
  let results = (outs Saga_Tensor:$result);
  let assemblyFormat = "$input `slope` $slope attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Saga_DropoutOp : Saga_Op<"dropout", [SameOperandsAndResultType,
                                          NoMemoryEffect]> {
  let summary = "zero each element with probability `rate` (training only)";
  let description = [{
    During training each element is zeroed with probability `rate` and the
    survivors are scaled by 1 / (1 - rate); in inference it is the identity.
    The mask is a hash of the step's seed, the op's `key` (set when training
    is compiled), the row and the element, so it does not depend on the
    thread count, and the backward pass reproduces it: the gradient of a
    dropout is the same dropout (same key) applied to the gradient. It has
    no memory effects (an unread dropout is dead code), but it is not moved
    across domains: the mask depends on the element it runs on.
  }];
  let arguments = (ins Saga_Tensor:$input, F64Attr:$rate,
                       OptionalAttr<I64Attr>:$key);
  let results = (outs Saga_Tensor:$result);
  let assemblyFormat = "$input `rate` $rate attr-dict `:` type($result)";
  let hasVerifier = 1;
}

class Saga_BinaryOp<string mnemonic, string what>
    : Saga_Op<mnemonic, [Pure]> {
  let summary = what;
  let description = [{
    Elementwise with NumPy broadcasting: shapes are aligned at the right and
    each pair of dimensions must be equal or one of them 1.
  }];
  let arguments = (ins Saga_Tensor:$lhs, Saga_Tensor:$rhs);
  let results = (outs Saga_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() { return verifyBroadcastOp(*this); }
  }];
}

def Saga_AddOp : Saga_BinaryOp<"add", "elementwise sum">;
def Saga_SubOp : Saga_BinaryOp<"sub", "elementwise difference">;
def Saga_MulOp : Saga_BinaryOp<"mul", "elementwise product">;
def Saga_DivOp : Saga_BinaryOp<"div", "elementwise quotient">;

def Saga_MatmulOp : Saga_Op<"matmul", [Pure]> {
  let summary = "contract the last axis of lhs with the first axis of rhs";
  let description = [{
    `[a..., k] @ [k, b...] -> [a..., b...]`: a feature vector times a weight
    matrix (`[16] @ [16, 7] -> [7]`), or into several heads
    (`[16] @ [16, 8, 8] -> [8, 8]`).

    ```mlir
    %y = saga.matmul %x, %W : tensor<16xf32>, tensor<16x7xf32> -> tensor<7xf32>
    ```
  }];
  let arguments = (ins Saga_Tensor:$lhs, Saga_Tensor:$rhs);
  let results = (outs Saga_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Saga_ReduceOp : Saga_Op<"reduce", [Pure]> {
  let summary = "reduce one axis of a tensor";
  let description = [{
    `axis` may be negative (counted from the end). The axis is removed.

    ```mlir
    %s = saga.reduce sum %z axis -1 : tensor<8x8xf32> -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Saga_ReduceKind:$kind, Saga_Tensor:$input,
                       I64Attr:$axis);
  let results = (outs Saga_Tensor:$result);
  let assemblyFormat = [{
    $kind $input `axis` $axis attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Saga_ConcatOp : Saga_Op<"concat", [Pure]> {
  let summary = "join tensors along an axis";
  let description = [{
    ```mlir
    %c = saga.concat %a, %b axis 0 : tensor<16xf32>, tensor<8xf32> -> tensor<24xf32>
    ```
  }];
  let arguments = (ins Variadic<Saga_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Saga_Tensor:$result);
  let assemblyFormat = [{
    $inputs `axis` $axis attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Saga_SliceOp : Saga_Op<"slice", [Pure]> {
  let summary = "a contiguous range of a tensor along an axis";
  let description = [{
    The elements at positions [offset, offset + size) of `axis`; the
    inverse of `concat`. Made by the compiler (fuse-maps splits the result
    of merged sibling propagations with it), not by the language.

    ```mlir
    %s = saga.slice %c axis 0 offset 64 size 8 : tensor<72xf32> -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Saga_Tensor:$input, I64Attr:$axis, I64Attr:$offset,
                       I64Attr:$size);
  let results = (outs Saga_Tensor:$result);
  let assemblyFormat = [{
    $input `axis` $axis `offset` $offset `size` $size attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Saga_ReshapeOp : Saga_Op<"reshape", [Pure]> {
  let summary = "reinterpret a tensor with another shape of the same size";
  let arguments = (ins Saga_Tensor:$input);
  let results = (outs Saga_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Saga_CrossEntropyOp : Saga_Op<"cross_entropy", [Pure]> {
  let summary = "mean softmax cross-entropy over the labelled vertices";
  let description = [{
    `logits` holds one score per class on every vertex, `labels` one integer
    class per vertex. The mean runs over the vertices of the current mask
    whose label is not -1.

    ```mlir
    %l = saga.cross_entropy %out, %label : !saga.vertex<7xf32>, !saga.vertex<i32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Saga_VertexValue:$logits, Saga_VertexValue:$labels);
  let results = (outs 0DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` qualified(type($logits)) `,`
    qualified(type($labels)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Saga_ReadoutOp : Saga_Op<"readout", [Pure, SameOperandsAndResultType]> {
  let summary = "reduce each graph of a batch over its vertices, per vertex";
  let description = [{
    Graph classification's readout (`sum_nodes(h)`, `mean_nodes(h)`,
    `max_nodes(h)`, `min_nodes(h)` in a model). The graph the model runs on
    is a batch of graphs (Graph::graphOffsets: graph `g` owns rows
    `[off[g], off[g+1])`; none: the whole graph is one). Every vertex of a
    graph gets the graph's reduction of `input` over its vertices, element
    by element: a graph-level value held once per vertex, so the layers
    after it and the loss (on one vertex per graph) stay vertex programs.
    The gradient of a sum (mean) readout is the sum (mean) readout of the
    incoming gradient; max and min have saga.readout_grad.

    ```mlir
    %g = saga.readout sum %h : !saga.vertex<64xf32>
    ```
  }];
  let arguments = (ins Saga_ReduceKind:$kind, Saga_VertexValue:$input);
  let results = (outs Saga_VertexValue:$result);
  let assemblyFormat = [{
    $kind $input attr-dict `:` qualified(type($input))
  }];
  let hasVerifier = 1;
}

def Saga_ReadoutGradOp : Saga_Op<"readout_grad", [Pure,
    AllTypesMatch<["input", "readout", "grad", "gradInput"]>]> {
  let summary = "gradient of a max or min saga.readout";
  let description = [{
    For each graph and element: the sum of `grad` over the graph's vertices,
    on the graph's first vertex whose `input` equals the `readout`
    (the arg max or arg min; ties go to the lowest row), zero on the others.

    ```mlir
    %dx = saga.readout_grad max %x, %y, %dy : !saga.vertex<64xf32>
    ```
  }];
  let arguments = (ins Saga_ReduceKind:$kind, Saga_VertexValue:$input,
                       Saga_VertexValue:$readout, Saga_VertexValue:$grad);
  let results = (outs Saga_VertexValue:$gradInput);
  let assemblyFormat = [{
    $kind $input `,` $readout `,` $grad attr-dict `:` qualified(type($input))
  }];
  let hasVerifier = 1;
}

def Saga_BatchNormOp : Saga_Op<"batch_norm", [Pure, SameOperandsAndResultType]> {
  let summary = "standardise each feature over the graph's vertices";
  let description = [{
    `batch_norm(h)` in a model: each element j of a vertex's vector becomes
    (x[v][j] - mean_j) / sqrt(var_j + 1e-5), the mean and the (biased)
    variance of feature j over every vertex of the graph the model runs on
    (a batch of graphs: all of them), in training and in inference alike
    (PyTorch's BatchNorm1d with track_running_stats=False, without its
    affine part, which a layer after it supplies).

    ```mlir
    %y = saga.batch_norm %h : !saga.vertex<32xf32>
    ```
  }];
  let arguments = (ins Saga_VertexValue:$input);
  let results = (outs Saga_VertexValue:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
  let hasVerifier = 1;
}

def Saga_BatchNormGradOp : Saga_Op<"batch_norm_grad", [Pure,
    AllTypesMatch<["input", "grad", "gradInput"]>]> {
  let summary = "gradient of saga.batch_norm";
  let description = [{
    With y the standardised input and s_j = sqrt(var_j + 1e-5):
    dx[v][j] = (dy[v][j] - mean_v(dy[.][j]) - y[v][j] mean_v(dy[.][j] y[.][j])) / s_j.

    ```mlir
    %dx = saga.batch_norm_grad %x, %dy : !saga.vertex<32xf32>
    ```
  }];
  let arguments = (ins Saga_VertexValue:$input, Saga_VertexValue:$grad);
  let results = (outs Saga_VertexValue:$gradInput);
  let assemblyFormat = "$input `,` $grad attr-dict `:` qualified(type($input))";
  let hasVerifier = 1;
}

def Saga_PairBceOp : Saga_Op<"pair_bce", [Pure]> {
  let summary = "mean binary cross-entropy of dot-product scores over pairs";
  let description = [{
    Link prediction's loss (`pair_bce(h)` in a model). The run binds a set
    of vertex pairs (u, v) with labels y in {0, 1} (ExecutionContext::pairs:
    a training step's positives and sampled negatives). Each pair's score
    is the dot product s = sum(h[u] * h[v]) of the endpoints' rows; the
    result is the mean over the pairs of the binary cross-entropy with
    logits, max(s, 0) - y * s + log(1 + exp(-|s|)).

    ```mlir
    %l = saga.pair_bce %h : !saga.vertex<64xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Saga_VertexValue:$input);
  let results = (outs 0DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Saga_PairBceGradOp : Saga_Op<"pair_bce_grad", [Pure,
    AllTypesMatch<["input", "gradInput"]>]> {
  let summary = "gradient of saga.pair_bce with respect to the rows";
  let description = [{
    With c = grad * (sigmoid(s) - y) / n for each of the n bound pairs
    (u, v): row u gets c * h[v] and row v gets c * h[u], summed over the
    pairs each row is an end of, in pair order; rows in no pair get zero.

    ```mlir
    %dh = saga.pair_bce_grad %h, %g : !saga.vertex<64xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins Saga_VertexValue:$input,
                       0DTensorOf<[AnyFloat]>:$grad);
  let results = (outs Saga_VertexValue:$gradInput);
  let assemblyFormat = [{
    $input `,` $grad attr-dict `:` qualified(type($input)) `,` type($grad)
  }];
  let hasVerifier = 1;
}

def Saga_L2Op : Saga_Op<"l2", [Pure]> {
  let summary = "half the sum of squares of a tensor (weight decay)";
  let description = [{
    `sum(x * x) / 2`, as TensorFlow's `l2_loss` (the GCN paper's weight decay).
  }];
  let arguments = (ins Saga_Tensor:$input);
  let results = (outs 0DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Models
//===----------------------------------------------------------------------===//

def Saga_ModelOp : Saga_Op<"model", [FunctionOpInterface, IsolatedFromAbove]> {
  let summary = "a GNN model: graph inputs, parameters, forward computation";
  let description = [{
    The arguments are the graph's inputs (vertex and edge values), the results
    the model's outputs (the last one a scalar loss when the model has one).
    The body declares every trainable parameter with `saga.param` and calls
    layers (`func.func`s over domain values and parameter tensors).

    ```mlir
    saga.model @GCN(%x: !saga.vertex<1433xf32>, %label: !saga.vertex<i32>)
        -> (!saga.vertex<7xf32>, tensor<f32>) {
      %W = saga.param "conv0.W" glorot : tensor<1433x7xf32>
      %out = func.call @conv(%x, %W) : (!saga.vertex<1433xf32>, tensor<1433x7xf32>) -> !saga.vertex<7xf32>
      %loss = saga.cross_entropy %out, %label : !saga.vertex<7xf32>, !saga.vertex<i32> -> tensor<f32>
      saga.return %out, %loss : !saga.vertex<7xf32>, tensor<f32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name,
                                 "::mlir::FunctionType":$type)>];
  let extraClassDeclaration = [{
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    ::mlir::Region *getCallableRegion() { return &getBody(); }
  }];
}

def Saga_ParamOp : Saga_Op<"param", [HasParent<"ModelOp">]> {
  let summary = "a trainable parameter of the model";
  let description = [{
    Declares a named parameter tensor with its initialiser. Names are unique
    within a model; `constant` takes a value.

    ```mlir
    %W = saga.param "GCNConv#0.W" glorot : tensor<1433x16xf32>
    %eps = saga.param "GINConv#0.eps" constant(0.0) : tensor<f32>
    ```
  }];
  let arguments = (ins StrAttr:$name, Saga_Init:$init,
                       OptionalAttr<F64Attr>:$value);
  let results = (outs Saga_Tensor:$result);
  let assemblyFormat = [{
    $name $init (`(` $value^ `)`)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Saga_ReturnOp : Saga_Op<"return", [Pure, Terminator,
                                       HasParent<"ModelOp">]> {
  let summary = "the outputs of a model";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` qualified(type($values)))?";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Graph-tensor level (docs/architecture.md, Levels): whole-domain operators
//===----------------------------------------------------------------------===//

def Saga_PropagateOp : Saga_Op<"propagate", [RecursiveMemoryEffects,
                                             AttrSizedOperandSegments]> {
  let summary = "fused scatter, edge function and gather (generalised SpMM)";
  let description = [{
    For every vertex v, evaluates the body once per in-edge (u -> v) on the
    rows of the `src` values at u, the `dst` values at v and the `edge`
    values at the edge, and reduces the yielded messages with `kind` into v's
    row of the result. Edge tensors are never materialised. With
    `softmax_sum` the body yields a second value, the score, whose shape is a
    prefix of the message's; the reduction is the softmax-weighted sum over
    v's in-edges. `logsumexp` reduces to log(sum(exp(message))) per element
    in one pass (a running maximum rescales the running sum); autodiff uses
    it for the softmax's normaliser, which the language does not expose.
    Vertices without in-edges get zeros.

    The body's block arguments are the per-element tensors of the operands,
    in the order src, dst, edge.

    With `reversed` the reduction runs into each edge's *source* instead: the
    result's row u reduces the messages of u's out-edges (src values are
    still read at the source, dst values at the destination). Backward
    propagation uses it.

    ```mlir
    %a = saga.propagate sum src(%h) dst() edge(%w)
           : (!saga.vertex<16xf32>, !saga.edge<f32>) -> !saga.vertex<16xf32> {
    ^bb0(%x: tensor<16xf32>, %ew: tensor<f32>):
      %m = saga.mul %x, %ew : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
      saga.yield %m : tensor<16xf32>
    }
    ```
  }];
  let arguments = (ins Saga_GatherKind:$kind, Variadic<Saga_AnyDomain>:$srcs,
                       Variadic<Saga_AnyDomain>:$dsts,
                       Variadic<Saga_AnyDomain>:$edges, UnitAttr:$reversed);
  let results = (outs Saga_AnyDomain:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kind `src` `(` $srcs `)` `dst` `(` $dsts `)` `edge` `(` $edges `)`
    attr-dict `:` functional-type(operands, $result) $body
  }];
  let hasVerifier = 1;
  let hasCanonicalizeMethod = 1;
}

def Saga_EdgeMapOp : Saga_Op<"edge_map", [RecursiveMemoryEffects,
                                           AttrSizedOperandSegments]> {
  let summary = "an edge function materialised: one row per edge";
  let description = [{
    The first half of an unfused `saga.propagate`. For every edge u -> v,
    evaluates the body on the rows of the `src` values at u, the `dst`
    values at v and the `edge` values at the edge, and writes each yielded
    tensor to that edge's row (by edge id) of the corresponding result. The
    results are edge tensors, as PyG and DGL build them (`x[edge_index[0]]`
    and the like) when the message function is not fused into the
    aggregation; saga-materialize-edges makes them when fusion is off.

    The body's block arguments are the per-element tensors of the operands,
    in the order src, dst, edge; it yields one tensor per result, each the
    result's per-edge tensor.

    ```mlir
    %m, %s = saga.edge_map src(%z, %a) dst(%b) edge()
           : (!saga.vertex<8x8xf32>, !saga.vertex<8xf32>, !saga.vertex<8xf32>)
             -> (!saga.edge<8x8xf32>, !saga.edge<8xf32>) {
    ^bb0(%zs: tensor<8x8xf32>, %as: tensor<8xf32>, %bd: tensor<8xf32>):
      %t = saga.add %as, %bd : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
      saga.yield %zs, %t : tensor<8x8xf32>, tensor<8xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Saga_AnyDomain>:$srcs,
                       Variadic<Saga_AnyDomain>:$dsts,
                       Variadic<Saga_AnyDomain>:$edges);
  let results = (outs Variadic<Saga_AnyDomain>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `src` `(` $srcs `)` `dst` `(` $dsts `)` `edge` `(` $edges `)`
    attr-dict `:` functional-type(operands, $results) $body
  }];
  let hasVerifier = 1;
}

def Saga_LinearOp : Saga_Op<"linear", [Pure]> {
  let summary = "a per-vertex vector-matrix product batched into one GEMM";
  let description = [{
    `result[v] = input[v] @ weight` for every vertex v, with the input a
    vector per vertex and the weight `[k, n...]`: one `[V, k] x [k, N]`
    matrix product.

    ```mlir
    %y = saga.linear %x, %W : !saga.vertex<1433xf32>, tensor<1433x16xf32> -> !saga.vertex<16xf32>
    ```
  }];
  let arguments = (ins Saga_VertexValue:$input, Saga_Tensor:$weight);
  let results = (outs Saga_VertexValue:$result);
  let assemblyFormat = [{
    $input `,` $weight attr-dict `:` qualified(type($input)) `,`
    type($weight) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Saga_SumRowsOp : Saga_Op<"sum_rows", [Pure]> {
  let summary = "sum a vertex value over all vertices";
  let description = [{
    The gradient of a parameter used per vertex (a bias) is the sum of its
    per-vertex contributions.

    ```mlir
    %db = saga.sum_rows %g : !saga.vertex<16xf32> -> tensor<16xf32>
    ```
  }];
  let arguments = (ins Saga_VertexValue:$input);
  let results = (outs Saga_Tensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Saga_LinearGradInputOp : Saga_Op<"linear_grad_input", [Pure]> {
  let summary = "input gradient of saga.linear: dy @ W^T per vertex";
  let arguments = (ins Saga_VertexValue:$gradOutput, Saga_Tensor:$weight);
  let results = (outs Saga_VertexValue:$result);
  let assemblyFormat = [{
    $gradOutput `,` $weight attr-dict `:` qualified(type($gradOutput)) `,`
    type($weight) `->` qualified(type($result))
  }];
}

def Saga_LinearGradWeightOp : Saga_Op<"linear_grad_weight", [Pure]> {
  let summary = "weight gradient of saga.linear: x^T @ dy over all vertices";
  let arguments = (ins Saga_VertexValue:$input, Saga_VertexValue:$gradOutput);
  let results = (outs Saga_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $gradOutput attr-dict `:` qualified(type($input)) `,`
    qualified(type($gradOutput)) `->` type($result)
  }];
}

def Saga_CrossEntropyGradOp : Saga_Op<"cross_entropy_grad", [Pure]> {
  let summary = "gradient of saga.cross_entropy with respect to the logits";
  let description = [{
    `grad * (softmax(logits) - onehot(label)) / n` on the n labelled vertices
    of the current mask, zero elsewhere.
  }];
  let arguments = (ins Saga_VertexValue:$logits, Saga_VertexValue:$labels,
                       0DTensorOf<[AnyFloat]>:$grad);
  let results = (outs Saga_VertexValue:$result);
  let assemblyFormat = [{
    $logits `,` $labels `,` $grad attr-dict `:` qualified(type($logits)) `,`
    qualified(type($labels)) `,` type($grad) `->` qualified(type($result))
  }];
}

//===----------------------------------------------------------------------===//
// Plan level (docs/architecture.md, Levels): the steps the runtime carries out
//===----------------------------------------------------------------------===//

def Saga_LaunchOp : Saga_Op<"launch", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "run a generated kernel over every vertex";
  let description = [{
    Calls the kernel function `callee` for ranges of vertex rows (split over
    the runtime's threads). The kernel takes the row range, then (for a
    `propagate` or `edge_map` kernel) the graph's CSR by destination (by
    source for a reversed propagate), then one buffer per operand and per
    result, each a flat `memref<?xT>` of rows. The runtime allocates the
    results: a row per vertex, or per edge for edge values (an `edge_map`
    kernel writes the rows of the in-edges of its destination rows).

    ```mlir
    %o = saga.launch @kernel_0(%a, %W) : (!saga.vertex<16xf32>, tensor<16x7xf32>) -> !saga.vertex<7xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee,
                       Variadic<AnyType>:$operands, UnitAttr:$propagate,
                       UnitAttr:$edge_map);
  let results = (outs Variadic<Saga_AnyDomain>:$results);
  let assemblyFormat = [{
    $callee `(` $operands `)` attr-dict `:` functional-type($operands, $results)
  }];
}

def Saga_ReleaseOp : Saga_Op<"release"> {
  let summary = "the last use of a buffer: the runtime may free it";
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` qualified(type($value))";
}

//===----------------------------------------------------------------------===//
// Chunked level (docs/architecture.md, "Beyond one memory: the chunked
// level"): the plan's steps under a memory budget
//===----------------------------------------------------------------------===//

def Saga_ScheduleOp : Saga_Op<"schedule", [HasParent<"ModelOp">, NoTerminator,
                                            SingleBlock]> {
  let summary = "the model's steps over row intervals, with their transfers";
  let description = [{
    The chunked level (made by `saga-schedule-memory`, run by the chunked
    executor): the model's vertex values split into row intervals
    (`intervals` holds their P + 1 bounds), maps and GEMMs run per interval
    and propagations per 2-D chunk. The body lists, in execution order,
    every step of the model and the memory plan's transfers between the
    device tier (`budget` bytes, of which `planned` are the plan's and the
    rest the room loads use to run ahead) and the next tier:

    - `saga.step N "name" [i, j]`: the N-th operator the plan runs, over
      row interval j, and for a propagation or edge map source interval i
      (-1: not split that way). The operators are the model body's ops
      (leaving out params, constants and releases), each over its
      intervals (or chunks) in turn; a chain of consecutive ops over rows
      whose operands made in the chain are vertex values runs interval by
      interval, after the chunk group of a propagation heading it that
      finishes those intervals (NGra's ApplyVertex right after a
      destination interval's gather). `op_major`, when present, says every
      op runs over all its intervals before the next;
    - `saga.prefetch %v [j]`: the transfer engine may start loading piece j
      of %v here, ahead of the step that needs it, if the room allows;
    - `saga.load %v [j]`: piece j of %v must be resident for the next step
      (loaded here unless a prefetch started it); `saga.load %v [i] rows N`
      loads only the N rows of interval i that the next step's 2-D chunk
      reads (NGra's selective loading), each into its place in the piece's
      buffer, and the piece leaves the device tier after the step (a
      `saga.free` follows it unless the step was its last use);
    - `saga.store %v [j]`: after the step, piece j goes down to the next
      tier (its copy there is current again);
    - `saga.free %v [j]`: after the step, piece j leaves the device tier
      (once any store of it has finished).

    Propagations run their chunks in groups of `group` destination
    intervals (per group: source interval i outer, the group's j inner), so
    a source piece loaded once serves the whole group.

    `empty_chunks`, when present, lists the 2-D chunks that hold no edges
    (i * P + j for the edges from interval i into interval j): their steps
    read none of the other end's rows, so the plan loads no source piece
    for them (NGra's selective loading where a chunk reads no sources), and
    a propagation's empty chunk between its first and last is not launched.

    `chunk_edges`, when present, holds every 2-D chunk's edge count (at
    i * P + j) and says the model's edge values are split by destination
    interval: piece j of an edge value holds the edges into interval j, in
    chunk order (by source interval, then as the in-edge CSR orders them),
    so a propagation or edge map over chunk (i, j) reads and writes piece j
    (reversed, piece i: the other end's, streamed like a source piece).

    `selective`, when present, says the plan was made knowing how many rows
    each chunk reads at its other end, so it could load only those.

    A piece of -1 is the whole value; `state` names the running state of
    the propagation that defines %v (its partial reductions per destination
    interval). `method` is the planner's (the exact DP, or the fallback it
    took and why), `moved` the bytes its plan moves per run.

    ```mlir
    saga.schedule {budget = 8388608 : i64, ...} {
      saga.load %arg0 [0] : !saga.vertex<1433xf32>
      saga.step 0 "linear" [-1, 0]
      saga.store %3 [0] : !saga.vertex<16xf32>
      saga.free %3 [0] : !saga.vertex<16xf32>
      ...
    }
    ```
  }];
  let arguments = (ins I64Attr:$budget, I64Attr:$planned, I64Attr:$group,
                       I64Attr:$pinned,
                       I64Attr:$minimum, I64Attr:$vertices, I64Attr:$edges,
                       DenseI32ArrayAttr:$intervals, StrAttr:$method,
                       I64Attr:$moved,
                       OptionalAttr<DenseI32ArrayAttr>:$empty_chunks,
                       UnitAttr:$selective, UnitAttr:$op_major,
                       OptionalAttr<DenseI64ArrayAttr>:$chunk_edges);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Saga_StepOp : Saga_Op<"step", [HasParent<"ScheduleOp">]> {
  let summary = "one step of a chunked schedule: operator N over a chunk";
  let arguments = (ins I64Attr:$index, StrAttr:$name, I64Attr:$i,
                       I64Attr:$j);
  let assemblyFormat = "$index $name ` ` `[` $i `,` $j `]` attr-dict";
}

class Saga_TransferOp<string mnemonic, string what>
    : Saga_Op<mnemonic, [HasParent<"ScheduleOp">]> {
  let summary = what;
  let arguments = (ins AnyType:$value, I64Attr:$piece, UnitAttr:$state,
                       OptionalAttr<I64Attr>:$rows);
  let assemblyFormat = [{
    (`state` $state^)? $value ` ` `[` $piece `]` (`rows` $rows^)? attr-dict `:` qualified(type($value))
  }];
}

def Saga_PrefetchOp : Saga_TransferOp<"prefetch",
    "start loading a piece ahead of the step that needs it">;
def Saga_LoadOp : Saga_TransferOp<"load",
    "a piece the next step needs resident in the device tier">;
def Saga_StoreOp : Saga_TransferOp<"store",
    "after the step, copy a piece down to the next tier">;
def Saga_FreeOp : Saga_TransferOp<"free",
    "after the step, a piece leaves the device tier">;

#endif // SAGA_OPS_TD
