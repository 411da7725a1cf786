//===- CudaRingTest.cpp - NGra's ring on several emulated devices ---------===//
//
// The stand-in driver with SAGA_EMU_DEVICES devices: peer access, copies
// between contexts, per-link byte counters; the ring streamer over 2, 3
// and 4 of them against the schedule's byte counts; its errors.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/cuda/CudaDevice.h"
#include "runtime/exec/cuda/RingStream.h"
#include "runtime/exec/cuda/RuntimeKernels.h"
#include "runtime/exec/cuda/RuntimeOps.h"
#include "support/RingSchedule.h"

#include "CudaStandIn.h"
#include "TestGraphs.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <numeric>
#include <vector>

#include <dlfcn.h>

using namespace saga;
using namespace saga::cuda;
using namespace sagatest;

namespace {

constexpr int kDevices = 4; // what the tests ask the stand-in for


/// The stand-in's link counters (bytes from, to; -1 the host).
struct Links {
  unsigned long long (*bytes)(int, int) = nullptr;
  void (*reset)() = nullptr;
  bool load() {
    void *lib = dlopen(SAGA_CUDA_STANDIN, RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
      return false;
    bytes = reinterpret_cast<unsigned long long (*)(int, int)>(
        dlsym(lib, "saga_emu_link_bytes"));
    reset = reinterpret_cast<void (*)()>(dlsym(lib, "saga_emu_reset_link_bytes"));
    return bytes && reset;
  }
  int64_t fromHost(int n) const {
    int64_t b = 0;
    for (int d = 0; d < n; ++d)
      b += int64_t(bytes(-1, d));
    return b;
  }
  int64_t betweenDevices(int n) const {
    int64_t b = 0;
    for (int s = 0; s < n; ++s)
      for (int d = 0; d < n; ++d)
        b += int64_t(bytes(s, d));
    return b;
  }
};

struct Opened {
  std::vector<std::unique_ptr<CudaDevice>> devices;
  std::vector<std::unique_ptr<CudaModule>> modules;
};

llvm::Error open(Opened &o, int n, int64_t poolBytes) {
  for (int d = 0; d < n; ++d) {
    CudaDevice::Options opt;
    opt.ordinal = d;
    opt.poolBytes = poolBytes;
    auto dev = CudaDevice::open(opt);
    if (!dev)
      return dev.takeError();
    auto m = (*dev)->load(runtimeKernelSource(), runtimeKernelNames());
    if (!m)
      return m.takeError();
    o.devices.push_back(std::move(*dev));
    o.modules.push_back(std::move(*m));
  }
  return llvm::Error::success();
}

} // namespace

// The stand-in's devices: each its own memory; a copy between two goes over
// their link once peer access is on, else through the host.
TEST(CudaRing, StandInDevicesHaveTheirOwnMemoryAndLinks) {
  if (!useStandIn())
    GTEST_SKIP() << "the stand-in driver was not built (no cuda.h)";
  Opened o;
  ASSERT_EQ(errorText(open(o, 2, 1 << 20)), "");
  Links links;
  ASSERT_TRUE(links.load());
  EXPECT_NE(o.devices[1]->describe().find("GPU 1 of 4"), std::string::npos)
      << o.devices[1]->describe();
  auto a = o.devices[0]->allocate(4096, "a");
  auto b = o.devices[1]->allocate(4096, "b");
  ASSERT_TRUE(a && b);
  std::vector<float> up(1024), down(1024);
  std::iota(up.begin(), up.end(), 1.0f);
  links.reset();
  ASSERT_EQ(errorText(o.devices[0]->upload(*a, up.data(), 4096)), "");
  EXPECT_EQ(links.bytes(-1, 0), 4096u);
  // No peer access yet: staged through the host.
  ASSERT_EQ(errorText(o.devices[1]->copyFromPeer(*b, *o.devices[0], *a, 4096,
                                                 "a test copy")),
            "");
  EXPECT_EQ(links.bytes(0, 1), 0u);
  EXPECT_EQ(links.bytes(0, -1), 4096u);
  EXPECT_EQ(links.bytes(-1, 1), 4096u);
  ASSERT_EQ(errorText(o.devices[1]->enablePeerAccess(*o.devices[0])), "");
  ASSERT_EQ(errorText(o.devices[1]->enablePeerAccess(*o.devices[0])), "");
  ASSERT_EQ(errorText(o.devices[1]->copyFromPeer(*b, *o.devices[0], *a, 4096,
                                                 "a test copy")),
            "");
  EXPECT_EQ(links.bytes(0, 1), 4096u);
  ASSERT_EQ(errorText(o.devices[1]->download(down.data(), *b, 4096)), "");
  EXPECT_EQ(up, down);
  EXPECT_EQ(o.devices[1]->stats().bytesFromPeers, 8192);
  // A device that is not there.
  CudaDevice::Options opt;
  opt.ordinal = kDevices;
  auto none = CudaDevice::open(opt);
  ASSERT_FALSE(bool(none));
  EXPECT_NE(errorText(none.takeError()).find("reports 4 device(s)"),
            std::string::npos);
}

// NGra's ring on 2, 3 and 4 emulated devices: every device adds up every
// source interval (so each got every one intact); the host link carries
// each interval once, the baseline N times, and the stand-in's counters
// equal the schedule's (the cost model's) bytes.
TEST(CudaRing, HostLoadsEachIntervalOnceAndPeersCarryTheRest) {
  if (!useStandIn())
    GTEST_SKIP() << "the stand-in driver was not built (no cuda.h)";
  Links links;
  Opened o;
  ASSERT_EQ(errorText(open(o, kDevices, 1 << 20)), "");
  ASSERT_TRUE(links.load());
  // 7 intervals of different lengths, small integers (exact sums).
  const int64_t p = 7, longest = 1000;
  std::vector<std::vector<float>> host(static_cast<size_t>(p));
  std::vector<int64_t> bytes(static_cast<size_t>(p));
  std::vector<float> want(longest, 0.0f);
  for (int64_t i = 0; i < p; ++i) {
    host[size_t(i)].resize(size_t(longest - 37 * i));
    for (size_t k = 0; k < host[size_t(i)].size(); ++k) {
      host[size_t(i)][k] = float((k * 7 + size_t(i) * 13) % 31);
      want[k] += host[size_t(i)][k];
    }
    bytes[size_t(i)] = int64_t(host[size_t(i)].size() * 4);
  }
  const int64_t total = std::accumulate(bytes.begin(), bytes.end(), int64_t(0));
  for (int n : {2, 3, 4})
    for (bool ring : {true, false}) {
      SCOPED_TRACE(std::to_string(n) + (ring ? " devices, ring" : " devices, no ring"));
      RingSchedule s = planRing(n, std::vector<int64_t>(p, 1), ring);
      ASSERT_EQ(s.check(), "");
      RingDevices rd;
      std::vector<CUdeviceptr> acc;
      for (int d = 0; d < n; ++d) {
        rd.devices.push_back(o.devices[size_t(d)].get());
        auto s0 = o.devices[size_t(d)]->allocate(longest * 4, "slot 0");
        auto s1 = o.devices[size_t(d)]->allocate(longest * 4, "slot 1");
        auto a = o.devices[size_t(d)]->allocate(longest * 4, "sums");
        ASSERT_TRUE(s0 && s1 && a);
        rd.slots.push_back({*s0, *s1});
        acc.push_back(*a);
        ASSERT_EQ(errorText(o.devices[size_t(d)]->fill32(*a, 0, longest)), "");
      }
      if (ring) {
        ASSERT_EQ(errorText(enableRingPeers(rd)), "");
      }
      links.reset();
      llvm::Error e = streamRing(
          s, rd,
          [&](int64_t i) {
            return HostInterval{host[size_t(i)].data(), bytes[size_t(i)]};
          },
          [&](int d, int64_t i, CUdeviceptr slot) {
            RuntimeOps ops(*o.devices[size_t(d)], *o.modules[size_t(d)]);
            int64_t len = bytes[size_t(i)] / 4;
            return ops.binary(0, acc[size_t(d)], len, slot, len, acc[size_t(d)],
                              len);
          });
      ASSERT_EQ(errorText(std::move(e)), "");
      EXPECT_EQ(links.fromHost(n), ring ? total : n * total);
      EXPECT_EQ(links.fromHost(n), s.hostBytes(bytes));
      EXPECT_EQ(links.betweenDevices(n), s.peerBytes(bytes));
      EXPECT_EQ(links.betweenDevices(n), ring ? (n - 1) * total : 0);
      for (int d = 0; d < n; ++d) {
        std::vector<float> got(longest);
        ASSERT_EQ(errorText(o.devices[size_t(d)]->download(got.data(),
                                                           acc[size_t(d)],
                                                           longest * 4)),
                  "");
        EXPECT_EQ(got, want) << "device " << d;
        for (CUdeviceptr q : {rd.slots[size_t(d)][0], rd.slots[size_t(d)][1],
                              acc[size_t(d)]})
          o.devices[size_t(d)]->release(q);
      }
    }
}

// A failing peer copy ends the ring with the step, the devices and the
// interval; a device without room for its slots says which device.
TEST(CudaRing, FailuresNameTheDeviceAndTheStep) {
  if (!useStandIn())
    GTEST_SKIP() << "the stand-in driver was not built (no cuda.h)";
  Opened o;
  ASSERT_EQ(errorText(open(o, 3, 1 << 16)), "");
  RingSchedule s = planRing(3, std::vector<int64_t>(3, 1));
  RingDevices rd;
  for (int d = 0; d < 3; ++d) {
    rd.devices.push_back(o.devices[size_t(d)].get());
    auto s0 = o.devices[size_t(d)]->allocate(4096, "slot 0");
    auto s1 = o.devices[size_t(d)]->allocate(4096, "slot 1");
    ASSERT_TRUE(s0 && s1);
    rd.slots.push_back({*s0, *s1});
  }
  ASSERT_EQ(errorText(enableRingPeers(rd)), "");
  std::vector<char> piece(4096, 1);
  setenv("SAGA_EMU_FAIL_PEER_COPY", "2", 1); // the second peer copy
  llvm::Error e = streamRing(
      s, rd, [&](int64_t) { return HostInterval{piece.data(), 4096}; },
      [](int, int64_t, CUdeviceptr) { return llvm::Error::success(); });
  unsetenv("SAGA_EMU_FAIL_PEER_COPY");
  // Step 1: d0 <- i2 from d2, d1 <- i0 from d0 (the second: fails).
  EXPECT_EQ(errorText(std::move(e)),
            "ring step 1 of 3, device 1, source interval 0 (from device 0): "
            "cuMemcpyPeerAsync (source interval 0: 4096 bytes from "
            "device 0 to device 1): CUDA_ERROR_ILLEGAL_ADDRESS (700)");
  auto big = o.devices[2]->allocate(1 << 17, "source interval 5's slot");
  ASSERT_FALSE(bool(big));
  std::string text = errorText(big.takeError());
  EXPECT_NE(text.find("out of device memory on Saga emulated GPU 2 of 4"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("source interval 5's slot"), std::string::npos) << text;
}
