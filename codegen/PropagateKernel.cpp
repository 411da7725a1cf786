//===- PropagateKernel.cpp - a propagation's row: the reduction -----------===//
//
// A propagate kernel's row v: the running reduction (sum, mean, max, min,
// softmax_sum as an online softmax, logsumexp with rescaled sums) started or
// resumed from v's state row, each in-edge's message folded in, then for a
// chunk before the last the state saved, for the last the result finalised
// (mean over the in-degree, 0 for a vertex without in-edges), streamed out
// or run through the epilogue.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace saga;
using namespace saga::codegen;

void KernelBuilder::emitPropagateRow(Value v) {
  // Propagation: reduce the body's messages over v's in-edges.
  kind = propagate.getKind();
  // A middle chunk (resumed, not finishing) with none of v's edges leaves
  // v's state row as it is: no read or write of it.
  Value chunkLo = memref::LoadOp::create(b, loc, offsets, ValueRange{v});
  Value chunkHi = memref::LoadOp::create(b, loc, offsets,
                                         ValueRange{e.add(v, e.index(1))});
  Value middle = arith::AndIOp::create(
      b, loc, e.bitSet(phase, kPhaseResume),
      arith::XOrIOp::create(
          b, loc, e.bitSet(phase, kPhaseFinish),
          arith::ConstantOp::create(b, loc, b.getBoolAttr(true))));
  Value skip = arith::AndIOp::create(
      b, loc, middle,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, chunkLo,
                            chunkHi));
  auto visit = scf::IfOp::create(
      b, loc,
      arith::XOrIOp::create(
          b, loc, skip,
          arith::ConstantOp::create(b, loc, b.getBoolAttr(true))),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard visitGuard(b);
  b.setInsertionPoint(visit.thenBlock()->getTerminator());
  beginReduction(v);
  forEachEdge(v, [&](Value u, Value eid) { foldMessage(v, u, eid); });
  if (!ok)
    return;

  // A chunk before the last saves the running reduction and stops there.
  auto finish = scf::IfOp::create(b, loc, e.bitSet(phase, kPhaseFinish),
                                  /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(finish.elseBlock()->getTerminator());
    for (auto [r, s] : llvm::zip(running, stateRows(v)))
      e.copy(r, s);
  }
  OpBuilder::InsertionGuard finishGuard(b);
  b.setInsertionPoint(finish.thenBlock()->getTerminator());
  func->setAttr("saga.state_width", tb.getI64IntegerAttr(stateWidth));

  finaliseReduction(v);
  if (!epilogue)
    return;
  emitEpilogue(v);
}

void KernelBuilder::beginReduction(Value v) {
  // With an epilogue the reduced row stays in a stack buffer; so does a
  // row that will be streamed out.
  streamOut =
      !epilogue && Emitter::streamable(product(rowShapeOf(op->getResult(0)))) &&
      elementTypeOf(op->getResult(0)).isF32();
  if (epilogue || streamOut) {
    out = e.newRow(rowShapeOf(op->getResult(0)),
                   elementTypeOf(op->getResult(0)));
  } else {
    out = resultRow(0, v);
  }
  width = out.numElements();
  acc = e.newRow(out.shape, out.elemType);
  // logsumexp: acc is the running maximum, lseSum the sum of exp(message
  // - maximum), rescaled when the maximum grows (one pass, as the online
  // softmax below).
  lse = kind == GatherKind::logsumexp;
  init = kind == GatherKind::max || lse
             ? -std::numeric_limits<float>::infinity()
         : kind == GatherKind::min ? std::numeric_limits<float>::infinity()
                                   : 0.0;
  if (lse)
    lseSum = e.newRow(out.shape, out.elemType);
  softmax = kind == GatherKind::softmax_sum;
  heads = 1;
  if (softmax)
    heads = product(cast<RankedTensorType>(
                        body.getTerminator()->getOperand(1).getType())
                        .getShape());
  per = width / heads;
  if (softmax) {
    runMax = e.newRow({heads}, out.elemType);
    runSum = e.newRow({heads}, out.elemType);
  }
  // The running reduction: acc, then the softmax's running maxima and
  // sums, or logsumexp's rescaled sums. A chunk after the first resumes
  // it from v's state row; a chunk before the last saves it there. The
  // in-edges of v are sorted by their other end, so the chunks visit them
  // in the unchunked order: results are the same bit for bit.
  running = {acc};
  if (softmax)
    running.append({runMax, runSum});
  if (lse)
    running.push_back(lseSum);
  stateWidth = 0;
  for (const RowVal &r : running)
    stateWidth += r.numElements();
  e.ifElse(
      e.bitSet(phase, kPhaseResume),
      [&] {
        for (auto [r, s] : llvm::zip(running, stateRows(v)))
          e.copy(s, r);
      },
      [&] {
        e.forEachParallel(width,
                          [&](Value i) { e.store(acc, i, e.f32(init)); });
        if (lse)
          e.forEachParallel(
              width, [&](Value i) { e.store(lseSum, i, e.f32(0.0)); });
        if (softmax)
          e.forEachParallel(heads, [&](Value h) {
            e.store(runMax, h,
                    e.f32(-std::numeric_limits<float>::infinity()));
            e.store(runSum, h, e.f32(0.0));
          });
      });
}

SmallVector<RowVal> KernelBuilder::stateRows(Value v) {
  SmallVector<RowVal> rows;
  Value at = e.mul(v, e.index(stateWidth));
  for (const RowVal &r : running) {
    RowVal s = r;
    s.buf = state;
    s.offset = at;
    rows.push_back(s);
    at = e.add(at, e.index(r.numElements()));
  }
  return rows;
}

