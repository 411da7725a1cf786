// RUN: saga-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

// Tests that a domain type with a zero dimension is rejected where it is
// written.
// expected-error @+1 {{vertex feature shape [4, 0] has a non-positive dimension}}
func.func @zero_dim(%x: !saga.vertex<4x0xf32>) {
  return
}

// -----

// Tests that a domain type's element type must be a float or an integer.
// expected-error @+1 {{edge element type must be a float or an integer, got 'index'}}
func.func @index_element(%x: !saga.edge<index>) {
  return
}

// -----

//===----------------------------------------------------------------------===//
// Graph built-ins
//===----------------------------------------------------------------------===//

// Tests that the degree must be one float per vertex.
func.func @degree_vector() {
  // expected-error @+1 {{'saga.degree' op the degree is one float per vertex (!saga.vertex<f32>), not '!saga.vertex<4xf32>'}}
  %0 = saga.degree : !saga.vertex<4xf32>
  return
}

// -----

// Tests that the degree is a vertex value, not an edge value (ODS constraint).
func.func @degree_on_edges() {
  // expected-error @+1 {{'saga.degree' op result #0 must be vertex-domain value, but got '!saga.edge<f32>'}}
  %0 = saga.degree : !saga.edge<f32>
  return
}

// -----

// Tests that the vertex id must be one integer per vertex.
func.func @vertex_id_float() {
  // expected-error @+1 {{'saga.vertex_id' op the vertex id is one integer per vertex (!saga.vertex<i32>), not '!saga.vertex<f32>'}}
  %0 = saga.vertex_id : !saga.vertex<f32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// saga.scatter
//===----------------------------------------------------------------------===//

// Tests that an edge value cannot be scattered.
func.func @scatter_edge(%e: !saga.edge<16xf32>) {
  // expected-error @+1 {{'saga.scatter' op scatters a vertex value onto edges, but its input is an edge value}}
  %0 = saga.scatter src %e : !saga.edge<16xf32> -> !saga.edge<16xf32>
  return
}

// -----

// Tests that a scatter must produce an edge value.
func.func @scatter_to_vertex(%h: !saga.vertex<16xf32>) {
  // expected-error @+1 {{'saga.scatter' op produces an edge value, but its result type is '!saga.vertex<16xf32>'}}
  %0 = saga.scatter dst %h : !saga.vertex<16xf32> -> !saga.vertex<16xf32>
  return
}

// -----

// Tests that a scatter keeps the feature type.
func.func @scatter_shape(%h: !saga.vertex<16xf32>) {
  // expected-error @+1 {{'saga.scatter' op keeps the feature type: input 'tensor<16xf32>' but result 'tensor<8xf32>'}}
  %0 = saga.scatter src %h : !saga.vertex<16xf32> -> !saga.edge<8xf32>
  return
}

// -----

// Tests that a scatter keeps the element type.
func.func @scatter_element_type(%h: !saga.vertex<16xf32>) {
  // expected-error @+1 {{'saga.scatter' op keeps the feature type: input 'tensor<16xf32>' but result 'tensor<16xf16>'}}
  %0 = saga.scatter src %h : !saga.vertex<16xf32> -> !saga.edge<16xf16>
  return
}

// -----

// Tests that a tensor cannot be scattered (ODS constraint).
func.func @scatter_tensor(%x: tensor<16xf32>) {
  // expected-error @+1 {{'saga.scatter' op operand #0 must be vertex- or edge-domain value, but got 'tensor<16xf32>'}}
  %0 = saga.scatter src %x : tensor<16xf32> -> !saga.edge<16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// saga.apply_edge / saga.apply_vertex
//===----------------------------------------------------------------------===//

// Tests that a vertex value cannot be an input of apply_edge.
func.func @apply_edge_vertex_input(%h: !saga.vertex<16xf32>) {
  // expected-error @+1 {{'saga.apply_edge' op input #0 is a vertex value; apply_edge takes only edge values}}
  %0 = saga.apply_edge(%h) : (!saga.vertex<16xf32>) -> !saga.edge<16xf32> {
  ^bb0(%x: tensor<16xf32>):
    saga.yield %x : tensor<16xf32>
  }
  return
}

// -----

// Tests that an edge value cannot be an input of apply_vertex.
func.func @apply_vertex_edge_input(%h: !saga.vertex<16xf32>, %e: !saga.edge<f32>) {
  // expected-error @+1 {{'saga.apply_vertex' op input #1 is an edge value; apply_vertex takes only vertex values}}
  %0 = saga.apply_vertex(%h, %e) : (!saga.vertex<16xf32>, !saga.edge<f32>) -> !saga.vertex<16xf32> {
  ^bb0(%x: tensor<16xf32>, %w: tensor<f32>):
    saga.yield %x : tensor<16xf32>
  }
  return
}

// -----

// Tests that a tensor cannot be a stage input (ODS constraint).
func.func @apply_tensor_input(%t: tensor<16xf32>) {
  // expected-error @+1 {{'saga.apply_vertex' op operand #0 must be variadic of vertex- or edge-domain value, but got 'tensor<16xf32>'}}
  %0 = saga.apply_vertex(%t) : (tensor<16xf32>) -> !saga.vertex<16xf32> {
  ^bb0(%x: tensor<16xf32>):
    saga.yield %x : tensor<16xf32>
  }
  return
}

// -----

// Tests that the body takes one argument per input (too many).
func.func @apply_too_many_args(%h: !saga.vertex<f32>) {
  // expected-error @+1 {{'saga.apply_vertex' op body takes 2 arguments but the stage has 1 input}}
  %0 = saga.apply_vertex(%h) : (!saga.vertex<f32>) -> !saga.vertex<f32> {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    saga.yield %a : tensor<f32>
  }
  return
}

// -----

// Tests that the body takes one argument per input (too few).
func.func @apply_too_few_args(%a: !saga.edge<f32>, %b: !saga.edge<f32>) {
  // expected-error @+1 {{'saga.apply_edge' op body takes 1 argument but the stage has 2 inputs}}
  %0 = saga.apply_edge(%a, %b) : (!saga.edge<f32>, !saga.edge<f32>) -> !saga.edge<f32> {
  ^bb0(%x: tensor<f32>):
    saga.yield %x : tensor<f32>
  }
  return
}

// -----

// Tests that a body argument must be the per-element tensor of its input.
func.func @apply_arg_type(%e: !saga.edge<4x8xf32>) {
  // expected-error @+1 {{'saga.apply_edge' op body argument #0 must be the per-edge tensor 'tensor<4x8xf32>' of input #0, not 'tensor<32xf32>'}}
  %0 = saga.apply_edge(%e) : (!saga.edge<4x8xf32>) -> !saga.edge<32xf32> {
  ^bb0(%x: tensor<32xf32>):
    saga.yield %x : tensor<32xf32>
  }
  return
}

// -----

// Tests that a body must end with saga.yield, not another terminator.
func.func @apply_wrong_terminator(%h: !saga.vertex<16xf32>) {
  // expected-error @+1 {{'saga.apply_vertex' op body must end with saga.yield}}
  %0 = saga.apply_vertex(%h) : (!saga.vertex<16xf32>) -> !saga.vertex<16xf32> {
  ^bb0(%x: tensor<16xf32>):
    func.return %x : tensor<16xf32>
  }
  return
}

// -----

// Tests that a body whose last op is not a terminator is reported as not
// ending with saga.yield.
func.func @apply_no_terminator(%h: !saga.vertex<16xf32>) {
  // expected-error @+1 {{'saga.apply_vertex' op body must end with saga.yield}}
  %0 = saga.apply_vertex(%h) : (!saga.vertex<16xf32>) -> !saga.vertex<16xf32> {
  ^bb0(%x: tensor<16xf32>):
    %r = saga.relu %x : tensor<16xf32>
  }
  return
}

// -----

// Tests that a block with arguments but no ops does not end with saga.yield.
func.func @apply_empty_block(%h: !saga.vertex<16xf32>) {
  // expected-error @+1 {{'saga.apply_vertex' op body must end with saga.yield}}
  %0 = saga.apply_vertex(%h) : (!saga.vertex<16xf32>) -> !saga.vertex<16xf32> {
  ^bb0(%x: tensor<16xf32>):
  }
  return
}

// -----

// Tests that a stage body cannot be empty (ODS region constraint).
func.func @apply_no_block(%h: !saga.vertex<16xf32>) {
  // expected-error @+1 {{'saga.apply_vertex' op region #0 ('body') failed to verify constraint: region with 1 blocks}}
  %0 = saga.apply_vertex(%h) : (!saga.vertex<16xf32>) -> !saga.vertex<16xf32> {
  }
  return
}

// -----

// Tests that the body yields one value per result (too few).
func.func @apply_yield_count(%h: !saga.vertex<16xf32>) {
  // expected-error @+1 {{'saga.apply_vertex' op body yields 1 value but the stage has 2 results}}
  %0:2 = saga.apply_vertex(%h) : (!saga.vertex<16xf32>) -> (!saga.vertex<16xf32>, !saga.vertex<16xf32>) {
  ^bb0(%x: tensor<16xf32>):
    saga.yield %x : tensor<16xf32>
  }
  return
}

// -----

// Tests that the body yields one value per result (too many).
func.func @apply_yield_extra(%e: !saga.edge<16xf32>) {
  // expected-error @+1 {{'saga.apply_edge' op body yields 2 values but the stage has 1 result}}
  %0 = saga.apply_edge(%e) : (!saga.edge<16xf32>) -> !saga.edge<16xf32> {
  ^bb0(%x: tensor<16xf32>):
    saga.yield %x, %x : tensor<16xf32>, tensor<16xf32>
  }
  return
}

// -----

// Tests that a yielded tensor must be the per-element tensor of its result.
func.func @apply_yield_type(%h: !saga.vertex<16xf32>, %W: tensor<16x7xf32>) {
  // expected-error @+1 {{'saga.apply_vertex' op body yields 'tensor<16xf32>' for result #0 of type '!saga.vertex<7xf32>'}}
  %0 = saga.apply_vertex(%h) : (!saga.vertex<16xf32>) -> !saga.vertex<7xf32> {
  ^bb0(%x: tensor<16xf32>):
    saga.yield %x : tensor<16xf32>
  }
  return
}

// -----

// Tests that apply_vertex produces vertex values only.
func.func @apply_vertex_edge_result(%h: !saga.vertex<16xf32>) {
  // expected-error @+1 {{'saga.apply_vertex' op result #0 must be a vertex value, not '!saga.edge<16xf32>'}}
  %0 = saga.apply_vertex(%h) : (!saga.vertex<16xf32>) -> !saga.edge<16xf32> {
  ^bb0(%x: tensor<16xf32>):
    saga.yield %x : tensor<16xf32>
  }
  return
}

// -----

// Tests that apply_edge produces edge values only.
func.func @apply_edge_vertex_result(%e: !saga.edge<16xf32>) {
  // expected-error @+1 {{'saga.apply_edge' op result #0 must be an edge value, not '!saga.vertex<16xf32>'}}
  %0 = saga.apply_edge(%e) : (!saga.edge<16xf32>) -> !saga.vertex<16xf32> {
  ^bb0(%x: tensor<16xf32>):
    saga.yield %x : tensor<16xf32>
  }
  return
}

// -----

// Tests that a body cannot capture a vertex value from outside; the error is
// reported at the op that uses it.
func.func @apply_captures_vertex(%h: !saga.vertex<7xf32>, %l: !saga.vertex<i32>) {
  %0 = saga.apply_vertex(%h) : (!saga.vertex<7xf32>) -> !saga.vertex<7xf32> {
  ^bb0(%x: tensor<7xf32>):
    // expected-error @+1 {{'saga.cross_entropy' op uses a vertex value defined outside the apply_vertex body; pass it in as an input}}
    %c = saga.cross_entropy %h, %l : !saga.vertex<7xf32>, !saga.vertex<i32> -> tensor<f32>
    saga.yield %x : tensor<7xf32>
  }
  return
}

// -----

// Tests that an apply_edge body cannot capture an edge value from outside,
// here through a call.
func.func private @use_edges(!saga.edge<16xf32>) -> tensor<16xf32>

func.func @apply_captures_edge(%e: !saga.edge<16xf32>) {
  %0 = saga.apply_edge(%e) : (!saga.edge<16xf32>) -> !saga.edge<16xf32> {
  ^bb0(%x: tensor<16xf32>):
    // expected-error @+1 {{'func.call' op uses an edge value defined outside the apply_edge body; pass it in as an input}}
    %y = func.call @use_edges(%e) : (!saga.edge<16xf32>) -> tensor<16xf32>
    saga.yield %y : tensor<16xf32>
  }
  return
}

// -----

// Tests that a nested stage cannot take an outside value as its input either:
// the nested apply_edge makes no graph-wide value but uses one.
func.func @apply_nested_captures(%e: !saga.edge<16xf32>) {
  %0 = saga.apply_edge(%e) : (!saga.edge<16xf32>) -> !saga.edge<16xf32> {
  ^bb0(%x: tensor<16xf32>):
    // expected-error @+1 {{'saga.apply_edge' op uses an edge value defined outside the apply_edge body; pass it in as an input}}
    saga.apply_edge(%e) : (!saga.edge<16xf32>) -> () {
    ^bb0(%y: tensor<16xf32>):
      saga.yield
    }
    saga.yield %x : tensor<16xf32>
  }
  return
}

// -----

// Tests that a graph built-in cannot be used inside a body: saga.degree makes
// a vertex value, which a body computing one vertex at a time cannot hold.
func.func @apply_degree_in_body(%h: !saga.vertex<16xf32>) {
  %0 = saga.apply_vertex(%h) : (!saga.vertex<16xf32>) -> !saga.vertex<16xf32> {
  ^bb0(%x: tensor<16xf32>):
    // expected-error @+1 {{'saga.degree' op makes a graph-wide value inside an apply_vertex body, which computes one element at a time}}
    %d = saga.degree : !saga.vertex<f32>
    saga.yield %x : tensor<16xf32>
  }
  return
}

// -----

// Tests that a scatter inside a body is reported as making a graph-wide value
// (before the capture of %h is).
func.func @apply_scatter_in_body(%h: !saga.vertex<16xf32>) {
  %0 = saga.apply_vertex(%h) : (!saga.vertex<16xf32>) -> !saga.vertex<16xf32> {
  ^bb0(%x: tensor<16xf32>):
    // expected-error @+1 {{'saga.scatter' op makes a graph-wide value inside an apply_vertex body, which computes one element at a time}}
    %s = saga.scatter src %h : !saga.vertex<16xf32> -> !saga.edge<16xf32>
    saga.yield %x : tensor<16xf32>
  }
  return
}

// -----

// Tests that a gather inside an apply_edge body is reported as making a
// graph-wide value.
func.func @apply_gather_in_body(%e: !saga.edge<16xf32>) {
  %0 = saga.apply_edge(%e) : (!saga.edge<16xf32>) -> !saga.edge<16xf32> {
  ^bb0(%x: tensor<16xf32>):
    // expected-error @+1 {{'saga.gather' op makes a graph-wide value inside an apply_edge body, which computes one element at a time}}
    %g = saga.gather sum %e : !saga.edge<16xf32> -> !saga.vertex<16xf32>
    saga.yield %x : tensor<16xf32>
  }
  return
}

// -----

// Tests that a stage nested in a body is reported as making a graph-wide value
// (its result is a vertex value).
func.func @apply_nested_stage(%h: !saga.vertex<16xf32>) {
  %0 = saga.apply_vertex(%h) : (!saga.vertex<16xf32>) -> !saga.vertex<16xf32> {
  ^bb0(%x: tensor<16xf32>):
    // expected-error @+1 {{'saga.apply_vertex' op makes a graph-wide value inside an apply_vertex body, which computes one element at a time}}
    %i = saga.apply_vertex() : () -> !saga.vertex<16xf32> {
      saga.yield %x : tensor<16xf32>
    }
    saga.yield %x : tensor<16xf32>
  }
  return
}

// -----

// Tests that saga.yield is only valid inside a stage body.
func.func @yield_outside(%x: tensor<16xf32>) {
  // expected-error @+1 {{'saga.yield' op expects parent op to be one of 'saga.apply_edge, saga.apply_vertex, saga.propagate, saga.edge_map'}}
  saga.yield %x : tensor<16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// saga.gather
//===----------------------------------------------------------------------===//

// Tests that a gather reduces edge values, not vertex values.
func.func @gather_vertex(%h: !saga.vertex<16xf32>) {
  // expected-error @+1 {{'saga.gather' op reduces edge values into vertices, but its input is a vertex value}}
  %0 = saga.gather sum %h : !saga.vertex<16xf32> -> !saga.vertex<16xf32>
  return
}

// -----

// Tests that a gather must produce a vertex value.
func.func @gather_to_edge(%e: !saga.edge<16xf32>) {
  // expected-error @+1 {{'saga.gather' op produces a vertex value, but its result type is '!saga.edge<16xf32>'}}
  %0 = saga.gather max %e : !saga.edge<16xf32> -> !saga.edge<16xf32>
  return
}

// -----

// Tests that a gather keeps the feature type.
func.func @gather_shape(%e: !saga.edge<4x8xf32>) {
  // expected-error @+1 {{'saga.gather' op keeps the feature type: input 'tensor<4x8xf32>' but result 'tensor<32xf32>'}}
  %0 = saga.gather mean %e : !saga.edge<4x8xf32> -> !saga.vertex<32xf32>
  return
}

// -----

// Tests that softmax_sum needs a score.
func.func @softmax_without_score(%e: !saga.edge<4x8xf32>) {
  // expected-error @+1 {{'saga.gather' op softmax_sum needs a score per edge ('score %s')}}
  %0 = saga.gather softmax_sum %e : !saga.edge<4x8xf32> -> !saga.vertex<4x8xf32>
  return
}

// -----

// Tests that only softmax_sum takes an attention dropout.
func.func @sum_with_dropout(%e: !saga.edge<4x8xf32>) {
  // expected-error @+1 {{'saga.gather' op only softmax_sum takes an attention dropout}}
  %0 = saga.gather sum %e {dropout = 5.000000e-01 : f64} : !saga.edge<4x8xf32> -> !saga.vertex<4x8xf32>
  return
}

// -----

// Tests that the attention dropout rate is in [0, 1).
func.func @dropout_rate(%e: !saga.edge<4x8xf32>, %s: !saga.edge<4xf32>) {
  // expected-error @+1 {{'saga.gather' op dropout rate must be in [0, 1), got 1.5}}
  %0 = saga.gather softmax_sum %e score %s {dropout = 1.500000e+00 : f64} : !saga.edge<4x8xf32>, !saga.edge<4xf32> -> !saga.vertex<4x8xf32>
  return
}

// -----

// Tests that only softmax_sum takes a score.
func.func @sum_with_score(%e: !saga.edge<4x8xf32>, %s: !saga.edge<4xf32>) {
  // expected-error @+1 {{'saga.gather' op only softmax_sum takes a score; sum does not}}
  %0 = saga.gather sum %e score %s : !saga.edge<4x8xf32>, !saga.edge<4xf32> -> !saga.vertex<4x8xf32>
  return
}

// -----

// Tests that the score is an edge value.
func.func @score_on_vertices(%e: !saga.edge<4x8xf32>, %s: !saga.vertex<4xf32>) {
  // expected-error @+1 {{'saga.gather' op score must be an edge value, not '!saga.vertex<4xf32>'}}
  %0 = saga.gather softmax_sum %e score %s : !saga.edge<4x8xf32>, !saga.vertex<4xf32> -> !saga.vertex<4x8xf32>
  return
}

// -----

// Tests that the score shape must be a prefix of the value shape (here a
// suffix).
func.func @score_not_prefix(%e: !saga.edge<4x8xf32>, %s: !saga.edge<8xf32>) {
  // expected-error @+1 {{'saga.gather' op score shape [8] must be a prefix of the value shape [4, 8] (one score per head)}}
  %0 = saga.gather softmax_sum %e score %s : !saga.edge<4x8xf32>, !saga.edge<8xf32> -> !saga.vertex<4x8xf32>
  return
}

// -----

// Tests that the score cannot have a higher rank than the value.
func.func @score_too_long(%e: !saga.edge<4xf32>, %s: !saga.edge<4x2xf32>) {
  // expected-error @+1 {{'saga.gather' op score shape [4, 2] must be a prefix of the value shape [4] (one score per head)}}
  %0 = saga.gather softmax_sum %e score %s : !saga.edge<4xf32>, !saga.edge<4x2xf32> -> !saga.vertex<4xf32>
  return
}

// -----

// Tests that the score has the value's element type.
func.func @score_element_type(%e: !saga.edge<4x8xf32>, %s: !saga.edge<4xf16>) {
  // expected-error @+1 {{'saga.gather' op score element type 'f16' differs from the value's 'f32'}}
  %0 = saga.gather softmax_sum %e score %s : !saga.edge<4x8xf32>, !saga.edge<4xf16> -> !saga.vertex<4x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

// Tests that per-element ops take float tensors only (ODS constraint).
func.func @relu_integer(%x: tensor<16xi32>) {
  // expected-error @+1 {{'saga.relu' op operand #0 must be ranked tensor of floating-point values, but got 'tensor<16xi32>'}}
  %0 = saga.relu %x : tensor<16xi32>
  return
}

// -----

// Tests that a domain value cannot be used as a per-element tensor.
func.func @relu_vertex(%h: !saga.vertex<16xf32>) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found '!saga.vertex<16xf32>'}}
  %0 = saga.relu %h : !saga.vertex<16xf32>
  return
}

// -----

// Tests that the leaky_relu slope must be a non-negative number.
func.func @leaky_relu_negative(%x: tensor<16xf32>) {
  // expected-error @+1 {{'saga.leaky_relu' op slope must be a non-negative number, got -1.000000e-01}}
  %0 = saga.leaky_relu %x slope -0.1 : tensor<16xf32>
  return
}

// -----

// Tests that a NaN leaky_relu slope is rejected.
func.func @leaky_relu_nan(%x: tensor<16xf32>) {
  // expected-error @+1 {{'saga.leaky_relu' op slope must be a non-negative number, got nan}}
  %0 = saga.leaky_relu %x slope 0x7FF8000000000000 : tensor<16xf32>
  return
}

// -----

// Tests that a dropout rate of 1 is out of range.
func.func @dropout_one(%x: tensor<16xf32>) {
  // expected-error @+1 {{'saga.dropout' op rate must be in [0, 1), got 1.000000e+00}}
  %0 = saga.dropout %x rate 1.0 : tensor<16xf32>
  return
}

// -----

// Tests that a negative dropout rate is out of range.
func.func @dropout_negative(%x: tensor<16xf32>) {
  // expected-error @+1 {{'saga.dropout' op rate must be in [0, 1), got -1.000000e-01}}
  %0 = saga.dropout %x rate -0.1 : tensor<16xf32>
  return
}

// -----

// Tests that a NaN dropout rate is out of range.
func.func @dropout_nan(%x: tensor<16xf32>) {
  // expected-error @+1 {{'saga.dropout' op rate must be in [0, 1), got nan}}
  %0 = saga.dropout %x rate 0x7FF8000000000000 : tensor<16xf32>
  return
}

// -----

// Tests that binary operand shapes must broadcast.
func.func @broadcast_mismatch(%a: tensor<4x8xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'saga.add' op operand shapes [4, 8] and [4] do not broadcast}}
  %0 = saga.add %a, %b : tensor<4x8xf32>, tensor<4xf32> -> tensor<4x8xf32>
  return
}

