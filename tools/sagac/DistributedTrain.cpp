//===- DistributedTrain.cpp - `mpirun -np N sagac train --partition K` ----===//
//
// Full-graph training over MPI ranks. Every rank reads the graph's
// structure, rank 0 cuts it (or reads a saved partitioning) and sends the
// cut to all; each rank then holds only its part's rows of the features
// (owned and halo: from a graph file it reads just the intervals holding
// them, one at a time; a Planetoid folder is read whole and the rest
// dropped), and trains the same model on its part (runtime/distributed/): halos
// are exchanged before propagations, gradients summed over the ranks, so N
// ranks train the model one process trains. Rank 0 prints, logs,
// checkpoints and saves the parameters.
//
// RankTraining holds one rank's run, step by step: compile, load the
// structure, cut (rank 0) and broadcast the cut, load the part's rows,
// report the parts, bind the inputs (or start the mini-batches' server of
// remote features), train, refining ROC's cost model every few epochs
// (runtime/distributed/OnlineRefinement.h), report the exchanges, save.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "runtime/distributed/GraphPart.h"
#include "runtime/distributed/MpiDistribution.h"
#include "runtime/distributed/OnlineRefinement.h"
#include "runtime/distributed/Partitioner.h"
#include "runtime/distributed/RemoteFeatures.h"
#include "runtime/graph/GraphFile.h"
#include "runtime/graph/Reorder.h"
#include "runtime/train/ParamsFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <mpi.h>

#include <chrono>
#include <optional>
#include <unistd.h>

// Open MPI and PMIx keep allocations of MPI_Init past MPI_Finalize and then
// unload the plugins that made them, so LeakSanitizer cannot name them (or
// suppress them by library): make test-asan ignores what the two calls
// allocate. (Ranks under mpirun run without leak checks: scripts/sanitize.sh.)
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define SAGA_MPI_ALLOCATIONS_IGNORED __lsan::ScopedDisabler ignoreLeaks
#else
#define SAGA_MPI_ALLOCATIONS_IGNORED
#endif

using namespace saga;

