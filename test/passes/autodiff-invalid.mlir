// RUN: saga-opt %s --saga-autodiff --split-input-file -verify-diagnostics

// Tests that training needs a loss.
// expected-error @+1 {{'saga.model' op training needs a scalar 'loss' result}}
saga.model @noloss(%x: !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  saga.return %x : !saga.vertex<4xf32>
}

// -----

// Tests that a matmul with a multi-row left side is reported as not
// implemented (max/min reductions and concat have gradients:
// test/passes/autodiff.mlir).
saga.model @multirow(%x: !saga.vertex<4xf32>, %l: !saga.vertex<i32>) -> (!saga.vertex<6xf32>, tensor<f32>) {
  %W = saga.param "W" glorot : tensor<4x4xf32>
  %U = saga.param "U" glorot : tensor<2x3xf32>
  %y = saga.linear %x, %W : !saga.vertex<4xf32>, tensor<4x4xf32> -> !saga.vertex<4xf32>
  %a = saga.apply_vertex(%y) : (!saga.vertex<4xf32>) -> !saga.vertex<6xf32> {
  ^bb0(%t: tensor<4xf32>):
    %r = saga.reshape %t : tensor<4xf32> -> tensor<2x2xf32>
    // expected-error @+1 {{'saga.matmul' op gradient of a matmul with a multi-row left side is not implemented yet}}
    %m = saga.matmul %r, %U : tensor<2x2xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
    %f = saga.reshape %m : tensor<2x3xf32> -> tensor<6xf32>
    saga.yield %f : tensor<6xf32>
  }
  %loss = saga.cross_entropy %a, %l : !saga.vertex<6xf32>, !saga.vertex<i32> -> tensor<f32>
  saga.return %a, %loss : !saga.vertex<6xf32>, tensor<f32>
}
