// RUN: saga-opt %s --saga-autodiff --split-input-file | FileCheck %s

// Tests that a model's gradients follow its loss (its other results are
// not returned), one per parameter in parameter order, named by
// saga.gradients: the linear gives two GEMMs
// (only the weight's is needed: the input is a graph input), the bias a
// per-vertex contribution summed over rows, the loss its closed form, and
// the dropout a key shared by forward and backward.
// CHECK-LABEL: saga.model @m
// CHECK-SAME:    -> (tensor<f32>, tensor<4x2xf32>, tensor<2xf32>)
// CHECK-SAME:    saga.gradients = ["W", "b"]
// CHECK:         saga.dropout %{{.*}} rate 5.000000e-01 {key = 0 : i64}
// CHECK:         %[[CE:.*]] = saga.cross_entropy_grad
// CHECK:         %[[B:.*]]:2 = saga.apply_vertex
// CHECK:         %[[DB:.*]] = saga.sum_rows %[[B]]#1 : !saga.vertex<2xf32> -> tensor<2xf32>
// CHECK-NOT:     saga.linear_grad_input
// CHECK:         %[[DW:.*]] = saga.linear_grad_weight
// CHECK:         saga.return %{{.*}}, %[[DW]], %[[DB]]
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

// -----

// Tests the gradient through a max propagation whose message reads both
// ends of the edge: a sum propagation counts, per element, the in-edges
// whose message equals the output; the gradient divided by that count
// (0 where it is 0) goes back, by a reversed propagation for the source
// and a forward one for the destination, only to the edges whose message
// equals the output, then through the message's product.
// CHECK-LABEL: saga.model @maxprop
// CHECK:         %[[OUT:.*]] = saga.propagate max src(%[[Y:.*]]) dst(%[[Y]]) edge()
// CHECK:         %[[G:.*]] = saga.cross_entropy_grad %[[OUT]]
// CHECK:         %[[COUNT:.*]] = saga.propagate sum src(%[[Y]]) dst(%[[Y]], %[[OUT]]) edge() :
// CHECK-NEXT:    ^bb0(%[[S:.*]]: tensor<2xf32>, %[[D:.*]]: tensor<2xf32>, %[[O:.*]]: tensor<2xf32>):
// CHECK-NEXT:      %[[M:.*]] = saga.mul %[[S]], %[[D]]
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<2xf32>
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK-NEXT:      %[[DIFF:.*]] = saga.sub %[[M]], %[[O]]
// CHECK-NEXT:      %[[ABS:.*]] = saga.abs %[[DIFF]]
// CHECK-NEXT:      %[[EQ:.*]] = saga.select_positive %[[ABS]], %[[ZERO]], %[[ONE]]
// CHECK-NEXT:      saga.yield %[[EQ]]
// CHECK:         %[[SHARE:.*]] = saga.apply_vertex(%[[G]], %[[COUNT]])
// CHECK-NEXT:    ^bb0(%[[GA:.*]]: tensor<2xf32>, %[[CA:.*]]: tensor<2xf32>):
// CHECK-NEXT:      %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK-NEXT:      %[[Q:.*]] = saga.div %[[GA]], %[[CA]]
// CHECK-NEXT:      %[[R:.*]] = saga.select_positive %[[CA]], %[[Q]], %[[Z]]
// CHECK-NEXT:      saga.yield %[[R]]
// CHECK:         %[[DSRC:.*]] = saga.propagate sum src(%[[Y]]) dst(%[[Y]], %[[SHARE]], %[[OUT]]) edge() {reversed}
// CHECK-NEXT:    ^bb0(%[[S2:.*]]: tensor<2xf32>, %[[D2:.*]]: tensor<2xf32>, %[[SH2:.*]]: tensor<2xf32>, %[[O2:.*]]: tensor<2xf32>):
// CHECK-NEXT:      %[[M2:.*]] = saga.mul %[[S2]], %[[D2]]
// CHECK-NEXT:      %[[Z2:.*]] = arith.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK-NEXT:      %[[DIFF2:.*]] = saga.sub %[[M2]], %[[O2]]
// CHECK-NEXT:      %[[ABS2:.*]] = saga.abs %[[DIFF2]]
// CHECK-NEXT:      %[[DM:.*]] = saga.select_positive %[[ABS2]], %[[Z2]], %[[SH2]]
// CHECK-NEXT:      %[[DS:.*]] = saga.mul %[[DM]], %[[D2]]
// CHECK:           saga.yield %[[DS]]
// CHECK:         %[[DDST:.*]] = saga.propagate sum src(%[[Y]]) dst(%[[Y]], %[[SHARE]], %[[OUT]]) edge() :
// CHECK-NEXT:    ^bb0(%[[S3:.*]]: tensor<2xf32>, %{{.*}}: tensor<2xf32>, %[[SH3:.*]]: tensor<2xf32>, %{{.*}}: tensor<2xf32>):
// CHECK:           %[[DM3:.*]] = saga.select_positive %{{.*}}, %{{.*}}, %[[SH3]]
// CHECK:           %[[DD:.*]] = saga.mul %[[DM3]], %[[S3]]
// CHECK-NEXT:      saga.yield %[[DD]]
// CHECK:         %[[SUM:.*]] = saga.apply_vertex(%[[DSRC]], %[[DDST]])
// CHECK:         %[[DW:.*]] = saga.linear_grad_weight %{{.*}}, %[[SUM]]
// CHECK:         saga.return %{{.*}}, %[[DW]]
saga.model @maxprop(%x: !saga.vertex<4xf32> {saga.name = "x"}, %l: !saga.vertex<i32> {saga.name = "label"}) -> (!saga.vertex<2xf32>, tensor<f32>) {
  %W = saga.param "W" glorot : tensor<4x2xf32>
  %y = saga.linear %x, %W : !saga.vertex<4xf32>, tensor<4x2xf32> -> !saga.vertex<2xf32>
  %a = saga.propagate max src(%y) dst(%y) edge() : (!saga.vertex<2xf32>, !saga.vertex<2xf32>) -> !saga.vertex<2xf32> {
  ^bb0(%s: tensor<2xf32>, %d: tensor<2xf32>):
    %m = saga.mul %s, %d : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    saga.yield %m : tensor<2xf32>
  }
  %loss = saga.cross_entropy %a, %l : !saga.vertex<2xf32>, !saga.vertex<i32> -> tensor<f32>
  saga.return %a, %loss : !saga.vertex<2xf32>, tensor<f32>
}

