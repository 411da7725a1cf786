// RUN: saga-opt %s --canonicalize --split-input-file | FileCheck %s

// Tests that an apply_vertex result yielding its input unchanged becomes that
// input (GAT's scatter function returns z = h @ W beside its attention
// terms: without this the kernel copies z into a second [V, heads, out]
// buffer), that unread inputs are dropped (they would keep a tensor alive),
// and that the rest of the body stays.
// CHECK-LABEL: func.func @pass_through
// CHECK-SAME:    (%[[Z:[a-z0-9]+]]: !saga.vertex<2x4xf32>, %[[H:[a-z0-9]+]]: !saga.vertex<3xf32>, %[[A:[a-z0-9]+]]: tensor<2x4xf32>)
// CHECK:         %[[S:.*]] = saga.apply_vertex(%[[Z]]) : (!saga.vertex<2x4xf32>) -> !saga.vertex<2x4xf32>
// CHECK-NEXT:    ^bb0(%[[X:.*]]: tensor<2x4xf32>):
// CHECK-NEXT:      %[[M:.*]] = saga.mul %[[X]], %[[A]]
// CHECK-NEXT:      saga.yield %[[M]] : tensor<2x4xf32>
// CHECK:         return %[[Z]], %[[S]]
func.func @pass_through(%z: !saga.vertex<2x4xf32>, %h: !saga.vertex<3xf32>, %a: tensor<2x4xf32>) -> (!saga.vertex<2x4xf32>, !saga.vertex<2x4xf32>) {
  %r:2 = saga.apply_vertex(%z, %h) : (!saga.vertex<2x4xf32>, !saga.vertex<3xf32>) -> (!saga.vertex<2x4xf32>, !saga.vertex<2x4xf32>) {
  ^bb0(%x: tensor<2x4xf32>, %y: tensor<3xf32>):
    %m = saga.mul %x, %a : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
    saga.yield %x, %m : tensor<2x4xf32>, tensor<2x4xf32>
  }
  return %r#0, %r#1 : !saga.vertex<2x4xf32>, !saga.vertex<2x4xf32>
}

// -----

// Tests that an apply_vertex whose every result passes an input through
// disappears, and that one already minimal is left as it is.
// CHECK-LABEL: func.func @all_pass_through
// CHECK-NOT:     saga.apply_vertex
// CHECK:         return %arg0
func.func @all_pass_through(%z: !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  %r = saga.apply_vertex(%z) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    saga.yield %x : tensor<4xf32>
  }
  return %r : !saga.vertex<4xf32>
}

// CHECK-LABEL: func.func @minimal
// CHECK:         saga.apply_vertex(%arg0) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32>
// CHECK:           saga.relu
func.func @minimal(%z: !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  %r = saga.apply_vertex(%z) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %y = saga.relu %x : tensor<4xf32>
    saga.yield %y : tensor<4xf32>
  }
  return %r : !saga.vertex<4xf32>
}

// -----

// Tests that apply_edge is left as written, pass-through included: a
// gather's message and score must come from one apply_edge.
// CHECK-LABEL: func.func @edge_stays
// CHECK:         saga.apply_edge(%{{.*}}, %{{.*}}) : (!saga.edge<2x4xf32>, !saga.edge<2xf32>) -> (!saga.edge<2x4xf32>, !saga.edge<2xf32>)
// CHECK:           saga.yield %{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<2xf32>
func.func @edge_stays(%z: !saga.edge<2x4xf32>, %s: !saga.edge<2xf32>) -> (!saga.edge<2x4xf32>, !saga.edge<2xf32>) {
  %r:2 = saga.apply_edge(%z, %s) : (!saga.edge<2x4xf32>, !saga.edge<2xf32>) -> (!saga.edge<2x4xf32>, !saga.edge<2xf32>) {
  ^bb0(%a: tensor<2x4xf32>, %b: tensor<2xf32>):
    %l = saga.leaky_relu %b slope 2.000000e-01 : tensor<2xf32>
    saga.yield %a, %l : tensor<2x4xf32>, tensor<2xf32>
  }
  return %r#0, %r#1 : !saga.edge<2x4xf32>, !saga.edge<2xf32>
}

// -----

// Tests that a dropout nobody reads is dead (it has no memory effects: its
// mask is a hash), and so is the input only it read. Autodiff's recomputed
// forward bodies leave such dropouts, which kept the forward value alive.
// CHECK-LABEL: func.func @dead_dropout
// CHECK:         saga.apply_vertex(%arg1) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32>
// CHECK-NOT:       saga.dropout
// CHECK:           saga.exp
func.func @dead_dropout(%y: !saga.vertex<4xf32>, %x: !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  %r = saga.apply_vertex(%y, %x) : (!saga.vertex<4xf32>, !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %d = saga.dropout %a rate 5.000000e-01 {key = 2 : i64} : tensor<4xf32>
    %e = saga.exp %b : tensor<4xf32>
    saga.yield %e : tensor<4xf32>
  }
  return %r : !saga.vertex<4xf32>
}

// -----

// Tests that a propagation drops the operands its body never reads (as
// autodiff's recomputed softmax maximum does with the layer's projection),
// in each of the src, dst and edge groups, keeping the others in order.
// CHECK-LABEL: func.func @unread_propagate_operands
// CHECK-SAME:    (%[[S:[a-z0-9]+]]: !saga.vertex<2xf32>, %[[Z:[a-z0-9]+]]: !saga.vertex<2x4xf32>, %[[D:[a-z0-9]+]]: !saga.vertex<2xf32>, %[[W:[a-z0-9]+]]: !saga.edge<f32>)
// CHECK:         saga.propagate max src(%[[S]]) dst(%[[D]]) edge() {reversed}
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<2xf32>, %[[B:.*]]: tensor<2xf32>):
// CHECK-NEXT:      saga.add %[[A]], %[[B]]
func.func @unread_propagate_operands(%s: !saga.vertex<2xf32>, %z: !saga.vertex<2x4xf32>, %d: !saga.vertex<2xf32>, %w: !saga.edge<f32>) -> !saga.vertex<2xf32> {
  %r = saga.propagate max src(%s, %z) dst(%d) edge(%w) {reversed} : (!saga.vertex<2xf32>, !saga.vertex<2x4xf32>, !saga.vertex<2xf32>, !saga.edge<f32>) -> !saga.vertex<2xf32> {
  ^bb0(%a: tensor<2xf32>, %y: tensor<2x4xf32>, %b: tensor<2xf32>, %e: tensor<f32>):
    %q = saga.add %a, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    saga.yield %q : tensor<2xf32>
  }
  return %r : !saga.vertex<2xf32>
}
