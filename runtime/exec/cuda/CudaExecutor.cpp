//===- CudaExecutor.cpp - runs execution plans on a CUDA device -----------===//

#include "runtime/exec/cuda/CudaExecutor.h"
#include "runtime/exec/cuda/PlanKernels.h"
#include "runtime/exec/InMemoryWalker.h"

#include "support/KernelAbi.h"
#include "codegen/cuda/CudaEmitter.h"
#include "dialect/Saga.h"
#include "runtime/exec/ExecHelpers.h"
#include "runtime/exec/cuda/RuntimeKernels.h"
#include "runtime/exec/cuda/RuntimeOps.h"

#include "llvm/ADT/DenseMap.h"
#include "mlir/IR/SymbolTable.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <unordered_map>

using namespace mlir;
using namespace saga;
using namespace saga::exec;
using cuda::CUdeviceptr;


llvm::Expected<std::unique_ptr<CudaBackend>>
CudaBackend::create(const cuda::CudaDevice::Options &options) {
  auto device = cuda::CudaDevice::open(options);
  if (!device)
    return device.takeError();
  std::unique_ptr<CudaBackend> b(new CudaBackend());
  b->device = std::move(*device);
  auto runtime = b->device->load(cuda::runtimeKernelSource(),
                                 cuda::runtimeKernelNames());
  if (!runtime)
    return llvm::createStringError("the CUDA runtime kernels: " +
                                   llvm::toString(runtime.takeError()));
  b->runtime = std::move(*runtime);
  return b;
}

CudaBackend::~CudaBackend() {
  if (!device)
    return;
  (void)llvm::errorToBool(device->synchronize());
  for (auto &[key, r] : residents)
    device->release(r.buffer.ptr);
  for (auto &[op, p] : plans)
    device->unload(*p->module);
  if (runtime)
    device->unload(*runtime);
}

llvm::Error CudaBackend::addPlan(ModuleOp plan) {
  auto source = cuda::emitCuda(plan);
  if (!source)
    return source.takeError();
  auto p = std::make_unique<PlanKernels>();
  std::vector<std::string> names;
  for (cuda::KernelInfo &k : source->kernels) {
    names.push_back(k.name);
    p->infos.emplace(k.name, std::move(k));
  }
  auto module = device->load(source->code, names);
  if (!module)
    return module.takeError();
  p->module = std::move(*module);
  plans[plan.getOperation()] = std::move(p);
  return llvm::Error::success();
}

void CudaBackend::invalidateGraph() {
  (void)llvm::errorToBool(device->synchronize());
  for (auto it = residents.begin(); it != residents.end();) {
    if (llvm::StringRef(it->first).starts_with("graph.")) {
      device->release(it->second.buffer.ptr);
      it = residents.erase(it);
    } else {
      ++it;
    }
  }
}

void CudaBackend::invalidateInput(const std::string &name) {
  auto it = residents.find("input." + name);
  if (it == residents.end())
    return;
  (void)llvm::errorToBool(device->synchronize());
  device->release(it->second.buffer.ptr);
  residents.erase(it);
}

llvm::Expected<CudaBackend::Buffer>
CudaBackend::resident(const std::string &key, const void *data, int64_t bytes) {
  if (auto it = residents.find(key); it != residents.end()) {
    if (it->second.from == data && it->second.buffer.bytes == bytes)
      return it->second.buffer;
    (void)llvm::errorToBool(device->synchronize());
    device->release(it->second.buffer.ptr);
    residents.erase(it);
  }
  auto p = device->allocate(bytes, key);
  if (!p)
    return p.takeError();
  if (auto e = device->upload(*p, data, bytes))
    return std::move(e);
  Buffer b{*p, bytes};
  residents[key] = {b, data};
  return b;
}

