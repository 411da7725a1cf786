//===- ExecHelpers.h - what the executors share -----------------*- C++ -*-===//
//
// Row blocks (fixed, graph-determined: results do not depend on the thread
// count), the sums over them, the memref calling convention of kernels, and
// small helpers, shared by the in-memory executor and the chunked one.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_EXECHELPERS_H
#define SAGA_RUNTIME_EXEC_EXECHELPERS_H

#include "runtime/exec/Executor.h"
#include "runtime/exec/FastExp.h"
#include "runtime/graph/Graph.h"
#include "support/Intervals.h"
#include "runtime/memory/Tensor.h"

#include "dialect/OpError.h"
#include "dialect/Saga.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace saga::exec {

using namespace mlir;

/// Rows per task for vertex-parallel work; fixed so that results do not
/// depend on the thread count (support/Intervals.h).
using saga::kRowsPerTask;
/// Edges per task (at least) for propagation kernels.
constexpr int64_t kEdgesPerTask = 16384;

/// The expanded LLVM form of a `memref<?xT>` argument.
struct FlatMemRef {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
};

inline FlatMemRef flat(void *data, int64_t size) {
  return {data, data, 0, size, 1};
}

/// A view of `size` elements of `elementBytes` at `data` in which element
/// `first` is data[0]: the base moved back by `first` elements (integer
/// arithmetic: the base lies before the allocation, and only indices from
/// `first` on are used through it). A part of a partitioned graph indexes
/// its rows and edges by their global numbers this way.
inline FlatMemRef flatFrom(const void *data, int64_t size, int64_t first,
                           size_t elementBytes) {
  void *base = reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(data) -
                                        uintptr_t(first) * elementBytes);
  return flat(base, size + first);
}

/// The first error of concurrent tasks (the rest are dropped).
class FirstError {
public:
  void note(llvm::Error e) {
    std::lock_guard<std::mutex> lock(mutex);
    if (first)
      llvm::consumeError(std::move(e));
    else
      first = std::move(e);
    failed_ = true;
  }
  bool failed() const { return failed_; }
  llvm::Error take() {
    std::lock_guard<std::mutex> lock(mutex);
    failed_ = false;
    return first ? std::move(first) : llvm::Error::success();
  }
  ~FirstError() { llvm::consumeError(std::move(first)); }

private:
  std::mutex mutex;
  llvm::Error first = llvm::Error::success();
  std::atomic<bool> failed_{false};
};

inline std::vector<int64_t> shapeOf(Type type, int64_t rows) {
  std::vector<int64_t> shape;
  if (auto d = dyn_cast<DomainType>(type)) {
    shape.push_back(rows);
    llvm::append_range(shape, d.getShape());
  } else {
    llvm::append_range(shape, cast<RankedTensorType>(type).getShape());
  }
  return shape;
}

/// Elements of a value of `type` on graph g: graph-wide values have a row
/// per edge (self loops included) or per vertex.
inline int64_t elementsOf(Type type, const Graph &g) {
  auto d = dyn_cast<DomainType>(type);
  int64_t n = 1;
  for (int64_t s : shapeOf(type, d && d.isEdgeDomain() ? g.numEdges : g.numVertices))
    n *= s;
  return n;
}

/// Model-level arithmetic (losses, weight decay and their gradients) takes
/// operands of the result's size or scalars: `na`, `nb` and `n` elements.
inline llvm::Error checkArithmetic(Operation *op, int64_t na, int64_t nb,
                                   int64_t n) {
  if ((na != n && na != 1) || (nb != n && nb != 1))
    return errorAt(op, "model-level arithmetic needs equal shapes or a scalar");
  return llvm::Error::success();
}

/// A splat float constant's value, or an error at it (a model's constants
/// are scalars and the splats canonicalisation hoists out of bodies).
inline llvm::Expected<float> splatValue(arith::ConstantOp c) {
  auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
  if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
    return errorAt(c, "only splat float constants are supported in a model");
  return float(dense.getSplatValue<APFloat>().convertToDouble());
}

