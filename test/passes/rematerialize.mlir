// RUN: saga-opt %s --saga-rematerialize | FileCheck %s
// RUN: saga-opt %s --saga-rematerialize=fuse-epilogues=false | FileCheck %s --check-prefix=NOFUSE

// Tests that input dropout, a map of the graph input alone, is computed
// again before its late reader (the weight gradient, after vertex values
// were made) and that each copy serves only its own reader.
// CHECK-LABEL: saga.model @input_dropout
// CHECK:         %[[D1:.*]] = saga.apply_vertex(%arg0)
// CHECK:           saga.dropout
// CHECK:         saga.linear %[[D1]], %{{.*}}
// CHECK:         saga.apply_vertex(%{{.*}}) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32>
// CHECK:           saga.relu
// CHECK:         %[[D2:.*]] = saga.apply_vertex(%arg0)
// CHECK:           saga.dropout
// CHECK-NEXT:      saga.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    saga.linear_grad_weight %[[D2]], %{{.*}}
saga.model @input_dropout(%x: !saga.vertex<8xf32> {saga.name = "x"}) -> (!saga.vertex<4xf32>, tensor<8x4xf32>) {
  %w = saga.param "W" glorot : tensor<8x4xf32>
  %d = saga.apply_vertex(%x) : (!saga.vertex<8xf32>) -> !saga.vertex<8xf32> {
  ^bb0(%s: tensor<8xf32>):
    %q = saga.dropout %s rate 5.000000e-01 : tensor<8xf32>
    saga.yield %q : tensor<8xf32>
  }
  %h = saga.linear %d, %w : !saga.vertex<8xf32>, tensor<8x4xf32> -> !saga.vertex<4xf32>
  %r = saga.apply_vertex(%h) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%s: tensor<4xf32>):
    %q = saga.relu %s : tensor<4xf32>
    saga.yield %q : tensor<4xf32>
  }
  %g = saga.linear_grad_weight %d, %r : !saga.vertex<8xf32>, !saga.vertex<4xf32> -> tensor<8x4xf32>
  saga.return %r, %g : !saga.vertex<4xf32>, tensor<8x4xf32>
}

// Tests a chain, as after a GAT layer: bias then ELU, both read again by the
// backward after other vertex values were made. Maps are visited last to
// first: the ELU is remade for the weight gradient, and the bias is then
// recomputed inside both of its later map readers (the remade ELU and the
// backward's map), from the linear output that is alive anyway, so no copy
// of it exists; the originals serve only the forward.
// CHECK-LABEL: saga.model @chain
// CHECK:         %[[H:.*]] = saga.linear %arg0
// CHECK:         %[[P:.*]] = saga.apply_vertex(%[[H]])
// CHECK:           saga.add
// CHECK:         %[[E:.*]] = saga.apply_vertex(%[[P]])
// CHECK:           saga.elu
// CHECK:         saga.linear %[[E]]
// CHECK:         %[[T:.*]] = saga.apply_vertex
// CHECK:           saga.tanh
// CHECK:         %[[E2:.*]] = saga.apply_vertex(%[[H]])
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      saga.add
// CHECK-NEXT:      saga.elu
// CHECK:         saga.linear_grad_weight %[[E2]], %[[T]]
// CHECK:         saga.apply_vertex(%[[H]], %[[T]], %[[H]])
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      saga.add
// CHECK-NEXT:      saga.add
// CHECK-NEXT:      saga.mul
// CHECK-NOT:     saga.apply_vertex
saga.model @chain(%x: !saga.vertex<8xf32> {saga.name = "x"}) -> (!saga.vertex<4xf32>, tensor<4x4xf32>) {
  %w = saga.param "W" glorot : tensor<8x4xf32>
  %w2 = saga.param "W2" glorot : tensor<4x4xf32>
  %b = saga.param "b" zeros : tensor<4xf32>
  %h = saga.linear %x, %w : !saga.vertex<8xf32>, tensor<8x4xf32> -> !saga.vertex<4xf32>
  %p = saga.apply_vertex(%h) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%s: tensor<4xf32>):
    %q = saga.add %s, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    saga.yield %q : tensor<4xf32>
  }
  %e = saga.apply_vertex(%p) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%s: tensor<4xf32>):
    %q = saga.elu %s : tensor<4xf32>
    saga.yield %q : tensor<4xf32>
  }
  %d = saga.linear %e, %w2 : !saga.vertex<4xf32>, tensor<4x4xf32> -> !saga.vertex<4xf32>
  %t = saga.apply_vertex(%d) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%s: tensor<4xf32>):
    %q = saga.tanh %s : tensor<4xf32>
    saga.yield %q : tensor<4xf32>
  }
  %g = saga.linear_grad_weight %e, %t : !saga.vertex<4xf32>, !saga.vertex<4xf32> -> tensor<4x4xf32>
  %k = saga.apply_vertex(%h, %t, %p) : (!saga.vertex<4xf32>, !saga.vertex<4xf32>, !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%s: tensor<4xf32>, %u: tensor<4xf32>, %v: tensor<4xf32>):
    %q = saga.add %s, %u : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %r = saga.mul %q, %v : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    saga.yield %r : tensor<4xf32>
  }
  saga.return %k, %g : !saga.vertex<4xf32>, tensor<4x4xf32>
}

