// RUN: saga-opt %s --saga-autodiff --split-input-file -verify-diagnostics

// Tests that training needs a loss.
// expected-error @+1 {{'saga.model' op training needs a scalar 'loss' result}}
saga.model @noloss(%x: !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  saga.return %x : !saga.vertex<4xf32>
}

// -----

// Tests that a max reduction's gradient is reported as not implemented
// (max and min gathers have gradients: test/passes/autodiff.mlir).
saga.model @maxreduce(%x: !saga.vertex<4xf32>, %l: !saga.vertex<i32>) -> (!saga.vertex<2xf32>, tensor<f32>) {
  %W = saga.param "W" glorot : tensor<4x4xf32>
  %y = saga.linear %x, %W : !saga.vertex<4xf32>, tensor<4x4xf32> -> !saga.vertex<4xf32>
  %a = saga.apply_vertex(%y) : (!saga.vertex<4xf32>) -> !saga.vertex<2xf32> {
  ^bb0(%t: tensor<4xf32>):
    %r = saga.reshape %t : tensor<4xf32> -> tensor<2x2xf32>
    // expected-error @+1 {{'saga.reduce' op gradient of a max reduction is not implemented yet}}
    %m = saga.reduce max %r axis -1 : tensor<2x2xf32> -> tensor<2xf32>
    saga.yield %m : tensor<2xf32>
  }
  %loss = saga.cross_entropy %a, %l : !saga.vertex<2xf32>, !saga.vertex<i32> -> tensor<f32>
  saga.return %a, %loss : !saga.vertex<2xf32>, tensor<f32>
}
