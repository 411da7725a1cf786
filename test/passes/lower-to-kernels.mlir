// RUN: saga-opt %s --saga-lower-to-kernels --split-input-file | FileCheck %s

// Tests that an apply_vertex becomes a row-range kernel (rows, then the step's
// dropout seed) over flat buffers and
// a launch passing its inputs, then the parameters its body captures; that
// a linear stays a plan step; and that every plan-allocated buffer is
// released after its last use, outputs excepted.
// CHECK-LABEL: func.func @saga_kernel_0
// CHECK-SAME:    (%[[BEGIN:[a-z0-9]+]]: index, %[[END:[a-z0-9]+]]: index, %{{[a-z0-9]+}}: i64, %[[IN:[a-z0-9]+]]: memref<?xf32>, %[[B:[a-z0-9]+]]: memref<?xf32>, %[[OUT:[a-z0-9]+]]: memref<?xf32>)
// CHECK-SAME:    attributes {saga.kernel = "map", saga.overwritable = array<i64: 0, 0>}
// CHECK:         scf.for %[[V:.*]] = %[[BEGIN]] to %[[END]]
// CHECK:           scf.for
// CHECK:             memref.load %[[IN]]
// CHECK:             memref.load %[[B]]
// CHECK:             arith.addf {{.*}} fastmath<contract> : f32
// CHECK:             arith.maximumf
// CHECK:           memref.store {{.*}}, %[[OUT]]
// CHECK-LABEL: saga.model @m
// CHECK:         %[[Y:.*]] = saga.linear
// CHECK:         %[[R:.*]] = saga.launch @saga_kernel_0(%[[Y]], %{{.*}}) : (!saga.vertex<4xf32>, tensor<4xf32>) -> !saga.vertex<4xf32>
// CHECK-NEXT:    saga.release %[[Y]]
// CHECK-NEXT:    saga.return %[[R]]
saga.model @m(%x: !saga.vertex<8xf32> {saga.name = "x"}) -> !saga.vertex<4xf32> {
  %W = saga.param "W" glorot : tensor<8x4xf32>
  %b = saga.param "b" zeros : tensor<4xf32>
  %y = saga.linear %x, %W : !saga.vertex<8xf32>, tensor<8x4xf32> -> !saga.vertex<4xf32>
  %r = saga.apply_vertex(%y) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%t: tensor<4xf32>):
    %s = saga.add %t, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %u = saga.relu %s : tensor<4xf32>
    saga.yield %u : tensor<4xf32>
  }
  saga.return %r : !saga.vertex<4xf32>
}

// -----

