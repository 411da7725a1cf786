//===- KernelSignature.cpp - what a kernel takes: its calling convention --===//
//
// A kernel's arguments, in order: the row range [lo, hi) and the step's
// seed; over edges, the CSR (offsets, other ends, edge ids); for a
// propagation, the whole graph's offsets, the phase word and the state rows;
// then a buffer per operand (the op's, its body's captures, an epilogue's
// other operands and captures), a buffer per result, and the edges' dropout
// keys where the edge body has dropout. Also the `saga.*` attributes that
// tell the executors how to run it, and the entry block's arguments bound in
// the same order.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelBuilder.h"

#include "dialect/Saga.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>

using namespace mlir;
using namespace saga;
using namespace saga::codegen;

namespace {

/// Results of this many elements (32 MiB of f32) or more are written with
/// streaming stores: they outgrow the per-core caches, and the next kernel
/// reads them from memory anyway. Below, writes stay in cache for it.
constexpr int64_t kStreamElements = int64_t(8) << 20;

/// Values used in `region` but defined outside it.
SmallVector<Value> capturedValues(Region &region) {
  llvm::SetVector<Value> captured;
  region.walk([&](Operation *op) {
    for (Value v : op->getOperands())
      if (!region.isAncestor(v.getParentRegion()))
        captured.insert(v);
  });
  return captured.takeVector();
}

MemRefType flatBuffer(Type elem) {
  return MemRefType::get({ShapedType::kDynamic}, elem);
}

bool isExtremum(PropagateOp p) {
  return p && (p.getKind() == GatherKind::max ||
               p.getKind() == GatherKind::min);
}

/// Whether `op`'s edge body must be evaluated without contraction (see
/// Emitter::exact): a max/min propagation, an edge_map whose messages a
/// max/min propagation reduces, or a propagation or edge_map that reads a
/// max/min result (the backward's re-evaluation of the messages, compared
/// with it).
bool needsExactMessages(Operation *op) {
  if (!isa<PropagateOp, EdgeMapOp>(op))
    return false;
  if (isExtremum(dyn_cast<PropagateOp>(op)))
    return true;
  for (Value r : op->getResults())
    for (Operation *user : r.getUsers())
      if (isExtremum(dyn_cast<PropagateOp>(user)))
        return true;
  for (Value v : op->getOperands()) {
    Operation *def = v.getDefiningOp();
    if (!def)
      continue;
    if (isExtremum(dyn_cast<PropagateOp>(def)))
      return true;
    if (auto launch = dyn_cast<LaunchOp>(def))
      if (auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
              launch, launch.getCalleeAttr()))
        if (fn->hasAttr("saga.extremum"))
          return true;
  }
  return false;
}

} // namespace

KernelSignature::KernelSignature(Operation *op, ApplyVertexOp epilogue,
                                 StringRef name, OpBuilder &moduleBuilder)
    : op(op), epilogue(epilogue), region(op->getRegion(0)),
      body(region.front()), ctx(op->getContext()), tb(ctx),
      loc(op->getLoc()) {
  collectOperands();
  declareFunction(name, moduleBuilder);
}

void KernelSignature::collectOperands() {
  propagate = dyn_cast<PropagateOp>(op);
  edgeMap = dyn_cast<EdgeMapOp>(op);
  kernel.propagate = static_cast<bool>(propagate);
  kernel.edgeMap = static_cast<bool>(edgeMap);
  // Both edge kernels take the CSR; their operands are grouped src, dst,
  // edge.
  overEdges = propagate || edgeMap;
  numSrcs = propagate ? propagate.getSrcs().size()
            : edgeMap ? edgeMap.getSrcs().size()
                      : 0;
  numDsts = propagate ? propagate.getDsts().size()
            : edgeMap ? edgeMap.getDsts().size()
                      : 0;
  numEdges = propagate ? propagate.getEdges().size()
             : edgeMap ? edgeMap.getEdges().size()
                       : 0;
  llvm::append_range(kernel.operands, op->getOperands());
  captured = capturedValues(region);
  llvm::append_range(kernel.operands, captured);
  // An epilogue (an apply_vertex of the propagation's result, fused into
  // its kernel) adds its other operands and its captures; epilogueArg[k] is
  // the kernel operand of its block argument k, or -1 for the propagation's
  // row, which never leaves the kernel.
  epilogueCapturedStart = 0;
  if (epilogue) {
    // An epilogue input the propagation already reads at the row being
    // reduced (a dst operand; a src operand when reversed) shares that
    // buffer: passed once, it stays read only at that row, so the
    // epilogue's results may be written over it (GAT's backward writes the
    // projection's gradient over the projection).
    auto rowSide = [&](unsigned i) {
      bool reversedProp = propagate && propagate.getReversed();
      return reversedProp ? i < numSrcs
                          : i >= numSrcs && i < numSrcs + numDsts;
    };
    for (auto [i, operand] : llvm::enumerate(op->getOperands()))
      if (propagate && !rowSide(unsigned(i)))
        otherSide.push_back(operand);
    for (Value v : epilogue.getInputs()) {
      if (v == op->getResult(0)) {
        epilogueArg.push_back(-1);
        continue;
      }
      // Only when every place the propagation reads v is at the row.
      SmallVector<unsigned> uses;
      for (auto [i, operand] : llvm::enumerate(op->getOperands()))
        if (operand == v)
          uses.push_back(unsigned(i));
      if (propagate && !uses.empty() && llvm::all_of(uses, rowSide)) {
        epilogueArg.push_back(int(uses.front()));
        continue;
      }
      epilogueArg.push_back(int(kernel.operands.size()));
      kernel.operands.push_back(v);
    }
    epilogueCaptured = capturedValues(epilogue.getBody());
    epilogueCapturedStart = kernel.operands.size();
    llvm::append_range(kernel.operands, epilogueCaptured);
  }
  resultValues = SmallVector<Value>(epilogue ? epilogue->getResults()
                                             : op->getResults());
}

