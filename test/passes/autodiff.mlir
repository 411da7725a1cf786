// RUN: saga-opt %s --saga-autodiff --split-input-file | FileCheck %s

// Tests that a model's gradients follow its results, one per parameter in
// parameter order, named by saga.gradients: the linear gives two GEMMs
// (only the weight's is needed: the input is a graph input), the bias a
// per-vertex contribution summed over rows, the loss its closed form, and
// the dropout a key shared by forward and backward.
// CHECK-LABEL: saga.model @m
// CHECK-SAME:    -> (!saga.vertex<2xf32>, tensor<f32>, tensor<4x2xf32>, tensor<2xf32>)
// CHECK-SAME:    saga.gradients = ["W", "b"]
// CHECK:         saga.dropout %{{.*}} rate 5.000000e-01 {key = 0 : i64}
// CHECK:         %[[CE:.*]] = saga.cross_entropy_grad
// CHECK:         %[[B:.*]]:2 = saga.apply_vertex
// CHECK:         %[[DB:.*]] = saga.sum_rows %[[B]]#1 : !saga.vertex<2xf32> -> tensor<2xf32>
// CHECK-NOT:     saga.linear_grad_input
// CHECK:         %[[DW:.*]] = saga.linear_grad_weight
// CHECK:         saga.return %{{.*}}, %{{.*}}, %[[DW]], %[[DB]]
saga.model @m(%x: !saga.vertex<4xf32> {saga.name = "x"}, %l: !saga.vertex<i32> {saga.name = "label"}) -> (!saga.vertex<2xf32>, tensor<f32>) {
  %W = saga.param "W" glorot : tensor<4x2xf32>
  %b = saga.param "b" zeros : tensor<2xf32>
  %d = saga.apply_vertex(%x) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%t: tensor<4xf32>):
    %r = saga.dropout %t rate 5.000000e-01 : tensor<4xf32>
    saga.yield %r : tensor<4xf32>
  }
  %y = saga.linear %d, %W : !saga.vertex<4xf32>, tensor<4x2xf32> -> !saga.vertex<2xf32>
  %o = saga.apply_vertex(%y) : (!saga.vertex<2xf32>) -> !saga.vertex<2xf32> {
  ^bb0(%t: tensor<2xf32>):
    %s = saga.add %t, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    saga.yield %s : tensor<2xf32>
  }
  %loss = saga.cross_entropy %o, %l : !saga.vertex<2xf32>, !saga.vertex<i32> -> tensor<f32>
  saga.return %o, %loss : !saga.vertex<2xf32>, tensor<f32>
}

// -----

// Tests that the gradient through a sum propagation of a source value is a
// propagation over the reversed graph.
// CHECK-LABEL: saga.model @prop
// CHECK:         saga.propagate sum src(%{{.*}}) dst(%{{.*}}) edge() {reversed}
saga.model @prop(%x: !saga.vertex<4xf32> {saga.name = "x"}, %l: !saga.vertex<i32> {saga.name = "label"}) -> (!saga.vertex<2xf32>, tensor<f32>) {
  %W = saga.param "W" glorot : tensor<4x2xf32>
  %y = saga.linear %x, %W : !saga.vertex<4xf32>, tensor<4x2xf32> -> !saga.vertex<2xf32>
  %a = saga.propagate sum src(%y) dst() edge() : (!saga.vertex<2xf32>) -> !saga.vertex<2xf32> {
  ^bb0(%t: tensor<2xf32>):
    saga.yield %t : tensor<2xf32>
  }
  %loss = saga.cross_entropy %a, %l : !saga.vertex<2xf32>, !saga.vertex<i32> -> tensor<f32>
  saga.return %a, %loss : !saga.vertex<2xf32>, tensor<f32>
}
