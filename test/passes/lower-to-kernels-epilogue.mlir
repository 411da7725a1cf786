// RUN: saga-opt %s --saga-lower-to-kernels | FileCheck %s
// RUN: saga-opt %s --saga-lower-to-kernels="fuse-epilogues=false" | FileCheck %s --check-prefix=SPLIT

// Tests that an apply_vertex that is the only user of a propagation, reading
// besides it only values that exist before the propagation (the degree, a
// bias), runs in the propagation's kernel after each row's reduction: one
// launch, the kernel takes the epilogue's operands and writes its result.
// CHECK-LABEL: func.func @saga_kernel_0
// CHECK-SAME:    saga.kernel = "propagate"
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             arith.addf
// CHECK:           arith.divf
// CHECK:           arith.maximumf
// CHECK-LABEL: saga.model @m
// CHECK:         %[[R:.*]] = saga.launch @saga_kernel_0(%{{.*}}, %{{.*}}, %{{.*}}) {propagate} : (!saga.vertex<4xf32>, !saga.vertex<f32>, tensor<4xf32>) -> !saga.vertex<4xf32>
// CHECK-NOT:     saga.launch
// CHECK:         saga.return %[[R]]

// Without fusion: the propagation, then a map kernel.
// SPLIT-LABEL: saga.model @m
// SPLIT:         %[[P:.*]] = saga.launch @saga_kernel_0(%{{.*}}) {propagate} : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32>
// SPLIT:         saga.launch @saga_kernel_1(%[[P]], %{{.*}}, %{{.*}}) : (!saga.vertex<4xf32>, !saga.vertex<f32>, tensor<4xf32>) -> !saga.vertex<4xf32>
saga.model @m(%x: !saga.vertex<4xf32> {saga.name = "x"}) -> !saga.vertex<4xf32> {
  %b = saga.param "b" zeros : tensor<4xf32>
  %deg = saga.degree : !saga.vertex<f32>
  %a = saga.propagate sum src(%x) dst() edge() : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%t: tensor<4xf32>):
    saga.yield %t : tensor<4xf32>
  }
  %o = saga.apply_vertex(%a, %deg) : (!saga.vertex<4xf32>, !saga.vertex<f32>) -> !saga.vertex<4xf32> {
  ^bb0(%s: tensor<4xf32>, %d: tensor<f32>):
    %n = saga.div %s, %d : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    %y = saga.add %n, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %r = saga.relu %y : tensor<4xf32>
    saga.yield %r : tensor<4xf32>
  }
  saga.return %o : !saga.vertex<4xf32>
}
