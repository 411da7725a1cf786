//===- SuiteBench.cpp - Saga's side of bench/suite.sh ---------------------===//
//
//   saga-bench-suite agg --scale 20 --edge-factor 16 --widths 16,64,256 \
//       --threads 2 --repeat 5 --dump DIR
//   saga-bench-suite train --scale 20 --edge-factor 16 --threads 2 \
//       --epochs 5 --dump DIR
//   saga-bench-suite train --model bench/models/gat64.saga \
//       --disable-pass fuse-propagation --scale 18   (bench/fusion.sh)
//
// `agg`: generates an R-MAT graph (runtime/graph/Synthetic.h: Graph500 quadrant
// probabilities, vertex ids permuted, self loops and repeated edges
// removed), and for each width F compiles bench/models/agg{F}.saga (the sum
// over in-neighbours, out[v] = sum_{u->v} x[u]), binds random features in
// [-1, 1), runs one warm-up forward pass and --repeat timed ones, and prints
// the median forward time (ForwardResult::seconds: the whole plan, including
// the output's allocation), the median time of the propagation kernel alone
// (the plan's `launch` step, from ForwardOptions::profile), and the effective
// bandwidth over the compulsory bytes 8(V+1) + 4E + 4VF + 4VF (in-offsets,
// sources, features read once, output written once).
//
// `train`: compiles --model (bench/models/gcn64.saga: 2-layer GCN, 64-64-16,
// dropout 0.5, cross-entropy + 5e-4 l2) for training, adds self loops, gives
// every vertex a random class, and trains with saga::train (runtime/
// Trainer.h: Adam, lr 0.01, the loss over all vertices) for one warm-up
// epoch plus --epochs timed ones. An epoch is what the trainer does per
// epoch: forward with dropout + backward (Model::trainStep), the Adam step,
// and an evaluation forward pass with its accuracy. --opt-level and
// --disable-pass choose the passes (CompileOptions), and the peak resident
// set (getrusage's ru_maxrss) is reported twice: before the first epoch
// (the graph, its generation, the inputs, the compiled plans and one
// evaluation pass) and at the end (so the training peak when it is higher);
// bench/fusion.sh runs one process per configuration so that each peak is
// its own.
//
// Both modes relabel the generated graph's vertices in degree order before
// building it (runtime/graph/Reorder.h; --reorder none keeps the generated ids),
// as `sagac run/train` do for graphs of 65536 vertices or more; the time it
// takes is printed beside the CSR build's. Features and labels are bound in
// the relabelled order and everything dumped is in the generated order, so
// the baselines get the graph as generated.
//
// --dump DIR writes what bench/suite_baselines.py needs, as .npy files: the
// edges (src.npy, dst.npy, int32, without self loops), and for `agg` the
// features x{F}.npy and Saga's output out{F}.npy; for `train` features.npy,
// labels.npy, the initial parameters and the initial (evaluation) loss, in
// meta.json. Each measurement ends in a `RESULT key=value ...` line for
// bench/suite.sh; `progress` lines mark the long steps.
//
//===----------------------------------------------------------------------===//

#include "bench/BenchCommon.h"
#include "api/Model.h"
#include "analysis/PlanMemory.h"
#include "runtime/graph/Reorder.h"
#include "runtime/graph/Synthetic.h"
#include "runtime/graph/GraphFile.h"
#include "api/Trainer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>

#include <sys/resource.h>
#include <unistd.h>

using namespace saga;
using namespace sagabench;

namespace {

struct Options {
  std::string mode;
  std::string model;
  std::string models = SAGA_SOURCE_DIR "/bench/models";
  std::vector<int> widths{16, 64, 256};
  int scale = 20;
  int edgeFactor = 16;
  unsigned threads = 1;
  unsigned repeat = 5;
  unsigned epochs = 5;
  uint64_t seed = 1;
  std::string dumpDir;
  unsigned optLevel = 2;
  std::vector<std::string> disabledPasses;
  bool reorder = true; // --reorder degree (default) or none
  int64_t sourceIntervals = 0; // ForwardOptions::sourceIntervals
  double oversubscription = 0;  // train: budget = unbounded peak / this
  bool selective = true;        // train: ForwardOptions::selectiveLoading
  bool interleave = true;       // train: ForwardOptions::interleaveRows
  std::string scratch;          // train: spill folder (else host RAM)
  int64_t features = 128;       // sgf: feature width
  int64_t classes = 16;         // sgf: classes
  int64_t intervals = 16;       // sgf: chunk-index intervals
  std::string out;              // sgf: the file to write
};

const char *kUsage = R"(saga-bench-suite: Saga's side of bench/suite.sh

usage: saga-bench-suite agg|train|memplan|sgf [options]
  agg                 time the sum aggregation (bench/models/agg{F}.saga) for
                      each width F on an R-MAT graph
  train               time GCN training epochs (saga::train, Adam) on an
                      R-MAT graph
  memplan             the training step's memory plan (ROC's DP against LRU
                      and stream-everything) for budgets below its peak
  sgf                 write an R-MAT graph (degree order), random features
                      (made interval by interval: they need not fit in
                      memory), random labels and 60/20/20 splits as a Saga
                      graph file, for out-of-core runs (bench/outofcore.sh)