namespace saga {

/// CUDA's steps of an in-memory run: values in device memory, the
/// generated kernels and the runtime kernels (RuntimeOps) on the compute
/// stream, GEMMs by cuBLAS.
class CudaRun : public InMemoryWalker {
public:
  CudaRun(CudaBackend &backend, CudaBackend::PlanKernels &plan,
          const ExecutionContext &ctx)
      : InMemoryWalker(ctx), b(backend), dev(*backend.device), plan(plan),
        ops(*backend.device, *backend.runtime) {}
  ~CudaRun() {
    // Stream order would make the releases safe; waiting first also keeps
    // a failed run from freeing what a queued kernel still writes.
    (void)llvm::errorToBool(dev.synchronize());
    for (auto &[v, t] : values)
      if (t.owned)
        dev.release(t.ptr);
    for (CUdeviceptr p : temporaries)
      dev.release(p);
  }
private:
  llvm::Error begin(ModelOp model) override;
  llvm::Error param(ParamOp op) override { return bindParam(op); }
  llvm::Error degrees(Value result) override;
  llvm::Error vertexIds(Value result) override;
  llvm::Error launch(LaunchOp op) override;
  llvm::Error linear(LinearOp op) override { return gemm(op); }
  llvm::Error linearGradInput(LinearGradInputOp op) override {
    return gemm(op);
  }
  llvm::Error weightGradient(LinearGradWeightOp op) override {
    return gemm(op);
  }
  llvm::Error sumRows(SumRowsOp op) override;
  llvm::Error crossEntropy(CrossEntropyOp op) override { return loss(op); }
  llvm::Error crossEntropyGrad(CrossEntropyGradOp op) override {
    return loss(op);
  }
  llvm::Error readout(ReadoutOp op,
                      const std::vector<int64_t> &bounds) override;
  llvm::Error readoutGrad(ReadoutGradOp op,
                          const std::vector<int64_t> &bounds) override;
  llvm::Error batchNorm(BatchNormOp op) override;
  llvm::Error batchNormGrad(BatchNormGradOp op) override;
  llvm::Error pairBce(PairBceOp op, const PairSet &pairs) override;
  llvm::Error pairBceGrad(PairBceGradOp op, const PairSet &pairs) override;
  /// The pairs' arrays on the device (uploaded once per run that reads them).
  struct DevicePairs {
    CUdeviceptr src = 0, dst = 0, label = 0, offsets = 0, pair = 0, other = 0;
  };
  llvm::Expected<DevicePairs> pairsOnDevice(const PairSet &pairs);
  /// The graph bounds on the device (uploaded for each run that reads them).
  llvm::Expected<CUdeviceptr> graphBounds(const std::vector<int64_t> &bounds);
  llvm::Error l2(L2Op op) override;
  llvm::Error fill(Value result, float value) override;
  llvm::Error neg(Operation *op) override;
  llvm::Error binary(Operation *op, int64_t na, int64_t nb,
                     int64_t n) override;
  void release(Value v) override;
  llvm::Expected<std::vector<Tensor>> results(ReturnOp op) override;
  llvm::Error synchronize() override { return dev.synchronize(); }
  std::string name() const override { return "CUDA"; }

  struct DeviceTensor {
    CUdeviceptr ptr = 0;
    std::vector<int64_t> shape;
    DType dtype = DType::F32;
    int64_t elements = 0;
    bool owned = false; // a plan buffer (not a resident input)
  };

  int64_t rowsOf(Type type) const {
    auto d = dyn_cast<DomainType>(type);
    return d && d.isEdgeDomain() ? ctx.graph->numEdges : ctx.graph->numVertices;
  }
  const DeviceTensor *lookup(Value v) const {
    auto it = values.find(v);
    return it == values.end() ? nullptr : &it->second;
  }
  llvm::Expected<DeviceTensor *> allocate(Value v, const std::string &what);
  llvm::Expected<CUdeviceptr> temporary(int64_t bytes, const std::string &what);

  llvm::Error bindInput(ModelOp model, BlockArgument arg);
  llvm::Error bindParam(ParamOp op);
  llvm::Error graphArrays();
  llvm::Error gemm(Operation *op);
  /// A cross-entropy loss or its gradient.
  llvm::Error loss(Operation *op);
  /// An error at `op` unless each of its operands has a value.
  llvm::Error operandsBound(Operation *op) const;
  llvm::Error lossRows();