// -----

// Tests that a min propagation gets the same count-and-select backward.
// CHECK-LABEL: saga.model @minprop
// CHECK:         %[[OUT:.*]] = saga.propagate min src(%[[Y:.*]]) dst() edge()
// CHECK:         %[[COUNT:.*]] = saga.propagate sum src(%[[Y]]) dst(%[[OUT]]) edge() :
// CHECK:           saga.select_positive
// CHECK:         %[[SHARE:.*]] = saga.apply_vertex(%{{.*}}, %[[COUNT]])
// CHECK:         saga.propagate sum src(%[[Y]]) dst(%[[SHARE]], %[[OUT]]) edge() {reversed}
// CHECK:           saga.select_positive
saga.model @minprop(%x: !saga.vertex<4xf32> {saga.name = "x"}, %l: !saga.vertex<i32> {saga.name = "label"}) -> (!saga.vertex<2xf32>, tensor<f32>) {
  %W = saga.param "W" glorot : tensor<4x2xf32>
  %y = saga.linear %x, %W : !saga.vertex<4xf32>, tensor<4x2xf32> -> !saga.vertex<2xf32>
  %a = saga.propagate min src(%y) dst() edge() : (!saga.vertex<2xf32>) -> !saga.vertex<2xf32> {
  ^bb0(%t: tensor<2xf32>):
    saga.yield %t : tensor<2xf32>
  }
  %loss = saga.cross_entropy %a, %l : !saga.vertex<2xf32>, !saga.vertex<i32> -> tensor<f32>
  saga.return %a, %loss : !saga.vertex<2xf32>, tensor<f32>
}

