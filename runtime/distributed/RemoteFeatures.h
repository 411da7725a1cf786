//===- RemoteFeatures.h - a trainer's feature rows and its peers' over MPI -*- C++ -*-===//
//
// A trainer of a distributed mini-batch run holds the feature rows of its
// partition only (a contiguous range of vertices, as GraphPart). The rows
// of a batch's other vertices come from their owners: each batch is one
// request and one response per pair of trainers, an MPI_Alltoallv of the
// wanted ids and one of the rows (a row is one MPI datatype, so counts are
// rows). Every trainer runs the same number of batches, so every batch's
// exchange is a collective in which each trainer both asks and serves; it
// runs on the loader thread, over a communicator of its own (the trainers'
// gradient sums use theirs meanwhile: MPI_THREAD_MULTIPLE).
//
// With a HaloBuffer (MassiveGNN's policy, runtime/sample/HaloBuffer.h) the
// buffered halo rows are read locally, misses and the eviction round's
// newcomers are fetched in the batch's request, and the initial fill is
// one request of its own (start()). f = 0: no buffer, every remote row is
// fetched.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_DISTRIBUTED_REMOTEFEATURES_H
#define SAGA_RUNTIME_DISTRIBUTED_REMOTEFEATURES_H

#include "runtime/distributed/Partitioner.h"
#include "runtime/sample/BatchRows.h"
#include "runtime/sample/HaloBuffer.h"

#include <mpi.h>

#include <memory>
#include <mutex>

namespace saga {

struct RemoteFeatureCounters {
  int64_t batches = 0;
  int64_t localRows = 0;      // read from this trainer's partition
  int64_t remoteRows = 0;     // of other partitions, needed by batches
  int64_t hits = 0, misses = 0; // halo vertices found in the buffer or not
  int64_t fetchedRows = 0;    // received (misses, beyond-halo, newcomers)
  int64_t fillRows = 0;       // received by the initial fill
  int64_t bytesReceived = 0;  // rows and ids, by batches and the fill
  int64_t fillBytes = 0;      // of which the fill's
  int64_t bytesSent = 0;      // rows served to peers and ids asked
  double fetchSeconds = 0;    // in exchanges
  double hitRate() const {
    return hits + misses ? double(hits) / double(hits + misses) : 0.0;
  }
};

class RemoteFeatures : public BatchRows {
public:
  /// `owned`: the rows of vertices [parts.bounds[part], bounds[part + 1]);
  /// `halo`: the partition's halo (remote in-neighbours of its vertices,
  /// ascending) and `haloInDegree` theirs, for the buffer. `comm` is
  /// duplicated; rank r holds part r.
  RemoteFeatures(Tensor owned, Partitioning parts, int64_t part,
                 std::vector<int32_t> halo,
                 const std::vector<int64_t> &haloInDegree,
                 const HaloBufferOptions &buffer, MPI_Comm comm);
  ~RemoteFeatures() override;

  /// Fills the buffer (a collective: every trainer calls it once, before
  /// the first batch).
  llvm::Error start();
  int64_t width() const override { return owned.rowSize(); }
  /// A collective: every trainer gathers the same number of batches.
  llvm::Error gather(const std::vector<int32_t> &vertices, float *out,
                     ThreadPool &pool) override;

  const Tensor &ownedRows() const { return owned; }
  int32_t begin() const { return parts.bounds[size_t(part)]; }
  int32_t end() const { return parts.bounds[size_t(part) + 1]; }
  /// Buffered halo rows (0 without a buffer).
  int64_t bufferRows() const { return buffer ? buffer->size() : 0; }
  int64_t haloRows() const { return int64_t(halo.size()); }
  /// So far (the loader thread updates them after each batch).
  RemoteFeatureCounters counters() const;

private:
  /// The rows of `ids` (remote, any order) into `rows` (ids.size() x
  /// width), in that order.
  llvm::Error fetch(const std::vector<int32_t> &ids, std::vector<float> &rows);
  int64_t ownerOf(int32_t v) const;

  Tensor owned;
  Partitioning parts;
  int64_t part;
  std::vector<int32_t> halo;
  std::unique_ptr<HaloBuffer> buffer;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Datatype rowType = MPI_DATATYPE_NULL;
  mutable std::mutex countersMutex;
  RemoteFeatureCounters counters_;
};

} // namespace saga

#endif // SAGA_RUNTIME_DISTRIBUTED_REMOTEFEATURES_H