  CudaBackend &b;
  cuda::CudaDevice &dev;
  CudaBackend::PlanKernels &plan;
  cuda::RuntimeOps ops;
  /// Node-based: a DeviceTensor* from lookup() stays valid while later
  /// results are allocated (a DenseMap moved them on growth; ASan found
  /// gemm and sum_rows reading operands freed by the result's insertion).
  struct ValueHash {
    size_t operator()(Value v) const { return size_t(hash_value(v)); }
  };
  std::unordered_map<Value, DeviceTensor, ValueHash> values;
  std::vector<CUdeviceptr> temporaries;
  CUdeviceptr boundsOnDevice = 0; // graphBounds(), once per run
  std::optional<DevicePairs> devicePairs; // pairsOnDevice(), once per run
  size_t liveBytes = 0, peakBytes = 0;
  // The graph's CSRs on the device: by destination (in) and by source (out).
  CUdeviceptr inOffsets = 0, inSources = 0, inIds = 0;
  CUdeviceptr outOffsets = 0, outTargets = 0, outIds = 0;
  // The loss rows (0: every row) and their count.
  CUdeviceptr rows = 0;
  int64_t numRows = -1;
};

} // namespace saga

llvm::Expected<CudaRun::DeviceTensor *>
CudaRun::allocate(Value v, const std::string &what) {
  DeviceTensor t;
  t.shape = shapeOf(v.getType(), rowsOf(v.getType()));
  t.dtype = dtypeOf(v.getType());
  t.elements = 1;
  for (int64_t d : t.shape)
    t.elements *= d;
  auto p = dev.allocate(t.elements * 4, what);
  if (!p)
    return p.takeError();
  t.ptr = *p;
  t.owned = true;
  liveBytes += size_t(t.elements) * 4;
  peakBytes = std::max(peakBytes, liveBytes);
  DeviceTensor &slot = values[v];
  if (slot.owned) // a value bound twice (never in a valid plan)
    dev.release(slot.ptr);
  slot = std::move(t);
  return &slot;
}

llvm::Expected<CUdeviceptr> CudaRun::temporary(int64_t bytes,
                                               const std::string &what) {
  auto p = dev.allocate(bytes, what);
  if (p)
    temporaries.push_back(*p);
  return p;
}

void CudaRun::release(Value v) {
  auto it = values.find(v);
  if (it == values.end())
    return;
  if (it->second.owned) {
    liveBytes -= size_t(it->second.elements) * 4;
    dev.release(it->second.ptr);
  }
  values.erase(it);
}

llvm::Error CudaRun::graphArrays() {
  const Graph &g = *ctx.graph;
  // Keyed by the graph's arrays: a new graph (or a changed one) uploads.
  auto put = [&](const char *key, const auto &v, CUdeviceptr &to) -> llvm::Error {
    auto r = b.resident(std::string("graph.") + key, v.data(),
                        int64_t(v.size() * sizeof(v[0])));
    if (!r)
      return r.takeError();
    to = r->ptr;
    return llvm::Error::success();
  };
  if (auto e = put("inOffsets", g.inOffsets, inOffsets))
    return e;
  if (auto e = put("outOffsets", g.outOffsets, outOffsets))
    return e;
  if (g.numEdges == 0)
    return llvm::Error::success();
  if (auto e = put("inSources", g.inSources, inSources))
    return e;
  if (auto e = put("inEdgeIds", g.inEdgeIds, inIds))
    return e;
  if (auto e = put("outTargets", g.outTargets, outTargets))
    return e;
  return put("outEdgeIds", g.outEdgeIds, outIds);
}

llvm::Error CudaRun::bindInput(ModelOp model, BlockArgument arg) {
  auto t = boundInput(model, arg, *ctx.inputs, rowsOf(arg.getType()));
  if (!t)
    return t.takeError();
  auto r = b.resident("input." + chunked::argName(model, arg), (*t)->f32(),
                      (*t)->numElements() * 4);
  if (!r)
    return r.takeError();
  values[arg] = {r->ptr, (*t)->shape(), (*t)->dtype(), (*t)->numElements(), false};
  return llvm::Error::success();
}

llvm::Error CudaRun::bindParam(ParamOp param) {
  auto p = boundParam(param, *ctx.params);
  if (!p)
    return p.takeError();
  auto t = allocate(param, "parameter " + param.getName().str());
  if (!t)
    return t.takeError();
  return dev.upload((*t)->ptr, (*p)->f32(), (*t)->elements * 4);
}

llvm::Error CudaRun::lossRows() {
  if (numRows >= 0)
    return llvm::Error::success();
  if (ctx.lossMask.empty()) {
    numRows = ctx.graph->numVertices;
    return llvm::Error::success();
  }
  numRows = int64_t(ctx.lossMask.size());
  auto p = temporary(numRows * 4, "the loss rows");
  if (!p)
    return p.takeError();
  rows = *p;
  return dev.upload(rows, ctx.lossMask.data(), numRows * 4);
}

