//===- MLIRGen.cpp - .saga parse tree to saga IR --------------------------===//
//
// One walk over the parse tree checks names, compile-time shapes and domains
// and builds the saga ops. Layers are instantiated per argument tuple into
// `func.func`s; the model becomes a `saga.model` that owns the parameters of
// every layer instance. Stage bodies are built into detached blocks whose
// arguments are created on first use of a vertex or edge value, so a body's
// inputs are exactly the graph values it reads.
//
// Errors are reported and generation continues with the next statement; a
// name whose definition failed is poisoned so that it does not cascade.
//
// The Generator (parser/GeneratorImpl.h) is defined across MLIRGen*.cpp;
// this file holds the top level, the graph and layer declarations and the
// model with its statements.
//
//===----------------------------------------------------------------------===//

#include "parser/MLIRGen.h"
#include "parser/GeneratorImpl.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"

#include <set>

using namespace mlir;
using namespace saga;
using P = saga::grammar::SagaParser;

namespace saga::mlirgen {

//===----------------------------------------------------------------------===//
// Top level
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> Generator::run(P::FileContext *file) {
  // A layer instantiated with several argument tuples may report the same
  // error once per tuple; users see it once, with the note naming the first
  // instantiation that met it (notes are not part of the key).
  std::set<std::string> seen;
  ScopedDiagnosticHandler dedupe(&ctx, [&](Diagnostic &d) {
    std::string key;
    llvm::raw_string_ostream os(key);
    os << d.getLocation() << ": " << d.str();
    return success(!seen.insert(key).second);
  });
  OwningOpRef<ModuleOp> owned = ModuleOp::create(loc(file));
  module = *owned;
  // Graph and layers first, so the model may precede them in the file.
  for (P::DeclContext *d : file->decl()) {
    if (auto *g = d->graphDecl())
      declareGraph(g);
    else if (auto *l = d->layerDecl())
      declareLayer(l);
  }
  for (P::DeclContext *d : file->decl())
    if (auto *m = d->modelDecl())
      genModel(m);
  if (errors)
    return nullptr;
  if (failed(verify(*owned)))
    return nullptr;
  return owned;
}

void Generator::declareGraph(P::GraphDeclContext *g) {
  if (graphSeen) {
    error(loc(g)) << "the file declares a second graph; one graph block "
                  << "declares all inputs";
    return;
  }
  graphSeen = true;
  for (auto *opt : g->ID()) {
    if (text(opt) == "self_loops") {
      if (selfLoops)
        error(loc(opt)) << "graph option 'self_loops' is given twice";
      selfLoops = true;
      continue;
    }
    error(loc(opt)) << "unknown graph option '" << text(opt)
                    << "'; the only option is 'self_loops'";
  }
  llvm::StringMap<Location> seen;
  for (P::GraphInputContext *in : g->graphInput()) {
    std::string name = text(in->ID());
    Location l = loc(in->ID());
    if (auto it = seen.find(name); it != seen.end()) {
      auto d = error(l) << "graph input '" << name << "' is declared twice";
      d.attachNote(it->second) << "first declared here";
      continue;
    }
    seen.try_emplace(name, l);
    bool edge = in->kind->getText() == "edge";
    std::string elem = text(in->typeSpec()->ID());
    // A failed input is known by name, so its uses do not cascade.
    failedGraphInputs.insert(name);
    auto shape = evalShape(in->typeSpec(), {});
    if (!shape)
      continue;
    GraphInput gi{name, edge, Type(), l, std::nullopt, std::nullopt};
    Type elemType;
    if (elem == "f32") {
      elemType = b.getF32Type();
    } else if (elem == "class") {
      if (shape->size() != 1) {
        error(loc(in->typeSpec())) << "a class input names its number of "
                                   << "classes: 'class[7]'";
        continue;
      }
      gi.numClasses = (*shape)[0];
      shape->clear();
      elemType = b.getI32Type();
    } else {
      auto d = error(loc(in->typeSpec())) << "unknown element type '" << elem
                                          << "'; graph inputs are 'f32' "
                                          << "features or 'class[N]' labels";
      continue;
    }
    if (in->number()) {
      if (gi.numClasses) {
        error(loc(in->number())) << "a class input has no default value";
        continue;
      }
      auto value = parseNumber(in->number(), in->MINUS() != nullptr);
      if (!value)
        continue;
      gi.defaultValue = *value;
    }
    gi.type = edge ? Type(EdgeType::get(&ctx, *shape, elemType))
                   : Type(VertexType::get(&ctx, *shape, elemType));
    graphInputs.push_back(gi);
    failedGraphInputs.erase(name);
  }
}

void Generator::declareLayer(P::LayerDeclContext *l) {
  std::string name = text(l->ID());
  if (auto it = layers.find(name); it != layers.end()) {
    auto d = error(loc(l->ID())) << "layer '" << name << "' is defined twice";
    d.attachNote(loc(it->second->ID())) << "first defined here";
    return;
  }
  if (isBuiltin(name)) {
    error(loc(l->ID())) << "layer name '" << name << "' is a built-in function";
    return;
  }
  layers[name] = l;

  // What can be checked without the layer's arguments is checked once here;
  // shapes and names in the stages are checked per instantiation.
  unsigned before = errors;
  llvm::StringMap<Location> seen;
  auto declare = [&](antlr4::tree::TerminalNode *id, StringRef what) {
    auto [it, inserted] = seen.try_emplace(text(id), loc(id));
    if (inserted)
      return;
    auto d = error(loc(id)) << what << " '" << text(id)
                            << "' is declared twice in layer '" << name << "'";
    d.attachNote(it->second) << "first declared here";
  };
  for (P::LayerArgContext *a : l->layerArg()) {
    declare(a->ID(0), "argument");
    if (a->ID(1)->getText() != "int")
      error(loc(a->ID(1))) << "layer arguments are compile-time integers: "
                           << "write '" << text(a->ID(0)) << ": int'";
  }
  llvm::StringMap<antlr4::ParserRuleContext *> stages;
  for (P::LayerItemContext *item : l->layerItem()) {
    if (auto *pd = item->paramDecl()) {
      declare(pd->ID(), "parameter");
      std::string elem = text(pd->typeSpec()->ID());
      if (elem != "f32")
        error(loc(pd->typeSpec())) << "parameters are f32 tensors, not '"
                                   << elem << "'";
      continue;
    }
    auto *stage = cast<antlr4::ParserRuleContext>(item->children[0]);
    std::string kind = stage->getStart()->getText();
    auto [it, inserted] = stages.try_emplace(kind, stage);
    if (!inserted) {
      auto d = error(loc(stage)) << "layer '" << name << "' has a second "
                                 << kind << " stage";
      d.attachNote(loc(it->second)) << "first " << kind << " here";
    }
  }
  if (errors != before)
    badLayers.insert(name);
}

std::optional<SmallVector<int64_t>>
Generator::evalShape(P::TypeSpecContext *t,
                     const llvm::StringMap<int64_t> &intArgs) {
  SmallVector<int64_t> shape;
  bool ok = true;
  for (P::ExprContext *e : t->expr()) {
    auto d = evalInt(e, intArgs);
    if (!d) {
      ok = false;
      continue;
    }
    if (*d <= 0) {
      error(loc(e)) << "dimension " << *d << " must be positive";
      ok = false;
      continue;
    }
    shape.push_back(*d);
  }
  if (!ok)
    return std::nullopt;
  // Checked before multiplying, so that the product cannot wrap around.
  constexpr int64_t kMaxElements = int64_t(1) << 40;
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (elements > kMaxElements / d) {
      error(loc(t)) << "shape " << formatShape(shape) << " is too large";
      return std::nullopt;
    }
    elements *= d;
  }
  return shape;
}

