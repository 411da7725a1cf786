//===- Model.h - Saga's C++ API: compile a model, run it on a graph -*- C++ -*-===//
//
//   auto model = saga::Model::compileFile("gcn.saga");      // parse, lower, JIT
//   if (!model) { llvm::errs() << toString(model.takeError()); return 1; }
//   (*model)->setGraph(graph);                              // a saga::Graph
//   (*model)->setInput("x", features);                      // by graph-input name
//   (*model)->initParams(/*seed=*/0);                       // or setParam(...)
//   auto out = (*model)->forward();                         // out.prediction, out.loss
//
// Errors (a bad .saga file, a wrong input shape, a missing input) come back
// as llvm::Error with a message that says what and where. Compiled kernels
// live as long as the Model.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_API_MODEL_H
#define SAGA_API_MODEL_H

#include "runtime/exec/ChunkedStats.h"
#include "runtime/exec/Executor.h"
#include "runtime/graph/Graph.h"
#include "runtime/memory/Tensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

// No MLIR header: a program built against find_package(Saga) sees LLVM's
// support headers only (test/install/ checks it).
namespace mlir {
class ModuleOp;
} // namespace mlir

namespace saga {

class Distribution;
class KernelDevice;
class ModelOp;
struct PlanMemory;     // analysis/PlanMemory.h
struct StepTraffic;    // analysis/KernelTraffic.h

struct CompileOptions {
  /// 0: no optimisation passes; 2: all (GEMM extraction, ...).
  unsigned optLevel = 2;
  /// Threads for running kernels (>= 1).
  unsigned threads = 1;
  /// Also compile the training plan (forward with dropout + backward).
  bool training = false;
  /// -O2 passes to leave out (saga::optionalPassNames(): operator-motion,
  /// extract-gemm, reorder-linear, fuse-propagation, fuse-epilogue, cse, rematerialize), to measure what
  /// each one does. Without fuse-propagation every edge function writes
  /// its values to edge tensors that a second kernel reduces (as at -O0).
  std::vector<std::string> disabledPasses;
  /// For training on a part of a partitioned graph (setDistribution): no
  /// epilogue fused into a reversed propagation (its rows are partial sums
  /// until the parts add them up). Results are the same.
  bool distributed = false;
  /// The training plan runs on sampled mini-batches (MiniBatches): compiled
  /// for their small buffers (PlanOptions::miniBatch). Results are the same.
  bool miniBatch = false;
  /// Vertex values of the model body to return from forward() besides the
  /// prediction, by name: the value the name holds at the end of the model
  /// (e.g. `h`, the hidden embeddings). ForwardResult::outputs, in this
  /// order. An unknown name or a value that is not one row per vertex is a
  /// compile error.
  std::vector<std::string> outputs;
};

/// Time spent in each compile phase, in seconds.
struct CompileStats {
  double frontEnd = 0, lowering = 0, jit = 0;
  /// Kernel sets (inference, training) whose object code came from the
  /// CPU object cache (CpuKernels::objectCacheFolder()), of `kernelSets`.
  int kernelSetsCached = 0, kernelSets = 0;
  double total() const { return frontEnd + lowering + jit; }
};

/// A graph input or a parameter, as the model declares it.
struct ValueInfo {
  std::string name;
  std::vector<int64_t> shape; // per vertex/edge for inputs; whole for params
  DType dtype = DType::F32;
  enum Domain { Vertex, Edge, Param } domain = Vertex;
  std::string init;              // parameters: glorot, zeros, ones, constant
  double initValue = 0;          // constant initialiser
  std::optional<double> defaultValue; // edge inputs with a default
};

struct ForwardOptions {
  /// Vertices the loss averages over (e.g. the training split); empty: all
  /// labelled vertices.
  std::vector<int32_t> lossMask;
  /// The loss averages over exactly `lossMask`, even when it is empty (a
  /// part of a partitioned graph that owns no training vertex).
  bool exactLossMask = false;
  /// Link prediction: the labelled pairs a `pair_bce` loss scores (the
  /// caller's, outliving the run; PairSet::make). Null: none.
  const PairSet *pairs = nullptr;
  /// Record the wall time of every plan step in ForwardResult::profile.
  bool profile = false;
  /// Let kernel results take over the buffers of operands that die with the
  /// kernel (see ExecutionContext::reuseBuffers); off only to measure it.
  bool reuseBuffers = true;
  /// Propagations over source intervals (NGra's 2-D chunks, sized to the
  /// last-level cache): 0 decides per propagation (dense graphs whose
  /// gathered rows outgrow the cache), 1 never, P > 1 always P intervals.
  /// Results are the same bit for bit.
  int64_t sourceIntervals = 0;
  /// Out of core (runtime/exec/ChunkedExecutor.h): with a budget in bytes,
  /// the plan's buffers, inputs and parameters live in a device tier of
  /// that size over a next tier (host RAM, or spill files in `scratch`);
  /// vertex values split into row intervals. Same results bit for bit.
  int64_t memoryBudget = 0;
  std::string scratch;
  bool directIO = false;   // O_DIRECT spills
  int64_t intervals = 0;   // 0: the smallest that fits the budget
  /// From a graph file (Model::setChunkSource with GraphFileChunks): read
  /// the chunks on their own thread ahead of the kernels that need them.
  bool chunkReadAhead = true;
  /// Under a budget, with the graph in memory and spills in host RAM:
  /// chunks load only the rows of their other end they read, where that
  /// moves fewer bytes (ChunkedOptions::selective).
  bool selectiveLoading = true;
  /// Under a budget: consecutive ops over rows run interval by interval
  /// (ChunkedOptions::interleave); false runs each over every interval
  /// before the next. Same results bit for bit.
  bool interleaveRows = true;
  /// On several CUDA devices (useCuda with ordinals): a device hands what
  /// the next reads over their peer link; false: through host memory.
  bool peerHandoffs = true;
  /// Under a budget: called after each step of the chunked schedule with
  /// the steps done and their count (ChunkedOptions::progress).
  std::function<void(int64_t done, int64_t steps)> chunkProgress;
  /// Under a memory budget, forward() returns each vertex's predicted
  /// class (int32 [V], the argmax of its row) as `prediction` instead of
  /// the rows: what accuracy needs, at a fraction of the memory.
  bool argmaxPrediction = false;
  /// Destination intervals per chunk group of a propagation (0: the group
  /// whose plan moves the fewest bytes). Same results at any group.
  int64_t chunkGroup = 0;
  /// The graph is a sample of a larger one (a mini-batch,
  /// api/MiniBatches.h): per vertex, the degree `v.deg` reads
  /// (the larger graph's in-degree) and the id `v.id` reads. Null: the
  /// graph's own. In memory, on the CPU.
  const std::vector<float> *degrees = nullptr;
  const std::vector<int32_t> *vertexIds = nullptr;
  /// A sampled batch's rows in hop order: rows [0, rowLevels[k]) lie within
  /// k hops of the loss mask, which is rows [0, rowLevels[0]); the plan's
  /// ops then compute only the rows the loss depends on (a layer over its
  /// message-flow block). Empty: all rows.
  std::vector<int64_t> rowLevels;
  /// The row blocks of the kernels over in-edges (propagations, edge maps)
  /// instead of the executor's blocks of about equal in-edges: ascending
  /// from 0 to the vertex count, inner bounds multiples of 256 (the blocks
  /// sums over rows are formed in), e.g. cut by ROC's cost model
  /// (rowBlocksByCost, runtime/distributed/Partitioner.h). Same results.
  const std::vector<int64_t> *propagationBlocks = nullptr;
};

struct TrainStepResult {
  double loss = 0;
  /// d loss / d parameter, in the order of params().
  std::vector<std::pair<std::string, Tensor>> gradients;
  double seconds = 0;
  /// The most bytes of the plan's own buffers alive at once (activations,
  /// gradients, temporaries; not the graph, inputs or parameters).
  size_t peakBytes = 0;
  /// With ForwardOptions::profile: (plan step, seconds), in plan order.
  std::vector<std::pair<std::string, double>> profile;
  /// The most source intervals a propagation ran over (1: none chunked).
  int64_t sourceIntervals = 1;
  /// With ForwardOptions::memoryBudget: intervals, planned and moved bytes.
  ChunkedStats chunked;
};

struct ForwardResult {
  Tensor prediction;           // the model's `out`, [V, ...]
  std::optional<double> loss;  // the model's `loss`, when it has one
  /// CompileOptions::outputs: (name, [V, ...] rows), in that order.
  std::vector<std::pair<std::string, Tensor>> outputs;
  double seconds = 0;
  std::vector<std::pair<std::string, double>> profile; // step, seconds
  size_t peakBytes = 0; // as in TrainStepResult
  int64_t sourceIntervals = 1; // as in TrainStepResult
  ChunkedStats chunked;         // as in TrainStepResult
};

class Model {
public:
  static llvm::Expected<std::unique_ptr<Model>>
  compileFile(const std::string &path, const CompileOptions &options = {});
  static llvm::Expected<std::unique_ptr<Model>>
  compileSource(llvm::StringRef source, llvm::StringRef name = "<string>",
                const CompileOptions &options = {});
  ~Model();

