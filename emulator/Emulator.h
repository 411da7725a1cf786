//===- Emulator.h - an emulated GPU for the test suite ----------*- C++ -*-===//
//
// Runs CUDA kernels compiled as host C++ (cuda_emulator.h): each CUDA thread
// a fiber (Boost.Context), a block's threads on one worker thread,
// __syncthreads a counting barrier over the block, __syncwarp and shuffles
// barriers over the lanes of their mask (shuffle values double-buffered).
// The order in which ready threads run is selectable, because a missing
// barrier shows only under some orders. A barrier some threads never reach
// (they exited, or wait at another barrier) is reported, naming the
// threads, instead of hanging.
//
// Modules: `EmulatedModule::compile` builds CUDA source into a shared object
// with the host compiler (cached on disk by the source's hash) and finds its
// `extern "C" __global__` kernels.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_EMULATOR_EMULATOR_H
#define SAGA_EMULATOR_EMULATOR_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace saga::emu {

enum class Order { Forward, Reverse, Random };

/// "forward", "reverse" or "random" (the SAGA_EMU_ORDER variable's values).
bool parseOrder(const std::string &text, Order &order);
/// The order SAGA_EMU_ORDER names, else forward.
Order orderFromEnvironment();

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

struct LaunchConfig {
  Dim3 grid, block;
  size_t sharedBytes = 0; // dynamic shared memory per block
  Order order = Order::Forward;
  uint64_t seed = 1;    // of the random order
  unsigned workers = 0; // threads running blocks (0: one per core)
};

/// A kernel's entry in an emulated module: takes cuLaunchKernel's array of
/// pointers to the arguments.
using Entry = void (*)(void **);

/// Runs the grid; "" when every thread finished, else what went wrong
/// (deadlock, divergent barrier, bad configuration).
std::string launch(Entry entry, void **params, const LaunchConfig &config);

class EmulatedModule {
public:
  /// Compiles `source` (cached by hash in `cacheFolder`, or the default
  /// cache folder when empty). Errors carry the compiler's output.
  static std::unique_ptr<EmulatedModule> compile(const std::string &source,
                                                 std::string &error,
                                                 const std::string &cacheFolder = "");
  ~EmulatedModule();
  /// The kernel's entry, or null.
  Entry lookup(const std::string &kernel) const;
  const std::vector<std::string> &kernels() const { return names; }
  /// The byte sizes of the kernel's parameters, in order, or null.
  const std::vector<size_t> *paramSizes(const std::string &kernel) const;

private:
  EmulatedModule() = default;
  void *handle = nullptr;
  std::vector<std::string> names;
  std::map<std::string, Entry> entries;
  std::map<std::string, std::vector<size_t>> sizes;
};

} // namespace saga::emu

#endif // SAGA_EMULATOR_EMULATOR_H
