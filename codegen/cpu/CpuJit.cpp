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
#include "support/DiskCache.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/ADT/StringExtras.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <vector>

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

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
auto *keptMutex = new std::mutex(); // all three outlive static destructors
auto *kept = new std::vector<std::unique_ptr<ExecutionEngine>>();
auto *keptLoaded = new std::vector<std::unique_ptr<llvm::orc::LLJIT>>();

/// This build of Saga: the path, size and modification time of the binary
/// that holds this code (a rebuilt Saga keys new cache entries, so a
/// changed lowering never meets an old object).
const std::string &buildIdentity() {
  static const std::string id = [] {
    std::string path;
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&markExiting), &info) &&
        info.dli_fname && std::strchr(info.dli_fname, '/'))
      path = info.dli_fname;
    struct stat st;
    if (path.empty() || stat(path.c_str(), &st) != 0) {
      char exe[4096];
      ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
      path = n > 0 ? std::string(exe, size_t(n)) : std::string("unknown");
      if (stat(path.c_str(), &st) != 0)
        return path;
    }
    return path + "|" + std::to_string(st.st_size) + "|" +
           std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
  }();
  return id;
}

/// The cache entry's name: a hash of the kernels' IR and of everything
/// else their object code depends on.
std::string cacheKey(ModuleOp kernels,
                     const llvm::orc::JITTargetMachineBuilder &host) {
  std::string text;
  llvm::raw_string_ostream os(text);
  kernels.print(os);
  llvm::SHA256 hash;
  hash.update(text);
  hash.update(std::string("|exact math ") +
              (getenv("SAGA_EXACT_MATH") ? "1" : "0"));
  hash.update("|llvm " LLVM_VERSION_STRING "|" + host.getCPU() + "|" +
              host.getFeatures().getString() + "|" + buildIdentity());
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

/// The object file at `path` linked into a fresh JIT, as MLIR's
/// ExecutionEngine links what it compiles (RuntimeDyld, the process's own
/// symbols for libm), and the packed entry of each of `names` looked up.
/// Any failure is a miss: the caller compiles.
std::unique_ptr<llvm::orc::LLJIT>
loadCached(const std::string &path, llvm::orc::JITTargetMachineBuilder host,
           const std::vector<std::string> &names,
           llvm::StringMap<CpuKernels::Packed> &kernels) {
  std::string object;
  if (!disk_cache::read(path, object) || object.empty())
    return nullptr;
  auto jit =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(host))
          .setObjectLinkingLayerCreator([](llvm::orc::ExecutionSession &es) {
            return std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
                es, [](const llvm::MemoryBuffer &) {
                  return std::make_unique<llvm::SectionMemoryManager>();
                });
          })
          .create();
  if (!jit) {
    llvm::consumeError(jit.takeError());
    return nullptr;
  }
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!process) {
    llvm::consumeError(process.takeError());
    return nullptr;
  }
  (*jit)->getMainJITDylib().addGenerator(std::move(*process));
  if (llvm::Error e = (*jit)->addObjectFile(
          llvm::MemoryBuffer::getMemBufferCopy(object, path))) {
    llvm::consumeError(std::move(e));
    return nullptr;
  }
  for (const std::string &name : names) {
    // MLIR's packed wrapper of each function (ExecutionEngine::lookupPacked).
    auto sym = (*jit)->lookup("_mlir_" + name);
    if (!sym) {
      llvm::consumeError(sym.takeError());
      return nullptr;
    }
    kernels[name] = sym->toPtr<CpuKernels::Packed>();
  }
  return std::move(*jit);
}
} // namespace

CpuKernels::~CpuKernels() {
  if (exiting && (engine || loaded)) {
    std::lock_guard<std::mutex> lock(*keptMutex);
    if (engine)
      kept->push_back(std::move(engine));
    if (loaded)
      keptLoaded->push_back(std::move(loaded));
  }
}

std::string CpuKernels::objectCacheFolder() {
  return disk_cache::folder("SAGA_CPU_CACHE", "cpu");
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

  std::string folder = objectCacheFolder(), entry;
  if (!folder.empty()) {
    entry = folder + "/" + cacheKey(*kernels, *tmBuilder) + ".o";
    if ((result->loaded =
             loadCached(entry, *tmBuilder, names, result->kernels))) {
      result->cached = true;
      result->seconds = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count();
      return result;
    }
    result->kernels.clear();
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);
    if (ec || access(folder.c_str(), W_OK) != 0)
      entry.clear(); // not writable: compile without keeping the object
  }

  PassManager pm(ctx);
  buildKernelToLLVMPipeline(pm);
  // The kernels were verified as the plan's functions; the upstream
  // conversions need not be re-verified after each step.
  pm.enableVerifier(false);
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

  auto tm = tmBuilder->createTargetMachine();
  if (!tm)
    return tm.takeError();
  // `transformer` is a function_ref: the pipeline must outlive create().
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(3, 0, tm->get());
  ExecutionEngineOptions options;
  options.transformer = optimize;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  options.enableObjectDump = !entry.empty();
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
  if (!entry.empty()) {
    // Written beside its name and renamed: parallel compiles of the same
    // kernels (ctest -j, MPI ranks) never read half an object.
    std::string tmp = entry + ".tmp" + std::to_string(getpid());
    result->engine->dumpToObjectFile(tmp);
    if (std::rename(tmp.c_str(), entry.c_str()) != 0)
      std::remove(tmp.c_str());
  }
  result->seconds = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  return result;
}
