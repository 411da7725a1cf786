//===- Device.h - where plans run -------------------------------*- C++ -*-===//
//
// The devices a process can use. The CPU is always there; CUDA is looked for
// at run time by loading the driver (libcuda.so.1) with dlopen, never by
// linking it, so a binary built here starts on machines without a GPU and
// says why it runs on the CPU. Kernels for CUDA are not generated yet: a
// machine with a GPU still runs on the CPU, and says that too.
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
  bool usable = true;      // whether Saga can run plans on it today
};

/// The CPU, then any CUDA devices the driver reports.
std::vector<DeviceInfo> detectDevices(unsigned cpuThreads);

/// One line for users: which device runs the plan and why.
std::string describeExecutionDevice(unsigned cpuThreads);

} // namespace saga

#endif // SAGA_RUNTIME_DEVICE_H