  const CompileStats &compileStats() const;
  std::vector<ValueInfo> inputs() const;
  std::vector<ValueInfo> params() const;
  /// The output widths of the 2-D parameters (the layers' widths; {1}
  /// without any): the widths ROC's cost model scales its per-vertex
  /// features by (runtime/distributed/Partitioner.h).
  std::vector<int64_t> layerWidths() const;
  /// Whether the graph declared `self_loops` (added by setGraph's caller:
  /// build the Graph with addSelfLoops = selfLoops()).
  bool selfLoops() const;
  /// The execution plan (saga dialect, plan level), for inspection.
  std::string planIR() const;

  /// Where the generated kernels run: the CPU (the default), or a device
  /// `make` builds from a plan module (its kernel functions), once for the
  /// inference plan and once for the training plan. The executors, GEMMs
  /// and losses stay as they are.
  using KernelDeviceFactory =
      std::function<llvm::Expected<std::unique_ptr<KernelDevice>>(
          mlir::ModuleOp plan)>;
  llvm::Error setKernelDevice(const KernelDeviceFactory &make);

  /// Runs every later forward() and trainStep() on a CUDA device
  /// (runtime/exec/cuda/CudaExecutor.h): opens device 0 through the driver
  /// (loaded at run time) and compiles the plans' kernels with NVRTC.
  /// Errors say what is missing: the driver, a device, NVRTC or cuBLAS.
  /// Runs under a memory budget are refused on it (CPU only for now).
  llvm::Error useCuda();
  /// The same over several CUDA devices (their ordinals; the first is
  /// device 0 of the run): runs under a memory budget spread each
  /// destination interval's steps over them (CudaBackend::executeChunked
  /// with others); runs without a budget are refused.
  llvm::Error useCuda(const std::vector<int> &ordinals);
  /// "CPU, 2 threads", or the CUDA device's description.
  std::string deviceName() const;

