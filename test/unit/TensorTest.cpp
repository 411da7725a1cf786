//===- TensorTest.cpp - tensor storage ------------------------------------===//
//
// Large blocks are recycled (runtime/memory/Tensor.cpp, BlockCache): a freed block
// comes back for the next tensor of the same size, and a zero-initialised
// tensor on a recycled block is still all zeros.
//
//===----------------------------------------------------------------------===//

#include "runtime/memory/Tensor.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace saga;

namespace {

TEST(TensorStorage, LargeBlocksAreRecycledAndZeroed) {
  const std::vector<int64_t> shape{1 << 16, 64}; // 16 MiB
  const void *first = nullptr;
  {
    Tensor t = Tensor::uninitialized(shape);
    std::fill(t.f32(), t.f32() + t.numElements(), 7.0f);
    first = t.data();
  }
  Tensor again(shape);
  EXPECT_EQ(again.data(), first) << "the freed block was not reused";
  EXPECT_TRUE(std::all_of(again.f32(), again.f32() + again.numElements(),
                          [](float x) { return x == 0.0f; }))
      << "a recycled block kept its old values";
}

TEST(TensorStorage, SmallTensorsAreIndependent) {
  Tensor a({4, 4});
  Tensor b = a;
  b.f32()[0] = 1.0f;
  EXPECT_EQ(a.f32()[0], 0.0f);
  EXPECT_NE(a.data(), b.data());
}

} // namespace
