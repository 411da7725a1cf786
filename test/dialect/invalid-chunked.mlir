// RUN: saga-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Chunked level
//===----------------------------------------------------------------------===//

// Tests that a schedule's steps are numbered in order.
saga.model @steps(%x: !saga.vertex<4xf32>) -> (!saga.vertex<4xf32>) {
  saga.schedule attributes {budget = 1000 : i64, edges = 0 : i64, group = 1 : i64, intervals = array<i32: 0, 256, 512>, method = "exact", minimum = 0 : i64, moved = 0 : i64, pinned = 0 : i64, planned = 0 : i64, vertices = 512 : i64} {
    saga.step 0 "a" [-1, 0]
    // expected-error @+1 {{steps must be numbered in order: expected 1, found 2}}
    saga.step 2 "a" [-1, 1]
  }
  saga.return %x : !saga.vertex<4xf32>
}

// -----

// Tests that a transfer's piece is one of the intervals.
saga.model @piece(%x: !saga.vertex<4xf32>) -> (!saga.vertex<4xf32>) {
  saga.schedule attributes {budget = 1000 : i64, edges = 0 : i64, group = 1 : i64, intervals = array<i32: 0, 256, 512>, method = "exact", minimum = 0 : i64, moved = 0 : i64, pinned = 0 : i64, planned = 0 : i64, vertices = 512 : i64} {
    // expected-error @+1 {{piece 2 is outside the 2 intervals}}
    saga.load %x [2] : !saga.vertex<4xf32>
  }
  saga.return %x : !saga.vertex<4xf32>
}

// -----

// Tests that only a load reads some of a piece's rows.
saga.model @rowsStore(%x: !saga.vertex<4xf32>) -> (!saga.vertex<4xf32>) {
  saga.schedule attributes {budget = 1000 : i64, edges = 0 : i64, group = 1 : i64, intervals = array<i32: 0, 256, 512>, method = "exact", minimum = 0 : i64, moved = 0 : i64, pinned = 0 : i64, planned = 0 : i64, selective, vertices = 512 : i64} {
    // expected-error @+1 {{only a load reads some rows}}
    saga.store %x [1] rows 12 : !saga.vertex<4xf32>
  }
  saga.return %x : !saga.vertex<4xf32>
}

// -----

// Tests that a load of some rows loads at least one, of an interval's piece.
saga.model @rowsZero(%x: !saga.vertex<4xf32>) -> (!saga.vertex<4xf32>) {
  saga.schedule attributes {budget = 1000 : i64, edges = 0 : i64, group = 1 : i64, intervals = array<i32: 0, 256, 512>, method = "exact", minimum = 0 : i64, moved = 0 : i64, pinned = 0 : i64, planned = 0 : i64, selective, vertices = 512 : i64} {
    // expected-error @+1 {{loads at least one row (found 0)}}
    saga.load %x [1] rows 0 : !saga.vertex<4xf32>
  }
  saga.return %x : !saga.vertex<4xf32>
}

// -----

saga.model @rowsWhole(%x: !saga.vertex<4xf32>) -> (!saga.vertex<4xf32>) {
  saga.schedule attributes {budget = 1000 : i64, edges = 0 : i64, group = 1 : i64, intervals = array<i32: 0, 256, 512>, method = "exact", minimum = 0 : i64, moved = 0 : i64, pinned = 0 : i64, planned = 0 : i64, selective, vertices = 512 : i64} {
    // expected-error @+1 {{rows are loaded from an interval's piece of a value}}
    saga.load %x [-1] rows 3 : !saga.vertex<4xf32>
  }
  saga.return %x : !saga.vertex<4xf32>
}

// -----

// Tests that a state piece belongs to a propagation.
saga.model @state(%x: !saga.vertex<4xf32>) -> (!saga.vertex<4xf32>) {
  saga.schedule attributes {budget = 1000 : i64, edges = 0 : i64, group = 1 : i64, intervals = array<i32: 0, 512>, method = "exact", minimum = 0 : i64, moved = 0 : i64, pinned = 0 : i64, planned = 0 : i64, vertices = 512 : i64} {
    // expected-error @+1 {{a state piece belongs to a propagation's result}}
    saga.store state %x [0] : !saga.vertex<4xf32>
  }
  saga.return %x : !saga.vertex<4xf32>
}

// -----

// Tests that interval bounds cover the vertices in increasing order.
saga.model @bounds(%x: !saga.vertex<4xf32>) -> (!saga.vertex<4xf32>) {
  // expected-error @+1 {{interval bounds must increase (256, then 256)}}
  saga.schedule attributes {budget = 1000 : i64, edges = 0 : i64, group = 1 : i64, intervals = array<i32: 0, 256, 256, 512>, method = "exact", minimum = 0 : i64, moved = 0 : i64, pinned = 0 : i64, planned = 0 : i64, vertices = 512 : i64} {
  }
  saga.return %x : !saga.vertex<4xf32>
}
