//===- ForwardBench.cpp - forward-pass time of a model on a graph ---------===//
//
//   saga-bench-forward --graph cora [--model examples/gcn.saga]
//   saga-bench-forward --graph rmat --scale 20 --edge-factor 16 --threads 2
//
// Compiles the model (JIT), builds the graph (Cora with row-normalised
// features, or an R-MAT graph with random features and labels), initialises
// the parameters from the seed, runs one warm-up forward pass and then
// --repeat timed ones, and prints the compile time, the median forward time
// (ForwardResult::seconds) and the graph's statistics. The last line,
// `RESULT key=value ...`, is for scripts (bench/forward.sh).
//
// --dump-graph DIR writes what bench/pytorch_gcn.py needs to run the same
// forward pass: the input edges (self loops are added by both sides), the
// features, the parameters and Saga's prediction, as .npy files, plus
// meta.json.
//
//===----------------------------------------------------------------------===//

#include "bench/BenchCommon.h"
#include "runtime/graph/Loaders.h"
#include "api/Model.h"
#include "runtime/graph/Synthetic.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>

using namespace saga;
using namespace sagabench;

namespace {

struct Options {
  std::string model;
  std::string graph = "rmat";
  std::string data = SAGA_SOURCE_DIR "/examples/data/cora";
  int scale = 20;
  int edgeFactor = 16;
  unsigned threads = 1;
  unsigned repeat = 10;
  uint64_t seed = 1;
  std::string dumpDir;
};

const char *kUsage = R"(saga-bench-forward: JIT compile time and forward time of a model on a graph

usage: saga-bench-forward [options]
  --model FILE        .saga model (default: examples/gcn.saga for cora,
                      bench/models/gcn64.saga for rmat)
  --graph cora|rmat   graph (default rmat)
  --data DIR          Planetoid folder for cora (default examples/data/cora)
  --scale N           R-MAT: 2^N vertices (default 20)
  --edge-factor N     R-MAT: sampled edges per vertex (default 16)
  --threads N         worker threads (default 1)
  --repeat N          timed forward passes after one warm-up (default 10)
  --seed S            seed of graph, features, labels, parameters (default 1)
  --dump-graph DIR    write edges, features, parameters and the prediction
                      as .npy (+ meta.json) for bench/pytorch_gcn.py
)";

// LLVM's cl:: registry already holds options such as -threads in libLLVM, so
// the few options here are parsed by hand.
Options parseOptions(int argc, char **argv);



void check(llvm::Error e) {
  if (e)
    fail(llvm::toString(std::move(e)));
}

Options parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "-h" || arg == "--help") {
      llvm::outs() << kUsage;
      std::exit(0);
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
    auto number = [&](uint64_t max) -> uint64_t {
      char *end = nullptr;
      errno = 0;
      unsigned long long n = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || *end || errno || n > max || value[0] == '-')
        fail("option " + arg + " needs a number up to " + std::to_string(max) +
             ", not '" + value + "'");
      return n;
    };
    if (arg == "--model")
      o.model = value;
    else if (arg == "--graph")
      o.graph = value;
    else if (arg == "--data")
      o.data = value;
    else if (arg == "--scale")
      o.scale = int(number(30));
    else if (arg == "--edge-factor")
      o.edgeFactor = int(number(1 << 20));
    else if (arg == "--threads")
      o.threads = unsigned(number(1024));
    else if (arg == "--repeat")
      o.repeat = unsigned(number(1 << 20));
    else if (arg == "--seed")
      o.seed = number(UINT64_MAX);
    else if (arg == "--dump-graph")
      o.dumpDir = value;
    else
      fail("unknown option " + arg + " (see --help)");
  }
  if (o.graph != "cora" && o.graph != "rmat")
    fail("--graph must be cora or rmat, not '" + o.graph + "'");
  if (o.repeat < 1 || o.threads < 1 || o.scale < 1 || o.edgeFactor < 1)
    fail("--repeat, --threads, --scale and --edge-factor must be at least 1");
  return o;
}



