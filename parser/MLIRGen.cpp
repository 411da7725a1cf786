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
//===----------------------------------------------------------------------===//

#include "parser/MLIRGen.h"

#include "dialect/Saga.h"
#include "parser/TensorBuilder.h"

#include "SagaParser.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <optional>

using namespace mlir;
using namespace saga;
using P = saga::grammar::SagaParser;

namespace {

//===----------------------------------------------------------------------===//
// Values during generation
//===----------------------------------------------------------------------===//

enum class Kind {
  Error,     // already reported; suppresses follow-on errors
  Tensor,    // a per-element tensor, a parameter or a scalar
  Domain,    // a vertex or edge value
  Number,    // a literal or a layer argument, typed on use
  LayerCtor, // `GCNConv(16, 7)`, waiting to be applied to a vertex value
  List,      // `[heads * out]`
};

struct Val {
  Kind kind = Kind::Error;
  Value value;
  double number = 0;   // a Number's value
  bool integral = false; // a Number that is an exact integer, `integer`
  int64_t integer = 0;
  P::LayerDeclContext *layer = nullptr;
  SmallVector<int64_t> args;
  std::vector<Val> list;

  static Val error() { return {}; }
  static Val of(Value v) {
    Val r;
    if (!v)
      return r;
    r.kind = isa<DomainType>(v.getType()) ? Kind::Domain : Kind::Tensor;
    r.value = v;
    return r;
  }
  static Val num(double n) {
    Val r;
    r.kind = Kind::Number;
    r.number = n;
    return r;
  }
  static Val intNum(int64_t i) {
    Val r = num(static_cast<double>(i));
    r.integral = true;
    r.integer = i;
    return r;
  }
  bool ok() const { return kind != Kind::Error; }
};

/// A stage body under construction: per-element code in a detached block
/// whose arguments are the domain values it reads.
struct Body {
  explicit Body(bool edge) : edge(edge) {}
  Body(const Body &) = delete;
  bool edge;
  Block *block = new Block();
  SmallVector<Value> inputs;
  llvm::DenseMap<Value, Value> args;
  ~Body() {
    if (block && !block->getParent())
      delete block;
  }
  Value arg(Value domainValue) {
    auto it = args.find(domainValue);
    if (it != args.end())
      return it->second;
    auto type = cast<DomainType>(domainValue.getType());
    Value a = block->addArgument(type.getElementTensorType(),
                                 domainValue.getLoc());
    inputs.push_back(domainValue);
    args[domainValue] = a;
    return a;
  }
};

enum class Stage { Model, Scatter, ApplyEdge, ApplyVertex };

/// One application `L(args)(h)` in the model, `L#k`.
struct Instance {
  enum State { Pending, Created, Failed } state = Pending;
  antlr4::Token *at = nullptr; // the layer name of the application
  llvm::StringMap<Value> params;
};

/// One generated layer function and the graph inputs it takes after `h`.
struct LayerFunc {
  func::FuncOp func;
  std::vector<std::string> graphInputs;
  std::vector<std::string> params;
  bool failed = false;
};

/// What a graph declaration says about one input.
struct GraphInput {
  std::string name;
  bool edge;
  Type type;
  Location loc;
  std::optional<double> defaultValue;
  std::optional<int64_t> numClasses;
};

/// The state of one layer while its function is generated.
struct LayerState {
  P::LayerDeclContext *decl;
  llvm::StringMap<int64_t> intArgs;
  llvm::StringMap<Value> params;
  func::FuncOp func;
  Block *entry;
  Value h;
  Value degree, vertexId;
  llvm::StringMap<Value> scattered;
  std::map<std::pair<int, std::string>, Value> scatters;
  std::vector<std::string> graphInputsUsed;
  llvm::StringMap<Value> graphArgs;
  llvm::StringMap<Value> edgeLocals;
};

/// A name scope: the statement-level locals of the body being generated.
struct Frame {
  Frame(Stage stage, std::string elem, std::string agg, LayerState *layer,
        Body *body)
      : stage(stage), elem(std::move(elem)), agg(std::move(agg)), layer(layer),
        body(body) {}
  Stage stage;
  std::string elem; // `v` or `e`
  std::string agg;  // `a` in apply_vertex
  llvm::StringMap<Val> locals;
  LayerState *layer = nullptr;
  Body *body = nullptr;
  llvm::StringMap<Location> assigned; // where each local was last assigned
  std::optional<Location> returned;    // the expression a `return` returns
};

class Generator {
public:
  Generator(MLIRContext &ctx, StringAttr filename,
            ArrayRef<std::string> outputs)
      : ctx(ctx), filename(filename), outputs(outputs), b(&ctx),
        tb(b, errors) {}

