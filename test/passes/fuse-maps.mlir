// RUN: saga-opt %s --saga-fuse-maps | FileCheck %s

// Tests that a chain of apply_vertex, each result read only by the next,
// becomes one apply_vertex whose body runs the producer's ops and then the
// consumer's, with the consumer's other inputs first, then the producer's.
// CHECK-LABEL: saga.model @chain
// CHECK:         %[[M:.*]] = saga.apply_vertex(%{{.*}}, %{{.*}}) : (!saga.vertex<4xf32>, !saga.vertex<f32>) -> !saga.vertex<4xf32>
// CHECK-NEXT:    ^bb0(%[[X:.*]]: tensor<4xf32>, %[[D:.*]]: tensor<f32>):
// CHECK-NEXT:      %[[N:.*]] = saga.div %[[X]], %[[D]]
// CHECK-NEXT:      %[[Y:.*]] = saga.add %[[N]], %{{.*}}
// CHECK-NEXT:      %[[R:.*]] = saga.relu %[[Y]]
// CHECK-NEXT:      saga.yield %[[R]]
// CHECK-NOT:     saga.apply_vertex
// CHECK:         saga.return %[[M]]
saga.model @chain(%x: !saga.vertex<4xf32> {saga.name = "x"}) -> !saga.vertex<4xf32> {
  %b = saga.param "b" zeros : tensor<4xf32>
  %deg = saga.degree : !saga.vertex<f32>
  %n = saga.apply_vertex(%x, %deg) : (!saga.vertex<4xf32>, !saga.vertex<f32>) -> !saga.vertex<4xf32> {
  ^bb0(%s: tensor<4xf32>, %d: tensor<f32>):
    %q = saga.div %s, %d : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    saga.yield %q : tensor<4xf32>
  }
  %y = saga.apply_vertex(%n) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%s: tensor<4xf32>):
    %q = saga.add %s, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    saga.yield %q : tensor<4xf32>
  }
  %o = saga.apply_vertex(%y) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%s: tensor<4xf32>):
    %q = saga.relu %s : tensor<4xf32>
    saga.yield %q : tensor<4xf32>
  }
  saga.return %o : !saga.vertex<4xf32>
}

// Tests that a map whose result has another user stays separate.
// CHECK-LABEL: saga.model @shared
// CHECK-COUNT-2: saga.apply_vertex
saga.model @shared(%x: !saga.vertex<4xf32> {saga.name = "x"}) -> (!saga.vertex<4xf32>, !saga.vertex<4xf32>) {
  %n = saga.apply_vertex(%x) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%s: tensor<4xf32>):
    %q = saga.relu %s : tensor<4xf32>
    saga.yield %q : tensor<4xf32>
  }
  %y = saga.apply_vertex(%n) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%s: tensor<4xf32>):
    %q = saga.neg %s : tensor<4xf32>
    saga.yield %q : tensor<4xf32>
  }
  saga.return %n, %y : !saga.vertex<4xf32>, !saga.vertex<4xf32>
}

// Tests that of several propagations read only by one map (GAT's backward:
// a [V, 4] gradient over the reversed edges and a [V] one over the forward
// edges), the widest is moved to just before the map, where
// lower-to-kernels can fuse the map into its kernel as the epilogue; its
// operands are read there anyway.
// CHECK-LABEL: saga.model @widest_last
// CHECK:         %[[N:.*]] = saga.propagate sum src(%arg0) dst(%arg1) edge() :
// CHECK:         %[[W:.*]] = saga.propagate sum src(%arg0) dst(%arg1) edge() {reversed}
// CHECK:           saga.mul
// CHECK:           saga.yield %{{.*}} : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    saga.apply_vertex(%[[W]], %[[N]])
saga.model @widest_last(%z: !saga.vertex<4xf32> {saga.name = "z"}, %g: !saga.vertex<4xf32> {saga.name = "g"}) -> !saga.vertex<4xf32> {
  %w = saga.propagate sum src(%z) dst(%g) edge() {reversed} : (!saga.vertex<4xf32>, !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %m = saga.mul %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    saga.yield %m : tensor<4xf32>
  }
  %n = saga.propagate sum src(%z) dst(%g) edge() : (!saga.vertex<4xf32>, !saga.vertex<4xf32>) -> !saga.vertex<f32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %m = saga.mul %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %r = saga.reduce sum %m axis 0 : tensor<4xf32> -> tensor<f32>
    saga.yield %r : tensor<f32>
  }
  %o = saga.apply_vertex(%w, %n) : (!saga.vertex<4xf32>, !saga.vertex<f32>) -> !saga.vertex<4xf32> {
  ^bb0(%x: tensor<4xf32>, %s: tensor<f32>):
    %q = saga.mul %x, %s : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    saga.yield %q : tensor<4xf32>
  }
  saga.return %o : !saga.vertex<4xf32>
}

