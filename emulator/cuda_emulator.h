//===- cuda_emulator.h - CUDA C++ compiled as host C++ ----------*- C++ -*-===//
//
// The emulated GPU's device side. Saga's generated CUDA source (the same
// text NVRTC compiles) is compiled by the host C++ compiler with this header
// force-included: each CUDA thread then runs as a fiber of the emulator
// (emulator/Emulator.cpp), blocks run on worker threads, and the barriers,
// warp shuffles and atomics below call into it. Nothing here is Saga
// specific; it covers what the generated kernels use.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_CUDA_EMULATOR_H
#define SAGA_CUDA_EMULATOR_H

#define SAGA_EMULATED 1

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "cuda_emulator_abi.h"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__
#define __align__(n) alignas(n)
#define __shared__ static thread_local // one copy per worker = per running block
#define threadIdx (saga_emu_self()->threadIdx)
#define blockIdx (saga_emu_self()->blockIdx)
#define blockDim (saga_emu_self()->blockDim)
#define gridDim (saga_emu_self()->gridDim)
#define SAGA_DYNAMIC_SHARED(name) char *const name = saga_emu_self()->shared

inline void __syncthreads() { saga_emu_syncthreads(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { saga_emu_syncwarp(mask); }

template <class T> inline T saga_emu_shuffle(unsigned mask, T v, int lane, int x) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- or 8-byte shuffles");
  if constexpr (sizeof(T) == 4) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    bits = saga_emu_shfl(mask, bits, lane, x);
    std::memcpy(&v, &bits, 4);
  } else {
    uint32_t bits[2];
    std::memcpy(bits, &v, 8);
    bits[0] = saga_emu_shfl(mask, bits[0], lane, x);
    bits[1] = saga_emu_shfl(mask, bits[1], lane, x);
    std::memcpy(&v, bits, 8);
  }
  return v;
}
template <class T> inline T __shfl_xor_sync(unsigned mask, T v, int laneMask, int = 32) {
  return saga_emu_shuffle(mask, v, -1, laneMask);
}
template <class T> inline T __shfl_sync(unsigned mask, T v, int src, int = 32) {
  return saga_emu_shuffle(mask, v, src, 0);
}

inline float __int_as_float(int x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
inline int __float_as_int(float f) {
  int x;
  std::memcpy(&x, &f, 4);
  return x;
}
// Modules are compiled with -ffp-contract=off: these round as on the GPU.
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }

template <class T> inline T atomicAdd(T *p, T v) {
  return std::atomic_ref<T>(*p).fetch_add(v);
}
template <class T> inline T atomicMax(T *p, T v) {
  std::atomic_ref<T> a(*p);
  T old = a.load();
  while (old < v && !a.compare_exchange_weak(old, v)) {
  }
  return old;
}

/// cuLaunchKernel's parameter array (one pointer per argument) to a call.
template <class... A, std::size_t... I>
inline void saga_emu_call(void (*f)(A...), void **p, std::index_sequence<I...>) {
  f(*static_cast<std::remove_reference_t<A> *>(p[I])...);
}
template <class... A> inline void saga_emu_invoke(void (*f)(A...), void **p) {
  saga_emu_call(f, p, std::index_sequence_for<A...>{});
}
/// The sizes of a kernel's parameters (what cuLaunchKernel copies when it
/// captures the arguments); returns their number, writes at most `max`.
template <class... A>
inline int saga_emu_param_sizes(void (*)(A...), unsigned long *sizes, int max) {
  const unsigned long all[] = {sizeof(A)..., 0};
  for (int i = 0; i < int(sizeof...(A)) && i < max; ++i)
    sizes[i] = all[i];
  return int(sizeof...(A));
}

#endif // SAGA_CUDA_EMULATOR_H