llvm::Error CudaRun::launch(LaunchOp op) {
  auto kernelFn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      op, op.getCalleeAttr());
  bool reversed = kernelFn && kernelFn->hasAttr("saga.reversed");
  const Graph &g = *ctx.graph;
  // The kernel level's arguments, as the CPU executor passes them: the CSR
  // walked (propagate, edge_map), then for a propagate the whole CSR's
  // offsets, the phase and the (unused, unchunked) state, then operands and
  // results.
  using cuda::KernelParam;
  std::vector<KernelParam> args;
  if (op.getPropagate() || op.getEdgeMap()) {
    int64_t v1 = int64_t(g.numVertices) + 1, e = g.numEdges;
    args.push_back(KernelParam::buffer(reversed ? outOffsets : inOffsets, v1));
    args.push_back(KernelParam::buffer(reversed ? outTargets : inSources, e));
    args.push_back(KernelParam::buffer(reversed ? outIds : inIds, e));
  }
  if (op.getPropagate()) {
    args.push_back(KernelParam::buffer(reversed ? outOffsets : inOffsets,
                                       int64_t(g.numVertices) + 1));
    args.push_back(KernelParam::i64(kPhaseWhole));
    args.push_back(KernelParam::buffer(0, 0));
  }
  for (Value v : op.getOperands()) {
    const DeviceTensor *t = lookup(v);
    if (!t)
      return errorAt(op, "operand has no value (plan out of order?)");
    args.push_back(KernelParam::buffer(t->ptr, t->elements));
  }
  for (Value r : op.getResults()) {
    auto t = allocate(r, "a result of " + op.getCallee().str());
    if (!t)
      return errorAt(op, llvm::toString(t.takeError()));
    args.push_back(KernelParam::buffer((*t)->ptr, (*t)->elements));
  }
  // Dropout over edges keys its masks by the edge ids (saga.edge_keys).
  if (kernelFn && kernelFn->hasAttr("saga.edge_keys"))
    args.push_back(args[2]);
  return cuda::launchPlanKernel(dev, plan, op, args, 0, g.numVertices,
                                int64_t(ctx.seed));
}

llvm::Error cuda::launchPlanKernel(CudaDevice &dev,
                                   const CudaBackend::PlanKernels &plan,
                                   LaunchOp op, llvm::ArrayRef<KernelParam> args,
                                   int64_t begin, int64_t end, int64_t seed) {
  auto info = plan.infos.find(op.getCallee().str());
  CUfunction f = plan.module->function(op.getCallee().str());
  if (info == plan.infos.end() || !f)
    return errorAt(op, "kernel '" + op.getCallee().str() +
                           "' was not compiled for the CUDA device");
  const KernelInfo &k = info->second;
  if (k.params.size() != 3 + args.size())
    return errorAt(op, op.getCallee().str() + " takes " +
                           std::to_string(k.params.size()) +
                           " arguments, the executor has " +
                           std::to_string(3 + args.size()));
  // cuLaunchKernel's form: a pointer to each parameter's value; a buffer
  // is two parameters, its pointer and its length.
  std::vector<int64_t> scalars;
  std::vector<CUdeviceptr> pointers;
  scalars.reserve(4 + 2 * args.size()); // pointers into them are taken
  pointers.reserve(args.size() + 1);
  std::vector<void *> params;
  for (int64_t s : {begin, end, seed}) {
    scalars.push_back(s);
    params.push_back(&scalars.back());
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].scalar != !k.params[i + 3].buffer)
      return errorAt(op, op.getCallee().str() + ": argument " +
                             std::to_string(i + 3) + " is of the wrong kind");
    if (!args[i].scalar) {
      pointers.push_back(args[i].ptr);
      params.push_back(&pointers.back());
    }
    scalars.push_back(args[i].value);
    params.push_back(&scalars.back());
  }
  LaunchShape shape = cuda::launchShape(k, end - begin,
                                        int64_t(dev.multiprocessors()) * 16);
  // Scratch too large for shared memory: a global buffer for this launch,
  // given back after it (stream order: later work queued on the compute
  // stream runs after this kernel).
  CUdeviceptr global = 0;
  if (k.globalScratch) {
    auto p = dev.allocate(shape.globalScratchBytes,
                          "the global scratch of " + k.name + " (" +
                              std::to_string(k.scratchBytes) +
                              " bytes a warp)");
    if (!p)
      return errorAt(op, llvm::toString(p.takeError()));
    global = *p;
    pointers.push_back(global);
    params.push_back(&pointers.back());
    scalars.push_back(shape.globalScratchBytes);
    params.push_back(&scalars.back());
  }
  llvm::Error launched =
      dev.launch(f, shape.blocks, 32 * shape.warpsPerBlock, shape.sharedBytes,
                 params.data(), k.name);
  if (global)
    dev.release(global);
  if (launched)
    return errorAt(op, llvm::toString(std::move(launched)));
  return llvm::Error::success();
}

