//===- GeneratorImpl.h - the generator behind MLIRGen -----------*- C++ -*-===//
//
// Private to parser/: the values, stage bodies, layer instances and name
// scopes of one walk over a .saga parse tree, and the `Generator` that makes
// the walk. Its member functions are defined across the MLIRGen*.cpp files:
//
//   MLIRGen.cpp        the top level, declarations and the model
//   MLIRGenLayers.cpp  layer application and instantiation, the gather
//   MLIRGenStages.cpp  stage bodies: scatter, apply_edge, apply_vertex
//   MLIRGenExpr.cpp    expressions: names, fields and calls
//   MLIRGenOps.cpp     compile-time numbers, built-ins, operators, lifting
//   MLIRGenHints.cpp   spelling hints ("did you mean")
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_PARSER_GENERATORIMPL_H
#define SAGA_PARSER_GENERATORIMPL_H

#include "dialect/Saga.h"
#include "parser/TensorBuilder.h"

#include "SagaParser.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace saga::mlirgen {

// The generator was written against `using namespace mlir`; the directive is
// confined to this namespace, which only the MLIRGen*.cpp files open.
using namespace mlir;
using P = saga::grammar::SagaParser;

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

inline std::string text(antlr4::tree::TerminalNode *n) { return n->getText(); }

inline Location assignedAt(const Frame &f, StringRef name, Location fallback) {
  auto it = f.assigned.find(name);
  return it == f.assigned.end() ? fallback : it->second;
}

inline StringRef stageName(Stage s) {
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

inline const char *const kBuiltins[] = {
    "relu", "elu",     "sigmoid", "tanh", "exp",  "log",
    "rsqrt", "abs",    "leaky_relu", "dropout", "sum", "mean",
    "max",  "min",     "concat",  "reshape", "cross_entropy", "l2",
    "sum_nodes", "mean_nodes", "max_nodes", "min_nodes", "pair_bce", "batch_norm"};

inline bool isBuiltin(StringRef name) {
  return llvm::is_contained(kBuiltins, name);
}

/// Whether `a / c` is an exact integer division (`c` nonzero).
inline bool divides(int64_t a, int64_t c) {
  // INT64_MIN % -1 is undefined; every integer is a multiple of -1.
  return c != 0 && (c == -1 || a % c == 0);
}

} // namespace saga::mlirgen

#endif // SAGA_PARSER_GENERATORIMPL_H
