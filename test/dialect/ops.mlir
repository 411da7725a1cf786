// RUN: saga-opt %s | saga-opt | FileCheck %s
// RUN: saga-opt %s --mlir-print-op-generic | saga-opt | FileCheck %s

// Round trip of every saga op and both domain types, through the custom form
// and through the generic form.

// Tests that both domain types print with their shape and element type,
// scalar (rank-0), vector, multi-dimensional and integer alike.
// CHECK-LABEL: func.func @domain_types
// CHECK-SAME: (%{{.*}}: !saga.vertex<f32>, %{{.*}}: !saga.vertex<16xf32>, %{{.*}}: !saga.edge<4x8xf32>, %{{.*}}: !saga.vertex<i32>)
// CHECK-SAME: -> (!saga.vertex<f32>, !saga.vertex<16xf32>, !saga.edge<4x8xf32>, !saga.vertex<i32>)
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : !saga.vertex<f32>, !saga.vertex<16xf32>, !saga.edge<4x8xf32>, !saga.vertex<i32>
func.func @domain_types(%a: !saga.vertex<f32>, %b: !saga.vertex<16xf32>,
                        %c: !saga.edge<4x8xf32>, %d: !saga.vertex<i32>)
    -> (!saga.vertex<f32>, !saga.vertex<16xf32>, !saga.edge<4x8xf32>, !saga.vertex<i32>) {
  return %a, %b, %c, %d : !saga.vertex<f32>, !saga.vertex<16xf32>, !saga.edge<4x8xf32>, !saga.vertex<i32>
}

// Tests that the graph built-ins saga.degree and saga.vertex_id round-trip.
// CHECK-LABEL: func.func @builtins
// CHECK: %[[DEG:.*]] = saga.degree : !saga.vertex<f32>
// CHECK: %[[ID:.*]] = saga.vertex_id : !saga.vertex<i32>
// CHECK: return %[[DEG]], %[[ID]] : !saga.vertex<f32>, !saga.vertex<i32>
func.func @builtins() -> (!saga.vertex<f32>, !saga.vertex<i32>) {
  %deg = saga.degree : !saga.vertex<f32>
  %id = saga.vertex_id : !saga.vertex<i32>
  return %deg, %id : !saga.vertex<f32>, !saga.vertex<i32>
}

// Tests that saga.scatter reads either end of an edge and keeps the shape.
// CHECK-LABEL: func.func @scatter
// CHECK-SAME: (%[[H:.*]]: !saga.vertex<4x8xf32>)
// CHECK: %[[S:.*]] = saga.scatter src %[[H]] : !saga.vertex<4x8xf32> -> !saga.edge<4x8xf32>
// CHECK: %[[D:.*]] = saga.scatter dst %[[H]] : !saga.vertex<4x8xf32> -> !saga.edge<4x8xf32>
// CHECK: return %[[S]], %[[D]]
func.func @scatter(%h: !saga.vertex<4x8xf32>) -> (!saga.edge<4x8xf32>, !saga.edge<4x8xf32>) {
  %s = saga.scatter src %h : !saga.vertex<4x8xf32> -> !saga.edge<4x8xf32>
  %d = saga.scatter dst %h : !saga.vertex<4x8xf32> -> !saga.edge<4x8xf32>
  return %s, %d : !saga.edge<4x8xf32>, !saga.edge<4x8xf32>
}