// -----

// Tests that a parameter read inside the edge function gets a sum over the
// edges: a propagation whose body yields the per-edge outer product (a row
// of the parameter's shape per vertex), then a sum over the rows.
// CHECK-LABEL: saga.model @edgeparam
// CHECK-SAME:    saga.gradients = ["W"]
// CHECK:         %[[ROWS:.*]] = saga.propagate sum src(%{{.*}}) dst(%{{.*}}) edge() : (!saga.vertex<4xf32>, !saga.vertex<2xf32>) -> !saga.vertex<4x2xf32>
// CHECK:           saga.matmul %{{.*}}, %{{.*}} : tensor<4x1xf32>, tensor<1x2xf32> -> tensor<4x2xf32>
// CHECK:         %[[DW:.*]] = saga.sum_rows %[[ROWS]] : !saga.vertex<4x2xf32> -> tensor<4x2xf32>
// CHECK:         saga.return %{{.*}}, %[[DW]]
saga.model @edgeparam(%x: !saga.vertex<4xf32> {saga.name = "x"}, %l: !saga.vertex<i32> {saga.name = "label"}) -> (!saga.vertex<2xf32>, tensor<f32>) {
  %W = saga.param "W" glorot : tensor<4x2xf32>
  %a = saga.propagate sum src(%x) dst() edge() : (!saga.vertex<4xf32>) -> !saga.vertex<2xf32> {
  ^bb0(%t: tensor<4xf32>):
    %m = saga.matmul %t, %W : tensor<4xf32>, tensor<4x2xf32> -> tensor<2xf32>
    saga.yield %m : tensor<2xf32>
  }
  %loss = saga.cross_entropy %a, %l : !saga.vertex<2xf32>, !saga.vertex<i32> -> tensor<f32>
  saga.return %a, %loss : !saga.vertex<2xf32>, tensor<f32>
}

// -----

// Tests the gradient through a softmax-weighted sum: the log of the
// softmax's normaliser is recomputed by one logsumexp propagation of the
// score, and delta = <g, out> per head is made once per vertex, so that no
// backward propagation reads (or keeps alive) the forward output; each
// edge's weight is alpha = exp(score - lse) and its score gradient
// alpha * (<g, msg> - delta).
// CHECK-LABEL: saga.model @softmax
// CHECK:         %[[A:.*]] = saga.propagate softmax_sum
// CHECK:         %[[L:.*]] = saga.propagate logsumexp src(%{{.*}}) dst(%{{.*}}) edge() : {{.*}} -> !saga.vertex<2xf32>
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %[[E:.*]] = saga.add
// CHECK-NEXT:      saga.yield %[[E]] : tensor<2xf32>
// CHECK-NOT:     saga.propagate max
// CHECK:         %[[D:.*]] = saga.apply_vertex(%{{.*}}, %[[A]]) : (!saga.vertex<2x2xf32>, !saga.vertex<2x2xf32>) -> !saga.vertex<2xf32>
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      saga.mul
// CHECK-NEXT:      saga.reduce sum
// CHECK-NEXT:      saga.yield
// CHECK:         saga.propagate sum src({{.*}}) dst({{.*}}%[[D]], %[[L]]) edge() {reversed}
// CHECK:           saga.sub
// CHECK-NEXT:      saga.exp
// CHECK-NOT:       saga.div
// CHECK:           saga.yield
// CHECK-NOT:     saga.propagate {{.*}}%[[A]]
saga.model @softmax(%x: !saga.vertex<4xf32> {saga.name = "x"}, %l: !saga.vertex<i32> {saga.name = "label"}) -> (!saga.vertex<4xf32>, tensor<f32>) {
  %W = saga.param "W" glorot : tensor<4x2x2xf32>
  %z = saga.linear %x, %W : !saga.vertex<4xf32>, tensor<4x2x2xf32> -> !saga.vertex<2x2xf32>
  %s = saga.apply_vertex(%z) : (!saga.vertex<2x2xf32>) -> !saga.vertex<2xf32> {
  ^bb0(%t: tensor<2x2xf32>):
    %r = saga.reduce sum %t axis -1 : tensor<2x2xf32> -> tensor<2xf32>
    saga.yield %r : tensor<2xf32>
  }
  %a = saga.propagate softmax_sum src(%s, %z) dst(%s) edge() : (!saga.vertex<2xf32>, !saga.vertex<2x2xf32>, !saga.vertex<2xf32>) -> !saga.vertex<2x2xf32> {
  ^bb0(%p: tensor<2xf32>, %m: tensor<2x2xf32>, %q: tensor<2xf32>):
    %e = saga.add %p, %q : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    saga.yield %m, %e : tensor<2x2xf32>, tensor<2xf32>
  }
  %o = saga.apply_vertex(%a) : (!saga.vertex<2x2xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%t: tensor<2x2xf32>):
    %r = saga.reshape %t : tensor<2x2xf32> -> tensor<4xf32>
    saga.yield %r : tensor<4xf32>
  }
  %loss = saga.cross_entropy %o, %l : !saga.vertex<4xf32>, !saga.vertex<i32> -> tensor<f32>
  saga.return %o, %loss : !saga.vertex<4xf32>, tensor<f32>
}

