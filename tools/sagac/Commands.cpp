//===- Commands.cpp - `sagac run` and `sagac train` -----------------------===//

#include "Commands.h"
#include "Plot.h"

#include "runtime/exec/Device.h"
#include "runtime/graph/GraphFile.h"
#include "runtime/graph/Loaders.h"
#include "runtime/graph/Numpy.h"
#include "api/Model.h"
#include "analysis/KernelTraffic.h"
#include "analysis/PlanMemory.h"
#include "runtime/train/ParamsFile.h"

#include <optional>
#include "runtime/Timing.h"
#include "runtime/graph/Reorder.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

using namespace saga;

namespace {
int fail(llvm::Error e) {
  llvm::errs() << "sagac: error: " << llvm::toString(std::move(e)) << "\n";
  return 1;
}

} // namespace

llvm::Error saga::bindDataset(Model &model, Dataset &data, GraphFile *stream,
                              bool normalize) {
  // One features input (the usual case) takes the dataset's tensor rather
  // than a copy: on a large graph that is the largest array in memory.
  int featureInputs = 0;
  for (const ValueInfo &in : model.inputs())
    featureInputs += in.domain == ValueInfo::Vertex && in.dtype == DType::F32;
  for (const ValueInfo &in : model.inputs()) {
    if (in.domain == ValueInfo::Edge) {
      if (!in.defaultValue)
        return llvm::createStringError(
            "edge input '" + in.name + "' has no default and " + data.name +
            " has no edge values; declare 'edge " + in.name + ": f32 = 1.0;'");
      continue;
    }
    if (in.dtype == DType::I32) {
      Tensor labels({int64_t(data.labels.size())}, DType::I32);
      std::copy(data.labels.begin(), data.labels.end(), labels.i32());
      if (llvm::Error e = model.setInput(in.name, std::move(labels)))
        return e;
      continue;
    }
    int64_t want = 1;
    for (int64_t d : in.shape)
      want *= d;
    int64_t have = stream ? stream->info().numFeatures : data.features.rowSize();
    if (want != have)
      return llvm::createStringError(
          "graph input '" + in.name + "' has " + std::to_string(want) +
          " features per vertex, " + data.name + " has " +
          std::to_string(have));
    if (stream) {
      if (featureInputs != 1)
        return llvm::createStringError(
            "streaming from a graph file binds one feature input; the model "
            "has " + std::to_string(featureInputs));
      if (llvm::Error e = model.setInputRows(
              in.name, [stream, normalize](int64_t begin, int64_t end,
                                           float *to) {
                return stream->readFeatureRange(begin, end, to, normalize);
              }))
        return e;
      continue;
    }
    if (llvm::Error e = model.setInput(
            in.name, featureInputs == 1 ? std::move(data.features)
                                        : Tensor(data.features)))
      return e;
  }
  return llvm::Error::success();
}

