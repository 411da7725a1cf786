//===- TestData.h - the bundled datasets, loaded once for the tests -*- C++ -*-===//

#ifndef SAGA_TEST_UNIT_TESTDATA_H
#define SAGA_TEST_UNIT_TESTDATA_H

#include "runtime/graph/Loaders.h"

#include <gtest/gtest.h>

namespace saga {

/// examples/data/cora as loaded (features not normalised), read once; a
/// failure to read it fails the test and gives an empty dataset.
inline const Dataset &bundledCora() {
  static Dataset d = [] {
    auto loaded = loadPlanetoid(SAGA_EXAMPLES_DIR "/data/cora");
    if (!loaded) {
      ADD_FAILURE() << llvm::toString(loaded.takeError());
      return Dataset();
    }
    return std::move(*loaded);
  }();
  return d;
}

} // namespace saga

#endif // SAGA_TEST_UNIT_TESTDATA_H
