//===- TensorBuilder.cpp - shape-checked per-element ops ------------------===//

#include "parser/TensorBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"
#include <cstdio>

using namespace mlir;
using namespace saga;

std::string saga::formatNumber(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", value);
  return buf;
}

static RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

static std::string shapeOf(Value v) {
  return formatShape(tensorOf(v).getShape());
}

using UnaryCreate = Value (*)(OpBuilder &, Location, Value);
template <typename Op> static Value createUnary(OpBuilder &b, Location loc, Value x) {
  return Op::create(b, loc, x.getType(), x);
}

static const llvm::StringMap<UnaryCreate> &unaryTable() {
  static const llvm::StringMap<UnaryCreate> table = {
      {"relu", createUnary<ReluOp>},       {"elu", createUnary<EluOp>},
      {"sigmoid", createUnary<SigmoidOp>}, {"tanh", createUnary<TanhOp>},
      {"exp", createUnary<ExpOp>},         {"log", createUnary<LogOp>},
      {"rsqrt", createUnary<RsqrtOp>},     {"abs", createUnary<AbsOp>},
      {"neg", createUnary<NegOp>},
  };
  return table;
}

bool TensorBuilder::isUnary(StringRef fn) { return unaryTable().contains(fn); }

Value TensorBuilder::constant(Location loc, double value) {
  auto type = RankedTensorType::get({}, b.getF32Type());
  auto attr = DenseElementsAttr::get(type, b.getF32FloatAttr(value));
  return arith::ConstantOp::create(b, loc, type, attr);
}

Value TensorBuilder::binary(Location loc, char op, Value lhs, Value rhs) {
  if (op == '@')
    return matmul(loc, lhs, rhs);
  auto shape = broadcastShapes(tensorOf(lhs).getShape(), tensorOf(rhs).getShape());
  if (failed(shape)) {
    error(loc) << "operands of '" << op << "' have shapes " << shapeOf(lhs)
                   << " and " << shapeOf(rhs)
                   << ", which do not broadcast (dimensions must be equal or 1, "
                   << "aligned from the right)";
    return {};
  }
  auto type = RankedTensorType::get(*shape, tensorOf(lhs).getElementType());
  switch (op) {
  case '+':
    return AddOp::create(b, loc, type, lhs, rhs);
  case '-':
    return SubOp::create(b, loc, type, lhs, rhs);
  case '*':
    return MulOp::create(b, loc, type, lhs, rhs);
  default:
    assert(op == '/' && "unknown binary operator");
    return DivOp::create(b, loc, type, lhs, rhs);
  }
}

Value TensorBuilder::matmul(Location loc, Value lhs, Value rhs) {
  ArrayRef<int64_t> a = tensorOf(lhs).getShape(), c = tensorOf(rhs).getShape();
  if (a.empty() || c.empty()) {
    error(loc) << "'@' needs operands of rank >= 1, got " << shapeOf(lhs)
                   << " @ " << shapeOf(rhs) << "; use '*' to scale";
    return {};
  }
  if (a.back() != c.front()) {
    error(loc) << "'@' contracts the last dimension of the left side with "
                   << "the first of the right: " << shapeOf(lhs) << " @ "
                   << shapeOf(rhs) << " (" << a.back() << " vs " << c.front()
                   << ")";
    return {};
  }
  SmallVector<int64_t> shape(a.drop_back());
  llvm::append_range(shape, c.drop_front());
  auto type = RankedTensorType::get(shape, tensorOf(lhs).getElementType());
  return MatmulOp::create(b, loc, type, lhs, rhs);
}

Value TensorBuilder::unary(Location loc, StringRef fn, Value x) {
  return unaryTable().lookup(fn)(b, loc, x);
}

Value TensorBuilder::leakyRelu(Location loc, Value x, double slope) {
  if (slope < 0) {
    error(loc) << "leaky_relu slope must be non-negative, got "
               << formatNumber(slope);
    return {};
  }
  return LeakyReluOp::create(b, loc, x.getType(), x, b.getF64FloatAttr(slope));
}

Value TensorBuilder::dropout(Location loc, Value x, double rate) {
  if (!(rate >= 0.0 && rate < 1.0)) {
    error(loc) << "dropout rate must be in [0, 1), got " << formatNumber(rate);
    return {};
  }
  return DropoutOp::create(b, loc, x.getType(), x, b.getF64FloatAttr(rate),
                           IntegerAttr());
}

Value TensorBuilder::reduce(Location loc, ReduceKind kind, Value x,
                            int64_t axis) {
  ArrayRef<int64_t> shape = tensorOf(x).getShape();
  int64_t rank = shape.size();
  if (axis < -rank || axis >= rank) {
    error(loc) << stringifyReduceKind(kind) << " over axis " << axis
                   << " of a value of shape " << shapeOf(x)
                   << ": the axis must be in [" << -rank << ", " << rank << ")";
    return {};
  }
  SmallVector<int64_t> out(shape);
  out.erase(out.begin() + (axis < 0 ? axis + rank : axis));
  auto type = RankedTensorType::get(out, tensorOf(x).getElementType());
  return ReduceOp::create(b, loc, type, kind, x, static_cast<uint64_t>(axis));
}

Value TensorBuilder::concat(Location loc, ArrayRef<Value> xs) {
  ArrayRef<int64_t> first = tensorOf(xs[0]).getShape();
  if (first.empty()) {
    error(loc) << "concat joins along the last axis; scalars have none";
    return {};
  }
  SmallVector<int64_t> shape(first);
  for (Value x : xs.drop_front()) {
    ArrayRef<int64_t> s = tensorOf(x).getShape();
    if (s.size() != first.size() || s.drop_back() != first.drop_back()) {
      error(loc) << "concat joins along the last axis, so all other "
                     << "dimensions must agree: " << formatShape(first)
                     << " vs " << formatShape(s);
      return {};
    }
    shape.back() += s.back();
  }
  auto type = RankedTensorType::get(shape, tensorOf(xs[0]).getElementType());
  return ConcatOp::create(b, loc, type, xs, first.size() - 1);
}

Value TensorBuilder::reshape(Location loc, Value x, ArrayRef<int64_t> shape) {
  // The target's element count, checked: a product that wraps around could
  // otherwise match.
  int64_t elements = 1;
  bool overflow = false;
  for (int64_t d : shape)
    overflow = overflow || llvm::MulOverflow(elements, d, elements);
  if (overflow || elements != tensorOf(x).getNumElements()) {
    auto d = error(loc) << "cannot reshape " << shapeOf(x) << " ("
                        << tensorOf(x).getNumElements() << " elements) to "
                        << formatShape(shape) << " (";
    if (overflow)
      d << "more than 2^63";
    else
      d << elements;
    d << " elements)";
    return {};
  }
  auto type = RankedTensorType::get(shape, tensorOf(x).getElementType());
  return ReshapeOp::create(b, loc, type, x);
}
