//===- Model.cpp - Saga's C++ API -----------------------------------------===//

#include "api/Model.h"
#include "api/Compiler.h"

#include "dialect/Saga.h"
#include "analysis/KernelTraffic.h"
#include "analysis/PlanMemory.h"
#include "runtime/exec/ChunkedExecutor.h"
#include "runtime/exec/Executor.h"
#include "runtime/exec/KernelDevice.h"
#include "runtime/exec/RowExtents.h"
#include "runtime/exec/cuda/CudaExecutor.h"
#include "runtime/exec/ThreadPool.h"
#include "support/Intervals.h"
#include "runtime/memory/MemoryLimit.h"
#include "runtime/Timing.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"

#include <chrono>
#include <set>
#include <cmath>

using namespace mlir;
using namespace saga;

namespace {
/// splitmix64: a small, portable generator (the same stream on every
/// platform and standard library).
struct SplitMix {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1) with 24 random bits.
  float uniform() { return float(next() >> 40) * (1.0f / 16777216.0f); }
};

uint64_t hashName(llvm::StringRef s) {
  uint64_t h = 1469598103934665603ULL; // FNV-1a
  for (char c : s)
    h = (h ^ uint8_t(c)) * 1099511628211ULL;
  return h;
}
} // namespace

/// The compiled model (api/Compiler.h) and what is bound to it: the graph,
/// inputs, parameters, the device, and the caches of its runs.
struct Model::Impl : CompiledModel {
  std::unique_ptr<ThreadPool> pool;
  /// (plan, graph) pairs whose buffers were found to fit in memory.
  std::set<std::pair<Operation *, const Graph *>> plansThatFit;

  const Graph *graph = nullptr;
  std::unique_ptr<EdgeChunkCache> chunks; // of `graph`, built on use
  std::unique_ptr<ChunkedPlanCache> chunkedPlans = // memory plans, reused
      std::make_unique<ChunkedPlanCache>();
  llvm::StringMap<Tensor> inputs, params;
  /// Inputs filled with their default (sized for the graph then bound).
  llvm::StringSet<> defaulted;
  /// Row extents of the plans on sampled batches (ForwardOptions::rowLevels).
  RowExtentsCache extents;
  std::map<std::string, RowReader> rowReaders; // streamed graph inputs
  /// Defaulted inputs a chunked run fills piece by piece (never whole).
  std::map<std::string, float> inputDefaults;
  ChunkSource *chunkSource = nullptr;          // default: `chunks`
  std::unique_ptr<CudaBackend> cuda; // with useCuda: where plans run
  /// With useCuda over several devices: the others (device 0 is `cuda`).
  std::vector<std::unique_ptr<CudaBackend>> cudaPeers;
  /// Every CUDA backend, `cuda` first.
  std::vector<CudaBackend *> cudaAll() const {
    std::vector<CudaBackend *> all;
    if (cuda)
      all.push_back(cuda.get());
    for (const auto &p : cudaPeers)
      all.push_back(p.get());
    return all;
  }
  bool distributedPlans = false;     // CompileOptions::distributed
  Distribution *dist = nullptr;      // with setDistribution: this part
};

Model::Model(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
Model::~Model() = default;

llvm::Expected<std::unique_ptr<Model>>
Model::compileFile(const std::string &path, const CompileOptions &options) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path);
  if (!buffer)
    return llvm::createStringError("cannot open " + path + ": " +
                                   buffer.getError().message());
  return compileSource((*buffer)->getBuffer(), path == "-" ? "<stdin>" : path,
                       options);
}

llvm::Expected<std::unique_ptr<Model>>
Model::compileSource(llvm::StringRef source, llvm::StringRef name,
                     const CompileOptions &options) {
  auto impl = std::make_unique<Impl>();
  if (llvm::Error e = compileModel(source, name, options, *impl))
    return std::move(e);
  impl->distributedPlans = options.distributed;
  impl->pool = std::make_unique<ThreadPool>(std::max(1u, options.threads));
  return std::unique_ptr<Model>(new Model(std::move(impl)));
}

