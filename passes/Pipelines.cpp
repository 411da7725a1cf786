//===- Pipelines.cpp - named pass pipelines -------------------------------===//

#include "passes/Passes.h"

#include "codegen/cpu/CpuJit.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

llvm::ArrayRef<llvm::StringRef> saga::optionalPassNames() {
  static const llvm::StringRef names[] = {"operator-motion", "extract-gemm",
                                          "reorder-linear", "fuse-propagation",
                                          "fuse-epilogue", "cse",
                                          "rematerialize"};
  return names;
}

LogicalResult saga::checkPassNames(llvm::ArrayRef<std::string> names,
                                   std::string &message) {
  for (const std::string &name : names) {
    if (llvm::is_contained(optionalPassNames(), name))
      continue;
    message = "unknown pass '" + name + "' to disable; the passes -O2 "
              "adds are: " + llvm::join(optionalPassNames(), ", ");
    return failure();
  }
  return success();
}

void saga::buildLowerToPlanPipeline(OpPassManager &pm,
                                    const PlanOptions &options) {
  auto enabled = [&](llvm::StringRef name) {
    assert(llvm::is_contained(optionalPassNames(), name) && "unknown pass");
    return options.optLevel > 0 &&
           !llvm::is_contained(options.disabledPasses, name);
  };
  pm.addPass(createInlinerPass());
  pm.addPass(createSymbolDCEPass());
  pm.addPass(createSagaFormPropagation());
  if (!options.training)
    pm.addPass(createSagaStripDropout());
  if (enabled("operator-motion"))
    pm.addPass(createSagaOperatorMotion());
  if (enabled("extract-gemm"))
    pm.addPass(createSagaExtractGemm());
  if (enabled("reorder-linear"))
    pm.addPass(createSagaReorderLinear());
  if (options.training)
    pm.addPass(createSagaAutodiff());
  // Drops recomputed values no gradient reads, and stage results that only
  // pass an input through (saga::canonicalizeApplyOp).
  pm.addPass(createCanonicalizerPass());
  // Fusion is the default form of a propagate; without it every edge
  // function's values are stored per edge and reduced by a second kernel.
  if (!enabled("fuse-propagation"))
    pm.addPass(createSagaMaterializeEdges());
  if (enabled("cse"))
    pm.addPass(createCSEPass());
  if (enabled("fuse-epilogue"))
    pm.addPass(createSagaFuseMaps());
  if (enabled("rematerialize") && !(options.training && options.miniBatch)) {
    SagaRematerializeOptions remat;
    remat.fuseEpilogues = enabled("fuse-epilogue");
    pm.addPass(createSagaRematerialize(remat));
  }
  SagaLowerToKernelsOptions kernels;
  kernels.fuseEpilogues = enabled("fuse-epilogue");
  kernels.reversedEpilogues = !options.distributed;
  pm.addPass(createSagaLowerToKernels(kernels));
}

namespace {
struct PlanPipelineOptions
    : public PassPipelineOptions<PlanPipelineOptions> {
  Option<unsigned> optLevel{*this, "opt-level",
                            llvm::cl::desc("0: no optimisation, 2: all"),
                            llvm::cl::init(2)};
  Option<bool> training{*this, "training",
                        llvm::cl::desc("Keep dropout and append gradients"),
                        llvm::cl::init(false)};
  Option<bool> miniBatch{
      *this, "mini-batch",
      llvm::cl::desc("With training: the plan runs on sampled mini-batches "
                     "(no rematerialisation)"),
      llvm::cl::init(false)};
  ListOption<std::string> disable{
      *this, "disable",
      llvm::cl::desc("Optional passes to leave out: operator-motion, "
                     "extract-gemm, reorder-linear, fuse-propagation, "
                     "fuse-epilogue, cse, rematerialize")};
};
} // namespace

void saga::registerAllSagaPasses() {
  registerSagaPasses();
  // Registered by hand rather than with PassPipelineRegistration so that an
  // unknown pass name in `disable` is an error, not a crash.
  registerPassPipeline(
      "saga-lower-to-plan",
      "Inline layers, form propagations, extract GEMMs, lower to kernels",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        PlanPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        PlanOptions plan;
        plan.optLevel = options.optLevel;
        plan.training = options.training;
        plan.miniBatch = options.miniBatch;
        plan.disabledPasses.assign(options.disable.begin(),
                                   options.disable.end());
        std::string message;
        if (failed(checkPassNames(plan.disabledPasses, message)))
          return errorHandler(message);
        buildLowerToPlanPipeline(pm, plan);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optHandler) {
        optHandler(PlanPipelineOptions());
      });
  PassPipelineRegistration<>(
      "saga-lower-kernels-to-llvm",
      "Lower kernel functions (scf/memref/arith/math) to the LLVM dialect",
      buildKernelToLLVMPipeline);
}
