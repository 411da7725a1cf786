//===- ChunkedExecutor.cpp - runs a plan under a memory budget ------------===//

#include "runtime/exec/ChunkedExecutor.h"
#include "runtime/exec/ChunkedWalker.h"

#include "analysis/ChunkPlan.h"
#include "runtime/exec/ExecHelpers.h"

#include "runtime/exec/KernelDevice.h"
#include "support/KernelAbi.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cblas.h>

#include <cstring>
#include <set>

using namespace mlir;
using namespace saga;
using namespace saga::exec;

namespace {

/// The CPU's steps of a chunked run: pieces in host memory, kernels over
/// row blocks on the thread pool, GEMMs by BLAS.
class ChunkedRun : public ChunkedWalker {
public:
  ChunkedRun(ModelOp model, const ExecutionContext &ctx, const PlanMemory &pm)
      : ChunkedWalker(model, ctx, pm) {
    mapBlocks = rowBlocks(g, nullptr);
    inBlocks = rowBlocks(g, &g.inOffsets);
    outBlocks = rowBlocks(g, &g.outOffsets);
  }

  /// Reads input tensor t of the problem (a piece of a graph input, a
  /// parameter, a constant) from where it lives: the caller's tensor, a
  /// streamed input's reader, or the constant's value. The next tier's
  /// loads of inputs come here: inputs are never copied down first.
  llvm::Expected<int64_t> readInput(int t, void *to, int64_t bytes,
                                    const RowSelection *rows);

private:
  /// The caller's tensor behind a graph input or parameter, or null.
  const Tensor *external(Value v) const;
  /// Row 0 of `v` as seen from interval j (a piece's base shifted back by
  /// its first row), or the whole value; allocates small plan values.
  char *addr(Value v, int64_t j, Resident &r);
  /// The task boundaries of `blocks` inside interval j.
  std::vector<int64_t> window(const std::vector<int64_t> &blocks,
                              int64_t j) const;
  llvm::Error launch(LaunchOp op, int64_t i, int64_t j, Resident &r) override;
  llvm::Error gemm(Value x, Value w, Value y, bool transpose, int64_t j,
                   Resident &r) override;
  llvm::Error degrees(Value result, int64_t j, Resident &r) override;
  llvm::Error vertexIds(Value result, int64_t j, Resident &r) override;
  llvm::Error sumRows(SumRowsOp op, int64_t j, bool first, bool last,
                      Resident &r) override;
  llvm::Error weightGradient(LinearGradWeightOp op, int64_t j, bool first,
                             bool last, Resident &r) override;
  llvm::Error crossEntropy(CrossEntropyOp op, int64_t j, bool first, bool last,
                           Resident &r) override;
  llvm::Error crossEntropyGrad(CrossEntropyGradOp op, int64_t j, bool first,
                               Resident &r) override;
  llvm::Error l2(Operation *op, int64_t n, int64_t j, Resident &r) override;
  llvm::Error neg(Operation *op, int64_t n, int64_t j, Resident &r) override;
  llvm::Error binary(Operation *op, int64_t na, int64_t nb, int64_t n,
                     int64_t j, Resident &r) override;
  llvm::Error read(Value v, int64_t j, Resident &r, int64_t offset,
                   int64_t bytes, void *to) override;
  std::string unsupported() const override {
    return "run under a memory budget";
  }
  /// The loss rows and labels a loss over interval j reads.
  struct Loss {
    const float *logits;
    const int32_t *labels;
    int64_t c;
    const std::vector<int32_t> &rows;
  };
  Loss loss(Value logits, Value labels, int64_t j, Resident &r);

