//===- KernelEmitter.cpp - loop kernels from stage bodies -----------------===//
//
// A stage body computes on small per-element tensors. Each value of the body
// becomes a `RowVal`: a row-major window (buffer + offset + static shape) of
// an input buffer, a scratch buffer hoisted to the kernel's entry, or a
// scalar SSA value. Each op becomes a loop (flat where shapes agree, a nest
// with broadcast strides otherwise) over loads, arith/math and stores. The
// innermost loop always runs over the contiguous feature axis, which is what
// LLVM vectorises.
//
// Loops say how a GPU's lanes may share them (`saga.lanes`, ignored on the
// CPU): "parallel" where iterations write disjoint elements and read none
// another iteration writes (a warp's lanes take them in turn), "reduce"
// where each iteration folds one value into one loop-invariant element
// (lanes fold partials, then a warp shuffle). Other loops run in every lane.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelEmitter.h"

#include "dialect/Saga.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"

#include <array>
#include <limits>

using namespace mlir;
using namespace saga;

namespace {

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

/// Results of this many elements (32 MiB of f32) or more are written with
/// streaming stores: they outgrow the per-core caches, and the next kernel
/// reads them from memory anyway. Below, writes stay in cache for it.
constexpr int64_t kStreamElements = int64_t(8) << 20;

int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// `shape` around one axis (negative: from the end): the elements before
/// it (`outer`) and after it (`inner`), as a row-major loop nest sees them.
struct AxisSplit {
  int64_t axis, outer, inner;
};
AxisSplit splitAt(ArrayRef<int64_t> shape, int64_t axis) {
  if (axis < 0)
    axis += shape.size();
  return {axis, product(shape.take_front(axis)),
          product(shape.drop_front(axis + 1))};
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

RowVal Emitter::elementwise(ArrayRef<RowVal> ins, ArrayRef<int64_t> outShape,
                            function_ref<Value(ArrayRef<Value>)> fn) {
  RowVal out = newRow(outShape, ins[0].elemType);
  int64_t n = product(outShape);
  bool flat = llvm::all_of(ins, [&](const RowVal &r) {
    return r.shape == SmallVector<int64_t>(outShape) || r.numElements() == 1;
  });
  if (flat) {
    forEachParallel(n, [&](Value i) {
      SmallVector<Value> xs;
      for (const RowVal &r : ins)
        xs.push_back(load(r, r.numElements() == 1 ? index(0) : i));
      store(out, i, fn(xs));
    });
    return out;
  }
  SmallVector<Value> ivs;
  lanes = "parallel"; // the outermost loop of the nest
  forNest(outShape, ivs, [&](ArrayRef<Value> iv) {
    SmallVector<Value> xs;
    for (const RowVal &r : ins)
      xs.push_back(load(r, broadcastIndex(iv, outShape, r.shape)));
    store(out, broadcastIndex(iv, outShape, outShape), fn(xs));
  });
  return out;
}

FailureOr<RowVal> Emitter::emitOp(Operation &op,
                                  DenseMap<Value, RowVal> &vals) {
  auto in = [&](unsigned i) { return vals.lookup(op.getOperand(i)); };
  auto resultShape = [&]() {
    return SmallVector<int64_t>(
        cast<RankedTensorType>(op.getResult(0).getType()).getShape());
  };
  auto contract = arith::FastMathFlagsAttr::get(
      b.getContext(),
      exact ? arith::FastMathFlags::none : arith::FastMathFlags::contract);
  auto unary = [&](function_ref<Value(Value)> fn) {
    return elementwise({in(0)}, in(0).shape,
                       [&](ArrayRef<Value> x) { return fn(x[0]); });
  };
  auto binary = [&](function_ref<Value(Value, Value)> fn) {
    return elementwise({in(0), in(1)}, resultShape(),
                       [&](ArrayRef<Value> x) { return fn(x[0], x[1]); });
  };

  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
    if (!dense || !dense.isSplat() ||
        !isa<FloatType>(dense.getElementType())) {
      op.emitOpError() << "only splat float constants can be lowered";
      return failure();
    }
    RowVal r;
    r.shape.assign(dense.getType().getShape().begin(),
                   dense.getType().getShape().end());
    r.elemType = dense.getElementType();
    r.scalar = arith::ConstantOp::create(
        b, loc, FloatAttr::get(r.elemType,
                               dense.getSplatValue<APFloat>().convertToDouble()));
    if (r.numElements() != 1) {
      RowVal full = newRow(r.shape, r.elemType);
      forEachParallel(full.numElements(),
                      [&](Value i) { store(full, i, r.scalar); });
      return full;
    }
    return r;
  }
  if (isa<AddOp>(op))
    return binary([&](Value x, Value y) {
      return arith::AddFOp::create(b, loc, x, y, contract);
    });
  if (isa<SubOp>(op))
    return binary([&](Value x, Value y) {
      return arith::SubFOp::create(b, loc, x, y, contract);
    });
  if (isa<MulOp>(op))
    return binary([&](Value x, Value y) {
      return arith::MulFOp::create(b, loc, x, y, contract);
    });
  if (isa<DivOp>(op))
    return binary([&](Value x, Value y) {
      return arith::DivFOp::create(b, loc, x, y);
    });
  if (isa<NegOp>(op))
    return unary([&](Value x) { return arith::NegFOp::create(b, loc, x); });
  if (isa<ReluOp>(op))
    return unary([&](Value x) {
      return arith::MaximumFOp::create(b, loc, x, f32(0.0));
    });
  if (isa<EluOp>(op))
    return unary([&](Value x) {
      Value em1 = arith::SubFOp::create(b, loc, math::ExpOp::create(b, loc, x),
                                        f32(1.0));
      Value pos = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x,
                                        f32(0.0));
      return arith::SelectOp::create(b, loc, pos, x, em1);
    });
  if (auto leaky = dyn_cast<LeakyReluOp>(op)) {
    double slope = leaky.getSlope().convertToDouble();
    return unary([&](Value x) {
      Value pos = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x,
                                        f32(0.0));
      Value neg = arith::MulFOp::create(b, loc, x, f32(slope));
      return arith::SelectOp::create(b, loc, pos, x, neg);
    });
  }
  if (isa<SigmoidOp>(op))
    return unary([&](Value x) {
      Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
      return arith::DivFOp::create(
          b, loc, f32(1.0), arith::AddFOp::create(b, loc, f32(1.0), e));
    });
  if (isa<TanhOp>(op))
    return unary([&](Value x) { return math::TanhOp::create(b, loc, x); });
  if (isa<ExpOp>(op))
    return unary([&](Value x) { return math::ExpOp::create(b, loc, x); });
  if (isa<LogOp>(op))
    return unary([&](Value x) { return math::LogOp::create(b, loc, x); });
  if (isa<RsqrtOp>(op))
    return unary([&](Value x) { return math::RsqrtOp::create(b, loc, x); });
  if (isa<AbsOp>(op))
    return unary([&](Value x) { return math::AbsFOp::create(b, loc, x); });
  if (isa<SelectPositiveOp>(op))
    return elementwise({in(0), in(1), in(2)}, in(0).shape,
                       [&](ArrayRef<Value> x) -> Value {
                         Value pos = arith::CmpFOp::create(
                             b, loc, arith::CmpFPredicate::OGT, x[0], f32(0.0));
                         return arith::SelectOp::create(b, loc, pos, x[1], x[2]);
                       });
  if (auto drop = dyn_cast<DropoutOp>(op)) {
    if (!drop.getKey())
      return in(0); // inference: the identity
    // Keep element i of row r when hash(seed, key, r, i) >= rate: a pure
    // function of its position, so the backward pass sees the same mask.
    // The row's 64-bit SplitMix64 hash of (seed, key, r), once per row,
    // folded to 32 bits; each element then MurmurHash3's 32-bit finaliser of
    // that plus i times the 32-bit golden ratio. 32-bit multiplies vectorise
    // on AVX2 (64-bit ones do not): a third of the 64-bit hash's time per
    // element.
    double rate = drop.getRate().convertToDouble();
    uint64_t key = *drop.getKey();
    RowVal x = in(0);
    RowVal out = newRow(x.shape, x.elemType);
    Type i64 = b.getI64Type(), i32 = b.getI32Type();
    auto c64 = [&](uint64_t v) {
      return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(int64_t(v)));
    };
    auto c32 = [&](uint32_t v) {
      return arith::ConstantOp::create(b, loc,
                                       b.getI32IntegerAttr(int32_t(v)));
    };
    auto c64v = [&](uint64_t v) -> Value { return c64(v); };
    auto c32u = [&](uint64_t v) -> Value { return c32(uint32_t(v)); };
    // h ^= h >> s1; h *= m1; h ^= h >> s2; h *= m2; h ^= h >> s3 (SplitMix64's
    // and MurmurHash3's finalisers, with their shifts and multipliers).
    auto finalise = [&](Value h, llvm::function_ref<Value(uint64_t)> c,
                        std::array<uint64_t, 3> s, std::array<uint64_t, 2> m) {
      auto xorShift = [&](Value v, uint64_t by) -> Value {
        return arith::XOrIOp::create(b, loc, v,
                                     arith::ShRUIOp::create(b, loc, v, c(by)));
      };
      h = arith::MulIOp::create(b, loc, xorShift(h, s[0]), c(m[0]));
      h = arith::MulIOp::create(b, loc, xorShift(h, s[1]), c(m[1]));
      return xorShift(h, s[2]);
    };
    Value h64 = arith::XOrIOp::create(
        b, loc, arith::MulIOp::create(b, loc, seed, c64(0x9e3779b97f4a7c15ULL)),
        c64(key * 0xbf58476d1ce4e5b9ULL + 1));
    Value rowBits = arith::MulIOp::create(
        b, loc, arith::IndexCastOp::create(b, loc, i64, row),
        c64(0x94d049bb133111ebULL));
    h64 = arith::XOrIOp::create(b, loc, h64, rowBits);
    h64 = finalise(h64, c64v, {30, 27, 31},
                   {0xbf58476d1ce4e5b9ULL, 0x94d049bb133111ebULL});
    Value base = arith::TruncIOp::create(
        b, loc, i32,
        arith::XOrIOp::create(b, loc, h64,
                              arith::ShRUIOp::create(b, loc, h64, c64(32))));
    // Keep threshold on the top 24 bits of the element's hash.
    uint32_t threshold = uint32_t(rate * double(1 << 24));
    Value scale = f32(1.0 / (1.0 - rate));
    forEachParallel(x.numElements(), [&](Value i) {
      Value h = arith::AddIOp::create(
          b, loc, base,
          arith::MulIOp::create(b, loc, arith::IndexCastOp::create(b, loc, i32, i),
                                c32(0x9e3779b9u)));
      h = finalise(h, c32u, {16, 13, 16}, {0x85ebca6bu, 0xc2b2ae35u});
      Value top = arith::ShRUIOp::create(b, loc, h, c32(8));
      Value keep = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, top,
                                         c32(threshold));
      Value v = arith::MulFOp::create(b, loc, load(x, i), scale);
      store(out, i, arith::SelectOp::create(b, loc, keep, v, f32(0.0)));
    });
    return out;
  }
  if (isa<ReshapeOp>(op)) {
    RowVal r = in(0);
    r.shape = resultShape();
    return r;
  }
  if (auto mm = dyn_cast<MatmulOp>(op)) {
    RowVal a = in(0), w = in(1);
    int64_t k = a.shape.back();
    int64_t m = a.numElements() / k, n = w.numElements() / k;
    RowVal out = newRow(resultShape(), a.elemType);
    forEachParallel(m * n, [&](Value i) { store(out, i, f32(0.0)); });
    // out[i, j] += a[i, l] * w[l, j], j innermost (contiguous in w and out).
    forEach(m, [&](Value i) {
      forEach(k, [&](Value l) {
        Value x = load(a, add(mul(i, index(k)), l));
        forEachParallel(n, [&](Value j) {
          Value o = add(mul(i, index(n)), j);
          Value prod = arith::MulFOp::create(
              b, loc, x, load(w, add(mul(l, index(n)), j)), contract);
          store(out, o, arith::AddFOp::create(b, loc, load(out, o), prod,
                                              contract));
        });
      });
    });
    return out;
  }
  if (auto red = dyn_cast<ReduceOp>(op)) {
    RowVal x = in(0);
    auto [axis, pre, post] =
        splitAt(x.shape, static_cast<int64_t>(red.getAxis()));
    int64_t len = x.shape[axis];
    RowVal out = newRow(resultShape(), x.elemType);
    ReduceKind kind = red.getKind();
    double init = kind == ReduceKind::max ? -std::numeric_limits<float>::infinity()
                  : kind == ReduceKind::min ? std::numeric_limits<float>::infinity()
                                            : 0.0;
    forEachParallel(pre * post, [&](Value i) { store(out, i, f32(init)); });
    forEach(pre, [&](Value p) {
      // One output per (p, q): lanes share q, or, a single q, fold over a.
      if (post == 1)
        lanes = "reduce";
      forEach(len, [&](Value a) {
        forEachParallel(post, [&](Value q) {
          Value o = add(mul(p, index(post)), q);
          Value v = load(x, add(mul(add(mul(p, index(len)), a), index(post)), q));
          Value acc = load(out, o);
          Value r = kind == ReduceKind::max   ? Value(arith::MaximumFOp::create(b, loc, acc, v))
                    : kind == ReduceKind::min ? Value(arith::MinimumFOp::create(b, loc, acc, v))
                                              : Value(arith::AddFOp::create(b, loc, acc, v));
          store(out, o, r);
        });
      });
    });
    if (kind == ReduceKind::mean)
      forEachParallel(pre * post, [&](Value i) {
        store(out, i,
              arith::DivFOp::create(b, loc, load(out, i), f32(double(len))));
      });
    return out;
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    RowVal x = in(0);
    SmallVector<int64_t> shape = resultShape();
    auto [axis, outer, inner] =
        splitAt(shape, static_cast<int64_t>(slice.getAxis()));
    int64_t start = static_cast<int64_t>(slice.getOffset()) * inner;
    if (outer == 1 && x.buf) { // contiguous: a window of the input's row
      RowVal r = x;
      r.offset = add(x.offset, index(start));
      r.shape = shape;
      return r;
    }
    RowVal out = newRow(shape, x.elemType);
    int64_t inBlock = x.shape[axis] * inner, block = shape[axis] * inner;
    forEach(outer, [&](Value o) {
      forEachParallel(block, [&](Value j) {
        Value v = load(x, add(add(mul(o, index(inBlock)), index(start)), j));
        store(out, add(mul(o, index(block)), j), v);
      });
    });
    return out;
  }
  if (auto cat = dyn_cast<ConcatOp>(op)) {
    SmallVector<int64_t> shape = resultShape();
    auto [axis, outer, inner] =
        splitAt(shape, static_cast<int64_t>(cat.getAxis()));
    int64_t outBlock = shape[axis] * inner;
    RowVal out = newRow(shape, in(0).elemType);
    int64_t at = 0;
    for (unsigned i = 0; i < op.getNumOperands(); ++i) {
      RowVal x = in(i);
      int64_t block = x.shape[axis] * inner;
      forEach(outer, [&](Value o) {
        forEachParallel(block, [&](Value j) {
          Value v = load(x, add(mul(o, index(block)), j));
          store(out, add(add(mul(o, index(outBlock)), index(at)), j), v);
        });
      });
      at += block;
    }
    return out;
  }
  op.emitOpError() << "cannot be lowered to a kernel";
  return failure();
}