// -----

// Tests that the result of a binary op has the broadcast shape.
func.func @broadcast_result(%a: tensor<4x1xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'saga.mul' op result shape [4, 1] differs from the broadcast shape [4, 8]}}
  %0 = saga.mul %a, %b : tensor<4x1xf32>, tensor<8xf32> -> tensor<4x1xf32>
  return
}

// -----

// Tests that binary operands share an element type.
func.func @binary_element_type(%a: tensor<8xf32>, %b: tensor<8xf16>) {
  // expected-error @+1 {{'saga.sub' op operands and result must share an element type, got 'f32', 'f16' -> 'f32'}}
  %0 = saga.sub %a, %b : tensor<8xf32>, tensor<8xf16> -> tensor<8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// saga.matmul, saga.reduce, saga.concat, saga.reshape
//===----------------------------------------------------------------------===//

// Tests that matmul operands have rank >= 1.
func.func @matmul_scalar(%s: tensor<f32>, %W: tensor<16x7xf32>) {
  // expected-error @+1 {{'saga.matmul' op operands must have rank >= 1, got [] @ [16, 7]}}
  %0 = saga.matmul %s, %W : tensor<f32>, tensor<16x7xf32> -> tensor<7xf32>
  return
}

// -----

// Tests that matmul contracts equal dimensions.
func.func @matmul_contraction(%x: tensor<16xf32>, %W: tensor<8x7xf32>) {
  // expected-error @+1 {{'saga.matmul' op contracted dimensions differ: [16] @ [8, 7] (last of lhs 16 vs first of rhs 8)}}
  %0 = saga.matmul %x, %W : tensor<16xf32>, tensor<8x7xf32> -> tensor<7xf32>
  return
}

// -----

// Tests that the matmul result shape is lhs[:-1] ++ rhs[1:].
func.func @matmul_result(%x: tensor<16xf32>, %W: tensor<16x4x8xf32>) {
  // expected-error @+1 {{'saga.matmul' op result shape [32] should be [4, 8]}}
  %0 = saga.matmul %x, %W : tensor<16xf32>, tensor<16x4x8xf32> -> tensor<32xf32>
  return
}

// -----

// Tests that matmul operands and result share an element type.
func.func @matmul_element_type(%x: tensor<16xf32>, %W: tensor<16x7xf32>) {
  // expected-error @+1 {{'saga.matmul' op operands and result must share an element type}}
  %0 = saga.matmul %x, %W : tensor<16xf32>, tensor<16x7xf32> -> tensor<7xf16>
  return
}

// -----

// Tests that a reduce axis must lie in [-rank, rank).
func.func @reduce_axis_range(%z: tensor<4x8xf32>) {
  // expected-error @+1 {{'saga.reduce' op axis 2 is out of range for a tensor of rank 2}}
  %0 = saga.reduce sum %z axis 2 : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that a negative reduce axis below -rank is out of range.
func.func @reduce_negative_axis_range(%z: tensor<4x8xf32>) {
  // expected-error @+1 {{'saga.reduce' op axis -3 is out of range for a tensor of rank 2}}
  %0 = saga.reduce max %z axis -3 : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that the reduced axis is the one removed from the result.
func.func @reduce_result(%z: tensor<4x8xf32>) {
  // expected-error @+1 {{'saga.reduce' op reducing axis 1 of [4, 8] gives [4], not [8]}}
  %0 = saga.reduce mean %z axis 1 : tensor<4x8xf32> -> tensor<8xf32>
  return
}

// -----

// Tests that a negative reduce axis is printed as written in the result
// message.
func.func @reduce_negative_axis_result(%z: tensor<4x8xf32>) {
  // expected-error @+1 {{'saga.reduce' op reducing axis -1 of [4, 8] gives [4], not [8]}}
  %0 = saga.reduce sum %z axis -1 : tensor<4x8xf32> -> tensor<8xf32>
  return
}

// -----

// Tests that the reduce result keeps the input's element type.
func.func @reduce_element_type(%z: tensor<4x8xf32>) {
  // expected-error @+1 {{'saga.reduce' op the result has the input's element type}}
  %0 = saga.reduce max %z axis 0 : tensor<4x8xf32> -> tensor<8xf16>
  return
}

// -----

// Tests that concat needs at least two inputs.
func.func @concat_one(%a: tensor<16xf32>) {
  // expected-error @+1 {{'saga.concat' op needs at least two inputs}}
  %0 = saga.concat %a axis 0 : tensor<16xf32> -> tensor<16xf32>
  return
}

// -----

// Tests that a concat axis must lie in [-rank, rank).
func.func @concat_axis_range(%a: tensor<16xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'saga.concat' op axis 1 is out of range for a tensor of rank 1}}
  %0 = saga.concat %a, %b axis 1 : tensor<16xf32>, tensor<8xf32> -> tensor<24xf32>
  return
}

// -----

// Tests that a concat axis below -rank is out of range.
func.func @concat_negative_axis_range(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{'saga.concat' op axis -3 is out of range for a tensor of rank 2}}
  %0 = saga.concat %a, %b axis -3 : tensor<4x2xf32>, tensor<4x3xf32> -> tensor<4x5xf32>
  return
}