  std::vector<int64_t> mapBlocks, inBlocks, outBlocks;
  llvm::DenseMap<Value, Tensor> pinned;   // small values the plan makes
  // Reductions over rows, accumulated interval by interval.
  llvm::DenseMap<Operation *, std::vector<double>> blockSums;
  llvm::DenseMap<Operation *, std::vector<float>> slices;
  /// A loss's sum, formed as the in-memory executor forms it: each loss
  /// row's term, per 8192-entry chunk of the loss rows in order, chunks
  /// in order. With ascending loss rows each interval's terms arrive in
  /// that order, so only the chunks' running sums are kept; otherwise
  /// every term, summed at the last interval.
  struct LossSum {
    std::vector<double> chunks; // ascending rows: the chunks' running sums
    std::vector<double> terms;  // otherwise: each row's term
    std::vector<char> counted;  // ... and whether it has a label
    int64_t n = 0;              // the terms added to the chunks
  };
  llvm::DenseMap<Operation *, LossSum> lossSums;
  std::vector<int32_t> allRows;       // every row, without a loss mask
  const std::vector<int32_t> *lossRowsOnce = nullptr; // mask, or allRows
  /// Whether the loss rows ascend: interval j's places in them are then
  /// [lossBegin[j], lossBegin[j + 1]).
  bool lossAscending = false;
  std::vector<int64_t> lossBegin;
  /// Otherwise, per interval, the places in *lossRowsOnce of the rows it
  /// holds, in order (a loss over interval j visits only those); then all
  /// places.
  std::vector<std::vector<int32_t>> lossPlaces;
  const std::vector<int32_t> &lossPlacesIn(int64_t j);
  /// The loss rows, once.
  const std::vector<int32_t> &lossRows();
  /// The places [begin, end) of interval j's loss rows when they ascend.
  std::pair<int64_t, int64_t> lossRange(int64_t j) const {
    return j < 0 ? std::pair<int64_t, int64_t>(0, int64_t(lossRowsOnce->size()))
                 : std::pair(lossBegin[size_t(j)], lossBegin[size_t(j) + 1]);
  }
  /// fn(q, row, e) for the loss rows of interval j with a label in [0, c),
  /// in parallel (e: c floats of scratch per task).
  void forLossRows(int64_t j, const int32_t *labels, int64_t c,
                   const std::function<void(int32_t, int32_t,
                                            std::vector<float> &)> &fn);
  llvm::DenseMap<Operation *, int64_t> lossCounts; // rows with a label
};

const Tensor *ChunkedRun::external(Value v) const {
  return chunked::external(model, ctx, v);
}

const std::vector<int32_t> &ChunkedRun::lossRows() {
  if (lossRowsOnce)
    return *lossRowsOnce;
  // The caller's mask is used where it is, not copied.
  if (ctx.lossMask.empty())
    allRows = exec::lossRows(ctx.lossMask, g.numVertices);
  lossRowsOnce = ctx.lossMask.empty() ? &allRows : &ctx.lossMask;
  const std::vector<int32_t> &rows = *lossRowsOnce;
  lossBegin = chunked::lossIntervalStarts(rows, pm.bounds, g.numVertices);
  lossAscending = !lossBegin.empty();
  return rows;
}

const std::vector<int32_t> &ChunkedRun::lossPlacesIn(int64_t j) {
  if (lossPlaces.empty()) {
    const std::vector<int32_t> &rows = *lossRowsOnce;
    // [parts]: every place, for a loss over the whole graph (j < 0).
    lossPlaces.resize(size_t(parts) + 1);
    for (size_t q = 0; q < rows.size(); ++q)
      lossPlaces.back().push_back(int32_t(q));
    for (size_t q = 0; q < rows.size(); ++q) {
      int32_t v = rows[q];
      if (v < 0 || v >= g.numVertices)
        continue;
      size_t in = size_t(std::upper_bound(pm.bounds.begin(), pm.bounds.end(), v) -
                         pm.bounds.begin()) - 1;
      lossPlaces[std::min(in, size_t(parts) - 1)].push_back(int32_t(q));
    }
  }
  return lossPlaces[j < 0 ? size_t(parts) : size_t(j)];
}

void ChunkedRun::forLossRows(
    int64_t j, const int32_t *labels, int64_t c,
    const std::function<void(int32_t, int32_t, std::vector<float> &)> &fn) {
  const std::vector<int32_t> &rows = *lossRowsOnce;
  using Range = std::pair<int64_t, int64_t>;
  auto [first, last] = lossAscending ? lossRange(j) : Range(0, 0);
  const std::vector<int32_t> *places =
      lossAscending ? nullptr : &lossPlacesIn(j);
  const int64_t count = places ? int64_t(places->size()) : last - first;
  constexpr int64_t kBlock = 4096;
  const int64_t blocks = (count + kBlock - 1) / kBlock;
  ctx.pool->parallelFor(blocks, [&](int64_t b) {
    std::vector<float> e(static_cast<size_t>(c));
    const int64_t end = std::min(count, (b + 1) * kBlock);
    for (int64_t k = b * kBlock; k < end; ++k) {
      int32_t q = places ? (*places)[size_t(k)] : int32_t(first + k),
              v = rows[size_t(q)];
      if (labels[v] >= 0 && labels[v] < c)
        fn(q, v, e);
    }
  });
}

char *ChunkedRun::addr(Value v, int64_t j, Resident &r) {
  auto d = dyn_cast<DomainType>(v.getType());
  bool split = pm.splitsByInterval(v.getType());
  auto it = tensorOf.find({v.getAsOpaquePointer(), split ? j : -1});
  if (it != tensorOf.end()) {
    char *data = static_cast<char *>(r.at(it->second).data);
    if (!split)
      return data;
    // Indexed by the whole value's row (an edge's number in chunk order).
    int64_t rowBytes = elementsOf(v.getType(), g) /
                       (d.isEdgeDomain() ? g.numEdges : g.numVertices) * 4;
    return data - pm.firstRow(v.getType(), j) * rowBytes;
  }
  if (const Tensor *t = external(v))
    return static_cast<char *>(const_cast<void *>(
        static_cast<const void *>(t->f32())));
  auto p = pinned.find(v);
  if (p == pinned.end()) {
    p = pinned
            .try_emplace(v, Tensor(shapeOf(v.getType(),
                                           d && d.isEdgeDomain()
                                               ? g.numEdges
                                               : g.numVertices),
                                   dtypeOf(v.getType())))
            .first;
    // Splat constants (scalars, and those hoisted out of bodies).
    if (auto c = v.getDefiningOp<arith::ConstantOp>())
      if (auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
          dense && dense.isSplat() && isa<FloatType>(dense.getElementType()))
        std::fill(p->second.f32(), p->second.f32() + p->second.numElements(),
                  float(dense.getSplatValue<APFloat>().convertToDouble()));
  }
  return static_cast<char *>(p->second.data());
}

std::vector<int64_t> ChunkedRun::window(const std::vector<int64_t> &blocks,
                                        int64_t j) const {
  std::vector<int64_t> w{lo(j)};
  for (int64_t b : blocks)
    if (b > lo(j) && b < hi(j))
      w.push_back(b);
  w.push_back(hi(j));
  return w;
}

llvm::Expected<int64_t> ChunkedRun::readInput(int t, void *to, int64_t bytes,
                                              const RowSelection *rows) {
  return chunked::readInput(model, ctx, pm, t, to, bytes, rows);
}

llvm::Error ChunkedRun::launch(LaunchOp op, int64_t i, int64_t j, Resident &r) {
  auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      op, op.getCalleeAttr());
  if (!ctx.kernels->has(op.getCallee()) || !fn)
    return errorAt(op, "kernel '" + op.getCallee().str() + "' was not compiled");
  bool reversed = fn->hasAttr("saga.reversed");
  bool overEdges = op.getPropagate() || op.getEdgeMap();
  // Propagations and edge maps run per 2-D chunk (i, j): the edges from
  // interval i into interval j.
  bool chunked = overEdges && parts > 1;
  // The buffers after the CSR: whole-graph offsets, the phase (its place),
  // the state, operands, results.
  std::vector<FlatMemRef> buffers;
  size_t phaseAt = size_t(-1);
  if (op.getPropagate()) {
    const auto &offsets = reversed ? g.outOffsets : g.inOffsets;
    buffers.push_back(flat(const_cast<int64_t *>(offsets.data()), offsets.size()));
    phaseAt = buffers.size();
    if (chunked) {
      int64_t width = fn->getAttrOfType<IntegerAttr>("saga.state_width").getInt();
      char *state = static_cast<char *>(r.at(states.at({op, j})).data) -
                    lo(j) * width * 4;
      buffers.push_back(flat(state, g.numVertices * width));
    } else {
      buffers.push_back(flat(nullptr, 0));
    }
  }
  auto groups = fn->getAttrOfType<DenseI64ArrayAttr>("saga.operand_groups");
  // An empty chunk's other-end rows are not resident (the plan loads none).
  const bool empty = chunked && pm.chunkEmpty(i, j, reversed);
  for (auto [k, v] : llvm::enumerate(op.getOperands())) {
    bool other = chunked && chunked::atOtherEnd(pm, groups, reversed, k, v);
    buffers.push_back(flat(other && empty ? nullptr : addr(v, other ? i : j, r),
                           elementsOf(v.getType(), g)));
  }
  // A propagation writes its results at its last call only (before, their
  // rows are not resident: the kernel only reads their size).
  const bool writesEver = !chunked || !op.getPropagate() || i + 1 == parts;
  const bool edgeKeys = overEdges && fn->hasAttr("saga.edge_keys");
  const size_t resultsAt = buffers.size();
  for (Value res : op.getResults())
    buffers.push_back(flat(writesEver ? addr(res, j, r) : nullptr,
                           elementsOf(res.getType(), g)));
  std::vector<int64_t> tasks =
      window(!overEdges ? mapBlocks : reversed ? outBlocks : inBlocks, j);
  // One kernel call over the rows of interval j, with `csr` in front.
  FirstError failures; // a device's launch error, from any task
  // `shift`: the buffers in front of `buffers` (a chunk's CSR).
  auto run = [&](std::vector<FlatMemRef> all, int64_t phase, size_t shift) {
    std::vector<KernelArg> args;
    for (size_t b = 0; b < all.size(); ++b) {
      if (phaseAt != size_t(-1) && b == phaseAt + shift)
        args.push_back(KernelArg::i64(phase));
      args.push_back(KernelArg::buffer(all[b].aligned, all[b].size));
    }
    ctx.pool->parallelFor(int64_t(tasks.size()) - 1, [&](int64_t task) {
      int64_t begin = tasks[size_t(task)], end = tasks[size_t(task) + 1];
      if (llvm::Error e = ctx.kernels->launch(
              op.getCallee(), begin, end, static_cast<int64_t>(ctx.seed), args))
        failures.note(std::move(e));
    });
  };
  auto launchFailure = [&]() -> llvm::Error {
    if (llvm::Error e = failures.take())
      return errorAt(op, "on the " + ctx.kernels->name() + ": " +
                             llvm::toString(std::move(e)));
    return llvm::Error::success();
  };
  if (!overEdges) {
    run(buffers, kPhaseWhole, 0);
    return launchFailure();
  }
  // The chunk, in one or more parts (a file's skewed chunk in bounded
  // pieces): a propagation resumes its rows after the first part of its
  // first chunk and finishes them at the last part of its last one, the
  // only call that writes its results.
  llvm::Error e = chunked::forEachKernelPart(
      ctx, pm.bounds, reversed,
      {op.getPropagate(), chunked, empty, i, j, parts, lo(j), hi(j), &pm},
      [&](const ChunkView &view, int64_t phase, bool writes) -> llvm::Error {
        std::vector<FlatMemRef> all{
            flat(const_cast<int64_t *>(view.offsets), int64_t(g.numVertices) + 1),
            flat(const_cast<int32_t *>(view.others), view.numEdges),
            flat(const_cast<int32_t *>(view.edgeIds), view.numEdges)};
        all.insert(all.end(), buffers.begin(), buffers.end());
        if (!writes)
          for (size_t b = resultsAt; b < buffers.size(); ++b)
            all[3 + b].allocated = all[3 + b].aligned = nullptr;
        if (edgeKeys) // dropout over edges: masks keyed by the graph's ids
          all.push_back(flat(const_cast<int32_t *>(view.edgeKeys()), view.numEdges));
        run(std::move(all), phase, 3);
        return failures.failed() ? llvm::createStringError("a launch failed")
                                 : llvm::Error::success();
      });
  if (failures.failed()) {
    llvm::consumeError(std::move(e));
    return launchFailure();
  }
  if (e)
    return errorAt(op, llvm::toString(std::move(e)));
  return llvm::Error::success();
}