// Tests that a propagate becomes a kernel that reads the CSR by destination
// (offsets, sources, edge ids), loops over each vertex's in-edges and
// divides by the in-degree for mean, with zeros for vertices without
// in-edges. The kernel may run over one edge chunk at a time: it resumes the
// running sum from its state row when the phase word's bit 1 is set, saves
// it there when bit 2 (finish) is clear, and otherwise divides by the whole
// graph's in-degree (DEG, not the chunk's offsets).
// CHECK-LABEL: func.func @saga_kernel_0
// CHECK-SAME:    (%{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: i64, %[[OFF:[a-z0-9]+]]: memref<?xi64>, %[[SRC:[a-z0-9]+]]: memref<?xi32>, %[[EID:[a-z0-9]+]]: memref<?xi32>, %[[DEG:[a-z0-9]+]]: memref<?xi64>, %[[PHASE:[a-z0-9]+]]: i64, %[[STATE:[a-z0-9]+]]: memref<?xf32>, %[[H:[a-z0-9]+]]: memref<?xf32>, %[[OUT:[a-z0-9]+]]: memref<?xf32>)
// CHECK-SAME:    saga.gather_bytes = 32 : i64, saga.kernel = "propagate", saga.operand_groups = array<i64: 1, 0, 0>, saga.state_width = 8 : i64
// A middle chunk (resume set, finish clear) skips a row without edges in it.
// CHECK:         %[[LO:.*]] = memref.load %[[OFF]]
// CHECK:         %[[HI:.*]] = memref.load %[[OFF]]
// CHECK:         arith.andi %[[PHASE]], %c2_i64
// CHECK:         arith.andi %[[PHASE]], %c1_i64
// CHECK:         %[[EMPTY:.*]] = arith.cmpi eq, %[[LO]], %[[HI]]
// CHECK:         %[[SKIP:.*]] = arith.andi %{{.*}}, %[[EMPTY]]
// CHECK:         %[[VISIT:.*]] = arith.xori %[[SKIP]]
// CHECK:         scf.if %[[VISIT]] {
// CHECK:         %[[RESUME:.*]] = arith.andi %[[PHASE]], %c1_i64
// CHECK:         %[[R:.*]] = arith.cmpi ne, %[[RESUME]]
// CHECK:         scf.if %[[R]] {
// CHECK:           memref.load %[[STATE]]
// CHECK:         } else {
// CHECK:           arith.constant 0.0
// CHECK:         }
// CHECK:         memref.load %[[OFF]]
// CHECK:         scf.for %[[POS:[a-z0-9]+]] =
// The source row of the edge 32 positions ahead is prefetched (8 floats: one
// cache line), the index clamped to the last edge.
// CHECK:           %[[DIM:.*]] = memref.dim %[[SRC]]
// CHECK:           %[[LAST:.*]] = arith.subi %[[DIM]]
// CHECK:           %[[AHEAD:.*]] = arith.addi %[[POS]], %c32
// CHECK:           %[[CLAMP:.*]] = arith.minui %[[AHEAD]], %[[LAST]]
// CHECK:           memref.load %[[SRC]][%[[CLAMP]]]
// CHECK:           memref.prefetch %[[H]][%{{.*}}], read, locality<3>, data
// CHECK-NOT:       memref.prefetch
// CHECK:           memref.load %[[SRC]][%[[POS]]]
// CHECK:           memref.load %[[EID]]
// CHECK:           memref.load %[[H]]
// CHECK:           arith.addf
// CHECK:         %[[FIN:.*]] = arith.andi %[[PHASE]], %c2_i64
// CHECK:         %[[F:.*]] = arith.cmpi ne, %[[FIN]]
// CHECK:         scf.if %[[F]] {
// CHECK:           memref.load %[[DEG]]
// CHECK:           arith.cmpi eq
// CHECK:           arith.divf
// CHECK:           arith.select
// CHECK:           memref.store {{.*}}, %[[OUT]]
// CHECK:         } else {
// CHECK:           memref.store {{.*}}, %[[STATE]]
// CHECK:         }
// CHECK-LABEL: saga.model @mean
// CHECK:         saga.launch @saga_kernel_0(%{{.*}}) {propagate}
saga.model @mean(%x: !saga.vertex<8xf32> {saga.name = "x"}) -> !saga.vertex<8xf32> {
  %a = saga.propagate mean src(%x) dst() edge() : (!saga.vertex<8xf32>) -> !saga.vertex<8xf32> {
  ^bb0(%t: tensor<8xf32>):
    saga.yield %t : tensor<8xf32>
  }
  saga.return %a : !saga.vertex<8xf32>
}

// -----

// Tests that logsumexp lowers to one pass: per element, a running maximum
// (from -inf) and a running sum of exp(x - maximum), rescaled by
// exp(old - new) when the maximum grows; the result is maximum + log(sum),
// and 0 for a vertex without in-edges.
// CHECK-LABEL: func.func @saga_kernel_0
// CHECK:         %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         scf.for
// CHECK:           memref.store %[[NINF]]
// CHECK:         scf.for
// CHECK:           %[[NEW:.*]] = arith.maximumf %[[OLD:.*]], %[[X:.*]] : f32
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[OLD]], %[[NEW]]
// CHECK-NEXT:      %[[SCALE:.*]] = math.exp %[[D]]
// CHECK-NEXT:      %[[D2:.*]] = arith.subf %[[X]], %[[NEW]]
// CHECK-NEXT:      %[[W:.*]] = math.exp %[[D2]]
// CHECK:           %[[S:.*]] = arith.mulf %{{.*}}, %[[SCALE]]
// CHECK-NEXT:      arith.addf %[[S]], %[[W]]
// CHECK:         arith.cmpi eq
// CHECK:         math.log
// CHECK:         arith.addf
// CHECK:         arith.select
// CHECK-LABEL: saga.model @logsumexp
saga.model @logsumexp(%x: !saga.vertex<2xf32> {saga.name = "x"}) -> !saga.vertex<2xf32> {
  %a = saga.propagate logsumexp src(%x) dst() edge() : (!saga.vertex<2xf32>) -> !saga.vertex<2xf32> {
  ^bb0(%t: tensor<2xf32>):
    saga.yield %t : tensor<2xf32>
  }
  saga.return %a : !saga.vertex<2xf32>
}