llvm::Error Model::setKernelDevice(const KernelDeviceFactory &make) {
  auto forward = make(*impl->plan);
  if (!forward)
    return forward.takeError();
  if (impl->trainPlan) {
    auto train = make(*impl->trainPlan);
    if (!train)
      return train.takeError();
    impl->trainKernels = std::move(*train);
  }
  impl->kernels = std::move(*forward);
  return llvm::Error::success();
}

llvm::Error Model::useCuda() { return useCuda(std::vector<int>{0}); }

llvm::Error Model::useCuda(const std::vector<int> &ordinals) {
  if (ordinals.empty())
    return llvm::createStringError("useCuda: no CUDA device named");
  for (size_t a = 0; a < ordinals.size(); ++a)
    for (size_t b = 0; b < a; ++b)
      if (ordinals[a] == ordinals[b])
        return llvm::createStringError("CUDA device " +
                                       std::to_string(ordinals[a]) +
                                       " is named twice");
  std::vector<std::unique_ptr<CudaBackend>> backends;
  for (int ordinal : ordinals) {
    cuda::CudaDevice::Options o;
    o.ordinal = ordinal;
    auto backend = CudaBackend::create(o);
    if (!backend)
      return backend.takeError();
    for (ModuleOp plan : {*impl->plan, impl->trainPlan ? *impl->trainPlan
                                                       : ModuleOp()})
      if (plan)
        if (llvm::Error e = (*backend)->addPlan(plan))
          return e;
    backends.push_back(std::move(*backend));
  }
  impl->cuda = std::move(backends.front());
  impl->cudaPeers.clear();
  for (size_t d = 1; d < backends.size(); ++d)
    impl->cudaPeers.push_back(std::move(backends[d]));
  return llvm::Error::success();
}

std::string Model::deviceName() const {
  if (impl->cuda && !impl->cudaPeers.empty())
    return std::to_string(impl->cudaPeers.size() + 1) + " CUDA devices: " +
           impl->cuda->describe() + " and " +
           std::to_string(impl->cudaPeers.size()) + " more";
  if (impl->cuda)
    return impl->cuda->describe();
  return "CPU, " + std::to_string(impl->pool->size()) + " thread" +
         (impl->pool->size() == 1 ? "" : "s");
}

const CompileStats &Model::compileStats() const { return impl->stats; }
std::vector<ValueInfo> Model::inputs() const { return impl->inputInfo; }
std::vector<ValueInfo> Model::params() const { return impl->paramInfo; }
std::vector<int64_t> Model::layerWidths() const {
  std::vector<int64_t> widths;
  for (const ValueInfo &p : impl->paramInfo)
    if (p.shape.size() == 2)
      widths.push_back(p.shape[1]);
  return widths.empty() ? std::vector<int64_t>{1} : widths;
}
bool Model::selfLoops() const { return impl->selfLoops; }

std::string Model::planIR() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  impl->plan->print(os);
  return s;
}

llvm::Expected<ModelOp> Model::planFor(bool training) const {
  if (!impl->graph)
    return llvm::createStringError("no graph: call setGraph first");
  if (training && !impl->trainModel)
    return llvm::createStringError(
        "the model was compiled without its training plan "
        "(CompileOptions::training)");
  return training ? impl->trainModel : impl->model;
}

llvm::Expected<PlanMemory> Model::memoryProblem(bool training,
                                                int64_t pinBelow,
                                                int64_t intervals) const {
  auto plan = planFor(training);
  if (!plan)
    return plan.takeError();
  return planMemoryProblem(*plan, sizeOf(*impl->graph), pinBelow, intervals);
}