// -----

// Tests a max reduction's gradient inside a body: the result expanded back
// along the axis, the elements equal to it (|x - max| not positive)
// counted, and the upstream gradient split among them; no argmax.
// CHECK-LABEL: saga.model @maxreduce
// CHECK:         saga.apply_vertex
// CHECK:         saga.apply_vertex
// CHECK:           %[[R:.*]] = saga.reshape %{{.*}} : tensor<4xf32> -> tensor<2x2xf32>
// CHECK:           %[[M:.*]] = saga.reduce max %[[R]] axis -1 : tensor<2x2xf32> -> tensor<2xf32>
// CHECK:           %[[G:.*]] = saga.add %{{.*}}, %{{.*}} : tensor<2x2xf32>, tensor<2x1xf32> -> tensor<2x2xf32>
// CHECK:           saga.reshape %[[M]] : tensor<2xf32> -> tensor<2x1xf32>
// CHECK:           %[[MX:.*]] = saga.add %{{.*}}, %{{.*}} : tensor<2x2xf32>, tensor<2x1xf32> -> tensor<2x2xf32>
// CHECK:           %[[D:.*]] = saga.sub %[[R]], %[[MX]]
// CHECK:           %[[OFF:.*]] = saga.abs %[[D]]
// CHECK:           %[[EQ:.*]] = saga.select_positive %[[OFF]], %{{.*}}, %{{.*}}
// CHECK:           saga.reduce sum %[[EQ]] axis 1 : tensor<2x2xf32> -> tensor<2xf32>
// CHECK:           %[[SHARE:.*]] = saga.div %[[G]], %{{.*}}
// CHECK:           saga.select_positive %[[OFF]], %{{.*}}, %[[SHARE]]
saga.model @maxreduce(%x: !saga.vertex<4xf32> {saga.name = "x"}, %l: !saga.vertex<i32> {saga.name = "label"}) -> (!saga.vertex<2xf32>, tensor<f32>) {
  %W = saga.param "W" glorot : tensor<4x4xf32>
  %y = saga.linear %x, %W : !saga.vertex<4xf32>, tensor<4x4xf32> -> !saga.vertex<4xf32>
  %a = saga.apply_vertex(%y) : (!saga.vertex<4xf32>) -> !saga.vertex<2xf32> {
  ^bb0(%t: tensor<4xf32>):
    %r = saga.reshape %t : tensor<4xf32> -> tensor<2x2xf32>
    %m = saga.reduce max %r axis -1 : tensor<2x2xf32> -> tensor<2xf32>
    saga.yield %m : tensor<2xf32>
  }
  %loss = saga.cross_entropy %a, %l : !saga.vertex<2xf32>, !saga.vertex<i32> -> tensor<f32>
  saga.return %a, %loss : !saga.vertex<2xf32>, tensor<f32>
}

