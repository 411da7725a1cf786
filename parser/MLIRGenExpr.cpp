//===- MLIRGenExpr.cpp - expressions --------------------------------------===//
//
// Evaluation of expressions: literals, names with stage-aware errors, fields
// of a stage element or a layer instance (`v.h`, `e.src.h`, `GCNConv#0.W`),
// and calls (layer constructors and applications, built-in functions).
//
//===----------------------------------------------------------------------===//

#include "parser/GeneratorImpl.h"

#include "llvm/ADT/ScopeExit.h"

#include <limits>

namespace saga::mlirgen {

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Val Generator::eval(Frame &f, P::ExprContext *e) {
  if (auto *n = dynamic_cast<P::NumberExprContext *>(e)) {
    if (n->number()->INT()) {
      std::string s = n->number()->getText();
      int64_t i = 0;
      if (StringRef(s).getAsInteger(10, i)) {
        error(loc(e)) << "integer " << s << " is too large (the limit is "
                      << std::numeric_limits<int64_t>::max() << ")";
        return Val::error();
      }
      return Val::intNum(i);
    }
    auto v = parseNumber(n->number(), false);
    if (!v)
      return Val::error();
    return Val::num(*v);
  }
  if (auto *n = dynamic_cast<P::NameExprContext *>(e))
    return evalName(f, n->ID()->getSymbol());
  if (auto *p = dynamic_cast<P::ParenExprContext *>(e))
    return eval(f, p->expr());
  if (auto *m = dynamic_cast<P::MemberExprContext *>(e))
    return evalMember(f, m);
  if (auto *c = dynamic_cast<P::CallExprContext *>(e))
    return evalCall(f, c);
  if (auto *n = dynamic_cast<P::NegExprContext *>(e)) {
    Val v = eval(f, n->expr());
    if (v.kind == Kind::Number && v.integral) {
      auto i = intArith(loc(e), 'n', 0, v.integer);
      return i ? Val::intNum(*i) : Val::error();
    }
    if (v.kind == Kind::Number)
      return Val::num(-v.number);
    return lift(f, loc(e), {v}, [&](ArrayRef<Value> xs) {
      return tb.unary(loc(e), "neg", xs[0]);
    });
  }
  // Operands left to right, so the IR does not depend on the compiler's
  // argument evaluation order.
  auto binary = [&](P::ExprContext *l, P::ExprContext *r, antlr4::Token *op) {
    Val lhs = eval(f, l);
    Val rhs = eval(f, r);
    return evalBinary(f, loc(op), op->getText()[0], lhs, rhs);
  };
  if (auto *m = dynamic_cast<P::MulExprContext *>(e))
    return binary(m->expr(0), m->expr(1), m->op);
  if (auto *a = dynamic_cast<P::AddExprContext *>(e))
    return binary(a->expr(0), a->expr(1), a->op);
  if (auto *l = dynamic_cast<P::ListExprContext *>(e)) {
    Val r;
    r.kind = Kind::List;
    for (P::ExprContext *x : l->expr()) {
      r.list.push_back(eval(f, x));
      if (!r.list.back().ok())
        return Val::error();
    }
    return r;
  }
  auto *i = cast<P::InstanceExprContext>(e);
  auto d = error(loc(e)) << "'" << i->getText() << "' is not a value; a layer "
                         << "instance is used through its parameters, as '"
                         << i->getText() << ".<param>'";
  auto it = instances.find(i->getText());
  if (it != instances.end() && !it->second.params.empty())
    d.attachNote() << "for example '" << i->getText() << "."
                   << it->second.params.begin()->getKey() << "'";
  return Val::error();
}

Val Generator::evalName(Frame &f, antlr4::Token *tok) {
  std::string name = tok->getText();
  Location l = loc(tok);
  if (auto it = f.locals.find(name); it != f.locals.end())
    return it->second;
  if (f.layer) {
    if (Value p = f.layer->params.lookup(name))
      return Val::of(p);
    if (auto it = f.layer->intArgs.find(name); it != f.layer->intArgs.end())
      return Val::intNum(it->second);
  }
  // A graph input whose declaration failed was reported there.
  if (failedGraphInputs.contains(name))
    return Val::error();
  auto graphInput = llvm::find_if(
      graphInputs, [&](const GraphInput &g) { return g.name == name; });
  if (graphInput != graphInputs.end() &&
      (graphInput->edge || f.stage != Stage::Model)) {
    if (graphInput->edge)
      error(l) << "edge input '" << name << "' is read in apply_edge as 'e."
               << name << "'";
    else if (f.stage == Stage::ApplyEdge)
      error(l) << "vertex input '" << name << "' reaches edges through "
               << "scatter: 'scatter(v) { " << name << " = v." << name
               << "; }', then 'e.src." << name << "'";
    else
      error(l) << "graph input '" << name << "' is read through the vertex: '"
               << f.elem << "." << name << "'";
    return Val::error();
  }
  if (f.stage == Stage::Model) {
    if (auto it = layers.find(name); it != layers.end()) {
      error(l) << "layer '" << name << "' needs its arguments before its "
               << "input: '" << name << "(...)(h)'";
      return Val::error();
    }
  }
  if (isBuiltin(name)) {
    error(l) << "'" << name << "' is a function; call it: '" << name
             << "(...)'";
    return Val::error();
  }
  if (name == f.elem) {
    error(l) << "'" << name << "' is the " << stageName(f.stage)
             << " element, not a value; read one of its fields ('" << name
             << (f.stage == Stage::ApplyEdge ? ".src.h'" : ".h'") << ")";
    return Val::error();
  }
  auto d = error(l) << "unknown name '" << name << "'";
  // Stage-aware hints: the names a user most often means.
  if (f.stage == Stage::ApplyEdge && f.layer && f.layer->scattered.count(name)) {
    d.attachNote(l) << "did you mean '" << f.elem << ".src." << name
                    << "' or '" << f.elem << ".dst." << name << "'?";
    return Val::error();
  }
  if ((f.stage == Stage::ApplyVertex || f.stage == Stage::Scatter) &&
      (name == "h" || name == "deg" || name == "id")) {
    d.attachNote(l) << "did you mean '" << f.elem << "." << name << "'?";
    return Val::error();
  }
  suggest(d, name, visibleNames(f));
  return Val::error();
}

// `v.h`, `v.deg`, `e.src.h`, `e.w`, `GCNConv#0.W`.
Val Generator::evalMember(Frame &f, P::MemberExprContext *e) {
  std::string field = e->ID()->getText();
  Location l = loc(e->ID());
  // Layer instance parameters, in the model.
  if (auto *inst = dynamic_cast<P::InstanceExprContext *>(e->expr())) {
    std::string layer = inst->ID()->getText();
    std::string name = layer + "#" + inst->INT()->getText();
    if (f.stage != Stage::Model) {
      error(loc(inst)) << "layer instances are named only in the model";
      return Val::error();
    }
    auto it = instances.find(name);
    if (it == instances.end()) {
      auto d = error(loc(inst)) << "no layer instance '" << name << "'";
      unsigned n = instanceCount.lookup(layer);
      if (n)
        d.attachNote() << "the model applies '" << layer << "' " << n
                       << " time" << (n > 1 ? "s" : "") << " (" << layer
                       << "#0 to " << layer << "#" << n - 1
                       << "), numbered in order of appearance";
      else if (layers.count(layer))
        d.attachNote() << "the model never applies '" << layer << "'";
      else
        d.attachNote() << "there is no layer '" << layer << "'";
      return Val::error();
    }
    Instance &instance = it->second;
    if (instance.state == Instance::Failed)
      return Val::error(); // its application reported why
    if (instance.state == Instance::Pending) {
      auto d = error(loc(inst)) << "layer instance '" << name
                                << "' is used before the model creates it";
      d.attachNote(loc(instance.at)) << "'" << name << "' is created here";
      return Val::error();
    }
    if (Value p = instance.params.lookup(field))
      return Val::of(p);
    auto d = error(l) << "layer instance '" << name << "' has no parameter '"
                      << field << "'";
    std::vector<std::string> names;
    for (auto &kv : instance.params)
      names.push_back(kv.getKey().str());
    suggest(d, field, names);
    return Val::error();
  }

  // Flatten `a.b.c` into a path of names.
  std::vector<antlr4::Token *> path{e->ID()->getSymbol()};
  P::ExprContext *base = e->expr();
  while (auto *m = dynamic_cast<P::MemberExprContext *>(base)) {
    path.insert(path.begin(), m->ID()->getSymbol());
    base = m->expr();
  }
  auto *root = dynamic_cast<P::NameExprContext *>(base);
  std::string rootName = root ? root->ID()->getText() : "";
  if (!root || f.stage == Stage::Model || rootName != f.elem) {
    if (root && (f.locals.count(rootName) ||
                 (f.layer && f.layer->params.count(rootName)))) {
      error(l) << "'" << rootName << "' is a value and has no fields";
      return Val::error();
    }
    if (root && f.stage != Stage::Model && !f.elem.empty()) {
      auto d = error(loc(root)) << "unknown name '" << rootName << "'";
      d.attachNote() << "the " << stageName(f.stage) << " element is '"
                     << f.elem << "'";
      return Val::error();
    }
    error(loc(e)) << "fields ('x.y') are read from the element of a stage: "
                  << "'v.h', 'e.src.h'";
    return Val::error();
  }
  LayerState &st = *f.layer;
  if (f.stage == Stage::ApplyEdge) {
    std::string first = path[0]->getText();
    if (first == "src" || first == "dst") {
      if (path.size() != 2) {
        error(loc(path[0])) << "'" << f.elem << "." << first
                            << "' names a vertex; read one of its values: '"
                            << f.elem << "." << first << ".h'";
        return Val::error();
      }
      std::string name = path[1]->getText();
      if (!st.scattered.count(name)) {
        auto d = error(loc(path[1])) << "'" << name << "' is not scattered "
                                     << "to edges";
        if (name == "deg" || name == "id" ||
            llvm::any_of(graphInputs,
                         [&](const GraphInput &g) { return g.name == name; }))
          d.attachNote() << "make it visible in scatter: 'scatter(v) { "
                         << name << " = v." << name << "; }'";
        else {
          std::vector<std::string> names;
          for (auto &kv : st.scattered)
            names.push_back(kv.getKey().str());
          suggest(d, name, names);
        }
        return Val::error();
      }
      return Val::of(f.body->arg(scatterOf(st, first == "src" ? 0 : 1, name,
                                            loc(path[1]))));
    }
    if (path.size() != 1) {
      error(loc(path[1])) << "edge input '" << first << "' has no fields";
      return Val::error();
    }
    if (Value w = domainInput(st, first, l, /*edge=*/true))
      return Val::of(f.body->arg(w));
    if (failedGraphInputs.contains(first))
      return Val::error(); // reported at its declaration
    auto d = error(l) << "edge has no value '" << first << "'";
    d.attachNote() << "an edge reads '" << f.elem << ".src.<name>', '"
                   << f.elem << ".dst.<name>' or an edge input declared in "
                   << "the graph";
    return Val::error();
  }

  // Scatter and apply_vertex: `v.h`, `v.deg`, `v.id`, scattered values
  // (apply_vertex) and vertex graph inputs.
  if (path.size() != 1) {
    error(loc(path[1])) << "'" << f.elem << "." << path[0]->getText()
                        << "' has no fields";
    return Val::error();
  }
  std::string name = path[0]->getText();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(st.entry);
  if (name == "deg") {
    if (!st.degree)
      st.degree = DegreeOp::create(
          b, l, VertexType::get(&ctx, {}, b.getF32Type()));
    return Val::of(f.body->arg(st.degree));
  }
  if (name == "id") {
    if (!st.vertexId)
      st.vertexId = VertexIdOp::create(
          b, l, VertexType::get(&ctx, {}, b.getI32Type()));
    return Val::of(f.body->arg(st.vertexId));
  }
  if (f.stage == Stage::ApplyVertex || name == "h")
    if (Value v = st.scattered.lookup(name))
      return Val::of(f.body->arg(name == "h" ? st.h : v));
  if (Value v = domainInput(st, name, l, /*edge=*/false))
    return Val::of(f.body->arg(v));
  if (failedGraphInputs.contains(name))
    return Val::error(); // reported at its declaration
  if (llvm::any_of(graphInputs, [&](const GraphInput &g) {
        return g.edge && g.name == name;
      })) {
    error(l) << "'" << name << "' is an edge input; read it in apply_edge as "
             << "'e." << name << "'";
    return Val::error();
  }
  auto d = error(l) << "vertex has no value '" << name << "'";
  std::vector<std::string> names{"h", "deg", "id"};
  for (const GraphInput &g : graphInputs)
    if (!g.edge)
      names.push_back(g.name);
  suggest(d, name, names);
  return Val::error();
}

Val Generator::evalCall(Frame &f, P::CallExprContext *e) {
  auto argExprs = e->expr();
  P::ExprContext *calleeExpr = argExprs[0];
  argExprs.erase(argExprs.begin());
  std::vector<Val> args;
  bool argsOk = true;
  for (P::ExprContext *a : argExprs) {
    args.push_back(eval(f, a));
    argsOk &= args.back().ok();
  }

  // Applying a constructed layer: `GCNConv(16, 7)(h)`.
  if (dynamic_cast<P::CallExprContext *>(calleeExpr)) {
    // Whatever fails, the instance this application creates (if it names a
    // layer) is marked failed, so that its uses do not cascade.
    llvm::scope_exit settle([&] {
      if (auto it = instanceOf.find(e); it != instanceOf.end()) {
        Instance &inst = instances[it->second];
        if (inst.state == Instance::Pending)
          inst.state = Instance::Failed;
      }
    });
    Val ctor = eval(f, calleeExpr);
    if (!ctor.ok() || !argsOk)
      return Val::error();
    if (ctor.kind != Kind::LayerCtor) {
      error(loc(e)) << "only a layer can be applied to an input";
      return Val::error();
    }
    assert(instanceOf.count(e) && "layer application was not numbered");
    return applyLayer(loc(calleeExpr), ctor, args, calleeExpr->getStart(),
                      instanceOf.lookup(e));
  }
  auto *callee = dynamic_cast<P::NameExprContext *>(calleeExpr);
  if (!callee) {
    error(loc(calleeExpr)) << "this expression cannot be called";
    return Val::error();
  }
  antlr4::Token *fn = callee->ID()->getSymbol();
  std::string name = fn->getText();
  if (auto it = layers.find(name); it != layers.end()) {
    if (f.stage != Stage::Model) {
      error(loc(fn)) << "layers are composed in the model, not inside "
                     << stageName(f.stage);
      return Val::error();
    }
    auto decl = it->second;
    auto params = decl->layerArg();
    if (args.size() != params.size()) {
      auto d = error(loc(fn)) << "layer '" << name << "' takes "
                              << params.size() << " argument"
                              << (params.size() == 1 ? "" : "s") << ", got "
                              << args.size();
      d.attachNote(loc(decl->ID())) << "'" << name << "' is defined here";
      return Val::error();
    }
    Val ctor;
    ctor.kind = Kind::LayerCtor;
    ctor.layer = decl;
    for (auto [i, a] : llvm::enumerate(args)) {
      if (!a.ok())
        return Val::error();
      auto v = intArg(a, loc(argExprs[i]),
                      "layer argument '" + params[i]->ID(0)->getText() + "'");
      if (!v)
        return Val::error();
      if (*v <= 0) {
        error(loc(argExprs[i])) << "layer argument '"
                                << params[i]->ID(0)->getText()
                                << "' must be positive, got " << *v;
        return Val::error();
      }
      ctor.args.push_back(*v);
    }
    return ctor;
  }
  if (!isBuiltin(name)) {
    auto d = error(loc(fn)) << "unknown function '" << name << "'";
    std::vector<std::string> names(std::begin(kBuiltins), std::end(kBuiltins));
    for (auto &kv : layers)
      names.push_back(kv.getKey().str());
    suggest(d, name, names);
    return Val::error();
  }
  if (!argsOk)
    return Val::error();
  return evalBuiltin(f, fn, args, argExprs);
}

} // namespace saga::mlirgen