options:
  --scale N           R-MAT: 2^N vertices (default 20)
  --edge-factor N     R-MAT: sampled edges per vertex (default 16)
  --seed S            seed of graph, features, labels, parameters (default 1)
  --threads N         worker threads (default 1)
  --widths A,B,...    agg: feature widths (default 16,64,256)
  --models DIR        agg: where agg{F}.saga are (default bench/models)
  --repeat N          agg: timed forward passes after one warm-up (default 5)
  --model FILE        train: the model (default bench/models/gcn64.saga)
  --epochs N          train: timed epochs after one warm-up epoch (default 5)
  --opt-level N       train: 0 (no optimisation) or 2 (default)
  --disable-pass A,B  train: -O2 passes to leave out (e.g. fuse-propagation)
  --reorder degree|none
                      relabel the vertices by decreasing degree before
                      building the graph (runtime/graph/Reorder.h; default degree);
                      the time it takes is printed; dumps stay in the
                      generated order
  --oversubscribe X   train: run out of core with a memory budget of the
                      unbounded step's peak / X (ForwardOptions::memoryBudget)
  --scratch DIR       train: with --oversubscribe, spill to files in DIR
                      (default: the next tier in host RAM)
  --no-selective      train: with --oversubscribe, load whole source pieces
                      (ForwardOptions::selectiveLoading off)
  --op-major          train: with --oversubscribe, run each op over every
                      interval before the next (ForwardOptions::interleaveRows
                      off)
  --source-intervals N
                      propagations over N source intervals (2-D chunks);
                      0 (default) picks cache-sized ones on dense graphs,
                      1 turns them off
  --features F        sgf: feature width (default 128)
  --classes C         sgf: classes (default 16)
  --intervals P       sgf: chunk-index intervals (default 16)
  --out FILE          sgf: the graph file to write
  --dump DIR          write the graph, features, Saga's outputs (agg) or the
                      labels and initial parameters (train) as .npy for
                      bench/suite_baselines.py
)";



void check(llvm::Error e) {
  if (e)
    fail(llvm::toString(std::move(e)));
}

template <typename T> T check(llvm::Expected<T> value) {
  if (!value)
    fail(llvm::toString(value.takeError()));
  return std::move(*value);
}

void progress(const llvm::Twine &what) {
  llvm::outs() << "progress  " << what << "\n";
  llvm::outs().flush();
}

