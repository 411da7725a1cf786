//===- RingSchedule.h - NGra's ring of devices over source intervals -*- C++ -*-===//
//
// One propagation over P source intervals on N devices, as NGra streams it
// (its Figure 7): destination intervals are split among the devices
// (contiguous runs of equal weight, e.g. in-edges), and every device must
// see every source interval once. In the ring, the intervals travel in
// rounds of N: at a round's first step device d loads interval rN + d from
// the host; at each later step it receives, over a peer link from device
// d - 1, the interval that device used the step before. The host link then
// carries each interval once per propagation; the baseline (`ring` false)
// has every device load every interval from the host, N times the bytes.
// A device holds two source intervals at a time: the one its kernels read
// and the one arriving.
//
// Standard library only: the planner, the runtime's streamer
// (runtime/exec/cuda/RingStream.h) and the cost model (RingCost.h) share it.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_SUPPORT_RINGSCHEDULE_H
#define SAGA_SUPPORT_RINGSCHEDULE_H

#include <cstdint>
#include <string>
#include <vector>

namespace saga {

struct RingSchedule {
  /// Where a device gets the source interval it uses at a step.
  struct Move {
    int64_t interval = -1; // -1: none at this step (a short last round)
    int from = -1;         // -1: the host; else the device passing it on
  };
  int devices = 1;
  int64_t parts = 0; // source intervals
  bool ring = true;  // false: every device loads every interval itself
  /// The device that owns each destination interval.
  std::vector<int> owner;
  /// [step][device].
  std::vector<std::vector<Move>> steps;

  /// Interval loads over the host link, and copies over peer links.
  int64_t hostLoads() const;
  int64_t peerCopies() const;
  /// Bytes over the host link and over peer links, interval i being
  /// `bytes[i]` bytes.
  int64_t hostBytes(const std::vector<int64_t> &bytes) const;
  int64_t peerBytes(const std::vector<int64_t> &bytes) const;
  /// The first destination interval of device d, and the one past its
  /// last (d's intervals are contiguous).
  int64_t firstOwned(int d) const;
  int64_t endOwned(int d) const;
  /// Empty when every device sees every interval exactly once, a peer copy
  /// comes from a device that held that interval the step before, and no
  /// device holds more than two intervals at once; else what is wrong.
  std::string check() const;
  /// The schedule as text: the owners, then a line per step
  /// ("step 2: d0 <- i4 from d3, d1 <- i5 from d0, ...").
  std::string describe() const;
};

/// planRing's weight of each destination interval of the row intervals
/// `bounds` (P + 1 of them): its in-edges, the column sums of `chunkEdges`
/// (P x P, [i * P + j]: the edges from interval i into interval j); its
/// rows when `chunkEdges` is empty.
std::vector<int64_t> destinationWeights(const std::vector<int32_t> &bounds,
                                        const std::vector<int64_t> &chunkEdges);

/// The ring (or, with `ring` false, the baseline) for `devices` devices
/// over source intervals whose destination weights are `weights` (one per
/// interval, e.g. its in-edges; the same count P is the number of source
/// and destination intervals). Device d's destination intervals are a
/// contiguous run whose weight is near 1/N of the total; with P >= N every
/// device owns at least one. `devices` is at least 1.
RingSchedule planRing(int devices, const std::vector<int64_t> &weights,
                      bool ring = true);

} // namespace saga

#endif // SAGA_SUPPORT_RINGSCHEDULE_H