void KernelSignature::declareFunction(StringRef name,
                                      OpBuilder &moduleBuilder) {
  indexType = tb.getIndexType();
  SmallVector<Type> argTypes{indexType, indexType, tb.getI64Type()};
  if (overEdges)
    argTypes.append({flatBuffer(tb.getI64Type()), flatBuffer(tb.getI32Type()),
                     flatBuffer(tb.getI32Type())});
  // A propagation may run over one edge chunk at a time (the edges from one
  // interval of the other end): it then also takes the whole graph's
  // offsets (for in-degrees), a phase word (kPhaseResume: start from the
  // partial reduction in `state`; kPhaseFinish: this is the last chunk) and
  // the state rows (saga.state_width floats per row).
  if (propagate)
    argTypes.append({flatBuffer(tb.getI64Type()), tb.getI64Type(),
                     flatBuffer(tb.getF32Type())});
  for (Value v : kernel.operands)
    argTypes.push_back(flatBuffer(elementTypeOf(v)));
  for (Value r : resultValues)
    argTypes.push_back(flatBuffer(elementTypeOf(r)));
  // Dropout in the edge body keys its masks by the edge's id in the graph:
  // given apart from the ids edge values are indexed by (the last
  // argument, `saga.edge_keys`), since a chunked run that splits edge
  // values by interval indexes them by their number in chunk order.
  edgeKeys = false;
  if (overEdges)
    region.walk([&](DropoutOp) { edgeKeys = true; });
  if (edgeKeys)
    argTypes.push_back(flatBuffer(tb.getI32Type()));

  func = func::FuncOp::create(moduleBuilder, loc, name,
                              tb.getFunctionType(argTypes, {}));
  func->setAttr("saga.kernel", tb.getStringAttr(propagate ? "propagate"
                                                : edgeMap   ? "edge_map"
                                                            : "map"));
  if (propagate && propagate.getReversed())
    func->setAttr("saga.reversed", tb.getUnitAttr());
  if (propagate) {
    // Bytes each edge reads from the rows at its other end: what a source
    // interval of the chunked execution must hold per vertex.
    int64_t gatherBytes = 0;
    bool rev = propagate.getReversed();
    for (unsigned i = rev ? numSrcs : 0, n = rev ? numSrcs + numDsts : numSrcs;
         i < n; ++i) {
      Value v = op->getOperand(i);
      gatherBytes += product(rowShapeOf(v)) *
                     std::max(1u, elementTypeOf(v).getIntOrFloatBitWidth() / 8);
    }
    func->setAttr("saga.gather_bytes", tb.getI64IntegerAttr(gatherBytes));
  }
  if (overEdges) {
    // The first operands, by group: read at the source, at the destination,
    // per edge (what a chunked schedule streams, keeps, or slices).
    func->setAttr("saga.operand_groups",
                  tb.getDenseI64ArrayAttr({int64_t(numSrcs), int64_t(numDsts),
                                           int64_t(numEdges)}));
  }
  if (edgeKeys)
    func->setAttr("saga.edge_keys", tb.getUnitAttr());
}

KernelBuilder::KernelBuilder(Operation *op, ApplyVertexOp epilogue,
                             StringRef name, OpBuilder &moduleBuilder)
    : KernelSignature(op, epilogue, name, moduleBuilder),
      entry(func.addEntryBlock()), b(OpBuilder::atBlockEnd(entry)),
      e(b, loc, entry, entry->getArgument(2)) {
  auto ret = func::ReturnOp::create(b, loc);
  b.setInsertionPoint(ret);
  e.exact = needsExactMessages(op);
  if (e.exact)
    func->setAttr("saga.exact", tb.getUnitAttr());
  if (epilogue)
    func->setAttr("saga.epilogue", tb.getUnitAttr());
  if (isExtremum(propagate))
    func->setAttr("saga.extremum", tb.getUnitAttr());
  bindArguments();
}

void KernelBuilder::bindArguments() {
  unsigned argIndex = 3;
  if (overEdges) {
    offsets = entry->getArgument(argIndex++);
    sources = entry->getArgument(argIndex++);
    edgeIds = entry->getArgument(argIndex++);
  }
  if (propagate) {
    degOffsets = entry->getArgument(argIndex++);
    phase = entry->getArgument(argIndex++);
    state = entry->getArgument(argIndex++);
  }
  for (size_t i = 0; i < kernel.operands.size(); ++i)
    operandBufs.push_back(entry->getArgument(argIndex++));
  for (size_t i = 0; i < resultValues.size(); ++i)
    resultBufs.push_back(entry->getArgument(argIndex++));
  keys = edgeKeys ? entry->getArgument(argIndex++) : Value();
  // Per result: whether it is large enough to be written with streaming
  // stores (Emitter::copyOut), decided at run time from the buffer's size.
  for (Value buf : resultBufs) {
    Value size = memref::DimOp::create(b, loc, buf, 0);
    streaming.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                              size, e.index(kStreamElements)));
  }
}
