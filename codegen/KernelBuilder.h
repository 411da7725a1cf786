//===- KernelBuilder.h - emitKernel's state and its steps -------*- C++ -*-===//
//
// Private to codegen/: emitKernel (KernelEmitter.cpp) in named steps, over
// what were its locals (members here, by the same names). A KernelSignature
// collects the kernel's operands and declares its func.func; a
// KernelBuilder then binds the entry block's arguments (both in
// KernelSignature.cpp: the calling convention), emits the loop over the
// row range with a map's or an edge_map's body (KernelRows.cpp) or a
// propagation's reduction (PropagateKernel.cpp), and finishes the kernel
// (KernelEmitter.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_CODEGEN_KERNELBUILDER_H
#define SAGA_CODEGEN_KERNELBUILDER_H

#include "codegen/KernelEmitter.h"
#include "codegen/RowEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <utility>

namespace saga::codegen {

/// The element type and the row shape of a kernel operand or result: a
/// domain value's per-element ones, or a tensor's.
inline Type elementTypeOf(Value v) {
  if (auto d = dyn_cast<DomainType>(v.getType()))
    return d.getElementType();
  return getElementTypeOrSelf(v.getType());
}

inline SmallVector<int64_t> rowShapeOf(Value v) {
  if (auto d = dyn_cast<DomainType>(v.getType()))
    return SmallVector<int64_t>(d.getShape());
  return SmallVector<int64_t>(cast<RankedTensorType>(v.getType()).getShape());
}

/// What the kernel takes and its func.func, decided before any body is
/// emitted (KernelSignature.cpp).
struct KernelSignature {
  /// Collects the operands, then declares the function.
  KernelSignature(Operation *op, ApplyVertexOp epilogue, StringRef name,
                  OpBuilder &moduleBuilder);
  /// The kernel's operands: the op's, its body's captures, an epilogue's.
  void collectOperands();
  /// The func.func: its argument types and its `saga.*` attributes.
  void declareFunction(StringRef name, OpBuilder &moduleBuilder);

  Operation *op;
  ApplyVertexOp epilogue;
  Kernel kernel;
  PropagateOp propagate;
  EdgeMapOp edgeMap;
  bool overEdges = false;
  unsigned numSrcs = 0, numDsts = 0, numEdges = 0;
  Region &region;
  Block &body;
  SmallVector<Value> captured;
  /// The kernel operand of the epilogue's block argument k, or -1 for the
  /// propagation's row (collectOperands).
  SmallVector<int> epilogueArg;
  SmallVector<Value> otherSide; // read at the edges' other ends
  SmallVector<Value> epilogueCaptured;
  unsigned epilogueCapturedStart = 0;
  SmallVector<Value> resultValues;
  MLIRContext *ctx;
  OpBuilder tb;
  Type indexType;
  bool edgeKeys = false;
  Location loc;
  func::FuncOp func;
};

/// The kernel's body, over the signature's arguments.
class KernelBuilder : public KernelSignature {
public:
  /// Declares the kernel, then binds its entry block's arguments.
  KernelBuilder(Operation *op, ApplyVertexOp epilogue, StringRef name,
                OpBuilder &moduleBuilder);
  KernelBuilder(const KernelBuilder &) = delete; // `e` holds a reference to `b`
  /// The loop over the row range [arg 0, arg 1) (KernelRows.cpp).
  void emitRows();
  /// The kernel; a failure (the function erased) where a body could not
  /// be lowered (KernelEmitter.cpp).
  FailureOr<Kernel> finish();

private:
  // The entry block's arguments (KernelSignature.cpp).
  void bindArguments();

  // Rows of operands and results, bodies on them, edges (KernelRows.cpp).
  RowVal rowOf(unsigned i, Value row);
  FailureOr<SmallVector<RowVal>> emitBlock(Block &block,
                                           DenseMap<Value, RowVal> &vals);
  FailureOr<SmallVector<RowVal>> emitBody(ArrayRef<Value> rows);
  RowVal resultRow(unsigned i, Value row);
  void writeResult(unsigned i, const RowVal &y, Value row);
  void noteOverwritable(ArrayRef<RowVal> yields,
                        ArrayRef<std::pair<unsigned, RowVal>> rows);
  void prefetchRow(RowVal r, bool write);
  void prefetchAhead(Value pos);
  std::pair<Value, Value> forEachEdge(Value v,
                                      function_ref<void(Value, Value)> fn);
  void emitEdgeMapRow(Value v);
  void emitMapRow(Value v);

  // A propagation's row: its reduction (PropagateKernel.cpp).
  void emitPropagateRow(Value v);
  void beginReduction(Value v);
  SmallVector<RowVal> stateRows(Value v);
  void foldMessage(Value v, Value u, Value eid);
  void finaliseReduction(Value v);
  void emitEpilogue(Value v);

  Block *entry;
  OpBuilder b;
  Emitter e;
  Value offsets, sources, edgeIds, degOffsets, phase, state;
  SmallVector<Value> operandBufs, resultBufs;
  Value keys;
  SmallVector<Value> streaming;
  /// The operand rows the last emitBody read (its block arguments').
  SmallVector<RowVal> argRows;
  /// Pairs (result, operand) that may share a buffer (noteOverwritable).
  SmallVector<int64_t> overwritable;
  bool ok = true;
  bool reversed = propagate && propagate.getReversed();

  // The propagation's running reduction of row v (beginReduction).
  GatherKind kind = GatherKind::sum;
  RowVal out;
  bool streamOut = false;
  int64_t width = 0;
  RowVal acc;
  bool lse = false;
  double init = 0.0;
  RowVal lseSum;
  bool softmax = false;
  int64_t heads = 1;
  int64_t per = 0;
  RowVal runMax, runSum;
  SmallVector<RowVal> running;
  int64_t stateWidth = 0;
};

} // namespace saga::codegen

#endif // SAGA_CODEGEN_KERNELBUILDER_H
