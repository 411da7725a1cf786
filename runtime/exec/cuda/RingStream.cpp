//===- RingStream.cpp - source intervals around a ring of devices ---------===//

#include "runtime/exec/cuda/RingStream.h"

using namespace saga;
using namespace saga::cuda;

llvm::Error saga::cuda::enableRingPeers(const RingDevices &ring) {
  const size_t n = ring.devices.size();
  if (n < 2)
    return llvm::Error::success();
  for (size_t d = 0; d < n; ++d)
    if (auto e = ring.devices[d]->enablePeerAccess(
            *ring.devices[(d + n - 1) % n]))
      return e;
  return llvm::Error::success();
}

llvm::Error saga::cuda::streamRing(
    const RingSchedule &s, const RingDevices &ring,
    const std::function<HostInterval(int64_t)> &host,
    const std::function<llvm::Error(int, int64_t, CUdeviceptr)> &use) {
  if (ring.devices.size() != size_t(s.devices) ||
      ring.slots.size() != size_t(s.devices))
    return llvm::createStringError(
        "the ring schedule is for " + std::to_string(s.devices) +
        " devices; " + std::to_string(ring.devices.size()) + " were given");
  auto where = [&](size_t t, int d, int64_t i) {
    return "ring step " + std::to_string(t) + " of " +
           std::to_string(s.steps.size()) + ", device " +
           std::to_string(ring.devices[size_t(d)]->ordinal()) +
           ", source interval " + std::to_string(i);
  };
  for (size_t t = 0; t < s.steps.size(); ++t) {
    // This step's moves (a peer's copy reads what it held at t - 1).
    for (int d = 0; d < s.devices; ++d) {
      const RingSchedule::Move &m = s.steps[t][size_t(d)];
      if (m.interval < 0)
        continue;
      HostInterval piece = host(m.interval);
      CUdeviceptr to = ring.slots[size_t(d)][t % 2];
      llvm::Error e = llvm::Error::success();
      if (m.from < 0) {
        e = ring.devices[size_t(d)]->upload(to, piece.data, piece.bytes);
      } else if (t == 0) {
        e = llvm::createStringError("a peer copy at the first step");
      } else {
        e = ring.devices[size_t(d)]->copyFromPeer(
            to, *ring.devices[size_t(m.from)],
            ring.slots[size_t(m.from)][(t - 1) % 2], piece.bytes,
            "source interval " + std::to_string(m.interval));
      }
      if (e)
        return llvm::createStringError(where(t, d, m.interval) + " (from " +
                                       (m.from < 0 ? std::string("the host")
                                                   : "device " +
                                                         std::to_string(
                                                             ring.devices[size_t(m.from)]
                                                                 ->ordinal())) +
                                       "): " + llvm::toString(std::move(e)));
    }
    for (int d = 0; d < s.devices; ++d) {
      const RingSchedule::Move &m = s.steps[t][size_t(d)];
      if (m.interval < 0)
        continue;
      if (auto e = use(d, m.interval, ring.slots[size_t(d)][t % 2]))
        return llvm::createStringError(where(t, d, m.interval) + ": " +
                                       llvm::toString(std::move(e)));
    }
  }
  for (size_t d = 0; d < ring.devices.size(); ++d)
    if (auto e = ring.devices[d]->synchronize())
      return llvm::createStringError(
          "ring: device " + std::to_string(ring.devices[d]->ordinal()) +
          " at the end: " + llvm::toString(std::move(e)));
  return llvm::Error::success();
}