/// Values used in `region` but defined outside it.
SmallVector<Value> capturedValues(Region &region) {
  llvm::SetVector<Value> captured;
  region.walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (!region.isAncestor(v.getParentRegion()))
        captured.insert(v);
  });
  return captured.takeVector();
}

MemRefType flatBuffer(Type elem) {
  return MemRefType::get({ShapedType::kDynamic}, elem);
}

Type elementTypeOf(Value v) {
  if (auto d = dyn_cast<DomainType>(v.getType()))
    return d.getElementType();
  return getElementTypeOrSelf(v.getType());
}

SmallVector<int64_t> rowShapeOf(Value v) {
  if (auto d = dyn_cast<DomainType>(v.getType()))
    return SmallVector<int64_t>(d.getShape());
  return SmallVector<int64_t>(cast<RankedTensorType>(v.getType()).getShape());
}

bool isExtremum(PropagateOp p) {
  return p && (p.getKind() == GatherKind::max ||
               p.getKind() == GatherKind::min);
}

/// Whether `op`'s edge body must be evaluated without contraction (see
/// Emitter::exact): a max/min propagation, an edge_map whose messages a
/// max/min propagation reduces, or a propagation or edge_map that reads a
/// max/min result (the backward's re-evaluation of the messages, compared
/// with it).
bool needsExactMessages(Operation *op) {
  if (!isa<PropagateOp, EdgeMapOp>(op))
    return false;
  if (isExtremum(dyn_cast<PropagateOp>(op)))
    return true;
  for (Value r : op->getResults())
    for (Operation *user : r.getUsers())
      if (isExtremum(dyn_cast<PropagateOp>(user)))
        return true;
  for (Value v : op->getOperands()) {
    Operation *def = v.getDefiningOp();
    if (!def)
      continue;
    if (isExtremum(dyn_cast<PropagateOp>(def)))
      return true;
    if (auto launch = dyn_cast<LaunchOp>(def))
      if (auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
              launch, launch.getCalleeAttr()))
        if (fn->hasAttr("saga.extremum"))
          return true;
  }
  return false;
}

} // namespace

