//===- KernelRows.cpp - rows, bodies and edges of a kernel ----------------===//
//
// The KernelBuilder's steps common to every kernel: windows of operand and
// result rows, a stage body emitted on them, results written (streamed when
// they are large) and the operands they may overwrite noted; the loop over a
// row's edges with software prefetch; then the loop over the row range with
// a map's body at each row, or an edge_map's at each in-edge of it (a
// propagation's row is PropagateKernel.cpp's).
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/ScopeExit.h"

#include <algorithm>

using namespace mlir;
using namespace saga;
using namespace saga::codegen;

namespace {

// Software prefetch for propagation: the rows at the other end of an edge
// are random accesses that the hardware prefetcher cannot predict, and a
// kernel that waits for each in turn is latency-bound (bench/suite.sh: 6-8x
// slower at 1M vertices). Each edge requests the rows the edge
// kPrefetchDistance positions ahead will read, up to kPrefetchLines cache
// lines per operand. Rows by edge id (edge operands, an edge_map's
// results) are random too unless the edges were numbered by destination.
constexpr int64_t kPrefetchDistance = kEdgePrefetchDistance,
                  kPrefetchLines = 16;

} // namespace

// A window of row `row` of operand `i`.
RowVal KernelBuilder::rowOf(unsigned i, Value row) {
  Value v = kernel.operands[i];
  RowVal r;
  r.buf = operandBufs[i];
  r.shape = rowShapeOf(v);
  r.elemType = elementTypeOf(v);
  r.offset = row ? e.mul(row, e.index(r.numElements())) : e.index(0);
  return r;
}

// The ops of `block` on the rows in `vals` (its arguments and captured
// values); the rows it yields.
FailureOr<SmallVector<RowVal>>
KernelBuilder::emitBlock(Block &block, DenseMap<Value, RowVal> &vals) {
  for (Operation &inner : block.without_terminator()) {
    auto r = e.emitOp(inner, vals);
    if (failed(r))
      return failure();
    vals[inner.getResult(0)] = *r;
  }
  SmallVector<RowVal> yields;
  for (Value y : block.getTerminator()->getOperands())
    yields.push_back(vals.lookup(y));
  return yields;
}

FailureOr<SmallVector<RowVal>> KernelBuilder::emitBody(ArrayRef<Value> rows) {
  DenseMap<Value, RowVal> vals;
  argRows.clear();
  for (auto [i, arg] : llvm::enumerate(body.getArguments()))
    vals[arg] = argRows.emplace_back(rowOf(i, rows[i]));
  for (auto [i, c] : llvm::enumerate(captured))
    vals[c] = rowOf(body.getNumArguments() + i, Value());
  return emitBlock(body, vals);
}

RowVal KernelBuilder::resultRow(unsigned i, Value row) {
  RowVal r;
  r.buf = resultBufs[i];
  r.shape = rowShapeOf(resultValues[i]);
  r.elemType = elementTypeOf(resultValues[i]);
  r.offset = e.mul(row, e.index(r.numElements()));
  return r;
}

// Writes `y` as row `row` of result `i`, streaming when it can.
void KernelBuilder::writeResult(unsigned i, const RowVal &y, Value row) {
  RowVal to = resultRow(i, row);
  if (y.buf && y.elemType.isF32() && Emitter::streamable(y.numElements()))
    e.copyOut(y, to, streaming[i]);
  else
    e.copy(y, to);
}

// Results that may be written over an operand that dies with the kernel
// (the executor's buffer reuse): pairs (result, operand). Legal when the
// operand is only read at the row being written (a map's operand, an
// epilogue's own operand), has the result's row size and element type,
// and no value yielded for another result is a window of it (yields are
// copied out one result after another; every computed row is complete
// before the first copy). The result's own yield may be the operand row
// itself (a reshape): the copy then rewrites what is there.
void KernelBuilder::noteOverwritable(
    ArrayRef<RowVal> yields, ArrayRef<std::pair<unsigned, RowVal>> rows) {
  for (auto [r, y] : llvm::enumerate(yields)) {
    Value result = resultValues[r];
    for (auto [i, row] : rows) {
      Value operand = kernel.operands[i];
      if (elementTypeOf(operand) != elementTypeOf(result) ||
          product(rowShapeOf(operand)) != product(rowShapeOf(result)))
        continue;
      bool safe = true;
      for (auto [j, other] : llvm::enumerate(yields))
        if (other.buf == row.buf &&
            (j != r || other.offset != row.offset ||
             other.numElements() != row.numElements()))
          safe = false;
      if (safe)
        overwritable.append({int64_t(r), int64_t(i)});
    }
  }
}