// -----

// Tests that softmax_sum lowers to an online softmax: a running maximum and
// sum per head, rescaled with exp as the maximum grows.
// CHECK-LABEL: func.func @saga_kernel_0
// CHECK:         memref.alloca() : memref<2xf32>
// CHECK:         memref.alloca() : memref<2xf32>
// CHECK:         scf.for
// CHECK:           arith.maximumf
// CHECK:           math.exp
// CHECK:           math.exp
saga.model @att(%z: !saga.vertex<2x4xf32> {saga.name = "z"}, %s: !saga.vertex<2xf32> {saga.name = "s"}) -> !saga.vertex<2x4xf32> {
  %g = saga.propagate softmax_sum src(%z, %s) dst() edge() : (!saga.vertex<2x4xf32>, !saga.vertex<2xf32>) -> !saga.vertex<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>, %b: tensor<2xf32>):
    saga.yield %a, %b : tensor<2x4xf32>, tensor<2xf32>
  }
  saga.return %g : !saga.vertex<2x4xf32>
}

// -----

// Tests that an edge_map becomes a kernel over destination rows that takes
// the CSR by destination, walks each row's in-edges, evaluates the body on
// the source row, the destination row and the edge's row (by edge id), and
// stores each yield in the edge's row of its result (by edge id); that the
// rows ahead are prefetched, the results' for writing; that dropout in the
// body is keyed by the edge's id in the graph, read from the last argument
// (saga.edge_keys: a chunked run indexes split edge values by other
// numbers); that its launch is marked {edge_map}; and
// that the reducing propagate reads the edge tensors by edge id and
// releases them after.
// CHECK-LABEL: func.func @saga_kernel_0
// CHECK-SAME:    (%{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: i64, %[[OFF:[a-z0-9]+]]: memref<?xi64>, %[[SRC:[a-z0-9]+]]: memref<?xi32>, %[[EID:[a-z0-9]+]]: memref<?xi32>, %[[Z:[a-z0-9]+]]: memref<?xf32>, %[[D:[a-z0-9]+]]: memref<?xf32>, %[[W:[a-z0-9]+]]: memref<?xf32>, %[[M:[a-z0-9]+]]: memref<?xf32>, %[[S:[a-z0-9]+]]: memref<?xf32>, %[[KEYS:[a-z0-9]+]]: memref<?xi32>)
// CHECK-SAME:    attributes {saga.edge_keys, saga.kernel = "edge_map", saga.operand_groups = array<i64: 1, 1, 1>}
// CHECK:         scf.for %[[V:[a-z0-9]+]] =
// CHECK:           memref.load %[[OFF]][%[[V]]]
// CHECK:           scf.for %[[POS:[a-z0-9]+]] =
// CHECK:             memref.prefetch %[[Z]][%{{.*}}], read
// CHECK:             %[[AHEADID:.*]] = memref.load %[[EID]]
// CHECK:             memref.prefetch %[[W]][%{{.*}}], read
// CHECK:             memref.prefetch %[[M]][%{{.*}}], write
// CHECK:             memref.prefetch %[[S]][%{{.*}}], write
// CHECK:             %[[U:.*]] = memref.load %[[SRC]][%[[POS]]]
// CHECK:             %[[ID:.*]] = memref.load %[[EID]][%[[POS]]]
// CHECK:             %[[E:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK:             %[[KEY:.*]] = memref.load %[[KEYS]][%[[POS]]]
// CHECK:             %[[K:.*]] = arith.index_cast %[[KEY]] : i32 to index
// CHECK:             arith.index_cast %[[K]] : index to i64
// CHECK:             arith.muli
// CHECK:             memref.store %{{.*}}, %[[M]]
// CHECK:             memref.store %{{.*}}, %[[S]]
// CHECK-LABEL: func.func @saga_kernel_1
// CHECK-SAME:    saga.kernel = "propagate"
// CHECK:           memref.load %[[EID]]
// CHECK-LABEL: saga.model @unfused
// CHECK:         %[[R:.*]]:2 = saga.launch @saga_kernel_0(%{{.*}}, %{{.*}}, %{{.*}}) {edge_map} : (!saga.vertex<2x4xf32>, !saga.vertex<2xf32>, !saga.edge<2xf32>) -> (!saga.edge<2x4xf32>, !saga.edge<2xf32>)
// CHECK-NEXT:    %[[G:.*]] = saga.launch @saga_kernel_1(%[[R]]#0, %[[R]]#1) {propagate}
// CHECK-DAG:     saga.release %[[R]]#0 : !saga.edge<2x4xf32>
// CHECK-DAG:     saga.release %[[R]]#1 : !saga.edge<2xf32>
// CHECK:         saga.return %[[G]]
saga.model @unfused(%z: !saga.vertex<2x4xf32> {saga.name = "z"}, %d: !saga.vertex<2xf32> {saga.name = "d"}, %w: !saga.edge<2xf32> {saga.name = "w"}) -> !saga.vertex<2x4xf32> {
  %e:2 = saga.edge_map src(%z) dst(%d) edge(%w) : (!saga.vertex<2x4xf32>, !saga.vertex<2xf32>, !saga.edge<2xf32>) -> (!saga.edge<2x4xf32>, !saga.edge<2xf32>) {
  ^bb0(%a: tensor<2x4xf32>, %b: tensor<2xf32>, %c: tensor<2xf32>):
    %s = saga.add %b, %c : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    %k = saga.dropout %a rate 5.000000e-01 {key = 1 : i64} : tensor<2x4xf32>
    saga.yield %k, %s : tensor<2x4xf32>, tensor<2xf32>
  }
  %g = saga.propagate softmax_sum src() dst() edge(%e#0, %e#1) : (!saga.edge<2x4xf32>, !saga.edge<2xf32>) -> !saga.vertex<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>, %b: tensor<2xf32>):
    saga.yield %a, %b : tensor<2x4xf32>, tensor<2xf32>
  }
  saga.return %g : !saga.vertex<2x4xf32>
}

