//===- ErrorOf.h - the message of an error a test expects -------*- C++ -*-===//

#ifndef SAGA_TEST_UNIT_ERROROF_H
#define SAGA_TEST_UNIT_ERROROF_H

#include "llvm/Support/Error.h"

#include <gtest/gtest.h>

#include <string>

namespace sagatest {

/// The error text of a failed Expected, or "" (with a test failure) if it
/// succeeded.
template <typename T> std::string errorOf(llvm::Expected<T> result) {
  if (result) {
    ADD_FAILURE() << "expected an error";
    return "";
  }
  return llvm::toString(result.takeError());
}

} // namespace sagatest

#endif // SAGA_TEST_UNIT_ERROROF_H
