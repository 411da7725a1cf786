//===- FaultInjection.cpp - kill the process at a named point, for tests --===//

#include "runtime/FaultInjection.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace {
struct Target {
  std::string point;
  long at = 0; // 0: none
};

const Target &target() {
  static const Target t = [] {
    Target t;
    const char *env = std::getenv("SAGA_KILL_AT");
    if (!env)
      return t;
    const char *colon = std::strrchr(env, ':');
    if (!colon)
      return t;
    t.point.assign(env, colon);
    t.at = std::strtol(colon + 1, nullptr, 10);
    return t;
  }();
  return t;
}

std::atomic<long> hits{0};
} // namespace

void saga::faultPoint(const char *point) {
  const Target &t = target();
  if (t.at <= 0 || t.point != point)
    return;
  if (hits.fetch_add(1) + 1 == t.at)
    ::kill(::getpid(), SIGKILL);
}
