//===- CudaApi.h - the CUDA driver and cuBLAS, loaded at run time -*- C++ -*-===//
//
// The driver (libcuda.so.1) and cuBLAS are opened with dlopen, never linked:
// a binary linked to -lcuda does not start on a machine without a driver.
// The entry points are declared here (the toolkit's headers are not needed
// to build Saga) with the versioned names the real libraries export
// (cuMemAlloc_v2, ...). SAGA_CUDA_DRIVER and SAGA_CUBLAS name other
// libraries to load instead, e.g. the tests' CPU-backed stand-in
// (emulator/driver/StandIn.cpp), which is built against the real headers.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_CUDA_CUDAAPI_H
#define SAGA_RUNTIME_EXEC_CUDA_CUDAAPI_H

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace saga::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void *;
using CUstream = void *;
using CUevent = void *;
using CUmodule = void *;
using CUfunction = void *;

// The few enumerators Saga uses (values from cuda.h, stable since CUDA 4).
constexpr int kAttrMultiprocessors = 16;   // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kAttrCapabilityMajor = 75;   // ..._COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrCapabilityMinor = 76;   // ..._COMPUTE_CAPABILITY_MINOR
constexpr unsigned kStreamNonBlocking = 1; // CU_STREAM_NON_BLOCKING
constexpr unsigned kEventDefault = 0;
constexpr int kErrorOutOfMemory = 2;       // CUDA_ERROR_OUT_OF_MEMORY
constexpr int kErrorPeerEnabled = 704; // CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED

struct DriverApi {
  CUresult (*init)(unsigned);
  CUresult (*driverVersion)(int *);
  CUresult (*deviceCount)(int *);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*deviceName)(char *, int, CUdevice);
  CUresult (*deviceAttribute)(int *, int, CUdevice);
  CUresult (*primaryRetain)(CUcontext *, CUdevice);
  CUresult (*primaryRelease)(CUdevice);
  CUresult (*setCurrent)(CUcontext);
  CUresult (*memInfo)(size_t *, size_t *);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*hostAlloc)(void **, size_t);
  CUresult (*hostFree)(void *);
  CUresult (*copyToDevice)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*copyToHost)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*copyOnDevice)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*set32)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*streamCreate)(CUstream *, unsigned);
  CUresult (*streamDestroy)(CUstream);
  CUresult (*streamSync)(CUstream);
  CUresult (*streamWait)(CUstream, CUevent, unsigned);
  CUresult (*eventCreate)(CUevent *, unsigned);
  CUresult (*eventDestroy)(CUevent);
  CUresult (*eventRecord)(CUevent, CUstream);
  CUresult (*eventSync)(CUevent);
  CUresult (*eventElapsed)(float *, CUevent, CUevent);
  CUresult (*moduleLoad)(CUmodule *, const void *);
  CUresult (*moduleUnload)(CUmodule);
  CUresult (*moduleFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                     unsigned, unsigned, unsigned, CUstream, void **, void **);
  CUresult (*errorName)(CUresult, const char **);
  // Several devices: peer access and copies between contexts.
  CUresult (*canAccessPeer)(int *, CUdevice, CUdevice);
  CUresult (*enablePeer)(CUcontext, unsigned);
  CUresult (*copyPeer)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t,
                       CUstream);

  /// The driver, loaded once: SAGA_CUDA_DRIVER (a path) if set, else
  /// libcuda.so.1. Null when there is none, with `why` saying what was
  /// tried ("no CUDA driver (libcuda.so.1 not found)").
  static const DriverApi *load(std::string &why);
  /// Where the driver was loaded from.
  std::string path;

  /// success, or an error "`what`: CUDA_ERROR_... (code)".
  llvm::Error check(CUresult r, const std::string &what) const;
};

struct BlasApi {
  using Handle = void *;
  int (*create)(Handle *);
  int (*destroy)(Handle);
  int (*setStream)(Handle, CUstream);
  int (*setMathMode)(Handle, int);
  int (*sgemm)(Handle, int, int, int, int, int, const float *, const float *,
               int, const float *, int, const float *, float *, int);
  static constexpr int kOpN = 0, kOpT = 1, kDefaultMath = 0;

  /// cuBLAS, loaded once: SAGA_CUBLAS if set, else libcublas.so.13 or .12;
  /// an error saying what was tried.
  static llvm::Expected<const BlasApi *> load();
};

} // namespace saga::cuda

#endif // SAGA_RUNTIME_EXEC_CUDA_CUDAAPI_H
