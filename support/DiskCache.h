//===- DiskCache.h - the compiled-code caches' folders and files -*- C++ -*-===//
//
// Saga keeps what it compiles on disk, keyed by a hash of everything the
// result depends on: the CPU kernels' object code (codegen/cpu/CpuJit.cpp),
// the CUDA kernels' CUBINs (codegen/cuda/Nvrtc.cpp) and the emulated GPU's
// modules (emulator/). One rule for where each cache lives, and one way
// to write an entry: beside its name, then renamed, so that a reader (a
// parallel test, another rank) never sees half a file.
//
// Header-only and standard library only: the emulator, built into the
// stand-in driver, includes it too.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_SUPPORT_DISKCACHE_H
#define SAGA_SUPPORT_DISKCACHE_H

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include <unistd.h>

namespace saga::disk_cache {

/// The folder of one cache: $`envVar` when set, else
/// $XDG_CACHE_HOME/saga/`sub`, else ~/.cache/saga/`sub`, else
/// /tmp/saga-cache/`sub`. "off" in `envVar` turns the cache off: the
/// empty string is returned.
inline std::string folder(const char *envVar, const std::string &sub) {
  if (const char *d = std::getenv(envVar))
    return std::string(d) == "off" ? std::string() : std::string(d);
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return std::string(x) + "/saga/" + sub;
  if (const char *h = std::getenv("HOME"); h && *h)
    return std::string(h) + "/.cache/saga/" + sub;
  return "/tmp/saga-cache/" + sub;
}

/// The whole file into `out`; false when it cannot be read.
inline bool read(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return !in.bad();
}

/// `data` as `path`, written beside it and renamed into place, creating
/// the folder. False when it could not be written: a cache is an
/// optimisation, so callers carry on (the next run compiles again).
inline bool writeAtomically(const std::string &path, const std::string &data) {
  std::error_code ec;
  std::filesystem::create_directories(
      std::filesystem::path(path).parent_path(), ec);
  std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(data.data(), std::streamsize(data.size()));
    if (!out) {
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

} // namespace saga::disk_cache

#endif // SAGA_SUPPORT_DISKCACHE_H