// Tests that saga.apply_edge takes several edge inputs, sees them as per-edge
// tensors and yields one per-edge tensor per result.
// CHECK-LABEL: func.func @apply_edge
// CHECK-SAME: (%[[HS:.*]]: !saga.edge<16xf32>, %[[W:.*]]: !saga.edge<f32>)
// CHECK: %[[M:.*]] = saga.apply_edge(%[[HS]], %[[W]]) : (!saga.edge<16xf32>, !saga.edge<f32>) -> !saga.edge<16xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<16xf32>, %[[EW:.*]]: tensor<f32>):
// CHECK-NEXT: %[[Y:.*]] = saga.mul %[[X]], %[[EW]] : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
// CHECK-NEXT: saga.yield %[[Y]] : tensor<16xf32>
// CHECK-NEXT: }
// CHECK: return %[[M]] : !saga.edge<16xf32>
func.func @apply_edge(%hs: !saga.edge<16xf32>, %w: !saga.edge<f32>) -> !saga.edge<16xf32> {
  %m = saga.apply_edge(%hs, %w) : (!saga.edge<16xf32>, !saga.edge<f32>) -> !saga.edge<16xf32> {
  ^bb0(%x: tensor<16xf32>, %ew: tensor<f32>):
    %y = saga.mul %x, %ew : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
    saga.yield %y : tensor<16xf32>
  }
  return %m : !saga.edge<16xf32>
}

// Tests that saga.apply_vertex may use parameter tensors defined outside its
// body and may have several results.
// CHECK-LABEL: func.func @apply_vertex
// CHECK-SAME: (%[[A:.*]]: !saga.vertex<16xf32>, %[[WM:.*]]: tensor<16x7xf32>)
// CHECK: %[[O:.*]]:2 = saga.apply_vertex(%[[A]]) : (!saga.vertex<16xf32>) -> (!saga.vertex<7xf32>, !saga.vertex<16xf32>) {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<16xf32>):
// CHECK-NEXT: %[[Y:.*]] = saga.matmul %[[X]], %[[WM]] : tensor<16xf32>, tensor<16x7xf32> -> tensor<7xf32>
// CHECK-NEXT: saga.yield %[[Y]], %[[X]] : tensor<7xf32>, tensor<16xf32>
// CHECK-NEXT: }
// CHECK: return %[[O]]#0, %[[O]]#1 : !saga.vertex<7xf32>, !saga.vertex<16xf32>
func.func @apply_vertex(%a: !saga.vertex<16xf32>, %W: tensor<16x7xf32>)
    -> (!saga.vertex<7xf32>, !saga.vertex<16xf32>) {
  %o:2 = saga.apply_vertex(%a) : (!saga.vertex<16xf32>) -> (!saga.vertex<7xf32>, !saga.vertex<16xf32>) {
  ^bb0(%x: tensor<16xf32>):
    %y = saga.matmul %x, %W : tensor<16xf32>, tensor<16x7xf32> -> tensor<7xf32>
    saga.yield %y, %x : tensor<7xf32>, tensor<16xf32>
  }
  return %o#0, %o#1 : !saga.vertex<7xf32>, !saga.vertex<16xf32>
}

// Tests that a stage may have no inputs (its body then only sees parameters)
// and that a body may yield nothing.
// CHECK-LABEL: func.func @apply_no_inputs
// CHECK-SAME: (%[[B:.*]]: tensor<16xf32>)
// CHECK: %[[V:.*]] = saga.apply_vertex() : () -> !saga.vertex<16xf32> {
// CHECK-NEXT: saga.yield %[[B]] : tensor<16xf32>
// CHECK-NEXT: }
// CHECK: saga.apply_edge() : () -> () {
// CHECK-NEXT: saga.yield{{$}}
// CHECK-NEXT: }
// CHECK: return %[[V]]
func.func @apply_no_inputs(%b: tensor<16xf32>) -> !saga.vertex<16xf32> {
  %v = saga.apply_vertex() : () -> !saga.vertex<16xf32> {
    saga.yield %b : tensor<16xf32>
  }
  saga.apply_edge() : () -> () {
    saga.yield
  }
  return %v : !saga.vertex<16xf32>
}