llvm::Error CudaRun::gemm(Operation *op) {
  const int64_t v = ctx.graph->numVertices;
  auto in = [&](Value x) { return lookup(x); };
  if (auto l = dyn_cast<LinearOp>(op)) {
    const DeviceTensor *x = in(l.getInput()), *w = in(l.getWeight());
    if (!x || !w)
      return errorAt(op, "operand has no value");
    auto y = allocate(l.getResult(), "a linear's result");
    if (!y)
      return errorAt(op, llvm::toString(y.takeError()));
    int64_t k = x->elements / std::max<int64_t>(v, 1), n = (*y)->elements / std::max<int64_t>(v, 1);
    return dev.gemm(false, false, v, n, k, x->ptr, w->ptr, (*y)->ptr);
  }
  if (auto lg = dyn_cast<LinearGradInputOp>(op)) {
    // dx[v] = dy[v] @ W^T
    const DeviceTensor *dy = in(lg.getGradOutput()), *w = in(lg.getWeight());
    if (!dy || !w)
      return errorAt(op, "operand has no value");
    auto dx = allocate(lg.getResult(), "a linear's input gradient");
    if (!dx)
      return errorAt(op, llvm::toString(dx.takeError()));
    int64_t k = (*dx)->elements / std::max<int64_t>(v, 1), n = dy->elements / std::max<int64_t>(v, 1);
    return dev.gemm(false, true, v, k, n, dy->ptr, w->ptr, (*dx)->ptr);
  }
  auto lw = cast<LinearGradWeightOp>(op);
  // dW = x^T dy
  const DeviceTensor *x = in(lw.getInput()), *dy = in(lw.getGradOutput());
  if (!x || !dy)
    return errorAt(op, "operand has no value");
  auto dw = allocate(lw.getResult(), "a weight gradient");
  if (!dw)
    return errorAt(op, llvm::toString(dw.takeError()));
  int64_t k = x->elements / std::max<int64_t>(v, 1),
          n = dy->elements / std::max<int64_t>(v, 1);
  // Per slice of rows, slices added in order: the CPU's sum (and the
  // chunked run's, at any interval count).
  int64_t slices = cuda::RuntimeOps::slicesFor(v);
  auto partial = temporary(slices * k * n * 4, "weight gradient slices");
  if (!partial)
    return partial.takeError();
  if (auto e = ops.weightGradSlices(x->ptr, dy->ptr, k, n, v, 0, v, *partial))
    return e;
  return ops.sumSlices(*partial, slices, k * n, (*dw)->ptr);
}

llvm::Error CudaRun::operandsBound(Operation *op) const {
  for (Value v : op->getOperands())
    if (!lookup(v))
      return errorAt(op, "operand has no value");
  return llvm::Error::success();
}

llvm::Error CudaRun::fill(Value result, float value) {
  auto t = allocate(result, result.getDefiningOp()->getName().getStringRef().str());
  if (!t)
    return t.takeError();
  return ops.fill((*t)->ptr, (*t)->elements, value);
}

llvm::Error CudaRun::neg(Operation *op) {
  if (auto e = operandsBound(op))
    return e;
  auto t = allocate(op->getResult(0), op->getName().getStringRef().str());
  if (!t)
    return t.takeError();
  return ops.neg(lookup(op->getOperand(0))->ptr, (*t)->ptr, (*t)->elements);
}