llvm::Expected<std::vector<StepTraffic>>
Model::kernelTraffic(bool training) const {
  auto plan = planFor(training);
  if (!plan)
    return plan.takeError();
  return saga::kernelTraffic(*plan, sizeOf(*impl->graph));
}

llvm::Expected<std::string>
Model::chunkedSchedule(bool training, const ForwardOptions &options) {
  auto plan = planFor(training);
  if (!plan)
    return plan.takeError();
  if (options.memoryBudget <= 0)
    return llvm::createStringError("a chunked schedule needs a memory budget");
  return describeChunked(*plan, *impl->graph,
                         impl->chunkSource ? impl->chunkSource
                                           : impl->chunks.get(),
                         {options.memoryBudget, options.intervals,
                          options.chunkGroup, options.scratch, options.directIO,
                          impl->chunkedPlans.get()});
}

llvm::Error Model::setGraph(const Graph &graph) {
  if (graph.selfLoops != impl->selfLoops)
    return llvm::createStringError(
        std::string("the model's graph declaration ") +
        (impl->selfLoops ? "asks for self loops" : "has no self loops") +
        " but the graph was built " +
        (graph.selfLoops ? "with" : "without") + " them");
  if (std::string why = graph.graphOffsetsError(); !why.empty())
    return llvm::createStringError("the batch of graphs is malformed: " + why);
  if (impl->graph != &graph) {
    impl->chunks = std::make_unique<EdgeChunkCache>(graph);
    impl->chunkedPlans = std::make_unique<ChunkedPlanCache>();
    // Filled again for the new graph's rows when a run needs them.
    for (const auto &name : impl->defaulted)
      impl->inputs.erase(name.getKey());
    impl->defaulted.clear();
  }
  for (CudaBackend *b : impl->cudaAll())
    b->invalidateGraph();
  impl->graph = &graph;
  return llvm::Error::success();
}

void Model::setChunkSource(ChunkSource *source) {
  impl->chunkSource = source;
}

llvm::Error Model::setInputRows(llvm::StringRef name, RowReader reader) {
  auto info = llvm::find_if(impl->inputInfo,
                            [&](const ValueInfo &i) { return i.name == name; });
  if (info == impl->inputInfo.end())
    return llvm::createStringError("the model has no graph input '" +
                                   name.str() + "'");
  if (info->domain != ValueInfo::Vertex || info->dtype != DType::F32)
    return llvm::createStringError("graph input '" + name.str() +
                                   "' is not a float vertex input: it cannot "
                                   "stream by rows");
  impl->inputs.erase(name);
  impl->rowReaders[name.str()] = std::move(reader);
  return llvm::Error::success();
}

llvm::Error Model::setInput(llvm::StringRef name, Tensor value) {
  if (!llvm::any_of(impl->inputInfo,
                    [&](const ValueInfo &i) { return i.name == name; }))
    return llvm::createStringError("the model has no graph input '" +
                                   name.str() + "'");
  impl->rowReaders.erase(name.str());
  impl->defaulted.erase(name);
  impl->inputs[name] = std::move(value);
  for (CudaBackend *b : impl->cudaAll())
    b->invalidateInput(name.str());
  return llvm::Error::success();
}

llvm::Expected<Tensor> Model::takeInput(llvm::StringRef name) {
  auto it = impl->inputs.find(name);
  if (it == impl->inputs.end())
    return llvm::createStringError("graph input '" + name.str() +
                                   "' is not bound to a tensor");
  Tensor t = std::move(it->second);
  impl->inputs.erase(it);
  impl->defaulted.erase(name);
  for (CudaBackend *b : impl->cudaAll())
    b->invalidateInput(name.str());
  return t;
}

