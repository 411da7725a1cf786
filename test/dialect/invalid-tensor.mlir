// RUN: saga-opt %s -split-input-file -verify-diagnostics

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
