// RUN: saga-opt %s --saga-materialize-edges --split-input-file | FileCheck %s

// Tests that a propagate becomes an edge_map with its operands (src, dst,
// edge, in that order) and its body, yielding the message as an edge
// tensor, then a propagate of the same kind over that tensor whose body
// forwards it. Parameters the body captures stay captured.
// CHECK-LABEL: func.func @gated
// CHECK-SAME:    (%[[H:.*]]: !saga.vertex<8xf32>, %[[W:.*]]: !saga.edge<f32>, %[[B:.*]]: tensor<8xf32>)
// CHECK:         %[[M:.*]] = saga.edge_map src(%[[H]]) dst(%[[H]]) edge(%[[W]]) : (!saga.vertex<8xf32>, !saga.vertex<8xf32>, !saga.edge<f32>) -> !saga.edge<8xf32> {
// CHECK-NEXT:    ^bb0(%[[S:.*]]: tensor<8xf32>, %[[D:.*]]: tensor<8xf32>, %[[E:.*]]: tensor<f32>):
// CHECK-NEXT:      %[[G:.*]] = saga.add %[[S]], %[[D]]
// CHECK-NEXT:      %[[GB:.*]] = saga.add %[[G]], %[[B]]
// CHECK-NEXT:      %[[X:.*]] = saga.mul %[[GB]], %[[E]]
// CHECK-NEXT:      saga.yield %[[X]] : tensor<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[P:.*]] = saga.propagate mean src() dst() edge(%[[M]]) : (!saga.edge<8xf32>) -> !saga.vertex<8xf32> {
// CHECK-NEXT:    ^bb0(%[[Y:.*]]: tensor<8xf32>):
// CHECK-NEXT:      saga.yield %[[Y]] : tensor<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[P]]
func.func @gated(%h: !saga.vertex<8xf32>, %w: !saga.edge<f32>, %b: tensor<8xf32>) -> !saga.vertex<8xf32> {
  %p = saga.propagate mean src(%h) dst(%h) edge(%w) : (!saga.vertex<8xf32>, !saga.vertex<8xf32>, !saga.edge<f32>) -> !saga.vertex<8xf32> {
  ^bb0(%s: tensor<8xf32>, %d: tensor<8xf32>, %e: tensor<f32>):
    %g = saga.add %s, %d : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
    %gb = saga.add %g, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
    %x = saga.mul %gb, %e : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
    saga.yield %x : tensor<8xf32>
  }
  return %p : !saga.vertex<8xf32>
}

// -----

// Tests that softmax_sum materialises the message and the score (two
// results), keeps the dropout and its key in the edge_map, and reduces both
// with softmax_sum; and that a source row forwarded as the message is
// copied into an edge tensor too (PyG's x[edge_index[0]]).
// CHECK-LABEL: func.func @attention
// CHECK:         %[[E:.*]]:2 = saga.edge_map src(%{{.*}}, %{{.*}}) dst(%{{.*}}) edge() : (!saga.vertex<2x4xf32>, !saga.vertex<2xf32>, !saga.vertex<2xf32>) -> (!saga.edge<2x4xf32>, !saga.edge<2xf32>) {
// CHECK:           saga.leaky_relu
// CHECK:           saga.dropout %{{.*}} rate 5.000000e-01 {key = 3 : i64}
// CHECK:           saga.yield %{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<2xf32>
// CHECK:         %[[P:.*]] = saga.propagate softmax_sum src() dst() edge(%[[E]]#0, %[[E]]#1) : (!saga.edge<2x4xf32>, !saga.edge<2xf32>) -> !saga.vertex<2x4xf32> {
// CHECK-NEXT:    ^bb0(%[[M:.*]]: tensor<2x4xf32>, %[[S:.*]]: tensor<2xf32>):
// CHECK-NEXT:      saga.yield %[[M]], %[[S]] : tensor<2x4xf32>, tensor<2xf32>
func.func @attention(%z: !saga.vertex<2x4xf32>, %a: !saga.vertex<2xf32>, %b: !saga.vertex<2xf32>) -> !saga.vertex<2x4xf32> {
  %p = saga.propagate softmax_sum src(%z, %a) dst(%b) edge() : (!saga.vertex<2x4xf32>, !saga.vertex<2xf32>, !saga.vertex<2xf32>) -> !saga.vertex<2x4xf32> {
  ^bb0(%zs: tensor<2x4xf32>, %as: tensor<2xf32>, %bd: tensor<2xf32>):
    %t = saga.add %as, %bd : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    %s = saga.leaky_relu %t slope 2.000000e-01 : tensor<2xf32>
    %one = arith.constant dense<1.0> : tensor<2xf32>
    %k = saga.dropout %one rate 5.000000e-01 {key = 3 : i64} : tensor<2xf32>
    %k2 = saga.reshape %k : tensor<2xf32> -> tensor<2x1xf32>
    %m = saga.mul %zs, %k2 : tensor<2x4xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
    saga.yield %m, %s : tensor<2x4xf32>, tensor<2xf32>
  }
  return %p : !saga.vertex<2x4xf32>
}