// Tests what stays: a map with a matmul (costly to recompute), a map of a
// computed value, and a map whose readers have no vertex value made between
// them.
// CHECK-LABEL: saga.model @stays
// CHECK-COUNT-4: saga.apply_vertex
// CHECK-NOT:     saga.apply_vertex
saga.model @stays(%x: !saga.vertex<8xf32> {saga.name = "x"}) -> (!saga.vertex<8xf32>, !saga.vertex<8xf32>, !saga.vertex<8xf32>, !saga.vertex<8xf32>) {
  %w = saga.param "W" glorot : tensor<8x8xf32>
  %m = saga.apply_vertex(%x) : (!saga.vertex<8xf32>) -> !saga.vertex<8xf32> {
  ^bb0(%s: tensor<8xf32>):
    %q = saga.matmul %s, %w : tensor<8xf32>, tensor<8x8xf32> -> tensor<8xf32>
    saga.yield %q : tensor<8xf32>
  }
  %deg = saga.degree : !saga.vertex<f32>
  %n = saga.apply_vertex(%x, %deg) : (!saga.vertex<8xf32>, !saga.vertex<f32>) -> !saga.vertex<8xf32> {
  ^bb0(%s: tensor<8xf32>, %e: tensor<f32>):
    %q = saga.div %s, %e : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
    saga.yield %q : tensor<8xf32>
  }
  %t = saga.apply_vertex(%x) : (!saga.vertex<8xf32>) -> !saga.vertex<8xf32> {
  ^bb0(%s: tensor<8xf32>):
    %q = saga.tanh %s : tensor<8xf32>
    saga.yield %q : tensor<8xf32>
  }
  %u = saga.apply_vertex(%m, %n, %t) : (!saga.vertex<8xf32>, !saga.vertex<8xf32>, !saga.vertex<8xf32>) -> !saga.vertex<8xf32> {
  ^bb0(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>):
    %p = saga.add %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
    %q = saga.add %p, %c : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
    saga.yield %q : tensor<8xf32>
  }
  saga.return %m, %n, %t, %u : !saga.vertex<8xf32>, !saga.vertex<8xf32>, !saga.vertex<8xf32>, !saga.vertex<8xf32>
}

// Tests that a projection of the input features no wider than its result
// (z = dropout(x) @ W, 4 -> 4, as GAT's first layer), read again by the
// backward after other vertex values were made, is remade there with its
// dropout: one copy serves both late readers, including the map that is the
// epilogue of the propagation right before it (the copy goes before that
// propagation, which must stay next to its epilogue, and the propagation
// counts as no allocation). A wider input (8 -> 4) is kept instead.
// CHECK-LABEL: saga.model @projection
// CHECK:         %[[D:.*]] = saga.apply_vertex(%arg0)
// CHECK:         %[[Z:.*]] = saga.linear %[[D]]
// CHECK:         saga.propagate sum src(%[[Z]])
// CHECK:         saga.apply_vertex(%arg2)
// CHECK:         %[[K:.*]] = saga.linear %arg1
// CHECK:         %[[D2:.*]] = saga.apply_vertex(%arg0)
// CHECK:           saga.dropout
// CHECK:         %[[Z2:.*]] = saga.linear %[[D2]]
// CHECK-NEXT:    saga.propagate sum src(%[[Z2]])
// CHECK-NEXT:    ^bb0
// CHECK:         %[[P:.*]] = saga.propagate sum src(%{{.*}})
// CHECK:         saga.apply_vertex(%[[P]], %[[Z2]], %[[K]])
// CHECK-NOT:     saga.linear
// Without epilogue fusion the propagation before the map is stored: it
// counts as an allocation, so the map gets its own copy, right before it.
// NOFUSE-LABEL: saga.model @projection
// NOFUSE-COUNT-3: saga.linear
// NOFUSE:         %[[Z4:.*]] = saga.linear
// NOFUSE-NEXT:    saga.apply_vertex(%{{.*}}, %[[Z4]], %{{.*}})
saga.model @projection(%x: !saga.vertex<4xf32> {saga.name = "x"}, %y: !saga.vertex<8xf32> {saga.name = "y"}, %g: !saga.vertex<4xf32> {saga.name = "g"}) -> (!saga.vertex<4xf32>, !saga.vertex<4xf32>, !saga.vertex<4xf32>, !saga.vertex<4xf32>) {
  %w = saga.param "W" glorot : tensor<4x4xf32>
  %v = saga.param "V" glorot : tensor<8x4xf32>
  %d = saga.apply_vertex(%x) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%s: tensor<4xf32>):
    %q = saga.dropout %s rate 5.000000e-01 {key = 0 : i64} : tensor<4xf32>
    saga.yield %q : tensor<4xf32>
  }
  %z = saga.linear %d, %w : !saga.vertex<4xf32>, tensor<4x4xf32> -> !saga.vertex<4xf32>
  %f = saga.propagate sum src(%z) dst() edge() : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    saga.yield %a : tensor<4xf32>
  }
  %t = saga.apply_vertex(%g) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%s: tensor<4xf32>):
    %q = saga.tanh %s : tensor<4xf32>
    saga.yield %q : tensor<4xf32>
  }
  %k = saga.linear %y, %v : !saga.vertex<8xf32>, tensor<8x4xf32> -> !saga.vertex<4xf32>
  %s1 = saga.propagate sum src(%z) dst(%t) edge() {reversed} : (!saga.vertex<4xf32>, !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %m = saga.mul %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    saga.yield %m : tensor<4xf32>
  }
  %p = saga.propagate sum src(%t) dst() edge() {reversed} : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    saga.yield %a : tensor<4xf32>
  }
  %o = saga.apply_vertex(%p, %z, %k) : (!saga.vertex<4xf32>, !saga.vertex<4xf32>, !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>):
    %q = saga.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %r = saga.add %q, %c : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    saga.yield %r : tensor<4xf32>
  }
  saga.return %f, %s1, %o, %k : !saga.vertex<4xf32>, !saga.vertex<4xf32>, !saga.vertex<4xf32>, !saga.vertex<4xf32>
}