// -----

// Tests that concat inputs agree outside the concatenation axis.
func.func @concat_shape(%a: tensor<4x2xf32>, %b: tensor<3x2xf32>) {
  // expected-error @+1 {{'saga.concat' op input #1 has shape [3, 2], which does not match [4, 2] outside axis 1}}
  %0 = saga.concat %a, %b axis 1 : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x4xf32>
  return
}

// -----

// Tests that a negative concat axis is printed as written.
func.func @concat_negative_axis_shape(%a: tensor<4x2xf32>, %b: tensor<3x2xf32>) {
  // expected-error @+1 {{'saga.concat' op input #1 has shape [3, 2], which does not match [4, 2] outside axis -1}}
  %0 = saga.concat %a, %b axis -1 : tensor<4x2xf32>, tensor<3x2xf32> -> tensor<4x4xf32>
  return
}

// -----

// Tests that concat inputs have the same rank.
func.func @concat_rank(%a: tensor<4x2xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'saga.concat' op input #1 has shape [4], which does not match [4, 2] outside axis 0}}
  %0 = saga.concat %a, %b axis 0 : tensor<4x2xf32>, tensor<4xf32> -> tensor<8x2xf32>
  return
}

// -----

// Tests that concat inputs share an element type.
func.func @concat_element_type(%a: tensor<16xf32>, %b: tensor<8xf16>) {
  // expected-error @+1 {{'saga.concat' op inputs must share an element type}}
  %0 = saga.concat %a, %b axis 0 : tensor<16xf32>, tensor<8xf16> -> tensor<24xf32>
  return
}