  OwningOpRef<ModuleOp> run(P::FileContext *file);

private:
  // Locations and errors.
  Location loc(antlr4::Token *t) {
    return FileLineColLoc::get(filename, t->getLine(),
                               t->getCharPositionInLine() + 1);
  }
  Location loc(antlr4::ParserRuleContext *c) { return loc(c->getStart()); }
  Location loc(antlr4::tree::TerminalNode *n) { return loc(n->getSymbol()); }
  InFlightDiagnostic error(Location l) {
    ++errors;
    return emitError(l);
  }

  // Declarations.
  void declareGraph(P::GraphDeclContext *g);
  void declareLayer(P::LayerDeclContext *l);
  void genModel(P::ModelDeclContext *m);
  void numberInstances(P::ModelDeclContext *m);
  std::optional<SmallVector<int64_t>>
  evalShape(P::TypeSpecContext *t, const llvm::StringMap<int64_t> &intArgs);
  std::optional<int64_t> evalInt(P::ExprContext *e,
                                 const llvm::StringMap<int64_t> &intArgs);

  // Layers.
  Val applyLayer(Location l, const Val &ctor, ArrayRef<Val> inputs,
                 antlr4::Token *at, const std::string &instance);
  LayerFunc &instantiate(P::LayerDeclContext *decl, ArrayRef<int64_t> args,
                         Type inputType, Location callLoc);
  bool genLayerBody(LayerState &st);
  bool genScatter(LayerState &st, P::ScatterStageContext *s);
  std::optional<std::pair<Value, Value>>
  genApplyEdge(LayerState &st, P::ApplyEdgeStageContext *s,
               const std::string &scoreName, Location l);
  Value genApplyVertex(LayerState &st, P::ApplyVertexStageContext *s,
                       Value aggregate, Location l);
  Value finishBody(Body &body, Location l, ArrayRef<Value> results,
                   ArrayRef<Location> resultLocs);

  // Statements and expressions.
  std::optional<Val> genBlock(Frame &f, P::BlockContext *blk,
                              bool allowReturn);
  Val eval(Frame &f, P::ExprContext *e);
  Val evalMember(Frame &f, P::MemberExprContext *e);
  Val evalName(Frame &f, antlr4::Token *name);
  Val evalCall(Frame &f, P::CallExprContext *e);
  Val evalBuiltin(Frame &f, antlr4::Token *fn, ArrayRef<Val> args,
                  ArrayRef<P::ExprContext *> argExprs);
  Val evalBinary(Frame &f, Location l, char op, Val lhs, Val rhs);
  Val lift(Frame &f, Location l, ArrayRef<Val> operands,
           function_ref<Value(ArrayRef<Value>)> fn);
  Value toTensor(Frame &f, Location l, const Val &v);
  Value domainInput(LayerState &st, const std::string &name, Location l,
                    bool edge);
  Value scatterOf(LayerState &st, int end, const std::string &name, Location l);
  std::optional<double> numberArg(const Val &v, Location l, StringRef what);
  std::optional<double> parseNumber(P::NumberContext *n, bool negate);
  std::optional<int64_t> intArg(const Val &v, Location l, StringRef what);
  std::optional<int64_t> intArith(Location l, char op, int64_t a, int64_t c);
  void suggest(InFlightDiagnostic &d, StringRef name,
               ArrayRef<std::string> candidates);
  std::vector<std::string> visibleNames(Frame &f);

  MLIRContext &ctx;
  StringAttr filename;
  ArrayRef<std::string> outputs;
  unsigned errors = 0;
  OpBuilder b;
  TensorBuilder tb;
  ModuleOp module;

  bool graphSeen = false;
  bool selfLoops = false;
  std::vector<GraphInput> graphInputs;
  llvm::StringSet<> failedGraphInputs;
  llvm::StringSet<> badLayers; // declaration errors, already reported
  llvm::StringMap<P::LayerDeclContext *> layers;
  std::map<std::string, LayerFunc> layerFuncs;
  llvm::StringMap<Location> modelNames;

