//===- Tensor.cpp - dense row-major host tensors --------------------------===//

#include "runtime/Tensor.h"

#include "llvm/Support/ErrorHandling.h"

#include <limits>
#include <utility>

using namespace saga;

namespace {
/// Product of `shape[from..]`; aborts on a negative dimension or on a product
/// that does not fit in int64_t (a programming error, not user input).
int64_t product(const std::vector<int64_t> &shape, size_t from) {
  int64_t n = 1;
  for (size_t i = from; i < shape.size(); ++i) {
    int64_t d = shape[i];
    if (d < 0)
      llvm::report_fatal_error("saga::Tensor: negative dimension in shape");
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      llvm::report_fatal_error("saga::Tensor: element count overflows int64");
    n *= d;
  }
  return n;
}
} // namespace

Tensor::Tensor(std::vector<int64_t> shape, DType dtype)
    : shape_(std::move(shape)), dtype_(dtype) {
  data_.assign(static_cast<size_t>(product(shape_, 0)), 0u);
}

int64_t Tensor::rowSize() const { return product(shape_, 1); }

int64_t Tensor::numElements() const { return product(shape_, 0); }

std::string Tensor::describe(const std::vector<int64_t> &shape, DType dtype) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  s += dtype == DType::F32 ? "] f32" : "] i32";
  return s;
}