// -----

// Tests that the concat result adds up the axis.
func.func @concat_result(%a: tensor<16xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'saga.concat' op result shape [16] should be [24]}}
  %0 = saga.concat %a, %b axis 0 : tensor<16xf32>, tensor<8xf32> -> tensor<16xf32>
  return
}

// -----

// Tests that the concat result keeps the inputs' element type.
func.func @concat_result_element_type(%a: tensor<16xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'saga.concat' op the result has the inputs' element type}}
  %0 = saga.concat %a, %b axis 0 : tensor<16xf32>, tensor<8xf32> -> tensor<24xf16>
  return
}

// -----

// Tests that a negative concat axis is counted from the end when the result
// shape is computed.
func.func @concat_negative_axis_result(%c: tensor<4x2xf32>, %d: tensor<4x3xf32>) {
  // expected-error @+1 {{'saga.concat' op result shape [8, 3] should be [4, 5]}}
  %0 = saga.concat %c, %d axis -1 : tensor<4x2xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  return
}

// -----

// Tests that a reshape keeps the element count.
func.func @reshape_count(%x: tensor<32xf32>) {
  // expected-error @+1 {{'saga.reshape' op cannot reshape [32] (32 elements) to [4, 7] (28 elements)}}
  %0 = saga.reshape %x : tensor<32xf32> -> tensor<4x7xf32>
  return
}