// -----

// Tests that a reversed propagate (a backward pass) and max/min keep their
// kind and direction, and that a source row yielded as it is gets its own
// edge tensor.
// CHECK-LABEL: func.func @backward
// CHECK:         %[[E:.*]] = saga.edge_map src() dst(%{{.*}}) edge(%{{.*}}) : (!saga.vertex<4xf32>, !saga.edge<f32>) -> !saga.edge<4xf32>
// CHECK:         saga.propagate sum src() dst() edge(%[[E]]) {reversed}
// CHECK:         %[[F:.*]] = saga.edge_map src(%{{.*}}) dst() edge() : (!saga.vertex<4xf32>) -> !saga.edge<4xf32> {
// CHECK-NEXT:    ^bb0(%[[X:.*]]: tensor<4xf32>):
// CHECK-NEXT:      saga.yield %[[X]] : tensor<4xf32>
// CHECK:         saga.propagate max src() dst() edge(%[[F]]) :
func.func @backward(%g: !saga.vertex<4xf32>, %w: !saga.edge<f32>, %h: !saga.vertex<4xf32>) -> (!saga.vertex<4xf32>, !saga.vertex<4xf32>) {
  %p = saga.propagate sum src() dst(%g) edge(%w) {reversed} : (!saga.vertex<4xf32>, !saga.edge<f32>) -> !saga.vertex<4xf32> {
  ^bb0(%gd: tensor<4xf32>, %e: tensor<f32>):
    %x = saga.mul %gd, %e : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    saga.yield %x : tensor<4xf32>
  }
  %q = saga.propagate max src(%h) dst() edge() : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    saga.yield %x : tensor<4xf32>
  }
  return %p, %q : !saga.vertex<4xf32>, !saga.vertex<4xf32>
}

// -----

// Tests that a propagate that only forwards its edge operands (already
// unfused, or a gather of an edge input) is left alone, and that a yield
// that is an edge operand is not copied when another is computed (nor
// passed to the edge_map, whose body does not read it).
// CHECK-LABEL: func.func @forwarding
// CHECK-NOT:     saga.edge_map
// CHECK:         saga.propagate sum src() dst() edge(%{{.*}}) :
// CHECK-LABEL: func.func @mixed
// CHECK-SAME:    (%[[H:.*]]: !saga.vertex<2xf32>, %[[W:.*]]: !saga.edge<2x3xf32>)
// CHECK:         %[[S:.*]] = saga.edge_map src(%[[H]]) dst(%[[H]]) edge() : (!saga.vertex<2xf32>, !saga.vertex<2xf32>) -> !saga.edge<2xf32>
// CHECK:         saga.propagate softmax_sum src() dst() edge(%[[W]], %[[S]]) : (!saga.edge<2x3xf32>, !saga.edge<2xf32>) -> !saga.vertex<2x3xf32>
func.func @forwarding(%w: !saga.edge<3xf32>) -> !saga.vertex<3xf32> {
  %p = saga.propagate sum src() dst() edge(%w) : (!saga.edge<3xf32>) -> !saga.vertex<3xf32> {
  ^bb0(%e: tensor<3xf32>):
    saga.yield %e : tensor<3xf32>
  }
  return %p : !saga.vertex<3xf32>
}
func.func @mixed(%h: !saga.vertex<2xf32>, %w: !saga.edge<2x3xf32>) -> !saga.vertex<2x3xf32> {
  %p = saga.propagate softmax_sum src(%h) dst(%h) edge(%w) : (!saga.vertex<2xf32>, !saga.vertex<2xf32>, !saga.edge<2x3xf32>) -> !saga.vertex<2x3xf32> {
  ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>, %e: tensor<2x3xf32>):
    %s = saga.sub %a, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    saga.yield %e, %s : tensor<2x3xf32>, tensor<2xf32>
  }
  return %p : !saga.vertex<2x3xf32>
}