llvm::Error ChunkedRun::read(Value v, int64_t j, Resident &r, int64_t offset,
                             int64_t bytes, void *to) {
  std::memcpy(to, addr(v, j, r) + offset, size_t(bytes));
  return llvm::Error::success();
}

llvm::Error ChunkedRun::gemm(Value xv, Value wv, Value yv, bool transpose,
                             int64_t j, Resident &r) {
  const float *x = reinterpret_cast<const float *>(addr(xv, j, r));
  const float *w = reinterpret_cast<const float *>(addr(wv, j, r));
  float *y = reinterpret_cast<float *>(addr(yv, j, r));
  int64_t k = elementsOf(xv.getType(), g) / g.numVertices,
          n = elementsOf(yv.getType(), g) / g.numVertices;
  std::vector<int64_t> tasks = window(mapBlocks, j);
  ctx.pool->parallelFor(int64_t(tasks.size()) - 1, [&](int64_t t) {
    int64_t begin = tasks[size_t(t)], rows = tasks[size_t(t) + 1] - begin;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, transpose ? CblasTrans : CblasNoTrans,
                int(rows), int(n), int(k), 1.0f, x + begin * k, int(k), w,
                int(transpose ? k : n), 0.0f, y + begin * n, int(n));
  });
  return llvm::Error::success();
}

llvm::Error ChunkedRun::degrees(Value result, int64_t j, Resident &r) {
  float *d = reinterpret_cast<float *>(addr(result, j, r));
  for (int64_t v = lo(j); v < hi(j); ++v)
    d[v] = float(g.inDegree(int32_t(v)));
  return llvm::Error::success();
}

llvm::Error ChunkedRun::vertexIds(Value result, int64_t j, Resident &r) {
  int32_t *d = reinterpret_cast<int32_t *>(addr(result, j, r));
  for (int64_t v = lo(j); v < hi(j); ++v)
    d[v] = int32_t(v);
  return llvm::Error::success();
}

llvm::Error ChunkedRun::sumRows(SumRowsOp sum, int64_t j, bool, bool last,
                                Resident &r) {
  // Per 256-row block in double, blocks added in order at the end: the
  // in-memory executor's sum bit for bit.
  int64_t w = elementsOf(sum.getInput().getType(), g) / g.numVertices;
  auto &partial = blockSums[sum];
  if (partial.empty())
    partial.assign((mapBlocks.size() - 1) * size_t(w), 0.0);
  const float *x = reinterpret_cast<const float *>(addr(sum.getInput(), j, r));
  std::vector<int64_t> tasks = window(mapBlocks, j);
  ctx.pool->parallelFor(int64_t(tasks.size()) - 1, [&](int64_t t) {
    int64_t b = tasks[size_t(t)], e = tasks[size_t(t) + 1];
    addToBlockSums(x + b * w, b, e, w, partial.data());
  });
  if (last)
    finishBlockSums(partial, int64_t(mapBlocks.size()) - 1, w,
                    reinterpret_cast<float *>(addr(sum.getResult(), j, r)));
  return llvm::Error::success();
}

llvm::Error ChunkedRun::weightGradient(LinearGradWeightOp lw, int64_t j, bool,
                                       bool last, Resident &r) {
  // The in-memory executor's slices; each lies inside one interval.
  const float *x = reinterpret_cast<const float *>(addr(lw.getInput(), j, r));
  const float *dy =
      reinterpret_cast<const float *>(addr(lw.getGradOutput(), j, r));
  int64_t kk = elementsOf(lw.getInput().getType(), g) / g.numVertices,
          n = elementsOf(lw.getGradOutput().getType(), g) / g.numVertices,
          blocks = int64_t(mapBlocks.size()) - 1;
  int64_t count = std::min(blocks, kWeightGradSlices);
  auto &partial = slices[lw];
  if (partial.empty())
    partial.assign(size_t(count * kk * n), 0.0f);
  ctx.pool->parallelFor(count, [&](int64_t t) {
    int64_t begin = mapBlocks[size_t(t * blocks / count)],
            end = mapBlocks[size_t((t + 1) * blocks / count)];
    if (begin < lo(j) || end > hi(j))
      return;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(kk), int(n),
                int(end - begin), 1.0f, x + begin * kk, int(kk),
                dy + begin * n, int(n), 0.0f, partial.data() + t * kk * n,
                int(n));
  });
  if (last) {
    sumSlices(partial.data(), count, kk * n,
              reinterpret_cast<float *>(addr(lw.getResult(), j, r)));
  }
  return llvm::Error::success();
}