// LLVM's cl:: registry already holds options such as -threads in libLLVM, so
// the few options here are parsed by hand (as in ForwardBench.cpp).
Options parseOptions(int argc, char **argv) {
  Options o;
  int i = 1;
  if (argc > 1 && argv[1][0] != '-')
    o.mode = argv[i++];
  for (; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "-h" || arg == "--help") {
      llvm::outs() << kUsage;
      std::exit(0);
    }
    if (arg == "--no-selective") { // a flag: no value
      o.selective = false;
      continue;
    }
    if (arg == "--op-major") { // a flag: no value
      o.interleave = false;
      continue;
    }
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      fail("option " + arg + " needs a value (see --help)");
    }
    auto number = [&](const std::string &text, uint64_t max) -> uint64_t {
      char *end = nullptr;
      errno = 0;
      unsigned long long n = std::strtoull(text.c_str(), &end, 10);
      if (text.empty() || *end || errno || n > max || text[0] == '-')
        fail("option " + arg + " needs a number up to " + std::to_string(max) +
             ", not '" + text + "'");
      return n;
    };
    if (arg == "--model")
      o.model = value;
    else if (arg == "--models")
      o.models = value;
    else if (arg == "--widths") {
      o.widths.clear();
      std::stringstream list(value);
      for (std::string item; std::getline(list, item, ',');)
        o.widths.push_back(int(number(item, 1 << 16)));
    } else if (arg == "--scale")
      o.scale = int(number(value, 30));
    else if (arg == "--edge-factor")
      o.edgeFactor = int(number(value, 1 << 20));
    else if (arg == "--threads")
      o.threads = unsigned(number(value, 1024));
    else if (arg == "--oversubscribe")
      o.oversubscription = std::atof(value.c_str());

    else if (arg == "--features")
      o.features = std::atoll(value.c_str());
    else if (arg == "--classes")
      o.classes = std::atoll(value.c_str());
    else if (arg == "--intervals")
      o.intervals = std::atoll(value.c_str());
    else if (arg == "--out")
      o.out = value;
    else if (arg == "--scratch")
      o.scratch = value;
    else if (arg == "--source-intervals")
      o.sourceIntervals = int64_t(number(value, 1 << 20));
    else if (arg == "--repeat")
      o.repeat = unsigned(number(value, 1 << 20));
    else if (arg == "--epochs")
      o.epochs = unsigned(number(value, 1 << 20));
    else if (arg == "--seed")
      o.seed = number(value, UINT64_MAX);
    else if (arg == "--reorder") {
      if (value != "degree" && value != "none")
        fail("--reorder takes degree or none, not '" + value + "'");
      o.reorder = value == "degree";
    } else if (arg == "--dump")
      o.dumpDir = value;
    else if (arg == "--opt-level")
      o.optLevel = unsigned(number(value, 2));
    else if (arg == "--disable-pass") {
      std::stringstream list(value);
      for (std::string item; std::getline(list, item, ',');)
        o.disabledPasses.push_back(item);
    } else
      fail("unknown option " + arg + " (see --help)");
  }
  if (o.mode != "agg" && o.mode != "train" && o.mode != "memplan" &&
      o.mode != "sgf")
    fail("the first argument must be agg, train, memplan or sgf (see --help)");
  if (o.mode == "sgf" && (o.out.empty() || o.features < 1 || o.classes < 1 ||
                          o.intervals < 1))
    fail("sgf needs --out FILE and positive --features, --classes, "
         "--intervals");
  if (o.repeat < 1 || o.epochs < 1 || o.threads < 1 || o.scale < 1 ||
      o.edgeFactor < 1)
    fail("--repeat, --epochs, --threads, --scale and --edge-factor must be at "
         "least 1");
  if (o.widths.empty() ||
      std::any_of(o.widths.begin(), o.widths.end(), [](int w) { return !w; }))
    fail("--widths needs positive widths");
  if (o.model.empty())
    o.model = SAGA_SOURCE_DIR "/bench/models/gcn64.saga";
  return o;
}



std::string dumpPath(const Options &o, const std::string &file) {
  if (std::error_code ec = llvm::sys::fs::create_directories(o.dumpDir))
    fail("cannot create " + o.dumpDir + ": " + ec.message());
  return o.dumpDir + "/" + file;
}

void dumpEdges(const Options &o, const EdgeList &edges) {
  int64_t e = int64_t(edges.src.size());
  writeNpy(dumpPath(o, "src.npy"), "<i4", {e}, edges.src.data(), size_t(e) * 4);
  writeNpy(dumpPath(o, "dst.npy"), "<i4", {e}, edges.dst.data(), size_t(e) * 4);
}

/// The peak resident set size of this process so far, in MiB.
double peakRssMiB() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_maxrss) / 1024.0; // KiB on Linux
}

/// The resident set size of this process now, in MiB (/proc/self/statm).
double currentRssMiB() {
  std::ifstream statm("/proc/self/statm");
  long long pages = 0, resident = 0;
  statm >> pages >> resident;
  return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}



EdgeList generate(const Options &o) {
  progress(llvm::formatv("generating R-MAT scale {0}, edge factor {1}, "
                         "seed {2}",
                         o.scale, o.edgeFactor, o.seed)
               .str());
  auto start = std::chrono::steady_clock::now();
  EdgeList edges = rmatGraph(o.scale, o.edgeFactor, o.seed);
  llvm::outs() << llvm::format(
      "graph     rmat scale %d edge factor %d seed %llu: %d vertices, %lld "
      "edges (of %lld sampled; self loops and repeats removed), generated "
      "in %.1f ms\n",
      o.scale, o.edgeFactor, (unsigned long long)o.seed, edges.numVertices,
      (long long)edges.src.size(),
      (long long)(int64_t(edges.numVertices) * o.edgeFactor),
      secondsSince(start) * 1e3);
  return edges;
}

/// With --reorder degree, relabels `edges` in degree order (after dumping
/// them as generated, with --dump) and returns the order; otherwise the
/// identity.
VertexOrder reorder(const Options &o, EdgeList &edges) {
  if (!o.dumpDir.empty())
    dumpEdges(o, edges);
  VertexOrder order;
  if (!o.reorder) {
    order.newId.resize(size_t(edges.numVertices));
    std::iota(order.newId.begin(), order.newId.end(), 0);
    order.oldId = order.newId;
    return order;
  }
  auto start = std::chrono::steady_clock::now();
  order = degreeOrder(edges);
  relabel(edges, order);
  llvm::outs() << llvm::format("prepare   degree order and relabelling %.1f "
                               "ms\n",
                               secondsSince(start) * 1e3);
  return order;
}

