//===- MLIRGenOps.cpp - built-ins and operators ---------------------------===//
//
// Compile-time numbers (f32 literals, integer arguments, checked integer
// arithmetic), the built-in functions, binary operators, and the lifting of
// per-element code into the model as a one-op apply_vertex.
//
//===----------------------------------------------------------------------===//

#include "parser/GeneratorImpl.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

namespace saga::mlirgen {

// A literal as f32; out-of-range values are errors, not infinities.
std::optional<double> Generator::parseNumber(P::NumberContext *n, bool negate) {
  std::string s = n->getText();
  double v = std::strtod(s.c_str(), nullptr);
  if (!std::isfinite(v) || std::fabs(v) > std::numeric_limits<float>::max()) {
    error(loc(n)) << "number '" << s << "' is out of range for f32";
    return std::nullopt;
  }
  return negate ? -v : v;
}

std::optional<double> Generator::numberArg(const Val &v, Location l,
                                           StringRef what) {
  if (v.kind == Kind::Number)
    return v.number;
  error(l) << what << " must be a number known at compile time";
  return std::nullopt;
}

std::optional<int64_t> Generator::intArg(const Val &v, Location l,
                                         StringRef what) {
  if (v.kind == Kind::Number && v.integral) {
    if (v.integer > (1 << 30) || v.integer < -(1 << 30)) {
      error(l) << what << " is too large (the limit is 2^30)";
      return std::nullopt;
    }
    return v.integer;
  }
  error(l) << what << " must be an integer known at compile time";
  return std::nullopt;
}

// `a op c` on compile-time integers (`/` only when exact; op 'n' negates
// `c`), reporting int64 overflow rather than wrapping around.
std::optional<int64_t> Generator::intArith(Location l, char op, int64_t a,
                                           int64_t c) {
  int64_t r = 0;
  bool overflow = false;
  switch (op) {
  case '+':
    overflow = llvm::AddOverflow(a, c, r);
    break;
  case '-':
    overflow = llvm::SubOverflow(a, c, r);
    break;
  case 'n':
    overflow = llvm::SubOverflow(int64_t(0), c, r);
    break;
  case '*':
    overflow = llvm::MulOverflow(a, c, r);
    break;
  default:
    assert(op == '/' && divides(a, c) && "inexact integer division");
    if (c == -1)
      overflow = llvm::SubOverflow(int64_t(0), a, r);
    else
      r = a / c;
  }
  if (!overflow)
    return r;
  auto d = error(l) << "integer overflow in '";
  if (op == 'n')
    d << "-(" << c << ")";
  else
    d << a << " " << op << " " << c;
  d << "': compile-time integers must fit in 64 bits";
  return std::nullopt;
}

Val Generator::evalBuiltin(Frame &f, antlr4::Token *fn, ArrayRef<Val> args,
                           ArrayRef<P::ExprContext *> argExprs) {
  std::string name = fn->getText();
  Location l = loc(fn);
  auto arity = [&](size_t lo, size_t hi, StringRef usage) {
    if (args.size() >= lo && args.size() <= hi)
      return true;
    error(l) << "'" << name << "' takes " << usage << ", got " << args.size()
             << " argument" << (args.size() == 1 ? "" : "s");
    return false;
  };

  if (TensorBuilder::isUnary(name)) {
    if (!arity(1, 1, "one argument"))
      return Val::error();
    return lift(f, l, args, [&](ArrayRef<Value> xs) {
      return tb.unary(l, name, xs[0]);
    });
  }
  if (name == "leaky_relu" || name == "dropout") {
    bool leaky = name == "leaky_relu";
    if (!arity(leaky ? 1 : 2, 2,
               leaky ? "a value and an optional slope" : "a value and a rate"))
      return Val::error();
    std::optional<double> p = leaky && args.size() == 1
                                  ? std::optional<double>(0.01)
                                  : numberArg(args[1], loc(argExprs[1]),
                                              leaky ? "the slope" : "the rate");
    if (!p)
      return Val::error();
    return lift(f, l, args.take_front(), [&](ArrayRef<Value> xs) {
      return leaky ? tb.leakyRelu(l, xs[0], *p) : tb.dropout(l, xs[0], *p);
    });
  }
  if (auto kind = symbolizeReduceKind(name)) {
    if (!arity(1, 2, "a value and an optional axis"))
      return Val::error();
    std::optional<int64_t> axis =
        args.size() == 1 ? std::optional<int64_t>(-1)
                         : intArg(args[1], loc(argExprs[1]), "the axis");
    if (!axis)
      return Val::error();
    return lift(f, l, args.take_front(), [&](ArrayRef<Value> xs) {
      return tb.reduce(l, *kind, xs[0], *axis);
    });
  }
  if (name == "concat") {
    if (!arity(2, 64, "two or more values"))
      return Val::error();
    return lift(f, l, args, [&](ArrayRef<Value> xs) { return tb.concat(l, xs); });
  }
  if (name == "reshape") {
    if (!arity(2, 2, "a value and a shape list"))
      return Val::error();
    if (args[1].kind != Kind::List) {
      error(loc(argExprs[1])) << "the shape of a reshape is a list: "
                              << "'reshape(x, [heads * out])'";
      return Val::error();
    }
    SmallVector<int64_t> shape;
    for (const Val &d : args[1].list) {
      auto v = intArg(d, loc(argExprs[1]), "each reshape dimension");
      if (!v)
        return Val::error();
      if (*v <= 0) {
        error(loc(argExprs[1])) << "reshape dimension " << *v
                                << " must be positive";
        return Val::error();
      }
      shape.push_back(*v);
    }
    return lift(f, l, args.take_front(), [&](ArrayRef<Value> xs) {
      return tb.reshape(l, xs[0], shape);
    });
  }
  if (name == "l2") {
    if (!arity(1, 1, "one parameter"))
      return Val::error();
    if (args[0].kind != Kind::Tensor) {
      error(loc(argExprs[0])) << "l2 takes a parameter, such as "
                              << "'l2(GCNConv#0.W)'";
      return Val::error();
    }
    auto type = RankedTensorType::get({}, b.getF32Type());
    return Val::of(L2Op::create(b, l, type, args[0].value));
  }
  if (StringRef(name).ends_with("_nodes")) {
    // sum_nodes(h): a graph-level readout, held by each of the graph's
    // vertices (saga.readout).
    auto kind = symbolizeReduceKind(StringRef(name).drop_back(6));
    assert(kind && "builtin table out of sync");
    if (!arity(1, 1, "one vertex value"))
      return Val::error();
    if (f.stage != Stage::Model) {
      error(l) << name << " reduces every vertex of a graph; use it in the "
               << "model, not in " << stageName(f.stage);
      return Val::error();
    }
    auto type = args[0].kind == Kind::Domain
                    ? dyn_cast<VertexType>(args[0].value.getType())
                    : VertexType();
    if (!type || !isa<FloatType>(type.getElementType())) {
      error(loc(argExprs[0])) << name << " takes an f32 value per vertex, "
                              << "such as a layer's output";
      return Val::error();
    }
    return Val::of(ReadoutOp::create(b, l, type, *kind, args[0].value));
  }
  // A model-level function of one f32 vector per vertex: its type, or
  // null after the error (`what` says why it is model-level, `takes` what
  // it takes).
  auto modelVector = [&](StringRef usage, StringRef what,
                         StringRef takes) -> VertexType {
    if (!arity(1, 1, usage))
      return VertexType();
    if (f.stage != Stage::Model) {
      error(l) << name << " " << what << "; use it in the model, not in "
               << stageName(f.stage);
      return VertexType();
    }
    auto type = args[0].kind == Kind::Domain
                    ? dyn_cast<VertexType>(args[0].value.getType())
                    : VertexType();
    if (!type || type.getShape().size() != 1 ||
        !isa<FloatType>(type.getElementType())) {
      error(loc(argExprs[0])) << name << " " << takes
                              << " one f32 vector per vertex, such as a "
                              << "layer's output";
      return VertexType();
    }
    return type;
  };
  if (name == "batch_norm") {
    // Standardised features over the graph's vertices.
    VertexType type = modelVector(
        "one vertex value",
        "standardises each feature over every vertex", "takes");
    if (!type)
      return Val::error();
    return Val::of(BatchNormOp::create(b, l, type, args[0].value));
  }
  if (name == "pair_bce") {
    // Link prediction: the loss of the bound pairs' dot-product scores.
    VertexType type = modelVector("one vertex value (the embeddings)",
                                  "is a loss over vertex pairs",
                                  "scores pairs of embeddings: it takes");
    if (!type)
      return Val::error();
    auto result = RankedTensorType::get({}, b.getF32Type());
    return Val::of(PairBceOp::create(b, l, result, args[0].value));
  }
  assert(name == "cross_entropy" && "builtin table out of sync");
  if (!arity(2, 2, "logits and labels"))
    return Val::error();
  if (f.stage != Stage::Model) {
    error(l) << "cross_entropy is a loss over all vertices; use it in the "
             << "model, not in " << stageName(f.stage);
    return Val::error();
  }
  auto vertexOf = [&](const Val &v) -> VertexType {
    return v.kind == Kind::Domain ? dyn_cast<VertexType>(v.value.getType())
                                  : VertexType();
  };
  VertexType logits = vertexOf(args[0]), labels = vertexOf(args[1]);
  if (!logits || logits.getShape().size() != 1 ||
      !isa<FloatType>(logits.getElementType())) {
    error(loc(argExprs[0])) << "cross_entropy needs logits: one f32 vector "
                            << "per vertex";
    return Val::error();
  }
  if (!labels || !labels.getShape().empty() ||
      !isa<IntegerType>(labels.getElementType())) {
    error(loc(argExprs[1])) << "cross_entropy needs labels: a 'class[N]' "
                            << "graph input";
    return Val::error();
  }
  auto model = cast<ModelOp>(modelBlock->getParentOp());
  auto labelArg = dyn_cast<BlockArgument>(args[1].value);
  if (labelArg) {
    auto classes = model.getArgAttrOfType<IntegerAttr>(labelArg.getArgNumber(),
                                                       "saga.num_classes");
    if (classes && classes.getInt() != logits.getShape()[0]) {
      error(loc(argExprs[0])) << "the logits have " << logits.getShape()[0]
                              << " classes but the labels have "
                              << classes.getInt();
      return Val::error();
    }
  }
  auto type = RankedTensorType::get({}, b.getF32Type());
  return Val::of(
      CrossEntropyOp::create(b, l, type, args[0].value, args[1].value));
}

Val Generator::evalBinary(Frame &f, Location l, char op, Val lhs, Val rhs) {
  if (!lhs.ok() || !rhs.ok())
    return Val::error();
  if (lhs.kind == Kind::Number && rhs.kind == Kind::Number && op != '@') {
    if (op == '/' && rhs.number == 0) {
      error(l) << "division by zero";
      return Val::error();
    }
    // Integers stay integers, in checked 64-bit arithmetic, while the result
    // is exact; an inexact division gives a number.
    if (lhs.integral && rhs.integral &&
        (op != '/' || divides(lhs.integer, rhs.integer))) {
      auto r = intArith(l, op, lhs.integer, rhs.integer);
      return r ? Val::intNum(*r) : Val::error();
    }
    switch (op) {
    case '+':
      return Val::num(lhs.number + rhs.number);
    case '-':
      return Val::num(lhs.number - rhs.number);
    case '*':
      return Val::num(lhs.number * rhs.number);
    default:
      return Val::num(lhs.number / rhs.number);
    }
  }
  return lift(f, l, {lhs, rhs}, [&](ArrayRef<Value> xs) {
    return tb.binary(l, op, xs[0], xs[1]);
  });
}

Value Generator::toTensor(Frame &f, Location l, const Val &v) {
  switch (v.kind) {
  case Kind::Error:
    return {};
  case Kind::Tensor:
    return v.value;
  case Kind::Number:
    return tb.constant(l, v.number);
  case Kind::Domain: {
    auto type = cast<DomainType>(v.value.getType());
    if (!f.body || type.isEdgeDomain() != f.body->edge) {
      error(l) << "an " << (type.isEdgeDomain() ? "edge" : "vertex")
               << " value cannot be used here";
      return {};
    }
    return f.body->arg(v.value);
  }
  case Kind::LayerCtor:
    error(l) << "a layer must be applied to an input: 'Layer(args)(h)'";
    return {};
  case Kind::List:
    error(l) << "a list is only the shape argument of reshape";
    return {};
  }
  llvm_unreachable("unknown value kind");
}

// Applies a per-element function. Inside a stage body the operands are
// already per-element tensors; in the model, vertex operands are lifted into
// a one-op apply_vertex.
Val Generator::lift(Frame &f, Location l, ArrayRef<Val> operands,
                    function_ref<Value(ArrayRef<Value>)> fn) {
  for (const Val &v : operands)
    if (!v.ok())
      return Val::error();
  auto checkFloat = [&](Value t) {
    if (isa<FloatType>(getElementTypeOrSelf(t.getType())))
      return true;
    error(l) << "arithmetic needs f32 values; this operand holds "
             << getElementTypeOrSelf(t.getType())
             << " (class labels and vertex ids are not features)";
    return false;
  };
  bool anyDomain = llvm::any_of(
      operands, [](const Val &v) { return v.kind == Kind::Domain; });
  if (f.body || !anyDomain) {
    SmallVector<Value> xs;
    for (const Val &v : operands) {
      Value t = toTensor(f, l, v);
      if (!t || !checkFloat(t))
        return Val::error();
      xs.push_back(t);
    }
    return Val::of(fn(xs));
  }
  // Model level with a graph-wide operand: always a vertex value, since the
  // model cannot name edge inputs (evalName) and layers return vertex values.
  assert(llvm::none_of(operands,
                       [](const Val &v) {
                         return v.kind == Kind::Domain &&
                                cast<DomainType>(v.value.getType())
                                    .isEdgeDomain();
                       }) &&
         "edge value in the model");
  Body body(/*edge=*/false);
  Frame inner(Stage::Model, "", "", nullptr, &body);
  OpBuilder::InsertPoint outer = b.saveInsertionPoint();
  b.setInsertionPointToEnd(body.block);
  SmallVector<Value> xs;
  Value r;
  bool ok = true;
  for (const Val &v : operands) {
    Value t = toTensor(inner, l, v);
    ok &= t && checkFloat(t);
    xs.push_back(t);
  }
  if (ok)
    r = fn(xs);
  b.restoreInsertionPoint(outer);
  if (!r)
    return Val::error();
  Value result = finishBody(body, l, {r}, {l});
  return result ? Val::of(result) : Val::error();
}

} // namespace saga::mlirgen