// A loss or its gradient: the logits and labels seen from interval j, the
// classes, the loss rows.
ChunkedRun::Loss ChunkedRun::loss(Value logits, Value labels, int64_t j,
                                  Resident &r) {
  return Loss{reinterpret_cast<const float *>(addr(logits, j, r)),
              reinterpret_cast<const int32_t *>(addr(labels, j, r)),
              elementsOf(logits.getType(), g) / g.numVertices, lossRows()};
}

llvm::Error ChunkedRun::crossEntropy(CrossEntropyOp ce, int64_t j, bool,
                                     bool last, Resident &r) {
  // Each loss row's term, then per 8192-entry chunk in order, chunks in
  // order: the in-memory executor's sum.
  auto [logits, labels, c, rows] = loss(ce.getLogits(), ce.getLabels(), j, r);
  constexpr size_t kChunk = 8192;
  LossSum &s = lossSums[ce];
  // This interval's terms (ascending rows: its places, first at 0).
  using Range = std::pair<int64_t, int64_t>;
  auto [first, end] =
      lossAscending ? lossRange(j) : Range(0, int64_t(rows.size()));
  std::vector<double> local;
  std::vector<char> localCounted;
  std::vector<double> &terms = lossAscending ? local : s.terms;
  std::vector<char> &counted = lossAscending ? localCounted : s.counted;
  terms.resize(size_t(end - first), 0.0);
  counted.resize(size_t(end - first), 0);
  forLossRows(j, labels, c, [&](int32_t q, int32_t v, std::vector<float> &e) {
    terms[size_t(q - first)] =
        crossEntropyTerm(logits + int64_t(v) * c, c, labels[v], e);
    counted[size_t(q - first)] = 1;
  });
  // Terms into their chunks' running sums in the loss rows' order:
  // ascending rows interval by interval, others all at the last.
  if (lossAscending || last) {
    s.chunks.resize((rows.size() + kChunk - 1) / kChunk, 0.0);
    for (int64_t q = first; q < end; ++q)
      if (counted[size_t(q - first)]) {
        s.chunks[size_t(q) / kChunk] += terms[size_t(q - first)];
        ++s.n;
      }
  }
  if (last) {
    double sum = 0;
    for (double chunk : s.chunks)
      sum += chunk;
    reinterpret_cast<float *>(addr(ce.getResult(), j, r))[0] =
        float(s.n ? sum / double(s.n) : 0.0);
  }
  return llvm::Error::success();
}

llvm::Error ChunkedRun::crossEntropyGrad(CrossEntropyGradOp ce, int64_t j,
                                         bool, Resident &r) {
  auto [logits, labels, c, rows] = loss(ce.getLogits(), ce.getLabels(), j, r);
  float gr = reinterpret_cast<const float *>(addr(ce.getGrad(), j, r))[0];
  float *d = reinterpret_cast<float *>(addr(ce.getResult(), j, r));
  std::fill(d + lo(j) * c, d + hi(j) * c, 0.0f);
  // The count is over every loss row: labels are a graph input, whole in
  // the caller's memory.
  const Tensor *all = external(ce.getLabels());
  if (!all)
    return errorAt(ce, "labels must be a graph input in a chunked run");
  auto [known, added] = lossCounts.try_emplace(ce, 0);
  if (added)
    for (int32_t v : rows)
      known->second += all->i32()[v] >= 0 && all->i32()[v] < c;
  const int64_t count = known->second;
  if (!count)
    return llvm::Error::success();
  const double scale = double(gr) / double(count);
  forLossRows(j, labels, c, [&](int32_t, int32_t v, std::vector<float> &e) {
    addCrossEntropyGrad(logits + int64_t(v) * c, c, labels[v], scale,
                        d + int64_t(v) * c, e);
  });
  return llvm::Error::success();
}

// Model-level scalars and parameter-sized arithmetic (whole values).
llvm::Error ChunkedRun::l2(Operation *op, int64_t n, int64_t j, Resident &r) {
  const float *x = reinterpret_cast<const float *>(addr(op->getOperand(0), j, r));
  double s = 0;
  for (int64_t e = 0; e < n; ++e)
    s += double(x[e]) * x[e];
  reinterpret_cast<float *>(addr(op->getResult(0), j, r))[0] = float(s / 2);
  return llvm::Error::success();
}

llvm::Error ChunkedRun::neg(Operation *op, int64_t n, int64_t j, Resident &r) {
  const float *x = reinterpret_cast<const float *>(addr(op->getOperand(0), j, r));
  float *z = reinterpret_cast<float *>(addr(op->getResult(0), j, r));
  for (int64_t e = 0; e < n; ++e)
    z[e] = -x[e];
  return llvm::Error::success();
}

llvm::Error ChunkedRun::binary(Operation *op, int64_t na, int64_t nb, int64_t n,
                               int64_t j, Resident &r) {
  auto f32 = [&](Value v) { return reinterpret_cast<float *>(addr(v, j, r)); };
  binaryElementwise(op, f32(op->getOperand(0)), na, f32(op->getOperand(1)), nb,
                    f32(op->getResult(0)), n);
  return llvm::Error::success();
}

} // namespace

ChunkedPlanCache::ChunkedPlanCache() = default;
ChunkedPlanCache::~ChunkedPlanCache() = default;

namespace {
/// Whether a plan step's kernel runs over out-edges (its rows are sources,
/// a chunk's other ends targets).
bool overOutEdges(const PlanStep &step) {
  auto launch = dyn_cast_or_null<LaunchOp>(step.op);
  if (!launch)
    return false;
  auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      launch, launch.getCalleeAttr());
  return fn && fn->hasAttr("saga.reversed");
}

/// Whether every partial load of a plan read back from a schedule loads
/// as many rows as the graph's chunk reads.
bool partialLoadsMatch(const ChunkPlan &cp, const GraphSize &size) {
  const PlanMemory &pm = cp.memory;
  std::vector<int64_t> counts[2];
  for (const Transfer &t : cp.plan.transfers) {
    if (t.kind != Transfer::LoadRows)
      continue;
    const PlanStep &step = pm.steps[size_t(t.op)];
    bool reversed = overOutEdges(step);
    if (!size.rowCounts)
      return false;
    if (counts[reversed].empty())
      counts[reversed] = size.rowCounts(reversed, pm.bounds);
    const int64_t parts = cp.intervals();
    if (counts[reversed].size() != size_t(parts * parts) ||
        counts[reversed][size_t(step.i * parts + step.j)] * pm.rowBytes(t.tensor) !=
            transferBytes(pm.problem, t))
      return false;
  }
  return true;
}
} // namespace