// Tests that every saga.gather kind round-trips, including softmax_sum with
// a per-head score whose shape is a prefix of the value's shape.
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[M:.*]]: !saga.edge<4x8xf32>, %[[S:.*]]: !saga.edge<4xf32>)
// CHECK: saga.gather sum %[[M]] : !saga.edge<4x8xf32> -> !saga.vertex<4x8xf32>
// CHECK: saga.gather mean %[[M]] : !saga.edge<4x8xf32> -> !saga.vertex<4x8xf32>
// CHECK: saga.gather max %[[M]] : !saga.edge<4x8xf32> -> !saga.vertex<4x8xf32>
// CHECK: saga.gather min %[[M]] : !saga.edge<4x8xf32> -> !saga.vertex<4x8xf32>
// CHECK: saga.gather softmax_sum %[[M]] score %[[S]] : !saga.edge<4x8xf32>, !saga.edge<4xf32> -> !saga.vertex<4x8xf32>
func.func @gather(%m: !saga.edge<4x8xf32>, %s: !saga.edge<4xf32>)
    -> (!saga.vertex<4x8xf32>, !saga.vertex<4x8xf32>, !saga.vertex<4x8xf32>,
        !saga.vertex<4x8xf32>, !saga.vertex<4x8xf32>) {
  %0 = saga.gather sum %m : !saga.edge<4x8xf32> -> !saga.vertex<4x8xf32>
  %1 = saga.gather mean %m : !saga.edge<4x8xf32> -> !saga.vertex<4x8xf32>
  %2 = saga.gather max %m : !saga.edge<4x8xf32> -> !saga.vertex<4x8xf32>
  %3 = saga.gather min %m : !saga.edge<4x8xf32> -> !saga.vertex<4x8xf32>
  %4 = saga.gather softmax_sum %m score %s
      : !saga.edge<4x8xf32>, !saga.edge<4xf32> -> !saga.vertex<4x8xf32>
  return %0, %1, %2, %3, %4 : !saga.vertex<4x8xf32>, !saga.vertex<4x8xf32>,
      !saga.vertex<4x8xf32>, !saga.vertex<4x8xf32>, !saga.vertex<4x8xf32>
}

// Tests that softmax_sum accepts a score of the value's full shape (the
// trivial prefix) and a rank-0 score (one score per edge).
// CHECK-LABEL: func.func @gather_softmax_scores
// CHECK: saga.gather softmax_sum %{{.*}} score %{{.*}} : !saga.edge<4x8xf32>, !saga.edge<4x8xf32> -> !saga.vertex<4x8xf32>
// CHECK: saga.gather softmax_sum %{{.*}} score %{{.*}} : !saga.edge<4x8xf32>, !saga.edge<f32> -> !saga.vertex<4x8xf32>
func.func @gather_softmax_scores(%m: !saga.edge<4x8xf32>, %full: !saga.edge<4x8xf32>,
                                 %one: !saga.edge<f32>)
    -> (!saga.vertex<4x8xf32>, !saga.vertex<4x8xf32>) {
  %0 = saga.gather softmax_sum %m score %full
      : !saga.edge<4x8xf32>, !saga.edge<4x8xf32> -> !saga.vertex<4x8xf32>
  %1 = saga.gather softmax_sum %m score %one
      : !saga.edge<4x8xf32>, !saga.edge<f32> -> !saga.vertex<4x8xf32>
  return %0, %1 : !saga.vertex<4x8xf32>, !saga.vertex<4x8xf32>
}

