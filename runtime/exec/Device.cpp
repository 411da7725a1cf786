//===- Device.cpp - where plans run ---------------------------------------===//

#include "runtime/exec/Device.h"

#include "runtime/exec/cuda/CudaApi.h"

using namespace saga;

int saga::cudaDeviceCount(std::string &why) {
  const cuda::DriverApi *api = cuda::DriverApi::load(why);
  if (!api)
    return -1;
  int n = 0;
  if (int r = api->init(0); r != 0) {
    why = llvm::toString(api->check(r, "the CUDA driver (" + api->path +
                                           ") did not initialise (cuInit)"));
    return -1;
  }
  if (int r = api->deviceCount(&n); r != 0) {
    why = llvm::toString(api->check(r, "cuDeviceGetCount"));
    return -1;
  }
  if (n == 0)
    why = "the CUDA driver reports no devices";
  return n;
}

std::vector<DeviceInfo> saga::detectDevices(unsigned cpuThreads) {
  std::vector<DeviceInfo> devices;
  devices.push_back({DeviceInfo::CPU,
                     "CPU (" + std::to_string(cpuThreads) + " thread" +
                         (cpuThreads == 1 ? ")" : "s)")});
  std::string why;
  int n = cudaDeviceCount(why);
  for (int i = 0; i < n; ++i)
    devices.push_back({DeviceInfo::CUDA, "CUDA device " + std::to_string(i)});
  return devices;
}

bool saga::parseDeviceChoice(const std::string &text, DeviceChoice &choice) {
  if (text == "auto")
    choice = DeviceChoice::Auto;
  else if (text == "cpu")
    choice = DeviceChoice::Cpu;
  else if (text == "cuda")
    choice = DeviceChoice::Cuda;
  else
    return false;
  return true;
}