namespace {
/// A model compiled and bound to a dataset, ready to run or train.
struct Session {
  std::unique_ptr<Model> model;
  Dataset data;
  Graph graph;
  // A graph file streamed chunk by chunk (runs under a memory budget on a
  // .sgf): the file, its chunks, and its interval count, which the run uses.
  std::unique_ptr<GraphFile> file;
  std::unique_ptr<GraphFileChunks> chunks;
  int64_t intervals = 0;
  /// The dataset's vertex v is the graph's vertex newId[v] (empty: the
  /// same), after a relabelling.
  std::vector<int32_t> newId;
  /// With --link-split: the split; the graph is its message graph.
  std::optional<EdgeSplit> links;
};

/// Under a memory budget, a graph file is not loaded: the model gets the
/// graph's offsets, labels and splits, and reads chunks and feature rows
/// from the file when the plan loads them. The file's vertex order is kept
/// (relabel when converting), and its chunk index fixes the intervals.
bool openStreamed(Session &session, const RunOptions &options) {
  Model &m = *session.model;
  auto file = GraphFile::open(options.data, options.directIO);
  if (!file)
    return fail(file.takeError()), false;
  session.file = std::move(*file);
  GraphFile &f = *session.file;
  const GraphFileInfo &info = f.info();
  if (options.intervals > 0 && options.intervals != info.intervals)
    return fail(llvm::createStringError(
               options.data + " has a chunk index over " +
               std::to_string(info.intervals) +
               " intervals, the run's --chunk-intervals is " +
               std::to_string(options.intervals) +
               " (convert it again with --intervals " +
               std::to_string(options.intervals) + ")")),
           false;
  session.intervals = info.intervals;
  auto skeleton = f.readSkeleton(m.selfLoops());
  if (!skeleton)
    return fail(skeleton.takeError()), false;
  session.graph = std::move(*skeleton);
  auto labels = f.readLabelsOnly();
  if (!labels)
    return fail(labels.takeError()), false;
  session.data = std::move(*labels);
  session.chunks = std::make_unique<GraphFileChunks>(f, m.selfLoops());
  const Graph &g = session.graph;
  llvm::outs() << llvm::format(
      "graph %s: %d vertices, %lld edges%s; streamed from %s (%lld x %lld "
      "chunks, the file's vertex order)\n",
      info.name.c_str(), g.numVertices, (long long)g.numEdges,
      g.selfLoops ? " (with self loops)" : "", options.data.c_str(),
      (long long)info.intervals, (long long)info.intervals);
  if (llvm::Error e = m.setGraph(g))
    return fail(std::move(e)), false;
  m.setChunkSource(session.chunks.get());
  if (llvm::Error e = bindDataset(m, session.data, &f, options.rowNormalize))
    return fail(std::move(e)), false;
  return true;
}

std::unique_ptr<Session> finishOpen(std::unique_ptr<Session> session,
                                    const RunOptions &options);

/// --kernel-traffic: the plan's steps with their compulsory bytes.
bool printKernelTraffic(Model &m, bool training) {
  auto steps = m.kernelTraffic(training);
  if (!steps)
    return fail(steps.takeError()), false;
  llvm::outs() << "compulsory bytes per step of the "
               << (training ? "training" : "inference")
               << " plan (an estimate of the least time at an H100's "
                  "3.35 TB/s, not a measurement):\n"
               << formatKernelTraffic(*steps, 3.35e12, "3.35 TB/s");
  return true;
}

/// --device: runs the model on CUDA or the CPU and prints which and why.
/// Errors are printed; returns false then.
bool selectDevice(Model &m, const RunOptions &options) {
  // CUDA on these devices (cuda:0,1,2,3 splits a chunked run over them).
  auto useCuda = [&](const std::vector<int> &ordinals) {
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error e = m.useCuda(ordinals)) {
      fail(llvm::createStringError("--device " + options.device + ": " +
                                   llvm::toString(std::move(e))));
      return false;
    }
    llvm::outs() << "device: " << m.deviceName()
                 << llvm::format(" (--device %s; kernels ready in %.1f ms)\n",
                                 options.device.c_str(),
                                 secondsSince(start) * 1e3);
    return true;
  };
  if (llvm::StringRef(options.device).starts_with("cuda:")) {
    std::vector<int> ordinals;
    llvm::SmallVector<llvm::StringRef> names;
    llvm::StringRef(options.device).drop_front(5).split(names, ',');
    for (llvm::StringRef name : names) {
      int ordinal = -1;
      if (name.getAsInteger(10, ordinal) || ordinal < 0) {
        fail(llvm::createStringError(
            "--device " + options.device + ": '" + name.str() +
            "' is not a device number (cuda:0,1,2,3 names devices 0 to 3)"));
        return false;
      }
      ordinals.push_back(ordinal);
    }
    return useCuda(ordinals);
  }
  DeviceChoice choice;
  if (!parseDeviceChoice(options.device, choice)) {
    fail(llvm::createStringError("--device: '" + options.device +
                                 "' is not auto, cpu or cuda"));
    return false;
  }
  std::string why = "--device cpu";
  if (choice == DeviceChoice::Auto) {
    int n = cudaDeviceCount(why);
    if (n > 0)
      choice = DeviceChoice::Cuda;
    why += "; --device auto";
  }
  if (choice == DeviceChoice::Cuda)
    return useCuda({0});
  llvm::outs() << "device: " << m.deviceName() << " (" << why << ")\n";
  return true;
}

