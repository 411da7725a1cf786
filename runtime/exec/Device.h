//===- Device.h - where plans run -------------------------------*- C++ -*-===//
//
// The devices a process can use. The CPU is always there; CUDA is looked for
// at run time by loading the driver (libcuda.so.1, or $SAGA_CUDA_DRIVER)
// with dlopen, never by linking it, so a binary built here starts on
// machines without a GPU and says why it runs on the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_DEVICE_H
#define SAGA_RUNTIME_DEVICE_H

#include <string>
#include <vector>

namespace saga {

struct DeviceInfo {
  enum Kind { CPU, CUDA } kind = CPU;
  std::string name;        // "CPU (2 threads)", "CUDA device 0: ..."
};

/// The CPU, then any CUDA devices the driver reports.
std::vector<DeviceInfo> detectDevices(unsigned cpuThreads);

/// The number of CUDA devices, or -1 (and why) when there is no usable
/// driver; 0 (and why) when it reports none.
int cudaDeviceCount(std::string &why);

/// What `--device` asks for.
enum class DeviceChoice { Auto, Cpu, Cuda };
/// "auto", "cpu", "cuda"; false for anything else.
bool parseDeviceChoice(const std::string &text, DeviceChoice &choice);

} // namespace saga

#endif // SAGA_RUNTIME_DEVICE_H