int64_t Model::hops() const {
  // The most propagations on a path from an input to a result: a kernel
  // over edges that reads a vertex value at the edges' other end (its
  // first saga.operand_groups operands) adds a hop to it.
  llvm::DenseMap<Value, int64_t> depth;
  int64_t most = 0;
  for (Operation &op : impl->model.getBody().front()) {
    int64_t d = 0;
    auto launch = dyn_cast<LaunchOp>(op);
    func::FuncOp kernel;
    if (launch && (launch.getPropagate() || launch.getEdgeMap()))
      kernel = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          launch, launch.getCalleeAttr());
    auto groups = kernel ? kernel->getAttrOfType<DenseI64ArrayAttr>(
                               "saga.operand_groups")
                         : DenseI64ArrayAttr();
    for (auto [i, v] : llvm::enumerate(op.getOperands())) {
      auto domain = dyn_cast<DomainType>(v.getType());
      bool atSource = groups && int64_t(i) < groups[0] && domain &&
                      !domain.isEdgeDomain();
      d = std::max(d, depth.lookup(v) + (atSource ? 1 : 0));
    }
    for (Value r : op.getResults())
      depth[r] = d;
    most = std::max(most, d);
  }
  return most;
}

llvm::Error Model::setParam(llvm::StringRef name, Tensor value) {
  auto it = llvm::find_if(impl->paramInfo,
                          [&](const ValueInfo &i) { return i.name == name; });
  if (it == impl->paramInfo.end())
    return llvm::createStringError("the model has no parameter '" +
                                   name.str() + "'");
  if (value.shape() != it->shape)
    return llvm::createStringError(
        "parameter '" + name.str() + "' needs " +
        Tensor::describe(it->shape, DType::F32) + ", got " + value.describe());
  impl->params[name] = std::move(value);
  return llvm::Error::success();
}

void Model::initParams(uint64_t seed) {
  for (const ValueInfo &info : impl->paramInfo) {
    if (impl->params.count(info.name))
      continue;
    Tensor t(info.shape);
    int64_t n = t.numElements();
    if (info.init == "glorot") {
      int64_t fanIn = info.shape[0], fanOut = n / fanIn;
      float limit = std::sqrt(6.0f / float(fanIn + fanOut));
      SplitMix rng{seed ^ hashName(info.name)};
      for (int64_t i = 0; i < n; ++i)
        t.f32()[i] = (2 * rng.uniform() - 1) * limit;
    } else {
      float v = info.init == "ones" ? 1.0f
                : info.init == "constant" ? float(info.initValue)
                                          : 0.0f;
      std::fill(t.f32(), t.f32() + n, v);
    }
    impl->params[info.name] = std::move(t);
  }
}

llvm::Error Model::setDistribution(Distribution *dist) {
  if (dist && !impl->distributedPlans)
    return llvm::createStringError(
        "a model trained on a part of a graph must be compiled with "
        "CompileOptions::distributed");
  if (dist && impl->cuda)
    return llvm::createStringError(
        "training on a part of a graph runs on the CPU; the CUDA device "
        "does not exchange halos yet");
  impl->dist = dist;
  return llvm::Error::success();
}

const Tensor *Model::param(llvm::StringRef name) const {
  auto it = impl->params.find(name);
  return it == impl->params.end() ? nullptr : &it->second;
}

Tensor *Model::mutableParam(llvm::StringRef name) {
  auto it = impl->params.find(name);
  return it == impl->params.end() ? nullptr : &it->second;
}

llvm::Expected<ForwardResult> Model::forward(const ForwardOptions &options) {
  auto results = run(impl->model, *impl->kernels, options, /*seed=*/0,
                     options.argmaxPrediction
                         ? ExecutionContext::VertexOutputs::Argmax
                         : ExecutionContext::VertexOutputs::Rows);
  if (!results)
    return results.takeError();
  ForwardResult r;
  r.seconds = results->seconds;
  r.peakBytes = results->peakBytes;
  r.sourceIntervals = results->sourceIntervals;
  r.chunked = results->chunked;
  r.profile = std::move(results->profile);
  std::vector<Tensor> &values = results->values;
  const size_t named = impl->outputNames.size();
  r.prediction = std::move(values[0]);
  // A link predictor's loss needs pairs; run without them (to embed the
  // vertices) it has none.
  bool pairLossWithoutPairs = false;
  if (!options.pairs && values.size() > 1 + named)
    impl->model.walk([&](PairBceOp) { pairLossWithoutPairs = true; });
  if (values.size() > 1 + named && !pairLossWithoutPairs)
    r.loss = values[1].f32()[0];
  for (size_t i = 0; i < named; ++i)
    r.outputs.emplace_back(impl->outputNames[i],
                           std::move(values[values.size() - named + i]));
  return r;
}