void degreeStats(const Graph &g) {
  int64_t maxIn = 0, maxOut = 0, isolated = 0;
  for (int32_t v = 0; v < g.numVertices; ++v) {
    int64_t in = g.inOffsets[v + 1] - g.inOffsets[v];
    maxIn = std::max(maxIn, in);
    maxOut = std::max(maxOut, g.outOffsets[v + 1] - g.outOffsets[v]);
    isolated += in == 0;
  }
  llvm::outs() << llvm::format(
      "degrees   mean in-degree %.2f, max in %lld, max out %lld, %lld "
      "vertices without in-edges\n",
      double(g.numEdges) / std::max(1, g.numVertices), (long long)maxIn,
      (long long)maxOut, (long long)isolated);
}


std::string featureInput(const Model &model) {
  for (const ValueInfo &in : model.inputs())
    if (in.domain == ValueInfo::Vertex && in.dtype == DType::F32)
      return in.name;
  fail("the model has no f32 vertex input for the features");
}

// --- agg ---------------------------------------------------------------------

int runAggregation(const Options &o) {
  EdgeList edges = generate(o);
  VertexOrder order = reorder(o, edges);
  auto start = std::chrono::steady_clock::now();
  Graph graph = Graph::build(edges.numVertices, edges.src, edges.dst,
                             /*addSelfLoops=*/false);
  llvm::outs() << llvm::format("prepare   CSR build %.1f ms\n",
                               secondsSince(start) * 1e3);
  degreeStats(graph);
  edges = EdgeList(); // the graph has them
  if (!o.dumpDir.empty()) {
    std::ofstream meta(dumpPath(o, "meta.json"));
    meta << "{\n  \"graph\": \"rmat-s" << o.scale << "-e" << o.edgeFactor
         << "\",\n  \"scale\": " << o.scale
         << ",\n  \"edge_factor\": " << o.edgeFactor
         << ",\n  \"seed\": " << o.seed
         << ",\n  \"saga_reorder\": \"" << (o.reorder ? "degree" : "none")
         << "\""
         << ",\n  \"num_vertices\": " << graph.numVertices
         << ",\n  \"num_edges\": " << graph.numEdges << "\n}\n";
    if (!meta)
      fail("cannot write " + o.dumpDir + "/meta.json");
  }
  const double v = graph.numVertices, e = double(graph.numEdges);

  for (int width : o.widths) {
    std::string path = o.models + "/agg" + std::to_string(width) + ".saga";
    progress("width " + std::to_string(width) + ": compiling " + path);
    CompileOptions options;
    options.threads = o.threads;
    std::unique_ptr<Model> model = check(Model::compileFile(path, options));
    if (featureWidth(*model) != width)
      fail(path + " has " + std::to_string(featureWidth(*model)) +
           " features per vertex, not " + std::to_string(width));
    if (model->selfLoops())
      fail(path + " declares self_loops; the aggregation has none");
    Tensor features =
        randomFeatures(graph.numVertices, width, o.seed + uint64_t(width));
    check(model->setGraph(graph));
    check(model->setInput(featureInput(*model), permuteRows(features, order)));

    progress("width " + std::to_string(width) + ": 1 warm-up + " +
             std::to_string(o.repeat) + " timed forward passes");
    ForwardOptions fo;
    fo.profile = true;
    fo.sourceIntervals = o.sourceIntervals;
    const double warmSeconds = check(model->forward(fo)).seconds;
    std::vector<double> times, kernels;
    ForwardResult last;
    for (unsigned i = 0; i < o.repeat; ++i) {
      last = ForwardResult(); // one output alive at a time
      last = check(model->forward(fo));
      times.push_back(last.seconds);
      double k = 0;
      for (auto &[step, seconds] : last.profile)
        if (llvm::StringRef(step).starts_with("launch"))
          k += seconds;
      kernels.push_back(k);
    }
    double med = median(times), kernel = median(kernels);
    double bytes = 8 * (v + 1) + 4 * e + 8 * v * width;
    llvm::outs() << llvm::format(
        "agg       F=%d: forward median %.3f ms over %u runs (min %.3f, max "
        "%.3f; warm-up %.3f); propagation kernel median %.3f ms; "
        "compulsory %.1f MB -> %.2f GB/s (kernel %.2f GB/s); compile %.1f "
        "ms; %u threads\n",
        width, med * 1e3, o.repeat,
        *std::min_element(times.begin(), times.end()) * 1e3,
        *std::max_element(times.begin(), times.end()) * 1e3, warmSeconds * 1e3,
        kernel * 1e3, bytes / 1e6, bytes / med / 1e9, bytes / kernel / 1e9,
        model->compileStats().total() * 1e3, o.threads);
    if (!o.dumpDir.empty()) {
      progress("width " + std::to_string(width) + ": dumping x" +
               std::to_string(width) + ".npy and out" + std::to_string(width) +
               ".npy");
      writeTensor(dumpPath(o, "x" + std::to_string(width) + ".npy"), features);
      writeTensor(dumpPath(o, "out" + std::to_string(width) + ".npy"),
                  unpermuteRows(last.prediction, order));
    }
    llvm::outs() << llvm::format(
        "RESULT kind=agg system=saga scale=%d edge_factor=%d vertices=%d "
        "edges=%lld width=%d threads=%u ms=%.3f kernel_ms=%.3f "
        "compile_ms=%.3f reorder=%s source_intervals=%lld\n",
        o.scale, o.edgeFactor, graph.numVertices, (long long)graph.numEdges,
        width, o.threads, med * 1e3, kernel * 1e3,
        model->compileStats().total() * 1e3, o.reorder ? "degree" : "none",
        (long long)last.sourceIntervals);
    llvm::outs().flush();
  }
  return 0;
}