// Tests that sibling propagations (same reduction, same direction, read
// only by one map) become one: the union of their operands (%z once), both
// bodies with their common subexpression (the product) computed once, the
// messages flattened and concatenated ([2, 2] and [] into [5]); the map
// slices its parts back out. A sibling over the other direction stays.
// CHECK-LABEL: saga.model @siblings
// CHECK:         %[[F:.*]] = saga.propagate sum src(%arg0) dst(%arg1) edge() :
// CHECK:         %[[M:.*]] = saga.propagate sum src(%arg0, %arg2) dst(%arg1) edge() {reversed} : ({{.*}}) -> !saga.vertex<5xf32>
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<4xf32>, %[[C:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>):
// CHECK-NEXT:      %[[P:.*]] = saga.mul %[[A]], %[[B]]
// CHECK-NEXT:      %[[Q:.*]] = saga.add %[[P]], %[[C]]
// CHECK-NEXT:      %[[R:.*]] = saga.reshape %[[Q]] : tensor<4xf32> -> tensor<2x2xf32>
// CHECK-NEXT:      %[[R2:.*]] = saga.reshape %[[R]] : tensor<2x2xf32> -> tensor<4xf32>
// CHECK-NEXT:      %[[S:.*]] = saga.reduce sum %[[P]]
// CHECK-NEXT:      %[[S2:.*]] = saga.reshape %[[S]] : tensor<f32> -> tensor<1xf32>
// CHECK-NEXT:      %[[CAT:.*]] = saga.concat %[[R2]], %[[S2]] axis 0 : tensor<4xf32>, tensor<1xf32> -> tensor<5xf32>
// CHECK-NEXT:      saga.yield %[[CAT]]
// CHECK-NEXT:    }
// CHECK-NEXT:    saga.apply_vertex(%[[F]], %[[M]]) : (!saga.vertex<f32>, !saga.vertex<5xf32>) -> !saga.vertex<2x2xf32>
// CHECK-NEXT:    ^bb0(%[[FR:.*]]: tensor<f32>, %[[ROW:.*]]: tensor<5xf32>):
// CHECK-NEXT:      %[[X:.*]] = saga.slice %[[ROW]] axis 0 offset 0 size 4 : tensor<5xf32> -> tensor<4xf32>
// CHECK-NEXT:      %[[X2:.*]] = saga.reshape %[[X]] : tensor<4xf32> -> tensor<2x2xf32>
// CHECK-NEXT:      %[[Y:.*]] = saga.slice %[[ROW]] axis 0 offset 4 size 1 : tensor<5xf32> -> tensor<1xf32>
// CHECK-NEXT:      %[[Y2:.*]] = saga.reshape %[[Y]] : tensor<1xf32> -> tensor<f32>
// CHECK-NEXT:      %[[T:.*]] = saga.mul %[[X2]], %[[Y2]]
// CHECK-NEXT:      %[[U:.*]] = saga.mul %[[T]], %[[FR]]
// CHECK-NEXT:      saga.yield %[[U]]
saga.model @siblings(%z: !saga.vertex<4xf32> {saga.name = "z"}, %g: !saga.vertex<4xf32> {saga.name = "g"}, %c: !saga.vertex<4xf32> {saga.name = "c"}) -> !saga.vertex<2x2xf32> {
  %w = saga.propagate sum src(%z, %c) dst(%g) edge() {reversed} : (!saga.vertex<4xf32>, !saga.vertex<4xf32>, !saga.vertex<4xf32>) -> !saga.vertex<2x2xf32> {
  ^bb0(%a: tensor<4xf32>, %k: tensor<4xf32>, %b: tensor<4xf32>):
    %m = saga.mul %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %p = saga.add %m, %k : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %r = saga.reshape %p : tensor<4xf32> -> tensor<2x2xf32>
    saga.yield %r : tensor<2x2xf32>
  }
  %f = saga.propagate sum src(%z) dst(%g) edge() : (!saga.vertex<4xf32>, !saga.vertex<4xf32>) -> !saga.vertex<f32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %m = saga.mul %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %r = saga.reduce sum %m axis 0 : tensor<4xf32> -> tensor<f32>
    saga.yield %r : tensor<f32>
  }
  %n = saga.propagate sum src(%z) dst(%g) edge() {reversed} : (!saga.vertex<4xf32>, !saga.vertex<4xf32>) -> !saga.vertex<f32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %m = saga.mul %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %r = saga.reduce sum %m axis 0 : tensor<4xf32> -> tensor<f32>
    saga.yield %r : tensor<f32>
  }
  %o = saga.apply_vertex(%w, %n, %f) : (!saga.vertex<2x2xf32>, !saga.vertex<f32>, !saga.vertex<f32>) -> !saga.vertex<2x2xf32> {
  ^bb0(%x: tensor<2x2xf32>, %s: tensor<f32>, %t: tensor<f32>):
    %q = saga.mul %x, %s : tensor<2x2xf32>, tensor<f32> -> tensor<2x2xf32>
    %u = saga.mul %q, %t : tensor<2x2xf32>, tensor<f32> -> tensor<2x2xf32>
    saga.yield %u : tensor<2x2xf32>
  }
  saga.return %o : !saga.vertex<2x2xf32>
}

