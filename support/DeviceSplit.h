//===- DeviceSplit.h - a memory problem's operators over devices -*- C++ -*-===//
//
// One chunked run on several devices: the plan's operators keep their
// order (the run takes them in turn), each on the device given for it, and
// each device plans its own memory (ROC's planner, its own budget) over
// the operators it runs. A tensor the device touches is, on that device, a
// run of versions: a new version begins wherever the device touches the
// tensor after another device did. A version that starts by reading (or
// updating) the tensor is an input of the device's problem: the first
// version anywhere of a graph input or parameter reads it from where it
// lives; any other reads what the previous device to touch it hands over
// after its last touch (`exportsAfter`: over a peer link, through host
// memory, or, for a graph input no device has changed, from where it
// lives: the runtime's choice). A version that starts by writing is made
// on the device.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_SUPPORT_DEVICESPLIT_H
#define SAGA_SUPPORT_DEVICESPLIT_H

#include "support/MemoryPlanner.h"

#include <string>
#include <vector>

namespace saga {

struct DeviceProblem {
  MemoryProblem problem;         // budget left 0: the caller's to set
  std::vector<int> globalOp;     // per local operator
  std::vector<int> globalTensor; // per local tensor
  /// Per local tensor: the global operator after which the version it
  /// reads was exported by another device, or -1 (made here, or read from
  /// where a graph input or parameter lives).
  std::vector<int> exportedAfter;
  /// Per local tensor: the last global operator that touches it here.
  std::vector<int> lastOp;
};

/// What a device hands over after an operator: a tensor, and whether it
/// is a graph input or parameter no device has changed (the reader may
/// read it from where it lives instead).
struct Handover {
  int tensor = -1;
  bool unchanged = false;
  /// The last global operator of any version that reads it (it may be
  /// loaded again until then).
  int lastReader = -1;
};

struct DeviceSplit {
  std::vector<int> deviceOf;    // per global operator
  std::vector<DeviceProblem> devices;
  /// Per global operator: what its device hands over after it (for
  /// another device's next version).
  std::vector<std::vector<Handover>> exportsAfter;
  /// Empty, or why the split is not possible (a tensor read before any
  /// operator writes it that is not an input).
  std::string error;
};

/// Splits `p` over `devices` devices, operator k running on deviceOf[k].
DeviceSplit splitByDevice(const MemoryProblem &p,
                          const std::vector<int> &deviceOf, int devices);

} // namespace saga

#endif // SAGA_SUPPORT_DEVICESPLIT_H
