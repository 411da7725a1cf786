//===- MLIRGenLayers.cpp - layer instances --------------------------------===//
//
// Applying a layer in the model: `L(args)(h)` declares the parameters of the
// instance in the model and calls the layer's function for that argument
// tuple and input type, generated on first use. A layer function runs
// scatter, apply_edge, the gather and apply_vertex in turn.
//
//===----------------------------------------------------------------------===//

#include "parser/GeneratorImpl.h"

#include "mlir/IR/SymbolTable.h"

namespace saga::mlirgen {

//===----------------------------------------------------------------------===//
// Layers
//===----------------------------------------------------------------------===//

Val Generator::applyLayer(Location l, const Val &ctor, ArrayRef<Val> inputs,
                          antlr4::Token *at, const std::string &instance) {
  std::string name = text(ctor.layer->ID());
  if (inputs.size() != 1) {
    error(l) << "layer '" << name << "' takes one input (its 'h'), got "
             << inputs.size();
    return Val::error();
  }
  if (!inputs[0].ok())
    return Val::error();
  if (inputs[0].kind != Kind::Domain ||
      cast<DomainType>(inputs[0].value.getType()).isEdgeDomain()) {
    error(l) << "layer '" << name << "' takes a vertex value as input";
    return Val::error();
  }
  Value h = inputs[0].value;
  auto hType = cast<VertexType>(h.getType());
  if (!isa<FloatType>(hType.getElementType())) {
    error(l) << "layer '" << name << "' needs f32 features, got " << hType;
    return Val::error();
  }
  LayerFunc &lf = instantiate(ctor.layer, ctor.args, hType, l);
  if (lf.failed)
    return Val::error();

  // Parameters of this instance, declared in the model.
  Instance &inst = instances[instance];
  inst.state = Instance::Created;
  auto &params = inst.params;
  SmallVector<Value> operands{h};
  for (const std::string &g : lf.graphInputs)
    operands.push_back(modelInputs.lookup(g));
  P::LayerDeclContext *decl = ctor.layer;
  llvm::StringMap<int64_t> intArgs;
  for (auto [i, a] : llvm::enumerate(decl->layerArg()))
    intArgs[a->ID(0)->getText()] = ctor.args[i];
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(modelBlock);
  unsigned p = 0;
  for (auto *item : decl->layerItem()) {
    auto *pd = item->paramDecl();
    if (!pd)
      continue;
    Type type = lf.func.getArgumentTypes()[1 + lf.graphInputs.size() + p++];
    Init init = Init::glorot;
    std::optional<double> value;
    if (!pd->init()) {
      init = cast<RankedTensorType>(type).getRank() >= 2 ? Init::glorot
                                                         : Init::zeros;
    } else if (pd->init()->number()) {
      init = Init::constant;
      value = std::strtod(pd->init()->number()->getText().c_str(), nullptr);
      if (pd->init()->MINUS())
        value = -*value;
    } else {
      init = *symbolizeInit(pd->init()->ID()->getText());
    }
    auto param = ParamOp::create(
        b, loc(pd->ID()), type, b.getStringAttr(instance + "." + text(pd->ID())),
        init, value ? b.getF64FloatAttr(*value) : FloatAttr());
    params[text(pd->ID())] = param;
    operands.push_back(param);
  }
  auto call = func::CallOp::create(b, loc(at), lf.func, operands);
  return Val::of(call.getResult(0));
}

LayerFunc &Generator::instantiate(P::LayerDeclContext *decl,
                                  ArrayRef<int64_t> args, Type inputType,
                                  Location callLoc) {
  std::string name = text(decl->ID());
  std::string key = name;
  llvm::raw_string_ostream os(key);
  for (int64_t a : args)
    os << "_" << a;
  std::string funcName = key;
  os << ":" << inputType;
  auto [it, inserted] = layerFuncs.try_emplace(key);
  LayerFunc &lf = it->second;
  if (!inserted)
    return lf;
  if (badLayers.contains(name)) {
    lf.failed = true;
    return lf;
  }
  // Every error in the parameters or the body depends on (or at least was
  // met through) this instantiation; a note names it at the model's call.
  std::string instantiation = name + "(";
  for (auto [i, a] : llvm::enumerate(args))
    instantiation += (i ? ", " : "") + std::to_string(a);
  instantiation += ")";
  ScopedDiagnosticHandler noteInstantiation(&ctx, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error)
      d.attachNote(callLoc) << "in " << instantiation << ", instantiated here";
    return failure(); // not handled: on to the dedupe and the printer
  });

  LayerState st;
  st.decl = decl;
  for (auto [i, a] : llvm::enumerate(decl->layerArg()))
    st.intArgs[a->ID(0)->getText()] = args[i];

  // Parameter shapes come from the layer arguments.
  SmallVector<Type> paramTypes;
  std::vector<std::string> paramNames;
  for (auto *item : decl->layerItem()) {
    auto *pd = item->paramDecl();
    if (!pd)
      continue;
    auto shape = evalShape(pd->typeSpec(), st.intArgs);
    if (!shape) {
      lf.failed = true;
      continue;
    }
    paramTypes.push_back(RankedTensorType::get(*shape, b.getF32Type()));
    paramNames.push_back(text(pd->ID()));
    if (pd->init() && pd->init()->number() &&
        !parseNumber(pd->init()->number(), pd->init()->MINUS() != nullptr))
      lf.failed = true;
    if (pd->init() && pd->init()->ID()) {
      std::string init = pd->init()->ID()->getText();
      auto kind = symbolizeInit(init);
      if (!kind || *kind == Init::constant) {
        auto d = error(loc(pd->init())) << "unknown initialiser '" << init
                                        << "'; use glorot, zeros, ones or a "
                                        << "number";
        suggest(d, init, {"glorot", "zeros", "ones"});
        lf.failed = true;
      } else if (*kind == Init::glorot && shape->size() < 2) {
        error(loc(pd->init())) << "glorot needs a parameter of rank >= 2 "
                               << "(fan-in and fan-out); '" << text(pd->ID())
                               << "' has shape " << formatShape(*shape);
        lf.failed = true;
      }
    }
  }
  if (lf.failed)
    return lf;

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  st.func = func::FuncOp::create(b, loc(decl->ID()), funcName,
                                 b.getFunctionType({}, {}));
  SymbolTable(module).insert(st.func); // renames on a clash
  st.func.setPrivate(); // inlined into the model by lowering
  st.entry = st.func.addEntryBlock();
  st.h = st.entry->addArgument(inputType, callLoc);
  // Graph inputs used by the body are inserted after `h` as they are met;
  // parameters follow them.
  for (auto [i, t] : llvm::enumerate(paramTypes))
    st.params[paramNames[i]] = st.entry->addArgument(t, loc(decl->ID()));

  bool ok = genLayerBody(st);
  lf.func = st.func;
  lf.graphInputs = st.graphInputsUsed;
  lf.params = paramNames;
  if (!ok) {
    lf.failed = true;
    st.func.erase();
    lf.func = nullptr;
    return lf;
  }
  st.func.setType(b.getFunctionType(st.entry->getArgumentTypes(),
                                    st.entry->getTerminator()->getOperandTypes()));
  return lf;
}

