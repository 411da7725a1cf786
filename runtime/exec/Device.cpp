//===- Device.cpp - where plans run ---------------------------------------===//

#include "runtime/exec/Device.h"

#include <dlfcn.h>

using namespace saga;

namespace {
/// Asks the CUDA driver, loaded at run time, how many devices there are.
/// Returns -1 when there is no driver.
int cudaDeviceCount(std::string &why) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    why = "no CUDA driver (libcuda.so.1 not found)";
    return -1;
  }
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int *);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(lib, "cuDeviceGetCount"));
  int n = 0;
  if (!init || !count || init(0) != 0 || count(&n) != 0) {
    why = "the CUDA driver did not initialise";
    dlclose(lib);
    return -1;
  }
  dlclose(lib);
  if (n == 0)
    why = "the CUDA driver reports no devices";
  return n;
}
} // namespace

std::vector<DeviceInfo> saga::detectDevices(unsigned cpuThreads) {
  std::vector<DeviceInfo> devices;
  devices.push_back({DeviceInfo::CPU,
                     "CPU (" + std::to_string(cpuThreads) + " thread" +
                         (cpuThreads == 1 ? ")" : "s)"),
                     true});
  std::string why;
  int n = cudaDeviceCount(why);
  for (int i = 0; i < n; ++i)
    devices.push_back(
        {DeviceInfo::CUDA, "CUDA device " + std::to_string(i), false});
  return devices;
}

std::string saga::describeExecutionDevice(unsigned cpuThreads) {
  std::string why;
  int n = cudaDeviceCount(why);
  std::string cpu = "CPU, " + std::to_string(cpuThreads) + " thread" +
                    (cpuThreads == 1 ? "" : "s");
  if (n <= 0)
    return cpu + " (" + why + ")";
  return cpu + " (" + std::to_string(n) +
         " CUDA device(s) found, but this build has no CUDA backend yet)";
}