/// Compiles, loads, binds and initialises; prints what it did. Errors are
/// printed; returns null then. `miniBatch`: the training plan runs on
/// sampled mini-batches (CompileOptions::miniBatch).
std::unique_ptr<Session> open(const RunOptions &options, bool training,
                              bool miniBatch = false) {
  auto session = std::make_unique<Session>();
  CompileOptions co;
  co.threads = options.threads;
  co.optLevel = options.optLevel;
  co.disabledPasses = options.disabledPasses;
  co.training = training;
  co.miniBatch = miniBatch;
  for (const auto &[name, file] : options.outputs)
    if (name != "out")
      co.outputs.push_back(name);
  auto model = Model::compileFile(options.model, co);
  if (!model) {
    llvm::errs() << llvm::toString(model.takeError());
    return nullptr;
  }
  session->model = std::move(*model);
  Model &m = *session->model;
  const CompileStats &stats = m.compileStats();
  llvm::outs() << llvm::format(
      "compiled %s in %.1f ms (front end %.1f, lowering %.1f, JIT %.1f%s)\n",
      options.model.c_str(), stats.total() * 1e3, stats.frontEnd * 1e3,
      stats.lowering * 1e3, stats.jit * 1e3,
      stats.kernelSetsCached == 0 ? ""
      : stats.kernelSetsCached == stats.kernelSets
          ? ", kernels from the object cache"
          : ", some kernels from the object cache");

  if (options.memoryBudget > 0 && isGraphFile(options.data) &&
      (options.format.empty() || options.format == "sgf")) {
    if (!openStreamed(*session, options))
      return nullptr;
    return finishOpen(std::move(session), options);
  }
  auto data = loadDataset(options.data, options.arrays, options.format);
  if (!data) {
    fail(data.takeError());
    return nullptr;
  }
  session->data = std::move(*data);
  Dataset &d = session->data;
  if (options.rowNormalize)
    rowNormalize(d.features);
  if (!options.linkSplit.empty()) {
    // Link prediction propagates over the training edges only.
    if (options.memoryBudget > 0 || options.reorder == RunOptions::Reorder::Degree) {
      fail(llvm::createStringError(
          "--link-split trains in memory in the dataset's vertex order: no "
          "--memory-budget or --reorder=degree"));
      return nullptr;
    }
    auto split = loadEdgeSplitNpz(options.linkSplit, d.edges.numVertices);
    if (!split) {
      fail(split.takeError());
      return nullptr;
    }
    d.edges = split->messageGraph();
    session->links = std::move(*split);
  }
  if (!session->links &&
      (options.reorder == RunOptions::Reorder::Degree ||
       (options.reorder == RunOptions::Reorder::Auto &&
       d.edges.numVertices >= kAutoReorderVertices))) {
    auto start = std::chrono::steady_clock::now();
    VertexOrder order = degreeOrder(d.edges);
    relabel(d, order);
    session->newId = std::move(order.newId);
    llvm::outs() << llvm::format(
        "relabelled %d vertices in degree order in %.1f ms (--reorder=none "
        "keeps the dataset's ids)\n",
        d.edges.numVertices,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                .count() *
            1e3);
  }
  if (std::string why =
          Graph::buildError(d.edges.numVertices,
                           int64_t(d.edges.src.size()), m.selfLoops());
      !why.empty()) {
    fail(llvm::createStringError("graph " + d.name + ": " + why +
                                 (m.selfLoops() ? " (the model's graph "
                                                  "declaration adds self "
                                                  "loops)"
                                                : "")));
    return nullptr;
  }
  session->graph = Graph::build(d.edges.numVertices, d.edges.src, d.edges.dst,
                                m.selfLoops());
  d.edges = EdgeList(); // the graph has them
  const Graph &g = session->graph;
  llvm::outs() << llvm::format("graph %s: %d vertices, %lld edges%s\n",
                               d.name.c_str(), g.numVertices,
                               (long long)g.numEdges,
                               g.selfLoops ? " (with self loops)" : "");
  if (llvm::Error e = m.setGraph(g)) {
    fail(std::move(e));
    return nullptr;
  }
  if (llvm::Error e = bindDataset(m, d)) {
    fail(std::move(e));
    return nullptr;
  }
  return finishOpen(std::move(session), options);
}

/// Parameters (from --params, else initialised) and the device line.
std::unique_ptr<Session> finishOpen(std::unique_ptr<Session> session,
                                    const RunOptions &options) {
  Model &m = *session->model;
  if (!options.params.empty()) {
    auto params = loadParamsFile(options.params);
    if (!params) {
      fail(params.takeError());
      return nullptr;
    }
    for (auto &[name, t] : *params)
      if (llvm::Error e = m.setParam(name, std::move(t))) {
        fail(std::move(e));
        return nullptr;
      }
  }
  m.initParams(options.seed);
  if (!selectDevice(m, options))
    return nullptr;
  return session;
}
} // namespace