// --- memplan -----------------------------------------------------------------

/// ROC's memory plan for the training step of --model on the R-MAT graph:
/// for device budgets from the step's unbounded peak down to below the
/// largest operator's working set, the bytes the exact DP (or its stated
/// fallback), LRU and stream-everything move per step.
int runMemoryPlan(const Options &o) {
  CompileOptions options;
  options.threads = o.threads;
  options.training = true;
  options.optLevel = o.optLevel;
  options.disabledPasses = o.disabledPasses;
  std::string path = o.model.empty() ? SAGA_SOURCE_DIR "/bench/models/gcn64.saga"
                                     : o.model;
  std::unique_ptr<Model> model = check(Model::compileFile(path, options));
  EdgeList edges = generate(o);
  Graph graph = Graph::build(edges.numVertices, edges.src, edges.dst,
                             model->selfLoops());
  edges = EdgeList();
  check(model->setGraph(graph));
  // Vectors under 1 MiB (parameters, per-step scalars) stay resident.
  // The peak is the tensor-level plan's; budgets below it are tried at
  // tensor granularity and at the chunked level's (--source-intervals P,
  // default 8 here: row intervals and 2-D propagation chunks).
  auto mib = [](int64_t b) { return double(b) / (1 << 20); };
  PlanMemory whole = check(model->memoryProblem(/*training=*/true, 1 << 20));
  whole.problem.budget = std::numeric_limits<int64_t>::max() / 4;
  const int64_t peak = planExact(whole.problem).peakBytes;
  int64_t parts = o.sourceIntervals > 1 ? o.sourceIntervals : 8;
  for (int64_t granularity : {int64_t(1), parts}) {
  PlanMemory pm = granularity == 1
                      ? whole
                      : check(model->memoryProblem(true, 1 << 20, granularity));
  MemoryProblem &p = pm.problem;
  const int64_t minimum = minimumBudget(p);
  llvm::outs() << llvm::format(
      "memplan   %s, %lld interval(s): %zu operators, %zu tensors over 1 MiB "
      "(%.1f MiB pinned below); unbounded peak %.1f MiB, largest operator "
      "%.1f MiB\n",
      path.c_str(), (long long)granularity, p.ops.size(), p.tensors.size(),
      mib(pm.pinnedBytes), mib(peak), mib(minimum));
  for (double fraction : {1.0, 0.75, 0.5, 0.375, 0.25, 0.125}) {
    p.budget = int64_t(double(peak) * fraction);
    auto start = std::chrono::steady_clock::now();
    MemoryPlan exact = planExact(p);
    double planMs = secondsSince(start) * 1e3;
    MemoryPlan lru = planLru(p), stream = planStreamAll(p);
    for (const MemoryPlan *plan : {&exact, &lru, &stream})
      if (plan->feasible)
        if (std::string bad = validatePlan(p, *plan); !bad.empty())
          fail(plan->method + " plan is invalid: " + bad);
    if (!exact.feasible) {
      llvm::outs() << llvm::format(
          "memplan   budget %.3f x peak = %.1f MiB: infeasible (%s)\n",
          fraction, mib(p.budget), exact.error.c_str());
      continue;
    }
    llvm::outs() << llvm::format(
        "memplan   budget %.3f x peak = %.1f MiB: %s %.1f MiB moved (plan "
        "%.1f ms), LRU %.1f MiB (%.2fx), stream-all %.1f MiB (%.2fx)\n",
        fraction, mib(p.budget), exact.method.c_str(), mib(exact.bytesMoved()),
        planMs, mib(lru.bytesMoved()),
        double(lru.bytesMoved()) / double(std::max<int64_t>(1, exact.bytesMoved())),
        mib(stream.bytesMoved()),
        double(stream.bytesMoved()) /
            double(std::max<int64_t>(1, exact.bytesMoved())));
    llvm::outs() << llvm::format(
        "RESULT kind=memplan model=%s scale=%d intervals=%lld "
        "budget_fraction=%.3f budget_mib=%.1f method=%s exact_mib=%.1f "
        "lru_mib=%.1f stream_mib=%.1f\n",
        llvm::sys::path::filename(path).str().c_str(), o.scale,
        (long long)granularity, fraction,
        mib(p.budget), exact.method.substr(0, exact.method.find(' ')).c_str(),
        mib(exact.bytesMoved()), mib(lru.bytesMoved()),
        mib(stream.bytesMoved()));
  }
  }
  return 0;
}