// Tests that every elementwise unary op round-trips.
// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[A:.*]] = saga.neg %[[X]] : tensor<4x8xf32>
// CHECK: %[[B:.*]] = saga.relu %[[A]] : tensor<4x8xf32>
// CHECK: %[[C:.*]] = saga.elu %[[B]] : tensor<4x8xf32>
// CHECK: %[[D:.*]] = saga.sigmoid %[[C]] : tensor<4x8xf32>
// CHECK: %[[E:.*]] = saga.tanh %[[D]] : tensor<4x8xf32>
// CHECK: %[[F:.*]] = saga.exp %[[E]] : tensor<4x8xf32>
// CHECK: %[[G:.*]] = saga.log %[[F]] : tensor<4x8xf32>
// CHECK: %[[H:.*]] = saga.rsqrt %[[G]] : tensor<4x8xf32>
// CHECK: %[[I:.*]] = saga.abs %[[H]] : tensor<4x8xf32>
// CHECK: return %[[I]] : tensor<4x8xf32>
func.func @unary(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = saga.neg %x : tensor<4x8xf32>
  %1 = saga.relu %0 : tensor<4x8xf32>
  %2 = saga.elu %1 : tensor<4x8xf32>
  %3 = saga.sigmoid %2 : tensor<4x8xf32>
  %4 = saga.tanh %3 : tensor<4x8xf32>
  %5 = saga.exp %4 : tensor<4x8xf32>
  %6 = saga.log %5 : tensor<4x8xf32>
  %7 = saga.rsqrt %6 : tensor<4x8xf32>
  %8 = saga.abs %7 : tensor<4x8xf32>
  return %8 : tensor<4x8xf32>
}

// Tests that leaky_relu keeps its slope and dropout its rate (0 included for
// both: the checks reject only negative and NaN slopes, and rates outside
// [0, 1)).
// CHECK-LABEL: func.func @leaky_relu_dropout
// CHECK-SAME: (%[[X:.*]]: tensor<16xf32>)
// CHECK: %[[L:.*]] = saga.leaky_relu %[[X]] slope 2.000000e-01 : tensor<16xf32>
// CHECK: %[[D:.*]] = saga.dropout %[[L]] rate 5.000000e-01 : tensor<16xf32>
// CHECK: %[[Z:.*]] = saga.dropout %[[D]] rate 0.000000e+00 : tensor<16xf32>
// CHECK: %[[L0:.*]] = saga.leaky_relu %[[Z]] slope 0.000000e+00 : tensor<16xf32>
// CHECK: return %[[L0]]
func.func @leaky_relu_dropout(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = saga.leaky_relu %x slope 0.2 : tensor<16xf32>
  %1 = saga.dropout %0 rate 0.5 : tensor<16xf32>
  %2 = saga.dropout %1 rate 0.0 : tensor<16xf32>
  %3 = saga.leaky_relu %2 slope 0.0 : tensor<16xf32>
  return %3 : tensor<16xf32>
}

// Tests that the binary ops accept NumPy broadcasting: equal shapes, a
// scalar, a size-1 dimension and a lower-rank operand aligned at the right.
// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[S:.*]]: tensor<f32>, %[[C:.*]]: tensor<4x1xf32>, %[[R:.*]]: tensor<8xf32>)
// CHECK: %[[ADD:.*]] = saga.add %[[A]], %[[A]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: %[[SUB:.*]] = saga.sub %[[S]], %[[ADD]] : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: %[[MUL:.*]] = saga.mul %[[SUB]], %[[C]] : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK: %[[DIV:.*]] = saga.div %[[MUL]], %[[R]] : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK: %[[OUT:.*]] = saga.add %[[C]], %[[R]] : tensor<4x1xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK: return %[[DIV]], %[[OUT]]
func.func @binary(%a: tensor<4x8xf32>, %s: tensor<f32>, %c: tensor<4x1xf32>,
                  %r: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = saga.add %a, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = saga.sub %s, %0 : tensor<f32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = saga.mul %1, %c : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  %3 = saga.div %2, %r : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %4 = saga.add %c, %r : tensor<4x1xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %3, %4 : tensor<4x8xf32>, tensor<4x8xf32>
}