int64_t saga::parseSize(const std::string &text) {
  llvm::StringRef s(text);
  s = s.trim();
  double number = 0;
  size_t digits = 0;
  while (digits < s.size() && (isdigit(s[digits]) || s[digits] == '.'))
    ++digits;
  if (digits == 0 || s.substr(0, digits).getAsDouble(number) || number < 0)
    return -1;
  // A std::string: lower() returns a temporary (a StringRef to it dangled;
  // found by ASan).
  std::string unit = s.drop_front(digits).trim().lower();
  double scale = 1;
  if (unit.empty() || unit == "b")
    scale = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib")
    scale = 1024.0;
  else if (unit == "m" || unit == "mb" || unit == "mib")
    scale = 1024.0 * 1024;
  else if (unit == "g" || unit == "gb" || unit == "gib")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "t" || unit == "tb" || unit == "tib")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else
    return -1;
  return int64_t(number * scale);
}

namespace {
/// The run's execution options from the command line's.
ForwardOptions executionOf(const RunOptions &o, const Session &session) {
  ForwardOptions fo;
  fo.memoryBudget = o.memoryBudget;
  fo.scratch = o.scratch;
  fo.directIO = o.directIO;
  fo.chunkReadAhead = o.chunkReadAhead;
  fo.selectiveLoading = o.selectiveLoading;
  fo.interleaveRows = o.interleaveRows;
  fo.peerHandoffs = o.peerHandoffs;
  fo.intervals = session.intervals ? session.intervals : o.intervals;
  return fo;
}

/// Under a budget, on a terminal: a line at most every second through a
/// long pass over the chunked schedule (an epoch of a graph larger than
/// memory takes minutes), cleared when the pass ends.
std::function<void(int64_t, int64_t)> chunkProgressLine() {
  struct State {
    std::chrono::steady_clock::time_point start;
    double shown = 0; // seconds into the pass of the last line; 0: none
  };
  auto state = std::make_shared<State>();
  return [state](int64_t done, int64_t steps) {
    if (done == 1)
      *state = State{std::chrono::steady_clock::now(), 0};
    double seconds = secondsSince(state->start);
    if (done == steps) {
      if (state->shown > 0)
        llvm::errs() << "\r\x1b[K";
      return;
    }
    if (seconds - state->shown < 1.0)
      return;
    state->shown = seconds;
    llvm::errs() << llvm::format(
        "\rout of core: step %lld/%lld of the chunked schedule, %.0f s, "
        "about %.0f s left ",
        (long long)done, (long long)steps, seconds,
        seconds / double(done) * double(steps - done));
  };
}

/// What a run under a memory budget did.
void printChunked(const ChunkedStats &c, int64_t budget) {
  auto mib = [](double b) { return b / (1 << 20); };
  const auto &t = c.run.transfers;
  llvm::outs() << llvm::format(
      "out of core: budget %.1f MiB, %lld row intervals (largest step %.1f "
      "MiB%s), plan %s: %.1f MiB per step; moved %.1f MiB (loaded %.1f, stored "
      "%.1f), transfers overlapped %.0f%% (%.1f ms waited of %.1f ms), "
      "device pool peak %.1f MiB\n",
      mib(double(budget)), (long long)c.intervals, mib(double(c.minimumBytes)),
      c.emptyChunks ? ("; " + std::to_string(c.emptyChunks) + " of " +
                       std::to_string(c.intervals * c.intervals) +
                       " chunks empty, their sources not loaded")
                          .c_str()
                    : "",
      c.method.c_str(), mib(double(c.plannedBytes)),
      mib(double(t.bytesLoaded + t.bytesStored)), mib(double(t.bytesLoaded)),
      mib(double(t.bytesStored)), 100 * t.overlap(), t.stallSeconds * 1e3,
      t.busySeconds * 1e3, mib(double(c.run.poolPeak)));
  if (c.edgesSplit)
    llvm::outs() << "edge values: in " << c.intervals
                 << " pieces each, by destination interval (chunk order)\n";
  if (c.csrBytesUploaded)
    llvm::outs() << llvm::format(
        "graph to the device: %.1f MiB of chunk CSR, %lld edges; %.1f MiB "
        "held outside the plan (loss terms, partial sums, small values)\n",
        mib(double(c.csrBytesUploaded)), (long long)c.csrEdgesUploaded,
        mib(double(c.deviceOutsideBytes)));
  if (c.devices > 1)
    llvm::outs() << llvm::format(
        "%lld devices: graph inputs and parameters read from the host %.1f "
        "MiB; values handed to another device %.1f MiB over peer links, "
        "%.1f MiB through host memory\n",
        (long long)c.devices, mib(double(c.sourceBytes)),
        mib(double(c.handoffPeerBytes)), mib(double(c.handoffHostBytes)));
  if (c.rowLoads)
    llvm::outs() << llvm::format(
        "selective loading: %lld loads of only the rows a chunk reads, %.1f "
        "MiB where whole pieces are %.1f MiB\n",
        (long long)c.rowLoads, mib(double(c.rowLoadBytes)),
        mib(double(c.rowLoadWholeBytes)));
  if (c.chunkParts)
    llvm::outs() << llvm::format(
        "chunk reads ahead: %lld parts read in %.1f ms on the reader thread, "
        "kernels waited %.1f ms for them%s\n",
        (long long)c.chunkParts, c.chunkReadSeconds * 1e3,
        c.chunkStallSeconds * 1e3,
        c.chunkDirectReads
            ? (" (" + std::to_string(c.chunkDirectReads) +
               " chunks asked for out of order, read in place)")
                  .c_str()
            : "");
}
/// What a run streamed from its graph file read, over the whole command.
void printFileReads(const Session &s) {
  if (!s.file)
    return;
  llvm::outs() << llvm::format(
      "graph file: read %.1f MiB (chunks and feature rows) in %.1f s of reads "
      "(%.0f MiB/s)\n",
      double(s.file->bytesRead()) / (1 << 20), s.file->readSeconds(),
      s.file->readSeconds() > 0
          ? double(s.file->bytesRead()) / (1 << 20) / s.file->readSeconds()
          : 0.0);
}
} // namespace