// -----

// Tests concat's gradient: each input gets its own range of the result's
// gradient, one slice each along the concatenated axis.
// CHECK-LABEL: saga.model @concat
// CHECK:         saga.apply_vertex
// CHECK:           saga.slice %{{.*}} axis 0 offset 0 size 4 : tensor<6xf32> -> tensor<4xf32>
// CHECK:           saga.slice %{{.*}} axis 0 offset 4 size 2 : tensor<6xf32> -> tensor<2xf32>
saga.model @concat(%x: !saga.vertex<4xf32> {saga.name = "x"}, %l: !saga.vertex<i32> {saga.name = "label"}) -> (!saga.vertex<6xf32>, tensor<f32>) {
  %W = saga.param "W" glorot : tensor<4x4xf32>
  %U = saga.param "U" glorot : tensor<4x2xf32>
  %y = saga.linear %x, %W : !saga.vertex<4xf32>, tensor<4x4xf32> -> !saga.vertex<4xf32>
  %z = saga.linear %x, %U : !saga.vertex<4xf32>, tensor<4x2xf32> -> !saga.vertex<2xf32>
  %a = saga.apply_vertex(%y, %z) : (!saga.vertex<4xf32>, !saga.vertex<2xf32>) -> !saga.vertex<6xf32> {
  ^bb0(%s: tensor<4xf32>, %t: tensor<2xf32>):
    %c = saga.concat %s, %t axis 0 : tensor<4xf32>, tensor<2xf32> -> tensor<6xf32>
    saga.yield %c : tensor<6xf32>
  }
  %loss = saga.cross_entropy %a, %l : !saga.vertex<6xf32>, !saga.vertex<i32> -> tensor<f32>
  saga.return %a, %loss : !saga.vertex<6xf32>, tensor<f32>
}

// -----

// Tests the graph readouts' gradients: a sum (mean) readout's is the sum
// (mean) readout of the incoming gradient; a max readout's routes it to the
// arg max with saga.readout_grad, which reads the readout's input and
// result.
// CHECK-LABEL: saga.model @readouts
// CHECK-DAG:     %[[S:.*]] = saga.readout sum %[[Y:[^ ]*]] :
// CHECK-DAG:     %[[M:.*]] = saga.readout max %[[Y]] :
// CHECK-DAG:     saga.readout mean %[[Y]] :
// CHECK-DAG:     saga.readout sum %{{.*}}#0 : !saga.vertex<4xf32>
// CHECK-DAG:     saga.readout mean %{{.*}}#2 : !saga.vertex<4xf32>
// CHECK-DAG:     saga.readout_grad max %[[Y]], %[[M]], %{{.*}}#1 : !saga.vertex<4xf32>
saga.model @readouts(%x: !saga.vertex<4xf32> {saga.name = "x"}, %l: !saga.vertex<i32> {saga.name = "label"}) -> (!saga.vertex<12xf32>, tensor<f32>) {
  %W = saga.param "W" glorot : tensor<4x4xf32>
  %y = saga.linear %x, %W : !saga.vertex<4xf32>, tensor<4x4xf32> -> !saga.vertex<4xf32>
  %s = saga.readout sum %y : !saga.vertex<4xf32>
  %m = saga.readout max %y : !saga.vertex<4xf32>
  %n = saga.readout mean %y : !saga.vertex<4xf32>
  %a = saga.apply_vertex(%s, %m, %n) : (!saga.vertex<4xf32>, !saga.vertex<4xf32>, !saga.vertex<4xf32>) -> !saga.vertex<12xf32> {
  ^bb0(%p: tensor<4xf32>, %q: tensor<4xf32>, %r: tensor<4xf32>):
    %c = saga.concat %p, %q, %r axis 0 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<12xf32>
    saga.yield %c : tensor<12xf32>
  }
  %loss = saga.cross_entropy %a, %l : !saga.vertex<12xf32>, !saga.vertex<i32> -> tensor<f32>
  saga.return %a, %loss : !saga.vertex<12xf32>, tensor<f32>
}