// Tests that saga.matmul round-trips for vector @ matrix and for
// vector @ rank-3 weight (multi-head).
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[X:.*]]: tensor<16xf32>, %[[W:.*]]: tensor<16x7xf32>, %[[WH:.*]]: tensor<16x4x8xf32>)
// CHECK: %[[Y:.*]] = saga.matmul %[[X]], %[[W]] : tensor<16xf32>, tensor<16x7xf32> -> tensor<7xf32>
// CHECK: %[[Z:.*]] = saga.matmul %[[X]], %[[WH]] : tensor<16xf32>, tensor<16x4x8xf32> -> tensor<4x8xf32>
// CHECK: return %[[Y]], %[[Z]]
func.func @matmul(%x: tensor<16xf32>, %W: tensor<16x7xf32>, %Wh: tensor<16x4x8xf32>)
    -> (tensor<7xf32>, tensor<4x8xf32>) {
  %0 = saga.matmul %x, %W : tensor<16xf32>, tensor<16x7xf32> -> tensor<7xf32>
  %1 = saga.matmul %x, %Wh : tensor<16xf32>, tensor<16x4x8xf32> -> tensor<4x8xf32>
  return %0, %1 : tensor<7xf32>, tensor<4x8xf32>
}

// Tests that every saga.reduce kind round-trips, with positive and negative
// axes; a negative axis is kept as written.
// CHECK-LABEL: func.func @reduce
// CHECK-SAME: (%[[Z:.*]]: tensor<4x8xf32>)
// CHECK: saga.reduce sum %[[Z]] axis -1 : tensor<4x8xf32> -> tensor<4xf32>
// CHECK: saga.reduce mean %[[Z]] axis 0 : tensor<4x8xf32> -> tensor<8xf32>
// CHECK: saga.reduce max %[[Z]] axis -2 : tensor<4x8xf32> -> tensor<8xf32>
// CHECK: saga.reduce min %[[Z]] axis 1 : tensor<4x8xf32> -> tensor<4xf32>
func.func @reduce(%z: tensor<4x8xf32>)
    -> (tensor<4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>) {
  %0 = saga.reduce sum %z axis -1 : tensor<4x8xf32> -> tensor<4xf32>
  %1 = saga.reduce mean %z axis 0 : tensor<4x8xf32> -> tensor<8xf32>
  %2 = saga.reduce max %z axis -2 : tensor<4x8xf32> -> tensor<8xf32>
  %3 = saga.reduce min %z axis 1 : tensor<4x8xf32> -> tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>
}

// Tests that saga.concat of two and of three inputs round-trips, along a
// positive and a negative axis.
// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.*]]: tensor<16xf32>, %[[B:.*]]: tensor<8xf32>, %[[C:.*]]: tensor<4x2xf32>, %[[D:.*]]: tensor<4x3xf32>)
// CHECK: saga.concat %[[A]], %[[B]] axis 0 : tensor<16xf32>, tensor<8xf32> -> tensor<24xf32>
// CHECK: saga.concat %[[C]], %[[D]], %[[C]] axis -1 : tensor<4x2xf32>, tensor<4x3xf32>, tensor<4x2xf32> -> tensor<4x7xf32>
func.func @concat(%a: tensor<16xf32>, %b: tensor<8xf32>, %c: tensor<4x2xf32>,
                  %d: tensor<4x3xf32>) -> (tensor<24xf32>, tensor<4x7xf32>) {
  %0 = saga.concat %a, %b axis 0 : tensor<16xf32>, tensor<8xf32> -> tensor<24xf32>
  %1 = saga.concat %c, %d, %c axis -1
      : tensor<4x2xf32>, tensor<4x3xf32>, tensor<4x2xf32> -> tensor<4x7xf32>
  return %0, %1 : tensor<24xf32>, tensor<4x7xf32>
}

// Tests that saga.reshape round-trips between shapes of the same element
// count, rank-0 included.
// CHECK-LABEL: func.func @reshape
// CHECK: %[[R:.*]] = saga.reshape %{{.*}} : tensor<32xf32> -> tensor<4x8xf32>
// CHECK: saga.reshape %[[R]] : tensor<4x8xf32> -> tensor<2x16xf32>
// CHECK: saga.reshape %{{.*}} : tensor<1xf32> -> tensor<f32>
func.func @reshape(%x: tensor<32xf32>, %o: tensor<1xf32>) -> (tensor<2x16xf32>, tensor<f32>) {
  %0 = saga.reshape %x : tensor<32xf32> -> tensor<4x8xf32>
  %1 = saga.reshape %0 : tensor<4x8xf32> -> tensor<2x16xf32>
  %2 = saga.reshape %o : tensor<1xf32> -> tensor<f32>
  return %1, %2 : tensor<2x16xf32>, tensor<f32>
}

