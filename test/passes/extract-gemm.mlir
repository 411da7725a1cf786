// RUN: saga-opt %s --saga-extract-gemm --split-input-file | FileCheck %s

// Tests that a matmul of a body input by a parameter becomes a linear on the
// vertex value, and that the emptied body is removed.
// CHECK-LABEL: func.func @direct
// CHECK-SAME:    (%[[H:.*]]: !saga.vertex<16xf32>, %[[W:.*]]: tensor<16x7xf32>)
// CHECK-NEXT:    %[[Y:.*]] = saga.linear %[[H]], %[[W]] : !saga.vertex<16xf32>, tensor<16x7xf32> -> !saga.vertex<7xf32>
// CHECK-NEXT:    return %[[Y]]
func.func @direct(%h: !saga.vertex<16xf32>, %W: tensor<16x7xf32>) -> !saga.vertex<7xf32> {
  %o = saga.apply_vertex(%h) : (!saga.vertex<16xf32>) -> !saga.vertex<7xf32> {
  ^bb0(%x: tensor<16xf32>):
    %y = saga.matmul %x, %W : tensor<16xf32>, tensor<16x7xf32> -> tensor<7xf32>
    saga.yield %y : tensor<7xf32>
  }
  return %o : !saga.vertex<7xf32>
}

// -----

// Tests that the ops a matmul's left side depends on move into a preceding
// apply_vertex, and the rest of the body reads the GEMM's result (GCN's
// `(a * rsqrt(deg)) @ W + b`).
// CHECK-LABEL: func.func @gcn_epilogue
// CHECK:         %[[PRE:.*]] = saga.apply_vertex(%{{.*}}, %{{.*}}) : (!saga.vertex<16xf32>, !saga.vertex<f32>) -> !saga.vertex<16xf32>
// CHECK:           saga.rsqrt
// CHECK:           saga.mul
// CHECK-NOT:       saga.matmul
// CHECK:         %[[Y:.*]] = saga.linear %[[PRE]], %{{.*}} : !saga.vertex<16xf32>, tensor<16x7xf32> -> !saga.vertex<7xf32>
// CHECK:         saga.apply_vertex(%[[Y]]) : (!saga.vertex<7xf32>) -> !saga.vertex<7xf32>
// CHECK-NEXT:    ^bb0(%[[R:.*]]: tensor<7xf32>):
// CHECK-NEXT:      %[[B:.*]] = saga.add %[[R]], %{{.*}}
// CHECK-NEXT:      saga.yield %[[B]]
func.func @gcn_epilogue(%a: !saga.vertex<16xf32>, %deg: !saga.vertex<f32>, %W: tensor<16x7xf32>, %b: tensor<7xf32>) -> !saga.vertex<7xf32> {
  %o = saga.apply_vertex(%a, %deg) : (!saga.vertex<16xf32>, !saga.vertex<f32>) -> !saga.vertex<7xf32> {
  ^bb0(%x: tensor<16xf32>, %d: tensor<f32>):
    %r = saga.rsqrt %d : tensor<f32>
    %s = saga.mul %x, %r : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
    %m = saga.matmul %s, %W : tensor<16xf32>, tensor<16x7xf32> -> tensor<7xf32>
    %y = saga.add %m, %b : tensor<7xf32>, tensor<7xf32> -> tensor<7xf32>
    saga.yield %y : tensor<7xf32>
  }
  return %o : !saga.vertex<7xf32>
}

// -----

// Tests that chained matmuls (GIN's MLP) both become GEMMs, including the
// one that only appears once the first is extracted.
// CHECK-LABEL: func.func @mlp
// CHECK-COUNT-2: saga.linear
// CHECK-NOT:     saga.matmul
func.func @mlp(%h: !saga.vertex<8xf32>, %W1: tensor<8x4xf32>, %W2: tensor<4x4xf32>) -> !saga.vertex<4xf32> {
  %o = saga.apply_vertex(%h) : (!saga.vertex<8xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%x: tensor<8xf32>):
    %m = saga.matmul %x, %W1 : tensor<8xf32>, tensor<8x4xf32> -> tensor<4xf32>
    %r = saga.relu %m : tensor<4xf32>
    %n = saga.matmul %r, %W2 : tensor<4xf32>, tensor<4x4xf32> -> tensor<4xf32>
    saga.yield %n : tensor<4xf32>
  }
  return %o : !saga.vertex<4xf32>
}

// -----

// Tests that matmuls of a weight computed inside the body, or of a
// multi-row left side, stay per-row loops.
// CHECK-LABEL: func.func @not_batchable
// CHECK-NOT:     saga.linear
// CHECK:         saga.matmul
func.func @not_batchable(%h: !saga.vertex<2x8xf32>, %W: tensor<8x4xf32>) -> !saga.vertex<2x4xf32> {
  %o = saga.apply_vertex(%h) : (!saga.vertex<2x8xf32>) -> !saga.vertex<2x4xf32> {
  ^bb0(%x: tensor<2x8xf32>):
    %m = saga.matmul %x, %W : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
    saga.yield %m : tensor<2x4xf32>
  }
  return %o : !saga.vertex<2x4xf32>
}
