//===- KernelDevice.cpp - the CPU's kernel device -------------------------===//

#include "runtime/exec/KernelDevice.h"

#include "codegen/cpu/CpuJit.h"

#include <vector>

using namespace saga;

KernelDevice::~KernelDevice() = default;

namespace {
class CpuKernelDevice final : public KernelDevice {
public:
  explicit CpuKernelDevice(std::unique_ptr<CpuKernels> kernels)
      : kernels(std::move(kernels)) {}
  std::string name() const override { return "CPU"; }
  bool has(llvm::StringRef kernel) const override {
    return kernels->lookup(kernel) != nullptr;
  }
  llvm::Error launch(llvm::StringRef kernel, int64_t begin, int64_t end,
                     int64_t seed,
                     llvm::ArrayRef<KernelArg> args) const override {
    CpuKernels::Packed fn = kernels->lookup(kernel);
    if (!fn)
      return llvm::createStringError("kernel '" + kernel.str() +
                                     "' was not compiled");
    // A flat memref's descriptor: allocated, aligned, offset, size, stride.
    struct Descriptor {
      void *allocated, *aligned;
      int64_t offset, size, stride;
    };
    std::vector<Descriptor> descriptors;
    descriptors.reserve(args.size());
    std::vector<int64_t> scalars;
    scalars.reserve(args.size());
    std::vector<void *> packed{&begin, &end, &seed};
    for (const KernelArg &a : args) {
      if (a.scalar) {
        scalars.push_back(a.value);
        packed.push_back(&scalars.back());
        continue;
      }
      Descriptor &d = descriptors.emplace_back(
          Descriptor{a.data, a.data, 0, a.elements, 1});
      packed.insert(packed.end(), {&d.allocated, &d.aligned, &d.offset,
                                   &d.size, &d.stride});
    }
    fn(packed.data());
    return llvm::Error::success();
  }

private:
  std::unique_ptr<CpuKernels> kernels;
};
} // namespace

std::unique_ptr<KernelDevice>
saga::cpuKernelDevice(std::unique_ptr<CpuKernels> kernels) {
  return std::make_unique<CpuKernelDevice>(std::move(kernels));
}