void chunked::noteRowLoads(const PlanMemory &pm, const MemoryPlan &plan,
                           ChunkedStats *stats) {
  for (const Transfer &t : plan.transfers)
    if (t.kind == Transfer::LoadRows) {
      ++stats->rowLoads;
      stats->rowLoadBytes += transferBytes(pm.problem, t);
      stats->rowLoadWholeBytes += pm.problem.tensors[size_t(t.tensor)].bytes;
    }
}

RowsFn chunked::chunkRows(const ExecutionContext &ctx, const PlanMemory &pm) {
  return [&ctx, &pm](int op, int t) -> llvm::Expected<RowSelection> {
    const PlanStep &step = pm.steps[size_t(op)];
    ChunkSource *source = chunkSourceOf(ctx);
    std::shared_ptr<const std::vector<int32_t>> rows;
    if (source) {
      auto read =
          source->chunkRows(overOutEdges(step), pm.bounds, step.i, step.j);
      if (!read)
        return read.takeError();
      rows = std::move(*read);
    }
    const int64_t rowBytes = pm.rowBytes(t);
    const int64_t want = pm.problem.ops[size_t(op)].partialBytes(t) / rowBytes;
    if (!rows || int64_t(rows->size()) != want)
      return llvm::createStringError(
          "the schedule loads " + std::to_string(want) + " rows of " +
          pm.problem.tensors[size_t(t)].name + " for step " +
          std::to_string(op) + " (chunk [" + std::to_string(step.i) + ", " +
          std::to_string(step.j) + "]); the graph's chunk reads " +
          (rows ? std::to_string(rows->size()) : std::string("rows not known")) +
          ": the schedule was made for another graph");
    return RowSelection{std::move(rows), rowBytes};
  };
}

llvm::Expected<ChunkedPlanCache::Entry *>
chunked::plan(ModelOp model, const Graph &g, ChunkSource *source,
              const ChunkedOptions &options, ChunkedPlanCache &local,
              const llvm::StringMap<Tensor> *inputs) {
  ChunkedPlanCache &cache = options.cache ? *options.cache : local;
  // Selective loading needs the rows each chunk reads, and a next tier
  // that reads rows alone (host RAM: a spill slot is checked whole).
  const bool selective = source && options.scratch.empty() && options.selective;
  auto key = std::make_tuple(model.getOperation(), static_cast<const void *>(&g),
                             options.budget, options.intervals, options.group,
                             selective, options.interleave);
  std::unique_ptr<ChunkedPlanCache::Entry> &entry = cache.entries[key];
  if (entry)
    return entry.get();
  GraphSize size = sizeOf(g);
  if (source)
    size.occupancy = [source](const std::vector<int32_t> &bounds) {
      return source->occupancy(bounds);
    };
  // A schedule made for a graph whose empty chunks differ is not this one's.
  auto sameEmptyChunks = [&](ScheduleOp s) {
    std::vector<int32_t> empty;
    if (size.occupancy) {
      std::vector<uint8_t> occupied = size.occupancy(
          std::vector<int32_t>(s.getIntervals().begin(), s.getIntervals().end()));
      for (size_t c = 0; c < occupied.size(); ++c)
        if (!occupied[c])
          empty.push_back(int32_t(c));
    }
    auto listed = s.getEmptyChunks();
    return listed ? ArrayRef<int32_t>(*listed) == ArrayRef<int32_t>(empty)
                  : empty.empty();
  };
  if (selective)
    size.rowCounts = [source](bool reversed,
                              const std::vector<int32_t> &bounds) {
      return source->chunkRowCounts(reversed, bounds);
    };
  auto boundsOf = [](ScheduleOp s) {
    return std::vector<int32_t>(s.getIntervals().begin(),
                                s.getIntervals().end());
  };
  // Edge values split by interval need each chunk's edge count and, for an
  // edge input (the caller's rows in edge id order), the graph's edges in
  // memory to place its rows in chunk order.
  const bool edgeInputs = llvm::any_of(
      model.getBody().front().getArguments(), [&](BlockArgument arg) {
        auto d = dyn_cast<DomainType>(arg.getType());
        return d && d.isEdgeDomain() &&
               !(inputs && !inputs->count(argName(model, arg)));
      });
  if (source && (!edgeInputs || int64_t(g.inSources.size()) == g.numEdges))
    size.chunkEdges = [source](const std::vector<int32_t> &bounds) {
      return source->chunkEdgeCounts(bounds);
    };
  // A schedule that splits edge values with other counts (or does not
  // where it could) is not this graph's.
  auto sameEdges = [&, splittable = edgeValuesSplittable(model)](ScheduleOp s) {
    std::vector<int64_t> want;
    if (size.chunkEdges && splittable && s.getIntervals().size() > 2)
      want = size.chunkEdges(boundsOf(s));
    auto have = s.getChunkEdges();
    return have ? ArrayRef<int64_t>(*have) == ArrayRef<int64_t>(want)
                : want.empty();
  };
  // A schedule made with (or without) the chunks' row counts is reused
  // only where they are (or are not) known, and the same.
  auto sameRows = [&](ScheduleOp s) {
    bool known = size.rowCounts &&
                 (!size.rowCounts(false, boundsOf(s)).empty() ||
                  !size.rowCounts(true, boundsOf(s)).empty());
    return s.getSelective() == known;
  };
  ScheduleOp schedule = findSchedule(model);
  if (!schedule || int64_t(schedule.getBudget()) != options.budget ||
      int64_t(schedule.getVertices()) != g.numVertices ||
      int64_t(schedule.getEdges()) != g.numEdges ||
      (options.intervals > 0 &&
       int64_t(schedule.getIntervals().size()) - 1 != options.intervals) ||
      (options.group > 0 && int64_t(schedule.getGroup()) != options.group) ||
      !sameEmptyChunks(schedule) || !sameRows(schedule) ||
      !sameEdges(schedule) ||
      schedule.getOpMajor() == options.interleave) {
    auto made = planChunked(model, size, options.budget, options.intervals,
                            options.group, options.interleave);
    if (!made)
      return made.takeError();
    schedule = writeSchedule(model, *made);
  }
  auto read = readSchedule(schedule);
  if (!read)
    return read.takeError();
  if (!partialLoadsMatch(*read, size)) { // made for another graph
    auto made = planChunked(model, size, options.budget, options.intervals,
                            options.group, options.interleave);
    if (!made)
      return made.takeError();
    schedule = writeSchedule(model, *made);
    read = readSchedule(schedule);
    if (!read)
      return read.takeError();
  }
  entry = std::make_unique<ChunkedPlanCache::Entry>();
  entry->chunk = std::move(*read);
  return entry.get();
}