inline DType dtypeOf(Type type) {
  Type elem = isa<DomainType>(type) ? cast<DomainType>(type).getElementType()
                                    : getElementTypeOrSelf(type);
  return isa<IntegerType>(elem) ? DType::I32 : DType::F32;
}

/// A use of a value by the chunked level's transfers (saga.schedule), not
/// by a step.
inline bool inSchedule(Operation *user) {
  return isa_and_nonnull<ScheduleOp>(user->getParentOp());
}

using saga::errorAt;

/// The pairs a link loss at `op` scores: bound, over the graph's vertices,
/// and not on a part of a partitioned graph (a pair may join two parts).
inline llvm::Expected<const PairSet *> pairsFor(Operation &op,
                                               const ExecutionContext &ctx) {
  if (!ctx.pairs)
    return errorAt(&op, "pair_bce scores vertex pairs, and none are bound: "
                        "train the model for link prediction (sagac train "
                        "--link-split, saga::trainLinks)");
  if (ctx.dist)
    return errorAt(&op, "pair_bce does not run on a partitioned graph yet");
  if (ctx.pairs->numVertices != ctx.graph->numVertices)
    return errorAt(&op, "the pairs are over " +
                            std::to_string(ctx.pairs->numVertices) +
                            " vertices but the graph has " +
                            std::to_string(ctx.graph->numVertices));
  if (!ctx.rowLevels.empty()) {
    // A sampled batch computes the loss rows, its first rowLevels[0].
    const PairSet &p = *ctx.pairs;
    for (int64_t i = 0; i < p.size(); ++i)
      if (std::max(p.src[size_t(i)], p.dst[size_t(i)]) >= ctx.rowLevels[0])
        return errorAt(&op, "pair " + std::to_string(i) +
                                " joins a vertex that is not a seed of the "
                                "sampled batch");
  }
  return ctx.pairs;
}

/// The caller's tensor for graph input `arg` of `model`, checked against
/// the input's type at `rows` rows (errors name the input and both shapes).
inline llvm::Expected<const Tensor *>
boundInput(ModelOp model, BlockArgument arg,
           const llvm::StringMap<Tensor> &inputs, int64_t rows) {
  auto name = model.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                 "saga.name");
  std::string n = name ? name.str() : "#" + std::to_string(arg.getArgNumber());
  auto it = inputs.find(n);
  if (it == inputs.end())
    return llvm::createStringError("graph input '" + n + "' is not set");
  const Tensor &t = it->second;
  std::vector<int64_t> expected = shapeOf(arg.getType(), rows);
  if (t.shape() != expected || t.dtype() != dtypeOf(arg.getType()))
    return llvm::createStringError(
        "graph input '" + n + "' has shape " + t.describe() +
        ", the model needs " +
        Tensor::describe(expected, dtypeOf(arg.getType())));
  return &t;
}

/// The caller's tensor for `param`, checked against its type.
inline llvm::Expected<const Tensor *>
boundParam(ParamOp param, const llvm::StringMap<Tensor> &params) {
  auto it = params.find(param.getName());
  if (it == params.end())
    return llvm::createStringError("parameter '" + param.getName().str() +
                                   "' is not set");
  std::vector<int64_t> want = shapeOf(param.getType(), 0);
  if (it->second.shape() != want)
    return llvm::createStringError(
        "parameter '" + param.getName().str() + "' has shape " +
        it->second.describe() + ", the model needs " +
        Tensor::describe(want, DType::F32));
  return &it->second;
}

