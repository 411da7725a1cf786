//===- StandInCublas.cpp - a CPU-backed cuBLAS (OpenBLAS's sgemm) ---------===//
//
// cublasSgemm runs OpenBLAS's sgemm on the handle's stream (a stream of the
// stand-in driver, StandIn.cpp), on operands that must lie in its device
// memory. Compiled against the toolkit's cublas_v2.h.
//
//===----------------------------------------------------------------------===//

#include "emulator/driver/StandIn.h"

#include <cublas_v2.h>

#include <cblas.h>

#include <algorithm>

using namespace saga::emu::standin;

//===-------------------------------------------------------------------===//
// cuBLAS
//===-------------------------------------------------------------------===//

struct cublasContext {
  CUstream stream = nullptr;
};

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle) {
  if (!handle)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (!initialised || !current)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  *handle = new cublasContext();
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = reinterpret_cast<CUstream>(stream);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t) {
  return handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t ta,
                              cublasOperation_t tb, int m, int n, int k,
                              const float *alpha, const float *a, int lda,
                              const float *b, int ldb, const float *beta,
                              float *c, int ldc) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || k < 0 || !alpha || !beta)
    return CUBLAS_STATUS_INVALID_VALUE;
  auto opOf = [](cublasOperation_t t) {
    return t == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
  };
  // Column-major, as cuBLAS; the operands' extents must be device memory.
  auto rowsA = ta == CUBLAS_OP_N ? m : k, colsA = ta == CUBLAS_OP_N ? k : m;
  auto rowsB = tb == CUBLAS_OP_N ? k : n, colsB = tb == CUBLAS_OP_N ? n : k;
  auto extent = [](int rows, int cols, int ld) {
    return cols == 0 || rows == 0 ? size_t(0)
                                  : (size_t(cols - 1) * ld + rows) * 4;
  };
  if (lda < std::max(1, rowsA) || ldb < std::max(1, rowsB) ||
      ldc < std::max(1, m))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (!memory().isDevice(uintptr_t(a), extent(rowsA, colsA, lda)) ||
      !memory().isDevice(uintptr_t(b), extent(rowsB, colsB, ldb)) ||
      !memory().isDevice(uintptr_t(c), extent(m, n, ldc)))
    return CUBLAS_STATUS_INVALID_VALUE;
  float al = *alpha, be = *beta; // host pointer mode: read at the call
  resolve(handle->stream)->enqueue([=] {
    if (m && n)
      cblas_sgemm(CblasColMajor, opOf(ta), opOf(tb), m, n, k, al, a, lda, b,
                  ldb, be, c, ldc);
  });
  return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"
