//===- Rematerialize.cpp - recompute cheap maps instead of keeping them ---===//
//
// A training step keeps every forward value its backward reads alive from
// the forward to that read. For a value made by an elementwise map
// (dropout, bias, activation) from values that are alive at that read
// anyway, keeping it costs a [V, F] buffer for the whole stretch, while
// making it again costs one pass over its inputs. GAT is the example: the
// layer's output before and after its bias, ELU and dropout would all wait
// for the backward, though each is one cheap map away from the aggregation
// output the backward keeps anyway.
//
// So an apply_vertex without matmuls, whose results are at least as large
// as its inputs, is made again for its later readers, when vertex or edge
// values are made between them and the reader before, provided each of its
// inputs is a graph input or is still read at or after that reader (so
// remaking it extends no input's life). A reader that is itself an
// apply_vertex recomputes it in its own body (saga::mergeApplyVertex), so no
// copy exists at all; other readers (a weight gradient's GEMM) get a clone
// just before them, which readers with nothing allocated between them
// share. Maps are visited last to first, so a chain (bias -> ELU ->
// dropout) is rebuilt from its start. Dropout draws the same mask again: it
// is keyed by the step's seed and the vertex.
//
// A projection of the input features (a saga.linear of a graph input, or of
// such a map of one, like GAT's z = dropout(x) @ W) is remade the same way,
// its map with it, when its input row is no wider than its output row: one
// GEMM instead of a [V, F] buffer from the first layer's forward to its
// backward. Projections go first, maps after.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace saga {
#define GEN_PASS_DEF_SAGAREMATERIALIZE
#include "passes/Passes.h.inc"
} // namespace saga

using namespace mlir;
using namespace saga;

