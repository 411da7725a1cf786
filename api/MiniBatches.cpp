//===- MiniBatches.cpp - sampled mini-batches bound to a model ------------===//

#include "api/MiniBatches.h"
#include "runtime/memory/HugePages.h"

#include "runtime/Timing.h"
#include "runtime/distributed/Distribution.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <unordered_map>

using namespace saga;

llvm::Expected<std::unique_ptr<MiniBatches>>
MiniBatches::create(Model &model, const Graph &whole,
                    std::vector<int32_t> train,
                    const MiniBatchOptions &options, uint64_t seed) {
  if (train.empty() && !options.linkPairs)
    return llvm::createStringError("no training vertices to batch");
  if (options.linkPairs && options.linkBatches <= 0)
    return llvm::createStringError("link prediction needs batches of "
                                   "pairs: none given");
  std::unique_ptr<MiniBatches> b(
      new MiniBatches(model, whole, whole, std::move(train), options, seed));
  if (llvm::Error e = b->findInputs())
    return std::move(e);
  auto features = model.takeInput(b->featureName);
  if (!features)
    return features.takeError();
  b->features = std::move(*features);
  if (!b->labelName.empty()) {
    auto labels = model.takeInput(b->labelName);
    if (!labels)
      return labels.takeError();
    b->labels = std::move(*labels);
  }
  if (b->features.rows() != whole.numVertices ||
      (!b->labelName.empty() && b->labels.rows() != whole.numVertices))
    return llvm::createStringError("the bound inputs do not have one row per "
                                   "vertex of the graph");
  b->localRows = std::make_unique<LocalBatchRows>(b->features);
  b->rows = b->localRows.get();
  b->batchLabels = b->labels.i32();
  // Every batch reads scattered rows of these: on huge pages they miss the
  // TLB far less.
  adviseHugePages(b->features.f32(), size_t(b->features.numElements()) * 4);
  if (b->labels.rows() > 0)
    adviseHugePages(b->labels.i32(), size_t(b->labels.numElements()) * 4);
  // Bound again until the first batch.
  b->wholeBound = false;
  if (llvm::Error e = b->bindWhole())
    return std::move(e);
  return b;
}

llvm::Expected<std::unique_ptr<MiniBatches>> MiniBatches::createDistributed(
    Model &model, const Graph &part, std::vector<int32_t> train,
    const MiniBatchOptions &options, uint64_t seed, DistributedBatches setup) {
  if (!setup.structure || !setup.rows || !setup.ownedRows || !setup.dist ||
      int64_t(setup.labels.size()) != setup.structure->numVertices)
    return llvm::createStringError(
        "a distributed mini-batch run needs the whole graph's structure and "
        "labels, the feature rows and the distribution");
  MiniBatchOptions o = options;
  int64_t least = (int64_t(train.size()) + options.batchSize - 1) /
                  std::max<int64_t>(options.batchSize, 1);
  if (setup.batches < least)
    return llvm::createStringError(
        std::to_string(train.size()) + " training vertices in batches of " +
        std::to_string(options.batchSize) + " need " + std::to_string(least) +
        " batches per epoch, not " + std::to_string(setup.batches));
  std::unique_ptr<MiniBatches> b(new MiniBatches(
      model, part, *setup.structure, std::move(train), o, seed));
  if (llvm::Error e = b->findInputs())
    return std::move(e);
  auto labels = model.takeInput(b->labelName);
  if (!labels)
    return labels.takeError();
  b->labels = std::move(*labels);
  if (b->labels.rows() != part.numVertices)
    return llvm::createStringError("the bound labels do not have one row per "
                                   "vertex of the partition");
  b->rows = setup.rows;
  b->distributed = std::move(setup);
  b->batchLabels = b->distributed->labels.data();
  b->wholeBound = false;
  if (llvm::Error e = b->bindWhole())
    return std::move(e);
  return b;
}

llvm::Error MiniBatches::findInputs() {
  const MiniBatchOptions &options = this->options;
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
  auto inputs = featureAndLabelInputs(model, "mini-batches",
                                      /*needLabels=*/!options.linkPairs);
  if (!inputs)
    return inputs.takeError();
  featureName = inputs->features;
  labelName = inputs->labels;
  return llvm::Error::success();
}

