// RUN: saga-opt %s --saga-reorder-linear --split-input-file | FileCheck %s

// Tests that a narrowing linear moves in front of per-vertex scaling and a
// sum propagation (GCN's normalised aggregation), which then run at the
// narrow width.
// CHECK-LABEL: func.func @gcn
// CHECK-SAME:    (%[[X:[a-z0-9]+]]: !saga.vertex<64xf32>, %[[D:[a-z0-9]+]]: !saga.vertex<f32>, %[[W:[a-z0-9]+]]: tensor<64x8xf32>)
// CHECK-NEXT:    %[[L:.*]] = saga.linear %[[X]], %[[W]] : !saga.vertex<64xf32>, tensor<64x8xf32> -> !saga.vertex<8xf32>
// CHECK-NEXT:    %[[S:.*]] = saga.apply_vertex(%[[L]], %[[D]]) : (!saga.vertex<8xf32>, !saga.vertex<f32>) -> !saga.vertex<8xf32>
// CHECK:           saga.mul %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
// CHECK:         %[[P:.*]] = saga.propagate sum src(%[[S]]) dst() edge() : (!saga.vertex<8xf32>) -> !saga.vertex<8xf32>
// CHECK:         %[[T:.*]] = saga.apply_vertex(%[[D]], %[[P]]) : (!saga.vertex<f32>, !saga.vertex<8xf32>) -> !saga.vertex<8xf32>
// CHECK-NOT:     saga.linear
// CHECK:         return %[[T]]
func.func @gcn(%x: !saga.vertex<64xf32>, %deg: !saga.vertex<f32>, %W: tensor<64x8xf32>) -> !saga.vertex<8xf32> {
  %s = saga.apply_vertex(%x, %deg) : (!saga.vertex<64xf32>, !saga.vertex<f32>) -> !saga.vertex<64xf32> {
  ^bb0(%a: tensor<64xf32>, %d: tensor<f32>):
    %r = saga.rsqrt %d : tensor<f32>
    %m = saga.mul %a, %r : tensor<64xf32>, tensor<f32> -> tensor<64xf32>
    saga.yield %m : tensor<64xf32>
  }
  %p = saga.propagate sum src(%s) dst() edge() : (!saga.vertex<64xf32>) -> !saga.vertex<64xf32> {
  ^bb0(%a: tensor<64xf32>):
    saga.yield %a : tensor<64xf32>
  }
  %t = saga.apply_vertex(%deg, %p) : (!saga.vertex<f32>, !saga.vertex<64xf32>) -> !saga.vertex<64xf32> {
  ^bb0(%d: tensor<f32>, %a: tensor<64xf32>):
    %r = saga.rsqrt %d : tensor<f32>
    %m = saga.mul %a, %r : tensor<64xf32>, tensor<f32> -> tensor<64xf32>
    saga.yield %m : tensor<64xf32>
  }
  %y = saga.linear %t, %W : !saga.vertex<64xf32>, tensor<64x8xf32> -> !saga.vertex<8xf32>
  return %y : !saga.vertex<8xf32>
}

// -----

// Tests that nonlinear steps (relu) and max gathers stop the motion, and
// that a widening linear is left alone.
// CHECK-LABEL: func.func @blocked
// CHECK:         saga.propagate max
// CHECK:         saga.linear %{{.*}} : !saga.vertex<4xf32>, tensor<4x8xf32> -> !saga.vertex<8xf32>
// CHECK:         saga.relu
// CHECK:         saga.linear %{{.*}} : !saga.vertex<8xf32>, tensor<8x2xf32> -> !saga.vertex<2xf32>
func.func @blocked(%x: !saga.vertex<4xf32>, %W1: tensor<4x8xf32>, %W2: tensor<8x2xf32>) -> !saga.vertex<2xf32> {
  %p = saga.propagate max src(%x) dst() edge() : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    saga.yield %a : tensor<4xf32>
  }
  %y = saga.linear %p, %W1 : !saga.vertex<4xf32>, tensor<4x8xf32> -> !saga.vertex<8xf32>
  %r = saga.apply_vertex(%y) : (!saga.vertex<8xf32>) -> !saga.vertex<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    %q = saga.relu %a : tensor<8xf32>
    saga.yield %q : tensor<8xf32>
  }
  %z = saga.linear %r, %W2 : !saga.vertex<8xf32>, tensor<8x2xf32> -> !saga.vertex<2xf32>
  return %z : !saga.vertex<2xf32>
}
