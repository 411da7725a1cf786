//===- RunCommand.cpp - `sagac run`: a forward pass on a dataset ----------===//

#include "RunCommand.h"

#include "runtime/Loaders.h"
#include "runtime/Model.h"
#include "runtime/ParamsFile.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace saga;

namespace {
int fail(llvm::Error e) {
  llvm::errs() << "sagac: error: " << llvm::toString(std::move(e)) << "\n";
  return 1;
}

/// Binds the dataset to the model's inputs by kind: its f32 vertex input
/// takes the features, its class input the labels.
llvm::Error bindDataset(Model &model, Dataset &data) {
  for (const ValueInfo &in : model.inputs()) {
    if (in.domain == ValueInfo::Edge) {
      if (!in.defaultValue)
        return llvm::createStringError(
            "edge input '" + in.name + "' has no default and " + data.name +
            " has no edge values; declare 'edge " + in.name + ": f32 = 1.0;'");
      continue;
    }
    if (in.dtype == DType::I32) {
      Tensor labels({data.features.rows()}, DType::I32);
      std::copy(data.labels.begin(), data.labels.end(), labels.i32());
      if (llvm::Error e = model.setInput(in.name, std::move(labels)))
        return e;
      continue;
    }
    int64_t want = 1;
    for (int64_t d : in.shape)
      want *= d;
    if (want != data.features.rowSize())
      return llvm::createStringError(
          "graph input '" + in.name + "' has " + std::to_string(want) +
          " features per vertex, " + data.name + " has " +
          std::to_string(data.features.rowSize()));
    if (llvm::Error e = model.setInput(in.name, data.features))
      return e;
  }
  return llvm::Error::success();
}

double accuracy(const Tensor &logits, const std::vector<int32_t> &labels,
                const std::vector<int32_t> &vertices) {
  int64_t c = logits.rowSize(), right = 0;
  for (int32_t v : vertices) {
    const float *row = logits.f32() + int64_t(v) * c;
    int64_t best = std::max_element(row, row + c) - row;
    right += best == labels[v];
  }
  return vertices.empty() ? 0.0 : double(right) / vertices.size();
}
} // namespace

int saga::runForward(const RunOptions &options) {
  CompileOptions co;
  co.threads = options.threads;
  co.optLevel = options.optLevel;
  auto model = Model::compileFile(options.model, co);
  if (!model) {
    llvm::errs() << llvm::toString(model.takeError());
    return 1;
  }
  const CompileStats &stats = (*model)->compileStats();
  llvm::outs() << llvm::format(
      "compiled %s in %.1f ms (front end %.1f, lowering %.1f, JIT %.1f)\n",
      options.model.c_str(), stats.total() * 1e3, stats.frontEnd * 1e3,
      stats.lowering * 1e3, stats.jit * 1e3);

  auto data = loadPlanetoid(options.data);
  if (!data)
    return fail(data.takeError());
  if (options.rowNormalize)
    rowNormalize(data->features);
  Graph graph = Graph::build(data->edges.numVertices, data->edges.src,
                             data->edges.dst, (*model)->selfLoops());
  llvm::outs() << llvm::format(
      "graph %s: %d vertices, %lld edges%s\n", data->name.c_str(),
      graph.numVertices, (long long)graph.numEdges,
      graph.selfLoops ? " (with self loops)" : "");
  if (llvm::Error e = (*model)->setGraph(graph))
    return fail(std::move(e));
  if (llvm::Error e = bindDataset(**model, *data))
    return fail(std::move(e));
  if (!options.params.empty()) {
    auto params = loadParamsFile(options.params);
    if (!params)
      return fail(params.takeError());
    for (auto &[name, t] : *params)
      if (llvm::Error e = (*model)->setParam(name, std::move(t)))
        return fail(std::move(e));
  }
  (*model)->initParams(options.seed);

  llvm::outs() << "device: CPU, " << options.threads << " thread"
               << (options.threads == 1 ? "" : "s")
               << " (this build has no GPU backend)\n";
  ForwardOptions fo;
  fo.lossMask = data->train;
  fo.profile = options.profile;
  auto result = (*model)->forward(fo);
  if (!result)
    return fail(result.takeError());
  std::vector<double> times{result->seconds};
  for (unsigned i = 1; i < options.repeat; ++i) {
    result = (*model)->forward(fo);
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
  for (const auto &[step, seconds] : result->profile)
    llvm::outs() << llvm::format("  %8.3f ms  %s\n", seconds * 1e3,
                                 step.c_str());
  if (result->loss)
    llvm::outs() << llvm::format("loss (train vertices): %.6f\n", *result->loss);

  const Tensor &out = result->prediction;
  if (out.shape().size() == 2) {
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
