//===- EmulatedKernelDevice.cpp - generated kernels on the emulated GPU ---===//

#include "emulator/EmulatedKernelDevice.h"

#include "codegen/cuda/CudaEmitter.h"

#include <map>
#include <vector>

using namespace saga;
using namespace saga::emu;

namespace {

const char *orderName(Order o) {
  return o == Order::Forward ? "forward" : o == Order::Reverse ? "reverse" : "random";
}

class EmulatedKernelDevice final : public KernelDevice {
public:
  EmulatedKernelDevice(std::unique_ptr<EmulatedModule> module,
                       std::vector<cuda::KernelInfo> kernels,
                       EmulatedDeviceOptions options)
      : module(std::move(module)), options(std::move(options)) {
    for (cuda::KernelInfo &k : kernels)
      infos.emplace(k.name, std::move(k));
  }

  std::string name() const override {
    return std::string("emulated GPU (") + orderName(options.order) + " order)";
  }
  bool has(llvm::StringRef kernel) const override {
    return infos.count(kernel.str()) && module->lookup(kernel.str());
  }

  llvm::Error launch(llvm::StringRef kernel, int64_t begin, int64_t end,
                     int64_t seed,
                     llvm::ArrayRef<KernelArg> args) const override {
    auto it = infos.find(kernel.str());
    Entry entry = module->lookup(kernel.str());
    if (it == infos.end() || !entry)
      return llvm::createStringError("kernel '" + kernel.str() +
                                     "' is not in the emulated module");
    const cuda::KernelInfo &info = it->second;
    if (info.params.size() != args.size() + 3)
      return llvm::createStringError(
          kernel.str() + " takes " + std::to_string(info.params.size()) +
          " arguments, the executor passed " + std::to_string(args.size() + 3));
    // cuLaunchKernel's form: a pointer to each parameter's value; a buffer
    // is two parameters, its pointer and its length.
    std::vector<int64_t> scalars{begin, end, seed};
    scalars.reserve(4 + 2 * args.size()); // pointers into them are taken
    std::vector<void *> pointers;
    pointers.reserve(args.size() + 1);
    std::vector<void *> params{&scalars[0], &scalars[1], &scalars[2]};
    for (size_t i = 0; i < args.size(); ++i) {
      const KernelArg &a = args[i];
      if (a.scalar != !info.params[i + 3].buffer)
        return llvm::createStringError(kernel.str() + ": argument " +
                                       std::to_string(i + 3) +
                                       " is of the wrong kind");
      if (a.scalar) {
        scalars.push_back(a.value);
        params.push_back(&scalars.back());
        continue;
      }
      pointers.push_back(a.data);
      params.push_back(&pointers.back());
      scalars.push_back(a.elements);
      params.push_back(&scalars.back());
    }
    cuda::LaunchShape shape =
        cuda::launchShape(info, end - begin, options.maxBlocks);
    std::vector<char> global(size_t(shape.globalScratchBytes));
    if (info.globalScratch) {
      pointers.push_back(global.data());
      params.push_back(&pointers.back());
      scalars.push_back(shape.globalScratchBytes);
      params.push_back(&scalars.back());
    }
    LaunchConfig c;
    c.block.x = 32 * shape.warpsPerBlock;
    c.grid.x = shape.blocks;
    c.sharedBytes = shape.sharedBytes;
    c.order = options.order;
    c.seed = options.seed ^ uint64_t(begin);
    c.workers = 1; // the executor's pool runs row blocks in parallel
    std::string err = emu::launch(entry, params.data(), c);
    if (!err.empty())
      return llvm::createStringError(kernel.str() + ": " + err);
    return llvm::Error::success();
  }

private:
  std::unique_ptr<EmulatedModule> module;
  std::map<std::string, cuda::KernelInfo> infos;
  EmulatedDeviceOptions options;
};

} // namespace

llvm::Expected<std::unique_ptr<KernelDevice>>
saga::emu::emulatedKernelDevice(mlir::ModuleOp plan,
                                const EmulatedDeviceOptions &options) {
  auto source = cuda::emitCuda(plan);
  if (!source)
    return source.takeError();
  std::string error;
  auto module = EmulatedModule::compile(source->code, error, options.cacheFolder);
  if (!module)
    return llvm::createStringError(error);
  return std::make_unique<EmulatedKernelDevice>(
      std::move(module), std::move(source->kernels), options);
}
