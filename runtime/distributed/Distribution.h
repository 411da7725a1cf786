//===- Distribution.h - one part of a graph trained across processes -*- C++ -*-===//
//
// What the executor needs to run a plan on one part of a partitioned graph
// (runtime/distributed/GraphPart.h) as one of N workers that together
// compute what one process computes on the whole graph:
//
//  - local rows [0, ownedRows) are the part's vertices, global ids rowBase
//    and up (parts are contiguous ranges); rows [ownedRows, V) are its halo,
//    the remote vertices its in-edges read, grouped by owner;
//  - local edges are the in-edges of the owned rows, numbered by their
//    position in the whole graph's destination-sorted CSR minus edgeBase;
//  - kernels see global numbers (row rowBase + r, edge edgeBase + e), so
//    dropout masks, keyed by vertex and edge, are the same for any N;
//  - before a propagation or edge map reads a value at its sources, the
//    halo rows of that value are fetched from their owners (gatherHalo);
//    a reversed propagation's halo rows are partial sums that go back to
//    their owners (scatterHalo); sums over rows (parameter gradients,
//    losses) are summed over the parts (sum);
//  - an exchange may run while the worker computes rows that do not need
//    it (startGather, startScatter, then finish): the interior rows, whose
//    in-edges are all owned, before a gather; the owned rows after a
//    reversed propagation's halo rows, before its scatter.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_DISTRIBUTED_DISTRIBUTION_H
#define SAGA_RUNTIME_DISTRIBUTED_DISTRIBUTION_H

#include "runtime/distributed/GraphPart.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace saga {

class Distribution {
public:
  explicit Distribution(const GraphPart &part) : part(part) {}
  virtual ~Distribution() = default;

  /// The part this worker runs: its owned rows (global ids part.begin and
  /// up), halo, whole-graph degrees and ids, and the kernels' view of its
  /// CSR in global numbers. Outlives the Distribution.
  const GraphPart &part;

  /// The halo rows of `rows` (local rows x `width` floats) get their
  /// owners' values.
  virtual llvm::Error gatherHalo(float *rows, int64_t width) = 0;
  /// The halo rows' values are added to their owners' rows (a reversed
  /// propagation's partial sums); the halo rows are then stale.
  virtual llvm::Error scatterHalo(float *rows, int64_t width) = 0;
  /// The same exchanges, started now and completed by finish(): until
  /// then a gather's halo rows are not written, and neither a gather's
  /// owned rows nor a scatter's halo rows may change (a scatter's sums are
  /// added to the owned rows by finish(), once they are complete).
  /// progress() lets started exchanges move on while the caller computes;
  /// only the thread that started them calls it. By default, the
  /// exchanges run to completion when started.
  virtual llvm::Error startGather(float *rows, int64_t width) {
    return gatherHalo(rows, width);
  }
  virtual llvm::Error startScatter(float *rows, int64_t width) {
    return scatterHalo(rows, width);
  }
  virtual void progress() {}
  virtual llvm::Error finish() { return llvm::Error::success(); }
  /// Whether started exchanges run while the caller computes (else the
  /// executor need not order its rows around them).
  virtual bool overlaps() const { return false; }
  /// Sums `values` over the parts, in place; every part gets the same sum
  /// (added in part order, in double).
  virtual llvm::Error sum(double *values, int64_t n) = 0;
  llvm::Error sum(float *values, int64_t n) {
    std::vector<double> d(values, values + n);
    if (llvm::Error e = sum(d.data(), n))
      return e;
    for (int64_t i = 0; i < n; ++i)
      values[i] = float(d[size_t(i)]);
    return llvm::Error::success();
  }
};

} // namespace saga

#endif // SAGA_RUNTIME_DISTRIBUTED_DISTRIBUTION_H
