//===- MpiDistribution.cpp - halo exchange and sums over MPI --------------===//

#include "runtime/distributed/MpiDistribution.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>

using namespace saga;

namespace {
struct Timer {
  double &total;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  ~Timer() {
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           start)
                 .count();
  }
};
} // namespace

MpiDistribution::MpiDistribution(const GraphPart &part, MPI_Comm comm,
                                 bool overlap)
    : Distribution(part), comm(comm), overlap(overlap) {
  for (int64_t q = 0; q < part.parts; ++q) {
    haloDispls.push_back(int(part.haloFrom[size_t(q)]));
    haloCounts.push_back(
        int(part.haloFrom[size_t(q) + 1] - part.haloFrom[size_t(q)]));
    sendDispls.push_back(q ? sendDispls.back() + sendCounts.back() : 0);
    sendCounts.push_back(int(part.sendRows[size_t(q)].size()));
  }
}

MpiDistribution::~MpiDistribution() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) // the types went with MPI
    return;
  for (auto &[width, type] : rowTypes)
    MPI_Type_free(&type);
}

llvm::Expected<MPI_Datatype> MpiDistribution::rowType(int64_t width) {
  if (width <= 0 || width > INT_MAX)
    return llvm::createStringError("a halo row of " + std::to_string(width) +
                                   " floats cannot be exchanged");
  auto it = rowTypes.find(width);
  if (it != rowTypes.end())
    return it->second;
  MPI_Datatype t;
  MPI_Type_contiguous(int(width), MPI_FLOAT, &t);
  MPI_Type_commit(&t);
  rowTypes[width] = t;
  return t;
}

llvm::Error MpiDistribution::gatherHalo(float *rows, int64_t width) {
  if (llvm::Error e = startGather(rows, width))
    return e;
  return finish();
}

llvm::Error MpiDistribution::scatterHalo(float *rows, int64_t width) {
  if (llvm::Error e = startScatter(rows, width))
    return e;
  return finish();
}

llvm::Error MpiDistribution::startGather(float *rows, int64_t width) {
  if (part.parts == 1) // no halo, no peers
    return llvm::Error::success();
  auto type = rowType(width);
  if (!type)
    return type.takeError();
  {
  Timer t{counters_.seconds};
  const int64_t sent = part.sentRows();
  Pending p;
  p.rows = rows;
  p.width = width;
  p.buffer.resize(size_t(sent * width));
  float *to = p.buffer.data();
  for (const auto &list : part.sendRows)
    for (int32_t r : list) {
      std::memcpy(to, rows + int64_t(r) * width, size_t(width) * 4);
      to += width;
    }
  p.started = Clock::now();
  MPI_Ialltoallv(p.buffer.data(), sendCounts.data(), sendDispls.data(), *type,
                 rows + part.owned() * width, haloCounts.data(),
                 haloDispls.data(), *type, comm, &p.request);
  pending.push_back(std::move(p));
  ++counters_.gathers;
  counters_.gatherSent += sent * width * 4;
  counters_.gatherReceived += int64_t(part.halo.size()) * width * 4;
  }
  return overlap ? llvm::Error::success() : finish();
}

llvm::Error MpiDistribution::startScatter(float *rows, int64_t width) {
  if (part.parts == 1)
    return llvm::Error::success();
  auto type = rowType(width);
  if (!type)
    return type.takeError();
  {
  Timer t{counters_.seconds};
  const int64_t received = part.sentRows();
  Pending p;
  p.rows = rows;
  p.width = width;
  p.scatter = true;
  p.buffer.resize(size_t(received * width));
  p.started = Clock::now();
  MPI_Ialltoallv(rows + part.owned() * width, haloCounts.data(),
                 haloDispls.data(), *type, p.buffer.data(), sendCounts.data(),
                 sendDispls.data(), *type, comm, &p.request);
  pending.push_back(std::move(p));
  ++counters_.scatters;
  counters_.scatterSent += int64_t(part.halo.size()) * width * 4;
  counters_.scatterReceived += received * width * 4;
  }
  return overlap ? llvm::Error::success() : finish();
}

void MpiDistribution::progress() {
  Timer t{counters_.seconds};
  for (Pending &p : pending)
    if (!p.done) {
      int flag = 0;
      MPI_Test(&p.request, &flag, MPI_STATUS_IGNORE);
      if (flag) {
        p.done = true;
        p.completed = Clock::now();
      }
    }
}

void MpiDistribution::addScattered(const Pending &p) {
  // Added in peer order: the same order on every run.
  const float *from = p.buffer.data();
  for (const auto &list : part.sendRows)
    for (int32_t r : list) {
      float *row = p.rows + int64_t(r) * p.width;
      for (int64_t j = 0; j < p.width; ++j)
        row[j] += from[j];
      from += p.width;
    }
}

llvm::Error MpiDistribution::finish() {
  Timer t{counters_.seconds};
  auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  const Clock::time_point waitFrom = Clock::now();
  // In start order: scatters into the same rows add in a fixed order.
  for (Pending &p : pending) {
    if (!p.done) {
      MPI_Wait(&p.request, MPI_STATUS_IGNORE);
      p.completed = Clock::now();
    }
    const Clock::time_point hiddenUntil = std::min(p.completed, waitFrom);
    counters_.hiddenSeconds += seconds(p.started, hiddenUntil);
    counters_.exposedSeconds += seconds(hiddenUntil, p.completed);
    if (p.scatter)
      addScattered(p);
  }
  pending.clear();
  return llvm::Error::success();
}

llvm::Error MpiDistribution::sum(double *values, int64_t n) {
  if (n <= 0)
    return llvm::Error::success();
  if (n > INT_MAX)
    return llvm::createStringError("a sum of " + std::to_string(n) +
                                   " values is too large for one exchange");
  Timer t{counters_.seconds};
  std::vector<double> all(size_t(n * part.parts));
  MPI_Allgather(values, int(n), MPI_DOUBLE, all.data(), int(n), MPI_DOUBLE,
                comm);
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int64_t q = 0; q < part.parts; ++q)
      s += all[size_t(q * n + i)];
    values[i] = s;
  }
  ++counters_.sums;
  return llvm::Error::success();
}
