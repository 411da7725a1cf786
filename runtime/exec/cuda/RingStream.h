//===- RingStream.h - source intervals around a ring of devices -*- C++ -*-===//
//
// Carries out a RingSchedule (support/RingSchedule.h) on CUDA devices:
// each device has two slots; at step t a device's move lands in its slot
// t % 2, uploaded from the host or copied from the previous device's slot
// (t - 1) % 2 over their peer link (CudaDevice::copyFromPeer: after the
// peer has the bytes, before it overwrites them); then `use` queues the
// device's kernels over it on its compute stream. A copy waits for the
// kernels its device queued before it (the slot it fills was read two
// steps before) and the kernels wait for it: the steps do not overlap yet
// (that needs an arrival event per slot). Every error names the step, the
// device and the interval.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_CUDA_RINGSTREAM_H
#define SAGA_RUNTIME_EXEC_CUDA_RINGSTREAM_H

#include "runtime/exec/cuda/CudaDevice.h"
#include "support/RingSchedule.h"

#include "llvm/Support/Error.h"

#include <array>
#include <functional>
#include <vector>

namespace saga::cuda {

/// Source interval i in host memory.
struct HostInterval {
  const void *data = nullptr;
  int64_t bytes = 0;
};

/// The ring's devices (ring position d: devices[d]) and each one's two
/// slots, each at least as large as the largest interval. With `peers`,
/// every device first enables peer access to the one after it.
struct RingDevices {
  std::vector<CudaDevice *> devices;
  std::vector<std::array<CUdeviceptr, 2>> slots;
};

/// Opens peer access from each device to the previous one in the ring
/// (what copyFromPeer reads).
llvm::Error enableRingPeers(const RingDevices &ring);

/// Runs schedule `s` over `ring`; `use(d, i, slot)` is called in step
/// order, devices in order within a step.
llvm::Error streamRing(
    const RingSchedule &s, const RingDevices &ring,
    const std::function<HostInterval(int64_t)> &host,
    const std::function<llvm::Error(int, int64_t, CUdeviceptr)> &use);

} // namespace saga::cuda

#endif // SAGA_RUNTIME_EXEC_CUDA_RINGSTREAM_H
