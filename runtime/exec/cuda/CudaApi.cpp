//===- CudaApi.cpp - the CUDA driver and cuBLAS, loaded at run time -------===//

#include "runtime/exec/cuda/CudaApi.h"

#include <cstdlib>
#include <initializer_list>
#include <mutex>
#include <vector>

#include <dlfcn.h>

using namespace saga::cuda;

namespace {

/// Binds `fn` to the first of `names` the library exports; notes a miss.
template <class Fn>
void bind(void *lib, Fn &fn, std::initializer_list<const char *> names,
          std::string &missing) {
  for (const char *n : names)
    if (void *p = dlsym(lib, n)) {
      fn = reinterpret_cast<Fn>(p);
      return;
    }
  fn = nullptr;
  missing += std::string(missing.empty() ? "" : ", ") + *names.begin();
}

/// Opens the first loadable of `names`; `tried` lists the failures.
void *openFirst(const std::vector<std::string> &names, std::string &tried,
                std::string &opened) {
  for (const std::string &n : names) {
    if (void *lib = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      opened = n;
      return lib;
    }
    const char *e = dlerror();
    tried += "\n  " + n + ": " + (e ? e : "not found");
  }
  return nullptr;
}

} // namespace

const DriverApi *DriverApi::load(std::string &why) {
  static std::mutex mutex;
  static const DriverApi *loaded = nullptr;
  static std::string failure;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded || !failure.empty()) {
    why = failure;
    return loaded;
  }
  std::vector<std::string> names;
  const char *env = std::getenv("SAGA_CUDA_DRIVER");
  names.push_back(env && *env ? env : "libcuda.so.1");
  std::string tried, opened;
  void *lib = openFirst(names, tried, opened);
  if (!lib) {
    failure = "no CUDA driver (" + names[0] + " not found)";
    why = failure;
    return nullptr;
  }
  auto *api = new DriverApi();
  api->path = opened;
  std::string missing;
  bind(lib, api->init, {"cuInit"}, missing);
  bind(lib, api->driverVersion, {"cuDriverGetVersion"}, missing);
  bind(lib, api->deviceCount, {"cuDeviceGetCount"}, missing);
  bind(lib, api->deviceGet, {"cuDeviceGet"}, missing);
  bind(lib, api->deviceName, {"cuDeviceGetName"}, missing);
  bind(lib, api->deviceAttribute, {"cuDeviceGetAttribute"}, missing);
  bind(lib, api->primaryRetain, {"cuDevicePrimaryCtxRetain"}, missing);
  bind(lib, api->primaryRelease,
       {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, missing);
  bind(lib, api->setCurrent, {"cuCtxSetCurrent"}, missing);
  bind(lib, api->memInfo, {"cuMemGetInfo_v2"}, missing);
  bind(lib, api->memAlloc, {"cuMemAlloc_v2"}, missing);
  bind(lib, api->memFree, {"cuMemFree_v2"}, missing);
  bind(lib, api->hostAlloc, {"cuMemAllocHost_v2"}, missing);
  bind(lib, api->hostFree, {"cuMemFreeHost"}, missing);
  bind(lib, api->copyToDevice, {"cuMemcpyHtoDAsync_v2"}, missing);
  bind(lib, api->copyToHost, {"cuMemcpyDtoHAsync_v2"}, missing);
  bind(lib, api->copyOnDevice, {"cuMemcpyDtoDAsync_v2"}, missing);
  bind(lib, api->set32, {"cuMemsetD32Async"}, missing);
  bind(lib, api->streamCreate, {"cuStreamCreate"}, missing);
  bind(lib, api->streamDestroy, {"cuStreamDestroy_v2"}, missing);
  bind(lib, api->streamSync, {"cuStreamSynchronize"}, missing);
  bind(lib, api->streamWait, {"cuStreamWaitEvent"}, missing);
  bind(lib, api->eventCreate, {"cuEventCreate"}, missing);
  bind(lib, api->eventDestroy, {"cuEventDestroy_v2"}, missing);
  bind(lib, api->eventRecord, {"cuEventRecord"}, missing);
  bind(lib, api->eventSync, {"cuEventSynchronize"}, missing);
  bind(lib, api->eventElapsed,
       {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, missing);
  bind(lib, api->moduleLoad, {"cuModuleLoadData"}, missing);
  bind(lib, api->moduleUnload, {"cuModuleUnload"}, missing);
  bind(lib, api->moduleFunction, {"cuModuleGetFunction"}, missing);
  bind(lib, api->launch, {"cuLaunchKernel"}, missing);
  bind(lib, api->errorName, {"cuGetErrorName"}, missing);
  bind(lib, api->canAccessPeer, {"cuDeviceCanAccessPeer"}, missing);
  bind(lib, api->enablePeer, {"cuCtxEnablePeerAccess"}, missing);
  bind(lib, api->copyPeer, {"cuMemcpyPeerAsync"}, missing);
  if (!missing.empty()) {
    failure = "the CUDA driver " + opened + " lacks " + missing +
              " (too old a driver?)";
    why = failure;
    delete api;
    return nullptr;
  }
  loaded = api;
  return loaded;
}

llvm::Error DriverApi::check(CUresult r, const std::string &what) const {
  if (r == 0)
    return llvm::Error::success();
  const char *name = nullptr;
  if (errorName(r, &name) != 0 || !name)
    name = "CUDA error";
  return llvm::createStringError(what + ": " + name + " (" +
                                 std::to_string(r) + ")");
}

llvm::Expected<const BlasApi *> BlasApi::load() {
  static std::mutex mutex;
  static const BlasApi *loaded = nullptr;
  static std::string failure;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded)
    return loaded;
  if (!failure.empty())
    return llvm::createStringError(failure);
  std::vector<std::string> names;
  // SAGA_CUBLAS, when set, is the only one tried.
  if (const char *env = std::getenv("SAGA_CUBLAS"); env && *env) {
    names.push_back(env);
  } else {
    names.push_back("libcublas.so.13");
    names.push_back("libcublas.so.12");
  }
  std::string tried, opened;
  void *lib = openFirst(names, tried, opened);
  if (!lib) {
    failure = "cuBLAS is not installed or not found; tried:" + tried +
              "\n  (install the CUDA toolkit's cuBLAS, or set SAGA_CUBLAS to "
              "libcublas.so's path)";
    return llvm::createStringError(failure);
  }
  auto *api = new BlasApi();
  std::string missing;
  bind(lib, api->create, {"cublasCreate_v2"}, missing);
  bind(lib, api->destroy, {"cublasDestroy_v2"}, missing);
  bind(lib, api->setStream, {"cublasSetStream_v2"}, missing);
  bind(lib, api->setMathMode, {"cublasSetMathMode"}, missing);
  bind(lib, api->sgemm, {"cublasSgemm_v2"}, missing);
  if (!missing.empty()) {
    failure = "cuBLAS (" + opened + ") lacks " + missing;
    delete api;
    return llvm::createStringError(failure);
  }
  loaded = api;
  return loaded;
}