  /// The inference (or training) plan's steps, sized for the graph set, as
  /// a memory-planning problem (see analysis/PlanMemory.h).
  llvm::Expected<PlanMemory> memoryProblem(bool training, int64_t pinBelow,
                                           int64_t intervals = 1) const;

  /// The inference (or training) plan's steps with their compulsory bytes
  /// on the graph set (analysis/KernelTraffic.h).
  llvm::Expected<std::vector<StepTraffic>> kernelTraffic(bool training) const;

  /// The chunked schedule a run with `options.memoryBudget` follows (the
  /// training step's with `training`): intervals, steps and transfers.
  llvm::Expected<std::string> chunkedSchedule(bool training,
                                              const ForwardOptions &options);

  /// The graph stays owned by the caller and must outlive forward().
  llvm::Error setGraph(const Graph &graph);
  /// Vertex inputs have numVertices rows; edge inputs numEdges rows in edge
  /// id order. Missing edge inputs with a default are filled with it.
  llvm::Error setInput(llvm::StringRef name, Tensor value);
  /// The tensor bound to input `name`, no longer bound (moved out, no copy).
  llvm::Expected<Tensor> takeInput(llvm::StringRef name);
  /// The most propagations on a path from an input to a result of the
  /// inference plan: the hops a vertex's result depends on (2 for the
  /// examples), one sampled fan-out each in mini-batch training.
  int64_t hops() const;
  llvm::Error setParam(llvm::StringRef name, Tensor value);
  /// A float vertex input read interval by interval, when a run under a
  /// memory budget loads it (e.g. features streamed from a graph file),
  /// instead of a tensor in memory. Runs without a budget refuse it.
  llvm::Error setInputRows(llvm::StringRef name, RowReader reader);
  /// Where runs under a memory budget read the graph's 2-D chunks (the
  /// caller's, outliving the runs; null: the graph in memory). A graph
  /// without its edge arrays (GraphFile::readSkeleton) needs one.
  void setChunkSource(ChunkSource *source);
  /// Runs every later forward() and trainStep() as one part of a graph
  /// partitioned over several workers (runtime/distributed/Distribution.h):
  /// the graph set is the part's local graph, its inputs have its local
  /// rows (owned, then halo), the loss mask its local rows. Needs
  /// CompileOptions::distributed; not with a memory budget or CUDA (yet).
  /// Null: one process again.
  llvm::Error setDistribution(Distribution *dist);
  /// Initialises every parameter that was not set, from its initialiser
  /// (Glorot uniform with a seeded generator).
  void initParams(uint64_t seed);
  const Tensor *param(llvm::StringRef name) const;
  /// For optimisers: the parameter's storage, updated in place.
  Tensor *mutableParam(llvm::StringRef name);

