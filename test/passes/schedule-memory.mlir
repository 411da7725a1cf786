// RUN: saga-opt %s --saga-schedule-memory="budget=40000 vertices=1024 edges=4096 intervals=2" | FileCheck %s
// RUN: saga-opt %s --saga-schedule-memory="budget=20000 vertices=1024 edges=4096" | FileCheck %s --check-prefix=AUTO
// RUN: saga-opt %s --saga-schedule-memory="budget=20000 vertices=1024 edges=4096" | saga-opt | FileCheck %s --check-prefix=AUTO
// RUN: saga-opt %s --saga-schedule-memory="budget=32000 vertices=1024 edges=4096 intervals=4" | FileCheck %s --check-prefix=GROUP
// RUN: saga-opt %s --saga-schedule-memory="budget=40000 vertices=1024 edges=4096 intervals=2 op-major=true" | FileCheck %s --check-prefix=OPMAJOR
// RUN: saga-opt %s --saga-schedule-memory="budget=40000 vertices=1024 edges=4096 intervals=2 op-major=true" | saga-opt | FileCheck %s --check-prefix=OPMAJOR
// RUN: saga-opt %s --saga-schedule-memory="budget=40000 vertices=1024 edges=4096 intervals=2 empty-chunks=1" | FileCheck %s --check-prefix=EMPTY
// RUN: saga-opt %s --saga-schedule-memory="budget=40000 vertices=1024 edges=4096 intervals=2 empty-chunks=1" | saga-opt | FileCheck %s --check-prefix=EMPTY
// RUN: not saga-opt %s --saga-schedule-memory="budget=40000 vertices=1024 edges=4096 intervals=2 empty-chunks=4" 2>&1 | FileCheck %s --check-prefix=BADEMPTY
// RUN: not saga-opt %s --saga-schedule-memory="budget=10000 vertices=1024 edges=4096" --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: not saga-opt %s --saga-schedule-memory="vertices=1024" 2>&1 | FileCheck %s --check-prefix=OPTS
// RUN: saga-opt %s --saga-schedule-memory="budget=32000 vertices=1024 edges=4096 intervals=4 devices=2" | FileCheck %s --check-prefix=RING
// RUN: saga-opt %s --saga-schedule-memory="budget=32000 vertices=1024 edges=4096 intervals=4 devices=2" | saga-opt | FileCheck %s --check-prefix=RING
// RUN: saga-opt %s --saga-schedule-memory="budget=32000 vertices=1024 edges=4096 intervals=4 devices=3" | FileCheck %s --check-prefix=RING3
// RUN: not saga-opt %s --saga-schedule-memory="budget=32000 vertices=1024 edges=4096 devices=0" 2>&1 | FileCheck %s --check-prefix=BADRING

// The chunked level of a map -> propagation -> map plan over 1024 vertices
// (vertex values of 4 floats: 4 KiB per 256-row interval). Each map runs
// per interval, the propagation per 2-D chunk [i, j]: destination interval
// j outer (its running state stays resident), source interval i inner;
// the second map runs on interval j as soon as its chunks are done, while
// the propagation's piece j is resident (interleaveRows).
// ROC's plan at 40000 bytes, two intervals: %0's first piece goes down to
// the next tier after chunk [0, 0] and comes back for [0, 1]; the first
// map's input is prefetched a step early; a load may start as soon as its
// last store is queued (prefetch right after the store), at most two steps
// ahead. %1 never leaves the device tier.
// CHECK:      saga.schedule attributes {budget = 40000 : i64, edges = 4096 : i64, group = 1 : i64, intervals = array<i32: 0, 512, 1024>, method = "exact", minimum = 24576 : i64, moved = 32768 : i64, pinned = 0 : i64, planned = 24576 : i64, vertices = 1024 : i64} {
// CHECK-NEXT:   saga.prefetch %arg0 [1] : !saga.vertex<4xf32>
// CHECK-NEXT:   saga.load %arg0 [0] : !saga.vertex<4xf32>
// CHECK-NEXT:   saga.step 0 "launch @map" [-1, 0]
// CHECK-NEXT:   saga.load %arg0 [1] : !saga.vertex<4xf32>
// CHECK-NEXT:   saga.step 1 "launch @map" [-1, 1]
// CHECK-NEXT:   saga.step 2 "launch @prop" [0, 0]
// CHECK-NEXT:   saga.store %0 [0] : !saga.vertex<4xf32>
// CHECK-NEXT:   saga.free %0 [0] : !saga.vertex<4xf32>
// CHECK-NEXT:   saga.prefetch %0 [0] : !saga.vertex<4xf32>
// CHECK-NEXT:   saga.step 3 "launch @prop" [1, 0]
// CHECK-NEXT:   saga.step 4 "launch @map" [-1, 0]
// CHECK-NEXT:   saga.load %0 [0] : !saga.vertex<4xf32>
// CHECK-NEXT:   saga.step 5 "launch @prop" [0, 1]
// CHECK-NEXT:   saga.step 6 "launch @prop" [1, 1]
// CHECK-NEXT:   saga.step 7 "launch @map" [-1, 1]
// CHECK-NEXT:   saga.step 8 "return (optimiser)" [-1, -1]
// CHECK-NEXT: }
// CHECK-NEXT: saga.return %2