// -----

// Tests that a row sum runs right after the kernel that makes its input, so
// that the input's other last reader (here a reshape, as of a bias
// gradient) may write over it: the input is released after that reader;
// and that a weight gradient, with the kernel that makes its input when
// nothing else reads that input, runs as soon as its inputs exist: before
// the later kernel %q, so its temporary is freed before %q is made.
// CHECK-LABEL: saga.model @row_sum_first
// CHECK:         %[[G:.*]] = saga.launch @saga_kernel_0(%arg0)
// CHECK-NEXT:    %[[S:.*]] = saga.sum_rows %[[G]]
// CHECK-NEXT:    %[[R:.*]] = saga.launch @saga_kernel_1(%[[G]])
// CHECK-NEXT:    saga.release %[[G]]
// CHECK-NEXT:    %[[T:.*]] = saga.launch @saga_kernel_3(%arg0)
// CHECK-NEXT:    %[[W:.*]] = saga.linear_grad_weight %[[T]], %[[R]]
// CHECK-NEXT:    saga.release %[[T]]
// CHECK-NEXT:    %[[Q:.*]] = saga.launch @saga_kernel_2(%[[R]])
// CHECK:         saga.return %[[Q]], %[[S]], %[[W]]
saga.model @row_sum_first(%x: !saga.vertex<4xf32> {saga.name = "x"}) -> (!saga.vertex<2x2xf32>, tensor<4xf32>, tensor<4x2x2xf32>) {
  %g = saga.apply_vertex(%x) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%t: tensor<4xf32>):
    %u = saga.tanh %t : tensor<4xf32>
    saga.yield %u : tensor<4xf32>
  }
  %r = saga.apply_vertex(%g) : (!saga.vertex<4xf32>) -> !saga.vertex<2x2xf32> {
  ^bb0(%t: tensor<4xf32>):
    %u = saga.reshape %t : tensor<4xf32> -> tensor<2x2xf32>
    saga.yield %u : tensor<2x2xf32>
  }
  %s = saga.sum_rows %g : !saga.vertex<4xf32> -> tensor<4xf32>
  %q = saga.apply_vertex(%r) : (!saga.vertex<2x2xf32>) -> !saga.vertex<2x2xf32> {
  ^bb0(%t: tensor<2x2xf32>):
    %u = saga.exp %t : tensor<2x2xf32>
    saga.yield %u : tensor<2x2xf32>
  }
  %t = saga.apply_vertex(%x) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %u = saga.relu %a : tensor<4xf32>
    saga.yield %u : tensor<4xf32>
  }
  %w = saga.linear_grad_weight %t, %r : !saga.vertex<4xf32>, !saga.vertex<2x2xf32> -> tensor<4x2x2xf32>
  saga.return %q, %s, %w : !saga.vertex<2x2xf32>, tensor<4xf32>, tensor<4x2x2xf32>
}