void KernelBuilder::prefetchRow(RowVal r, bool write) {
  int64_t elemBytes = std::max(1u, r.elemType.getIntOrFloatBitWidth() / 8);
  int64_t perLine = std::max<int64_t>(1, 64 / elemBytes);
  int64_t lines = std::min<int64_t>(
      kPrefetchLines, (r.numElements() + perLine - 1) / perLine);
  for (int64_t l = 0; l < lines; ++l)
    memref::PrefetchOp::create(b, loc, r.buf,
                               ValueRange{e.add(r.offset, e.index(l * perLine))},
                               /*isWrite=*/write, /*localityHint=*/3,
                               /*isDataCache=*/true);
}

void KernelBuilder::prefetchAhead(Value pos) {
  unsigned first = reversed ? numSrcs : 0;
  unsigned count = reversed ? numDsts : numSrcs;
  unsigned numResultRows = edgeMap ? op->getNumResults() : 0;
  if (count == 0 && numEdges == 0 && numResultRows == 0)
    return;
  Value last = arith::SubIOp::create(
      b, loc, memref::DimOp::create(b, loc, sources, 0), e.index(1));
  Value ahead = arith::MinUIOp::create(
      b, loc, e.add(pos, e.index(kPrefetchDistance)), last);
  if (count) {
    Value w = arith::IndexCastOp::create(
        b, loc, indexType,
        memref::LoadOp::create(b, loc, sources, ValueRange{ahead}));
    for (unsigned i = first; i < first + count; ++i)
      prefetchRow(rowOf(i, w), /*write=*/false);
  }
  if (numEdges || numResultRows) {
    Value id = arith::IndexCastOp::create(
        b, loc, indexType,
        memref::LoadOp::create(b, loc, edgeIds, ValueRange{ahead}));
    for (unsigned i = numSrcs + numDsts; i < numSrcs + numDsts + numEdges;
         ++i)
      prefetchRow(rowOf(i, id), /*write=*/false);
    for (unsigned i = 0; i < numResultRows; ++i)
      prefetchRow(resultRow(i, id), /*write=*/true);
  }
}

// fn(u, eid) for each in-edge (out-edge when reversed) of row v: u is the
// edge's other end. Prefetches ahead, and keys dropout in the edge body by
// the edge, so every edge (and the reversed backward over it) draws its
// own mask.
std::pair<Value, Value>
KernelBuilder::forEachEdge(Value v, function_ref<void(Value, Value)> fn) {
  Value lo = arith::IndexCastOp::create(
      b, loc, indexType,
      memref::LoadOp::create(b, loc, offsets, ValueRange{v}));
  Value hi = arith::IndexCastOp::create(
      b, loc, indexType,
      memref::LoadOp::create(b, loc, offsets,
                             ValueRange{e.add(v, e.index(1))}));
  e.forRange(lo, hi, [&](Value pos) {
    prefetchAhead(pos);
    Value u = arith::IndexCastOp::create(
        b, loc, indexType,
        memref::LoadOp::create(b, loc, sources, ValueRange{pos}));
    Value eid = arith::IndexCastOp::create(
        b, loc, indexType,
        memref::LoadOp::create(b, loc, edgeIds, ValueRange{pos}));
    e.row = keys ? arith::IndexCastOp::create(
                       b, loc, indexType,
                       memref::LoadOp::create(b, loc, keys, ValueRange{pos}))
                       .getResult()
                 : eid;
    llvm::scope_exit restoreRow([&] { e.row = v; });
    fn(u, eid);
  });
  return std::make_pair(lo, hi);
}

void KernelBuilder::emitRows() {
  e.forRange(entry->getArgument(0), entry->getArgument(1), [&](Value v) {
    e.row = v;
    if (edgeMap) {
      emitEdgeMapRow(v);
      return;
    }
    if (!propagate) {
      emitMapRow(v);
      return;
    }
    emitPropagateRow(v);
  });
}

void KernelBuilder::emitEdgeMapRow(Value v) {
  // Each in-edge of v: evaluate the body and store its values in the
  // edge's rows. Every edge is some vertex's in-edge, so the row blocks
  // together write every row of the results, each once.
  forEachEdge(v, [&](Value u, Value eid) {
    SmallVector<Value> rows;
    rows.append(numSrcs, u);
    rows.append(numDsts, v);
    rows.append(numEdges, eid);
    auto yields = emitBody(rows);
    if (failed(yields)) {
      ok = false;
      return;
    }
    for (auto [i, y] : llvm::enumerate(*yields))
      writeResult(i, y, eid);
  });
}

void KernelBuilder::emitMapRow(Value v) {
  SmallVector<Value> rows(body.getNumArguments(), v);
  auto yields = emitBody(rows);
  if (failed(yields)) {
    ok = false;
    return;
  }
  SmallVector<std::pair<unsigned, RowVal>> read;
  for (auto [i, row] : llvm::enumerate(argRows))
    read.push_back({unsigned(i), row});
  noteOverwritable(*yields, read);
  for (auto [i, y] : llvm::enumerate(*yields))
    writeResult(i, y, v);
}