// -----

// Tests that a reshape keeps the element type.
func.func @reshape_element_type(%x: tensor<32xf32>) {
  // expected-error @+1 {{'saga.reshape' op cannot change the element type}}
  %0 = saga.reshape %x : tensor<32xf32> -> tensor<4x8xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

// Tests that cross_entropy takes vertex values, not tensors (ODS constraint).
func.func @cross_entropy_tensor(%x: tensor<7xf32>, %l: !saga.vertex<i32>) {
  // expected-error @+1 {{'saga.cross_entropy' op operand #0 must be vertex-domain value, but got 'tensor<7xf32>'}}
  %0 = saga.cross_entropy %x, %l : tensor<7xf32>, !saga.vertex<i32> -> tensor<f32>
  return
}

// -----

// Tests that cross_entropy logits are a float vector per vertex.
func.func @cross_entropy_logits(%x: !saga.vertex<4x7xf32>, %l: !saga.vertex<i32>) {
  // expected-error @+1 {{'saga.cross_entropy' op logits must be a float vector per vertex (one score per class), got '!saga.vertex<4x7xf32>'}}
  %0 = saga.cross_entropy %x, %l : !saga.vertex<4x7xf32>, !saga.vertex<i32> -> tensor<f32>
  return
}

// -----

// Tests that cross_entropy labels are one integer per vertex.
func.func @cross_entropy_labels(%x: !saga.vertex<7xf32>, %l: !saga.vertex<f32>) {
  // expected-error @+1 {{'saga.cross_entropy' op labels must be one integer class per vertex, got '!saga.vertex<f32>'}}
  %0 = saga.cross_entropy %x, %l : !saga.vertex<7xf32>, !saga.vertex<f32> -> tensor<f32>
  return
}

// -----

// Tests that the cross_entropy loss has the logits' element type.
func.func @cross_entropy_result(%x: !saga.vertex<7xf32>, %l: !saga.vertex<i32>) {
  // expected-error @+1 {{'saga.cross_entropy' op the loss has the logits' element type 'f32'}}
  %0 = saga.cross_entropy %x, %l : !saga.vertex<7xf32>, !saga.vertex<i32> -> tensor<f16>
  return
}

// -----

// Tests that a loss is a rank-0 tensor (ODS constraint).
func.func @l2_not_scalar(%W: tensor<16x7xf32>) {
  // expected-error @+1 {{'saga.l2' op result #0 must be 0D tensor of floating-point values, but got 'tensor<1xf32>'}}
  %0 = saga.l2 %W : tensor<16x7xf32> -> tensor<1xf32>
  return
}

// -----

// Tests that the l2 loss has the input's element type.
func.func @l2_element_type(%W: tensor<16x7xf32>) {
  // expected-error @+1 {{'saga.l2' op the result has the input's element type}}
  %0 = saga.l2 %W : tensor<16x7xf32> -> tensor<f16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// saga.model, saga.param, saga.return
//===----------------------------------------------------------------------===//

// Tests that a model input is a domain value (a graph input).
// expected-error @+1 {{'saga.model' op input #1 must be a vertex or edge value (a graph input), not 'tensor<16x7xf32>'}}
saga.model @TensorInput(%x: !saga.vertex<16xf32>, %W: tensor<16x7xf32>) {
  saga.return
}

// -----

// Tests that a model needs a body (ODS region constraint; saga.model has no
// check of its own for this).
// expected-error @+1 {{'saga.model' op region #0 ('body') failed to verify constraint: region with 1 blocks}}
saga.model @NoBody(%x: !saga.vertex<16xf32>)

// -----

// Tests that the entry block arguments match the model's signature
// (FunctionOpInterface's check).
// expected-error @+1 {{'saga.model' op type of entry block argument #0('!saga.vertex<8xf32>') must match the type of the corresponding argument in function signature('!saga.vertex<16xf32>')}}
"saga.model"() <{function_type = (!saga.vertex<16xf32>) -> (), sym_name = "M"}> ({
^bb0(%arg0: !saga.vertex<8xf32>):
  "saga.return"() : () -> ()
}) : () -> ()

// -----

// Tests that parameter names are unique within a model.
saga.model @Duplicate() {
  // expected-note @+1 {{first defined here}}
  %0 = saga.param "conv0.W" glorot : tensor<16x7xf32>
  %1 = saga.param "conv0.b" zeros : tensor<7xf32>
  // expected-error @+1 {{'saga.param' op redefines parameter 'conv0.W'}}
  %2 = saga.param "conv0.W" zeros : tensor<16x7xf32>
  saga.return
}

// -----

// Tests that the constant initialiser needs a value.
saga.model @ConstantNoValue() {
  // expected-error @+1 {{'saga.param' op a constant initialiser needs a value: 'constant(0.5)'}}
  %0 = saga.param "eps" constant : tensor<f32>
  saga.return
}

// -----

// Tests that only the constant initialiser takes a value.
saga.model @ZerosWithValue() {
  // expected-error @+1 {{'saga.param' op only the constant initialiser takes a value; 'zeros' does not}}
  %0 = saga.param "b" zeros(1.0) : tensor<7xf32>
  saga.return
}

// -----

// Tests that a parameter needs a name.
saga.model @EmptyName() {
  // expected-error @+1 {{'saga.param' op needs a non-empty name}}
  %0 = saga.param "" ones : tensor<7xf32>
  saga.return
}

// -----

// Tests that glorot needs a fan-in and a fan-out (rank >= 2).
saga.model @GlorotVector() {
  // expected-error @+1 {{'saga.param' op glorot needs a tensor of rank >= 2 (fan-in and fan-out), got 'tensor<16xf32>'}}
  %0 = saga.param "b" glorot : tensor<16xf32>
  saga.return
}

// -----

// Tests that saga.param is only valid inside a model.
func.func @param_outside() {
  // expected-error @+1 {{'saga.param' op expects parent op 'saga.model'}}
  %0 = saga.param "W" zeros : tensor<16xf32>
  return
}

// -----

// Tests that saga.return returns one value per model result.
saga.model @ReturnCount(%x: !saga.vertex<7xf32>) -> (!saga.vertex<7xf32>, tensor<f32>) {
  // expected-error @+1 {{'saga.return' op returns 1 value but the model has 2 results}}
  saga.return %x : !saga.vertex<7xf32>
}

// -----

// Tests that saga.return values have the model's result types.
saga.model @ReturnType(%x: !saga.vertex<7xf32>) -> !saga.vertex<16xf32> {
  // expected-error @+1 {{'saga.return' op value #0 has type '!saga.vertex<7xf32>' but the model returns '!saga.vertex<16xf32>'}}
  saga.return %x : !saga.vertex<7xf32>
}

// -----

// Tests that saga.return is only valid inside a model.
func.func @return_outside() {
  // expected-error @+1 {{'saga.return' op expects parent op 'saga.model'}}
  saga.return
}

// -----

// Tests that a propagate's src operands must be vertex values.
func.func @propagate_src_edge(%e: !saga.edge<4xf32>) -> !saga.vertex<4xf32> {
  // expected-error @+1 {{'saga.propagate' op src operand #0 must be a vertex value, not '!saga.edge<4xf32>'}}
  %a = saga.propagate sum src(%e) dst() edge() : (!saga.edge<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%t: tensor<4xf32>):
    saga.yield %t : tensor<4xf32>
  }
  return %a : !saga.vertex<4xf32>
}

// -----

// Tests that softmax_sum propagation needs a score as its body's second yield.
func.func @propagate_softmax_no_score(%h: !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  // expected-error @+1 {{'saga.propagate' op body yields 1 value but softmax_sum needs a message and a score}}
  %a = saga.propagate softmax_sum src(%h) dst() edge() : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%t: tensor<4xf32>):
    saga.yield %t : tensor<4xf32>
  }
  return %a : !saga.vertex<4xf32>
}

