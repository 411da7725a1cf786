// RUN: saga-opt %s -split-input-file -verify-diagnostics

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

// Tests that a readout reduces f32 values, not class labels.
saga.model @readout_labels(%l: !saga.vertex<i32>) -> !saga.vertex<i32> {
  // expected-error @+1 {{'saga.readout' op reads f32 vertex values, not '!saga.vertex<i32>'}}
  %s = saga.readout sum %l : !saga.vertex<i32>
  saga.return %s : !saga.vertex<i32>
}

// -----

// Tests that a sum readout has no saga.readout_grad: its gradient is a
// readout of the gradient.
saga.model @readout_grad_sum(%x: !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  // expected-error @+1 {{'saga.readout_grad' op is for max and min readouts; a sum or mean readout's gradient is a readout of the gradient}}
  %g = saga.readout_grad sum %x, %x, %x : !saga.vertex<4xf32>
  saga.return %g : !saga.vertex<4xf32>
}

// -----

// Tests that a readout's gradient has one type throughout.
saga.model @readout_grad_types(%x: !saga.vertex<4xf32>, %y: !saga.vertex<2xf32>) -> !saga.vertex<4xf32> {
  // expected-error @+1 {{all of {input, readout, grad, gradInput} have same type}}
  %g = "saga.readout_grad"(%x, %y, %x) {kind = 2 : i32} : (!saga.vertex<4xf32>, !saga.vertex<2xf32>, !saga.vertex<4xf32>) -> !saga.vertex<4xf32>
  saga.return %g : !saga.vertex<4xf32>
}

// -----

// Tests that a pair loss scores vectors of floats, one per vertex.
saga.model @pair_bce_matrix(%h: !saga.vertex<2x4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'saga.pair_bce' op scores pairs of float vectors (one per vertex), got '!saga.vertex<2x4xf32>'}}
  %l = saga.pair_bce %h : !saga.vertex<2x4xf32> -> tensor<f32>
  saga.return %l : tensor<f32>
}

// -----

// Tests that a pair loss's gradient has the rows' type.
saga.model @pair_bce_grad_types(%h: !saga.vertex<4xf32>) -> !saga.vertex<8xf32> {
  %g = saga.pair_bce %h : !saga.vertex<4xf32> -> tensor<f32>
  // expected-error @+1 {{all of {input, gradInput} have same type}}
  %d = "saga.pair_bce_grad"(%h, %g) : (!saga.vertex<4xf32>, tensor<f32>) -> !saga.vertex<8xf32>
  saga.return %d : !saga.vertex<8xf32>
}

// -----

// Tests that batch norm standardises vectors of floats.
saga.model @batch_norm_matrix(%h: !saga.vertex<2x4xf32>) -> !saga.vertex<2x4xf32> {
  // expected-error @+1 {{'saga.batch_norm' op standardises float vectors (one per vertex), got '!saga.vertex<2x4xf32>'}}
  %y = saga.batch_norm %h : !saga.vertex<2x4xf32>
  saga.return %y : !saga.vertex<2x4xf32>
}