// Tests that siblings stay apart when merging would keep an operand alive
// longer: %cc is read only by the first sibling, and %big is made between
// the two (the merged propagation would run where the second one does).
// CHECK-LABEL: saga.model @siblings_apart
// CHECK:         %[[CC:.*]] = saga.apply_vertex(%arg2)
// CHECK:         saga.propagate sum src(%arg0, %[[CC]]) dst(%arg1) edge() {reversed} : ({{.*}}) -> !saga.vertex<4xf32>
// CHECK:         saga.apply_vertex(%arg1)
// CHECK:         saga.propagate sum src(%arg0) dst(%{{.*}}) edge() {reversed} : ({{.*}}) -> !saga.vertex<f32>
saga.model @siblings_apart(%z: !saga.vertex<4xf32> {saga.name = "z"}, %g: !saga.vertex<4xf32> {saga.name = "g"}, %c: !saga.vertex<4xf32> {saga.name = "c"}) -> (!saga.vertex<4xf32>, !saga.vertex<4xf32>) {
  %cc = saga.apply_vertex(%c) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = saga.tanh %a : tensor<4xf32>
    saga.yield %e : tensor<4xf32>
  }
  %w = saga.propagate sum src(%z, %cc) dst(%g) edge() {reversed} : (!saga.vertex<4xf32>, !saga.vertex<4xf32>, !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%a: tensor<4xf32>, %k: tensor<4xf32>, %b: tensor<4xf32>):
    %m = saga.mul %a, %k : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %p = saga.add %m, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    saga.yield %p : tensor<4xf32>
  }
  %big = saga.apply_vertex(%g) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = saga.exp %a : tensor<4xf32>
    saga.yield %e : tensor<4xf32>
  }
  %n = saga.propagate sum src(%z) dst(%big) edge() {reversed} : (!saga.vertex<4xf32>, !saga.vertex<4xf32>) -> !saga.vertex<f32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %m = saga.mul %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %r = saga.reduce sum %m axis 0 : tensor<4xf32> -> tensor<f32>
    saga.yield %r : tensor<f32>
  }
  %o = saga.apply_vertex(%w, %n) : (!saga.vertex<4xf32>, !saga.vertex<f32>) -> !saga.vertex<4xf32> {
  ^bb0(%x: tensor<4xf32>, %s: tensor<f32>):
    %q = saga.mul %x, %s : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    saga.yield %q : tensor<4xf32>
  }
  saga.return %o, %big : !saga.vertex<4xf32>, !saga.vertex<4xf32>
}
