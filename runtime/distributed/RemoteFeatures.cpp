//===- RemoteFeatures.cpp - a trainer's feature rows and its peers' over MPI -===//

#include "runtime/distributed/RemoteFeatures.h"

#include "runtime/Timing.h"
#include "runtime/exec/ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <numeric>

using namespace saga;

RemoteFeatures::RemoteFeatures(Tensor ownedRows, Partitioning partitioning,
                               int64_t part, std::vector<int32_t> haloIds,
                               const std::vector<int64_t> &haloInDegree,
                               const HaloBufferOptions &options,
                               MPI_Comm world)
    : owned(std::move(ownedRows)), parts(std::move(partitioning)), part(part),
      halo(std::move(haloIds)) {
  MPI_Comm_dup(world, &comm);
  MPI_Type_contiguous(int(owned.rowSize()), MPI_FLOAT, &rowType);
  MPI_Type_commit(&rowType);
  if (options.fraction > 0)
    buffer = std::make_unique<HaloBuffer>(halo, haloInDegree, owned.rowSize(),
                                          options);
}

RemoteFeatures::~RemoteFeatures() {
  if (rowType != MPI_DATATYPE_NULL)
    MPI_Type_free(&rowType);
  if (comm != MPI_COMM_NULL)
    MPI_Comm_free(&comm);
}

int64_t RemoteFeatures::ownerOf(int32_t v) const {
  return int64_t(std::upper_bound(parts.bounds.begin(), parts.bounds.end(), v) -
                 parts.bounds.begin()) -
         1;
}

RemoteFeatureCounters RemoteFeatures::counters() const {
  std::lock_guard<std::mutex> lock(countersMutex);
  return counters_;
}

llvm::Error RemoteFeatures::fetch(const std::vector<int32_t> &ids,
                                  std::vector<float> &rows) {
  auto start = std::chrono::steady_clock::now();
  const int n = int(parts.parts());
  const int64_t w = width();
  // The requests grouped by owner (a stable counting sort: `at` is each
  // id's place in the grouped order).
  std::vector<int> askCounts(size_t(n), 0), askDispls(size_t(n) + 1, 0);
  std::vector<int64_t> ownerOfId(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    ownerOfId[i] = ownerOf(ids[i]);
    if (ownerOfId[i] == part || ownerOfId[i] < 0)
      return llvm::createStringError(
          "vertex " + std::to_string(ids[i]) +
          " is not another trainer's to fetch");
    ++askCounts[size_t(ownerOfId[i])];
  }
  for (int q = 0; q < n; ++q)
    askDispls[size_t(q) + 1] = askDispls[size_t(q)] + askCounts[size_t(q)];
  std::vector<int32_t> asked(ids.size());
  std::vector<int64_t> at(ids.size());
  {
    std::vector<int> next(askDispls.begin(), askDispls.end() - 1);
    for (size_t i = 0; i < ids.size(); ++i) {
      at[i] = next[size_t(ownerOfId[i])]++;
      asked[size_t(at[i])] = ids[i];
    }
  }
  std::vector<int> serveCounts(size_t(n), 0), serveDispls(size_t(n) + 1, 0);
  MPI_Alltoall(askCounts.data(), 1, MPI_INT, serveCounts.data(), 1, MPI_INT,
               comm);
  for (int q = 0; q < n; ++q)
    serveDispls[size_t(q) + 1] = serveDispls[size_t(q)] + serveCounts[size_t(q)];
  std::vector<int32_t> served(size_t(serveDispls.back()));
  MPI_Alltoallv(asked.data(), askCounts.data(), askDispls.data(), MPI_INT32_T,
                served.data(), serveCounts.data(), serveDispls.data(),
                MPI_INT32_T, comm);
  // Serve: the asked rows of this partition, packed in the askers' order.
  std::vector<float> reply(served.size() * size_t(w));
  const int32_t lo = begin(), hi = end();
  for (size_t i = 0; i < served.size(); ++i) {
    int32_t v = served[i];
    if (v < lo || v >= hi)
      return llvm::createStringError(
          "a peer asked for vertex " + std::to_string(v) +
          ", which this trainer does not own");
    std::copy(owned.f32() + int64_t(v - lo) * w,
              owned.f32() + int64_t(v - lo + 1) * w,
              reply.begin() + int64_t(i) * w);
  }
  std::vector<float> grouped(ids.size() * size_t(w));
  MPI_Alltoallv(reply.data(), serveCounts.data(), serveDispls.data(), rowType,
                grouped.data(), askCounts.data(), askDispls.data(), rowType,
                comm);
  rows.resize(ids.size() * size_t(w));
  for (size_t i = 0; i < ids.size(); ++i)
    std::copy(grouped.begin() + at[i] * w, grouped.begin() + (at[i] + 1) * w,
              rows.begin() + int64_t(i) * w);
  std::lock_guard<std::mutex> lock(countersMutex);
  counters_.bytesReceived += int64_t(ids.size()) * (w * 4) +
                             int64_t(served.size()) * 4;
  counters_.bytesSent += int64_t(served.size()) * (w * 4) +
                         int64_t(ids.size()) * 4;
  counters_.fetchSeconds += secondsSince(start);
  return llvm::Error::success();
}

