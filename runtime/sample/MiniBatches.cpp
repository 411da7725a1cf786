//===- MiniBatches.cpp - sampled mini-batches bound to a model ------------===//

#include "runtime/sample/MiniBatches.h"

#include "runtime/Timing.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>

using namespace saga;

llvm::Expected<std::unique_ptr<MiniBatches>>
MiniBatches::create(Model &model, const Graph &whole,
                    std::vector<int32_t> train,
                    const MiniBatchOptions &options, uint64_t seed) {
  if (options.batchSize <= 0)
    return llvm::createStringError("the batch size must be positive, not " +
                                   std::to_string(options.batchSize));
  if (options.fanouts.empty())
    return llvm::createStringError(
        "mini-batches need a fan-out per layer (--fanout 10,25)");
  for (int64_t f : options.fanouts)
    if (f == 0 || f < -1)
      return llvm::createStringError(
          "fan-out " + std::to_string(f) +
          ": a layer samples a positive number of neighbours, or -1 for all");
  int64_t hops = model.hops();
  if (int64_t(options.fanouts.size()) != hops)
    return llvm::createStringError(
        "--fanout gives " + std::to_string(options.fanouts.size()) +
        (options.fanouts.size() == 1 ? " layer" : " layers") +
        " but the model propagates over " + std::to_string(hops) +
        (hops == 1 ? " hop" : " hops") + ": give one fan-out per hop");
  if (train.empty())
    return llvm::createStringError("no training vertices to batch");
  std::unique_ptr<MiniBatches> b(
      new MiniBatches(model, whole, std::move(train), options, seed));
  for (const ValueInfo &in : model.inputs()) {
    if (in.domain != ValueInfo::Vertex)
      continue;
    std::string &name = in.dtype == DType::I32 ? b->labelName : b->featureName;
    if (!name.empty())
      return llvm::createStringError(
          "mini-batches bind one feature input and one label input; the "
          "model has two " +
          std::string(in.dtype == DType::I32 ? "label" : "feature") +
          " inputs ('" + name + "' and '" + in.name + "')");
    name = in.name;
  }
  if (b->featureName.empty() || b->labelName.empty())
    return llvm::createStringError(
        "mini-batches need a model with an f32 vertex input and a label "
        "input");
  auto features = model.takeInput(b->featureName);
  if (!features)
    return features.takeError();
  b->features = std::move(*features);
  auto labels = model.takeInput(b->labelName);
  if (!labels)
    return labels.takeError();
  b->labels = std::move(*labels);
  if (b->features.rows() != whole.numVertices ||
      b->labels.rows() != whole.numVertices)
    return llvm::createStringError("the bound inputs do not have one row per "
                                   "vertex of the graph");
  // Bound again until the first batch.
  b->wholeBound = false;
  if (llvm::Error e = b->bindWhole())
    return std::move(e);
  return b;
}

MiniBatches::MiniBatches(Model &model, const Graph &whole,
                         std::vector<int32_t> train,
                         const MiniBatchOptions &options, uint64_t seed)
    : model(model), whole(whole), train(std::move(train)), options(options),
      seed(seed), wholeDegrees(whole.inDegrees()),
      sampler(whole, options.fanouts, seed),
      pool(std::max(1u, options.samplerThreads)) {}

MiniBatches::~MiniBatches() {
  stopLoader();
  // The model gets the whole graph's inputs back.
  llvm::consumeError(model.setGraph(whole));
  llvm::consumeError(model.setInput(featureName, std::move(features)));
  llvm::consumeError(model.setInput(labelName, std::move(labels)));
}

int64_t MiniBatches::batchesPerEpoch() const {
  return (int64_t(train.size()) + options.batchSize - 1) / options.batchSize;
}

void MiniBatches::stopLoader() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    ++generation;
  }
  changed.notify_all();
  if (loader.joinable())
    loader.join();
  ready.clear();
}

void MiniBatches::startEpoch(uint64_t epoch) {
  stopLoader();
  produced = consumed = 0;
  loaderDone = false;
  uint64_t g;
  {
    std::lock_guard<std::mutex> lock(mutex);
    g = generation;
  }
  loader = std::thread([this, epoch, g] { load(epoch, g); });
}

