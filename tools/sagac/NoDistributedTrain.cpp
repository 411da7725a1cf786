//===- NoDistributedTrain.cpp - sagac built without MPI -------------------===//
//
// The GPU bundle's sagac (SAGA_MPI=OFF, tools/sagac/CMakeLists.txt) has no
// MPI to train across ranks with: --partition says so instead of training.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "llvm/Support/raw_ostream.h"

int saga::runDistributedTrain(const TrainCommandOptions &options) {
  llvm::errs() << "sagac: error: --partition " << options.run.partition
               << ": this sagac was built without MPI (the GPU bundle's "
                  "static build); train across ranks with a build that has "
                  "it (make build)\n";
  return 1;
}