// -----

// Tests slices: a leading range is a window of the input row (read in place
// at offset 4 of the row, no copy); a range of an inner axis is copied out
// (2 rows of 2 from offset 1 in rows of 3).
// CHECK-LABEL: func.func @saga_kernel_0
// CHECK-SAME:    (%{{.*}}: index, %{{.*}}: index, %{{.*}}: i64, %[[IN:[a-z0-9]+]]: memref<?xf32>, %[[B:[a-z0-9]+]]: memref<?xf32>, %[[OUT:[a-z0-9]+]]: memref<?xf32>, %[[OUT2:[a-z0-9]+]]: memref<?xf32>)
// CHECK:         %[[ROW:.*]] = arith.muli %{{.*}}, %c6
// CHECK:         %[[AT:.*]] = arith.addi %[[ROW]], %c4
// CHECK:         scf.for %[[I:.*]] = %c0{{.*}} to %c2
// CHECK:           %[[J:.*]] = arith.addi %[[AT]], %[[I]]
// CHECK:           memref.load %[[IN]][%[[J]]]
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             %[[K:.*]] = arith.addi %{{.*}}, %c1
// CHECK:             memref.load %[[B]]
// CHECK:             memref.store %{{.*}}, %alloca{{.*}} : memref<4xf32>
saga.model @slices(%x: !saga.vertex<6xf32> {saga.name = "x"}, %y: !saga.vertex<2x3xf32> {saga.name = "y"}) -> (!saga.vertex<2xf32>, !saga.vertex<2x2xf32>) {
  %r:2 = saga.apply_vertex(%x, %y) : (!saga.vertex<6xf32>, !saga.vertex<2x3xf32>) -> (!saga.vertex<2xf32>, !saga.vertex<2x2xf32>) {
  ^bb0(%a: tensor<6xf32>, %b: tensor<2x3xf32>):
    %s = saga.slice %a axis 0 offset 4 size 2 : tensor<6xf32> -> tensor<2xf32>
    %e = saga.exp %s : tensor<2xf32>
    %t = saga.slice %b axis 1 offset 1 size 2 : tensor<2x3xf32> -> tensor<2x2xf32>
    %u = saga.exp %t : tensor<2x2xf32>
    saga.yield %e, %u : tensor<2xf32>, tensor<2x2xf32>
  }
  saga.return %r#0, %r#1 : !saga.vertex<2xf32>, !saga.vertex<2x2xf32>
}