MiniBatch MiniBatches::prepare(uint64_t epoch, int64_t index,
                               const std::vector<int32_t> &order) {
  auto start = std::chrono::steady_clock::now();
  MiniBatch m;
  m.index = index;
  int64_t lo = index * options.batchSize,
          hi = std::min<int64_t>(lo + options.batchSize, int64_t(order.size()));
  std::vector<int32_t> seeds(order.begin() + lo, order.begin() + hi);
  m.sample = sampler.sample(seeds, epoch * uint64_t(batchesPerEpoch()) +
                                       uint64_t(index),
                            &pool);
  const SampledBatch &s = m.sample;
  const int64_t rows = int64_t(s.vertices.size());
  auto sampled = std::chrono::steady_clock::now();
  m.sampleSeconds = std::chrono::duration<double>(sampled - start).count();
  m.graph = Graph::build(int32_t(rows), s.src, s.dst, whole.selfLoops);
  m.buildSeconds = secondsSince(sampled);
  // The rows the batch reads, gathered in parallel.
  const int64_t width = features.rowSize();
  m.features = Tensor::uninitialized({rows, width});
  m.labels = Tensor({rows}, DType::I32);
  m.degrees.resize(size_t(rows));
  constexpr int64_t kRows = 1024;
  pool.parallelFor((rows + kRows - 1) / kRows, [&](int64_t t) {
    const int64_t end = std::min(rows, (t + 1) * kRows);
    for (int64_t r = t * kRows; r < end; ++r) {
      // Rows far apart in a large matrix: the next ones fetched ahead.
      if (r + 8 < end) {
        const char *next = reinterpret_cast<const char *>(
            features.f32() + int64_t(s.vertices[size_t(r + 8)]) * width);
        for (int64_t b = 0; b < width * 4; b += 64)
          __builtin_prefetch(next + b);
      }
      int32_t v = s.vertices[size_t(r)];
      std::copy(features.f32() + int64_t(v) * width,
                features.f32() + int64_t(v + 1) * width,
                m.features.f32() + r * width);
      m.labels.i32()[r] = labels.i32()[v];
      m.degrees[size_t(r)] = wholeDegrees[size_t(v)];
    }
  });
  m.prepareSeconds = secondsSince(start);
  return m;
}

void MiniBatches::load(uint64_t epoch, uint64_t g) {
  // The epoch's order: a seeded shuffle of the training vertices.
  std::vector<int32_t> order = train;
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ULL + epoch);
  std::shuffle(order.begin(), order.end(), rng);
  const int64_t batches = batchesPerEpoch();
  for (int64_t i = 0; i < batches; ++i) {
    {
      std::unique_lock<std::mutex> lock(mutex);
      changed.wait(lock, [&] {
        return generation != g || produced - consumed <= options.prefetch;
      });
      if (generation != g)
        return;
    }
    MiniBatch m = prepare(epoch, i, order);
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (generation != g)
        return;
      ready.push_back(std::move(m));
      ++produced;
    }
    changed.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    loaderDone = true;
  }
  changed.notify_all();
}

llvm::Expected<const MiniBatch *>
MiniBatches::bindNext(ForwardOptions &forward) {
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<MiniBatch> next;
  {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return !ready.empty() || loaderDone; });
    if (ready.empty())
      return nullptr;
    next = std::make_unique<MiniBatch>(std::move(ready.front()));
    ready.pop_front();
    ++consumed;
  }
  changed.notify_all();
  stats_.waitSeconds += secondsSince(start);
  // The model lets go of the previous batch before it is freed.
  if (llvm::Error e = model.setGraph(next->graph))
    return std::move(e);
  if (llvm::Error e = model.setInput(featureName, std::move(next->features)))
    return std::move(e);
  if (llvm::Error e = model.setInput(labelName, std::move(next->labels)))
    return std::move(e);
  current = std::move(next);
  wholeBound = false;
  forward.degrees = &current->degrees;
  forward.vertexIds = &current->sample.vertices;
  if (options.rowExtents)
    forward.rowLevels = current->sample.levels;
  forward.lossMask.resize(size_t(current->sample.seeds()));
  std::iota(forward.lossMask.begin(), forward.lossMask.end(), 0);
  forward.exactLossMask = true;
  ++stats_.batches;
  stats_.rows += int64_t(current->sample.vertices.size());
  stats_.levelRows.resize(current->sample.levels.size());
  for (size_t k = 0; k < current->sample.levels.size(); ++k)
    stats_.levelRows[k] += current->sample.levels[k];
  stats_.edges += current->graph.numEdges;
  stats_.prepareSeconds += current->prepareSeconds;
  stats_.sampleSeconds += current->sampleSeconds;
  stats_.buildSeconds += current->buildSeconds;
  return current.get();
}

llvm::Error MiniBatches::bindWhole() {
  if (wholeBound)
    return llvm::Error::success();
  if (llvm::Error e = model.setGraph(whole))
    return e;
  // Views: the tensors stay here, where the loader reads them too.
  if (llvm::Error e = model.setInput(featureName, Tensor::view(features)))
    return e;
  if (llvm::Error e = model.setInput(labelName, Tensor::view(labels)))
    return e;
  current.reset();
  wholeBound = true;
  return llvm::Error::success();
}