// -----

// Tests that a propagate's message must have the result's per-vertex type.
func.func @propagate_message_type(%h: !saga.vertex<4xf32>) -> !saga.vertex<2xf32> {
  // expected-error @+1 {{'saga.propagate' op message type 'tensor<4xf32>' differs from the result's per-vertex 'tensor<2xf32>'}}
  %a = saga.propagate sum src(%h) dst() edge() : (!saga.vertex<4xf32>) -> !saga.vertex<2xf32> {
  ^bb0(%t: tensor<4xf32>):
    saga.yield %t : tensor<4xf32>
  }
  return %a : !saga.vertex<2xf32>
}

// -----

// Tests that an edge_map's result must be an edge value.
func.func @edge_map_vertex_result(%h: !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  // expected-error @+1 {{'saga.edge_map' op result #0 must be an edge value, not '!saga.vertex<4xf32>'}}
  %a = saga.edge_map src(%h) dst() edge() : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%t: tensor<4xf32>):
    saga.yield %t : tensor<4xf32>
  }
  return %a : !saga.vertex<4xf32>
}

// -----

// Tests that an edge_map's body yields one value per result.
func.func @edge_map_yield_count(%h: !saga.vertex<4xf32>) -> !saga.edge<4xf32> {
  // expected-error @+1 {{'saga.edge_map' op body yields 2 values but the op has 1 result}}
  %a = saga.edge_map src(%h) dst() edge() : (!saga.vertex<4xf32>) -> !saga.edge<4xf32> {
  ^bb0(%t: tensor<4xf32>):
    saga.yield %t, %t : tensor<4xf32>, tensor<4xf32>
  }
  return %a : !saga.edge<4xf32>
}

