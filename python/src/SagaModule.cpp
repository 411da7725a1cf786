//===- SagaModule.cpp - the `saga._saga` Python extension -----------------===//
//
// pybind11 bindings of the C++ API (api/Model.h, the trainer, the
// dataset loaders) for the `saga` package (python/saga/__init__.py, which
// users import). NumPy inputs of the bound dtype and C order are bound
// without a copy (the model keeps a reference to the array); others are
// converted once. Saga's errors become saga.Error with their located
// message.
//
//===----------------------------------------------------------------------===//

#include "api/GraphTrainer.h"
#include "api/LinkTrainer.h"
#include "api/Model.h"
#include "runtime/graph/EdgeSplit.h"
#include "runtime/graph/GraphFile.h"
#include "runtime/graph/Loaders.h"
#include "api/MiniBatches.h"
#include "api/Trainer.h"
#include "runtime/train/LinkMetrics.h"

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>

namespace py = pybind11;
using namespace saga;

namespace {

py::object errorType;

[[noreturn]] void raise(llvm::Error e) {
  std::string message = llvm::toString(std::move(e));
  PyErr_SetString(errorType.ptr(), message.c_str());
  throw py::error_already_set();
}

template <typename T> T check(llvm::Expected<T> value) {
  if (!value)
    raise(value.takeError());
  return std::move(*value);
}

void check(llvm::Error e) {
  if (e)
    raise(std::move(e));
}

/// A 1-D array of vertex ids (any integer dtype) as int32, each in
/// [0, limit).
std::vector<int32_t> ids(const py::array &a, const char *what, int64_t limit) {
  if (a.ndim() != 1 || !(a.dtype().kind() == 'i' || a.dtype().kind() == 'u'))
    throw py::type_error(std::string(what) +
                         " must be a 1-D integer array, not " +
                         std::string(py::str(a.dtype())) + " with " +
                         std::to_string(a.ndim()) + " dimensions");
  auto v = py::array_t<int64_t, py::array::c_style | py::array::forcecast>(a);
  std::vector<int32_t> out(size_t(v.size()));
  const int64_t *p = v.data();
  for (py::ssize_t i = 0; i < v.size(); ++i) {
    if (p[i] < 0 || p[i] >= limit)
      throw py::value_error(std::string(what) + "[" + std::to_string(i) +
                            "] = " + std::to_string(p[i]) +
                            " is out of range [0, " + std::to_string(limit) +
                            ")");
    out[size_t(i)] = int32_t(p[i]);
  }
  return out;
}

TrainOptions::Optimizer optimizerNamed(const std::string &name) {
  if (name == "adam")
    return TrainOptions::Adam;
  if (name == "sgd")
    return TrainOptions::SGD;
  throw py::value_error("optimizer must be 'adam' or 'sgd', not '" + name +
                        "'");
}

/// An epoch's metrics: kept in `history` and given to `progress` (if any).
void report(py::list &history, const py::object &progress,
            const py::dict &epoch) {
  history.append(epoch);
  if (!progress.is_none())
    progress(epoch);
}

py::array_t<float> toNumpy(const Tensor &t) {
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  py::array_t<float> a(shape);
  std::copy(t.f32(), t.f32() + t.numElements(), a.mutable_data());
  return a;
}

EdgeSplit edgeSplitOf(const py::dict &d);

/// A compiled model with its graph and the arrays bound to it.
class PyModel {
public:
  explicit PyModel(std::unique_ptr<Model> m) : model(std::move(m)) {}