// Tests that the losses round-trip: cross_entropy over vertex logits and
// labels, and l2 of a parameter tensor.
// CHECK-LABEL: func.func @losses
// CHECK-SAME: (%[[OUT:.*]]: !saga.vertex<7xf32>, %[[LABEL:.*]]: !saga.vertex<i32>, %[[W:.*]]: tensor<16x7xf32>)
// CHECK: %[[CE:.*]] = saga.cross_entropy %[[OUT]], %[[LABEL]] : !saga.vertex<7xf32>, !saga.vertex<i32> -> tensor<f32>
// CHECK: %[[L2:.*]] = saga.l2 %[[W]] : tensor<16x7xf32> -> tensor<f32>
// CHECK: return %[[CE]], %[[L2]] : tensor<f32>, tensor<f32>
func.func @losses(%out: !saga.vertex<7xf32>, %label: !saga.vertex<i32>,
                  %W: tensor<16x7xf32>) -> (tensor<f32>, tensor<f32>) {
  %0 = saga.cross_entropy %out, %label : !saga.vertex<7xf32>, !saga.vertex<i32> -> tensor<f32>
  %1 = saga.l2 %W : tensor<16x7xf32> -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}

// Tests that a complete layer (degree, scatter, gather, apply_vertex) verifies;
// it is the callee of the model below.
// CHECK-LABEL: func.func @conv
// CHECK: saga.degree : !saga.vertex<f32>
// CHECK: saga.scatter src %{{.*}} : !saga.vertex<16xf32> -> !saga.edge<16xf32>
// CHECK: saga.gather mean %{{.*}} : !saga.edge<16xf32> -> !saga.vertex<16xf32>
// CHECK: saga.apply_vertex(%{{.*}}, %{{.*}}) : (!saga.vertex<16xf32>, !saga.vertex<f32>) -> !saga.vertex<7xf32>
func.func @conv(%h: !saga.vertex<16xf32>, %W: tensor<16x7xf32>) -> !saga.vertex<7xf32> {
  %deg = saga.degree : !saga.vertex<f32>
  %src = saga.scatter src %h : !saga.vertex<16xf32> -> !saga.edge<16xf32>
  %a = saga.gather mean %src : !saga.edge<16xf32> -> !saga.vertex<16xf32>
  %out = saga.apply_vertex(%a, %deg) : (!saga.vertex<16xf32>, !saga.vertex<f32>) -> !saga.vertex<7xf32> {
  ^bb0(%x: tensor<16xf32>, %d: tensor<f32>):
    %r = saga.rsqrt %d : tensor<f32>
    %s = saga.mul %x, %r : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
    %m = saga.matmul %s, %W : tensor<16xf32>, tensor<16x7xf32> -> tensor<7xf32>
    saga.yield %m : tensor<7xf32>
  }
  return %out : !saga.vertex<7xf32>
}

