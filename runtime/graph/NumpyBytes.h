//===- NumpyBytes.h - what the .npy and .npz readers share ------*- C++ -*-===//
//
// Private to runtime/graph (Numpy.h is the interface): the error that names
// a file and a byte offset, and little-endian fields, for NpyReader.cpp and
// NpzReader.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_GRAPH_NUMPYBYTES_H
#define SAGA_RUNTIME_GRAPH_NUMPYBYTES_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace saga::numpy {

inline llvm::Error at(const std::string &where, int64_t offset,
                      const std::string &what) {
  return llvm::createStringError(where + ": offset " + std::to_string(offset) +
                                 ": " + what);
}

inline uint64_t little(const char *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | uint8_t(p[i]);
  return v;
}

} // namespace saga::numpy

#endif // SAGA_RUNTIME_GRAPH_NUMPYBYTES_H
