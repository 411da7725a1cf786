//===- CpuJit.cpp - kernels to native code through the LLVM JIT -----------===//

#include "codegen/cpu/CpuJit.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/TargetSelect.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <vector>

using namespace mlir;
using namespace saga;

namespace {
/// exp, log, tanh, ... as polynomial approximations in plain arithmetic
/// (MLIR's, accurate to a few ulp in f32) instead of libm calls: LLVM can
/// vectorise them with the loops around them. G-GCN's gates and GAT's
/// softmax spend most of their time in exp.
struct ApproximateMath
    : public PassWrapper<ApproximateMath, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ApproximateMath)
  StringRef getArgument() const final { return "saga-approximate-math"; }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void saga::buildKernelToLLVMPipeline(OpPassManager &pm) {
  // SAGA_EXACT_MATH=1: libm instead (slower), as the emulated CUDA kernels
  // compute them, for comparisons between backends: the approximations
  // differ from libm by a few ulp, which G-GCN's gates amplify to ~3e-5
  // of its gradients' magnitude.
  if (!getenv("SAGA_EXACT_MATH"))
    pm.addPass(std::make_unique<ApproximateMath>());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

namespace {
/// Set once the process has started exiting. An ExecutionEngine destroyed
/// from a static destructor runs the JIT's deinitialisers while libLLVM is
/// being torn down, which crashes; at that point keeping it is right (the
/// process is ending anyway). Kept engines stay reachable from `kept`, so
/// LeakSanitizer does not report them (make test-asan).
std::atomic<bool> exiting{false};
void markExiting() { exiting = true; }
auto *keptMutex = new std::mutex(); // both outlive static destructors
auto *kept = new std::vector<std::unique_ptr<ExecutionEngine>>();
} // namespace

CpuKernels::~CpuKernels() {
  if (exiting && engine) {
    std::lock_guard<std::mutex> lock(*keptMutex);
    kept->push_back(std::move(engine));
  }
}

llvm::Expected<std::unique_ptr<CpuKernels>>
CpuKernels::compile(ModuleOp plan) {
  auto start = std::chrono::steady_clock::now();
  static bool atExitRegistered = [] { return std::atexit(markExiting) == 0; }();
  (void)atExitRegistered;
  MLIRContext *ctx = plan.getContext();
  registerBuiltinDialectTranslation(*ctx);
  registerLLVMDialectTranslation(*ctx);
  ctx->getOrLoadDialect<LLVM::LLVMDialect>();

  // The kernels alone: the plan itself stays in the saga dialect.
  OwningOpRef<ModuleOp> kernels = ModuleOp::create(plan.getLoc());
  OpBuilder b = OpBuilder::atBlockEnd(kernels->getBody());
  std::vector<std::string> names;
  for (auto fn : plan.getOps<func::FuncOp>()) {
    if (!fn->hasAttr("saga.kernel"))
      continue;
    b.clone(*fn);
    names.push_back(fn.getName().str());
  }
  auto result = std::unique_ptr<CpuKernels>(new CpuKernels());
  if (names.empty())
    return result;

  PassManager pm(ctx);
  buildKernelToLLVMPipeline(pm);
  std::string diagnostics;
  {
    llvm::raw_string_ostream os(diagnostics);
    ScopedDiagnosticHandler capture(ctx, [&](Diagnostic &d) {
      os << d.getLocation() << ": " << d.str() << "\n";
      return success();
    });
    if (failed(pm.run(*kernels)))
      return llvm::createStringError("lowering kernels to LLVM failed:\n" +
                                     diagnostics);
  }

  static bool targetsReady = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)targetsReady;
  auto tmBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!tmBuilder)
    return tmBuilder.takeError();
  tmBuilder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto tm = tmBuilder->createTargetMachine();
  if (!tm)
    return tm.takeError();
  // `transformer` is a function_ref: the pipeline must outlive create().
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(3, 0, tm->get());
  ExecutionEngineOptions options;
  options.transformer = optimize;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  auto engine = ExecutionEngine::create(*kernels, options, std::move(*tm));
  if (!engine)
    return engine.takeError();
  result->engine = std::move(*engine);
  for (const std::string &name : names) {
    auto fn = result->engine->lookupPacked(name);
    if (!fn)
      return fn.takeError();
    result->kernels[name] = *fn;
  }
  result->seconds = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  return result;
}
