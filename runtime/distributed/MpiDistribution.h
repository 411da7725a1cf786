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
// Exchanges started with startGather/startScatter are MPI_Ialltoallv,
// moved on by MPI_Testall whenever the executor calls progress() between
// row blocks (Open MPI progresses nonblocking collectives only inside MPI
// calls) and completed by finish(). Counters say how many bytes went each
// way and how much of the exchanges' time was hidden behind computation.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_DISTRIBUTED_MPIDISTRIBUTION_H
#define SAGA_RUNTIME_DISTRIBUTED_MPIDISTRIBUTION_H

#include "runtime/distributed/Distribution.h"

#include <mpi.h>

#include <chrono>
#include <map>

namespace saga {

struct ExchangeCounters {
  int64_t gathers = 0, scatters = 0, sums = 0;
  /// Bytes of rows sent and received by halo gathers (forward) and
  /// scatters (backward).
  int64_t gatherSent = 0, gatherReceived = 0;
  int64_t scatterSent = 0, scatterReceived = 0;
  double seconds = 0; // in exchanges and sums, not computing
  /// Of the halo exchanges' wall time: while the rank computed (started,
  /// not yet waited for) and while it waited in finish().
  double hiddenSeconds = 0, exposedSeconds = 0;
  double overlapFraction() const {
    double all = hiddenSeconds + exposedSeconds;
    return all > 0 ? hiddenSeconds / all : 0.0;
  }
};

class MpiDistribution : public Distribution {
public:
  /// `part` outlives this; the communicator's size is part.parts and this
  /// rank's number part.part.
  /// `overlap` false: started exchanges complete at once (to measure what
  /// the overlap saves).
  MpiDistribution(const GraphPart &part, MPI_Comm comm, bool overlap = true);
  ~MpiDistribution() override;

  llvm::Error gatherHalo(float *rows, int64_t width) override;
  llvm::Error scatterHalo(float *rows, int64_t width) override;
  llvm::Error startGather(float *rows, int64_t width) override;
  llvm::Error startScatter(float *rows, int64_t width) override;
  void progress() override;
  llvm::Error finish() override;
  bool overlaps() const override { return overlap; }
  using Distribution::sum;
  llvm::Error sum(double *values, int64_t n) override;

  const ExchangeCounters &counters() const { return counters_; }
  void resetCounters() { counters_ = {}; }

private:
  /// A row of `width` floats as one MPI datatype (counts are rows).
  llvm::Expected<MPI_Datatype> rowType(int64_t width);
  using Clock = std::chrono::steady_clock;
  /// A started exchange: its request, the packed rows it sends (a gather)
  /// or the sums it receives (a scatter), and when it started and ended.
  struct Pending {
    MPI_Request request = MPI_REQUEST_NULL;
    std::vector<float> buffer;
    float *rows = nullptr;
    int64_t width = 0;
    bool scatter = false, done = false;
    Clock::time_point started, completed;
  };
  /// Adds a completed scatter's received sums to the owned rows.
  void addScattered(const Pending &p);
  MPI_Comm comm;
  bool overlap;
  std::map<int64_t, MPI_Datatype> rowTypes;
  std::vector<int> haloCounts, haloDispls, sendCounts, sendDispls;
  std::vector<Pending> pending;
  ExchangeCounters counters_;
};

} // namespace saga

#endif // SAGA_RUNTIME_DISTRIBUTED_MPIDISTRIBUTION_H
