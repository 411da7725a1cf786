// RUN: saga-opt %s --saga-schedule-memory="budget=40000 vertices=1024 edges=4096" | FileCheck %s
// RUN: saga-opt %s --saga-schedule-memory="budget=40000 vertices=1024 edges=4096" | saga-opt | FileCheck %s
// RUN: saga-opt %s --saga-schedule-memory="budget=200000 vertices=1024 edges=4096 intervals=4 whole-edges=true" | FileCheck %s --check-prefix=WHOLE
// RUN: not saga-opt %s --saga-schedule-memory="budget=40000 vertices=1024 edges=4096 whole-edges=true" --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=SMALL

// Edge values split by destination interval: an edge map writes edge value
// %0 (4 floats per edge over 4096 edges: 64 KiB whole), a propagation over
// in-edges and a reversed one read it. Without the graph, the pass spreads
// the edges over the chunks by their rows (chunk_edges: 256 each at 4
// intervals). Piece j of %0 holds the edges into interval j: the edge map
// over chunk [i, j] writes it (made at i = 0), the propagation over [i, j]
// reads piece j, the reversed one (rows are sources in j, the other ends
// destinations in i) piece i, loaded like a source piece. At 40000 bytes
// the largest step needs 24 KiB, so the plan runs; with the edge value
// whole a step needs 72 KiB and the budget is refused.
// CHECK:      saga.schedule attributes {budget = 40000 : i64, chunk_edges = array<i64: 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256>, edges = 4096 : i64, {{.*}} intervals = array<i32: 0, 256, 512, 768, 1024>, {{.*}} minimum = 24576 : i64
// CHECK:        saga.step 3 "launch @emap" [3, 0]
// CHECK-NEXT:   saga.store %0 [0] : !saga.edge<4xf32>
// CHECK-NEXT:   saga.free %0 [0] : !saga.edge<4xf32>
// CHECK:        saga.load %0 [0] : !saga.edge<4xf32>
// CHECK-NEXT:   saga.step 16 "launch @prop" [0, 0]
// CHECK:        saga.step 32 "launch @rprop" [0, 0]
// CHECK-NEXT:   saga.free %0 [0] : !saga.edge<4xf32>
// CHECK-NEXT:   saga.prefetch %0 [3] : !saga.edge<4xf32>
// CHECK-NEXT:   saga.load %0 [1] : !saga.edge<4xf32>
// CHECK-NEXT:   saga.step 33 "launch @rprop" [1, 0]
// CHECK-NEXT:   saga.free %0 [1] : !saga.edge<4xf32>
// CHECK:        saga.step 35 "launch @rprop" [3, 0]
// CHECK-NEXT:   saga.free %0 [3] : !saga.edge<4xf32>
// CHECK-NEXT:   saga.prefetch %0 [2] : !saga.edge<4xf32>
// CHECK-NEXT:   saga.load %0 [0] : !saga.edge<4xf32>
// CHECK-NEXT:   saga.step 36 "launch @rprop" [0, 1]
// CHECK:        saga.step 48 "return (optimiser)" [-1, -1]

// whole-edges keeps the edge value whole (piece -1) and lists no counts.
// WHOLE:      saga.schedule attributes {budget = 200000 : i64, edges = 4096 : i64, {{.*}} minimum = 73728 : i64
// WHOLE-NOT:  chunk_edges
// WHOLE:      saga.step 0 "launch @emap" [0, 0]
// WHOLE-NOT:  saga.load %0 [0]
// WHOLE:      saga.step 48 "return (optimiser)"
// SMALL: error: memory budget of 40000 bytes is below the minimum for one chunk: 73728 bytes (4 intervals: step launch @prop [3, 0] needs 73728 bytes

module {
  func.func @emap(%b: index, %e: index, %s: i64, %o: memref<?xi64>, %n: memref<?xi32>, %id: memref<?xi32>, %x: memref<?xf32>, %y: memref<?xf32>) attributes {saga.kernel = "edge_map", saga.operand_groups = array<i64: 1, 0, 0>} {
    return
  }
  func.func @prop(%b: index, %e: index, %s: i64, %o: memref<?xi64>, %n: memref<?xi32>, %id: memref<?xi32>, %w: memref<?xi64>, %ph: i64, %st: memref<?xf32>, %m: memref<?xf32>, %y: memref<?xf32>) attributes {saga.kernel = "propagate", saga.operand_groups = array<i64: 0, 0, 1>, saga.state_width = 4 : i64} {
    return
  }
  func.func @rprop(%b: index, %e: index, %s: i64, %o: memref<?xi64>, %n: memref<?xi32>, %id: memref<?xi32>, %w: memref<?xi64>, %ph: i64, %st: memref<?xf32>, %m: memref<?xf32>, %y: memref<?xf32>) attributes {saga.kernel = "propagate", saga.operand_groups = array<i64: 0, 0, 1>, saga.reversed, saga.state_width = 4 : i64} {
    return
  }
  saga.model @M(%x: !saga.vertex<4xf32> {saga.name = "x"}) -> (!saga.vertex<4xf32>, !saga.vertex<4xf32>) {
    %0 = saga.launch @emap(%x) {edge_map} : (!saga.vertex<4xf32>) -> !saga.edge<4xf32>
    %1 = saga.launch @prop(%0) {propagate} : (!saga.edge<4xf32>) -> !saga.vertex<4xf32>
    %2 = saga.launch @rprop(%0) {propagate} : (!saga.edge<4xf32>) -> !saga.vertex<4xf32>
    saga.release %0 : !saga.edge<4xf32>
    saga.return %1, %2 : !saga.vertex<4xf32>, !saga.vertex<4xf32>
  }
}
