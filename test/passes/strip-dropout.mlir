// RUN: saga-opt %s --saga-strip-dropout | FileCheck %s

// Tests that inference replaces dropout by its input.
// CHECK-LABEL: func.func @inference
// CHECK-NOT:     saga.dropout
// CHECK:         %[[R:.*]] = saga.relu %[[X:.*]] : tensor<4xf32>
// CHECK:         saga.yield %[[R]]
func.func @inference(%h: !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  %o = saga.apply_vertex(%h) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %d = saga.dropout %x rate 5.000000e-01 : tensor<4xf32>
    %r = saga.relu %d : tensor<4xf32>
    saga.yield %r : tensor<4xf32>
  }
  return %o : !saga.vertex<4xf32>
}