namespace {
double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The cut rank 0 makes (or reads), for the whole graph `g`.
llvm::Expected<SavedPartitioning> cut(const RunOptions &o, const Graph &g,
                                      int64_t ranks, const CostModel &cost) {
  if (!o.partitionFile.empty() && llvm::sys::fs::exists(o.partitionFile)) {
    auto buffer = llvm::MemoryBuffer::getFile(o.partitionFile);
    if (!buffer)
      return llvm::createStringError("cannot read " + o.partitionFile + ": " +
                                     buffer.getError().message());
    auto saved = parsePartitioning((*buffer)->getBuffer().str(), o.partitionFile);
    if (!saved)
      return saved.takeError();
    if (saved->parts.parts() != ranks)
      return llvm::createStringError(
          o.partitionFile + " cuts the graph into " +
          std::to_string(saved->parts.parts()) + " parts, but " +
          std::to_string(ranks) + (ranks == 1 ? " rank was" : " ranks were") +
          " started: run with -np " +
          std::to_string(saved->parts.parts()) +
          " or remove the file to cut again");
    if (saved->vertices != g.numVertices)
      return llvm::createStringError(
          o.partitionFile + " is for a graph of " +
          std::to_string(saved->vertices) + " vertices; this one has " +
          std::to_string(g.numVertices));
    return saved;
  }
  SavedPartitioning s;
  s.method = o.partition;
  s.vertices = g.numVertices;
  if (o.partition == "vertices") {
    s.parts = partitionByVertices(g, ranks);
  } else if (o.partition == "edges") {
    s.parts = partitionByInEdges(g, ranks);
  } else if (o.partition == "roc") {
    s.parts = partitionByCost(g, ranks, cost);
  } else { // metis (the options were checked before MPI started)
    auto p = partitionByMetis(g, ranks, s.order);
    if (!p)
      return p.takeError();
    s.parts = std::move(*p);
  }
  if (!o.partitionFile.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream out(o.partitionFile + ".tmp", ec);
    if (ec)
      return llvm::createStringError("cannot write " + o.partitionFile + ": " +
                                     ec.message());
    out << serializePartitioning(s);
    out.close();
    if (out.has_error() ||
        llvm::sys::fs::rename(o.partitionFile + ".tmp", o.partitionFile))
      return llvm::createStringError("cannot write " + o.partitionFile);
  }
  return s;
}

/// ROC's cost model at this model's layer widths: --cost-model's weights
/// (a cost model file, or a parameter file a --partition run saved), else
/// an unfitted prior, one unit per vertex and per in-edge.
llvm::Expected<CostModel> loadCostModel(const RunOptions &o, const Model &m) {
  CostModel cost(m.layerWidths());
  cost.setWeights({1, 1, 0, 0, 0});
  if (o.costModel.empty())
    return cost;
  auto buffer = llvm::MemoryBuffer::getFile(o.costModel);
  if (!buffer)
    return llvm::createStringError("cannot read " + o.costModel + ": " +
                                   buffer.getError().message());
  auto parsed = CostModel::parse((*buffer)->getBuffer().str());
  if (!parsed)
    return llvm::createStringError(o.costModel + ": " +
                                   llvm::toString(parsed.takeError()));
  // Only the weights: a cost is per unit of width, and the cut depends on
  // costs' ratios only.
  cost.setWeights(parsed->weights());
  return cost;
}

/// Sends rank 0's cut to every rank (an empty method: rank 0 failed).
void broadcast(SavedPartitioning &s, MPI_Comm comm) {
  int64_t sizes[3] = {int64_t(s.method.size()), int64_t(s.parts.bounds.size()),
                      int64_t(s.order.newId.size())};
  MPI_Bcast(sizes, 3, MPI_INT64_T, 0, comm);
  s.method.resize(size_t(sizes[0]));
  s.parts.bounds.resize(size_t(sizes[1]));
  s.order.newId.resize(size_t(sizes[2]));
  MPI_Bcast(s.method.data(), int(sizes[0]), MPI_CHAR, 0, comm);
  MPI_Bcast(s.parts.bounds.data(), int(sizes[1]), MPI_INT32_T, 0, comm);
  MPI_Bcast(s.order.newId.data(), int(sizes[2]), MPI_INT32_T, 0, comm);
  s.order.oldId.assign(s.order.newId.size(), 0);
  for (size_t v = 0; v < s.order.newId.size(); ++v)
    s.order.oldId[size_t(s.order.newId[v])] = int32_t(v);
}

/// Every rank's sample of its part's cost, in rank order.
std::vector<CostModel::Sample> gatherSamples(const CostModel::Sample &mine,
                                             int ranks, MPI_Comm comm) {
  constexpr int kRow = kCostFeatures + 1;
  double row[kRow];
  std::copy(mine.inputs.begin(), mine.inputs.end(), row);
  row[kCostFeatures] = mine.seconds;
  std::vector<double> rows(size_t(kRow * ranks));
  MPI_Allgather(row, kRow, MPI_DOUBLE, rows.data(), kRow, MPI_DOUBLE, comm);
  std::vector<CostModel::Sample> samples(static_cast<size_t>(ranks));
  for (int q = 0; q < ranks; ++q) {
    std::copy(rows.begin() + q * kRow, rows.begin() + q * kRow + kCostFeatures,
              samples[size_t(q)].inputs.begin());
    samples[size_t(q)].seconds = rows[size_t(q * kRow + kCostFeatures)];
  }
  return samples;
}

/// Why the options cannot train across ranks (empty: they can); checked
/// before MPI starts, so that a mistake is one line, not an MPI abort.
std::string optionsError(const RunOptions &o) {
  if (o.partition != "vertices" && o.partition != "edges" &&
      o.partition != "roc" && o.partition != "metis")
    return "--partition: '" + o.partition +
           "' is not vertices, edges, roc or metis";
  if (o.memoryBudget > 0)
    return "--partition trains in memory on each rank: no --memory-budget";
  if (o.device == "cuda")
    return "--partition trains on the CPU; --device cuda is not supported "
           "with it yet";
  return "";
}

/// One rank of `mpirun -np N sagac train --partition K`: the steps of
/// runDistributedTrain, in order (run()), and the state they hand on. A
/// step's error ends the job (fail()).
class RankTraining {
public:
  explicit RankTraining(const TrainCommandOptions &options)
      : options(options), o(options.run),
        batched(options.batches.batchSize > 0),
        // Mini-batches fetch remote features on their loader thread while
        // the training thread sums gradients: both call MPI.
        wanted(batched ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED) {}

