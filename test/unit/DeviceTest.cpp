//===- DeviceTest.cpp - device detection ----------------------------------===//

#include "runtime/exec/Device.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>

using namespace saga;

// Tests that the CPU is always the first device, and that a machine without
// a CUDA driver says so instead of failing.
TEST(Device, CpuAlwaysFirstAndAMissingDriverSaysSo) {
  std::vector<DeviceInfo> devices = detectDevices(2);
  ASSERT_FALSE(devices.empty());
  EXPECT_EQ(devices[0].kind, DeviceInfo::CPU);
  EXPECT_EQ(devices[0].name, "CPU (2 threads)");
  for (size_t i = 1; i < devices.size(); ++i)
    EXPECT_EQ(devices[i].kind, DeviceInfo::CUDA);
  std::string why;
  int n = cudaDeviceCount(why);
  const char *env = std::getenv("SAGA_CUDA_DRIVER");
  void *driver = dlopen(env ? env : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    EXPECT_EQ(n, -1);
    EXPECT_NE(why.find("no CUDA driver"), std::string::npos) << why;
  } else {
    dlclose(driver);
  }
}

TEST(Device, ParsesTheDeviceChoice) {
  DeviceChoice c;
  ASSERT_TRUE(parseDeviceChoice("cuda", c));
  EXPECT_EQ(c, DeviceChoice::Cuda);
  ASSERT_TRUE(parseDeviceChoice("cpu", c));
  EXPECT_EQ(c, DeviceChoice::Cpu);
  ASSERT_TRUE(parseDeviceChoice("auto", c));
  EXPECT_EQ(c, DeviceChoice::Auto);
  EXPECT_FALSE(parseDeviceChoice("gpu", c));
}