  /// Inference: dropout off.
  llvm::Expected<ForwardResult> forward(const ForwardOptions &options = {});

  /// One training step (needs CompileOptions::training): forward with
  /// dropout masks drawn from `seed`, then the compiled backward pass.
  llvm::Expected<TrainStepResult> trainStep(const ForwardOptions &options,
                                            uint64_t seed);

private:
  struct Impl;
  /// The inference or training plan, once a graph is set.
  llvm::Expected<ModelOp> planFor(bool training) const;
  struct RunResult {
    std::vector<Tensor> values;
    double seconds = 0;
    size_t peakBytes = 0;
    int64_t sourceIntervals = 1;
    ChunkedStats chunked;
    std::vector<std::pair<std::string, double>> profile;
  };
  llvm::Expected<RunResult>
  run(ModelOp plan, const KernelDevice &kernels, const ForwardOptions &options,
      uint64_t seed,
      ExecutionContext::VertexOutputs outputs =
          ExecutionContext::VertexOutputs::Rows);
  /// An error when `plan`'s own buffers on the graph set cannot fit in the
  /// memory available (runtime/memory/MemoryLimit.h); checked once per
  /// plan and graph.
  llvm::Error checkPlanFits(ModelOp plan);
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

/// The inputs a trainer binds per batch: the model's one f32 vertex input
/// (the features) and its one class input (the labels); edge inputs are
/// left to their defaults.
struct FeatureAndLabel {
  std::string features, labels;
};
/// `who` names the trainer in the errors ("mini-batches"). Without
/// `needLabels` (link prediction) the label input may be absent (empty).
llvm::Expected<FeatureAndLabel> featureAndLabelInputs(const Model &model,
                                                      llvm::StringRef who,
                                                      bool needLabels = true);

} // namespace saga

#endif // SAGA_API_MODEL_H