/// Task boundaries over vertices: fixed row blocks, or blocks of about
/// kEdgesPerTask edges of a CSR's `offsets` for propagation. Every boundary
/// is a multiple of kRowsPerTask, so a task covers whole row blocks and
/// sums over rows can be formed per block inside any kernel (see
/// Run::launch) in the same order as saga.sum_rows forms them.
inline std::vector<int64_t> rowBlocks(const Graph &g,
                               const std::vector<int64_t> *offsets,
                               int64_t rows = -1) {
  std::vector<int64_t> bounds{0};
  int64_t v = rows < 0 ? g.numVertices : rows;
  if (!offsets) {
    for (int64_t r = kRowsPerTask; r < v; r += kRowsPerTask)
      bounds.push_back(r);
  } else {
    int64_t start = 0;
    for (int64_t r = kRowsPerTask; r < v; r += kRowsPerTask)
      if ((*offsets)[r] - (*offsets)[start] >= kEdgesPerTask ||
          r - start >= 8 * kRowsPerTask) {
        bounds.push_back(r);
        start = r;
      }
  }
  bounds.push_back(v);
  return bounds;
}

/// Sums over rows, formed the same way wherever they are formed (in
/// saga.sum_rows, or inside the kernel that makes the rows): per block of
/// kRowsPerTask rows, in row order and in double; then over the blocks, in
/// block order. Adds rows [begin, end) (row `begin` at `rows`, `w` wide) to
/// `partial` (w doubles per block); begin is a block boundary.
inline void addToBlockSums(const float *rows, int64_t begin, int64_t end, int64_t w,
                    double *partial) {
  for (int64_t b = begin / kRowsPerTask; b * kRowsPerTask < end; ++b) {
    double *p = partial + b * w;
    int64_t last = std::min(end, (b + 1) * kRowsPerTask);
    for (int64_t v = b * kRowsPerTask; v < last; ++v)
      for (int64_t j = 0; j < w; ++j)
        p[j] += rows[(v - begin) * w + j];
  }
}

/// out[j] = the sum over `blocks` blocks of partial, in block order.
inline void finishBlockSums(const std::vector<double> &partial, int64_t blocks,
                     int64_t w, float *out) {
  std::vector<double> s(size_t(w), 0.0); // block-major: contiguous adds
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t j = 0; j < w; ++j)
      s[size_t(j)] += partial[size_t(b * w + j)];
  for (int64_t j = 0; j < w; ++j)
    out[j] = float(s[size_t(j)]);
}

/// e[j] = exp(row[j] - m) for the c entries of a logits row (m its
/// maximum, so each term is at most 1), and their sum, in double.
inline double expSum(const float *row, int64_t c, float m, std::vector<float> &e) {
  for (int64_t j = 0; j < c; ++j)
    e[size_t(j)] = expNonPositive(row[j] - m);
  double s = 0;
  for (int64_t j = 0; j < c; ++j)
    s += e[size_t(j)];
  return s;
}

/// The first 64-byte aligned float of `buffer` (sized 16 floats over).
inline float *aligned64(std::vector<float> &buffer) {
  return reinterpret_cast<float *>(
      (reinterpret_cast<uintptr_t>(buffer.data()) + 63) & ~uintptr_t(63));
}

/// dW = x^T dy is summed over at most this many contiguous slices of the
/// row blocks, in slice order (see the executor's weight gradient).
using saga::kWeightGradSlices;

/// out[e] = the sum of `slices` partial products partial[t * size + e],
/// added in slice order from zero (every executor forms dW this way, so
/// its bits do not depend on where it ran). Slice-major, so the adds run
/// along contiguous memory: summing each element across the slices strided
/// by a whole weight took ~6 % of a mini-batch step.
inline void sumSlices(const float *partial, int64_t slices, int64_t size,
                      float *out) {
  std::fill(out, out + size, 0.0f);
  for (int64_t t = 0; t < slices; ++t) {
    const float *p = partial + t * size;
    for (int64_t e = 0; e < size; ++e)
      out[e] += p[e];
  }
}