llvm::Error CudaRun::binary(Operation *op, int64_t na, int64_t nb, int64_t n) {
  if (auto e = operandsBound(op))
    return e;
  auto t = allocate(op->getResult(0), op->getName().getStringRef().str());
  if (!t)
    return t.takeError();
  return ops.binary(binaryOpCode(op), lookup(op->getOperand(0))->ptr, na,
                    lookup(op->getOperand(1))->ptr, nb, (*t)->ptr, n);
}

llvm::Error CudaRun::sumRows(SumRowsOp sum) {
  if (auto e = operandsBound(sum))
    return e;
  const DeviceTensor *x = lookup(sum.getInput());
  auto t = allocate(sum.getResult(), sum->getName().getStringRef().str());
  if (!t)
    return t.takeError();
  int64_t rowsN = x->shape.empty() ? 1 : x->shape[0];
  int64_t w = (*t)->elements;
  int64_t blocks = std::max<int64_t>((rowsN + kRowsPerTask - 1) / kRowsPerTask, 1);
  auto partial = temporary(blocks * w * 8, "sum_rows partials");
  if (!partial)
    return partial.takeError();
  if (rowsN == 0)
    return dev.fill32((*t)->ptr, 0, w);
  if (auto e = dev.fill32(*partial, 0, blocks * w * 2))
    return e;
  if (auto e = ops.blockSums(x->ptr, 0, rowsN, w, kRowsPerTask, *partial))
    return e;
  return ops.finishSums(*partial, blocks, w, (*t)->ptr);
}

llvm::Expected<CUdeviceptr>
CudaRun::graphBounds(const std::vector<int64_t> &bounds) {
  if (boundsOnDevice)
    return boundsOnDevice;
  auto p = temporary(int64_t(bounds.size() * sizeof(int64_t)), "graph bounds");
  if (!p)
    return p.takeError();
  if (auto e = dev.upload(*p, bounds.data(),
                          int64_t(bounds.size() * sizeof(int64_t))))
    return std::move(e);
  // The upload is asynchronous: `bounds` must live until it is done.
  if (auto e = dev.synchronize())
    return std::move(e);
  boundsOnDevice = *p;
  return boundsOnDevice;
}

llvm::Error CudaRun::readout(ReadoutOp op, const std::vector<int64_t> &bounds) {
  if (auto e = operandsBound(op))
    return e;
  auto on = graphBounds(bounds);
  if (!on)
    return on.takeError();
  const DeviceTensor *x = lookup(op.getInput());
  auto t = allocate(op.getResult(), op->getName().getStringRef().str());
  if (!t)
    return t.takeError();
  int64_t rowsN = rowsOf(op.getInput().getType());
  int64_t w = rowsN ? x->elements / rowsN : 0;
  return ops.readout(x->ptr, w, *on, int64_t(bounds.size()) - 1,
                     int64_t(op.getKind()), (*t)->ptr);
}

llvm::Error CudaRun::readoutGrad(ReadoutGradOp op,
                                 const std::vector<int64_t> &bounds) {
  if (auto e = operandsBound(op))
    return e;
  auto on = graphBounds(bounds);
  if (!on)
    return on.takeError();
  const DeviceTensor *x = lookup(op.getInput()), *y = lookup(op.getReadout()),
                     *dy = lookup(op.getGrad());
  auto t = allocate(op.getGradInput(), op->getName().getStringRef().str());
  if (!t)
    return t.takeError();
  int64_t rowsN = rowsOf(op.getInput().getType());
  int64_t w = rowsN ? x->elements / rowsN : 0;
  return ops.readoutGrad(x->ptr, y->ptr, dy->ptr, w, *on,
                         int64_t(bounds.size()) - 1, (*t)->ptr);
}

llvm::Error CudaRun::batchNorm(BatchNormOp op) {
  if (auto e = operandsBound(op))
    return e;
  const DeviceTensor *x = lookup(op.getInput());
  auto t = allocate(op.getResult(), op->getName().getStringRef().str());
  if (!t)
    return t.takeError();
  int64_t rowsN = rowsOf(op.getInput().getType());
  int64_t w = rowsN ? x->elements / rowsN : 0;
  return ops.batchNorm(x->ptr, rowsN, w, (*t)->ptr);
}