// -----

// Tests that an edge_map's yield has its result's per-edge type.
func.func @edge_map_yield_type(%h: !saga.vertex<4xf32>) -> !saga.edge<2xf32> {
  // expected-error @+1 {{'saga.edge_map' op body yields 'tensor<4xf32>' for result #0 of type '!saga.edge<2xf32>', which needs 'tensor<2xf32>'}}
  %a = saga.edge_map src(%h) dst() edge() : (!saga.vertex<4xf32>) -> !saga.edge<2xf32> {
  ^bb0(%t: tensor<4xf32>):
    saga.yield %t : tensor<4xf32>
  }
  return %a : !saga.edge<2xf32>
}

// -----

// Tests that an edge_map's dst operands are vertex values and its edge
// operands edge values, as a propagate's.
func.func @edge_map_dst_edge(%e: !saga.edge<4xf32>) -> !saga.edge<4xf32> {
  // expected-error @+1 {{'saga.edge_map' op dst operand #0 must be a vertex value, not '!saga.edge<4xf32>'}}
  %a = saga.edge_map src() dst(%e) edge() : (!saga.edge<4xf32>) -> !saga.edge<4xf32> {
  ^bb0(%t: tensor<4xf32>):
    saga.yield %t : tensor<4xf32>
  }
  return %a : !saga.edge<4xf32>
}

// -----

func.func @edge_map_edge_vertex(%h: !saga.vertex<4xf32>) -> !saga.edge<4xf32> {
  // expected-error @+1 {{'saga.edge_map' op edge operand #0 must be an edge value, not '!saga.vertex<4xf32>'}}
  %a = saga.edge_map src() dst() edge(%h) : (!saga.vertex<4xf32>) -> !saga.edge<4xf32> {
  ^bb0(%t: tensor<4xf32>):
    saga.yield %t : tensor<4xf32>
  }
  return %a : !saga.edge<4xf32>
}

// -----

// Tests that an edge_map's body arguments are its operands' per-element
// tensors.
func.func @edge_map_arg_type(%h: !saga.vertex<4xf32>) -> !saga.edge<4xf32> {
  // expected-error @+1 {{'saga.edge_map' op body argument #0 must be 'tensor<4xf32>'}}
  %a = saga.edge_map src(%h) dst() edge() : (!saga.vertex<4xf32>) -> !saga.edge<4xf32> {
  ^bb0(%t: tensor<2x2xf32>):
    %r = saga.reshape %t : tensor<2x2xf32> -> tensor<4xf32>
    saga.yield %r : tensor<4xf32>
  }
  return %a : !saga.edge<4xf32>
}

// -----

func.func @edge_map_arg_count(%h: !saga.vertex<4xf32>) -> !saga.edge<4xf32> {
  // expected-error @+1 {{'saga.edge_map' op body takes 2 arguments but the op has 1 operand}}
  %a = saga.edge_map src(%h) dst() edge() : (!saga.vertex<4xf32>) -> !saga.edge<4xf32> {
  ^bb0(%t: tensor<4xf32>, %u: tensor<4xf32>):
    saga.yield %t : tensor<4xf32>
  }
  return %a : !saga.edge<4xf32>
}

// -----

