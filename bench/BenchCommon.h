//===- BenchCommon.h - helpers shared by the benchmark drivers -*- C++ -*-===//
//
// Errors, timing, statistics and .npy output for saga-bench-forward and
// saga-bench-suite.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_BENCH_BENCHCOMMON_H
#define SAGA_BENCH_BENCHCOMMON_H

#include "api/Model.h"
#include "runtime/graph/Numpy.h"
#include "runtime/Timing.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace sagabench {

/// The program's name in error messages (set by main).
inline const char *toolName = "saga-bench";

[[noreturn]] inline void fail(const llvm::Twine &message) {
  llvm::errs() << toolName << ": error: " << message << "\n";
  std::exit(1);
}

using saga::secondsSince; // runtime/Timing.h

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

inline std::string jsonEscape(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

/// Writes a little-endian, C-order .npy file (runtime/graph/Numpy.h).
inline void writeNpy(const std::string &path, const char *descr,
                     const std::vector<int64_t> &shape, const void *data,
                     size_t bytes) {
  if (llvm::Error e = saga::writeNpy(path, {"", descr, shape, data, bytes}))
    fail(llvm::toString(std::move(e)));
}

inline void writeTensor(const std::string &path, const saga::Tensor &t) {
  writeNpy(path, t.dtype() == saga::DType::F32 ? "<f4" : "<i4", t.shape(),
           static_cast<const void *>(t.f32()), size_t(t.numElements()) * 4);
}

/// Features per vertex of the model's f32 vertex input.
inline int64_t featureWidth(const saga::Model &model) {
  for (const saga::ValueInfo &in : model.inputs())
    if (in.domain == saga::ValueInfo::Vertex &&
        in.dtype == saga::DType::F32) {
      int64_t width = 1;
      for (int64_t d : in.shape)
        width *= d;
      return width;
    }
  fail("the model has no f32 vertex input for the features");
}

} // namespace sagabench

#endif // SAGA_BENCH_BENCHCOMMON_H
