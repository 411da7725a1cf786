//===- RowExtents.cpp - which rows of a plan a sampled batch needs --------===//

#include "runtime/exec/RowExtents.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>

using namespace mlir;
using namespace saga;

namespace {
bool isVertexValue(Value v) {
  auto d = dyn_cast<DomainType>(v.getType());
  return d && !d.isEdgeDomain();
}

bool isEdgeValue(Value v) {
  auto d = dyn_cast<DomainType>(v.getType());
  return d && d.isEdgeDomain();
}

/// A propagate kernel's direction and which operands it reads at the
/// edges' other end: the sources' (its first group) for a propagation, the
/// destinations' (its second) for a reversed one.
struct KernelShape {
  bool propagate = false, reversed = false;
  int64_t otherFrom = 0, otherTo = 0; // operand indices [from, to)
  bool atOtherEnd(size_t i) const {
    return propagate && int64_t(i) >= otherFrom && int64_t(i) < otherTo;
  }
};

KernelShape shapeOf(LaunchOp launch) {
  KernelShape k;
  k.propagate = bool(launch.getPropagate());
  auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      launch, launch.getCalleeAttr());
  if (!fn)
    return k;
  k.reversed = fn->hasAttr("saga.reversed");
  auto groups = fn->getAttrOfType<DenseI64ArrayAttr>("saga.operand_groups");
  if (groups && groups.size() >= 2) {
    k.otherFrom = k.reversed ? groups[0] : 0;
    k.otherTo = k.reversed ? groups[0] + groups[1] : groups[0];
  }
  return k;
}
} // namespace

std::optional<RowExtents> saga::rowExtents(ModelOp plan, int64_t layers) {
  Block &body = plan.getBody().front();
  for (Operation &op : body) {
    if (isa<LaunchOp>(op) && cast<LaunchOp>(op).getEdgeMap())
      return std::nullopt;
    for (Value r : op.getResults())
      if (isEdgeValue(r))
        return std::nullopt;
  }
  const int64_t all = layers;

  // Support of the gradients, from the loss forward.
  llvm::DenseSet<Value> gradient;
  llvm::DenseMap<Value, int64_t> support;
  for (Operation &op : body) {
    bool readsGradient = llvm::any_of(
        op.getOperands(), [&](Value v) { return gradient.contains(v); });
    bool loss = isa<CrossEntropyGradOp, PairBceGradOp>(op);
    if (!loss && !readsGradient)
      continue;
    int64_t s = -1;
    if (loss) {
      s = 0; // the loss reads the seeds (a link loss: the pairs' ends)
    } else {
      auto launch = dyn_cast<LaunchOp>(op);
      KernelShape k = launch ? shapeOf(launch) : KernelShape();
      for (auto [i, v] : llvm::enumerate(op.getOperands())) {
        if (!gradient.contains(v))
          continue;
        int64_t from = support.lookup(v);
        bool atOther = k.atOtherEnd(i);
        if (atOther && k.reversed)
          from += 1; // back to the sources of the edges into the support
        else if (atOther)
          from = all; // forward over gradients: anywhere
        s = std::max(s, from);
      }
    }
    for (Value r : op.getResults())
      if (isVertexValue(r)) {
        gradient.insert(r);
        support[r] = std::min(s, all);
      }
  }
  auto computable = [&](Value v, int64_t need) {
    return gradient.contains(v) ? std::min(need, support.lookup(v)) : need;
  };

  // Need, from the results back.
  RowExtents x;
  llvm::DenseMap<Value, int64_t> need;
  auto require = [&](Value v, int64_t level) {
    if (!isVertexValue(v))
      return;
    level = std::min(level, all);
    auto [it, fresh] = need.try_emplace(v, level);
    if (!fresh)
      it->second = std::max(it->second, level);
  };
  auto needOf = [&](Value v) {
    auto it = need.find(v);
    return it == need.end() ? int64_t(-1) : it->second;
  };
  for (Operation &op : llvm::reverse(body)) {
    if (auto ret = dyn_cast<ReturnOp>(op)) {
      for (Value v : ret.getOperands())
        require(v, all);
      continue;
    }
    if (auto ce = dyn_cast<CrossEntropyOp>(op)) {
      require(ce->getOperand(0), 0);
      require(ce->getOperand(1), 0);
      continue;
    }
    if (auto pl = dyn_cast<PairBceOp>(op)) {
      require(pl.getInput(), 0); // a batch's pairs join seeds
      continue;
    }
    if (auto pg = dyn_cast<PairBceGradOp>(op)) {
      x.opLevel[&op] = 0;
      require(pg.getInput(), 0);
      continue;
    }
    if (auto ce = dyn_cast<CrossEntropyGradOp>(op)) {
      // Made on the seeds; zeros past them where later ops read (zeroFill).
      x.opLevel[&op] = 0;
      require(ce.getLogits(), 0);
      require(ce.getLabels(), 0);
      continue;
    }
    if (auto sum = dyn_cast<SumRowsOp>(op)) {
      Value in = sum.getInput();
      int64_t s = gradient.contains(in) ? support.lookup(in) : all;
      x.opLevel[&op] = s;
      require(in, s);
      continue;
    }
    if (auto lw = dyn_cast<LinearGradWeightOp>(op)) {
      Value dy = lw.getGradOutput();
      int64_t s = gradient.contains(dy) ? support.lookup(dy) : all;
      x.opLevel[&op] = s;
      require(lw.getInput(), s);
      require(dy, s);
      continue;
    }
    // Row-wise ops and kernels: the most rows any result needs.
    int64_t level = -1;
    bool vertexResults = false;
    for (Value r : op.getResults())
      if (isVertexValue(r)) {
        vertexResults = true;
        level = std::max(level, computable(r, needOf(r)));
      }
    if (!vertexResults)
      continue;
    level = std::max<int64_t>(level, 0);
    if (isa<DegreeOp, VertexIdOp>(op))
      level = all; // graph facts, made whole
    x.opLevel[&op] = level;
    if (auto launch = dyn_cast<LaunchOp>(op)) {
      KernelShape k = shapeOf(launch);
      for (auto [i, v] : llvm::enumerate(op.getOperands())) {
        bool atOther = k.atOtherEnd(i);
        // A reversed propagation reads at the targets of its rows' edges:
        // rows with a sample (within layers - 1 hops), or a row itself
        // through its self loop.
        require(v, !atOther    ? level
                   : k.reversed ? std::max(level, all - 1)
                                : level + 1);
      }
      continue;
    }
    for (Value v : op.getOperands())
      require(v, level);
  }

  // Values read past the rows made: zeros there.
  for (Operation &op : body) {
    auto level = x.opLevel.find(&op);
    if (level == x.opLevel.end())
      continue;
    for (Value r : op.getResults()) {
      int64_t read = needOf(r);
      if (isVertexValue(r) && read > level->second)
        x.zeroFill[r] = {level->second, read};
    }
  }
  return x;
}
