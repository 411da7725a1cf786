//===- Tensor.h - dense row-major host tensors ------------------*- C++ -*-===//
//
// A graph-wide value in host memory: one row per vertex (or edge), each row a
// row-major feature tensor. f32 features and i32 labels/ids.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_TENSOR_H
#define SAGA_RUNTIME_TENSOR_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace saga {

enum class DType { F32, I32 };

class Tensor {
public:
  /// An empty tensor: no rows, no storage.
  Tensor() : shape_{0} {}
  /// Zero-initialised; `shape[0]` is the row count.
  Tensor(std::vector<int64_t> shape, DType dtype = DType::F32);
  /// Storage left uninitialised, for results a kernel overwrites entirely.
  static Tensor uninitialized(std::vector<int64_t> shape,
                              DType dtype = DType::F32);
  /// For tests: fill uninitialised storage with NaN bits (0xFFFFFFFF), so
  /// that a kernel reading rows nobody wrote shows in its results.
  static void poisonUninitialized(bool on);
  /// `other`'s storage, not owned: valid while `other` lives and keeps
  /// its storage (a whole graph's inputs lent to a model between
  /// mini-batches, api/MiniBatches.h). Copies of it own copies.
  static Tensor view(const Tensor &other);
  /// Storage the caller owns (4-byte elements, e.g. a NumPy array bound
  /// without a copy): valid while the caller keeps it.
  static Tensor borrow(void *data, std::vector<int64_t> shape, DType dtype);
  Tensor(const Tensor &other);
  Tensor &operator=(const Tensor &other);
  Tensor(Tensor &&) = default;
  Tensor &operator=(Tensor &&) = default;

  const std::vector<int64_t> &shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  int64_t rows() const { return shape_.empty() ? 1 : shape_[0]; }
  /// Elements per row (the product of all but the first dimension).
  int64_t rowSize() const;
  int64_t numElements() const;

  float *f32() { return reinterpret_cast<float *>(data_.get()); }
  const float *f32() const {
    return reinterpret_cast<const float *>(data_.get());
  }
  int32_t *i32() { return reinterpret_cast<int32_t *>(data_.get()); }
  const int32_t *i32() const {
    return reinterpret_cast<const int32_t *>(data_.get());
  }
  void *data() { return data_.get(); }
  /// The same storage seen with another shape and element type of the same
  /// element count (buffer reuse); aborts otherwise.
  void reinterpret(std::vector<int64_t> shape, DType dtype);

  /// `[2708, 1433] f32`, for messages.
  std::string describe() const { return describe(shape_, dtype_); }
  static std::string describe(const std::vector<int64_t> &shape, DType dtype);

private:
  std::vector<int64_t> shape_;
  DType dtype_ = DType::F32;
  struct Free {
    Free() noexcept : bytes(0) {}
    explicit Free(size_t bytes, bool owned = true) noexcept
        : bytes(bytes), owned(owned) {}
    void operator()(uint32_t *p) const;
    size_t bytes; // a recycled large block's size, or 0
    bool owned = true; // false: a view's, freed by its owner
  };
  Tensor(std::vector<int64_t> shape, DType dtype, bool zero);
  // 4-byte elements, 64-byte aligned; buffers of 4 MiB and more ask for
  // transparent huge pages (gathers over them fault and miss the TLB less)
  // and are recycled: see BlockCache in Tensor.cpp.
  std::unique_ptr<uint32_t[], Free> data_;
};

} // namespace saga

#endif // SAGA_RUNTIME_TENSOR_H
