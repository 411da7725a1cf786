// RUN: saga-opt %s --saga-lower-to-kernels --split-input-file | FileCheck %s

// Tests which results a kernel may write over which operands
// (saga.overwritable, pairs result, operand; the executor reuses a dying
// operand's buffer for such a result). Result 0 passes operand 0 through
// and result 1 is computed: result 0 may take either operand's buffer (its
// own yield is operand 0's row itself); result 1 may take operand 1's but
// not operand 0's, whose row is what result 0 copies out (the rule does not
// rely on the order the results are written in). The narrower result 2 may
// take neither.
// CHECK-LABEL: func.func @saga_kernel_0
// CHECK-SAME:    attributes {saga.kernel = "map", saga.overwritable = array<i64: 0, 0, 0, 1, 1, 1>}
saga.model @m(%a: !saga.vertex<2x2xf32> {saga.name = "a"}, %b: !saga.vertex<2x2xf32> {saga.name = "b"}) -> (!saga.vertex<2x2xf32>, !saga.vertex<2x2xf32>, !saga.vertex<2xf32>) {
  %r:3 = saga.apply_vertex(%a, %b) : (!saga.vertex<2x2xf32>, !saga.vertex<2x2xf32>) -> (!saga.vertex<2x2xf32>, !saga.vertex<2x2xf32>, !saga.vertex<2xf32>) {
  ^bb0(%s: tensor<2x2xf32>, %t: tensor<2x2xf32>):
    %u = saga.add %s, %t : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
    %w = saga.reduce sum %t axis -1 : tensor<2x2xf32> -> tensor<2xf32>
    saga.yield %s, %u, %w : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>
  }
  saga.return %r#0, %r#1, %r#2 : !saga.vertex<2x2xf32>, !saga.vertex<2x2xf32>, !saga.vertex<2xf32>
}

// -----

// Tests that a fused propagation's epilogue may write over its own operands
// (read at the row it writes) but the propagation's operands, read at other
// rows through the edges, are never candidates.
// CHECK-LABEL: func.func @saga_kernel_0
// CHECK-SAME:    saga.kernel = "propagate", saga.operand_groups = array<i64: {{[0-9, ]+}}>, saga.overwritable = array<i64: 0, 1>, saga.state_width = 4 : i64}
saga.model @p(%x: !saga.vertex<4xf32> {saga.name = "x"}, %c: !saga.vertex<4xf32> {saga.name = "c"}) -> !saga.vertex<4xf32> {
  %s = saga.propagate sum src(%x) dst() edge() : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%m: tensor<4xf32>):
    saga.yield %m : tensor<4xf32>
  }
  %r = saga.apply_vertex(%s, %c) : (!saga.vertex<4xf32>, !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%a: tensor<4xf32>, %d: tensor<4xf32>):
    %q = saga.mul %a, %d : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    saga.yield %q : tensor<4xf32>
  }
  saga.return %r : !saga.vertex<4xf32>
}

// -----

// Tests that an epilogue input the propagation reads only at the row it
// reduces (a reversed propagation's src operand, GAT's projection in the
// backward) is passed once and may be written over, while one read at the
// edges' other ends (the dst operand %g here) is passed again and may not.
// CHECK-LABEL: func.func @saga_kernel_0
// CHECK-SAME:    (%{{.*}}: index, %{{.*}}: index, %{{.*}}: i64, %{{.*}}: memref<?xi64>, %{{.*}}: memref<?xi32>, %{{.*}}: memref<?xi32>, %{{.*}}: memref<?xi64>, %{{.*}}: i64, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>)
// CHECK-SAME:    saga.kernel = "propagate", saga.operand_groups = array<i64: {{[0-9, ]+}}>, saga.overwritable = array<i64: 0, 0>, saga.reversed, saga.state_width = 4 : i64}
// CHECK:       saga.launch @saga_kernel_0(%arg0, %arg1, %arg1) {propagate}
saga.model @r(%z: !saga.vertex<4xf32> {saga.name = "z"}, %g: !saga.vertex<4xf32> {saga.name = "g"}) -> !saga.vertex<4xf32> {
  %s = saga.propagate sum src(%z) dst(%g) edge() {reversed} : (!saga.vertex<4xf32>, !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %m = saga.mul %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    saga.yield %m : tensor<4xf32>
  }
  %r = saga.apply_vertex(%s, %z, %g) : (!saga.vertex<4xf32>, !saga.vertex<4xf32>, !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%a: tensor<4xf32>, %y: tensor<4xf32>, %h: tensor<4xf32>):
    %q = saga.add %a, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %t = saga.add %q, %h : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    saga.yield %t : tensor<4xf32>
  }
  saga.return %r : !saga.vertex<4xf32>
}