// Op-major (each op over every interval before the next): the second map
// runs after both destination intervals, so %1's first piece goes down
// and comes back: 48 KiB moved instead of 32. The schedule says so, and
// reads back in that order.
// OPMAJOR:      saga.schedule attributes {{{.*}} moved = 49152 : i64, op_major, pinned
// OPMAJOR:        saga.step 5 "launch @prop" [1, 1]
// OPMAJOR-NEXT:   saga.load %1 [0] : !saga.vertex<4xf32>
// OPMAJOR-NEXT:   saga.step 6 "launch @map" [-1, 0]
// OPMAJOR-NEXT:   saga.step 7 "launch @map" [-1, 1]

// The same plan when chunk [0, 1] (sources in interval 0, destinations in
// interval 1) holds no edges: that step reads no piece of %0, so %0's first
// piece is neither stored nor loaded again; the schedule lists the chunk
// and moves 16 KiB (the input) instead of 32 KiB.
// EMPTY:      saga.schedule attributes {budget = 40000 : i64, edges = 4096 : i64, empty_chunks = array<i32: 1>, group = 1 : i64, {{.*}} moved = 16384 : i64
// EMPTY:        saga.step 2 "launch @prop" [0, 0]
// EMPTY-NEXT:   saga.step 3 "launch @prop" [1, 0]
// EMPTY-NEXT:   saga.step 4 "launch @map" [-1, 0]
// EMPTY-NEXT:   saga.step 5 "launch @prop" [0, 1]
// EMPTY-NEXT:   saga.step 6 "launch @prop" [1, 1]
// BADEMPTY: saga-schedule-memory: empty chunk 4 is not below 2 x 2

// With half the budget the fewest intervals whose largest step fits twice
// are 4: sixteen chunks, source pieces streamed once per destination
// interval. The printed schedule parses back to itself.
// AUTO:      intervals = array<i32: 0, 256, 512, 768, 1024>, method = "exact"
// AUTO-COUNT-16: saga.step {{[0-9]+}} "launch @prop"
// AUTO:      saga.step 24 "return (optimiser)" [-1, -1]

// At 32000 bytes over 4 intervals the propagation's chunks run in groups
// of two destination intervals: source piece i is loaded once for both
// (i outer, j inner); the second map runs on both after the group.
// GROUP:      group = 2 : i64, {{.*}} moved = 49152 : i64
// GROUP:      saga.load %0 [1] : !saga.vertex<4xf32>
// GROUP-NEXT: saga.step 6 "launch @prop" [1, 0]
// GROUP-NEXT: saga.step 7 "launch @prop" [1, 1]
// GROUP-NEXT: saga.free %0 [1] : !saga.vertex<4xf32>
// GROUP:      saga.step 11 "launch @prop" [3, 1]
// GROUP-NEXT: saga.prefetch %0 [0]
// GROUP-NEXT: saga.step 12 "launch @map" [-1, 0]
// GROUP-NEXT: saga.step 13 "launch @map" [-1, 1]
// GROUP:      saga.step 14 "launch @prop" [0, 2]
// GROUP-NEXT: saga.step 15 "launch @prop" [0, 3]

// SMALL: error: memory budget of 10000 bytes is below the minimum for one chunk: 12288 bytes (4 intervals: step launch @prop [3, 0] needs 12288 bytes, plus 0 bytes of parameter-sized values; twice the step lets loads run ahead)
// OPTS: error: saga-schedule-memory needs budget > 0 and vertices > 0 (got budget=0 vertices=1024 edges=0 intervals=0)

module {
  func.func @map(%b: index, %e: index, %s: i64, %x: memref<?xf32>, %y: memref<?xf32>) attributes {saga.kernel = "map"} {
    return
  }
  func.func @prop(%b: index, %e: index, %s: i64, %o: memref<?xi64>, %n: memref<?xi32>, %id: memref<?xi32>, %w: memref<?xi64>, %ph: i64, %st: memref<?xf32>, %x: memref<?xf32>, %y: memref<?xf32>) attributes {saga.kernel = "propagate", saga.operand_groups = array<i64: 1, 0, 0>, saga.state_width = 4 : i64} {
    return
  }
  saga.model @M(%x: !saga.vertex<4xf32> {saga.name = "x"}) -> (!saga.vertex<4xf32>) {
    %0 = saga.launch @map(%x) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32>
    %1 = saga.launch @prop(%0) {propagate} : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32>
    saga.release %0 : !saga.vertex<4xf32>
    %2 = saga.launch @map(%1) : (!saga.vertex<4xf32>) -> !saga.vertex<4xf32>
    saga.return %2 : !saga.vertex<4xf32>
  }
}

// NGra's ring over two devices: destination intervals [0, 2) on device 0,
// [2, 4) on device 1 (equal estimated in-edges); each propagation loads each
// of the 4 source intervals from the host once and copies it once to the
// other device. Three devices: 4 host loads, 8 peer copies.
// RING: saga.ring = {devices = 2 : i64, host_loads = 4 : i64, owners = array<i32: 0, 0, 1, 1>, peer_copies = 4 : i64}
// RING3: saga.ring = {devices = 3 : i64, host_loads = 4 : i64, owners = array<i32: 0, 0, 1, 2>, peer_copies = 8 : i64}
// BADRING: saga-schedule-memory: devices must be 1 to 64, not 0