// Tests that saga.model round-trips with every initialiser of saga.param and
// saga.return of a domain value and a scalar loss.
// CHECK-LABEL: saga.model @GCN
// CHECK-SAME: (%[[X:.*]]: !saga.vertex<16xf32>, %[[LABEL:.*]]: !saga.vertex<i32>) -> (!saga.vertex<7xf32>, tensor<f32>) {
// CHECK-NEXT: %[[W:.*]] = saga.param "conv0.W" glorot : tensor<16x7xf32>
// CHECK-NEXT: saga.param "conv0.b" zeros : tensor<7xf32>
// CHECK-NEXT: saga.param "conv0.scale" ones : tensor<7xf32>
// CHECK-NEXT: saga.param "conv0.eps" constant(0.000000e+00) : tensor<f32>
// CHECK-NEXT: saga.param "conv0.alpha" constant(-2.500000e-01) : tensor<f32>
// CHECK-NEXT: %[[H:.*]] = func.call @conv(%[[X]], %[[W]]) : (!saga.vertex<16xf32>, tensor<16x7xf32>) -> !saga.vertex<7xf32>
// CHECK-NEXT: %[[LOSS:.*]] = saga.cross_entropy %[[H]], %[[LABEL]] : !saga.vertex<7xf32>, !saga.vertex<i32> -> tensor<f32>
// CHECK-NEXT: saga.return %[[H]], %[[LOSS]] : !saga.vertex<7xf32>, tensor<f32>
// CHECK-NEXT: }
saga.model @GCN(%x: !saga.vertex<16xf32>, %label: !saga.vertex<i32>)
    -> (!saga.vertex<7xf32>, tensor<f32>) {
  %W = saga.param "conv0.W" glorot : tensor<16x7xf32>
  %b = saga.param "conv0.b" zeros : tensor<7xf32>
  %s = saga.param "conv0.scale" ones : tensor<7xf32>
  %eps = saga.param "conv0.eps" constant(0.0) : tensor<f32>
  %alpha = saga.param "conv0.alpha" constant(-0.25) : tensor<f32>
  %h = func.call @conv(%x, %W) : (!saga.vertex<16xf32>, tensor<16x7xf32>) -> !saga.vertex<7xf32>
  %loss = saga.cross_entropy %h, %label : !saga.vertex<7xf32>, !saga.vertex<i32> -> tensor<f32>
  saga.return %h, %loss : !saga.vertex<7xf32>, tensor<f32>
}

// Tests that a model may have an edge input, no parameters and no results.
// CHECK-LABEL: saga.model @Empty
// CHECK-SAME: (%{{.*}}: !saga.edge<4x8xf32>) {
// CHECK-NEXT: saga.return{{$}}
// CHECK-NEXT: }
saga.model @Empty(%e: !saga.edge<4x8xf32>) {
  saga.return
}

// -----

// Tests that the graph-tensor and plan level ops round-trip.
// CHECK-LABEL: func.func private @kernel
func.func private @kernel(index, index, memref<?xf32>, memref<?xf32>)
// CHECK-LABEL: saga.model @lowered
// CHECK:         %[[P:.*]] = saga.propagate max src(%{{.*}}) dst(%{{.*}}) edge(%{{.*}}) : (!saga.vertex<4xf32>, !saga.vertex<4xf32>, !saga.edge<f32>) -> !saga.vertex<4xf32>
// CHECK:         %[[L:.*]] = saga.linear %[[P]], %{{.*}} : !saga.vertex<4xf32>, tensor<4x2xf32> -> !saga.vertex<2xf32>
// CHECK:         %[[K:.*]] = saga.launch @kernel(%[[L]]) {propagate} : (!saga.vertex<2xf32>) -> !saga.vertex<2xf32>
// CHECK:         saga.release %[[L]] : !saga.vertex<2xf32>
// CHECK:         %[[E:.*]]:2 = saga.edge_map src(%{{.*}}) dst(%{{.*}}) edge(%{{.*}}) : (!saga.vertex<4xf32>, !saga.vertex<4xf32>, !saga.edge<f32>) -> (!saga.edge<4xf32>, !saga.edge<f32>) {
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<f32>):
// CHECK:           saga.yield %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<f32>
// CHECK:         saga.propagate softmax_sum src() dst() edge(%[[E]]#0, %[[E]]#1) {reversed}
// CHECK:         %[[M:.*]]:2 = saga.launch @kernel(%{{.*}}) {edge_map} : (!saga.vertex<4xf32>) -> (!saga.edge<4xf32>, !saga.edge<f32>)
// CHECK:         saga.release %[[M]]#1 : !saga.edge<f32>
saga.model @lowered(%x: !saga.vertex<4xf32>, %w: !saga.edge<f32>) -> !saga.vertex<2xf32> {
  %W = saga.param "W" glorot : tensor<4x2xf32>
  %p = saga.propagate max src(%x) dst(%x) edge(%w) : (!saga.vertex<4xf32>, !saga.vertex<4xf32>, !saga.edge<f32>) -> !saga.vertex<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<f32>):
    %s = saga.sub %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %m = saga.mul %s, %c : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    saga.yield %m : tensor<4xf32>
  }
  %l = saga.linear %p, %W : !saga.vertex<4xf32>, tensor<4x2xf32> -> !saga.vertex<2xf32>
  %k = saga.launch @kernel(%l) {propagate} : (!saga.vertex<2xf32>) -> !saga.vertex<2xf32>
  saga.release %l : !saga.vertex<2xf32>
  %e:2 = saga.edge_map src(%x) dst(%x) edge(%w) : (!saga.vertex<4xf32>, !saga.vertex<4xf32>, !saga.edge<f32>) -> (!saga.edge<4xf32>, !saga.edge<f32>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<f32>):
    %s = saga.sub %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    saga.yield %s, %c : tensor<4xf32>, tensor<f32>
  }
  %r = saga.propagate softmax_sum src() dst() edge(%e#0, %e#1) {reversed} : (!saga.edge<4xf32>, !saga.edge<f32>) -> !saga.vertex<4xf32> {
  ^bb0(%a: tensor<4xf32>, %c: tensor<f32>):
    saga.yield %a, %c : tensor<4xf32>, tensor<f32>
  }
  %m:2 = saga.launch @kernel(%x) {edge_map} : (!saga.vertex<4xf32>) -> (!saga.edge<4xf32>, !saga.edge<f32>)
  saga.release %m#1 : !saga.edge<f32>
  saga.return %k : !saga.vertex<2xf32>
}

