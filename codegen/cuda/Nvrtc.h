//===- Nvrtc.h - CUDA C++ to PTX and CUBIN at run time ----------*- C++ -*-===//
//
// NVRTC, loaded with dlopen (never linked: a binary must start on a machine
// without CUDA), compiles the emitted CUDA C++ for one architecture. CUBINs
// are cached on disk, keyed by the source, the architecture and NVRTC's
// version, so a model's kernels compile once per machine.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_CODEGEN_CUDA_NVRTC_H
#define SAGA_CODEGEN_CUDA_NVRTC_H

#include "llvm/Support/Error.h"

#include <string>

namespace saga::cuda {

struct Compiled {
  std::string ptx;   // always
  std::string cubin; // when asked for
  std::string log;   // NVRTC's messages (warnings)
  bool cached = false; // the CUBIN came from the disk cache
};

/// NVRTC, once loaded. `load` tries SAGA_NVRTC (a path) alone when set, else the usual
/// sonames; its error says what was tried.
class Nvrtc {
public:
  static llvm::Expected<Nvrtc *> load();
  /// "13.0".
  std::string version() const;
  /// Compiles `source` for sm_`arch` (e.g. 80, 90): PTX for compute_`arch`,
  /// and with `cubin` the SASS too (through the disk cache). Compile errors
  /// carry NVRTC's log.
  llvm::Expected<Compiled> compile(const std::string &source, int arch,
                                   bool cubin);

  struct Api;

private:
  explicit Nvrtc(Api *api) : api(api) {}
  Api *api;
};

/// The folder of cached CUBINs: $SAGA_CUDA_CACHE, else
/// $XDG_CACHE_HOME/saga/cuda, else ~/.cache/saga/cuda (support/DiskCache.h);
/// empty when SAGA_CUDA_CACHE=off.
std::string cubinCacheFolder();

} // namespace saga::cuda

#endif // SAGA_CODEGEN_CUDA_NVRTC_H