bool Generator::genLayerBody(LayerState &st) {
  P::ScatterStageContext *scatter = nullptr;
  P::ApplyEdgeStageContext *applyEdge = nullptr;
  P::GatherStageContext *gather = nullptr;
  P::ApplyVertexStageContext *applyVertex = nullptr;
  // Each stage appears at most once (checked in declareLayer).
  for (auto *item : st.decl->layerItem()) {
    if (auto *s = item->scatterStage())
      scatter = s;
    else if (auto *s = item->applyEdgeStage())
      applyEdge = s;
    else if (auto *s = item->gatherStage())
      gather = s;
    else if (auto *s = item->applyVertexStage())
      applyVertex = s;
  }

  b.setInsertionPointToEnd(st.entry);
  st.scattered["h"] = st.h;
  if (scatter && !genScatter(st, scatter))
    return false;

  // gather(kind) or gather(softmax_sum(score)).
  GatherKind kind = GatherKind::sum;
  std::string scoreName;
  std::optional<double> attentionDropout;
  Location gatherLoc = loc(st.decl->ID());
  if (gather) {
    gatherLoc = loc(gather);
    auto ids = gather->ID();
    std::string k = text(ids[0]);
    auto parsed = symbolizeGatherKind(k);
    if (parsed == GatherKind::logsumexp) // internal: the softmax normaliser
      parsed = std::nullopt;
    if (!parsed) {
      auto d = error(loc(ids[0])) << "unknown gather reduction '" << k
                                  << "'; use sum, mean, max, min or "
                                  << "softmax_sum(score)";
      suggest(d, k, {"sum", "mean", "max", "min", "softmax_sum"});
      return false;
    }
    kind = *parsed;
    if (kind == GatherKind::softmax_sum && ids.size() < 2) {
      error(loc(ids[0])) << "softmax_sum weights each edge by a score: "
                         << "'gather(softmax_sum(score))' with 'score' "
                         << "defined in apply_edge";
      return false;
    }
    if (kind != GatherKind::softmax_sum && ids.size() > 1) {
      error(loc(ids[1])) << "only softmax_sum takes a score; '" << k
                         << "' reduces the edge values alone";
      return false;
    }
    if (ids.size() > 1)
      scoreName = text(ids[1]);
    for (P::GatherOptionContext *opt : gather->gatherOption()) {
      std::string name = text(opt->ID());
      if (name != "dropout") {
        auto d = error(loc(opt->ID()))
                 << "unknown softmax_sum option '" << name
                 << "'; the only option is 'dropout = rate' (attention "
                 << "dropout)";
        suggest(d, name, {"dropout"});
        return false;
      }
      if (attentionDropout) {
        error(loc(opt->ID())) << "attention dropout is given twice";
        return false;
      }
      std::optional<double> rate =
          parseNumber(opt->number(), opt->MINUS() != nullptr);
      if (!rate)
        return false;
      if (*rate < 0.0 || *rate >= 1.0) {
        error(loc(opt->number())) << "dropout rate must be in [0, 1), got "
                                  << formatNumber(*rate);
        return false;
      }
      attentionDropout = *rate;
    }
  }

  Location edgeLoc = applyEdge ? loc(applyEdge) : loc(st.decl->ID());
  auto message = genApplyEdge(st, applyEdge, scoreName, edgeLoc);
  if (!message)
    return false;
  auto [value, score] = *message;
  auto valueType = cast<EdgeType>(value.getType());
  if (score) {
    auto scoreType = cast<EdgeType>(score.getType());
    ArrayRef<int64_t> s = scoreType.getShape(), v = valueType.getShape();
    if (s.size() > v.size() || s != v.take_front(s.size())) {
      error(gatherLoc) << "softmax_sum needs one score per head: the shape of "
                       << "'" << scoreName << "' " << formatShape(s)
                       << " must be a prefix of the message shape "
                       << formatShape(v);
      return false;
    }
  }
  // Stage results are f32 (finishBody), and so is the default message `h`
  // (applyLayer).
  assert(isa<FloatType>(valueType.getElementType()) && "non-f32 message");
  auto aggType = VertexType::get(&ctx, valueType.getShape(),
                                 valueType.getElementType());
  Value aggregate = GatherOp::create(
      b, gatherLoc, aggType, kind, value, score,
      attentionDropout ? b.getF64FloatAttr(*attentionDropout) : FloatAttr());

  Location vertexLoc = applyVertex ? loc(applyVertex) : loc(st.decl->ID());
  Value out = genApplyVertex(st, applyVertex, aggregate, vertexLoc);
  if (!out)
    return false;
  func::ReturnOp::create(b, vertexLoc, out);
  return true;
}

} // namespace saga::mlirgen