llvm::Expected<NextTier *> chunked::nextTier(ChunkedPlanCache::Entry &entry,
                                            const ChunkedOptions &options,
                                            std::unique_ptr<NextTier> &spill) {
  if (options.scratch.empty()) {
    if (!entry.ramTier)
      entry.ramTier = NextTier::inMemory();
    return entry.ramTier.get();
  }
  auto t = NextTier::inFolder(options.scratch, options.direct);
  if (!t)
    return t.takeError();
  spill = std::move(*t);
  return spill.get();
}

std::unique_ptr<ChunkReadAhead>
chunked::readAhead(ModelOp model, ExecutionContext &ctx, const PlanMemory &pm,
                   const ChunkedOptions &options) {
  ChunkSource *source = chunkSourceOf(ctx);
  if (!options.readAhead || !source || !source->fromStorage())
    return nullptr;
  // The launches over edges ask for one chunk each, in step order (a
  // propagation's middle empty chunks too: their callback skips them).
  const int64_t parts = int64_t(pm.bounds.size()) - 1;
  std::vector<ChunkRequest> requests;
  for (const PlanStep &step : pm.steps) {
    auto launch = dyn_cast<LaunchOp>(step.op);
    if (!launch || !(launch.getPropagate() || launch.getEdgeMap()))
      continue;
    auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        launch, launch.getCalleeAttr());
    bool reversed = fn && fn->hasAttr("saga.reversed");
    bool split = parts > 1;
    requests.push_back(
        {reversed, split ? step.i : 0, split ? step.j : 0});
  }
  auto ahead = std::make_unique<ChunkReadAhead>(*source, pm.bounds,
                                                std::move(requests));
  ctx.chunkSource = ahead.get();
  return ahead;
}

void chunked::noteReadAhead(const ChunkReadAhead *ahead, ChunkedStats *stats) {
  if (!ahead || !stats)
    return;
  ChunkReadAhead::Counters c = ahead->counters();
  stats->chunkParts = c.parts;
  stats->chunkDirectReads = c.directReads;
  stats->chunkReadSeconds = c.busySeconds;
  stats->chunkStallSeconds = c.stallSeconds;
}

bool chunked::atOtherEnd(const PlanMemory &pm, DenseI64ArrayAttr groups,
                         bool reversed, size_t k, Value v) {
  if (auto d = dyn_cast<DomainType>(v.getType());
      d && d.isEdgeDomain() && pm.edgesSplit())
    return reversed; // piece i: the edges into the other end's interval
  if (!groups)
    return false;
  int64_t srcs = groups[0], dsts = groups[1];
  return reversed ? int64_t(k) >= srcs && int64_t(k) < srcs + dsts
                  : int64_t(k) < srcs;
}

llvm::Error chunked::forEachKernelPart(
    const ExecutionContext &ctx, const std::vector<int32_t> &bounds,
    bool reversed, const ChunkCall &c,
    const std::function<llvm::Error(const ChunkView &, int64_t, bool)> &fn) {
  int64_t part = 0;
  // Split edge values: the kernels read each edge's number in chunk order
  // as its id. Chunk (i, j) holds the in-chunk's edges: (i, j), or
  // reversed (j, i).
  const PlanMemory *pm =
      c.split && c.numbering && c.numbering->edgesSplit() ? c.numbering : nullptr;
  const size_t inChunk = size_t(reversed ? c.j * c.parts + c.i : c.i * c.parts + c.j);
  int64_t done = 0; // the chunk's edges in earlier parts
  llvm::Error e = chunkSourceOf(ctx)->forEachPart(
      reversed, bounds, c.split ? c.i : 0, c.split ? c.j : 0,
      [&](const ChunkView &view, bool lastPart) -> llvm::Error {
        if (c.propagate && !c.split && !(part == 0 && lastPart))
          return llvm::createStringError(
              "a propagation over one interval needs its chunk in one part");
        if (c.empty && view.offsets[c.hi] != view.offsets[c.lo])
          return llvm::createStringError(
              "chunk [" + std::to_string(c.i) + ", " + std::to_string(c.j) +
              "] holds edges but the schedule lists it as empty");
        int64_t phase = kPhaseWhole;
        bool writes = true;
        if (c.propagate && c.split) {
          writes = c.i + 1 == c.parts && lastPart;
          phase = (c.i > 0 || part > 0 ? kPhaseResume : 0) |
                  (writes ? kPhaseFinish : 0);
        }
        ++part;
        if (c.empty && c.propagate && c.i > 0 && c.i + 1 < c.parts)
          return llvm::Error::success();
        if (!pm)
          return fn(view, phase, writes);
        const int64_t n = view.offsets[c.hi] - view.offsets[c.lo];
        if (done + n > pm->chunkEdges[inChunk])
          return llvm::createStringError(
              "chunk [" + std::to_string(c.i) + ", " + std::to_string(c.j) +
              "] holds more edges than the schedule's " +
              std::to_string(pm->chunkEdges[inChunk]));
        // Numbers for rows [lo, hi)'s positions only (a view of a graph in
        // memory holds the whole source interval, every row), addressed by
        // position like the view's arrays; the kernels' prefetches read up
        // to kEdgePrefetchDistance positions further, numbered 0 (a valid
        // number: they only prefetch).
        const int64_t begin = view.offsets[c.lo];
        const int64_t stop =
            std::min(view.numEdges, begin + n + kEdgePrefetchDistance);
        auto numbers = std::shared_ptr<int32_t[]>(
            new int32_t[size_t(std::max<int64_t>(stop - begin, 1))]);
        std::fill(numbers.get() + n, numbers.get() + (stop - begin), 0);
        // Position p is numbers[p - begin] (an address computed as an
        // integer: the kernels read positions [begin, stop) only).
        int32_t *byPosition = reinterpret_cast<int32_t *>(
            reinterpret_cast<uintptr_t>(numbers.get()) -
            uintptr_t(begin) * sizeof(int32_t));
        numberInChunkOrder(view, reversed, c.lo, c.hi, bounds[size_t(c.i)],
                           bounds[size_t(c.i) + 1],
                           pm->chunkBase[inChunk] + done, byPosition);
        done += n;
        ChunkView numbered = view;
        numbered.edgeIds = byPosition;
        numbered.keys = view.edgeKeys();
        numbered.hold = std::make_shared<
            std::pair<std::shared_ptr<const void>, std::shared_ptr<int32_t[]>>>(
            view.hold, numbers);
        return fn(numbered, phase, writes);
      });
  if (e)
    return e;
  if (pm && done != pm->chunkEdges[inChunk])
    return llvm::createStringError(
        "chunk [" + std::to_string(c.i) + ", " + std::to_string(c.j) +
        "] holds " + std::to_string(done) + " edges, the schedule's " +
        std::to_string(pm->chunkEdges[inChunk]));
  return llvm::Error::success();
}

