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
// Here: each op of a body as loops over rows (Emitter::emitOp; RowVal and
// the Emitter's loops are RowEmitter.h's) and emitKernel, whose steps are
// KernelBuilder.h's: the signature and calling convention
// (KernelSignature.cpp), rows, bodies and edges (KernelRows.cpp) and a
// propagation's reduction (PropagateKernel.cpp).
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelEmitter.h"
#include "codegen/KernelBuilder.h"
#include "codegen/RowEmitter.h"

#include "dialect/Saga.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>
#include <limits>

using namespace mlir;
using namespace saga;
using namespace saga::codegen;

namespace {

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

} // namespace

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

FailureOr<Kernel> saga::emitKernel(Operation *op, StringRef name,
                                   OpBuilder &moduleBuilder,
                                   ApplyVertexOp epilogue) {
  // Named steps over what were this function's locals (KernelBuilder.h):
  // the signature and the calling convention, the loop over the rows, and
  // the kernel or a failure.
  KernelBuilder builder(op, epilogue, name, moduleBuilder);
  builder.emitRows();
  return builder.finish();
}

FailureOr<Kernel> KernelBuilder::finish() {
  if (!ok) {
    func.erase();
    return failure();
  }
  if (!overwritable.empty())
    func->setAttr("saga.overwritable", tb.getDenseI64ArrayAttr(overwritable));
  kernel.func = func;
  return kernel;
}