  /// Trains; returns the exit status (after a failure: MPI_Abort).
  int run();

private:
  void startMpi();
  int fail(llvm::Error e);
  /// Only rank 0 talks; the others' output would repeat it N times.
  llvm::raw_ostream &out() { return rank == 0 ? llvm::outs() : llvm::nulls(); }

  llvm::Error setUp();
  llvm::Error compile();
  llvm::Error loadStructure();
  void relabelAll(const VertexOrder &order);
  Graph buildGraph() const {
    return Graph::build(d.edges.numVertices, d.edges.src, d.edges.dst,
                        model->selfLoops());
  }
  llvm::Error cutGraph();
  llvm::Error loadLocalRows();
  void reportParts();
  void keepForRefinement();
  llvm::Error bindInputs();
  llvm::Error startBatches();
  llvm::Error loadParams();
  void printPlan();

  llvm::Expected<TrainResult> trainEpochs();
  void onEpoch(const EpochStats &e);
  void printBatchEpoch(const EpochStats &e);
  void refine(unsigned epoch);

  void printFinal(const TrainResult &result);
  void reportRemoteFeatures(const TrainResult &result);
  void reportExchanges(const TrainResult &result);
  llvm::Error saveParams();
  void finish();

  const TrainCommandOptions &options;
  const RunOptions &o;
  const bool batched;
  const int wanted;
  int provided = 0;
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, ranks = 1;
  char host[256] = "?";

  std::unique_ptr<Model> model;
  // A graph file is read without its features: each rank reads only the
  // rows of its part. fileId[v] is vertex v's id in the file through the
  // relabellings.
  std::unique_ptr<GraphFile> file;
  Dataset d;
  std::vector<int32_t> fileId;
  Graph g;
  CostModel cost;
  SavedPartitioning s;
  double cutSeconds = 0; // rank 0's; before waiting for all
  GraphPart part;
  // This rank's rows of the features and labels; the rest are dropped.
  Dataset local;
  int64_t intervalsRead = 0;
  Split split;
  std::optional<Graph> whole;
  std::optional<OnlineRefinement> refinement;
  std::unique_ptr<MpiDistribution> dist;
  std::unique_ptr<RemoteFeatures> remote;
  std::unique_ptr<MiniBatches> batches;
  TrainOptions t;