std::vector<int64_t>
chunked::lossIntervalStarts(const std::vector<int32_t> &rows,
                            const std::vector<int32_t> &bounds,
                            int64_t numVertices) {
  std::vector<int64_t> starts;
  if (rows.empty()) {
    starts.assign(bounds.begin(), bounds.end());
    return starts;
  }
  if (!std::is_sorted(rows.begin(), rows.end()) || rows.front() < 0 ||
      rows.back() >= numVertices)
    return starts;
  for (size_t j = 0; j < bounds.size(); ++j)
    starts.push_back(std::lower_bound(rows.begin(), rows.end(), bounds[j]) -
                     rows.begin());
  return starts;
}

bool chunked::finishesRows(const PlanMemory &pm, int k, int64_t parts) {
  const PlanStep &step = pm.steps[size_t(k)];
  // (Only launches run by chunk; a propagation's rows are final at its
  // last one.)
  return !(step.i >= 0 && step.i + 1 != parts &&
           cast<LaunchOp>(step.op).getPropagate());
}

void chunked::keepRows(llvm::DenseMap<Value, Tensor> &outputs, Value res,
                       int64_t numVertices, int64_t width, int64_t first,
                       int64_t count, const void *rows, bool argmax) {
  if (argmax) {
    auto [it, fresh] = outputs.try_emplace(
        res, Tensor::uninitialized({numVertices}, DType::I32));
    const float *x = static_cast<const float *>(rows);
    for (int64_t v = 0; v < count; ++v)
      it->second.i32()[first + v] = int32_t(
          std::max_element(x + v * width, x + (v + 1) * width) - (x + v * width));
    return;
  }
  auto [it, fresh] = outputs.try_emplace(
      res, Tensor::uninitialized(shapeOf(res.getType(), numVertices),
                                 dtypeOf(res.getType())));
  std::memcpy(static_cast<char *>(it->second.data()) + first * width * 4, rows,
              size_t(count * width * 4));
}

std::string chunked::argName(ModelOp model, BlockArgument arg) {
  auto name =
      model.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "saga.name");
  return name ? name.str() : "#" + std::to_string(arg.getArgNumber());
}

const Tensor *chunked::external(ModelOp model, const ExecutionContext &ctx,
                                Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto it = ctx.inputs->find(argName(model, arg));
    return it == ctx.inputs->end() ? nullptr : &it->second;
  }
  if (auto param = v.getDefiningOp<ParamOp>()) {
    auto it = ctx.params->find(param.getName());
    return it == ctx.params->end() ? nullptr : &it->second;
  }
  return nullptr;
}

namespace {
/// Piece j of a split edge input (PlanMemory::chunkEdges): the caller's
/// rows (in edge id order) of the edges into interval j, in chunk order.
llvm::Expected<int64_t> readEdgePiece(const PlanMemory &pm, const Graph &g,
                                      const Tensor &ext, Value v,
                                      const std::string &name, int64_t j,
                                      void *to, int64_t bytes,
                                      const RowSelection *rows) {
  if (ext.numElements() != elementsOf(v.getType(), g))
    return llvm::createStringError(
        "input " + name + " has shape " + ext.describe() + ", the model needs " +
        Tensor::describe(shapeOf(v.getType(), g.numEdges), dtypeOf(v.getType())));
  const int64_t parts = int64_t(pm.bounds.size()) - 1;
  const int64_t edges = pm.edgeFirst[size_t(j) + 1] - pm.edgeFirst[size_t(j)];
  if (edges == 0 && bytes == 0) // no edges into the interval
    return 0;
  if (rows || int64_t(g.inSources.size()) != g.numEdges || edges <= 0 ||
      bytes % edges != 0)
    return llvm::createStringError(
        "input " + name + ": its piece " + std::to_string(j) + " (" +
        std::to_string(edges) + " edges, " + std::to_string(bytes) +
        " bytes) cannot be placed in chunk order (" +
        (rows ? "a partial load"
         : int64_t(g.inSources.size()) != g.numEdges
             ? "the graph's edges are not in memory"
             : "its size is not the edges'") +
        ")");
  const int64_t rowBytes = bytes / edges;
  // Per source interval: where its chunk's next edge goes in the piece.
  std::vector<int64_t> at(static_cast<size_t>(parts));
  for (int64_t i = 0; i < parts; ++i)
    at[size_t(i)] = pm.chunkBase[size_t(i * parts + j)] - pm.edgeFirst[size_t(j)];
  const char *from = reinterpret_cast<const char *>(ext.f32());
  char *into = static_cast<char *>(to);
  for (int32_t u = pm.bounds[size_t(j)]; u < pm.bounds[size_t(j) + 1]; ++u) {
    int64_t i = 0; // each row's sources ascend
    for (int64_t e = g.inOffsets[size_t(u)]; e < g.inOffsets[size_t(u) + 1];
         ++e) {
      while (g.inSources[size_t(e)] >= pm.bounds[size_t(i) + 1])
        ++i;
      std::memcpy(into + at[size_t(i)]++ * rowBytes,
                  from + int64_t(g.inEdgeIds[size_t(e)]) * rowBytes,
                  size_t(rowBytes));
    }
  }
  return bytes;
}
} // namespace