int saga::runForward(const RunOptions &options) {
  std::unique_ptr<Session> session = open(options, /*training=*/false);
  if (!session)
    return 1;
  Model *model = session->model.get();
  Dataset *data = &session->data;
  ForwardOptions fo = executionOf(options, *session);
  if (fo.memoryBudget > 0 && llvm::errs().is_displayed())
    fo.chunkProgress = chunkProgressLine();
  fo.lossMask = data->train;
  fo.profile = options.profile;
  if (options.kernelTraffic && !printKernelTraffic(*model, false))
    return 1;
  if (options.printSchedule) {
    auto text = model->chunkedSchedule(/*training=*/false, fo);
    if (!text)
      return fail(text.takeError());
    llvm::outs() << *text;
  }
  auto result = model->forward(fo);
  if (!result)
    return fail(result.takeError());
  std::vector<double> times{result->seconds};
  for (unsigned i = 1; i < options.repeat; ++i) {
    result = model->forward(fo);
    if (!result)
      return fail(result.takeError());
    times.push_back(result->seconds);
  }
  std::sort(times.begin(), times.end());
  llvm::outs() << llvm::format("forward: %.2f ms", times[times.size() / 2] * 1e3);
  if (times.size() > 1)
    llvm::outs() << llvm::format(" (median of %zu; first %.2f ms)", times.size(),
                                 times.front() * 1e3);
  llvm::outs() << "\n";
  if (options.memoryBudget > 0)
    printChunked(result->chunked, options.memoryBudget);
  printFileReads(*session);
  for (const auto &[step, seconds] : result->profile)
    llvm::outs() << llvm::format("  %8.3f ms  %s\n", seconds * 1e3,
                                 step.c_str());
  if (result->loss)
    llvm::outs() << llvm::format("loss (train vertices): %.6f\n", *result->loss);
  // Rows back in the dataset's vertex order.
  auto write = [&](const std::string &name, const Tensor &p,
                   const std::string &file) -> llvm::Error {
    Tensor rows = session->newId.empty() ? Tensor::view(p)
                                         : Tensor::uninitialized(p.shape(),
                                                                 p.dtype());
    if (!session->newId.empty()) {
      const int64_t w = p.rowSize();
      for (size_t v = 0; v < session->newId.size(); ++v)
        std::copy(p.f32() + int64_t(session->newId[v]) * w,
                  p.f32() + int64_t(session->newId[v] + 1) * w,
                  rows.f32() + int64_t(v) * w);
    }
    if (llvm::Error e = writeNpy(file, rows))
      return e;
    llvm::outs() << "wrote " << (name == "out" ? "the output" : "'" + name + "'")
                 << " (" << rows.describe() << ") to " << file << "\n";
    return llvm::Error::success();
  };
  size_t named = 0;
  for (const auto &[name, file] : options.outputs) {
    const Tensor &p =
        name == "out" ? result->prediction : result->outputs[named++].second;
    if (llvm::Error e = write(name, p, file))
      return fail(std::move(e));
  }

  const Tensor &out = result->prediction;
  // Classes only for a classifier (a model with a label input): a link
  // predictor's rows are embeddings.
  bool classifier = llvm::any_of(session->model->inputs(), [](const ValueInfo &in) {
    return in.domain == ValueInfo::Vertex && in.dtype == DType::I32;
  });
  if (out.shape().size() == 2 && classifier) {
    std::vector<int64_t> counts(out.rowSize());
    for (int64_t v = 0; v < out.rows(); ++v) {
      const float *row = out.f32() + v * out.rowSize();
      ++counts[std::max_element(row, row + out.rowSize()) - row];
    }
    llvm::outs() << "predicted class counts:";
    for (int64_t c : counts)
      llvm::outs() << ' ' << c;
    llvm::outs() << "\n";
    llvm::outs() << llvm::format(
        "accuracy: train %.4f  val %.4f  test %.4f\n",
        accuracy(out, data->labels, data->train),
        accuracy(out, data->labels, data->val),
        accuracy(out, data->labels, data->test));
  }
  return 0;
}