// Tests that a linear's weight must start with the input's width.
func.func @linear_mismatch(%h: !saga.vertex<4xf32>, %W: tensor<5x3xf32>) -> !saga.vertex<3xf32> {
  // expected-error @+1 {{'saga.linear' op weight [5, 3] must be [4, ...]}}
  %y = saga.linear %h, %W : !saga.vertex<4xf32>, tensor<5x3xf32> -> !saga.vertex<3xf32>
  return %y : !saga.vertex<3xf32>
}

// -----

// Tests that a linear's input must be one vector per vertex.
func.func @linear_rank(%h: !saga.vertex<2x4xf32>, %W: tensor<4x3xf32>) -> !saga.vertex<3xf32> {
  // expected-error @+1 {{'saga.linear' op input must be one vector per vertex, got '!saga.vertex<2x4xf32>'}}
  %y = saga.linear %h, %W : !saga.vertex<2x4xf32>, tensor<4x3xf32> -> !saga.vertex<3xf32>
  return %y : !saga.vertex<3xf32>
}

// -----

// Tests that a launch must name a function.
saga.model @launch_unknown(%x: !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  // expected-error @+1 {{'saga.launch' op kernel 'nowhere' is not a function}}
  %y = saga.launch @nowhere(%x) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32>
  saga.return %y : !saga.vertex<4xf32>
}

// -----

func.func @slice_out_of_range(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'saga.slice' op range [3, 5) is not within axis 0 of size 4}}
  %s = saga.slice %x axis 0 offset 3 size 2 : tensor<4xf32> -> tensor<2xf32>
  return %s : tensor<2xf32>
}

// -----

func.func @slice_shape(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'saga.slice' op result shape [2, 3] should be [2, 2]}}
  %s = saga.slice %x axis 1 offset 1 size 2 : tensor<2x4xf32> -> tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Chunked level
//===----------------------------------------------------------------------===//

// Tests that a schedule's steps are numbered in order.
saga.model @steps(%x: !saga.vertex<4xf32>) -> (!saga.vertex<4xf32>) {
  saga.schedule attributes {budget = 1000 : i64, edges = 0 : i64, group = 1 : i64, intervals = array<i32: 0, 256, 512>, method = "exact", minimum = 0 : i64, moved = 0 : i64, pinned = 0 : i64, planned = 0 : i64, vertices = 512 : i64} {
    saga.step 0 "a" [-1, 0]
    // expected-error @+1 {{steps must be numbered in order: expected 1, found 2}}
    saga.step 2 "a" [-1, 1]
  }
  saga.return %x : !saga.vertex<4xf32>
}

// -----

// Tests that a transfer's piece is one of the intervals.
saga.model @piece(%x: !saga.vertex<4xf32>) -> (!saga.vertex<4xf32>) {
  saga.schedule attributes {budget = 1000 : i64, edges = 0 : i64, group = 1 : i64, intervals = array<i32: 0, 256, 512>, method = "exact", minimum = 0 : i64, moved = 0 : i64, pinned = 0 : i64, planned = 0 : i64, vertices = 512 : i64} {
    // expected-error @+1 {{piece 2 is outside the 2 intervals}}
    saga.load %x [2] : !saga.vertex<4xf32>
  }
  saga.return %x : !saga.vertex<4xf32>
}

// -----

// Tests that only a load reads some of a piece's rows.
saga.model @rowsStore(%x: !saga.vertex<4xf32>) -> (!saga.vertex<4xf32>) {
  saga.schedule attributes {budget = 1000 : i64, edges = 0 : i64, group = 1 : i64, intervals = array<i32: 0, 256, 512>, method = "exact", minimum = 0 : i64, moved = 0 : i64, pinned = 0 : i64, planned = 0 : i64, selective, vertices = 512 : i64} {
    // expected-error @+1 {{only a load reads some rows}}
    saga.store %x [1] rows 12 : !saga.vertex<4xf32>
  }
  saga.return %x : !saga.vertex<4xf32>
}

// -----

// Tests that a load of some rows loads at least one, of an interval's piece.
saga.model @rowsZero(%x: !saga.vertex<4xf32>) -> (!saga.vertex<4xf32>) {
  saga.schedule attributes {budget = 1000 : i64, edges = 0 : i64, group = 1 : i64, intervals = array<i32: 0, 256, 512>, method = "exact", minimum = 0 : i64, moved = 0 : i64, pinned = 0 : i64, planned = 0 : i64, selective, vertices = 512 : i64} {
    // expected-error @+1 {{loads at least one row (found 0)}}
    saga.load %x [1] rows 0 : !saga.vertex<4xf32>
  }
  saga.return %x : !saga.vertex<4xf32>
}

// -----

saga.model @rowsWhole(%x: !saga.vertex<4xf32>) -> (!saga.vertex<4xf32>) {
  saga.schedule attributes {budget = 1000 : i64, edges = 0 : i64, group = 1 : i64, intervals = array<i32: 0, 256, 512>, method = "exact", minimum = 0 : i64, moved = 0 : i64, pinned = 0 : i64, planned = 0 : i64, selective, vertices = 512 : i64} {
    // expected-error @+1 {{rows are loaded from an interval's piece of a value}}
    saga.load %x [-1] rows 3 : !saga.vertex<4xf32>
  }
  saga.return %x : !saga.vertex<4xf32>
}

// -----

// Tests that a state piece belongs to a propagation.
saga.model @state(%x: !saga.vertex<4xf32>) -> (!saga.vertex<4xf32>) {
  saga.schedule attributes {budget = 1000 : i64, edges = 0 : i64, group = 1 : i64, intervals = array<i32: 0, 512>, method = "exact", minimum = 0 : i64, moved = 0 : i64, pinned = 0 : i64, planned = 0 : i64, vertices = 512 : i64} {
    // expected-error @+1 {{a state piece belongs to a propagation's result}}
    saga.store state %x [0] : !saga.vertex<4xf32>
  }
  saga.return %x : !saga.vertex<4xf32>
}

// -----

// Tests that interval bounds cover the vertices in increasing order.
saga.model @bounds(%x: !saga.vertex<4xf32>) -> (!saga.vertex<4xf32>) {
  // expected-error @+1 {{interval bounds must increase (256, then 256)}}
  saga.schedule attributes {budget = 1000 : i64, edges = 0 : i64, group = 1 : i64, intervals = array<i32: 0, 256, 256, 512>, method = "exact", minimum = 0 : i64, moved = 0 : i64, pinned = 0 : i64, planned = 0 : i64, vertices = 512 : i64} {
  }
  saga.return %x : !saga.vertex<4xf32>
}