MiniBatches::MiniBatches(Model &model, const Graph &whole,
                         const Graph &structure, std::vector<int32_t> train,
                         const MiniBatchOptions &options, uint64_t seed)
    : model(model), whole(whole), structure(structure),
      train(std::move(train)), options(options), seed(seed),
      wholeDegrees(structure.inDegrees()),
      sampler(structure, options.fanouts, seed),
      pool(std::max(1u, options.samplerThreads)) {
  // The sampler reads scattered offsets and sources every batch, the
  // loader scattered degrees.
  adviseHugePages(structure.inOffsets.data(),
                  structure.inOffsets.size() * sizeof(int64_t));
  adviseHugePages(structure.inSources.data(),
                  structure.inSources.size() * sizeof(int32_t));
  adviseHugePages(wholeDegrees.data(), wholeDegrees.size() * sizeof(float));
}

MiniBatches::~MiniBatches() {
  stopLoader();
  // The model gets the whole graph's inputs back (those taken).
  llvm::consumeError(model.setGraph(whole));
  if (features.rows() > 0)
    llvm::consumeError(model.setInput(featureName, std::move(features)));
  if (labels.rows() > 0)
    llvm::consumeError(model.setInput(labelName, std::move(labels)));
}

int64_t MiniBatches::batchesPerEpoch() const {
  if (options.linkPairs)
    return options.linkBatches;
  if (distributed)
    return distributed->batches;
  return (int64_t(train.size()) + options.batchSize - 1) / options.batchSize;
}

void MiniBatches::batchBounds(int64_t index, int64_t *lo, int64_t *hi) const {
  const int64_t n = int64_t(train.size()), k = batchesPerEpoch();
  if ((n + options.batchSize - 1) / options.batchSize == k) {
    // Batches of the batch size, the last one the rest.
    *lo = std::min(n, index * options.batchSize);
    *hi = std::min(n, *lo + options.batchSize);
    return;
  }
  // A distributed trainer with fewer seeds than its peers spreads them
  // evenly over the same number of batches.
  *lo = index * n / k;
  *hi = (index + 1) * n / k;
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
  loaderError.clear();
  uint64_t g;
  {
    std::lock_guard<std::mutex> lock(mutex);
    g = generation;
  }
  loader = std::thread([this, epoch, g] { load(epoch, g); });
}

