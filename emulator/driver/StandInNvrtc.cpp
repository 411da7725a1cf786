//===- StandInNvrtc.cpp - a CPU-backed NVRTC for the stand-in driver ------===//
//
// "NVRTC" returns an image that is the CUDA source behind a magic line,
// which cuModuleLoadData (StandIn.cpp) compiles for the host (cached by
// hash). Compiled against the toolkit's nvrtc.h.
//
//===----------------------------------------------------------------------===//

#include "emulator/driver/StandIn.h"

#include "emulator/Emulator.h"

#include <nvrtc.h>

#include <cstring>
#include <string>

using namespace saga::emu::standin;

//===-------------------------------------------------------------------===//
// NVRTC
//===-------------------------------------------------------------------===//

struct _nvrtcProgram {
  std::string source, image, log;
};

extern "C" {

nvrtcResult nvrtcVersion(int *major, int *minor) {
  // Not a real NVRTC's version, so that images never share a CUBIN cache
  // key with one.
  *major = 99;
  *minor = 0;
  return NVRTC_SUCCESS;
}

const char *nvrtcGetErrorString(nvrtcResult result) {
  return result == NVRTC_SUCCESS ? "NVRTC_SUCCESS"
         : result == NVRTC_ERROR_COMPILATION ? "NVRTC_ERROR_COMPILATION"
                                             : "NVRTC_ERROR (stand-in)";
}

nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src,
                               const char *, int numHeaders,
                               const char *const *, const char *const *) {
  if (!prog || !src)
    return NVRTC_ERROR_INVALID_INPUT;
  if (numHeaders != 0)
    return NVRTC_ERROR_INVALID_INPUT; // not needed by Saga; not emulated
  *prog = new _nvrtcProgram{src, "", ""};
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int, const char *const *) {
  if (!prog)
    return NVRTC_ERROR_INVALID_PROGRAM;
  std::string error;
  if (!saga::emu::EmulatedModule::compile(prog->source, error)) {
    prog->log = error;
    return NVRTC_ERROR_COMPILATION;
  }
  prog->image = std::string(kImageMagic) + prog->source;
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t *size) {
  *size = prog->log.size() + 1;
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char *log) {
  std::memcpy(log, prog->log.c_str(), prog->log.size() + 1);
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t *size) {
  if (prog->image.empty())
    return NVRTC_ERROR_INVALID_PROGRAM;
  *size = prog->image.size() + 1;
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char *ptx) {
  std::memcpy(ptx, prog->image.c_str(), prog->image.size() + 1);
  return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t *size) {
  return nvrtcGetPTXSize(prog, size);
}

nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char *cubin) {
  return nvrtcGetPTX(prog, cubin);
}

nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog) {
  delete *prog;
  *prog = nullptr;
  return NVRTC_SUCCESS;
}

} // extern "C"