llvm::Error CudaRun::batchNormGrad(BatchNormGradOp op) {
  if (auto e = operandsBound(op))
    return e;
  const DeviceTensor *x = lookup(op.getInput()), *dy = lookup(op.getGrad());
  auto t = allocate(op.getGradInput(), op->getName().getStringRef().str());
  if (!t)
    return t.takeError();
  int64_t rowsN = rowsOf(op.getInput().getType());
  int64_t w = rowsN ? x->elements / rowsN : 0;
  return ops.batchNormGrad(x->ptr, dy->ptr, rowsN, w, (*t)->ptr);
}

llvm::Expected<CudaRun::DevicePairs>
CudaRun::pairsOnDevice(const PairSet &pairs) {
  if (devicePairs)
    return *devicePairs;
  DevicePairs d;
  auto put = [&](CUdeviceptr &to, const void *data, size_t bytes,
                 const char *what) -> llvm::Error {
    auto p = temporary(std::max<int64_t>(int64_t(bytes), 8), what);
    if (!p)
      return p.takeError();
    to = *p;
    return bytes ? dev.upload(to, data, int64_t(bytes)) : llvm::Error::success();
  };
  size_t n = size_t(pairs.size());
  if (auto e = put(d.src, pairs.src.data(), n * 4, "pair sources"))
    return std::move(e);
  if (auto e = put(d.dst, pairs.dst.data(), n * 4, "pair destinations"))
    return std::move(e);
  if (auto e = put(d.label, pairs.label.data(), n * 4, "pair labels"))
    return std::move(e);
  if (auto e = put(d.offsets, pairs.incidenceOffsets.data(),
                   pairs.incidenceOffsets.size() * 8, "pair incidences"))
    return std::move(e);
  if (auto e = put(d.pair, pairs.incidencePair.data(), n * 8, "pair ids"))
    return std::move(e);
  if (auto e = put(d.other, pairs.incidenceOther.data(), n * 8, "pair ends"))
    return std::move(e);
  // The uploads are asynchronous: `pairs` must live until they are done.
  if (auto e = dev.synchronize())
    return std::move(e);
  devicePairs = d;
  return d;
}

llvm::Error CudaRun::pairBce(PairBceOp op, const PairSet &pairs) {
  if (auto e = operandsBound(op))
    return e;
  auto on = pairsOnDevice(pairs);
  if (!on)
    return on.takeError();
  const DeviceTensor *h = lookup(op.getInput());
  int64_t n = pairs.size(), w = h->elements / std::max<int64_t>(rowsOf(op.getInput().getType()), 1);
  auto t = allocate(op.getResult(), op->getName().getStringRef().str());
  if (!t)
    return t.takeError();
  auto terms = temporary(std::max<int64_t>(n, 1) * 8, "pair loss terms");
  auto sums = temporary(16, "pair loss sums");
  if (!terms || !sums)
    return llvm::joinErrors(terms.takeError(), sums.takeError());
  if (n == 0)
    return dev.fill32((*t)->ptr, 0, 1);
  if (auto e = ops.pairTerms(h->ptr, w, on->src, on->dst, on->label, n, 0, 0,
                             *terms))
    return e;
  if (auto e = ops.reduce(0, *terms, n, false, *sums))
    return e;
  return ops.scalar(*sums, 0, 1.0 / double(n), (*t)->ptr);
}

llvm::Error CudaRun::pairBceGrad(PairBceGradOp op, const PairSet &pairs) {
  if (auto e = operandsBound(op))
    return e;
  auto on = pairsOnDevice(pairs);
  if (!on)
    return on.takeError();
  const DeviceTensor *h = lookup(op.getInput()), *g = lookup(op.getGrad());
  int64_t n = pairs.size(), rowsN = rowsOf(op.getInput().getType()),
          w = h->elements / std::max<int64_t>(rowsN, 1);
  auto t = allocate(op.getGradInput(), op->getName().getStringRef().str());
  if (!t)
    return t.takeError();
  auto coef = temporary(std::max<int64_t>(n, 1) * 8, "pair loss slopes");
  if (!coef)
    return coef.takeError();
  if (n > 0)
    if (auto e = ops.pairTerms(h->ptr, w, on->src, on->dst, on->label, n, 1,
                               g->ptr, *coef))
      return e;
  return ops.pairGrad(h->ptr, w, on->offsets, on->pair, on->other, *coef,
                      rowsN, (*t)->ptr);
}