  void setGraph(const py::array &src, const py::array &dst,
                int64_t numVertices, const py::object &graphOffsets) {
    if (numVertices < 0 || numVertices > INT32_MAX)
      throw py::value_error("num_vertices must be in [0, 2^31), not " +
                            std::to_string(numVertices));
    std::vector<int32_t> s = ids(src, "src", numVertices),
                         d = ids(dst, "dst", numVertices);
    if (s.size() != d.size())
      throw py::value_error("src has " + std::to_string(s.size()) +
                            " edges, dst " + std::to_string(d.size()));
    if (std::string why = Graph::buildError(numVertices, int64_t(s.size()),
                                           model->selfLoops());
        !why.empty())
      throw py::value_error(why);
    auto g = std::make_unique<Graph>(Graph::build(
        int32_t(numVertices), s, d, model->selfLoops()));
    if (!graphOffsets.is_none()) {
      auto offsets = py::array_t<int64_t, py::array::c_style |
                                              py::array::forcecast>(graphOffsets);
      if (offsets.ndim() != 1)
        throw py::value_error("graph_offsets must be one-dimensional");
      g->graphOffsets.assign(offsets.data(), offsets.data() + offsets.size());
      if (std::string why = g->graphOffsetsError(); !why.empty())
        throw py::value_error(why);
    }
    check(model->setGraph(*g));
    graph = std::move(g);
    kept.clear();
  }

