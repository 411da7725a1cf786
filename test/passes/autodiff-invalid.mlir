// RUN: saga-opt %s --saga-autodiff --split-input-file -verify-diagnostics

// Tests that training needs a loss.
// expected-error @+1 {{'saga.model' op training needs a scalar 'loss' result}}
saga.model @noloss(%x: !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  saga.return %x : !saga.vertex<4xf32>
}

// -----

// Tests that a max gather's gradient is reported as not implemented.
saga.model @maxgather(%x: !saga.vertex<4xf32>, %l: !saga.vertex<i32>) -> (!saga.vertex<4xf32>, tensor<f32>) {
  %W = saga.param "W" glorot : tensor<4x4xf32>
  %y = saga.linear %x, %W : !saga.vertex<4xf32>, tensor<4x4xf32> -> !saga.vertex<4xf32>
  // expected-error @+1 {{gradient of the max gather is not implemented yet; train with sum, mean or softmax_sum gathers}}
  %a = saga.propagate max src(%y) dst() edge() : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%t: tensor<4xf32>):
    saga.yield %t : tensor<4xf32>
  }
  %loss = saga.cross_entropy %a, %l : !saga.vertex<4xf32>, !saga.vertex<i32> -> tensor<f32>
  saga.return %a, %loss : !saga.vertex<4xf32>, tensor<f32>
}