  // The model being generated.
  Block *modelBlock = nullptr;
  llvm::StringMap<Value> modelInputs;
  // Layer instances, numbered before generation (numberInstances) so that
  // numbers do not depend on which applications fail.
  llvm::StringMap<unsigned> instanceCount;     // applications per layer
  llvm::DenseMap<antlr4::ParserRuleContext *, std::string> instanceOf;
  llvm::DenseMap<antlr4::ParserRuleContext *, std::vector<std::string>>
      instancesIn; // per model statement, the instances it applies
  llvm::StringMap<Instance> instances;
};

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

std::string text(antlr4::tree::TerminalNode *n) { return n->getText(); }

Location assignedAt(const Frame &f, StringRef name, Location fallback) {
  auto it = f.assigned.find(name);
  return it == f.assigned.end() ? fallback : it->second;
}

StringRef stageName(Stage s) {
  switch (s) {
  case Stage::Model:
    return "the model";
  case Stage::Scatter:
    return "scatter";
  case Stage::ApplyEdge:
    return "apply_edge";
  case Stage::ApplyVertex:
    return "apply_vertex";
  }
  llvm_unreachable("unknown stage");
}

const char *const kBuiltins[] = {
    "relu", "elu",     "sigmoid", "tanh", "exp",  "log",
    "rsqrt", "abs",    "leaky_relu", "dropout", "sum", "mean",
    "max",  "min",     "concat",  "reshape", "cross_entropy", "l2"};

bool isBuiltin(StringRef name) {
  return llvm::is_contained(kBuiltins, name);
}

/// Whether `a / c` is an exact integer division (`c` nonzero).
bool divides(int64_t a, int64_t c) {
  // INT64_MIN % -1 is undefined; every integer is a multiple of -1.
  return c != 0 && (c == -1 || a % c == 0);
}

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

std::vector<std::string> Generator::visibleNames(Frame &f) {
  std::vector<std::string> names;
  for (auto &kv : f.locals)
    names.push_back(kv.getKey().str());
  if (f.layer) {
    for (auto &kv : f.layer->params)
      names.push_back(kv.getKey().str());
    for (auto &kv : f.layer->intArgs)
      names.push_back(kv.getKey().str());
  }
  for (const char *bi : kBuiltins)
    names.push_back(bi);
  return names;
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

/// The optimal string alignment distance between `a` and `b`: insertions,
/// deletions, substitutions and transpositions of two adjacent characters
/// each count one edit (`rleu` is one edit from `relu`). Returns `limit` as
/// soon as the distance is known to be at least `limit`.
unsigned osaDistance(StringRef a, StringRef b, unsigned limit) {
  size_t n = a.size(), m = b.size();
  if ((n > m ? n - m : m - n) >= limit)
    return limit;
  // Three rows of the dynamic programming table: i - 2, i - 1 and i.
  std::vector<unsigned> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j)
    prev[j] = j;
  unsigned prevMin = 0;
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    unsigned rowMin = cur[0];
    for (size_t j = 1; j <= m; ++j) {
      unsigned cost = a[i - 1] == b[j - 1] ? 0 : 1;
      unsigned d = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d = std::min(d, prev2[j - 2] + 1);
      cur[j] = d;
      rowMin = std::min(rowMin, d);
    }
    // Every later entry is at least the smallest of this row or the one
    // before it (a transposition reaches back two rows).
    if (std::min(rowMin, prevMin) >= limit)
      return limit;
    prevMin = rowMin;
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return std::min(prev[m], limit);
}

void Generator::suggest(InFlightDiagnostic &d, StringRef name,
                        ArrayRef<std::string> candidates) {
  // Up to a third of the name may differ (at least one edit), so that short
  // names are not matched to unrelated built-ins.
  std::string best;
  unsigned bestDist = std::max<unsigned>(1, name.size() / 3) + 1;
  for (const std::string &c : candidates) {
    unsigned dist = osaDistance(name, c, bestDist);
    if (dist < bestDist) {
      bestDist = dist;
      best = c;
    }
  }
  if (!best.empty())
    d.attachNote() << "did you mean '" << best << "'?";
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

} // namespace

OwningOpRef<ModuleOp> saga::generateModule(antlr4::ParserRuleContext *file,
                                           MLIRContext &ctx,
                                           StringAttr filename,
                                           ArrayRef<std::string> outputs) {
  Generator gen(ctx, filename, outputs);
  return gen.run(static_cast<P::FileContext *>(file));
}