// --- train -------------------------------------------------------------------

int runTraining(const Options &o) {
  CompileOptions options;
  options.threads = o.threads;
  options.training = true;
  options.optLevel = o.optLevel;
  options.disabledPasses = o.disabledPasses;
  std::string passes = "O" + std::to_string(o.optLevel);
  for (const std::string &p : o.disabledPasses)
    passes += ",no-" + p;
  progress("compiling " + o.model + " for training (" + passes + ")");
  std::unique_ptr<Model> model = check(Model::compileFile(o.model, options));
  const int64_t width = featureWidth(*model);

  EdgeList edges = generate(o);
  VertexOrder order = reorder(o, edges);
  const int64_t generatedEdges = int64_t(edges.src.size());
  auto start = std::chrono::steady_clock::now();
  Graph graph =
      Graph::build(edges.numVertices, edges.src, edges.dst, model->selfLoops());
  edges = EdgeList(); // the graph has them; not part of the peak measured
  llvm::outs() << llvm::format(
      "prepare   CSR build %.1f ms (%s)\n", secondsSince(start) * 1e3,
      model->selfLoops() ? "with self loops" : "no self loops");
  degreeStats(graph);
  Tensor features = randomFeatures(graph.numVertices, width, o.seed);
  if (!o.dumpDir.empty()) // in the generated order, as the edges were dumped
    writeTensor(dumpPath(o, "features.npy"), unpermuteRows(features, order));
  Tensor labels({int64_t(graph.numVertices)}, DType::I32);
  std::fill(labels.i32(), labels.i32() + labels.numElements(), -1);
  check(model->setGraph(graph));
  std::string labelName;
  for (const ValueInfo &in : model->inputs())
    if (in.domain == ValueInfo::Vertex && in.dtype == DType::I32)
      labelName = in.name;
  if (labelName.empty())
    fail(o.model + " has no class input for the labels");
  // Moved, not copied: a second [V, F] copy would count in the setup peak.
  check(model->setInput(featureInput(*model), std::move(features)));
  check(model->setInput(labelName, labels));
  model->initParams(o.seed);

  // Random classes in [0, classes) (as saga-bench-forward draws them), then
  // the evaluation loss at the initial parameters, which the baselines
  // reproduce as a check.
  int64_t classes = check(model->forward()).prediction.rowSize();
  uint64_t state = o.seed * 0x9e3779b97f4a7c15ULL + 0x4c4142454c53ULL;
  Split split;
  split.labels.resize(graph.numVertices);
  for (int32_t v = 0; v < graph.numVertices; ++v) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    labels.i32()[v] = split.labels[v] =
        int32_t((unsigned __int128)z * uint64_t(classes) >> 64);
    split.train.push_back(v); // the loss over all vertices
  }
  check(model->setInput(labelName, labels));
  ForwardOptions all;
  all.lossMask = split.train;
  ForwardResult initial = check(model->forward(all));
  double initialLoss = initial.loss ? *initial.loss : NAN;
  initial.prediction = Tensor(); // only the loss is kept; not part of the peak
  llvm::outs() << llvm::format(
      "train     %s: %lld features, %lld classes; initial loss %.6f "
      "(evaluation forward %.1f ms)\n",
      o.model.c_str(), (long long)width, (long long)classes, initialLoss,
      initial.seconds * 1e3);

  if (!o.dumpDir.empty()) {
    progress("dumping the graph, features, labels and parameters");
    // In the generated order, as the edges were dumped.
    writeTensor(dumpPath(o, "labels.npy"), unpermuteRows(labels, order));
    std::string params;
    int index = 0;
    for (const ValueInfo &p : model->params()) {
      std::string file = "param" + std::to_string(index++) + ".npy";
      writeTensor(dumpPath(o, file), *model->param(p.name));
      params += std::string(params.empty() ? "" : ", ") + "\"" +
                jsonEscape(p.name) + "\": \"" + file + "\"";
    }
    std::ofstream meta(dumpPath(o, "meta.json"));
    meta << "{\n  \"graph\": \"rmat-s" << o.scale << "-e" << o.edgeFactor
         << "\",\n  \"model\": \"" << jsonEscape(o.model)
         << "\",\n  \"num_vertices\": " << graph.numVertices
         << ",\n  \"num_edges\": " << generatedEdges
         << ",\n  \"self_loops\": " << (graph.selfLoops ? "true" : "false")
         << ",\n  \"classes\": " << classes << ",\n  \"params\": {" << params
         << "},\n  \"initial_loss\": "
         << llvm::formatv("{0:e9}", initialLoss).str() << "\n}\n";
    if (!meta)
      fail("cannot write " + o.dumpDir + "/meta.json");
  }

  double setupPeak = peakRssMiB(), base = currentRssMiB();
  TrainOptions to;
  to.epochs = 1 + o.epochs;
  to.learningRate = 0.01;
  to.optimizer = TrainOptions::Adam;
  to.seed = o.seed;
  if (o.oversubscription > 0) {
    PlanMemory pm = check(model->memoryProblem(true, 1 << 20));
    pm.problem.budget = int64_t(1) << 50;
    int64_t peak = planLru(pm.problem).peakBytes + pm.pinnedBytes;
    to.execution.memoryBudget = int64_t(double(peak) / o.oversubscription);
    to.execution.scratch = o.scratch;
    to.execution.selectiveLoading = o.selective;
    to.execution.interleaveRows = o.interleave;
    llvm::outs() << llvm::format(
        "train     out of core: unbounded step peak %.1f MiB, budget %.1f MiB "
        "(%.1fx), next tier %s\n",
        double(peak) / (1 << 20),
        double(to.execution.memoryBudget) / (1 << 20), o.oversubscription,
        o.scratch.empty() ? "host RAM" : o.scratch.c_str());
  }
  progress("training: 1 warm-up + " + std::to_string(o.epochs) +
           " timed epochs");
  std::vector<double> times;
  TrainResult result = check(train(*model, split, to, [&](const EpochStats &s) {
    llvm::outs() << llvm::format(
        "progress  epoch %u/%u  loss %.4f  train acc %.4f  %.1f ms\n", s.epoch,
        to.epochs, s.loss, s.trainAcc, s.seconds * 1e3);
    llvm::outs().flush();
    if (s.epoch > 1)
      times.push_back(s.seconds);
    if (o.oversubscription > 0) {
      const ChunkedStats &c = s.chunked;
      const auto &t = c.run.transfers;
      llvm::outs() << llvm::format(
          "progress  out of core: %lld intervals (groups of %lld), plan %s %.1f MiB, moved "
          "%.1f MiB (%.3fx the plan), overlap %.0f%%, stall %.1f ms, pool "
          "peak %.1f MiB; %lld loads of chunk rows, %.1f MiB for %.1f MiB of "
          "pieces\n",
          (long long)c.intervals, (long long)c.group, c.method.c_str(),
          double(c.plannedBytes) / (1 << 20),
          double(t.bytesLoaded + t.bytesStored) / (1 << 20),
          double(t.bytesLoaded + t.bytesStored) /
              double(std::max<int64_t>(1, c.plannedBytes)),
          100 * t.overlap(), t.stallSeconds * 1e3,
          double(c.run.poolPeak) / (1 << 20), (long long)c.rowLoads,
          double(c.rowLoadBytes) / (1 << 20),
          double(c.rowLoadWholeBytes) / (1 << 20));
    }
  }));
  double med = median(times);
  llvm::outs() << llvm::format(
      "train     epoch median %.1f ms over %u epochs (min %.1f, max %.1f; "
      "warm-up %.1f); last loss %.4f; compile %.1f ms; %u threads\n",
      med * 1e3, o.epochs, *std::min_element(times.begin(), times.end()) * 1e3,
      *std::max_element(times.begin(), times.end()) * 1e3,
      result.history.front().seconds * 1e3, result.final.loss,
      model->compileStats().total() * 1e3, o.threads);

  // Where an epoch goes: one more training step (forward with dropout and
  // backward) and one evaluation forward pass, profiled by plan step.
  progress("breakdown: one Model::trainStep and one evaluation forward");
  // (As the epochs run them: with their budget; evaluation asks for
  // classes only.)
  ForwardOptions profiledStep = to.execution;
  profiledStep.lossMask = split.train;
  profiledStep.profile = true;
  TrainStepResult step = check(model->trainStep(profiledStep, o.seed + 1000003));
  ForwardOptions profiled = to.execution;
  profiled.argmaxPrediction = true;
  profiled.profile = true;
  ForwardResult eval = check(model->forward(profiled));
  // Under a budget, the device pool's peak (the plan's buffers live there).
  const double stepPeakMiB =
      double(o.oversubscription > 0 ? step.chunked.run.poolPeak
                                    : step.peakBytes) /
      (1 << 20);
  llvm::outs() << llvm::format(
      "breakdown train step (forward with dropout + backward) %.1f ms, "
      "evaluation forward %.1f ms, the rest (Adam, accuracy) about %.1f ms; "
      "the train step's own buffers peak at %.0f MiB (under a budget: the "
      "device pool's peak)\n",
      step.seconds * 1e3, eval.seconds * 1e3,
      (med - step.seconds - eval.seconds) * 1e3, stepPeakMiB);
  for (auto &[what, seconds] : step.profile)
    if (seconds >= 0.02 * step.seconds)
      llvm::outs() << llvm::format("breakdown   train step: %-44s %8.1f ms\n",
                                   what.c_str(), seconds * 1e3);
  for (auto &[what, seconds] : eval.profile)
    if (seconds >= 0.02 * eval.seconds)
      llvm::outs() << llvm::format("breakdown   evaluation: %-44s %8.1f ms\n",
                                   what.c_str(), seconds * 1e3);
  double peak = peakRssMiB();
  llvm::outs() << llvm::format(
      "memory    peak resident set %.0f MiB; before the first epoch %.0f "
      "MiB resident (graph, inputs, parameters, plans), %.0f MiB peak "
      "(with the graph's generation and one evaluation pass)\n",
      peak, base, setupPeak);
  llvm::outs() << llvm::format(
      "RESULT kind=train system=saga scale=%d edge_factor=%d vertices=%d "
      "edges=%lld width=%lld threads=%u ms=%.3f initial_loss=%.6f "
      "last_loss=%.6f step_ms=%.3f eval_ms=%.3f passes=%s peak_rss_mib=%.0f "
      "base_rss_mib=%.0f setup_peak_rss_mib=%.0f plan_peak_mib=%.0f\n",
      o.scale, o.edgeFactor, graph.numVertices, (long long)graph.numEdges,
      (long long)width, o.threads, med * 1e3, initialLoss, result.final.loss,
      step.seconds * 1e3, eval.seconds * 1e3, passes.c_str(), peak, base,
      setupPeak, stepPeakMiB);
  return 0;
}