int saga::runTrain(const TrainCommandOptions &options) {
  std::unique_ptr<Session> session =
      open(options.run, /*training=*/true, options.batches.batchSize > 0);
  if (!session)
    return 1;
  if (session->links)
    return runTrainLinks(options, *session->model, session->graph,
                         *session->links);
  // Moved: on a large graph a second copy of the labels and splits is
  // memory a budgeted run does not have.
  Split split{std::move(session->data.labels), std::move(session->data.train),
              std::move(session->data.val), std::move(session->data.test)};
  TrainOptions t = options.train;
  t.execution = executionOf(options.run, *session);
  if (t.execution.memoryBudget > 0 && !options.quiet &&
      llvm::errs().is_displayed())
    t.execution.chunkProgress = chunkProgressLine();
  if (options.run.kernelTraffic && !printKernelTraffic(*session->model, true))
    return 1;
  if (options.run.printSchedule) {
    ForwardOptions fo = t.execution;
    fo.lossMask = split.train;
    auto text = session->model->chunkedSchedule(/*training=*/true, fo);
    if (!text)
      return fail(text.takeError());
    llvm::outs() << *text;
  }
  llvm::outs() << llvm::format(
      "training %u epochs, %s lr %g, seed %llu, %zu train / %zu val / %zu "
      "test vertices\n",
      t.epochs, t.optimizer == TrainOptions::Adam ? "Adam" : "SGD",
      t.learningRate, (unsigned long long)t.seed, split.train.size(),
      split.val.size(), split.test.size());
  std::unique_ptr<MiniBatches> batches;
  if (options.batches.batchSize > 0) {
    if (options.run.memoryBudget > 0 || session->file)
      return fail(llvm::createStringError(
          "--batch-size trains in memory: no --memory-budget"));
    if (options.run.device == "cuda")
      return fail(llvm::createStringError(
          "--batch-size trains on the CPU: no --device cuda"));
    auto made = MiniBatches::create(*session->model, session->graph,
                                    split.train, options.batches, t.seed);
    if (!made)
      return fail(made.takeError());
    batches = std::move(*made);
    t.batches = batches.get();
    t.profileBatches = options.run.profile;
    std::string fanouts;
    for (int64_t f : options.batches.fanouts)
      fanouts += (fanouts.empty() ? "" : ",") + std::to_string(f);
    llvm::outs() << llvm::format(
        "mini-batches of %lld seeds, fan-out %s (input layer first), %lld "
        "per epoch, prepared on a loader thread (%u sampler thread%s); "
        "evaluation on the whole graph\n",
        (long long)options.batches.batchSize, fanouts.c_str(),
        (long long)batches->batchesPerEpoch(), options.batches.samplerThreads,
        options.batches.samplerThreads == 1 ? "" : "s");
    // A progress line on the terminal every second of a long epoch.
    if (!options.quiet && llvm::errs().is_displayed()) {
      auto last = std::make_shared<double>(0.0);
      t.batchProgress = [last, epochs = t.epochs](unsigned epoch, int64_t done,
                                                  int64_t total,
                                                  double seconds) {
        if (seconds - *last < 1.0 && done < total)
          return;
        *last = done < total ? seconds : 0.0;
        double rate = seconds > 0 ? double(done) / seconds : 0.0;
        llvm::errs() << llvm::format(
            "\repoch %u/%u: %lld/%lld batches, %.1f batches/s, %.0f s left ",
            epoch, epochs, (long long)done, (long long)total, rate,
            rate > 0 ? double(total - done) / rate : 0.0);
        if (done == total)
          llvm::errs() << "\r\x1b[K";
      };
    }
  }
  MiniBatchStats lastBatches;
  // " (a by b hops ...)": the mean rows within each hop of the seeds.
  auto byHop = [](const MiniBatchStats &now, const MiniBatchStats &then,
                  double n) {
    std::string s = " (";
    for (size_t k = 0; k + 1 < now.levelRows.size(); ++k) {
      double was = k < then.levelRows.size() ? double(then.levelRows[k]) : 0.0;
      s += llvm::formatv("{0}{1:F0} within {2}", k ? ", " : "",
                         n > 0 ? (double(now.levelRows[k]) - was) / n : 0.0,
                         k)
               .str();
    }
    return s + (now.levelRows.size() > 1 ? " hops)" : ")");
  };
  auto result = train(*session->model, split, t, [&](const EpochStats &s) {
    if (options.quiet)
      return;
    llvm::outs() << llvm::format(
        "epoch %4u/%u  loss %.4f  train %.4f  val %.4f  %.1f ms", s.epoch,
        t.epochs, s.loss, s.trainAcc, s.valAcc, s.seconds * 1e3);
    if (batches) {
      const MiniBatchStats &b = batches->stats();
      double n = double(b.batches - lastBatches.batches);
      llvm::outs() << llvm::format(
          "  (%lld batches in %.1f ms, %.1f/s; per batch %.0f rows%s, %.0f "
          "edges, %.1f ms preparing (%.1f sampling, %.1f building), %.1f ms "
          "waited for)",
          (long long)s.batches, s.trainSeconds * 1e3,
          s.trainSeconds > 0 ? double(s.batches) / s.trainSeconds : 0.0,
          n > 0 ? double(b.rows - lastBatches.rows) / n : 0.0,
          byHop(b, lastBatches, n).c_str(),
          n > 0 ? double(b.edges - lastBatches.edges) / n : 0.0,
          n > 0 ? (b.prepareSeconds - lastBatches.prepareSeconds) / n * 1e3 : 0.0,
          n > 0 ? (b.sampleSeconds - lastBatches.sampleSeconds) / n * 1e3 : 0.0,
          n > 0 ? (b.buildSeconds - lastBatches.buildSeconds) / n * 1e3 : 0.0,
          n > 0 ? (b.waitSeconds - lastBatches.waitSeconds) / n * 1e3 : 0.0);
      lastBatches = b;
    }
    llvm::outs() << "\n";
    llvm::outs().flush();
  });
  if (!result)
    return fail(result.takeError());
  const EpochStats &f = result->final;
  if (result->stoppedEarly)
    llvm::outs() << "stopped early: no better validation accuracy in "
                 << t.patience << " epochs\n";
  double total = 0;
  for (const EpochStats &s : result->history)
    total += s.seconds;
  llvm::outs() << llvm::format(
      "final (epoch %u): loss %.4f  train %.4f  val %.4f  test accuracy "
      "%.4f  (%.1f ms/epoch)\n",
      f.epoch, f.loss, f.trainAcc, f.valAcc, f.testAcc,
      result->history.empty() ? 0.0 : total / result->history.size() * 1e3);
  if (!options.plot.empty()) {
    // The log has every epoch of a resumed run; the history only this
    // process's.
    std::vector<EpochPoint> points;
    if (!t.logPath.empty()) {
      auto logged = readTrainingLog(t.logPath);
      if (!logged)
        return fail(logged.takeError());
      points = std::move(*logged);
    } else {
      for (const EpochStats &s : result->history)
        points.push_back({double(s.epoch), s.loss, s.trainAcc, s.valAcc,
                          s.testAcc, s.seconds});
    }
    std::string title = llvm::sys::path::filename(options.run.model).str() +
                        " on " + session->data.name;
    if (points.empty())
      return fail(llvm::createStringError("--plot: no epochs to plot"));
    if (llvm::Error e = writeTrainingCurves(options.plot, points, title))
      return fail(std::move(e));
    llvm::outs() << "plotted " << points.size() << " epochs to "
                 << options.plot << "\n";
  }
  if (options.run.memoryBudget > 0 && !result->history.empty())
    printChunked(result->history.back().chunked, options.run.memoryBudget);
  printFileReads(*session);
  if (options.run.profile && t.batches && !result->history.empty()) {
    // The last epoch's mini-batch steps, each plan step's mean per batch.
    const EpochStats &last = result->history.back();
    double sum = 0;
    for (const auto &[what, seconds] : last.batchProfile)
      sum += seconds;
    const double n = double(std::max<int64_t>(1, last.batches));
    llvm::outs() << llvm::format(
        "mini-batch step (forward with dropout + backward), mean of %lld "
        "batches: %.3f ms in plan steps\n",
        (long long)last.batches, sum / n * 1e3);
    for (const auto &[what, seconds] : last.batchProfile)
      llvm::outs() << llvm::format("  %8.3f ms  %s\n", seconds / n * 1e3,
                                   what.c_str());
  } else if (options.run.profile) {
    // One more training step at the trained parameters, timed per plan
    // step (under a budget, summed over its chunks, with the waits for
    // transfers); it computes gradients but applies none.
    ForwardOptions fo = t.execution;
    fo.lossMask = split.train;
    fo.profile = true;
    auto step = session->model->trainStep(fo, t.seed);
    if (!step)
      return fail(step.takeError());
    const bool budgeted = fo.memoryBudget > 0;
    llvm::outs() << llvm::format(
        "training step (forward with dropout + backward): %.2f ms, %s peak "
        "at %.1f MiB\n",
        step->seconds * 1e3,
        budgeted ? "the device pool's" : "its buffers'",
        double(budgeted ? step->chunked.run.poolPeak : step->peakBytes) /
            (1 << 20));
    for (const auto &[what, seconds] : step->profile)
      llvm::outs() << llvm::format("  %8.3f ms  %s\n", seconds * 1e3,
                                   what.c_str());
  }
  if (!options.saveParams.empty()) {
    NamedTensors params;
    for (const ValueInfo &p : session->model->params())
      params.emplace_back(p.name, *session->model->param(p.name));
    if (llvm::Error e = saveParamsFile(options.saveParams, params))
      return fail(std::move(e));
  }
  return 0;
}