llvm::Error RemoteFeatures::start() {
  std::vector<int32_t> ids;
  if (buffer)
    ids = buffer->slots();
  std::vector<float> rows;
  int64_t before = counters().bytesReceived;
  if (llvm::Error e = fetch(ids, rows))
    return e;
  if (buffer)
    buffer->fill(rows.data());
  std::lock_guard<std::mutex> lock(countersMutex);
  counters_.fillRows += int64_t(ids.size());
  counters_.fillBytes += counters_.bytesReceived - before;
  return llvm::Error::success();
}

llvm::Error RemoteFeatures::gather(const std::vector<int32_t> &vertices,
                                   float *out, ThreadPool &pool) {
  const int64_t w = width();
  const int32_t lo = begin(), hi = end();
  // Owned rows straight from the partition; the others are needed.
  std::vector<int32_t> mine, needed;
  std::vector<int64_t> mineAt, neededAt;
  for (size_t r = 0; r < vertices.size(); ++r) {
    int32_t v = vertices[r];
    if (v >= lo && v < hi) {
      mine.push_back(v);
      mineAt.push_back(int64_t(r));
    } else {
      needed.push_back(v);
      neededAt.push_back(int64_t(r));
    }
  }
  LocalBatchRows::copyRows(owned.f32(), w, lo, mine, &mineAt, out, pool);
  HaloBuffer::Plan plan;
  std::vector<int32_t> ids;
  int64_t hits = 0, misses = 0;
  if (buffer) {
    HaloBuffer::Counters before = buffer->counters();
    plan = buffer->lookup(needed);
    hits = buffer->counters().hits - before.hits;
    misses = buffer->counters().misses - before.misses;
    // The hits' rows, read before install() moves the slots.
    for (size_t i = 0; i < needed.size(); ++i)
      if (int32_t slot = plan.slotOf[i]; slot >= 0)
        std::copy(buffer->row(slot), buffer->row(slot) + w,
                  out + neededAt[i] * w);
    ids = plan.fetch;
    ids.insert(ids.end(), plan.newcomers.begin(), plan.newcomers.end());
  } else {
    ids = needed;
  }
  std::vector<float> rows;
  if (llvm::Error e = fetch(ids, rows))
    return e;
  // The fetched rows are the needed ones without a slot, in order.
  size_t next = 0;
  for (size_t i = 0; i < needed.size(); ++i) {
    if (buffer && plan.slotOf[i] >= 0)
      continue;
    std::copy(rows.begin() + int64_t(next) * w,
              rows.begin() + int64_t(next + 1) * w, out + neededAt[i] * w);
    ++next;
  }
  if (buffer)
    buffer->install(plan, rows.data() + int64_t(next) * w);
  std::lock_guard<std::mutex> lock(countersMutex);
  ++counters_.batches;
  counters_.localRows += int64_t(mine.size());
  counters_.remoteRows += int64_t(needed.size());
  counters_.hits += hits;
  counters_.misses += misses;
  counters_.fetchedRows += int64_t(ids.size());
  return llvm::Error::success();
}