/// Binds the features to the model's f32 vertex input and the labels to its
/// class input; edge inputs must have a default.
void bindInputs(Model &model, const Tensor &features, const Tensor &labels) {
  for (const ValueInfo &in : model.inputs()) {
    if (in.domain == ValueInfo::Edge) {
      if (!in.defaultValue)
        fail("edge input '" + in.name + "' has no default");
      continue;
    }
    if (in.dtype == DType::I32) {
      check(model.setInput(in.name, labels));
      continue;
    }
    int64_t width = 1;
    for (int64_t d : in.shape)
      width *= d;
    if (width != features.rowSize())
      fail("graph input '" + in.name + "' has " + std::to_string(width) +
           " features per vertex, the graph has " +
           std::to_string(features.rowSize()));
    check(model.setInput(in.name, features));
  }
}




} // namespace

int main(int argc, char **argv) {
  toolName = "saga-bench-forward";
  const Options opt = parseOptions(argc, argv);
  const std::string &graphKind = opt.graph;
  const int scale = opt.scale, edgeFactor = opt.edgeFactor;
  const unsigned threads = opt.threads, repeat = opt.repeat;
  const uint64_t seed = opt.seed;
  const std::string &dataDir = opt.data, &dumpDir = opt.dumpDir;
  std::string path = opt.model;
  if (path.empty())
    path = graphKind == "cora" ? SAGA_SOURCE_DIR "/examples/gcn.saga"
                               : SAGA_SOURCE_DIR "/bench/models/gcn64.saga";

  // Compile first: the feature width of a synthetic graph comes from the
  // model.
  CompileOptions options;
  options.threads = threads;
  auto compiled = Model::compileFile(path, options);
  if (!compiled)
    fail(llvm::toString(compiled.takeError()));
  Model &model = **compiled;
  const CompileStats &stats = model.compileStats();

  auto start = std::chrono::steady_clock::now();
  EdgeList edges;
  Tensor features, labels;
  if (graphKind == "cora") {
    auto data = loadPlanetoid(dataDir);
    if (!data)
      fail(llvm::toString(data.takeError()));
    rowNormalize(data->features);
    edges = std::move(data->edges);
    features = std::move(data->features);
    labels = Tensor({features.rows()}, DType::I32);
    std::copy(data->labels.begin(), data->labels.end(), labels.i32());
  } else {
    edges = rmatGraph(scale, edgeFactor, seed);
    features = randomFeatures(edges.numVertices, featureWidth(model), seed);
    // Unlabelled until the class count is known (after the warm-up).
    labels = Tensor({int64_t(edges.numVertices)}, DType::I32);
    std::fill(labels.i32(), labels.i32() + labels.numElements(), -1);
  }
  double loadSeconds = secondsSince(start);

  start = std::chrono::steady_clock::now();
  Graph graph = Graph::build(edges.numVertices, edges.src, edges.dst,
                             model.selfLoops());
  double buildSeconds = secondsSince(start);
  int64_t maxIn = 0, maxOut = 0;
  for (int32_t v = 0; v < graph.numVertices; ++v) {
    maxIn = std::max(maxIn, graph.inOffsets[v + 1] - graph.inOffsets[v]);
    maxOut = std::max(maxOut, graph.outOffsets[v + 1] - graph.outOffsets[v]);
  }

  check(model.setGraph(graph));
  bindInputs(model, features, labels);
  model.initParams(seed);

  // Warm-up (first touch of the kernels and of freshly allocated memory).
  auto warm = model.forward();
  if (!warm)
    fail(llvm::toString(warm.takeError()));
  if (graphKind == "rmat") {
    // Random labels in [0, classes), a stream separate from the features.
    int64_t classes = warm->prediction.rowSize();
    uint64_t state = seed * 0x9e3779b97f4a7c15ULL + 0x4c4142454c53ULL;
    for (int64_t v = 0; v < labels.numElements(); ++v) {
      uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      z ^= z >> 31;
      labels.i32()[v] = int32_t((unsigned __int128)z * uint64_t(classes) >> 64);
    }
    bindInputs(model, features, labels);
  }

  std::vector<double> times;
  ForwardResult last;
  for (unsigned i = 0; i < repeat; ++i) {
    auto r = model.forward();
    if (!r)
      fail(llvm::toString(r.takeError()));
    times.push_back(r->seconds);
    last = std::move(*r);
  }
  double med = median(times);
  double lo = *std::min_element(times.begin(), times.end());
  double hi = *std::max_element(times.begin(), times.end());

  llvm::outs() << llvm::format(
      "model     %s\n", path.c_str());
  llvm::outs() << llvm::format(
      "graph     %s: %d vertices, %lld edges (+%d self loops = %lld), "
      "%lld features; mean in-degree %.2f, max in %lld, max out %lld\n",
      graphKind == "rmat"
          ? ("rmat scale " + std::to_string(scale) + " edge factor " +
             std::to_string(edgeFactor) + " seed " + std::to_string(seed))
                .c_str()
          : dataDir.c_str(),
      graph.numVertices, (long long)edges.src.size(),
      graph.selfLoops ? graph.numVertices : 0, (long long)graph.numEdges,
      (long long)features.rowSize(),
      double(graph.numEdges) / std::max(1, graph.numVertices),
      (long long)maxIn, (long long)maxOut);
  llvm::outs() << llvm::format(
      "prepare   %s %.1f ms, CSR build %.1f ms\n",
      graphKind == "rmat" ? "generate" : "load", loadSeconds * 1e3,
      buildSeconds * 1e3);
  llvm::outs() << llvm::format(
      "compile   %.1f ms (front end %.1f, lowering %.1f, JIT %.1f)\n",
      stats.total() * 1e3, stats.frontEnd * 1e3, stats.lowering * 1e3,
      stats.jit * 1e3);
  llvm::outs() << llvm::format(
      "forward   median %.3f ms over %u runs (min %.3f, max %.3f; warm-up "
      "%.3f), %u threads\n",
      med * 1e3, unsigned(repeat), lo * 1e3, hi * 1e3, warm->seconds * 1e3,
      unsigned(threads));
  if (last.loss)
    llvm::outs() << llvm::format("loss      %.6f\n", *last.loss);

  if (!dumpDir.empty()) {
    start = std::chrono::steady_clock::now();
    if (std::error_code ec = llvm::sys::fs::create_directories(dumpDir))
      fail("cannot create " + dumpDir + ": " + ec.message());
    std::string dir = dumpDir + "/";
    int64_t e = int64_t(edges.src.size());
    writeNpy(dir + "src.npy", "<i4", {e}, edges.src.data(), size_t(e) * 4);
    writeNpy(dir + "dst.npy", "<i4", {e}, edges.dst.data(), size_t(e) * 4);
    writeTensor(dir + "features.npy", features);
    writeTensor(dir + "prediction.npy", last.prediction);
    std::string params;
    int index = 0;
    for (const ValueInfo &p : model.params()) {
      std::string file = "param" + std::to_string(index++) + ".npy";
      writeTensor(dir + file, *model.param(p.name));
      params += std::string(params.empty() ? "" : ", ") + "\"" +
                jsonEscape(p.name) + "\": \"" + file + "\"";
    }
    std::ofstream meta(dir + "meta.json");
    meta << "{\n  \"graph\": \"" << jsonEscape(graphKind) << "\",\n"
         << "  \"model\": \"" << jsonEscape(path) << "\",\n"
         << "  \"num_vertices\": " << graph.numVertices << ",\n"
         << "  \"num_edges\": " << e << ",\n"
         << "  \"self_loops\": " << (graph.selfLoops ? "true" : "false")
         << ",\n"
         << "  \"params\": {" << params << "},\n"
         << "  \"prediction\": \"prediction.npy\"\n}\n";
    if (!meta)
      fail("cannot write " + dir + "meta.json");
    llvm::outs() << llvm::format("dumped    %s in %.1f ms\n", dumpDir.c_str(),
                                 secondsSince(start) * 1e3);
  }

  llvm::outs() << llvm::format(
      "RESULT system=saga graph=%s vertices=%d edges=%lld threads=%u "
      "compile_ms=%.3f jit_ms=%.3f forward_ms=%.3f\n",
      graphKind.c_str(), graph.numVertices, (long long)graph.numEdges,
      unsigned(threads), stats.total() * 1e3, stats.jit * 1e3, med * 1e3);
  return 0;
}
