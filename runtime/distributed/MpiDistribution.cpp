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

MpiDistribution::MpiDistribution(const GraphPart &part, MPI_Comm comm)
    : Distribution(part), comm(comm) {
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
  auto type = rowType(width);
  if (!type)
    return type.takeError();
  Timer t{counters_.seconds};
  const int64_t sent = part.sentRows();
  buffer.resize(size_t(sent * width));
  float *to = buffer.data();
  for (const auto &list : part.sendRows)
    for (int32_t r : list) {
      std::memcpy(to, rows + int64_t(r) * width, size_t(width) * 4);
      to += width;
    }
  MPI_Alltoallv(buffer.data(), sendCounts.data(), sendDispls.data(), *type,
                rows + part.owned() * width, haloCounts.data(),
                haloDispls.data(), *type, comm);
  ++counters_.gathers;
  counters_.gatherSent += sent * width * 4;
  counters_.gatherReceived += int64_t(part.halo.size()) * width * 4;
  return llvm::Error::success();
}

llvm::Error MpiDistribution::scatterHalo(float *rows, int64_t width) {
  auto type = rowType(width);
  if (!type)
    return type.takeError();
  Timer t{counters_.seconds};
  const int64_t received = part.sentRows();
  buffer.resize(size_t(received * width));
  MPI_Alltoallv(rows + part.owned() * width, haloCounts.data(),
                haloDispls.data(), *type, buffer.data(), sendCounts.data(),
                sendDispls.data(), *type, comm);
  // Added in peer order: the same order on every run.
  const float *from = buffer.data();
  for (const auto &list : part.sendRows)
    for (int32_t r : list) {
      float *row = rows + int64_t(r) * width;
      for (int64_t j = 0; j < width; ++j)
        row[j] += from[j];
      from += width;
    }
  ++counters_.scatters;
  counters_.scatterSent += int64_t(part.halo.size()) * width * 4;
  counters_.scatterReceived += received * width * 4;
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
