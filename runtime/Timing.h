//===- Timing.h - wall-clock seconds since a point ------------------*- C++ -*-===//

#ifndef SAGA_RUNTIME_TIMING_H
#define SAGA_RUNTIME_TIMING_H

#include <chrono>

namespace saga {

/// Seconds of steady-clock time since `start`.
inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

} // namespace saga

#endif // SAGA_RUNTIME_TIMING_H
