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
