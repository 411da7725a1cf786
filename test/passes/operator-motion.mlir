// RUN: saga-opt %s --saga-operator-motion --split-input-file | FileCheck %s

// Tests that G-GCN's edge matmuls, which read only one end of the edge, move
// to per-vertex computations (one apply_vertex per side) whose results feed
// the propagation, leaving only the gating that needs both ends on edges.
// CHECK-LABEL: func.func @gated
// CHECK-SAME:    (%[[H:[a-z0-9]+]]: !saga.vertex<8xf32>, %[[WH:[a-z0-9]+]]: tensor<8x8xf32>, %[[WC:[a-z0-9]+]]: tensor<8x8xf32>, %[[WS:[a-z0-9]+]]: tensor<8x8xf32>)
// CHECK:         %[[S:.*]]:2 = saga.apply_vertex(%[[H]]) : (!saga.vertex<8xf32>) -> (!saga.vertex<8xf32>, !saga.vertex<8xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: tensor<8xf32>):
// CHECK-NEXT:      %[[A:.*]] = saga.matmul %[[X]], %[[WH]]
// CHECK-NEXT:      %[[C:.*]] = saga.matmul %[[X]], %[[WS]]
// CHECK-NEXT:      saga.yield %[[A]], %[[C]]
// CHECK:         %[[D:.*]] = saga.apply_vertex(%[[H]]) : (!saga.vertex<8xf32>) -> !saga.vertex<8xf32>
// CHECK:           saga.matmul %{{.*}}, %[[WC]]
// CHECK:         saga.propagate sum src(%[[S]]#0, %[[S]]#1) dst(%[[D]]) edge()
// CHECK-NEXT:    ^bb0(%[[SA:.*]]: tensor<8xf32>, %[[SC:.*]]: tensor<8xf32>, %[[DB:.*]]: tensor<8xf32>):
// CHECK-NOT:       saga.matmul
// CHECK:           saga.add %[[SA]], %[[DB]]
// CHECK:           saga.sigmoid
// CHECK:           saga.mul %{{.*}}, %[[SC]]
func.func @gated(%h: !saga.vertex<8xf32>, %WH: tensor<8x8xf32>, %WC: tensor<8x8xf32>, %WS: tensor<8x8xf32>) -> !saga.vertex<8xf32> {
  %a = saga.propagate sum src(%h) dst(%h) edge() : (!saga.vertex<8xf32>, !saga.vertex<8xf32>) -> !saga.vertex<8xf32> {
  ^bb0(%s: tensor<8xf32>, %d: tensor<8xf32>):
    %p = saga.matmul %s, %WH : tensor<8xf32>, tensor<8x8xf32> -> tensor<8xf32>
    %q = saga.matmul %d, %WC : tensor<8xf32>, tensor<8x8xf32> -> tensor<8xf32>
    %g = saga.add %p, %q : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
    %eta = saga.sigmoid %g : tensor<8xf32>
    %m = saga.matmul %s, %WS : tensor<8xf32>, tensor<8x8xf32> -> tensor<8xf32>
    %y = saga.mul %eta, %m : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
    saga.yield %y : tensor<8xf32>
  }
  return %a : !saga.vertex<8xf32>
}

// -----

// Tests that work needing both ends or an edge input stays on the edges, and
// that a body with nothing to move is left unchanged.
// CHECK-LABEL: func.func @stays
// CHECK-NOT:     saga.apply_vertex
// CHECK:         saga.propagate sum src(%{{.*}}) dst(%{{.*}}) edge(%{{.*}})
// CHECK:           saga.add
// CHECK:           saga.mul
func.func @stays(%h: !saga.vertex<4xf32>, %w: !saga.edge<f32>) -> !saga.vertex<4xf32> {
  %a = saga.propagate sum src(%h) dst(%h) edge(%w) : (!saga.vertex<4xf32>, !saga.vertex<4xf32>, !saga.edge<f32>) -> !saga.vertex<4xf32> {
  ^bb0(%s: tensor<4xf32>, %d: tensor<4xf32>, %e: tensor<f32>):
    %g = saga.add %s, %d : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %y = saga.mul %g, %e : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    saga.yield %y : tensor<4xf32>
  }
  return %a : !saga.vertex<4xf32>
}

// -----

// Tests that a dropout stays on the edges: its mask is keyed by the edge it
// runs on, so neither it nor what it feeds moves to a vertex (GAT's
// attention dropout, a per-head mask on the source's message), while the
// score, which reads only the source, still moves.
// CHECK-LABEL: func.func @edge_dropout
// CHECK:         %[[S:.*]] = saga.apply_vertex(%{{.*}}, %{{.*}}) : (!saga.vertex<2x4xf32>, !saga.vertex<2xf32>) -> !saga.vertex<2xf32>
// CHECK:           saga.leaky_relu
// CHECK-NOT:       saga.dropout
// CHECK:         saga.propagate softmax_sum src(%{{.*}}, %[[S]]) dst() edge()
// CHECK-NEXT:    ^bb0(%[[Z:.*]]: tensor<2x4xf32>, %[[SC:.*]]: tensor<2xf32>):
// CHECK:           %[[KEEP:.*]] = saga.dropout
// CHECK:           %[[KEEP2:.*]] = saga.reshape %[[KEEP]]
// CHECK:           %[[MSG:.*]] = saga.mul %[[Z]], %[[KEEP2]]
// CHECK:           saga.yield %[[MSG]], %[[SC]]
func.func @edge_dropout(%z: !saga.vertex<2x4xf32>, %s: !saga.vertex<2xf32>) -> !saga.vertex<2x4xf32> {
  %a = saga.propagate softmax_sum src(%z, %s) dst() edge() : (!saga.vertex<2x4xf32>, !saga.vertex<2xf32>) -> !saga.vertex<2x4xf32> {
  ^bb0(%zz: tensor<2x4xf32>, %ss: tensor<2xf32>):
    %l = saga.leaky_relu %ss slope 2.000000e-01 : tensor<2xf32>
    %ones = arith.constant dense<1.000000e+00> : tensor<2xf32>
    %keep = saga.dropout %ones rate 5.000000e-01 : tensor<2xf32>
    %keep2 = saga.reshape %keep : tensor<2xf32> -> tensor<2x1xf32>
    %m = saga.mul %zz, %keep2 : tensor<2x4xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
    saga.yield %m, %l : tensor<2x4xf32>, tensor<2xf32>
  }
  return %a : !saga.vertex<2x4xf32>
}