llvm::Expected<MiniBatch> MiniBatches::prepare(
    uint64_t epoch, int64_t index, const std::vector<int32_t> &order) {
  auto start = std::chrono::steady_clock::now();
  MiniBatch m;
  m.index = index;
  std::vector<int32_t> seeds;
  VertexPairs linkPairs;
  std::vector<float> linkLabels;
  if (options.linkPairs) {
    // The pairs' ends, each once, in order of first appearance: the rows
    // [0, seeds) of the batch, which the pairs are renumbered to.
    options.linkPairs(epoch, index, linkPairs, linkLabels);
    std::unordered_map<int32_t, int32_t> row;
    row.reserve(linkPairs.size() * 2);
    for (size_t i = 0; i < linkPairs.size(); ++i)
      for (int32_t *v : {&linkPairs.src[i], &linkPairs.dst[i]}) {
        if (*v < 0 || *v >= structure.numVertices)
          return llvm::createStringError(
              "a link batch's pair " + std::to_string(i) + " has vertex " +
              std::to_string(*v) + ", outside the graph's " +
              std::to_string(structure.numVertices) + " vertices");
        auto [it, fresh] = row.try_emplace(*v, int32_t(seeds.size()));
        if (fresh)
          seeds.push_back(*v);
        *v = it->second;
      }
  } else {
    int64_t lo, hi;
    batchBounds(index, &lo, &hi);
    seeds.assign(order.begin() + lo, order.begin() + hi);
  }
  if (!seeds.empty())
    m.sample = sampler.sample(seeds, epoch * uint64_t(batchesPerEpoch()) +
                                         uint64_t(index),
                              &pool);
  else // a distributed trainer's empty batch: it still serves its peers
    m.sample.levels.assign(options.fanouts.size() + 1, 0);
  const SampledBatch &s = m.sample;
  const int64_t rows = int64_t(s.vertices.size());
  auto sampled = std::chrono::steady_clock::now();
  m.sampleSeconds = std::chrono::duration<double>(sampled - start).count();
  if (rows > 0)
    m.graph = Graph::buildGrouped(int32_t(rows), s.dstEdges, s.src,
                                  structure.selfLoops);
  m.buildSeconds = secondsSince(sampled);
  // The rows the batch reads.
  const int64_t width = this->rows->width();
  m.features = Tensor::uninitialized({rows, width});
  if (llvm::Error e = this->rows->gather(s.vertices, m.features.f32(), pool))
    return std::move(e);
  if (options.linkPairs) {
    std::string why;
    m.pairs = PairSet::make(int32_t(rows), std::move(linkPairs.src),
                            std::move(linkPairs.dst), std::move(linkLabels),
                            &why);
    if (!why.empty())
      return llvm::createStringError("a link batch's pairs: " + why);
  }
  if (batchLabels)
    m.labels = Tensor({rows}, DType::I32);
  m.degrees.resize(size_t(rows));
  // Each row's label and degree are a cache miss apiece: fetched ahead.
  constexpr int64_t kAhead = 16;
  for (int64_t r = 0; r < rows; ++r) {
    if (r + kAhead < rows) {
      int32_t u = s.vertices[size_t(r + kAhead)];
      if (batchLabels)
        __builtin_prefetch(&batchLabels[u]);
      __builtin_prefetch(&wholeDegrees[size_t(u)]);
    }
    int32_t v = s.vertices[size_t(r)];
    if (batchLabels)
      m.labels.i32()[r] = batchLabels[v];
    m.degrees[size_t(r)] = wholeDegrees[size_t(v)];
  }
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
    auto m = prepare(epoch, i, order);
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!m) {
        loaderError = llvm::toString(m.takeError());
        loaderDone = true;
        break;
      }
      if (generation != g)
        return;
      ready.push_back(std::move(*m));
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
    if (ready.empty() && !loaderError.empty())
      return llvm::createStringError("preparing a mini-batch: " + loaderError);
    if (ready.empty())
      return nullptr;
    next = std::make_unique<MiniBatch>(std::move(ready.front()));
    ready.pop_front();
    ++consumed;
  }
  changed.notify_all();
  stats_.waitSeconds += secondsSince(start);
  ++stats_.batches;
  if (next->sample.seeds() == 0) {
    // Nothing to train on (a distributed trainer's empty batch); the
    // model stays bound to what it was. A distributed trainer still
    // gathers its halo for the evaluation with its peers.
    if (distributed)
      wholeBound = false;
    empty = std::move(next);
    return empty.get();
  }
  if (distributed && wholeBound)
    if (llvm::Error e = model.setDistribution(nullptr))
      return std::move(e);
  // The model lets go of the previous batch before it is freed.
  if (llvm::Error e = model.setGraph(next->graph))
    return std::move(e);
  if (llvm::Error e = model.setInput(featureName, std::move(next->features)))
    return std::move(e);
  if (!labelName.empty())
    if (llvm::Error e = model.setInput(labelName, std::move(next->labels)))
      return std::move(e);
  current = std::move(next);
  if (options.linkPairs)
    forward.pairs = &current->pairs;
  wholeBound = false;
  forward.degrees = &current->degrees;
  forward.vertexIds = &current->sample.vertices;
  if (options.rowExtents)
    forward.rowLevels = current->sample.levels;
  forward.lossMask.resize(size_t(current->sample.seeds()));
  std::iota(forward.lossMask.begin(), forward.lossMask.end(), 0);
  forward.exactLossMask = true;
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
  current.reset();
  if (distributed) {
    // The partition's rows, its halo's from their owners (every trainer
    // evaluates at once).
    const Tensor &owned = *distributed->ownedRows;
    const int64_t width = owned.rowSize();
    Tensor x = Tensor::uninitialized({whole.numVertices, width});
    std::copy(owned.f32(), owned.f32() + owned.numElements(), x.f32());
    if (llvm::Error e = distributed->dist->gatherHalo(x.f32(), width))
      return e;
    if (llvm::Error e = model.setDistribution(distributed->dist))
      return e;
    if (llvm::Error e = model.setInput(featureName, std::move(x)))
      return e;
    if (llvm::Error e = model.setInput(labelName, Tensor::view(labels)))
      return e;
    wholeBound = true;
    return llvm::Error::success();
  }
  // Views: the tensors stay here, where the loader reads them too.
  if (llvm::Error e = model.setInput(featureName, Tensor::view(features)))
    return e;
  if (!labelName.empty())
    if (llvm::Error e = model.setInput(labelName, Tensor::view(labels)))
      return e;
  wholeBound = true;
  return llvm::Error::success();
}