  /// Binds `value` to input `name`: float32 (vertex or edge values) or
  /// integer classes, one row per vertex (or edge).
  void setInput(const std::string &name, const py::array &value) {
    if (!graph)
      throw py::value_error("set the graph before its inputs");
    const ValueInfo *info = nullptr;
    std::vector<ValueInfo> all = model->inputs();
    for (const ValueInfo &in : all)
      if (in.name == name)
        info = &in;
    if (!info) {
      std::string names;
      for (const ValueInfo &in : all)
        names += (names.empty() ? "'" : ", '") + in.name + "'";
      throw py::key_error("the model has no input '" + name +
                          "'; its inputs are " + names);
    }
    int64_t rows = info->domain == ValueInfo::Edge ? graph->numEdges
                                                   : graph->numVertices;
    int64_t width = 1;
    for (int64_t d : info->shape)
      width *= d;
    std::vector<int64_t> shape{rows};
    shape.insert(shape.end(), info->shape.begin(), info->shape.end());
    auto describe = [&] {
      std::string s = "(";
      for (size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
      return s + (shape.size() == 1 ? ",)" : ")");
    };
    if (value.ndim() < 1 || value.shape(0) != rows ||
        value.size() != rows * width)
      throw py::value_error(
          "input '" + name + "' needs shape " + describe() + ", got " +
          std::string(py::str(py::tuple(py::cast(std::vector<py::ssize_t>(
              value.shape(), value.shape() + value.ndim()))))));
    if (info->dtype == DType::I32) {
      if (!(value.dtype().kind() == 'i' || value.dtype().kind() == 'u'))
        throw py::type_error("input '" + name +
                             "' holds classes: an integer array, not " +
                             std::string(py::str(value.dtype())));
      auto v = py::array_t<int32_t, py::array::c_style | py::array::forcecast>(
          value);
      Tensor t(shape, DType::I32);
      std::copy(v.data(), v.data() + v.size(), t.i32());
      check(model->setInput(name, std::move(t)));
      labels.assign(v.data(), v.data() + v.size());
      return;
    }
    if (value.dtype().kind() != 'f')
      throw py::type_error("input '" + name + "' needs floats, not " +
                           std::string(py::str(value.dtype())));
    // float32 in C order: bound as it is, no copy.
    auto f = py::array_t<float, py::array::c_style | py::array::forcecast>(
        value);
    kept[name] = f;
    check(model->setInput(
        name, Tensor::borrow(const_cast<float *>(f.data()), shape, DType::F32)));
  }

  /// Whether input `name` is bound to `value`'s own memory.
  bool sharesMemory(const std::string &name, const py::array &value) const {
    auto it = kept.find(name);
    return it != kept.end() && it->second.data() == value.data();
  }

  /// The prediction, or with `named` a dict of it ("out") and the values
  /// named at compile time.
  py::object forward(bool named) {
    requireGraph();
    ForwardOptions o;
    ForwardResult r = check(model->forward(o));
    if (!named)
      return toNumpy(r.prediction);
    py::dict values;
    values["out"] = toNumpy(r.prediction);
    for (const auto &[name, t] : r.outputs)
      values[py::str(name)] = toNumpy(t);
    return values;
  }

  /// One training step's loss and d loss / d parameter without updating
  /// anything: dropout drawn from `seed`, the loss over `mask` (all
  /// labelled vertices when None).
  py::tuple lossAndGrad(const py::object &mask, uint64_t seed,
                        const py::object &pairs) {
    requireGraph();
    ForwardOptions o;
    if (!mask.is_none()) {
      o.lossMask = ids(py::array::ensure(mask), "mask", graph->numVertices);
      if (o.lossMask.empty())
        throw py::value_error("mask is empty: give vertex ids, or None for "
                              "every labelled vertex");
    }
    PairSet set;
    if (!pairs.is_none()) {
      auto t = pairs.cast<py::tuple>();
      if (t.size() != 3)
        throw py::value_error("pairs is (src, dst, labels)");
      auto y = py::array_t<float, py::array::c_style | py::array::forcecast>(
          py::array::ensure(t[2]));
      std::string why;
      set = PairSet::make(
          graph->numVertices,
          ids(py::array::ensure(t[0]), "pairs' src", graph->numVertices),
          ids(py::array::ensure(t[1]), "pairs' dst", graph->numVertices),
          std::vector<float>(y.data(), y.data() + y.size()), &why);
      if (!why.empty())
        throw py::value_error("pairs: " + why);
      o.pairs = &set;
    }
    TrainStepResult r = check(model->trainStep(o, seed));
    py::dict grads;
    for (const auto &[name, t] : r.gradients)
      grads[py::str(name)] = toNumpy(t);
    return py::make_tuple(r.loss, grads);
  }

  py::list train(const py::array &trainIds, const py::array &valIds,
                 const py::array &testIds, unsigned epochs, double lr,
                 const std::string &optimizer, uint64_t seed,
                 unsigned patience, const std::string &log,
                 const std::string &checkpoint, bool resume,
                 int64_t batchSize, std::vector<int64_t> fanout,
                 const py::object &progress) {
    requireGraph();
    if (labels.empty())
      throw py::value_error("bind the labels (the class input) before "
                            "training");
    Split split;
    split.labels = labels;
    split.train = ids(trainIds, "train", graph->numVertices);
    split.val = ids(valIds, "val", graph->numVertices);
    split.test = ids(testIds, "test", graph->numVertices);
    TrainOptions t;
    t.epochs = epochs;
    t.learningRate = lr;
    t.optimizer = optimizerNamed(optimizer);
    t.seed = seed;
    t.patience = patience;
    t.logPath = log;
    t.checkpointPath = checkpoint;
    t.resume = resume;
    model->initParams(seed);
    std::unique_ptr<MiniBatches> batches;
    if (batchSize > 0) {
      MiniBatchOptions mb;
      mb.batchSize = batchSize;
      mb.fanouts = fanout;
      batches = check(MiniBatches::create(*model, *graph, split.train, mb,
                                          seed));
      t.batches = batches.get();
    } else if (!fanout.empty()) {
      throw py::value_error("fanout needs batch_size");
    }
    py::list history;
    auto result = train_(split, t, [&](const EpochStats &s) {
      py::dict e;
      e["epoch"] = s.epoch;
      e["loss"] = s.loss;
      e["train_acc"] = s.trainAcc;
      e["val_acc"] = s.valAcc;
      e["test_acc"] = s.testAcc;
      e["seconds"] = s.seconds;
      report(history, progress, e);
    });
    batches.reset(); // the whole graph's inputs back
    check(std::move(result));
    return history;
  }

  py::list trainLinks(const py::dict &splitDict, unsigned epochs, double lr,
                      const std::string &optimizer, uint64_t seed,
                      int64_t negatives, const std::string &log,
                      int64_t batchSize, std::vector<int64_t> fanout,
                      int64_t maxBatches, int64_t hitsK,
                      const py::object &progress) {
    requireGraph();
    EdgeSplit split = edgeSplitOf(splitDict);
    if (split.numVertices != graph->numVertices)
      throw py::value_error("the split is over " +
                            std::to_string(split.numVertices) +
                            " vertices, the graph has " +
                            std::to_string(graph->numVertices));
    if (!fanout.empty() && batchSize <= 0)
      throw py::value_error("fanout needs batch_size");
    // The model propagates over the training edges only: the split's
    // message graph replaces the graph set (the features stay bound).
    EdgeList m = split.messageGraph();
    auto g = std::make_unique<Graph>(
        Graph::build(m.numVertices, m.src, m.dst, model->selfLoops()));
    check(model->setGraph(*g));
    graph = std::move(g);
    LinkTrainOptions o;
    o.train.epochs = epochs;
    o.train.learningRate = lr;
    o.train.optimizer = optimizerNamed(optimizer);
    o.train.seed = seed;
    o.train.logPath = log;
    o.negatives = negatives;
    o.batchSize = batchSize;
    o.fanouts = fanout;
    o.maxBatches = maxBatches;
    o.hitsK = hitsK;
    model->initParams(seed);
    py::list history;
    auto result = saga::trainLinks(
        *model, *graph, split, o, [&](const LinkEpochStats &s) {
          py::dict e;
          e["epoch"] = s.epoch;
          e["loss"] = s.loss;
          e["val_auc"] = s.val.auc;
          e["val_hits"] = s.val.hits;
          e["val_mrr"] = s.val.mrr;
          e["test_auc"] = s.test.auc;
          e["test_hits"] = s.test.hits;
          e["test_mrr"] = s.test.mrr;
          e["batches"] = s.batches;
          e["seconds"] = s.seconds;
          report(history, progress, e);
        });
    check(std::move(result));
    return history;
  }

  py::dict params() const {
    py::dict d;
    for (const ValueInfo &p : model->params())
      if (const Tensor *t = model->param(p.name))
        d[py::str(p.name)] = toNumpy(*t);
    return d;
  }

  void setParam(const std::string &name, const py::array &value) {
    auto f = py::array_t<float, py::array::c_style | py::array::forcecast>(
        value);
    Tensor t(std::vector<int64_t>(f.shape(), f.shape() + f.ndim()));
    std::copy(f.data(), f.data() + f.size(), t.f32());
    check(model->setParam(name, std::move(t)));
  }

  void initParams(uint64_t seed) { model->initParams(seed); }

  py::list inputs() const {
    py::list l;
    for (const ValueInfo &in : model->inputs()) {
      py::dict d;
      d["name"] = in.name;
      d["shape"] = in.shape;
      d["dtype"] = in.dtype == DType::I32 ? "int32" : "float32";
      d["domain"] = in.domain == ValueInfo::Edge ? "edge" : "vertex";
      l.append(d);
    }
    return l;
  }

  std::string plan() const { return model->planIR(); }
  std::string device() const { return model->deviceName(); }
  bool selfLoops() const { return model->selfLoops(); }
  int64_t numVertices() const { return graph ? graph->numVertices : 0; }
  int64_t numEdges() const { return graph ? graph->numEdges : 0; }

private:
  void requireGraph() const {
    if (!graph)
      throw py::value_error("set the graph first (Model.set_graph)");
  }
  llvm::Expected<TrainResult>
  train_(const Split &split, const TrainOptions &t,
         const std::function<void(const EpochStats &)> &f) {
    return saga::train(*model, split, t, f);
  }

public:
  /// The compiled model, no longer this object's (cross-validation's
  /// folds own theirs).
  std::unique_ptr<Model> takeModel() { return std::move(model); }

private:
  std::unique_ptr<Model> model;
  std::unique_ptr<Graph> graph;
  std::map<std::string, py::array_t<float>> kept; // arrays bound, no copy
  std::vector<int32_t> labels;
};

PyModel compile(const std::string &text, bool isSource, unsigned optLevel,
                unsigned threads, std::vector<std::string> outputs,
                const std::string &device) {
  if (device != "cpu" && device != "cuda")
    throw py::value_error("device must be 'cpu' or 'cuda', not '" + device +
                          "'");
  CompileOptions o;
  o.outputs = std::move(outputs);
  o.training = true;
  o.optLevel = optLevel;
  o.threads = std::max(1u, threads);
  if (optLevel != 0 && optLevel != 2)
    throw py::value_error("opt_level must be 0 or 2, not " +
                          std::to_string(optLevel));
  std::unique_ptr<Model> m = check(
      isSource ? Model::compileSource(text, "<string>", o)
               : Model::compileFile(text, o));
  if (device == "cuda")
    if (llvm::Error e = m->useCuda())
      raise(llvm::createStringError("device 'cuda': " +
                                    llvm::toString(std::move(e))));
  return PyModel(std::move(m));
}

py::dict datasetArrays(const std::string &path) {
  Dataset d = check(saga::loadDataset(path));
  py::dict out;
  auto vec = [](const std::vector<int32_t> &v) {
    py::array_t<int64_t> a(py::ssize_t(v.size()));
    std::copy(v.begin(), v.end(), a.mutable_data());
    return a;
  };
  out["name"] = d.name;
  out["num_vertices"] = d.edges.numVertices;
  out["src"] = vec(d.edges.src);
  out["dst"] = vec(d.edges.dst);
  out["x"] = toNumpy(d.features);
  out["y"] = vec(d.labels);
  out["num_classes"] = d.numClasses;
  out["train"] = vec(d.train);
  out["val"] = vec(d.val);
  out["test"] = vec(d.test);
  return out;
}

/// Link prediction's split as a dict of [pairs, 2] int64 arrays.
py::dict splitArrays(const EdgeSplit &s) {
  py::dict out;
  auto pairs = [](const VertexPairs &p) {
    py::array_t<int64_t> a({py::ssize_t(p.size()), py::ssize_t(2)});
    int64_t *d = a.mutable_data();
    for (size_t i = 0; i < p.size(); ++i) {
      d[2 * i] = p.src[i];
      d[2 * i + 1] = p.dst[i];
    }
    return a;
  };
  out["train_pos"] = pairs(s.trainPos);
  out["val_pos"] = pairs(s.valPos);
  out["val_neg"] = pairs(s.valNeg);
  out["test_pos"] = pairs(s.testPos);
  out["test_neg"] = pairs(s.testNeg);
  out["num_nodes"] = s.numVertices;
  out["undirected"] = s.undirected;
  return out;
}

std::vector<int32_t> ids(const py::array_t<int64_t, py::array::c_style |
                                                      py::array::forcecast> &a,
                         const char *what) {
  std::vector<int32_t> out(size_t(a.size()));
  const int64_t *d = a.data();
  for (size_t i = 0; i < out.size(); ++i) {
    if (d[i] < 0 || d[i] > INT32_MAX)
      throw py::value_error(std::string(what) + "[" + std::to_string(i) +
                            "] = " + std::to_string(d[i]) +
                            " is not a vertex id");
    out[i] = int32_t(d[i]);
  }
  return out;
}

/// split_edges' dict (or load_edge_split's) as an EdgeSplit.
EdgeSplit edgeSplitOf(const py::dict &d) {
  EdgeSplit s;
  for (const char *key : {"num_nodes", "undirected", "train_pos", "val_pos",
                          "val_neg", "test_pos", "test_neg"})
    if (!d.contains(key))
      throw py::value_error(std::string("the split has no '") + key +
                            "' (make it with saga.split_edges or "
                            "saga.load_edge_split)");
  s.numVertices = d["num_nodes"].cast<int32_t>();
  s.undirected = d["undirected"].cast<bool>();
  const char *names[] = {"train_pos", "val_pos", "val_neg", "test_pos",
                         "test_neg"};
  VertexPairs *sets[] = {&s.trainPos, &s.valPos, &s.valNeg, &s.testPos,
                         &s.testNeg};
  for (int i = 0; i < 5; ++i) {
    auto a = d[names[i]].cast<
        py::array_t<int64_t, py::array::c_style | py::array::forcecast>>();
    if (a.ndim() != 2 || a.shape(1) != 2)
      throw py::value_error(std::string(names[i]) +
                            " must be a [pairs, 2] array");
    std::vector<int32_t> flat = ids(a, names[i]);
    for (size_t r = 0; r + 1 < flat.size(); r += 2)
      sets[i]->push(flat[r], flat[r + 1]);
  }
  return s;
}

py::dict splitEdgesPy(
    const py::array_t<int64_t, py::array::c_style | py::array::forcecast> &src,
    const py::array_t<int64_t, py::array::c_style | py::array::forcecast> &dst,
    int64_t numVertices, double val, double test, double negatives,
    uint64_t seed, bool undirected) {
  EdgeList e;
  e.src = ids(src, "src");
  e.dst = ids(dst, "dst");
  if (e.src.size() != e.dst.size())
    throw py::value_error("src has " + std::to_string(e.src.size()) +
                          " ids, dst " + std::to_string(e.dst.size()));
  if (numVertices < 1 || numVertices > INT32_MAX)
    throw py::value_error("num_nodes must be 1 to 2^31 - 1");
  e.numVertices = int32_t(numVertices);
  for (size_t i = 0; i < e.src.size(); ++i)
    if (e.src[i] >= numVertices || e.dst[i] >= numVertices)
      throw py::value_error("edge " + std::to_string(i) + " (" +
                            std::to_string(e.src[i]) + ", " +
                            std::to_string(e.dst[i]) +
                            ") is out of range for " +
                            std::to_string(numVertices) + " vertices");
  EdgeSplitOptions o;
  o.valFraction = val;
  o.testFraction = test;
  o.negativesPerPositive = negatives;
  o.seed = seed;
  o.undirected = undirected;
  return splitArrays(check(splitEdges(e, o)));
}

/// Graph classification: k-fold cross-validation of the model (a path or
/// source text) on a dataset of many graphs (api/GraphTrainer.h).
py::dict crossValidateGraphs(const std::string &text, bool isSource,
                       const std::string &data, int32_t folds,
                       unsigned epochs, int64_t batchSize, double lr,
                       const std::string &optimizer, unsigned lrStep,
                       double lrGamma, uint64_t seed, unsigned threads,
                       unsigned optLevel, const std::string &device,
                       const py::object &progress) {
  GraphDataset d = check(loadGraphDataset(data));
  GraphTrainOptions o;
  o.train.epochs = epochs;
  o.train.learningRate = lr;
  o.train.optimizer = optimizerNamed(optimizer);
  o.train.seed = seed;
  o.batchSize = batchSize;
  o.lrStep = lrStep;
  o.lrGamma = lrGamma;
  py::list history;
  auto cv = saga::crossValidate(
      [&]() -> llvm::Expected<std::unique_ptr<Model>> {
        PyModel m = compile(text, isSource, optLevel, threads, {}, device);
        return m.takeModel();
      },
      d, folds, o, [&](const GraphEpochStats &s) {
        py::dict e;
        e["fold"] = s.fold;
        e["epoch"] = s.epoch;
        e["loss"] = s.loss;
        e["train_acc"] = s.trainAcc;
        e["test_acc"] = s.testAcc;
        e["seconds"] = s.seconds;
        report(history, progress, e);
      });
  if (!cv)
    raise(cv.takeError());
  py::dict out;
  out["history"] = history;
  out["mean_test_acc"] = cv->meanTestAcc;
  out["std_test_acc"] = cv->stdTestAcc;
  out["best_epoch"] = cv->bestEpoch;
  return out;
}

} // namespace

PYBIND11_MODULE(_saga, m) {
  m.doc() = "Saga's C++ runtime (import saga, not this)";
  errorType = py::reinterpret_borrow<py::object>(
      PyErr_NewException("saga.Error", PyExc_RuntimeError, nullptr));
  m.attr("Error") = errorType;
  m.def("compile", &compile, py::arg("text"), py::arg("is_source"),
        py::arg("opt_level") = 2, py::arg("threads") = 1,
        py::arg("outputs") = std::vector<std::string>(),
        py::arg("device") = "cpu");
  m.def("load_dataset", &datasetArrays, py::arg("path"));
  m.def("split_edges", &splitEdgesPy, py::arg("src"), py::arg("dst"),
        py::arg("num_nodes"), py::arg("val"), py::arg("test"),
        py::arg("negatives"), py::arg("seed"), py::arg("undirected"));
  m.def("write_edge_split", [](const std::string &path, const py::dict &d) {
    check(writeEdgeSplitNpz(path, edgeSplitOf(d)));
  });
  m.def("load_edge_split", [](const std::string &path, int32_t numVertices,
                              bool undirected) {
    return splitArrays(check(loadEdgeSplitNpz(path, numVertices, undirected)));
  });
  m.def("roc_auc", &saga::rocAuc);
  m.def("hits_at_k", &saga::hitsAtK);
  m.def("mrr", &saga::meanReciprocalRank);
  m.def("cross_validate", &crossValidateGraphs, py::arg("text"),
        py::arg("is_source"), py::arg("data"), py::arg("folds"),
        py::arg("epochs"), py::arg("batch_size"), py::arg("lr"),
        py::arg("optimizer"), py::arg("lr_step"), py::arg("lr_gamma"),
        py::arg("seed"), py::arg("threads"), py::arg("opt_level"),
        py::arg("device"), py::arg("progress"));
  py::class_<PyModel>(m, "Model")
      .def("set_graph", &PyModel::setGraph, py::arg("src"), py::arg("dst"),
           py::arg("num_vertices"), py::arg("graph_offsets") = py::none())
      .def("set_input", &PyModel::setInput, py::arg("name"), py::arg("value"))
      .def("shares_memory", &PyModel::sharesMemory)
      .def("forward", &PyModel::forward, py::arg("named") = false)
      .def("loss_and_grad", &PyModel::lossAndGrad, py::arg("mask"),
           py::arg("seed"), py::arg("pairs"))
      .def("train", &PyModel::train, py::arg("train"), py::arg("val"),
           py::arg("test"), py::arg("epochs"), py::arg("lr"),
           py::arg("optimizer"), py::arg("seed"), py::arg("patience"),
           py::arg("log"), py::arg("checkpoint"), py::arg("resume"),
           py::arg("batch_size"), py::arg("fanout"), py::arg("progress"))
      .def("train_links", &PyModel::trainLinks, py::arg("split"),
           py::arg("epochs"), py::arg("lr"), py::arg("optimizer"),
           py::arg("seed"), py::arg("negatives"), py::arg("log"),
           py::arg("batch_size"), py::arg("fanout"), py::arg("max_batches"),
           py::arg("hits_k"), py::arg("progress"))
      .def("params", &PyModel::params)
      .def("set_param", &PyModel::setParam)
      .def("init_params", &PyModel::initParams)
      .def("inputs", &PyModel::inputs)
      .def_property_readonly("plan", &PyModel::plan)
      .def_property_readonly("self_loops", &PyModel::selfLoops)
      .def_property_readonly("device", &PyModel::device)
      .def_property_readonly("num_vertices", &PyModel::numVertices)
      .def_property_readonly("num_edges", &PyModel::numEdges);
}
