//===- MLIRGenStages.cpp - stage bodies -----------------------------------===//
//
// The stages of a layer (scatter, apply_edge, apply_vertex) as apply ops
// whose bodies are per-element code, and the graph values the bodies read:
// graph inputs taken by the layer function and vertex values scattered to
// edge ends.
//
//===----------------------------------------------------------------------===//

#include "parser/GeneratorImpl.h"

namespace saga::mlirgen {

bool Generator::genScatter(LayerState &st, P::ScatterStageContext *s) {
  Body body(/*edge=*/false);
  Frame f(Stage::Scatter, text(s->ID()), "", &st, &body);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(body.block);
  unsigned before = errors;
  genBlock(f, s->block(), /*allowReturn=*/false);
  if (errors != before)
    return false;
  // Every value the scatter assigns becomes visible on edges.
  std::vector<std::string> names;
  SmallVector<Value> results;
  SmallVector<Location> resultLocs;
  for (P::StmtContext *stmt : s->block()->stmt()) {
    std::string n = cast<P::AssignStmtContext>(stmt)->ID()->getText();
    if (llvm::is_contained(names, n))
      continue;
    Val v = f.locals.lookup(n);
    Location at = assignedAt(f, n, loc(stmt));
    Value t = toTensor(f, at, v);
    if (!t)
      return false;
    names.push_back(n);
    results.push_back(t);
    resultLocs.push_back(at);
  }
  if (results.empty()) {
    error(loc(s)) << "scatter assigns no values; remove it or define what "
                  << "edges read ('h = ...;')";
    return false;
  }
  b.setInsertionPointToEnd(st.entry);
  Value first = finishBody(body, loc(s), results, resultLocs);
  if (!first)
    return false;
  Operation *apply = first.getDefiningOp();
  for (auto [i, n] : llvm::enumerate(names))
    st.scattered[n] = apply->getResult(i);
  return true;
}

std::optional<std::pair<Value, Value>>
Generator::genApplyEdge(LayerState &st, P::ApplyEdgeStageContext *s,
                        const std::string &scoreName, Location l) {
  if (!s) {
    // The default message is the source's `h`.
    if (!scoreName.empty()) {
      error(l) << "softmax_sum reads the score '" << scoreName
               << "' from apply_edge, but the layer has none";
      return std::nullopt;
    }
    return std::make_pair(scatterOf(st, 0, "h", l), Value());
  }
  Body body(/*edge=*/true);
  Frame f(Stage::ApplyEdge, text(s->ID()), "", &st, &body);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(body.block);
  unsigned before = errors;
  std::optional<Val> ret = genBlock(f, s->block(), /*allowReturn=*/true);
  if (errors != before)
    return std::nullopt;
  if (!ret) {
    error(l) << "apply_edge must return the message each edge sends: add "
             << "'return ...;'";
    return std::nullopt;
  }
  SmallVector<Value> results;
  SmallVector<Location> resultLocs{f.returned.value_or(l)};
  Value message = toTensor(f, resultLocs[0], *ret);
  if (!message)
    return std::nullopt;
  results.push_back(message);
  if (!scoreName.empty()) {
    auto it = f.locals.find(scoreName);
    if (it == f.locals.end()) {
      error(l) << "softmax_sum reads the score '" << scoreName
               << "', which apply_edge does not assign";
      return std::nullopt;
    }
    Location at = assignedAt(f, scoreName, l);
    Value score = toTensor(f, at, it->second);
    if (!score)
      return std::nullopt;
    results.push_back(score);
    resultLocs.push_back(at);
  }
  b.setInsertionPointToEnd(st.entry);
  Value first = finishBody(body, l, results, resultLocs);
  if (!first)
    return std::nullopt;
  Operation *apply = first.getDefiningOp();
  return std::make_pair(apply->getResult(0),
                        results.size() > 1 ? apply->getResult(1) : Value());
}

Value Generator::genApplyVertex(LayerState &st, P::ApplyVertexStageContext *s,
                                Value aggregate, Location l) {
  if (!s)
    return aggregate;
  auto ids = s->ID();
  Body body(/*edge=*/false);
  Frame f(Stage::ApplyVertex, text(ids[0]), text(ids[1]), &st, &body);
  if (f.elem == f.agg) {
    error(loc(ids[1])) << "apply_vertex names its vertex and its aggregate "
                       << "differently: 'apply_vertex(v, a)'";
    return {};
  }
  f.locals[f.agg] = Val::of(aggregate);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(body.block);
  unsigned before = errors;
  std::optional<Val> ret = genBlock(f, s->block(), /*allowReturn=*/true);
  if (errors != before)
    return {};
  if (!ret) {
    error(l) << "apply_vertex must return the layer's output: add "
             << "'return ...;'";
    return {};
  }
  Location at = f.returned.value_or(l);
  Value out = toTensor(f, at, *ret);
  if (!out)
    return {};
  b.setInsertionPointToEnd(st.entry);
  return finishBody(body, l, {out}, {at});
}

// Closes a body with a yield and wraps it in apply_edge/apply_vertex at the
// builder's insertion point; returns the first result. `resultLocs` are where
// the results were assigned or returned, for errors.
Value Generator::finishBody(Body &body, Location l, ArrayRef<Value> results,
                            ArrayRef<Location> resultLocs) {
  assert(results.size() == resultLocs.size() && "one location per result");
  for (auto [r, rl] : llvm::zip_equal(results, resultLocs)) {
    Type elem = getElementTypeOrSelf(r.getType());
    if (!isa<FloatType>(elem)) {
      error(rl) << "stage results are f32 features; this one holds " << elem
                << " (class labels and vertex ids are not features)";
      return {};
    }
  }
  OpBuilder inner(&ctx);
  inner.setInsertionPointToEnd(body.block);
  YieldOp::create(inner, l, results);
  SmallVector<Type> types;
  for (Value r : results) {
    auto t = cast<RankedTensorType>(r.getType());
    types.push_back(body.edge
                        ? Type(EdgeType::get(&ctx, t.getShape(), t.getElementType()))
                        : Type(VertexType::get(&ctx, t.getShape(),
                                               t.getElementType())));
  }
  Operation *op;
  if (body.edge)
    op = ApplyEdgeOp::create(b, l, types, body.inputs);
  else
    op = ApplyVertexOp::create(b, l, types, body.inputs);
  op->getRegion(0).push_back(body.block);
  return op->getResult(0);
}

Value Generator::domainInput(LayerState &st, const std::string &name,
                             Location l, bool edge) {
  if (Value v = st.graphArgs.lookup(name))
    return v;
  auto it = llvm::find_if(graphInputs,
                          [&](const GraphInput &g) { return g.name == name; });
  if (it == graphInputs.end() || it->edge != edge)
    return {};
  // Graph inputs follow `h` in the order they are first used.
  unsigned index = 1 + st.graphInputsUsed.size();
  Value arg = st.entry->insertArgument(index, it->type, l);
  st.graphInputsUsed.push_back(name);
  st.graphArgs[name] = arg;
  return arg;
}

Value Generator::scatterOf(LayerState &st, int end, const std::string &name,
                           Location l) {
  auto key = std::make_pair(end, name);
  if (Value v = st.scatters[key])
    return v;
  Value vertex = st.scattered.lookup(name);
  auto vt = cast<VertexType>(vertex.getType());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(st.entry);
  Value e = ScatterOp::create(
      b, l, EdgeType::get(&ctx, vt.getShape(), vt.getElementType()),
      end == 0 ? EdgeEnd::src : EdgeEnd::dst, vertex);
  st.scatters[key] = e;
  return e;
}

} // namespace saga::mlirgen