/// The rows a loss reads: the loss mask, or every one of `n` rows.
inline std::vector<int32_t> lossRows(const std::vector<int32_t> &mask,
                                     int64_t n) {
  std::vector<int32_t> rows = mask;
  if (rows.empty())
    for (int64_t v = 0; v < n; ++v)
      rows.push_back(int32_t(v));
  return rows;
}

/// Tasks that each add a loss place's term into its row, where a mask may
/// repeat a row (a weighted loss): `places` (indices into `rows`) ordered
/// by row, stably (kept as they are when the rows already ascend), and
/// task bounds near multiples of `block` but never inside one row's run.
/// No two tasks then write the same row (TSan found two chunks adding into
/// one gradient row), and each row's terms are added in the mask's order:
/// the same bits for any thread count. Task t is [bounds[t], bounds[t + 1]).
struct RowTasks {
  std::vector<int32_t> places;
  std::vector<int64_t> bounds{0};
  int64_t count() const { return int64_t(bounds.size()) - 1; }
};
inline RowTasks rowTasks(const std::vector<int32_t> &rows,
                         std::vector<int32_t> places, int64_t block) {
  auto byRow = [&](int32_t a, int32_t b) {
    return rows[size_t(a)] < rows[size_t(b)];
  };
  if (!std::is_sorted(places.begin(), places.end(), byRow))
    std::stable_sort(places.begin(), places.end(), byRow);
  RowTasks tasks;
  const int64_t n = int64_t(places.size());
  for (int64_t b = block; b < n; b += block) {
    int64_t at = b;
    while (at < n && rows[size_t(places[size_t(at)])] ==
                         rows[size_t(places[size_t(at - 1)])])
      ++at;
    if (at < n && at > tasks.bounds.back())
      tasks.bounds.push_back(at);
  }
  if (n > 0)
    tasks.bounds.push_back(n);
  tasks.places = std::move(places);
  return tasks;
}

/// One logits row's cross-entropy term, log(sum exp(row)) - row[label],
/// in double (e: c floats of scratch).
inline double crossEntropyTerm(const float *row, int64_t c, int32_t label,
                               std::vector<float> &e) {
  float m = *std::max_element(row, row + c);
  return double(m) + std::log(expSum(row, c, m, e)) - row[label];
}

/// out += scale * (softmax(row) - onehot(label)).
inline void addCrossEntropyGrad(const float *row, int64_t c, int32_t label,
                                double scale, float *out,
                                std::vector<float> &e) {
  float m = *std::max_element(row, row + c);
  double invSum = 1.0 / expSum(row, c, m, e);
  for (int64_t j = 0; j < c; ++j) {
    double p = e[size_t(j)] * invSum;
    out[j] += float(scale * (p - (j == label ? 1.0 : 0.0)));
  }
}

/// saga.add/sub/mul/div as 0/1/2/3 (the CUDA runtime's binary kernel).
inline int64_t binaryOpCode(Operation *op) {
  return isa<AddOp>(op) ? 0 : isa<SubOp>(op) ? 1 : isa<MulOp>(op) ? 2 : 3;
}

/// z = x op y (saga.add/sub/mul/div) over n elements; an operand of one
/// element is broadcast.
inline void binaryElementwise(Operation *op, const float *x, int64_t na,
                              const float *y, int64_t nb, float *z, int64_t n) {
  int64_t sa = na == 1 ? 0 : 1, sb = nb == 1 ? 0 : 1;
  for (int64_t i = 0; i < n; ++i) {
    float u = x[i * sa], w = y[i * sb];
    z[i] = isa<AddOp>(op)   ? u + w
           : isa<SubOp>(op) ? u - w
           : isa<MulOp>(op) ? u * w
                            : u / w;
  }
}

/// The chunked level's row intervals (support/Intervals.h).
using saga::chunkIntervals;
inline std::vector<int32_t> chunkIntervals(const Graph &g, int64_t parts) {
  return chunkIntervals(g.numVertices, parts);
}

} // namespace saga::exec

#endif // SAGA_RUNTIME_EXEC_EXECHELPERS_H
