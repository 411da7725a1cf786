//===- Checkpoint.h - training state on disk, written atomically -*- C++ -*-===//
//
// Parameters and optimiser state after a completed epoch. The file is
// written to `<path>.tmp`, flushed to disk and renamed over `<path>`, so a
// run killed at any moment leaves either the previous or the new checkpoint,
// never a torn one. Format: "SAGACKPT" v2, little-endian: epoch, step,
// early-stopping state, then named f32 tensors. Version 1 files (no
// early-stopping state) still load.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_CHECKPOINT_H
#define SAGA_RUNTIME_CHECKPOINT_H

#include "runtime/train/ParamsFile.h"

#include "llvm/Support/Error.h"

namespace saga {

struct Checkpoint {
  uint64_t epoch = 0; // epochs completed
  uint64_t step = 0;  // optimiser steps taken
  // Early stopping: the best validation accuracy so far (-1: none yet) and
  // the epochs since it was reached.
  double bestVal = -1;
  uint64_t sinceBest = 0;
  NamedTensors params;
  NamedTensors moment1; // Adam first moments, or SGD velocities
  NamedTensors moment2; // Adam second moments
};

llvm::Error saveCheckpoint(const std::string &path, const Checkpoint &ckpt);
llvm::Expected<Checkpoint> loadCheckpoint(const std::string &path);

} // namespace saga

#endif // SAGA_RUNTIME_CHECKPOINT_H