llvm::Error CudaRun::l2(L2Op op) {
  if (auto e = operandsBound(op))
    return e;
  const DeviceTensor *x = lookup(op->getOperand(0));
  auto t = allocate(op->getResult(0), op->getName().getStringRef().str());
  if (!t)
    return t.takeError();
  auto s = temporary(8, "l2 sum");
  if (!s)
    return s.takeError();
  if (auto e = ops.reduce(x->ptr, 0, x->elements, true, *s))
    return e;
  return ops.scalar(*s, 0, 0.5, (*t)->ptr);
}

llvm::Error CudaRun::loss(Operation *op) {
  if (auto e = operandsBound(op))
    return e;
  if (auto e = lossRows())
    return e;
  auto operand = [&](unsigned i) { return lookup(op->getOperand(i)); };
  const DeviceTensor *logits = operand(0), *labels = operand(1);
  int64_t c = logits->shape.size() > 1 ? logits->elements / logits->shape[0] : 1;
  int64_t n = numRows, slots = std::max<int64_t>(n, 1);
  auto terms = temporary(slots * 16, "loss terms");
  auto sums = temporary(16, "loss sums");
  if (!terms || !sums)
    return llvm::joinErrors(terms.takeError(), sums.takeError());
  CUdeviceptr valid = *terms + CUdeviceptr(slots * 8), count = *sums + 8;
  if (auto e = ops.labelValid(labels->ptr, c, rows, n, 0, valid))
    return e;
  if (auto e = ops.reduce(0, valid, n, false, count))
    return e;
  auto t = allocate(op->getResult(0), op->getName().getStringRef().str());
  if (!t)
    return t.takeError();
  int64_t v = ctx.graph->numVertices;
  if (isa<CrossEntropyOp>(op)) {
    if (auto e = dev.fill32(*terms, 0, slots * 2))
      return e;
    if (auto e = ops.crossEntropy(logits->ptr, c, labels->ptr, rows, n, 0, 0, v,
                                  *terms))
      return e;
    if (auto e = ops.reduce(0, *terms, n, false, *sums))
      return e;
    return ops.scalar(*sums, count, 1.0, (*t)->ptr);
  }
  if (auto e = dev.fill32((*t)->ptr, 0, (*t)->elements))
    return e;
  return ops.crossEntropyGrad(logits->ptr, c, labels->ptr, rows, n, 0, 0, v,
                              operand(2)->ptr, count, (*t)->ptr);
}

llvm::Error CudaRun::begin(ModelOp model) {
  if (auto e = graphArrays())
    return e;
  for (BlockArgument arg : model.getBody().front().getArguments())
    if (auto e = bindInput(model, arg))
      return e;
  return llvm::Error::success();
}

llvm::Error CudaRun::degrees(Value result) {
  auto t = allocate(result, "degrees");
  if (!t)
    return t.takeError();
  return ops.inDegree(inOffsets, (*t)->ptr, 0, ctx.graph->numVertices);
}

llvm::Error CudaRun::vertexIds(Value result) {
  auto t = allocate(result, "vertex ids");
  if (!t)
    return t.takeError();
  return ops.iota((*t)->ptr, 0, ctx.graph->numVertices);
}

llvm::Expected<std::vector<Tensor>> CudaRun::results(ReturnOp ret) {
  if (ctx.peakBytes)
    *ctx.peakBytes = peakBytes;
  std::vector<Tensor> results;
  for (Value v : ret.getOperands()) {
    const DeviceTensor *t = lookup(v);
    if (!t)
      return errorAt(ret, "result has no value");
    Tensor host = Tensor::uninitialized(t->shape, t->dtype);
    if (auto e = dev.download(host.data(), t->ptr, t->elements * 4))
      return std::move(e);
    results.push_back(std::move(host));
  }
  if (auto e = dev.synchronize())
    return std::move(e);
  return results;
}

llvm::Expected<std::vector<Tensor>>
CudaBackend::execute(ModelOp model, const ExecutionContext &ctx) {
  auto module = model->getParentOfType<ModuleOp>();
  auto it = plans.find(module.getOperation());
  if (it == plans.end())
    return llvm::createStringError(
        "this plan's kernels were not compiled for the CUDA device");
  if (ctx.intervalsUsed)
    *ctx.intervalsUsed = 1;
  CudaRun run(*this, *it->second, ctx);
  return run.walk(model);
}
