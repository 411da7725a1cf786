//===- Synthetic.h - generated graphs and features for benchmarks -*- C++ -*-===//
//
// Deterministic, platform-independent generators: the same seed gives the
// same graph and the same features with any compiler or standard library
// (xoshiro256** seeded through splitmix64; no std:: distributions).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_SYNTHETIC_H
#define SAGA_RUNTIME_SYNTHETIC_H

#include "runtime/graph/Loaders.h"
#include "runtime/memory/Tensor.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace saga {

/// An R-MAT graph as in Graph500: 2^scale vertices, edgeFactor * 2^scale
/// sampled directed edges with quadrant probabilities a = 0.57, b = 0.19,
/// c = 0.19, d = 0.05 (no per-level noise). Vertex ids are randomly permuted
/// (so that id order carries no degree information); self loops and
/// repeated edges are then removed, so the result has somewhat fewer edges
/// than requested. Edges come sorted by (src, dst). 1 <= scale <= 30,
/// edgeFactor >= 1 (aborts otherwise).
EdgeList rmatGraph(int scale, int edgeFactor, uint64_t seed);

/// A [rows, cols] f32 tensor with entries uniform in [-1, 1) (multiples of
/// 2^-23).
Tensor randomFeatures(int64_t rows, int64_t cols, uint64_t seed);

/// Whether `path` names a synthetic dataset (`rmat:...`) rather than a file.
bool isSyntheticSpec(const std::string &path);

/// The dataset a spec names, for benchmarks on any machine without a file:
/// `rmat:scale=S[,edge-factor=16][,features=64][,classes=16][,seed=1]`:
/// rmatGraph(S, edge-factor, seed), randomFeatures(2^S, features, seed),
/// random classes and a random split (10 % train, 10 % validation, the rest
/// test). The graph depends on scale, edge-factor and seed alone. Errors
/// name the spec and the key.
llvm::Expected<Dataset> loadSyntheticDataset(const std::string &spec);

} // namespace saga

#endif // SAGA_RUNTIME_SYNTHETIC_H