FailureOr<Kernel> saga::emitKernel(Operation *op, StringRef name,
                                   OpBuilder &moduleBuilder,
                                   ApplyVertexOp epilogue) {
  Kernel kernel;
  auto propagate = dyn_cast<PropagateOp>(op);
  auto edgeMap = dyn_cast<EdgeMapOp>(op);
  kernel.propagate = static_cast<bool>(propagate);
  kernel.edgeMap = static_cast<bool>(edgeMap);
  // Both edge kernels take the CSR; their operands are grouped src, dst,
  // edge.
  bool overEdges = propagate || edgeMap;
  unsigned numSrcs = propagate ? propagate.getSrcs().size()
                     : edgeMap ? edgeMap.getSrcs().size()
                               : 0;
  unsigned numDsts = propagate ? propagate.getDsts().size()
                     : edgeMap ? edgeMap.getDsts().size()
                               : 0;
  unsigned numEdges = propagate ? propagate.getEdges().size()
                      : edgeMap ? edgeMap.getEdges().size()
                                : 0;
  Region &region = op->getRegion(0);
  Block &body = region.front();
  llvm::append_range(kernel.operands, op->getOperands());
  SmallVector<Value> captured = capturedValues(region);
  llvm::append_range(kernel.operands, captured);
  // An epilogue (an apply_vertex of the propagation's result, fused into
  // its kernel) adds its other operands and its captures; epilogueArg[k] is
  // the kernel operand of its block argument k, or -1 for the propagation's
  // row, which never leaves the kernel.
  SmallVector<int> epilogueArg;
  SmallVector<Value> otherSide; // read at the edges' other ends
  SmallVector<Value> epilogueCaptured;
  unsigned epilogueCapturedStart = 0;
  if (epilogue) {
    // An epilogue input the propagation already reads at the row being
    // reduced (a dst operand; a src operand when reversed) shares that
    // buffer: passed once, it stays read only at that row, so the
    // epilogue's results may be written over it (GAT's backward writes the
    // projection's gradient over the projection).
    auto rowSide = [&](unsigned i) {
      bool reversedProp = propagate && propagate.getReversed();
      return reversedProp ? i < numSrcs
                          : i >= numSrcs && i < numSrcs + numDsts;
    };
    for (auto [i, operand] : llvm::enumerate(op->getOperands()))
      if (propagate && !rowSide(unsigned(i)))
        otherSide.push_back(operand);
    for (Value v : epilogue.getInputs()) {
      if (v == op->getResult(0)) {
        epilogueArg.push_back(-1);
        continue;
      }
      // Only when every place the propagation reads v is at the row.
      SmallVector<unsigned> uses;
      for (auto [i, operand] : llvm::enumerate(op->getOperands()))
        if (operand == v)
          uses.push_back(unsigned(i));
      if (propagate && !uses.empty() && llvm::all_of(uses, rowSide)) {
        epilogueArg.push_back(int(uses.front()));
        continue;
      }
      epilogueArg.push_back(int(kernel.operands.size()));
      kernel.operands.push_back(v);
    }
    epilogueCaptured = capturedValues(epilogue.getBody());
    epilogueCapturedStart = kernel.operands.size();
    llvm::append_range(kernel.operands, epilogueCaptured);
  }
  SmallVector<Value> resultValues(epilogue ? epilogue->getResults()
                                           : op->getResults());

  MLIRContext *ctx = op->getContext();
  OpBuilder tb(ctx);
  Type indexType = tb.getIndexType();
  SmallVector<Type> argTypes{indexType, indexType, tb.getI64Type()};
  if (overEdges)
    argTypes.append({flatBuffer(tb.getI64Type()), flatBuffer(tb.getI32Type()),
                     flatBuffer(tb.getI32Type())});
  // A propagation may run over one edge chunk at a time (the edges from one
  // interval of the other end): it then also takes the whole graph's
  // offsets (for in-degrees), a phase word (kPhaseResume: start from the
  // partial reduction in `state`; kPhaseFinish: this is the last chunk) and
  // the state rows (saga.state_width floats per row).
  if (propagate)
    argTypes.append({flatBuffer(tb.getI64Type()), tb.getI64Type(),
                     flatBuffer(tb.getF32Type())});
  for (Value v : kernel.operands)
    argTypes.push_back(flatBuffer(elementTypeOf(v)));
  for (Value r : resultValues)
    argTypes.push_back(flatBuffer(elementTypeOf(r)));
  // Dropout in the edge body keys its masks by the edge's id in the graph:
  // given apart from the ids edge values are indexed by (the last
  // argument, `saga.edge_keys`), since a chunked run that splits edge
  // values by interval indexes them by their number in chunk order.
  bool edgeKeys = false;
  if (overEdges)
    region.walk([&](DropoutOp) { edgeKeys = true; });
  if (edgeKeys)
    argTypes.push_back(flatBuffer(tb.getI32Type()));

  Location loc = op->getLoc();
  auto func = func::FuncOp::create(moduleBuilder, loc, name,
                                   tb.getFunctionType(argTypes, {}));
  func->setAttr("saga.kernel", tb.getStringAttr(propagate ? "propagate"
                                                : edgeMap   ? "edge_map"
                                                            : "map"));
  if (propagate && propagate.getReversed())
    func->setAttr("saga.reversed", tb.getUnitAttr());
  if (propagate) {
    // Bytes each edge reads from the rows at its other end: what a source
    // interval of the chunked execution must hold per vertex.
    int64_t gatherBytes = 0;
    bool rev = propagate.getReversed();
    for (unsigned i = rev ? numSrcs : 0, n = rev ? numSrcs + numDsts : numSrcs;
         i < n; ++i) {
      Value v = op->getOperand(i);
      gatherBytes += product(rowShapeOf(v)) *
                     std::max(1u, elementTypeOf(v).getIntOrFloatBitWidth() / 8);
    }
    func->setAttr("saga.gather_bytes", tb.getI64IntegerAttr(gatherBytes));
  }
  if (overEdges) {
    // The first operands, by group: read at the source, at the destination,
    // per edge (what a chunked schedule streams, keeps, or slices).
    func->setAttr("saga.operand_groups",
                  tb.getDenseI64ArrayAttr({int64_t(numSrcs), int64_t(numDsts),
                                           int64_t(numEdges)}));
  }
  if (edgeKeys)
    func->setAttr("saga.edge_keys", tb.getUnitAttr());
  Block *entry = func.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockEnd(entry);
  auto ret = func::ReturnOp::create(b, loc);
  b.setInsertionPoint(ret);
  Emitter e(b, loc, entry, entry->getArgument(2));
  e.exact = needsExactMessages(op);
  if (e.exact)
    func->setAttr("saga.exact", tb.getUnitAttr());
  if (epilogue)
    func->setAttr("saga.epilogue", tb.getUnitAttr());
  if (isExtremum(propagate))
    func->setAttr("saga.extremum", tb.getUnitAttr());

  unsigned argIndex = 3;
  Value offsets, sources, edgeIds, degOffsets, phase, state;
  if (overEdges) {
    offsets = entry->getArgument(argIndex++);
    sources = entry->getArgument(argIndex++);
    edgeIds = entry->getArgument(argIndex++);
  }
  if (propagate) {
    degOffsets = entry->getArgument(argIndex++);
    phase = entry->getArgument(argIndex++);
    state = entry->getArgument(argIndex++);
  }
  SmallVector<Value> operandBufs, resultBufs;
  for (size_t i = 0; i < kernel.operands.size(); ++i)
    operandBufs.push_back(entry->getArgument(argIndex++));
  for (size_t i = 0; i < resultValues.size(); ++i)
    resultBufs.push_back(entry->getArgument(argIndex++));
  Value keys = edgeKeys ? entry->getArgument(argIndex++) : Value();
  // Per result: whether it is large enough to be written with streaming
  // stores (Emitter::copyOut), decided at run time from the buffer's size.
  SmallVector<Value> streaming;
  for (Value buf : resultBufs) {
    Value size = memref::DimOp::create(b, loc, buf, 0);
    streaming.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                              size, e.index(kStreamElements)));
  }

  // A window of row `row` of operand `i`.
  auto rowOf = [&](unsigned i, Value row) {
    Value v = kernel.operands[i];
    RowVal r;
    r.buf = operandBufs[i];
    r.shape = rowShapeOf(v);
    r.elemType = elementTypeOf(v);
    r.offset = row ? e.mul(row, e.index(r.numElements())) : e.index(0);
    return r;
  };
  // The ops of `block` on the rows in `vals` (its arguments and captured
  // values); the rows it yields.
  auto emitBlock = [&](Block &block, DenseMap<Value, RowVal> &vals)
      -> FailureOr<SmallVector<RowVal>> {
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
  };
  // The operand rows the last emitBody read (its block arguments').
  SmallVector<RowVal> argRows;
  auto emitBody = [&](ArrayRef<Value> rows) -> FailureOr<SmallVector<RowVal>> {
    DenseMap<Value, RowVal> vals;
    argRows.clear();
    for (auto [i, arg] : llvm::enumerate(body.getArguments()))
      vals[arg] = argRows.emplace_back(rowOf(i, rows[i]));
    for (auto [i, c] : llvm::enumerate(captured))
      vals[c] = rowOf(body.getNumArguments() + i, Value());
    return emitBlock(body, vals);
  };
  auto resultRow = [&](unsigned i, Value row) {
    RowVal r;
    r.buf = resultBufs[i];
    r.shape = rowShapeOf(resultValues[i]);
    r.elemType = elementTypeOf(resultValues[i]);
    r.offset = e.mul(row, e.index(r.numElements()));
    return r;
  };
  // Writes `y` as row `row` of result `i`, streaming when it can.
  auto writeResult = [&](unsigned i, const RowVal &y, Value row) {
    RowVal to = resultRow(i, row);
    if (y.buf && y.elemType.isF32() && Emitter::streamable(y.numElements()))
      e.copyOut(y, to, streaming[i]);
    else
      e.copy(y, to);
  };

  // Results that may be written over an operand that dies with the kernel
  // (the executor's buffer reuse): pairs (result, operand). Legal when the
  // operand is only read at the row being written (a map's operand, an
  // epilogue's own operand), has the result's row size and element type,
  // and no value yielded for another result is a window of it (yields are
  // copied out one result after another; every computed row is complete
  // before the first copy). The result's own yield may be the operand row
  // itself (a reshape): the copy then rewrites what is there.
  SmallVector<int64_t> overwritable;
  auto noteOverwritable = [&](ArrayRef<RowVal> yields,
                              ArrayRef<std::pair<unsigned, RowVal>> rows) {
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
  };

  bool ok = true;
  bool reversed = propagate && propagate.getReversed();

  // Software prefetch for propagation: the rows at the other end of an edge
  // are random accesses that the hardware prefetcher cannot predict, and a
  // kernel that waits for each in turn is latency-bound (bench/suite.sh: 6-8x
  // slower at 1M vertices). Each edge requests the rows the edge
  // kPrefetchDistance positions ahead will read, up to kPrefetchLines cache
  // lines per operand. Rows by edge id (edge operands, an edge_map's
  // results) are random too unless the edges were numbered by destination.
  constexpr int64_t kPrefetchDistance = kEdgePrefetchDistance,
                    kPrefetchLines = 16;
  auto prefetchRow = [&](RowVal r, bool write) {
    int64_t elemBytes = std::max(1u, r.elemType.getIntOrFloatBitWidth() / 8);
    int64_t perLine = std::max<int64_t>(1, 64 / elemBytes);
    int64_t lines = std::min<int64_t>(
        kPrefetchLines, (r.numElements() + perLine - 1) / perLine);
    for (int64_t l = 0; l < lines; ++l)
      memref::PrefetchOp::create(b, loc, r.buf,
                                 ValueRange{e.add(r.offset, e.index(l * perLine))},
                                 /*isWrite=*/write, /*localityHint=*/3,
                                 /*isDataCache=*/true);
  };
  auto prefetchAhead = [&](Value pos) {
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
  };
  // fn(u, eid) for each in-edge (out-edge when reversed) of row v: u is the
  // edge's other end. Prefetches ahead, and keys dropout in the edge body by
  // the edge, so every edge (and the reversed backward over it) draws its
  // own mask.
  auto forEachEdge = [&](Value v, function_ref<void(Value, Value)> fn) {
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
  };

  e.forRange(entry->getArgument(0), entry->getArgument(1), [&](Value v) {
    e.row = v;
    if (edgeMap) {
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
      return;
    }
    if (!propagate) {
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
      return;
    }

    // Propagation: reduce the body's messages over v's in-edges.
    GatherKind kind = propagate.getKind();
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
    // With an epilogue the reduced row stays in a stack buffer; so does a
    // row that will be streamed out.
    RowVal out;
    const bool streamOut =
        !epilogue && Emitter::streamable(product(rowShapeOf(op->getResult(0)))) &&
        elementTypeOf(op->getResult(0)).isF32();
    if (epilogue || streamOut) {
      out = e.newRow(rowShapeOf(op->getResult(0)),
                     elementTypeOf(op->getResult(0)));
    } else {
      out = resultRow(0, v);
    }
    int64_t width = out.numElements();
    RowVal acc = e.newRow(out.shape, out.elemType);
    // logsumexp: acc is the running maximum, lseSum the sum of exp(message
    // - maximum), rescaled when the maximum grows (one pass, as the online
    // softmax below).
    bool lse = kind == GatherKind::logsumexp;
    double init = kind == GatherKind::max || lse
                      ? -std::numeric_limits<float>::infinity()
                  : kind == GatherKind::min ? std::numeric_limits<float>::infinity()
                                            : 0.0;
    RowVal lseSum;
    if (lse)
      lseSum = e.newRow(out.shape, out.elemType);
    bool softmax = kind == GatherKind::softmax_sum;
    int64_t heads = 1;
    if (softmax)
      heads = product(cast<RankedTensorType>(
                          body.getTerminator()->getOperand(1).getType())
                          .getShape());
    int64_t per = width / heads;
    RowVal runMax, runSum;
    if (softmax) {
      runMax = e.newRow({heads}, out.elemType);
      runSum = e.newRow({heads}, out.elemType);
    }
    // The running reduction: acc, then the softmax's running maxima and
    // sums, or logsumexp's rescaled sums. A chunk after the first resumes
    // it from v's state row; a chunk before the last saves it there. The
    // in-edges of v are sorted by their other end, so the chunks visit them
    // in the unchunked order: results are the same bit for bit.
    SmallVector<RowVal> running{acc};
    if (softmax)
      running.append({runMax, runSum});
    if (lse)
      running.push_back(lseSum);
    int64_t stateWidth = 0;
    for (const RowVal &r : running)
      stateWidth += r.numElements();
    auto stateRows = [&]() {
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
    };
    e.ifElse(
        e.bitSet(phase, kPhaseResume),
        [&] {
          for (auto [r, s] : llvm::zip(running, stateRows()))
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
    forEachEdge(v, [&](Value u, Value eid) {
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
    });
    if (!ok)
      return;

    // A chunk before the last saves the running reduction and stops there.
    auto finish = scf::IfOp::create(b, loc, e.bitSet(phase, kPhaseFinish),
                                    /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(finish.elseBlock()->getTerminator());
      for (auto [r, s] : llvm::zip(running, stateRows()))
        e.copy(r, s);
    }
    OpBuilder::InsertionGuard finishGuard(b);
    b.setInsertionPoint(finish.thenBlock()->getTerminator());
    func->setAttr("saga.state_width", tb.getI64IntegerAttr(stateWidth));

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
    if (!epilogue)
      return;
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
  });
  if (!ok) {
    func.erase();
    return failure();
  }
  if (!overwritable.empty())
    func->setAttr("saga.overwritable", tb.getDenseI64ArrayAttr(overwritable));
  kernel.func = func;
  return kernel;
}
