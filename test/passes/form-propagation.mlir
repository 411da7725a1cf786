// RUN: saga-opt %s --saga-form-propagation --split-input-file | FileCheck %s

// Tests that scatter -> apply_edge -> gather becomes one propagate whose
// operands are the vertex values read at each end and the edge inputs, in
// src, dst, edge order, with the edge body cloned.
// CHECK-LABEL: func.func @gated
// CHECK-SAME:    (%[[H:.*]]: !saga.vertex<8xf32>, %[[W:.*]]: !saga.edge<f32>)
// CHECK-NOT:     saga.scatter
// CHECK-NOT:     saga.apply_edge
// CHECK:         %[[P:.*]] = saga.propagate sum src(%[[H]]) dst(%[[H]]) edge(%[[W]])
// CHECK-NEXT:    ^bb0(%[[S:.*]]: tensor<8xf32>, %[[D:.*]]: tensor<8xf32>, %[[E:.*]]: tensor<f32>):
// CHECK-NEXT:      %[[G:.*]] = saga.add %[[S]], %[[D]]
// CHECK-NEXT:      %[[M:.*]] = saga.mul %[[G]], %[[E]]
// CHECK-NEXT:      saga.yield %[[M]] : tensor<8xf32>
// CHECK:         return %[[P]]
func.func @gated(%h: !saga.vertex<8xf32>, %w: !saga.edge<f32>) -> !saga.vertex<8xf32> {
  %s = saga.scatter src %h : !saga.vertex<8xf32> -> !saga.edge<8xf32>
  %d = saga.scatter dst %h : !saga.vertex<8xf32> -> !saga.edge<8xf32>
  %m = saga.apply_edge(%d, %w, %s) : (!saga.edge<8xf32>, !saga.edge<f32>, !saga.edge<8xf32>) -> !saga.edge<8xf32> {
  ^bb0(%dd: tensor<8xf32>, %ww: tensor<f32>, %ss: tensor<8xf32>):
    %g = saga.add %ss, %dd : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
    %y = saga.mul %g, %ww : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
    saga.yield %y : tensor<8xf32>
  }
  %a = saga.gather sum %m : !saga.edge<8xf32> -> !saga.vertex<8xf32>
  return %a : !saga.vertex<8xf32>
}

// -----

// Tests that a gather straight from a scatter (the default apply_edge)
// becomes a propagate whose body forwards the source row.
// CHECK-LABEL: func.func @mean
// CHECK:         saga.propagate mean src(%{{.*}}) dst() edge()
// CHECK-NEXT:    ^bb0(%[[X:.*]]: tensor<4xf32>):
// CHECK-NEXT:      saga.yield %[[X]] : tensor<4xf32>
func.func @mean(%h: !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  %s = saga.scatter src %h : !saga.vertex<4xf32> -> !saga.edge<4xf32>
  %a = saga.gather mean %s : !saga.edge<4xf32> -> !saga.vertex<4xf32>
  return %a : !saga.vertex<4xf32>
}

// -----

// Tests that softmax_sum keeps both the message and the score, and drops
// apply_edge results nobody gathers.
// CHECK-LABEL: func.func @attention
// CHECK:         saga.propagate softmax_sum src(%{{.*}}) dst(%{{.*}}) edge()
// CHECK:           %[[SC:.*]] = saga.leaky_relu
// CHECK:           saga.yield %{{.*}}, %[[SC]] : tensor<2x4xf32>, tensor<2xf32>
func.func @attention(%z: !saga.vertex<2x4xf32>, %s: !saga.vertex<2xf32>) -> !saga.vertex<2x4xf32> {
  %zs = saga.scatter src %z : !saga.vertex<2x4xf32> -> !saga.edge<2x4xf32>
  %ss = saga.scatter src %s : !saga.vertex<2xf32> -> !saga.edge<2xf32>
  %sd = saga.scatter dst %s : !saga.vertex<2xf32> -> !saga.edge<2xf32>
  %r:2 = saga.apply_edge(%zs, %ss, %sd) : (!saga.edge<2x4xf32>, !saga.edge<2xf32>, !saga.edge<2xf32>) -> (!saga.edge<2x4xf32>, !saga.edge<2xf32>) {
  ^bb0(%a: tensor<2x4xf32>, %b: tensor<2xf32>, %c: tensor<2xf32>):
    %t = saga.add %b, %c : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    %l = saga.leaky_relu %t slope 2.000000e-01 : tensor<2xf32>
    saga.yield %a, %l : tensor<2x4xf32>, tensor<2xf32>
  }
  %g = saga.gather softmax_sum %r#0 score %r#1 : !saga.edge<2x4xf32>, !saga.edge<2xf32> -> !saga.vertex<2x4xf32>
  return %g : !saga.vertex<2x4xf32>
}

// -----

// Tests that attention dropout becomes a per-head mask on the message: a
// dropout of ones, one per head, broadcast over each head's features.
// CHECK-LABEL: func.func @attention_dropout
// CHECK:         saga.propagate softmax_sum
// CHECK:           %[[SC:.*]] = saga.leaky_relu
// CHECK:           %[[ONES:.*]] = arith.constant dense<1.000000e+00> : tensor<2xf32>
// CHECK:           %[[KEEP:.*]] = saga.dropout %[[ONES]] rate 5.000000e-01 : tensor<2xf32>
// CHECK:           %[[KEEP2:.*]] = saga.reshape %[[KEEP]] : tensor<2xf32> -> tensor<2x1xf32>
// CHECK:           %[[MSG:.*]] = saga.mul %{{.*}}, %[[KEEP2]] : tensor<2x4xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
// CHECK:           saga.yield %[[MSG]], %[[SC]] : tensor<2x4xf32>, tensor<2xf32>
func.func @attention_dropout(%z: !saga.vertex<2x4xf32>, %s: !saga.vertex<2xf32>) -> !saga.vertex<2x4xf32> {
  %zs = saga.scatter src %z : !saga.vertex<2x4xf32> -> !saga.edge<2x4xf32>
  %ss = saga.scatter src %s : !saga.vertex<2xf32> -> !saga.edge<2xf32>
  %r:2 = saga.apply_edge(%zs, %ss) : (!saga.edge<2x4xf32>, !saga.edge<2xf32>) -> (!saga.edge<2x4xf32>, !saga.edge<2xf32>) {
  ^bb0(%a: tensor<2x4xf32>, %b: tensor<2xf32>):
    %l = saga.leaky_relu %b slope 2.000000e-01 : tensor<2xf32>
    saga.yield %a, %l : tensor<2x4xf32>, tensor<2xf32>
  }
  %g = saga.gather softmax_sum %r#0 score %r#1 {dropout = 5.000000e-01 : f64} : !saga.edge<2x4xf32>, !saga.edge<2xf32> -> !saga.vertex<2x4xf32>
  return %g : !saga.vertex<2x4xf32>
}