llvm::Expected<TrainStepResult> Model::trainStep(const ForwardOptions &options,
                                                 uint64_t seed) {
  if (!impl->trainModel)
    return llvm::createStringError(
        "the model was compiled without its training plan "
        "(CompileOptions::training)");
  // The step's prediction rows are not part of its result: a chunked run
  // does not gather them.
  auto results = run(impl->trainModel, *impl->trainKernels, options, seed,
                     ExecutionContext::VertexOutputs::Drop);
  if (!results)
    return results.takeError();
  TrainStepResult r;
  r.seconds = results->seconds;
  r.peakBytes = results->peakBytes;
  r.sourceIntervals = results->sourceIntervals;
  r.chunked = results->chunked;
  r.profile = std::move(results->profile);
  auto names = impl->trainModel->getAttrOfType<ArrayAttr>("saga.gradients");
  size_t first = results->values.size() - names.size();
  r.loss = results->values[first - 1].f32()[0];
  for (auto [i, name] : llvm::enumerate(names))
    r.gradients.emplace_back(cast<StringAttr>(name).str(),
                             std::move(results->values[first + i]));
  return r;
}

llvm::Error Model::checkPlanFits(ModelOp plan) {
  const Graph *g = impl->graph;
  auto key = std::make_pair(plan.getOperation(), g);
  if (impl->plansThatFit.count(key))
    return llvm::Error::success();
  // The plan's own buffers at their peak (inputs and parameters are in
  // memory already): each lives from its writer to its last reader.
  PlanMemory pm = planMemoryProblem(plan, sizeOf(*g), /*pinBelow=*/0, 1);
  const MemoryProblem &p = pm.problem;
  std::vector<int> first(p.tensors.size(), -1), last(p.tensors.size(), -1);
  for (auto [k, op] : llvm::enumerate(p.ops))
    for (const std::vector<int> *list : {&op.reads, &op.writes, &op.updates})
      for (int t : *list) {
        if (first[size_t(t)] < 0)
          first[size_t(t)] = int(k);
        last[size_t(t)] = int(k);
      }
  std::vector<int64_t> delta(p.ops.size() + 1, 0);
  for (size_t t = 0; t < p.tensors.size(); ++t)
    if (!p.tensors[t].input && first[t] >= 0) {
      delta[size_t(first[t])] += p.tensors[t].bytes;
      delta[size_t(last[t]) + 1] -= p.tensors[t].bytes;
    }
  int64_t live = 0, peak = 0;
  for (int64_t d : delta)
    peak = std::max(peak, live += d);
  if (llvm::Error e = checkMemory(
          uint64_t(peak),
          std::string(plan == impl->trainModel ? "the training step"
                                               : "the forward pass") +
              " on this graph (" + std::to_string(g->numVertices) +
              " vertices, " + std::to_string(g->numEdges) +
              " edges) keeps buffers alive at once that"))
    return llvm::createStringError(
        llvm::toString(std::move(e)) +
        ": run it out of core with a memory budget (sagac --memory-budget "
        "SIZE, ForwardOptions::memoryBudget)");
  impl->plansThatFit.insert(key);
  return llvm::Error::success();
}

