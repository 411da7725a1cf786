//===- Pipelines.cpp - named pass pipelines -------------------------------===//

#include "passes/Passes.h"

#include "codegen/CpuJit.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void saga::buildLowerToPlanPipeline(OpPassManager &pm, unsigned optLevel,
                                    bool training) {
  pm.addPass(createInlinerPass());
  pm.addPass(createSymbolDCEPass());
  pm.addPass(createSagaFormPropagation());
  if (!training)
    pm.addPass(createSagaStripDropout());
  if (optLevel > 0) {
    pm.addPass(createSagaOperatorMotion());
    pm.addPass(createSagaExtractGemm());
    pm.addPass(createSagaReorderLinear());
  }
  if (training) {
    pm.addPass(createSagaAutodiff());
    pm.addPass(createCanonicalizerPass()); // drops recomputed values no gradient reads
  }
  pm.addPass(createCSEPass());
  pm.addPass(createSagaLowerToKernels());
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
};
} // namespace

void saga::registerAllSagaPasses() {
  registerSagaPasses();
  PassPipelineRegistration<PlanPipelineOptions>(
      "saga-lower-to-plan",
      "Inline layers, form propagations, extract GEMMs, lower to kernels",
      [](OpPassManager &pm, const PlanPipelineOptions &options) {
        buildLowerToPlanPipeline(pm, options.optLevel, options.training);
      });
  PassPipelineRegistration<>(
      "saga-lower-kernels-to-llvm",
      "Lower kernel functions (scf/memref/arith/math) to the LLVM dialect",
      buildKernelToLLVMPipeline);
}
