//===- CudaStandIn.h - the CUDA tests' stand-in driver ----------*- C++ -*-===//
//
// Points the CUDA driver, NVRTC and cuBLAS at the CPU-backed stand-in
// (emulator/driver), before anything loads them. SAGA_CUDA_STANDIN and
// SAGA_TEST_SCRATCH_DIR come from the test target's definitions.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_TEST_UNIT_CUDASTANDIN_H
#define SAGA_TEST_UNIT_CUDASTANDIN_H

#include <cstdlib>
#include <string>

namespace sagatest {

/// The stand-in with 4 devices (the several-device tests use them; the
/// others use device 0) and the emulated GPU's thread order `order`, each
/// unless the caller's environment sets it; false when the stand-in was
/// not built (no cuda.h).
inline bool useStandIn(const char *order = "random") {
  const std::string lib = SAGA_CUDA_STANDIN;
  if (lib.empty())
    return false;
  for (const char *v : {"SAGA_CUDA_DRIVER", "SAGA_NVRTC", "SAGA_CUBLAS"})
    setenv(v, lib.c_str(), 1);
  setenv("SAGA_CUDA_CACHE", SAGA_TEST_SCRATCH_DIR "/cuda-cache", 1);
  setenv("SAGA_EMU_ORDER", order, 0);
  setenv("SAGA_EMU_DEVICES", "4", 0);
  return true;
}

} // namespace sagatest

#endif // SAGA_TEST_UNIT_CUDASTANDIN_H