// Tests the graph readouts (graph classification): each graph of a batch
// reduced over its vertices, the result on every vertex of the graph.
// CHECK-LABEL: saga.model @readouts
// CHECK:         %[[S:.*]] = saga.readout sum %{{.*}} : !saga.vertex<4xf32>
// CHECK:         saga.readout_grad min %{{.*}}, %[[S]], %[[S]] : !saga.vertex<4xf32>
saga.model @readouts(%x: !saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  %s = saga.readout sum %x : !saga.vertex<4xf32>
  %g = saga.readout_grad min %x, %s, %s : !saga.vertex<4xf32>
  saga.return %g : !saga.vertex<4xf32>
}

// Tests link prediction's loss over the bound pairs and its gradient.
// CHECK-LABEL: saga.model @pair_loss
// CHECK:         %[[L:.*]] = saga.pair_bce %{{.*}} : !saga.vertex<16xf32> -> tensor<f32>
// CHECK:         saga.pair_bce_grad %{{.*}}, %[[L]] : !saga.vertex<16xf32>, tensor<f32>
saga.model @pair_loss(%h: !saga.vertex<16xf32>) -> !saga.vertex<16xf32> {
  %l = saga.pair_bce %h : !saga.vertex<16xf32> -> tensor<f32>
  %d = saga.pair_bce_grad %h, %l : !saga.vertex<16xf32>, tensor<f32>
  saga.return %d : !saga.vertex<16xf32>
}

// Tests batch norm over the vertices and its gradient.
// CHECK-LABEL: saga.model @batch_norm
// CHECK:         %[[Y:.*]] = saga.batch_norm %{{.*}} : !saga.vertex<8xf32>
// CHECK:         saga.batch_norm_grad %{{.*}}, %[[Y]] : !saga.vertex<8xf32>
saga.model @batch_norm(%h: !saga.vertex<8xf32>) -> !saga.vertex<8xf32> {
  %y = saga.batch_norm %h : !saga.vertex<8xf32>
  %d = saga.batch_norm_grad %h, %y : !saga.vertex<8xf32>
  saga.return %d : !saga.vertex<8xf32>
}