llvm::Expected<Model::RunResult>
Model::run(ModelOp plan, const KernelDevice &kernels,
           const ForwardOptions &options, uint64_t seed,
           ExecutionContext::VertexOutputs outputs) {
  if (!impl->graph)
    return llvm::createStringError("no graph: call setGraph first");
  const Graph &g = *impl->graph;
  if (options.memoryBudget == 0 && g.numEdges > 0 && g.inSources.empty())
    return llvm::createStringError(
        "the graph's edges stream from a file: the run needs a memory budget");
  for (const ValueInfo &info : impl->inputInfo) {
    if (impl->inputs.count(info.name))
      continue;
    if (impl->rowReaders.count(info.name)) {
      if (options.memoryBudget == 0)
        return llvm::createStringError(
            "graph input '" + info.name +
            "' streams from a file: the run needs a memory budget");
      continue;
    }
    if (!info.defaultValue)
      return llvm::createStringError("graph input '" + info.name +
                                     "' is not set");
    // Under a budget each piece is filled when the plan loads it (an edge
    // input's [E, ...] never exists whole).
    if (options.memoryBudget > 0) {
      impl->inputDefaults[info.name] = float(*info.defaultValue);
      continue;
    }
    std::vector<int64_t> shape{info.domain == ValueInfo::Edge
                                   ? g.numEdges
                                   : int64_t(g.numVertices)};
    llvm::append_range(shape, info.shape);
    if (llvm::Error e = checkMemory(
            bytesOf(shape, 4),
            "graph input '" + info.name + "' (its default, one row per " +
                (info.domain == ValueInfo::Edge ? "edge" : "vertex") + ")"))
      return std::move(e);
    Tensor t(shape);
    std::fill(t.f32(), t.f32() + t.numElements(), float(*info.defaultValue));
    impl->inputs[info.name] = std::move(t);
    impl->defaulted.insert(info.name);
  }
  ExecutionContext ec;
  ec.graph = &g;
  ec.pool = impl->pool.get();
  ec.kernels = &kernels;
  ec.seed = seed;
  ec.inputs = &impl->inputs;
  ec.params = &impl->params;
  ec.lossMask = options.lossMask;
  ec.exactLossMask = options.exactLossMask;
  ec.pairs = options.pairs;
  ec.reuseBuffers = options.reuseBuffers;
  if (options.sourceIntervals < 0)
    return llvm::createStringError("source intervals must be 0 (automatic), "
                                   "1 (off) or more, not " +
                                   std::to_string(options.sourceIntervals));
  ec.sourceIntervals = options.sourceIntervals;
  ec.chunks = impl->chunks.get();
  ec.chunkSource = impl->chunkSource;
  ec.rowReaders = &impl->rowReaders;
  ec.inputDefaults = &impl->inputDefaults;
  ec.vertexOutputs = outputs;
  ec.dist = impl->dist;
  ec.degrees = options.degrees;
  ec.vertexIds = options.vertexIds;
  ec.rowLevels = options.rowLevels;
  ec.extentsCache = &impl->extents;
  ec.propagationBlocks = options.propagationBlocks;
  if (const std::vector<int64_t> *b = options.propagationBlocks) {
    bool valid = b->size() >= 2 && b->front() == 0 &&
                 b->back() == g.numVertices && !impl->dist;
    for (size_t i = 1; valid && i < b->size(); ++i)
      valid = (*b)[i] > (*b)[i - 1] &&
              (i + 1 == b->size() || (*b)[i] % kRowsPerTask == 0);
    if (!valid)
      return llvm::createStringError(
          "propagation blocks must ascend from 0 to the vertex count with "
          "inner bounds that are multiples of " +
          std::to_string(kRowsPerTask) + ", on one process");
  }
  if (!options.rowLevels.empty() &&
      (options.rowLevels.back() != g.numVertices ||
       !std::is_sorted(options.rowLevels.begin(), options.rowLevels.end()) ||
       options.rowLevels.front() < 0))
    return llvm::createStringError("row levels must ascend to the graph's "
                                   "vertex count");
  if ((options.degrees || options.vertexIds || !options.rowLevels.empty()) &&
      (options.memoryBudget > 0 || impl->cuda || impl->dist))
    return llvm::createStringError(
        "a sampled graph's degrees and ids run in memory on the CPU, on one "
        "process");
  if (options.degrees && int64_t(options.degrees->size()) != g.numVertices)
    return llvm::createStringError("the degrees given are not one per "
                                   "vertex of the graph");
  if (options.vertexIds && int64_t(options.vertexIds->size()) != g.numVertices)
    return llvm::createStringError("the vertex ids given are not one per "
                                   "vertex of the graph");
  if (impl->dist && options.memoryBudget > 0)
    return llvm::createStringError(
        "a part of a partitioned graph runs in memory: no memory budget");
  if (options.memoryBudget == 0 && !impl->cuda && options.rowLevels.empty())
    if (llvm::Error e = checkPlanFits(plan))
      return std::move(e);
  int64_t intervalsUsed = 1;
  ec.intervalsUsed = &intervalsUsed;
  std::vector<std::pair<std::string, double>> profile;
  if (options.profile)
    ec.profile = &profile;
  size_t peakBytes = 0;
  ec.peakBytes = &peakBytes;
  auto start = std::chrono::steady_clock::now();
  ChunkedStats chunked;
  if (options.memoryBudget < 0)
    return llvm::createStringError("the memory budget must be positive");
  ChunkedOptions co{options.memoryBudget, options.intervals,
                    options.chunkGroup,   options.scratch,
                    options.directIO,     impl->chunkedPlans.get(),
                    options.chunkReadAhead, options.chunkProgress,
                    options.selectiveLoading, options.interleaveRows,
                    options.peerHandoffs};
  if (!impl->cudaPeers.empty() && options.memoryBudget <= 0)
    return llvm::createStringError(
        "a run on " + std::to_string(impl->cudaPeers.size() + 1) +
        " CUDA devices is a chunked run: give it a memory budget per device "
        "(--memory-budget)");
  std::vector<CudaBackend *> peers;
  for (const auto &p : impl->cudaPeers)
    peers.push_back(p.get());
  auto results =
      options.memoryBudget > 0
          ? (impl->cuda ? impl->cuda->executeChunked(plan, ec, co, &chunked,
                                                     peers)
                        : executeChunked(plan, ec, co, &chunked))
          : (impl->cuda ? impl->cuda->execute(plan, ec) : execute(plan, ec));
  if (!results)
    return results.takeError();
  RunResult r;
  r.seconds = secondsSince(start);
  r.peakBytes = peakBytes;
  r.sourceIntervals = intervalsUsed;
  r.chunked = chunked;
  r.profile = std::move(profile);
  r.values = std::move(*results);
  return r;
}

llvm::Expected<FeatureAndLabel>
saga::featureAndLabelInputs(const Model &model, llvm::StringRef who,
                            bool needLabels) {
  FeatureAndLabel r;
  for (const ValueInfo &in : model.inputs()) {
    if (in.domain != ValueInfo::Vertex)
      continue;
    std::string &name = in.dtype == DType::I32 ? r.labels : r.features;
    if (!name.empty())
      return llvm::createStringError(
          who.str() + ": the model must have one f32 vertex input (the "
          "features) and one label input; it has two " +
          (in.dtype == DType::I32 ? "label" : "feature") + " inputs ('" +
          name + "' and '" + in.name + "')");
    name = in.name;
  }
  if (!needLabels && r.labels.empty() && !r.features.empty())
    return r;
  if (r.features.empty() || r.labels.empty())
    return llvm::createStringError(
        who.str() + ": the model must have one f32 vertex input (the "
        "features, 'vertex x: f32[F]') and one label input ('vertex label: "
        "class[C]')");
  return r;
}