  // Between epochs: the counters at the last one.
  ExchangeCounters last;
  RemoteFeatureCounters lastRemote; // mini-batches
  double lastWait = 0, trainSeconds = 0;
};

int RankTraining::run() {
  startMpi();
  if (llvm::Error e = setUp())
    return fail(std::move(e));
  auto result = trainEpochs();
  if (!result)
    return fail(result.takeError());
  printFinal(*result);
  if (batches)
    reportRemoteFeatures(*result);
  reportExchanges(*result);
  if (llvm::Error e = saveParams())
    return fail(std::move(e));
  finish();
  return 0;
}

void RankTraining::startMpi() {
  {
    SAGA_MPI_ALLOCATIONS_IGNORED;
    MPI_Init_thread(nullptr, nullptr, wanted, &provided);
  }
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  gethostname(host, sizeof host - 1);
}

// A rank that fails takes the others down (they would wait for it in the
// next exchange), after saying which rank and where.
int RankTraining::fail(llvm::Error e) {
  llvm::errs() << "sagac: error: rank " << rank << " of " << ranks << " ("
               << host << "): " << llvm::toString(std::move(e)) << "\n";
  llvm::errs().flush();
  MPI_Abort(comm, 1);
  return 1;
}

/// Everything before the first epoch.
llvm::Error RankTraining::setUp() {
  if (provided < wanted)
    return llvm::createStringError(
        "this MPI library does not provide MPI_THREAD_MULTIPLE, which "
        "distributed mini-batches need (a loader thread fetches features)");
  if (llvm::Error e = compile())
    return e;
  if (llvm::Error e = loadStructure())
    return e;
  if (llvm::Error e = cutGraph())
    return e;
  if (llvm::Error e = loadLocalRows())
    return e;
  reportParts();
  keepForRefinement();
  dist = std::make_unique<MpiDistribution>(part, comm, o.haloOverlap);
  if (llvm::Error e = model->setGraph(part.local))
    return e;
  if (llvm::Error e = model->setDistribution(dist.get()))
    return e;
  if (llvm::Error e = bindInputs())
    return e;
  if (llvm::Error e = loadParams())
    return e;
  printPlan();
  return llvm::Error::success();
}

llvm::Error RankTraining::compile() {
  CompileOptions co;
  co.threads = o.threads;
  co.optLevel = o.optLevel;
  co.disabledPasses = o.disabledPasses;
  co.training = true;
  co.distributed = true;
  co.miniBatch = batched;
  auto compiled = Model::compileFile(o.model, co);
  if (!compiled)
    return compiled.takeError();
  model = std::move(*compiled);
  return llvm::Error::success();
}

/// The whole graph's structure (and, but from a graph file, its features),
/// relabelled by degree as --reorder says, and its graph.
llvm::Error RankTraining::loadStructure() {
  if (isGraphFile(o.data) && (o.format.empty() || o.format == "sgf")) {
    auto opened = GraphFile::open(o.data);
    if (!opened)
      return opened.takeError();
    file = std::move(*opened);
    auto structure = file->readAll(/*features=*/false);
    if (!structure)
      return structure.takeError();
    d = std::move(*structure);
  } else {
    auto loaded = loadDataset(o.data, o.arrays, o.format);
    if (!loaded)
      return loaded.takeError();
    d = std::move(*loaded);
  }
  fileId.resize(size_t(d.edges.numVertices));
  for (size_t v = 0; v < fileId.size(); ++v)
    fileId[v] = int32_t(v);
  if (o.reorder == RunOptions::Reorder::Degree ||
      (o.reorder == RunOptions::Reorder::Auto &&
       d.edges.numVertices >= kAutoReorderVertices))
    relabelAll(degreeOrder(d.edges));
  if (std::string why = Graph::buildError(
          d.edges.numVertices, int64_t(d.edges.src.size()), model->selfLoops());
      !why.empty())
    return llvm::createStringError("graph " + d.name + ": " + why);
  g = buildGraph();
  return llvm::Error::success();
}

void RankTraining::relabelAll(const VertexOrder &order) {
  relabel(d, order);
  std::vector<int32_t> next(fileId.size());
  for (size_t v = 0; v < fileId.size(); ++v)
    next[size_t(order.newId[v])] = fileId[v];
  fileId = std::move(next);
}

/// Rank 0 cuts the graph (or reads the cut), every rank gets it and builds
/// its part.
llvm::Error RankTraining::cutGraph() {
  auto loadedCost = loadCostModel(o, *model);
  if (!loadedCost)
    return loadedCost.takeError();
  cost = std::move(*loadedCost);
  auto cutStart = std::chrono::steady_clock::now();
  if (rank == 0) {
    auto made = cut(o, g, ranks, cost);
    if (!made)
      return made.takeError();
    s = std::move(*made);
  }
  cutSeconds = since(cutStart);
  broadcast(s, comm);
  if (!s.order.newId.empty()) { // METIS: its parts as contiguous ranges
    relabelAll(s.order);
    g = buildGraph();
  }
  d.edges = EdgeList();
  part = makeGraphPart(g, s.parts, rank);
  return llvm::Error::success();
}

/// This rank's rows of the features (its owned and halo rows; mini-batch
/// trainers hold their own only, the others come from their owners batch
/// by batch) and labels, and its split.
llvm::Error RankTraining::loadLocalRows() {
  local.name = d.name;
  local.numClasses = d.numClasses;
  const size_t featureRows =
      batched ? size_t(part.owned()) : part.globalIds.size();
  if (file) {
    std::vector<int32_t> rows;
    for (size_t i = 0; i < featureRows; ++i)
      rows.push_back(fileId[size_t(part.globalIds[i])]);
    auto features = file->readFeatureRowsOf(rows, &intervalsRead);
    if (!features)
      return features.takeError();
    local.features = std::move(*features);
  } else if (batched) {
    const int64_t width = d.features.rowSize();
    local.features = Tensor::uninitialized({part.owned(), width});
    std::copy(d.features.f32() + int64_t(part.begin) * width,
              d.features.f32() + int64_t(part.end) * width,
              local.features.f32());
  } else {
    local.features = part.localRowsOf(d.features);
  }
  d.features = Tensor();
  if (o.rowNormalize)
    rowNormalize(local.features);
  for (int32_t v : part.globalIds)
    local.labels.push_back(d.labels[size_t(v)]);
  split = Split{local.labels, part.ownedLocal(d.train), part.ownedLocal(d.val),
                part.ownedLocal(d.test)};
  return llvm::Error::success();
}

/// The cut and every part's halo and sizes (gathered on rank 0).
void RankTraining::reportParts() {
  constexpr int kStats = 6;
  int64_t mine[kStats] = {part.owned(),
                          int64_t(part.halo.size()),
                          g.inOffsets[size_t(part.end)] -
                              g.inOffsets[size_t(part.begin)],
                          part.sentRows(),
                          intervalsRead,
                          part.interiorRows()};
  std::vector<int64_t> every(size_t(kStats * ranks));
  MPI_Gather(mine, kStats, MPI_INT64_T, every.data(), kStats, MPI_INT64_T, 0,
             comm);
  out() << llvm::format("graph %s: %d vertices; %d ranks, partition %s (cut "
                        "in %.1f ms)\n",
                        d.name.c_str(), int(s.parts.bounds.back()), ranks,
                        s.method.c_str(), cutSeconds * 1e3);
  for (int q = 0; q < ranks; ++q) {
    const int64_t *st = every.data() + kStats * q;
    out() << llvm::format("  rank %d: %lld vertices (%.0f%% interior), %lld "
                          "in-edges, halo %lld rows, sends %lld rows per "
                          "exchange",
                          q, (long long)st[0],
                          st[0] ? 100.0 * double(st[5]) / double(st[0]) : 0.0,
                          (long long)st[2], (long long)st[1], (long long)st[3]);
    if (file)
      out() << llvm::format("; read its feature rows from %lld of %lld "
                            "intervals",
                            (long long)st[4],
                            (long long)file->info().intervals);
    out() << "\n";
  }
}

/// ROC's model is refined from every rank's measured steps: its part's
/// inputs; rank 0 keeps the whole graph to say what a cut by the refined
/// model would predict. Mini-batches sample the whole graph's structure (a
/// batch reaches past the partition's halo); full-graph training needs only
/// its part.
void RankTraining::keepForRefinement() {
  refinement.emplace(cost, cost.inputs(g, part.begin, part.end),
                     batched ? 0 : o.refineEvery);
  if (rank == 0 && refinement->every() > 0)
    whole = std::move(g);
  if (!batched)
    g = Graph();
}

llvm::Error RankTraining::bindInputs() {
  if (!batched)
    return bindDataset(*model, local);
  // The labels now; the features stay with the remote rows' server.
  for (const ValueInfo &in : model->inputs())
    if (in.domain == ValueInfo::Vertex && in.dtype == DType::I32) {
      Tensor labels({int64_t(local.labels.size())}, DType::I32);
      std::copy(local.labels.begin(), local.labels.end(), labels.i32());
      if (llvm::Error e = model->setInput(in.name, std::move(labels)))
        return e;
    }
  return startBatches();
}

/// Mini-batches: the server of remote feature rows, and the batches.
llvm::Error RankTraining::startBatches() {
  std::vector<int64_t> haloInDegree;
  for (size_t i = size_t(part.owned()); i < part.globalIds.size(); ++i)
    haloInDegree.push_back(int64_t(part.inDegrees[i]));
  remote = std::make_unique<RemoteFeatures>(std::move(local.features), s.parts,
                                            rank, part.halo, haloInDegree,
                                            options.buffer, comm);
  if (llvm::Error e = remote->start())
    return e;
  // Every trainer runs as many batches as the one with the most seeds.
  std::vector<int32_t> seeds;
  for (int32_t r : split.train)
    seeds.push_back(part.begin + r);
  const int64_t b = options.batches.batchSize;
  int64_t mineCount = (int64_t(seeds.size()) + b - 1) / b, most = 0;
  MPI_Allreduce(&mineCount, &most, 1, MPI_INT64_T, MPI_MAX, comm);
  DistributedBatches setup;
  setup.structure = &g;
  setup.rows = remote.get();
  setup.ownedRows = &remote->ownedRows();
  setup.labels = d.labels;
  setup.dist = dist.get();
  setup.batches = most;
  auto made = MiniBatches::createDistributed(
      *model, part.local, std::move(seeds), options.batches, options.train.seed,
      std::move(setup));
  if (!made)
    return made.takeError();
  batches = std::move(*made);
  return llvm::Error::success();
}

llvm::Error RankTraining::loadParams() {
  if (!o.params.empty()) {
    auto params = loadParamsFile(o.params);
    if (!params)
      return params.takeError();
    for (auto &[name, t] : *params)
      if (llvm::Error e = model->setParam(name, std::move(t)))
        return e;
  }
  model->initParams(o.seed); // the same on every rank: the same seed
  return llvm::Error::success();
}

/// The training options, and what rank 0 says of them.
void RankTraining::printPlan() {
  t = options.train;
  t.dist = dist.get();
  t.writes = rank == 0;
  t.batches = batches.get();
  if (batches) {
    std::string fanouts;
    for (int64_t f : options.batches.fanouts)
      fanouts += (fanouts.empty() ? "" : ",") + std::to_string(f);
    std::string buffer =
        options.buffer.fraction > 0
            ? llvm::formatv("MassiveGNN's buffer holding {0:F0}% of each halo "
                            "(Delta {1}, alpha {2})",
                            100 * options.buffer.fraction,
                            options.buffer.period, options.buffer.alpha)
                  .str()
            : "no buffer";
    out() << llvm::format(
        "mini-batches of %lld seeds, fan-out %s, %lld per epoch on every "
        "rank; remote features fetched on a loader thread, %s; evaluation "
        "on the whole graph\n",
        (long long)options.batches.batchSize, fanouts.c_str(),
        (long long)batches->batchesPerEpoch(), buffer.c_str());
  }
  out() << llvm::format("training %u epochs, %s lr %g, seed %llu, on %d "
                        "ranks\n",
                        t.epochs,
                        t.optimizer == TrainOptions::Adam ? "Adam" : "SGD",
                        t.learningRate, (unsigned long long)t.seed, ranks);
}

llvm::Expected<TrainResult> RankTraining::trainEpochs() {
  return train(*model, split, t, [&](const EpochStats &e) { onEpoch(e); });
}

/// After each epoch: its line, and every --refine-every epochs ROC's
/// online refinement.
void RankTraining::onEpoch(const EpochStats &e) {
  ExchangeCounters c = dist->counters();
  const bool refineNow = refinement->measure(
      e.epoch, std::max(0.0, e.seconds - (c.seconds - last.seconds)));
  if (batches) {
    printBatchEpoch(e);
    out().flush();
    return;
  }
  if (!options.quiet) {
    ExchangeCounters epoch; // the overlap of this epoch's exchanges
    epoch.hiddenSeconds = c.hiddenSeconds - last.hiddenSeconds;
    epoch.exposedSeconds = c.exposedSeconds - last.exposedSeconds;
    out() << llvm::format(
        "epoch %4u/%u  loss %.4f  train %.4f  val %.4f  "
        "%.1f ms  (rank 0 sent %.1f KiB, %.1f ms in "
        "exchanges, %.0f%% of their time hidden)\n",
        e.epoch, t.epochs, e.loss, e.trainAcc, e.valAcc, e.seconds * 1e3,
        double(c.gatherSent + c.scatterSent - last.gatherSent -
               last.scatterSent) /
            1024,
        (c.seconds - last.seconds) * 1e3, 100 * epoch.overlapFraction());
  }
  last = c;
  if (refineNow)
    refine(e.epoch);
  out().flush();
}

void RankTraining::printBatchEpoch(const EpochStats &e) {
  RemoteFeatureCounters r = remote->counters();
  if (!options.quiet) {
    const int64_t hits = r.hits - lastRemote.hits;
    const int64_t reads = hits + r.misses - lastRemote.misses;
    out() << llvm::format(
        "epoch %4u/%u  loss %.4f  train %.4f  val %.4f  %.1f ms (%.1f "
        "training)  (rank 0: %.1f MiB of remote features, %.0f%% of "
        "its halo reads from the buffer, %.1f ms fetching, %.1f ms "
        "waited for batches)\n",
        e.epoch, t.epochs, e.loss, e.trainAcc, e.valAcc, e.seconds * 1e3,
        e.trainSeconds * 1e3,
        double(r.bytesReceived - lastRemote.bytesReceived) / (1 << 20),
        100 * (reads > 0 ? double(hits) / double(reads) : 0.0),
        (r.fetchSeconds - lastRemote.fetchSeconds) * 1e3,
        (batches->stats().waitSeconds - lastWait) * 1e3);
  }
  lastRemote = r;
  lastWait = batches->stats().waitSeconds;
  trainSeconds += e.trainSeconds;
}

// ROC's online refinement: every --refine-every epochs, each rank's mean
// compute time per epoch (the epoch less its time in exchanges) is a
// sample of its part's cost; all ranks fit the same samples the same way.
void RankTraining::refine(unsigned epoch) {
  Refinement r =
      refinement->refine(gatherSamples(refinement->sample(), ranks, comm),
                         whole ? &*whole : nullptr, s.parts);
  out() << llvm::format("cost model refined at epoch %u from %zu samples: fit "
                        "error %.1f%% RMS; this cut's compute max/mean %.3f "
                        "(predicted %.3f before, %.3f now)",
                        epoch, r.samples, 100 * r.rms, r.measured,
                        r.predictedBefore, r.predicted);
  if (r.recut)
    // How far a cut by the refined model would move the bounds.
    out() << llvm::format("; a cut by it would move %lld vertices (%.1f%%)",
                          (long long)r.moved,
                          100.0 * double(r.moved) / double(whole->numVertices));
  out() << "\n";
}

void RankTraining::printFinal(const TrainResult &result) {
  const EpochStats &f = result.final;
  double total = 0;
  for (const EpochStats &e : result.history)
    total += e.seconds;
  out() << llvm::format("final (epoch %u): loss %.4f  train %.4f  val %.4f  "
                        "test accuracy %.4f  (%.1f ms/epoch)\n",
                        f.epoch, f.loss, f.trainAcc, f.valAcc, f.testAcc,
                        result.history.empty()
                            ? 0.0
                            : total / double(result.history.size()) * 1e3);
}

/// Every trainer's remote features, per epoch, for the report, the bench
/// and the tests.
void RankTraining::reportRemoteFeatures(const TrainResult &result) {
  RemoteFeatureCounters r = remote->counters();
  constexpr int kRemote = 12;
  double mineRemote[kRemote] = {double(r.localRows),
                                double(r.remoteRows),
                                double(r.hits),
                                double(r.misses),
                                double(r.fetchedRows),
                                double(r.bytesReceived),
                                r.fetchSeconds,
                                batches->stats().waitSeconds,
                                trainSeconds,
                                double(remote->bufferRows()),
                                double(remote->haloRows()),
                                double(r.fillBytes)};
  std::vector<double> allRemote(size_t(kRemote * ranks));
  MPI_Gather(mineRemote, kRemote, MPI_DOUBLE, allRemote.data(), kRemote,
             MPI_DOUBLE, 0, comm);
  double epochs = std::max<double>(1.0, double(result.history.size()));
  double bytes = 0, fill = 0;
  for (int q = 0; q < ranks; ++q) {
    const double *v = allRemote.data() + kRemote * q;
    bytes += v[5] - v[11];
    fill += v[11];
    out() << llvm::format(
        "trainer %d: per epoch %.0f local and %.0f remote rows read, %.0f "
        "fetched, %.0f bytes received, %.1f ms fetching, %.1f ms waited "
        "for batches, %.1f ms training; buffer %.0f of %.0f halo rows "
        "(filled with %.0f bytes), hit rate %.1f%% (%.0f hits, %.0f "
        "misses)\n",
        q, v[0] / epochs, v[1] / epochs, v[4] / epochs, (v[5] - v[11]) / epochs,
        v[6] / epochs * 1e3, v[7] / epochs * 1e3, v[8] / epochs * 1e3, v[9],
        v[10], v[11], v[2] + v[3] > 0 ? 100 * v[2] / (v[2] + v[3]) : 0.0, v[2],
        v[3]);
  }
  out() << llvm::format("remote feature bytes per epoch, all trainers: "
                        "%.0f (and %.0f once, filling the buffers)\n",
                        bytes / epochs, fill);
}

/// Every rank's exchanged bytes, per epoch (training steps and
/// evaluations), for the report and the tests.
void RankTraining::reportExchanges(const TrainResult &result) {
  const ExchangeCounters &c = dist->counters();
  double epochsRun = std::max<double>(1.0, double(result.history.size()));
  int64_t bytes[4] = {c.gatherSent, c.gatherReceived, c.scatterSent,
                      c.scatterReceived};
  std::vector<int64_t> all(size_t(4 * ranks));
  MPI_Gather(bytes, 4, MPI_INT64_T, all.data(), 4, MPI_INT64_T, 0, comm);
  for (int q = 0; q < ranks; ++q)
    out() << llvm::format("exchanged per epoch by rank %d: halo rows %.0f "
                          "bytes sent, %.0f received; partial sums %.0f "
                          "sent, %.0f received\n",
                          q, double(all[size_t(4 * q)]) / epochsRun,
                          double(all[size_t(4 * q + 1)]) / epochsRun,
                          double(all[size_t(4 * q + 2)]) / epochsRun,
                          double(all[size_t(4 * q + 3)]) / epochsRun);
  out() << llvm::format("halo exchanges on rank 0: %.1f ms in flight per "
                        "epoch, %.0f%% of it hidden behind computation%s\n",
                        (c.hiddenSeconds + c.exposedSeconds) / epochsRun * 1e3,
                        100 * c.overlapFraction(),
                        o.haloOverlap ? "" : " (--halo-overlap=false)");
}

/// Rank 0 saves the parameters and ROC's model (a later run reads it with
/// --cost-model).
llvm::Error RankTraining::saveParams() {
  if (rank != 0 || options.saveParams.empty())
    return llvm::Error::success();
  NamedTensors params;
  for (const ValueInfo &p : model->params())
    params.emplace_back(p.name, *model->param(p.name));
  return saveParamsFile(options.saveParams, params,
                        std::string(refinement->every() > 0
                                        ? "ROC's cost model, refined from "
                                          "this run's steps:\n"
                                        : "ROC's cost model of this run:\n") +
                            cost.serialize());
}

void RankTraining::finish() {
  out().flush();
  // Their communicator and datatype go before MPI does.
  batches.reset();
  remote.reset();
  SAGA_MPI_ALLOCATIONS_IGNORED;
  MPI_Finalize();
}
} // namespace

int saga::runDistributedTrain(const TrainCommandOptions &options) {
  if (std::string why = optionsError(options.run); !why.empty()) {
    llvm::errs() << "sagac: error: " << why << "\n";
    return 1;
  }
  return RankTraining(options).run();
}
