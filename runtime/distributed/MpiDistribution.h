//===- MpiDistribution.h - halo exchange and sums over MPI -------*- C++ -*-===//
//
// The Distribution of one MPI rank: rank r of the communicator holds part r
// of the graph. A halo gather is one MPI_Alltoallv of whole rows (a
// contiguous datatype of the value's width, so counts are rows): each rank
// packs the rows its peers' halos hold, and receives its own halo straight
// into the value's halo rows, which are grouped by owner. A scatter is the
// same exchange the other way, the received partial sums added to the owned
// rows in peer order. Sums over ranks are an MPI_Allgather of the partial
// values added in rank order in double, so every rank gets the same bits.
// Counters say how many bytes went each way.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_DISTRIBUTED_MPIDISTRIBUTION_H
#define SAGA_RUNTIME_DISTRIBUTED_MPIDISTRIBUTION_H

#include "runtime/distributed/Distribution.h"

#include <mpi.h>

#include <map>

namespace saga {

struct ExchangeCounters {
  int64_t gathers = 0, scatters = 0, sums = 0;
  /// Bytes of rows sent and received by halo gathers (forward) and
  /// scatters (backward).
  int64_t gatherSent = 0, gatherReceived = 0;
  int64_t scatterSent = 0, scatterReceived = 0;
  double seconds = 0; // in exchanges and sums
};

class MpiDistribution : public Distribution {
public:
  /// `part` outlives this; the communicator's size is part.parts and this
  /// rank's number part.part.
  MpiDistribution(const GraphPart &part, MPI_Comm comm);
  ~MpiDistribution() override;

  llvm::Error gatherHalo(float *rows, int64_t width) override;
  llvm::Error scatterHalo(float *rows, int64_t width) override;
  using Distribution::sum;
  llvm::Error sum(double *values, int64_t n) override;

  const ExchangeCounters &counters() const { return counters_; }
  void resetCounters() { counters_ = {}; }

private:
  /// A row of `width` floats as one MPI datatype (counts are rows).
  llvm::Expected<MPI_Datatype> rowType(int64_t width);
  MPI_Comm comm;
  std::map<int64_t, MPI_Datatype> rowTypes;
  std::vector<int> haloCounts, haloDispls, sendCounts, sendDispls;
  std::vector<float> buffer;
  ExchangeCounters counters_;
};

} // namespace saga

#endif // SAGA_RUNTIME_DISTRIBUTED_MPIDISTRIBUTION_H