int saga::runConvert(const std::string &input, const std::string &output,
                     int64_t intervals, const VertexArrays &arrays,
                     const std::string &format) {
  auto start = std::chrono::steady_clock::now();
  auto data = loadDataset(input, arrays, format);
  if (!data) {
    fail(data.takeError());
    return 1;
  }
  const Dataset &d = *data;
  int64_t features = d.features.shape().size() == 2 ? d.features.shape()[1] : 0;
  llvm::outs() << llvm::format(
      "read %s (%s): %d vertices, %zu edges, %lld features, %d classes\n",
      input.c_str(), d.name.c_str(), d.edges.numVertices, d.edges.src.size(),
      (long long)features, d.numClasses);
  if (llvm::StringRef(output).ends_with(".npz")) {
    // NumPy's form (np.load; --data reads it back): for peers and scripts.
    if (llvm::Error e = writeNpzDataset(output, d)) {
      fail(std::move(e));
      return 1;
    }
    llvm::outs() << llvm::format(
        "wrote %s (x, src, dst%s) in %.1f ms\n", output.c_str(),
        d.labels.empty() ? "" : ", y and the split masks",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                .count() *
            1e3);
    return 0;
  }
  if (llvm::Error e = writeGraphFile(output, d, intervals)) {
    fail(std::move(e));
    return 1;
  }
  auto file = GraphFile::open(output);
  if (!file) {
    fail(file.takeError());
    return 1;
  }
  int64_t parts = (*file)->info().intervals;
  llvm::outs() << llvm::format(
      "wrote %s: %lld x %lld chunks over %lld intervals, %lld of %lld chunk "
      "ends reading at most a quarter of their interval (their rows listed "
      "for selective loading), in %.1f ms\n",
      output.c_str(), (long long)parts, (long long)parts, (long long)parts,
      (long long)(*file)->listedChunkRows(), (long long)(2 * parts * parts),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
              .count() *
          1e3);
  return 0;
}