void KernelBuilder::foldMessage(Value v, Value u, Value eid) {
  // `u` is the other end of the edge: its source, or (reversed) its
  // destination.
  SmallVector<Value> rows;
  rows.append(numSrcs, reversed ? v : u);
  rows.append(numDsts, reversed ? u : v);
  rows.append(numEdges, eid);
  auto yields = emitBody(rows);
  if (failed(yields)) {
    ok = false;
    return;
  }
  RowVal msg = (*yields)[0];
  if (lse) {
    e.forEachParallel(width, [&](Value i) {
      Value mOld = e.load(acc, i);
      Value x = e.load(msg, msg.numElements() == 1 ? e.index(0) : i);
      Value mNew = arith::MaximumFOp::create(b, loc, mOld, x);
      Value scale = math::ExpOp::create(
          b, loc, arith::SubFOp::create(b, loc, mOld, mNew));
      Value w = math::ExpOp::create(b, loc,
                                    arith::SubFOp::create(b, loc, x, mNew));
      e.store(lseSum, i,
              arith::AddFOp::create(
                  b, loc,
                  arith::MulFOp::create(b, loc, e.load(lseSum, i), scale),
                  w));
      e.store(acc, i, mNew);
    });
    return;
  }
  if (!softmax) {
    e.forEachParallel(width, [&](Value i) {
      Value a = e.load(acc, i), m = e.load(msg, msg.numElements() == 1 ? e.index(0) : i);
      Value r = kind == GatherKind::max   ? Value(arith::MaximumFOp::create(b, loc, a, m))
                : kind == GatherKind::min ? Value(arith::MinimumFOp::create(b, loc, a, m))
                                          : Value(arith::AddFOp::create(b, loc, a, m));
      e.store(acc, i, r);
    });
    return;
  }
  // Online softmax: rescale the running sums when the maximum grows.
  RowVal score = (*yields)[1];
  e.forEach(heads, [&](Value h) {
    Value x = e.load(score, h);
    Value mOld = e.load(runMax, h);
    Value mNew = arith::MaximumFOp::create(b, loc, mOld, x);
    Value scale = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, mOld, mNew));
    Value w = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, x, mNew));
    e.store(runSum, h,
            arith::AddFOp::create(
                b, loc, arith::MulFOp::create(b, loc, e.load(runSum, h), scale), w));
    e.store(runMax, h, mNew);
    e.forEachParallel(per, [&](Value j) {
      Value i = e.add(e.mul(h, e.index(per)), j);
      Value a = arith::MulFOp::create(b, loc, e.load(acc, i), scale);
      Value m = arith::MulFOp::create(b, loc, e.load(msg, i), w);
      e.store(acc, i, arith::AddFOp::create(b, loc, a, m));
    });
  });
}

void KernelBuilder::finaliseReduction(Value v) {
  // Finalise: mean divides by the in-degree (over all chunks); max/min
  // and softmax give 0 to a vertex without in-edges.
  Value lo = arith::IndexCastOp::create(
      b, loc, indexType,
      memref::LoadOp::create(b, loc, degOffsets, ValueRange{v}));
  Value hi = arith::IndexCastOp::create(
      b, loc, indexType,
      memref::LoadOp::create(b, loc, degOffsets,
                             ValueRange{e.add(v, e.index(1))}));
  Value count = arith::UIToFPOp::create(
      b, loc, b.getF32Type(),
      arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                 arith::SubIOp::create(b, loc, hi, lo)));
  Value empty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lo, hi);
  e.forEachParallel(width, [&](Value i) {
    Value a = e.load(acc, i);
    switch (kind) {
    case GatherKind::mean:
      a = arith::SelectOp::create(b, loc, empty, e.f32(0.0),
                                  arith::DivFOp::create(b, loc, a, count));
      break;
    case GatherKind::max:
    case GatherKind::min:
      a = arith::SelectOp::create(b, loc, empty, e.f32(0.0), a);
      break;
    case GatherKind::softmax_sum: {
      Value h = arith::DivUIOp::create(b, loc, i, e.index(per));
      a = arith::SelectOp::create(
          b, loc, empty, e.f32(0.0),
          arith::DivFOp::create(b, loc, a, e.load(runSum, h)));
      break;
    }
    case GatherKind::logsumexp:
      a = arith::SelectOp::create(
          b, loc, empty, e.f32(0.0),
          arith::AddFOp::create(
              b, loc, a, math::LogOp::create(b, loc, e.load(lseSum, i))));
      break;
    case GatherKind::sum:
      break;
    }
    e.store(out, i, a);
  });
  if (streamOut)
    e.copyOut(out, resultRow(0, v), streaming[0]);
}

void KernelBuilder::emitEpilogue(Value v) {
  // The epilogue on the reduced row and the other operands' rows at v.
  Block &epiBody = epilogue.getBody().front();
  DenseMap<Value, RowVal> vals;
  SmallVector<std::pair<unsigned, RowVal>> read; // the epilogue's own rows
  for (auto [k, arg] : llvm::enumerate(epiBody.getArguments())) {
    if (epilogueArg[k] < 0) {
      vals[arg] = out;
      continue;
    }
    vals[arg] = rowOf(epilogueArg[k], v);
    // Not a value the propagation also reads at the edges' other ends.
    if (!llvm::is_contained(otherSide, kernel.operands[epilogueArg[k]]))
      read.push_back({unsigned(epilogueArg[k]), vals[arg]});
  }
  for (auto [i, c] : llvm::enumerate(epilogueCaptured))
    vals[c] = rowOf(epilogueCapturedStart + i, Value());
  auto yields = emitBlock(epiBody, vals);
  if (failed(yields)) {
    ok = false;
    return;
  }
  noteOverwritable(*yields, read);
  for (auto [i, y] : llvm::enumerate(*yields))
    writeResult(i, y, v);
}