int writeSyntheticFile(const Options &o) {
  EdgeList edges = generate(o);
  reorder(o, edges);
  Dataset d;
  d.name = "rmat-s" + std::to_string(o.scale) + "-e" +
           std::to_string(o.edgeFactor) + "-f" + std::to_string(o.features);
  const int32_t v = edges.numVertices;
  d.numClasses = int32_t(o.classes);
  d.labels.resize(size_t(v));
  auto mix = [](uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  for (int32_t x = 0; x < v; ++x) {
    uint64_t z = mix(o.seed * 0x9e3779b97f4a7c15ULL + uint64_t(x));
    d.labels[size_t(x)] = int32_t((unsigned __int128)z * uint64_t(o.classes) >> 64);
    (z % 5 < 3 ? d.train : z % 5 == 3 ? d.val : d.test).push_back(x);
  }
  d.edges = std::move(edges);
  // Entries uniform in [-1, 1), a hash of (seed, row, column).
  FeatureRows rows;
  rows.width = o.features;
  const uint64_t seed = mix(o.seed ^ 0x66656174ULL);
  rows.fill = [&](int64_t begin, int64_t end, float *to) {
    const int64_t f = o.features;
    for (int64_t r = begin; r < end; ++r)
      for (int64_t c = 0; c < f; ++c)
        to[(r - begin) * f + c] =
            float(int64_t(mix(seed + uint64_t(r * f + c)) >> 40) -
                  (int64_t(1) << 23)) *
            (1.0f / 8388608.0f);
    progress(llvm::formatv("features: rows {0} of {1}", end, v));
  };
  progress("writing " + o.out);
  auto start = std::chrono::steady_clock::now();
  check(writeGraphFile(o.out, d, o.intervals, &rows));
  llvm::outs() << llvm::format(
      "sgf       wrote %s: %d vertices, %lld edges, %lld features, %lld "
      "classes, %lld intervals in %.1f s; peak resident set %.0f MiB\n",
      o.out.c_str(), v, (long long)d.edges.src.size(), (long long)o.features,
      (long long)o.classes, (long long)o.intervals, secondsSince(start),
      peakRssMiB());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  toolName = "saga-bench-suite";
  const Options opt = parseOptions(argc, argv);
  return opt.mode == "agg"       ? runAggregation(opt)
         : opt.mode == "memplan" ? runMemoryPlan(opt)
         : opt.mode == "sgf"     ? writeSyntheticFile(opt)
                                 : runTraining(opt);
}
