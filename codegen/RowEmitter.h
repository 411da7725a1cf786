//===- RowEmitter.h - rows of a stage body and loops over them --*- C++ -*-===//
//
// Private to codegen/ (KernelEmitter.h is the interface): RowVal, a
// row-major window of a buffer (or a scalar), and the Emitter that builds
// loops over rows, loads and stores, marks loops for a GPU's lanes
// (`saga.lanes`) and lowers a stage body's ops (Emitter::emitOp, in
// KernelEmitter.cpp, whose header says how).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_CODEGEN_ROWEMITTER_H
#define SAGA_CODEGEN_ROWEMITTER_H

#include "dialect/Saga.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>

namespace saga::codegen {

using namespace mlir;

struct RowVal {
  Value buf;    // a memref, or null for a scalar
  Value offset; // index of the first element in `buf`
  SmallVector<int64_t> shape;
  Value scalar; // the value itself when `buf` is null (a splat constant)
  Type elemType;

  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

inline int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

class Emitter {
public:
  Emitter(OpBuilder &b, Location loc, Block *entry, Value seed)
      : b(b), loc(loc), entry(entry), seed(seed) {}

  Value index(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value add(Value a, Value c) { return arith::AddIOp::create(b, loc, a, c); }
  Value mul(Value a, Value c) { return arith::MulIOp::create(b, loc, a, c); }

  /// A scratch buffer of `n` elements, allocated once at the kernel's entry.
  Value scratch(int64_t n, Type elem) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(entry);
    return memref::AllocaOp::create(b, loc, MemRefType::get({n}, elem));
  }

  RowVal newRow(ArrayRef<int64_t> shape, Type elem) {
    return {scratch(product(shape), elem), index(0),
            SmallVector<int64_t>(shape), Value(), elem};
  }

  Value load(const RowVal &r, Value i) {
    if (!r.buf)
      return r.scalar;
    return memref::LoadOp::create(b, loc, r.buf, ValueRange{add(r.offset, i)});
  }
  void store(const RowVal &r, Value i, Value v) {
    memref::StoreOp::create(b, loc, v, r.buf, ValueRange{add(r.offset, i)});
  }

  /// `for i in [0, n)`: the body runs with the insertion point inside.
  void forEach(int64_t n, function_ref<void(Value)> body) {
    if (n == 1) {
      lanes = nullptr; // no loop to share
      body(index(0));
      return;
    }
    forRange(index(0), index(n), body);
  }
  /// The same, marked for a GPU's lanes (`saga.lanes`, see the header).
  void forEachParallel(int64_t n, function_ref<void(Value)> body) {
    lanes = "parallel";
    forEach(n, body);
  }
  void forEachReduce(int64_t n, function_ref<void(Value)> body) {
    lanes = "reduce";
    forEach(n, body);
  }
  void forRange(Value lo, Value hi, function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, loc, lo, hi, index(1));
    if (lanes)
      loop->setAttr("saga.lanes", b.getStringAttr(lanes));
    lanes = nullptr;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    body(loop.getInductionVar());
  }

  /// Loops over every multi-index of `shape`, innermost last.
  void forNest(ArrayRef<int64_t> shape, SmallVector<Value> &ivs,
               function_ref<void(ArrayRef<Value>)> body) {
    if (ivs.size() == shape.size()) {
      body(ivs);
      return;
    }
    if (shape[ivs.size()] == 1) { // no loop; a pending mark goes deeper
      ivs.push_back(index(0));
      forNest(shape, ivs, body);
      ivs.pop_back();
      return;
    }
    forEach(shape[ivs.size()], [&](Value iv) {
      ivs.push_back(iv);
      forNest(shape, ivs, body);
      ivs.pop_back();
    });
  }

  /// Linear index into an operand of shape `s` broadcast to `out`.
  Value broadcastIndex(ArrayRef<Value> ivs, ArrayRef<int64_t> out,
                       ArrayRef<int64_t> s) {
    Value idx = index(0);
    int64_t stride = 1;
    for (int64_t d = s.size() - 1; d >= 0; --d) {
      int64_t od = out.size() - s.size() + d;
      if (s[d] != 1)
        idx = add(idx, mul(ivs[od], index(stride)));
      stride *= s[d];
    }
    return idx;
  }

  void copy(const RowVal &from, const RowVal &to) {
    forEachParallel(from.numElements(),
            [&](Value i) { store(to, i, load(from, i)); });
  }

  /// Whether `copyOut` can stream rows of `n` elements: whole 64-byte
  /// vectors, and (buffers being 64-byte aligned) every row aligned.
  static bool streamable(int64_t n) { return n % 16 == 0; }

  /// from (a stack row) -> to (a result row, n % 16 == 0): with `streaming`
  /// set, as non-temporal 64-byte stores, which write memory without first
  /// reading the lines in (a result far larger than the caches is written
  /// once and read by a later kernel: reading it in first costs as much
  /// again); otherwise as a plain copy, which keeps it in cache.
  void copyOut(const RowVal &from, const RowVal &to, Value streaming) {
    auto branch = scf::IfOp::create(b, loc, streaming, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    auto type = VectorType::get({16}, from.elemType);
    for (int64_t k = 0; k < from.numElements(); k += 16) {
      Value v = vector::LoadOp::create(b, loc, type, from.buf,
                                       ValueRange{add(from.offset, index(k))});
      vector::StoreOp::create(b, loc, v, to.buf,
                              ValueRange{add(to.offset, index(k))},
                              /*nontemporal=*/true, llvm::MaybeAlign(64));
    }
    b.setInsertionPoint(branch.elseBlock()->getTerminator());
    copy(from, to);
  }

  /// `if (cond) then() else otherwise()`, built at the insertion point.
  void ifElse(Value cond, function_ref<void()> then,
              function_ref<void()> otherwise) {
    auto branch = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    then();
    b.setInsertionPoint(branch.elseBlock()->getTerminator());
    otherwise();
  }
  /// Whether bit `bit` of the i64 `word` is set.
  Value bitSet(Value word, int64_t bit) {
    Value mask = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(bit));
    Value anded = arith::AndIOp::create(b, loc, word, mask);
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne, anded,
        arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0)));
  }

  FailureOr<RowVal> emitOp(Operation &op, DenseMap<Value, RowVal> &vals);

  OpBuilder &b;
  Location loc;
  Block *entry;
  Value seed; // i64: the step's random seed
  Value row;  // index: the row being computed (dropout masks)
  /// No contraction (a * b + c stays two roundings): a max/min message must
  /// come out the same bit for bit in every kernel that evaluates it, since
  /// the backward finds the winning edges by comparing its own evaluation
  /// with the forward output, and LLVM fuses into FMAs case by case.
  bool exact = false;
  /// `saga.lanes` of the next loop made (forEachParallel, forEachReduce).
  const char *lanes = nullptr;

private:
  RowVal elementwise(ArrayRef<RowVal> ins, ArrayRef<int64_t> outShape,
                     function_ref<Value(ArrayRef<Value>)> fn);
};

} // namespace saga::codegen

#endif // SAGA_CODEGEN_ROWEMITTER_H
