//===- Compiler.cpp - a .saga source to plans and kernels -----------------===//

#include "api/Compiler.h"

#include "codegen/cpu/CpuJit.h"
#include "parser/FrontEnd.h"
#include "passes/Passes.h"
#include "runtime/Timing.h"
#include "runtime/memory/MemoryLimit.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>

using namespace mlir;
using namespace saga;

CompiledModel::CompiledModel() : ctx(MLIRContext::Threading::DISABLED) {}
CompiledModel::~CompiledModel() = default;

llvm::Error saga::compileModel(llvm::StringRef source, llvm::StringRef name,
                               const CompileOptions &options,
                               CompiledModel &out) {
  if (std::string message;
      failed(checkPassNames(options.disabledPasses, message)))
    return llvm::createStringError(message);
  CompiledModel *impl = &out;
  MLIRContext &ctx = impl->ctx;
  DialectRegistry registry;
  registerSagaDialects(registry);
  ctx.appendDialectRegistry(registry);
  ctx.printOpOnDiagnostic(false);

  // Diagnostics are rendered clang-style into the error message.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, name),
                               llvm::SMLoc());
  std::string messages;
  llvm::raw_string_ostream os(messages);
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx, os);

  auto start = std::chrono::steady_clock::now();
  impl->plan = compileSaga(sourceMgr, ctx, options.outputs);
  impl->outputNames = options.outputs;
  impl->stats.frontEnd = secondsSince(start);
  if (!impl->plan)
    return llvm::createStringError(messages);
  auto models = impl->plan->getOps<ModelOp>();
  if (models.empty())
    return llvm::createStringError(name.str() + ": the file declares no model");
  ModelOp model = *models.begin();
  impl->selfLoops = model->hasAttr("saga.self_loops");

  for (auto [i, type] : llvm::enumerate(model.getArgumentTypes())) {
    auto d = cast<DomainType>(type);
    ValueInfo info;
    auto attr = [&](StringRef key) { return model.getArgAttr(i, key); };
    info.name = cast<StringAttr>(attr("saga.name")).str();
    info.shape.assign(d.getShape().begin(), d.getShape().end());
    info.dtype = isa<IntegerType>(d.getElementType()) ? DType::I32 : DType::F32;
    info.domain = d.isEdgeDomain() ? ValueInfo::Edge : ValueInfo::Vertex;
    if (auto def = dyn_cast_or_null<FloatAttr>(attr("saga.default")))
      info.defaultValue = def.getValueAsDouble();
    impl->inputInfo.push_back(info);
  }
  model.walk([&](ParamOp p) {
    ValueInfo info;
    info.name = p.getName().str();
    auto shape = cast<RankedTensorType>(p.getType()).getShape();
    info.shape.assign(shape.begin(), shape.end());
    info.domain = ValueInfo::Param;
    info.init = stringifyInit(p.getInit()).str();
    if (p.getValue())
      info.initValue = p.getValue()->convertToDouble();
    impl->paramInfo.push_back(info);
  });
  // Parameters that cannot fit are refused here, located at their
  // declaration, before initParams allocates them (with their gradients
  // when training).
  uint64_t paramBytes = 0;
  bool tooLarge = false;
  model.walk([&](ParamOp p) {
    auto shape = cast<RankedTensorType>(p.getType()).getShape();
    uint64_t bytes = bytesOf(shape, 4);
    paramBytes = saturatingAdd(paramBytes, bytes);
    std::string type = "f32[" + llvm::join(llvm::map_range(shape, [](int64_t d) {
                                             return std::to_string(d);
                                           }),
                                           ", ") +
                       "]";
    if (llvm::Error e = checkMemory(
            bytes, "parameter '" + p.getName() + "' " + type)) {
      p.emitError() << llvm::toString(std::move(e));
      tooLarge = true;
    }
  });
  if (!tooLarge && options.training)
    if (llvm::Error e = checkMemory(saturatingMul(paramBytes, 2),
                                    "the parameters and their gradients")) {
      model.emitError() << llvm::toString(std::move(e));
      tooLarge = true;
    }
  if (tooLarge)
    return llvm::createStringError(messages);

  start = std::chrono::steady_clock::now();
  if (options.training) {
    impl->trainPlan = impl->plan->clone();
    PassManager pm(&ctx);
    buildLowerToPlanPipeline(pm, {options.optLevel, /*training=*/true,
                                  options.disabledPasses,
                                  options.distributed, options.miniBatch});
    if (failed(pm.run(*impl->trainPlan)))
      return llvm::createStringError("compiling the training plan failed:\n" +
                                     messages);
    impl->trainModel = *impl->trainPlan->getOps<ModelOp>().begin();
  }
  PassManager pm(&ctx);
  buildLowerToPlanPipeline(pm, {options.optLevel, /*training=*/false,
                                options.disabledPasses, options.distributed});
  if (failed(pm.run(*impl->plan)))
    return llvm::createStringError("lowering failed:\n" + messages);
  impl->model = *impl->plan->getOps<ModelOp>().begin();
  impl->stats.lowering = secondsSince(start);

  auto kernels = CpuKernels::compile(*impl->plan);
  if (!kernels)
    return kernels.takeError();
  impl->stats.jit = (*kernels)->compileSeconds();
  impl->stats.kernelSets = 1;
  impl->stats.kernelSetsCached = (*kernels)->fromCache();
  impl->kernels = cpuKernelDevice(std::move(*kernels));
  if (options.training) {
    auto trainKernels = CpuKernels::compile(*impl->trainPlan);
    if (!trainKernels)
      return trainKernels.takeError();
    impl->stats.jit += (*trainKernels)->compileSeconds();
    impl->stats.kernelSets += 1;
    impl->stats.kernelSetsCached += (*trainKernels)->fromCache();
    impl->trainKernels = cpuKernelDevice(std::move(*trainKernels));
  }
  return llvm::Error::success();
}

