//===- Nvrtc.cpp - CUDA C++ to PTX and CUBIN at run time ------------------===//

#include "codegen/cuda/Nvrtc.h"

#include "support/DiskCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/ADT/StringExtras.h"

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include <dlfcn.h>
#include <unistd.h>

using namespace saga::cuda;

// NVRTC's C API (nvrtc.h), declared here so that Saga builds without the
// toolkit's headers; these signatures are stable since CUDA 7.
using nvrtcProgram = void *;
struct Nvrtc::Api {
  int (*version)(int *, int *);
  const char *(*errorString)(int);
  int (*create)(nvrtcProgram *, const char *, const char *, int,
                const char *const *, const char *const *);
  int (*compile)(nvrtcProgram, int, const char *const *);
  int (*logSize)(nvrtcProgram, size_t *);
  int (*log)(nvrtcProgram, char *);
  int (*ptxSize)(nvrtcProgram, size_t *);
  int (*ptx)(nvrtcProgram, char *);
  int (*cubinSize)(nvrtcProgram, size_t *);
  int (*cubin)(nvrtcProgram, char *);
  int (*destroy)(nvrtcProgram *);
  int major = 0, minor = 0;
};

llvm::Expected<Nvrtc *> Nvrtc::load() {
  static std::mutex mutex;
  static Nvrtc *loaded = nullptr;
  static std::string failure;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded)
    return loaded;
  if (!failure.empty())
    return llvm::createStringError(failure);
  std::vector<std::string> names;
  // SAGA_NVRTC, when set, is the only one tried.
  if (const char *path = std::getenv("SAGA_NVRTC"); path && *path)
    names.push_back(path);
  else
    for (const char *n : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
      names.push_back(n);
  void *lib = nullptr;
  std::string tried;
  for (const std::string &n : names) {
    lib = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib)
      break;
    tried += "\n  " + n + ": " + dlerror();
  }
  if (!lib) {
    failure = "NVRTC (the CUDA runtime compiler) is not installed or not "
              "found; tried:" + tried +
              "\n  (install the CUDA toolkit, or set SAGA_NVRTC to "
              "libnvrtc.so's path)";
    return llvm::createStringError(failure);
  }
  auto *api = new Api();
  bool ok = true;
  auto sym = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    if (!fn) {
      ok = false;
      failure += std::string(failure.empty() ? "" : ", ") + name;
    }
  };
  sym(api->version, "nvrtcVersion");
  sym(api->errorString, "nvrtcGetErrorString");
  sym(api->create, "nvrtcCreateProgram");
  sym(api->compile, "nvrtcCompileProgram");
  sym(api->logSize, "nvrtcGetProgramLogSize");
  sym(api->log, "nvrtcGetProgramLog");
  sym(api->ptxSize, "nvrtcGetPTXSize");
  sym(api->ptx, "nvrtcGetPTX");
  sym(api->cubinSize, "nvrtcGetCUBINSize");
  sym(api->cubin, "nvrtcGetCUBIN");
  sym(api->destroy, "nvrtcDestroyProgram");
  if (!ok) {
    failure = "NVRTC was found but lacks " + failure;
    delete api;
    return llvm::createStringError(failure);
  }
  api->version(&api->major, &api->minor);
  loaded = new Nvrtc(api);
  return loaded;
}

std::string Nvrtc::version() const {
  return std::to_string(api->major) + "." + std::to_string(api->minor);
}

std::string saga::cuda::cubinCacheFolder() {
  return disk_cache::folder("SAGA_CUDA_CACHE", "cuda");
}

llvm::Expected<Compiled> Nvrtc::compile(const std::string &source, int arch,
                                        bool wantCubin) {
  Compiled out;
  std::string key;
  std::string folder = cubinCacheFolder();
  if (wantCubin && !folder.empty()) {
    llvm::SHA256 hash;
    hash.update(source);
    hash.update("|sm_" + std::to_string(arch) + "|nvrtc " + version());
    key = folder + "/" + llvm::toHex(hash.final(), /*LowerCase=*/true) +
          "-sm_" + std::to_string(arch);
    if (disk_cache::read(key + ".cubin", out.cubin) &&
        disk_cache::read(key + ".ptx", out.ptx) &&
        !out.cubin.empty()) {
      out.cached = true;
      return out;
    }
    out.cubin.clear();
    out.ptx.clear();
  }
  auto fail = [&](nvrtcProgram *p, int rc, const char *what) {
    std::string msg = std::string("NVRTC ") + what + ": " + api->errorString(rc);
    if (!out.log.empty())
      msg += "\n" + out.log;
    if (p && *p)
      api->destroy(p);
    return llvm::createStringError(msg);
  };
  nvrtcProgram prog = nullptr;
  if (int rc = api->create(&prog, source.c_str(), "saga_kernels.cu", 0,
                           nullptr, nullptr))
    return fail(&prog, rc, "cannot create a program");
  // A real architecture gives the CUBIN; its PTX is asked for separately
  // (for ptxas -v and for drivers newer than the CUBIN's).
  std::string archFlag = "--gpu-architecture=" +
                         std::string(wantCubin ? "sm_" : "compute_") +
                         std::to_string(arch);
  const char *options[] = {archFlag.c_str(), "--std=c++17",
                           "--device-as-default-execution-space"};
  int rc = api->compile(prog, 3, options);
  size_t logSize = 0;
  api->logSize(prog, &logSize);
  if (logSize > 1) {
    out.log.resize(logSize);
    api->log(prog, out.log.data());
    out.log.resize(logSize - 1);
  }
  if (rc)
    return fail(&prog, rc, ("cannot compile the kernels for sm_" +
                            std::to_string(arch))
                               .c_str());
  size_t n = 0;
  if (wantCubin) {
    api->cubinSize(prog, &n);
    out.cubin.resize(n);
    api->cubin(prog, out.cubin.data());
    api->destroy(&prog);
    // The PTX of the same source, for the virtual architecture.
    auto ptx = compile(source, arch, false);
    if (!ptx)
      return ptx.takeError();
    out.ptx = std::move(ptx->ptx);
    if (!key.empty()) {
      disk_cache::writeAtomically(key + ".ptx", out.ptx);
      disk_cache::writeAtomically(key + ".cubin", out.cubin);
    }
    return out;
  }
  api->ptxSize(prog, &n);
  out.ptx.resize(n);
  api->ptx(prog, out.ptx.data());
  if (!out.ptx.empty() && out.ptx.back() == '\0')
    out.ptx.pop_back();
  api->destroy(&prog);
  return out;
}