// A compile-time integer: literals, layer arguments, + - * / and parentheses.
std::optional<int64_t>
Generator::evalInt(P::ExprContext *e, const llvm::StringMap<int64_t> &intArgs) {
  if (auto *n = dynamic_cast<P::NumberExprContext *>(e)) {
    if (!n->number()->INT()) {
      error(loc(e)) << "expected an integer, got '" << e->getText() << "'";
      return std::nullopt;
    }
    std::string s = n->number()->getText();
    if (s.size() > 12) {
      error(loc(e)) << "integer " << s << " is too large";
      return std::nullopt;
    }
    return std::stoll(s);
  }
  if (auto *n = dynamic_cast<P::NameExprContext *>(e)) {
    auto it = intArgs.find(n->ID()->getText());
    if (it != intArgs.end())
      return it->second;
    auto d = error(loc(e)) << "'" << n->ID()->getText()
                           << "' is not a compile-time integer";
    if (!intArgs.empty()) {
      std::vector<std::string> names;
      for (auto &kv : intArgs)
        names.push_back(kv.getKey().str());
      suggest(d, n->ID()->getText(), names);
    }
    return std::nullopt;
  }
  if (auto *p = dynamic_cast<P::ParenExprContext *>(e))
    return evalInt(p->expr(), intArgs);
  if (auto *n = dynamic_cast<P::NegExprContext *>(e)) {
    auto v = evalInt(n->expr(), intArgs);
    return v ? intArith(loc(e), 'n', 0, *v) : std::nullopt;
  }
  auto binary = [&](P::ExprContext *l, P::ExprContext *r,
                    antlr4::Token *op) -> std::optional<int64_t> {
    auto a = evalInt(l, intArgs), c = evalInt(r, intArgs);
    if (!a || !c)
      return std::nullopt;
    char o = op->getText()[0];
    if (o == '@') {
      error(loc(op)) << "'@' is not allowed in a compile-time integer";
      return std::nullopt;
    }
    if (o == '/' && !divides(*a, *c)) {
      error(loc(op)) << "'" << *a << " / " << *c
                     << "' is not an exact integer division";
      return std::nullopt;
    }
    return intArith(loc(op), o, *a, *c);
  };
  if (auto *m = dynamic_cast<P::MulExprContext *>(e))
    return binary(m->expr(0), m->expr(1), m->op);
  if (auto *a = dynamic_cast<P::AddExprContext *>(e))
    return binary(a->expr(0), a->expr(1), a->op);
  error(loc(e)) << "expected a compile-time integer (a literal, a layer "
                << "argument or arithmetic on them), got '" << e->getText()
                << "'";
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

void Generator::genModel(P::ModelDeclContext *m) {
  std::string name = text(m->ID());
  if (auto it = modelNames.find(name); it != modelNames.end()) {
    auto d = error(loc(m->ID())) << "model '" << name << "' is defined twice";
    d.attachNote(it->second) << "first defined here";
    return;
  }
  modelNames.try_emplace(name, loc(m->ID()));

  SmallVector<Type> argTypes;
  for (const GraphInput &gi : graphInputs)
    argTypes.push_back(gi.type);
  b.setInsertionPointToEnd(module.getBody());
  auto model = ModelOp::create(b, loc(m), name, b.getFunctionType(argTypes, {}));
  if (selfLoops)
    model->setAttr("saga.self_loops", b.getUnitAttr());
  modelBlock = new Block();
  model.getBody().push_back(modelBlock);
  modelInputs.clear();
  numberInstances(m);
  for (auto [i, gi] : llvm::enumerate(graphInputs)) {
    Value arg = modelBlock->addArgument(gi.type, gi.loc);
    modelInputs[gi.name] = arg;
    SmallVector<NamedAttribute> attrs{
        b.getNamedAttr("saga.name", b.getStringAttr(gi.name))};
    if (gi.defaultValue)
      attrs.push_back(b.getNamedAttr("saga.default",
                                     b.getF64FloatAttr(*gi.defaultValue)));
    if (gi.numClasses)
      attrs.push_back(b.getNamedAttr("saga.num_classes",
                                     b.getI64IntegerAttr(*gi.numClasses)));
    model.setArgAttrs(i, b.getDictionaryAttr(attrs));
  }

  Frame f(Stage::Model, "", "", nullptr, nullptr);
  for (const GraphInput &gi : graphInputs)
    if (!gi.edge)
      f.locals[gi.name] = Val::of(modelInputs.lookup(gi.name));
  for (auto &failed : failedGraphInputs)
    f.locals[failed.getKey()] = Val::error();
  b.setInsertionPointToEnd(modelBlock);
  genBlock(f, m->block(), /*allowReturn=*/false);

  SmallVector<Value> results;
  auto out = f.locals.find("out");
  if (out == f.locals.end()) {
    error(loc(m->ID())) << "model '" << name << "' never assigns 'out', its "
                        << "prediction: add 'out = ...;'";
  } else if (out->second.ok()) {
    if (out->second.kind != Kind::Domain ||
        cast<DomainType>(out->second.value.getType()).isEdgeDomain())
      error(assignedAt(f, "out", loc(m->ID()))) << "'out' must be a vertex value (one "
                                      << "prediction per vertex)";
    else
      results.push_back(out->second.value);
  }
  // A link predictor is scored on `out`'s rows: the loss must train them.
  if (!results.empty())
    for (Operation &op : *modelBlock)
      if (auto pl = dyn_cast<PairBceOp>(op); pl && pl.getInput() != results[0])
        error(pl.getLoc()) << "pair_bce must score 'out' (the embeddings "
                           << "link prediction ranks pairs by): write "
                           << "'out = h; loss = pair_bce(out);'";
  if (auto loss = f.locals.find("loss"); loss != f.locals.end() &&
                                         loss->second.ok()) {
    const Val &v = loss->second;
    if (v.kind != Kind::Tensor ||
        cast<RankedTensorType>(v.value.getType()).getRank() != 0)
      error(assignedAt(f, "loss", loc(m->ID()))) << "'loss' must be a scalar computed "
                                       << "from the model (a loss such as "
                                       << "cross_entropy(out, label))";
    else
      results.push_back(v.value);
  }
  // Named outputs (embeddings and other intermediate vertex values).
  SmallVector<Attribute> outputNames;
  for (const std::string &o : outputs) {
    auto it = f.locals.find(o);
    if (it == f.locals.end()) {
      std::vector<std::string> vertexValues;
      for (const auto &e : f.locals) {
        const Val &v = e.getValue();
        if (v.ok() && v.kind == Kind::Domain &&
            !cast<DomainType>(v.value.getType()).isEdgeDomain())
          vertexValues.push_back(e.getKey().str());
      }
      llvm::sort(vertexValues);
      std::string names = llvm::join(vertexValues, ", ");
      error(loc(m->ID())) << "model '" << name << "' has no value named '"
                          << o << "' to output; its vertex values: " << names;
      continue;
    }
    if (!it->second.ok())
      continue;
    if (it->second.kind != Kind::Domain ||
        cast<DomainType>(it->second.value.getType()).isEdgeDomain()) {
      error(assignedAt(f, o, loc(m->ID())))
          << "'" << o << "' is not a vertex value (one row per vertex), so "
          << "it cannot be output";
      continue;
    }
    results.push_back(it->second.value);
    outputNames.push_back(b.getStringAttr(o));
  }
  if (!outputNames.empty())
    model->setAttr("saga.outputs", b.getArrayAttr(outputNames));
  ReturnOp::create(b, loc(m->block()->getStop()), results);
  model.setType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
}

// Numbers the applications `L(args)(h)` of each layer in the model in the
// order their layer names appear in the source, before anything is
// generated: in `L(4)(L(4)(x))` the outer application is `L#0`. Failed
// applications keep their numbers, so later ones do not shift.
void Generator::numberInstances(P::ModelDeclContext *m) {
  instanceCount.clear();
  instanceOf.clear();
  instancesIn.clear();
  instances.clear();
  for (P::StmtContext *stmt : m->block()->stmt()) {
    // Pre-order, children left to right: the order of the start tokens. An
    // explicit stack, as expressions may nest deeply.
    std::vector<antlr4::tree::ParseTree *> todo{stmt};
    while (!todo.empty()) {
      antlr4::tree::ParseTree *node = todo.back();
      todo.pop_back();
      todo.insert(todo.end(), node->children.rbegin(), node->children.rend());
      auto *app = dynamic_cast<P::CallExprContext *>(node);
      auto *ctor = app ? dynamic_cast<P::CallExprContext *>(app->expr(0))
                       : nullptr;
      auto *name = ctor ? dynamic_cast<P::NameExprContext *>(ctor->expr(0))
                        : nullptr;
      if (!name || !layers.count(name->ID()->getText()))
        continue;
      std::string layer = name->ID()->getText();
      std::string instance =
          layer + "#" + std::to_string(instanceCount[layer]++);
      instanceOf[app] = instance;
      instancesIn[stmt].push_back(instance);
      instances[instance].at = name->ID()->getSymbol();
    }
  }
}

std::optional<Val> Generator::genBlock(Frame &f, P::BlockContext *blk,
                                       bool allowReturn) {
  std::optional<Val> ret;
  for (P::StmtContext *s : blk->stmt()) {
    // An application the statement did not reach failed with an error
    // reported (a statement is skipped only after an error).
    llvm::scope_exit settle([&] {
      if (f.stage != Stage::Model)
        return;
      for (const std::string &name : instancesIn.lookup(s)) {
        Instance &inst = instances[name];
        if (inst.state == Instance::Pending)
          inst.state = Instance::Failed;
      }
    });
    if (auto *a = dynamic_cast<P::AssignStmtContext *>(s)) {
      std::string name = text(a->ID());
      Location l = loc(a->ID());
      if (f.layer && f.layer->params.count(name)) {
        error(l) << "cannot assign to parameter '" << name << "'";
        continue;
      }
      if (name == f.elem || (!f.agg.empty() && name == f.agg)) {
        error(l) << "cannot assign to '" << name << "', the "
                 << (name == f.elem ? "element" : "aggregate")
                 << " this stage receives";
        continue;
      }
      if (f.stage == Stage::Model && modelInputs.count(name)) {
        error(l) << "cannot assign to graph input '" << name << "'";
        continue;
      }
      Val v = eval(f, a->expr());
      if (v.ok() && (v.kind == Kind::LayerCtor || v.kind == Kind::List)) {
        error(loc(a->expr())) << "'" << name << "' must hold a value; "
                              << (v.kind == Kind::List
                                      ? "a list is only a reshape argument"
                                      : "apply the layer to an input: "
                                        "'Layer(args)(h)'");
        v = Val::error();
      }
      f.locals[name] = v;
      f.assigned.insert_or_assign(name, l);
      continue;
    }
    auto *r = cast<P::ReturnStmtContext>(s);
    if (!allowReturn) {
      error(loc(r)) << (f.stage == Stage::Model
                            ? "a model has no return; assign its outputs to "
                              "'out' and 'loss'"
                            : "scatter has no return; it defines the values "
                              "edges read by assignment ('h = ...;')");
      continue;
    }
    if (ret) {
      error(loc(r)) << stageName(f.stage) << " returns twice";
      continue;
    }
    ret = eval(f, r->expr());
    f.returned = loc(r->expr());
  }
  return ret;
}

} // namespace saga::mlirgen

OwningOpRef<ModuleOp> saga::generateModule(antlr4::ParserRuleContext *file,
                                           MLIRContext &ctx,
                                           StringAttr filename,
                                           ArrayRef<std::string> outputs) {
  mlirgen::Generator gen(ctx, filename, outputs);
  return gen.run(static_cast<P::FileContext *>(file));
}