llvm::Expected<int64_t> chunked::readInput(ModelOp model,
                                           const ExecutionContext &ctx,
                                           const PlanMemory &pm, int t,
                                           void *to, int64_t bytes,
                                           const RowSelection *rows) {
  const Graph &g = *ctx.graph;
  auto lo = [&](int64_t j) { return j < 0 ? int64_t(0) : int64_t(pm.bounds[size_t(j)]); };
  auto hi = [&](int64_t j) {
    return j < 0 ? int64_t(g.numVertices) : int64_t(pm.bounds[size_t(j) + 1]);
  };
  const PlanPiece &p = pm.pieces[size_t(t)];
  const std::string &name = pm.problem.tensors[size_t(t)].name;
  Value v = Value::getFromOpaquePointer(p.value);
  const int64_t first = p.piece >= 0 ? lo(p.piece) : 0;
  const int64_t count = p.piece >= 0 ? hi(p.piece) - lo(p.piece) : 0;
  auto d = dyn_cast<DomainType>(v.getType());
  if (const Tensor *ext = external(model, ctx, v)) {
    if (d && d.isEdgeDomain() && p.piece >= 0)
      return readEdgePiece(pm, g, *ext, v, name, p.piece, to, bytes, rows);
    if (ext->numElements() != elementsOf(v.getType(), g))
      return llvm::createStringError(
          "input " + name + " has shape " + ext->describe() +
          ", the model needs " +
          Tensor::describe(shapeOf(v.getType(), g.numVertices),
                           dtypeOf(v.getType())));
    int64_t rowBytes = count ? bytes / count : 0;
    const char *from =
        reinterpret_cast<const char *>(ext->f32()) + first * rowBytes;
    if (rows) {
      copyRows(to, from, *rows);
      return rows->bytes();
    }
    std::memcpy(to, from, size_t(bytes));
    return bytes;
  }
  if (auto arg = dyn_cast<BlockArgument>(v); arg && ctx.rowReaders) {
    auto it = ctx.rowReaders->find(argName(model, arg));
    if (it != ctx.rowReaders->end()) {
      std::vector<float> whole;
      float *into = static_cast<float *>(to);
      if (rows) {
        whole.resize(size_t(bytes / 4));
        into = whole.data();
      }
      if (llvm::Error e = it->second(
              first, p.piece >= 0 ? hi(p.piece) : g.numVertices, into))
        return std::move(e);
      if (rows)
        copyRows(to, whole.data(), *rows);
      return bytes;
    }
  }
  if (auto arg = dyn_cast<BlockArgument>(v); arg && ctx.inputDefaults) {
    auto it = ctx.inputDefaults->find(argName(model, arg));
    if (it != ctx.inputDefaults->end()) {
      std::fill_n(static_cast<float *>(to), bytes / 4, it->second);
      return rows ? rows->bytes() : bytes;
    }
  }
  if (auto c = v.getDefiningOp<arith::ConstantOp>()) {
    auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
    if (!dense || !dense.isSplat())
      return errorAt(c, "only splat float constants are supported");
    std::fill_n(static_cast<float *>(to), bytes / 4,
                float(dense.getSplatValue<APFloat>().convertToDouble()));
    return bytes;
  }
  return llvm::createStringError("input " + name + " is not set");
}

llvm::Expected<std::string> saga::describeChunked(ModelOp model,
                                                 const Graph &g,
                                                 ChunkSource *source,
                                                 const ChunkedOptions &options) {
  ChunkedPlanCache local;
  auto found = chunked::plan(model, g, source, options, local);
  if (!found)
    return found.takeError();
  const ChunkPlan &cp = (*found)->chunk;
  std::string out;
  llvm::raw_string_ostream os(out);
  auto mib = [](int64_t b) { return double(b) / (1 << 20); };
  os << llvm::format("chunked schedule: %lld row intervals, budget %lld bytes "
                     "(%.1f MiB planned, %.1f MiB for loads ahead, %.1f MiB "
                     "pinned), plan %s moves %.1f MiB\n",
                     (long long)cp.intervals(), (long long)options.budget,
                     mib(cp.memory.problem.budget),
                     mib(cp.room() - cp.memory.problem.budget),
                     mib(cp.memory.pinnedBytes), cp.plan.method.c_str(),
                     mib(cp.plan.bytesMoved()));
  if (int64_t empty = cp.memory.emptyChunks())
    os << llvm::format("empty chunks: %lld of %lld (%lld x %lld) hold no "
                       "edges; their steps load no source rows\n",
                       (long long)empty,
                       (long long)(cp.intervals() * cp.intervals()),
                       (long long)cp.intervals(), (long long)cp.intervals());
  AsmState names(model);
  findSchedule(model)->print(os, names);
  os << "\n";
  return out;
}

llvm::Expected<std::vector<Tensor>>
saga::executeChunked(ModelOp model, const ExecutionContext &ctx,
                     const ChunkedOptions &options, ChunkedStats *stats) {
  const Graph &g = *ctx.graph;
  if (!ctx.chunks && !ctx.chunkSource)
    return llvm::createStringError("a chunked run needs a source of chunks");
  // As in execute: the pool's tasks call single-threaded GEMMs (OpenBLAS's
  // own threads would spin in sched_yield between calls, taking the CPU
  // the transfer and chunk-reading threads need).
  openblas_set_num_threads(1);
  ChunkedPlanCache local;
  auto found = chunked::plan(model, g, chunked::chunkSourceOf(ctx), options,
                             local, ctx.inputs);
  if (!found)
    return found.takeError();
  ChunkedPlanCache::Entry *entry = *found;
  const PlanMemory &pm = entry->chunk.memory;
  const MemoryPlan &plan = entry->chunk.plan;
  int64_t parts = entry->chunk.intervals();
  int64_t room = entry->chunk.room();
  std::unique_ptr<NextTier> spill; // a spill file lives for one run
  auto tierOr = chunked::nextTier(*entry, options, spill);
  if (!tierOr)
    return tierOr.takeError();
  NextTier *tier = *tierOr;
  ExecutionContext runCtx = ctx;
  std::unique_ptr<ChunkReadAhead> ahead =
      chunked::readAhead(model, runCtx, pm, options);
  ChunkedRun run(model, runCtx, pm);
  chunked::InputTier inputs(
      *tier, [&](int t) { return run.isInput(t); },
      [&](int t, void *to, int64_t bytes, const RowSelection *rows) {
        return run.readInput(t, to, bytes, rows);
      });
  // One device tier per budget, whichever plan runs (training step,
  // evaluation): its recycled blocks count against the budget.
  ChunkedPlanCache &cache = options.cache ? *options.cache : local;
  std::unique_ptr<DevicePool> &shared = cache.pools[options.budget];
  if (!shared)
    shared = std::make_unique<DevicePool>(room);
  DevicePool &pool = *shared;
  pool.setCapacity(room);
  // With spills on disk the process stays within the budget (plus what
  // lies outside the pool); with the next tier in host RAM, which holds
  // every value, freed pages are kept for reuse.
  pool.boundResident(!options.scratch.empty());
  auto ran = runMemoryPlan(pm.problem, plan, pool, inputs,
                           chunked::reporting(
                               [&](int k, Resident &r) { return run.compute(k, r); },
                               options, int64_t(pm.steps.size())),
                           kPrefetchDepth, chunked::chunkRows(runCtx, pm));
  if (!ran)
    return ran.takeError();
  chunked::noteReadAhead(ahead.get(), stats);
  if (ctx.profile) {
    ctx.profile->emplace_back("waiting for transfers", ran->transfers.stallSeconds);
    if (ahead)
      ctx.profile->emplace_back("launches waiting for chunk reads",
                                ahead->counters().stallSeconds);
  }
  if (stats) {
    stats->intervals = parts;
    stats->emptyChunks = pm.emptyChunks();
    stats->group = pm.group;
    stats->minimumBytes = entry->chunk.minimum;
    stats->edgesSplit = pm.edgesSplit();
    stats->pinnedBytes = pm.pinnedBytes;
    stats->method = plan.method;
    stats->plannedBytes = plan.bytesMoved();
    chunked::noteRowLoads(pm, plan, stats);
    stats->run = *ran;
  }
  return run.takeResults();
}