namespace {

/// The top-level ops of `model` that read any of `values`, in plan order.
SmallVector<Operation *> readers(ValueRange values, Block &model) {
  SmallVector<Operation *> users;
  for (Value v : values)
    for (Operation *user : v.getUsers())
      if (Operation *top = model.findAncestorOpInBlock(*user))
        if (!llvm::is_contained(users, top))
          users.push_back(top);
  llvm::sort(users, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  return users;
}

/// Whether `v` is alive when `at` runs: a graph input, or read by `at` or
/// by something after it.
bool aliveAt(Value v, Operation *at, Block &model) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == &model;
  for (Operation *r : readers(v, model))
    if (r == at || at->isBeforeInBlock(r))
      return true;
  return false;
}

/// The propagation right before `map` whose result only `map` reads:
/// lower-to-kernels, when it fuses epilogues, runs `map` as its epilogue,
/// in its kernel, so its result is never stored (null: none). Right before
/// the map, the propagation already has everything else the map reads.
Operation *fusedPropagation(Operation *map, bool fuseEpilogues) {
  if (!fuseEpilogues)
    return nullptr;
  auto prop = dyn_cast_or_null<PropagateOp>(map->getPrevNode());
  if (!isa<ApplyVertexOp>(map) || !prop || !prop->hasOneUse() ||
      *prop->getUsers().begin() != map)
    return nullptr;
  return prop;
}

/// Whether an op between `from` and `to` (exclusive) makes a vertex or edge
/// value, i.e. memory is allocated while a kept value would wait. A
/// propagation fused into `to` as its epilogue allocates nothing.
bool allocatesBetween(Operation *from, Operation *to, bool fuseEpilogues) {
  Operation *fused = fusedPropagation(to, fuseEpilogues);
  for (Operation *o = from->getNextNode(); o && o != to; o = o->getNextNode())
    for (Type t : o->getResultTypes())
      if (isa<DomainType>(t) && o != fused)
        return true;
  return false;
}

/// Where a copy for `user` goes: before it, or before the propagation whose
/// epilogue it is, which must stay right before it.
Operation *copyPoint(Operation *user, bool fuseEpilogues) {
  Operation *fused = fusedPropagation(user, fuseEpilogues);
  return fused ? fused : user;
}

/// No matmul in the body, and its results per vertex are at least as large
/// as what it reads: remaking it reads no more than keeping it holds (so
/// GAT's per-head attention terms, [heads] from [heads, F], are kept).
bool worthRemaking(ApplyVertexOp op) {
  int64_t in = 0, out = 0;
  for (Value v : op.getInputs())
    in += rowElements(v);
  for (Value v : op->getResults())
    out += rowElements(v);
  return out >= in &&
         !op.getBody()
              .walk([](MatmulOp) { return WalkResult::interrupt(); })
              .wasInterrupted();
}

/// Remakes the results of `chain.back()` for its later readers; `chain` is
/// that op preceded by the ops it needs remade with it (a linear's input
/// map), in order. Inputs from outside the chain must be alive at the
/// reader.
void rematerialize(ArrayRef<Operation *> chain, Block &model,
                   bool fuseEpilogues) {
  Operation *op = chain.back();
  SmallVector<Value> inputs;
  for (Operation *c : chain)
    for (Value in : c->getOperands())
      if (isa<DomainType>(in.getType()) &&
          !llvm::any_of(chain, [&](Operation *o) {
            return in.getDefiningOp() == o;
          }))
        inputs.push_back(in);
  SmallVector<Operation *> users = readers(op->getResults(), model);
  // What the previous reader read: `op`, a copy, or null when the value was
  // recomputed inside it.
  Operation *copy = op;
  for (size_t i = 1; i < users.size(); ++i) {
    Operation *user = users[i];
    if (copy && !allocatesBetween(users[i - 1], user, fuseEpilogues)) {
      // Nothing allocated since the previous reader: share its copy.
    } else if (!llvm::all_of(inputs, [&](Value in) {
                 return aliveAt(in, user, model);
               })) {
      copy = op; // remaking it would keep an input alive instead
    } else if (auto map = dyn_cast<ApplyVertexOp>(user);
               map && chain.size() == 1 && isa<ApplyVertexOp>(op) &&
               op->getNumResults() == 1) {
      // A map reader recomputes the value in its own body: no copy at all.
      OpBuilder b(user);
      auto clone = cast<ApplyVertexOp>(b.clone(*op));
      op->getResult(0).replaceUsesWithIf(
          clone->getResult(0),
          [&](OpOperand &use) { return use.getOwner() == user; });
      mergeApplyVertex(clone, map);
      copy = nullptr;
      continue;
    } else {
      OpBuilder b(copyPoint(user, fuseEpilogues));
      IRMapping mapping;
      for (Operation *c : chain)
        copy = b.clone(*c, mapping);
    }
    if (copy == op)
      continue;
    for (auto [old, fresh] : llvm::zip(op->getResults(), copy->getResults()))
      old.replaceUsesWithIf(fresh, [&](OpOperand &use) {
        return model.findAncestorOpInBlock(*use.getOwner()) == user;
      });
  }
}

/// A projection of the graph's input features (a saga.linear of a graph
/// input, or of a remakeable map of graph inputs alone), with an input row
/// no wider than its output row: remaking it is one GEMM that reads no more
/// than keeping it holds, and its inputs are always there. GAT's first
/// layer is the example: its projection z = x @ W is read again by the
/// backward's attention gradients, after the whole forward and the second
/// layer's backward; kept, it is a [V, F] buffer through all of that.
/// Returns the chain to remake (the map, if any, then the linear), or none.
SmallVector<Operation *> inputProjection(LinearOp op, Block &model) {
  auto fromGraph = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == &model;
  };
  if (rowElements(op.getInput()) > rowElements(op.getResult()))
    return {};
  if (fromGraph(op.getInput()))
    return {op};
  auto map = op.getInput().getDefiningOp<ApplyVertexOp>();
  if (map && map->getBlock() == &model && map->getNumResults() == 1 &&
      worthRemaking(map) && llvm::all_of(map.getInputs(), fromGraph))
    return {map, op};
  return {};
}

struct Rematerialize
    : public saga::impl::SagaRematerializeBase<Rematerialize> {
  using SagaRematerializeBase::SagaRematerializeBase;
  void runOnOperation() override {
    for (ModelOp model : getOperation().getOps<ModelOp>())
      for (Block &block : model.getBody()) {
        for (auto op : llvm::to_vector(block.getOps<LinearOp>()))
          if (SmallVector<Operation *> chain = inputProjection(op, block);
              !chain.empty())
            rematerialize(chain, block, fuseEpilogues);
        SmallVector<ApplyVertexOp> maps;
        for (auto op : block.getOps<ApplyVertexOp>())
          if (worthRemaking(op))
            maps.push_back(op);
        for (ApplyVertexOp op : llvm::reverse(maps))
          rematerialize({op.getOperation()}, block, fuseEpilogues);
      }
  }
};

} // namespace
