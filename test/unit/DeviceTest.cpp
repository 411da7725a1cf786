//===- DeviceTest.cpp - device detection ----------------------------------===//

#include "runtime/exec/Device.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

using namespace saga;

// Tests that the CPU is always the first, usable device, and that a machine
// without a CUDA driver says so instead of failing.
TEST(Device, CpuAlwaysFirstAndCudaReportedHonestly) {
  std::vector<DeviceInfo> devices = detectDevices(2);
  ASSERT_FALSE(devices.empty());
  EXPECT_EQ(devices[0].kind, DeviceInfo::CPU);
  EXPECT_TRUE(devices[0].usable);
  EXPECT_EQ(devices[0].name, "CPU (2 threads)");
  for (size_t i = 1; i < devices.size(); ++i) {
    EXPECT_EQ(devices[i].kind, DeviceInfo::CUDA);
    EXPECT_FALSE(devices[i].usable) << "no CUDA backend yet";
  }
  std::string line = describeExecutionDevice(1);
  EXPECT_EQ(line.rfind("CPU, 1 thread (", 0), 0u) << line;
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver)
    EXPECT_NE(line.find("no CUDA driver"), std::string::npos) << line;
  else
    dlclose(driver);
}
