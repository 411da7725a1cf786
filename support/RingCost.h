//===- RingCost.h - what a ring of devices would take per epoch -*- C++ -*-===//
//
// A first-order model of streamed propagation on N devices (NGra's ring,
// RingSchedule.h), to say what a multi-GPU machine should give before one
// is at hand. Assumptions, all stated in the table `sagac ring-model`
// prints:
//  - the vertex values a propagation reads (V rows of `rowBytes`) live in
//    host memory and are streamed every propagation, as in NGra;
//  - each device keeps its destination rows (their value and running state,
//    2 x rowBytes each) in half its memory; if they do not fit, the
//    propagation runs in passes, each streaming every source interval
//    again; the other half holds two source intervals (one read, one
//    arriving) and its share of the edges (8 bytes each: CSR); the source
//    rows are cut into at least 8 intervals (so that transfers and kernels
//    overlap in every plan), a multiple of N in the ring;
//  - every device has its own host link (`hostGBps`); `hostSharedGBps`
//    (0: none) caps what the host feeds all links together;
//  - a kernel step reads its edges' source rows at `gatherEfficiency` of the
//    DRAM rate and writes its destination rows at the full rate;
//  - copies overlap kernels (two slots): a step takes the longer of its
//    kernel and the next step's transfer; devices step together;
//  - GEMMs, losses and the optimiser are left out (they do not move with N
//    in the ring's favour or against it).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_SUPPORT_RINGCOST_H
#define SAGA_SUPPORT_RINGCOST_H

#include "support/RingSchedule.h"

#include <cstdint>
#include <string>

namespace saga {

struct RingRates {
  double hostGBps = 50;        // per device, host to device (PCIe 5 x16)
  double hostSharedGBps = 0;   // all host links together (0: no cap)
  double peerGBps = 450;       // device to device, per direction (NVLink 4)
  double dramGBps = 3350;      // device memory (H100 SXM, HBM3)
  double gatherEfficiency = 0.35;
  int64_t deviceBytes = int64_t(80) << 30;
};

struct RingWorkload {
  int64_t vertices = 0, edges = 0;
  int64_t rowBytes = 512;  // one row of the propagated value
  int propagations = 4;    // per epoch (a 2-layer GCN: 2 forward, 2 backward)
};

struct RingEstimate {
  int devices = 1;
  bool ring = false;
  int64_t parts = 0;   // source intervals
  int64_t passes = 1;  // over the sources, when destinations do not fit
  int64_t hostBytes = 0, peerBytes = 0; // per epoch
  double hostSeconds = 0, peerSeconds = 0, kernelSeconds = 0; // per epoch, summed
  double seconds = 0;  // per epoch, overlapped
  std::string error;   // non-empty: the workload cannot run so
};

/// The epoch of `w` on `devices` devices, in the ring or not (one device:
/// neither). The schedule is planRing's over `parts` equal intervals.
RingEstimate estimateRing(const RingWorkload &w, const RingRates &rates,
                          int devices, bool ring);

} // namespace saga

#endif // SAGA_SUPPORT_RINGCOST_H
