//===- ModelReferenceLoops.cpp - the example models as plain loops --------===//
//
// The reference ModelReferenceTest.cpp compares Saga with: each model's
// prediction and loss written with plain loops in double precision over the
// test's own edge list (never the CSR, never Saga code), from the same
// parameters and inputs the tests give Saga.
//
//===----------------------------------------------------------------------===//

#include "ModelReferenceTestUtil.h"
#include "TestRandom.h"
#include "api/Model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

using namespace saga;

namespace sagatest::modelref {

//===----------------------------------------------------------------------===//
// Data: parameters and inputs, deterministic per spec / graph
//===----------------------------------------------------------------------===//

int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// A parameter's values: Glorot-like ranges for matrices, [-0.5, 0.5) for
/// vectors and scalars. Depends only on (spec, name, shape).
Tensor randomParam(const std::string &spec, const std::string &name,
                   const std::vector<int64_t> &shape) {
  Tensor t(shape);
  int64_t n = product(shape);
  double limit = 0.5;
  if (shape.size() >= 2) {
    int64_t fanIn = shape[0], fanOut = n / fanIn;
    limit = std::sqrt(6.0 / double(fanIn + fanOut));
  }
  Rng rng(hashString(spec + "/" + name));
  for (int64_t i = 0; i < n; ++i)
    t.f32()[i] = float(rng.uniform(-limit, limit));
  return t;
}

Tensor randomFeatures(const EdgeList &g, int64_t width) {
  Tensor t({g.numVertices, width});
  Rng rng(hashString("x/" + g.name) ^ uint64_t(width));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.f32()[i] = float(rng.uniform(-1, 1));
  return t;
}

/// Classes in [0, C), about one vertex in five unlabelled (-1).
Tensor randomLabels(const EdgeList &g, int64_t classes) {
  Tensor t({g.numVertices}, DType::I32);
  Rng rng(hashString("label/" + g.name) ^ uint64_t(classes));
  for (int32_t v = 0; v < g.numVertices; ++v)
    t.i32()[v] = rng.below(5) == 0 ? -1 : rng.below(classes);
  return t;
}

//===----------------------------------------------------------------------===//
// The reference: plain loops in double over the edge list
//===----------------------------------------------------------------------===//

/// The edges the model sees: the input edges, then v -> v for every vertex
/// when the model declares self loops.
struct Edges {
  int32_t V = 0;
  std::vector<int32_t> src, dst;
  size_t size() const { return src.size(); }
};

Edges modelEdges(const EdgeList &list, bool selfLoops) {
  Edges e{list.numVertices, list.src, list.dst};
  if (selfLoops)
    for (int32_t v = 0; v < list.numVertices; ++v) {
      e.src.push_back(v);
      e.dst.push_back(v);
    }
  return e;
}

/// Parameters as the reference reads them: the same values the test gave
/// setParam, converted to double. Records every name and shape it reads.
class Params {
public:
  explicit Params(std::string spec) : spec(std::move(spec)) {}
  const std::vector<double> &operator()(const std::string &name,
                                        std::vector<int64_t> shape) {
    auto it = values.find(name);
    if (it != values.end())
      return it->second;
    used[name] = shape;
    Tensor t = randomParam(spec, name, shape);
    return values[name] =
               std::vector<double>(t.f32(), t.f32() + t.numElements());
  }
  std::map<std::string, std::vector<int64_t>> used;

private:
  std::string spec;
  std::map<std::string, std::vector<double>> values;
};

Mat toMat(const Tensor &t) {
  Mat m(t.rows(), t.rowSize());
  for (int64_t i = 0; i < t.numElements(); ++i)
    m.v[size_t(i)] = t.f32()[i];
  return m;
}

/// [n, k] @ [k, m] (w row-major).
Mat matmul(const Mat &a, const std::vector<double> &w, int64_t m) {
  Mat out(a.rows, m);
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t i = 0; i < a.cols; ++i) {
      double x = a(r, i);
      if (x == 0)
        continue;
      const double *wr = w.data() + i * m;
      for (int64_t j = 0; j < m; ++j)
        out(r, j) += x * wr[j];
    }
  return out;
}

template <typename F> Mat mapEach(Mat m, F f) {
  for (double &x : m.v)
    x = f(x);
  return m;
}
double relu(double x) { return x > 0 ? x : 0; }
double elu(double x) { return x > 0 ? x : std::exp(x) - 1; }
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double leakyRelu(double x, double slope) { return x > 0 ? x : slope * x; }

std::vector<double> inDegree(const Edges &g) {
  std::vector<double> deg(size_t(g.V), 0.0);
  for (size_t e = 0; e < g.size(); ++e)
    deg[size_t(g.dst[e])] += 1;
  return deg;
}

std::string inst(const std::string &layer, int k, const std::string &p) {
  return layer + "#" + std::to_string(k) + "." + p;
}

// GCNConv: scatter h/sqrt(deg), sum, (a/sqrt(deg)) @ W + b.
Mat gcnLayer(const Mat &h, const Edges &g, Params &P, int k, int64_t out) {
  const auto &W = P(inst("GCNConv", k, "W"), {h.cols, out});
  const auto &b = P(inst("GCNConv", k, "b"), {out});
  std::vector<double> deg = inDegree(g);
  Mat a(g.V, h.cols);
  for (size_t e = 0; e < g.size(); ++e) {
    int32_t u = g.src[e], v = g.dst[e];
    for (int64_t i = 0; i < h.cols; ++i)
      a(v, i) += h(u, i) / std::sqrt(deg[size_t(u)]);
  }
  for (int32_t v = 0; v < g.V; ++v)
    for (int64_t i = 0; i < h.cols; ++i)
      a(v, i) /= std::sqrt(deg[size_t(v)]);
  Mat o = matmul(a, W, out);
  for (int32_t v = 0; v < g.V; ++v)
    for (int64_t j = 0; j < out; ++j)
      o(v, j) += b[size_t(j)];
  return o;
}

// GATConv: z = h @ W [heads, out]; per-head scores leaky_relu(s_src + d_dst);
// per destination and head, softmax over its in-edges weights z_src.
Mat gatLayer(const Mat &h, const Edges &g, Params &P, int k, int64_t out,
             int64_t heads) {
  const auto &W = P(inst("GATConv", k, "W"), {h.cols, heads, out});
  const auto &as = P(inst("GATConv", k, "as"), {heads, out});
  const auto &ad = P(inst("GATConv", k, "ad"), {heads, out});
  const auto &bias = P(inst("GATConv", k, "b"), {heads * out});
  Mat z = matmul(h, W, heads * out); // row: head-major [heads, out]
  Mat s(g.V, heads), d(g.V, heads);
  for (int32_t v = 0; v < g.V; ++v)
    for (int64_t q = 0; q < heads; ++q)
      for (int64_t j = 0; j < out; ++j) {
        s(v, q) += z(v, q * out + j) * as[size_t(q * out + j)];
        d(v, q) += z(v, q * out + j) * ad[size_t(q * out + j)];
      }
  const size_t E = g.size();
  std::vector<double> score(E * size_t(heads));
  Mat best(g.V, heads);
  std::fill(best.v.begin(), best.v.end(),
            -std::numeric_limits<double>::infinity());
  for (size_t e = 0; e < E; ++e)
    for (int64_t q = 0; q < heads; ++q) {
      double sc = leakyRelu(s(g.src[e], q) + d(g.dst[e], q), 0.2);
      score[e * size_t(heads) + size_t(q)] = sc;
      best(g.dst[e], q) = std::max(best(g.dst[e], q), sc);
    }
  Mat denom(g.V, heads);
  for (size_t e = 0; e < E; ++e)
    for (int64_t q = 0; q < heads; ++q)
      denom(g.dst[e], q) +=
          std::exp(score[e * size_t(heads) + size_t(q)] - best(g.dst[e], q));
  Mat a(g.V, heads * out); // zeros for vertices without in-edges
  for (size_t e = 0; e < E; ++e) {
    int32_t u = g.src[e], v = g.dst[e];
    for (int64_t q = 0; q < heads; ++q) {
      double alpha =
          std::exp(score[e * size_t(heads) + size_t(q)] - best(v, q)) /
          denom(v, q);
      for (int64_t j = 0; j < out; ++j)
        a(v, q * out + j) += alpha * z(u, q * out + j);
    }
  }
  for (int32_t v = 0; v < g.V; ++v)
    for (int64_t j = 0; j < heads * out; ++j)
      a(v, j) += bias[size_t(j)];
  return a; // reshape(a, [heads * out]) is the same row
}

// SAGEConv: h @ Ws + gather(h) @ Wn + b, gather = mean | max | min over the
// in-edges (zero without in-edges).
Mat sageLayer(const Mat &h, const Edges &g, Params &P, int k, int64_t out,
              const std::string &kind) {
  const auto &Ws = P(inst("SAGEConv", k, "Ws"), {h.cols, out});
  const auto &Wn = P(inst("SAGEConv", k, "Wn"), {h.cols, out});
  const auto &b = P(inst("SAGEConv", k, "b"), {out});
  std::vector<int64_t> count(size_t(g.V), 0);
  Mat a(g.V, h.cols);
  for (size_t e = 0; e < g.size(); ++e) {
    int32_t u = g.src[e], v = g.dst[e];
    bool first = count[size_t(v)]++ == 0;
    for (int64_t i = 0; i < h.cols; ++i) {
      if (kind == "mean")
        a(v, i) += h(u, i);
      else if (kind == "max")
        a(v, i) = first ? h(u, i) : std::max(a(v, i), h(u, i));
      else
        a(v, i) = first ? h(u, i) : std::min(a(v, i), h(u, i));
    }
  }
  if (kind == "mean")
    for (int32_t v = 0; v < g.V; ++v)
      if (count[size_t(v)])
        for (int64_t i = 0; i < h.cols; ++i)
          a(v, i) /= double(count[size_t(v)]);
  Mat o = matmul(h, Ws, out), n = matmul(a, Wn, out);
  for (int32_t v = 0; v < g.V; ++v)
    for (int64_t j = 0; j < out; ++j)
      o(v, j) += n(v, j) + b[size_t(j)];
  return o;
}

// GINConv: relu(((1 + eps) * h + sum) @ W1 + b1) @ W2 + b2.
Mat ginLayer(const Mat &h, const Edges &g, Params &P, int k, int64_t hidden,
             int64_t out) {
  const auto &eps = P(inst("GINConv", k, "eps"), {});
  const auto &W1 = P(inst("GINConv", k, "W1"), {h.cols, hidden});
  const auto &b1 = P(inst("GINConv", k, "b1"), {hidden});
  const auto &W2 = P(inst("GINConv", k, "W2"), {hidden, out});
  const auto &b2 = P(inst("GINConv", k, "b2"), {out});
  Mat a(g.V, h.cols);
  for (size_t e = 0; e < g.size(); ++e)
    for (int64_t i = 0; i < h.cols; ++i)
      a(g.dst[e], i) += h(g.src[e], i);
  for (int32_t v = 0; v < g.V; ++v)
    for (int64_t i = 0; i < h.cols; ++i)
      a(v, i) += (1 + eps[0]) * h(v, i);
  Mat m = matmul(a, W1, hidden);
  for (int32_t v = 0; v < g.V; ++v)
    for (int64_t j = 0; j < hidden; ++j)
      m(v, j) += b1[size_t(j)];
  Mat o = matmul(mapEach(m, relu), W2, out);
  for (int32_t v = 0; v < g.V; ++v)
    for (int64_t j = 0; j < out; ++j)
      o(v, j) += b2[size_t(j)];
  return o;
}

Mat linearLayer(const Mat &h, Params &P, int k, int64_t out) {
  return matmul(h, P(inst("Linear", k, "W"), {h.cols, out}), out);
}

// GatedGCN: sum over in-edges of sigmoid(h_src @ WH + h_dst @ WC) *
// (h_src @ WS), then relu(h @ U + a).
Mat gatedLayer(const Mat &h, const Edges &g, Params &P, int k) {
  int64_t d = h.cols;
  const auto &WH = P(inst("GatedGCN", k, "WH"), {d, d});
  const auto &WC = P(inst("GatedGCN", k, "WC"), {d, d});
  const auto &WS = P(inst("GatedGCN", k, "WS"), {d, d});
  const auto &U = P(inst("GatedGCN", k, "U"), {d, d});
  Mat hH = matmul(h, WH, d), hC = matmul(h, WC, d), hS = matmul(h, WS, d);
  Mat a(g.V, d);
  for (size_t e = 0; e < g.size(); ++e) {
    int32_t u = g.src[e], v = g.dst[e];
    for (int64_t j = 0; j < d; ++j)
      a(v, j) += sigmoid(hH(u, j) + hC(v, j)) * hS(u, j);
  }
  Mat o = matmul(h, U, d);
  for (size_t i = 0; i < o.v.size(); ++i)
    o.v[i] = relu(o.v[i] + a.v[i]);
  return o;
}

double l2(const std::vector<double> &p) {
  double s = 0;
  for (double x : p)
    s += x * x;
  return s / 2;
}

/// Mean softmax cross-entropy over the vertices with a label in [0, C).
double crossEntropy(const Mat &logits, const Tensor &labels) {
  double total = 0;
  int64_t count = 0;
  for (int64_t v = 0; v < logits.rows; ++v) {
    int32_t label = labels.i32()[v];
    if (label < 0 || label >= logits.cols)
      continue;
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < logits.cols; ++j)
      m = std::max(m, logits(v, j));
    double s = 0;
    for (int64_t j = 0; j < logits.cols; ++j)
      s += std::exp(logits(v, j) - m);
    total += m + std::log(s) - logits(v, label);
    ++count;
  }
  return count ? total / double(count) : 0.0;
}

Reference computeReference(const Spec &spec, const EdgeList &list) {
  Edges g = modelEdges(list, spec.selfLoops);
  Params P(spec.name);
  Mat x = toMat(randomFeatures(list, spec.F));
  Tensor labels = randomLabels(list, spec.C);
  Reference r;
  double decay = 0;
  switch (spec.arch) {
  case Arch::GCN: {
    Mat h = mapEach(gcnLayer(x, g, P, 0, spec.H), relu);
    r.out = gcnLayer(h, g, P, 1, spec.C);
    decay = l2(P("GCNConv#0.W", {spec.F, spec.H}));
    break;
  }
  case Arch::GAT: {
    Mat h = mapEach(gatLayer(x, g, P, 0, spec.H, spec.heads), elu);
    r.out = gatLayer(h, g, P, 1, spec.C, 1);
    for (int k = 0; k < 2; ++k)
      for (const char *p : {"W", "as", "ad", "b"})
        decay += l2(P(inst("GATConv", k, p), {}));
    break;
  }
  case Arch::SAGE: {
    Mat h = mapEach(sageLayer(x, g, P, 0, spec.H, spec.gather), relu);
    r.out = sageLayer(h, g, P, 1, spec.C, spec.gather);
    decay = l2(P("SAGEConv#0.Ws", {})) + l2(P("SAGEConv#0.Wn", {}));
    break;
  }
  case Arch::GIN: {
    Mat h = mapEach(ginLayer(x, g, P, 0, spec.H, spec.H), relu);
    r.out = ginLayer(h, g, P, 1, spec.H, spec.C);
    for (int k = 0; k < 2; ++k)
      for (const char *p : {"eps", "W1", "b1", "W2", "b2"})
        decay += l2(P(inst("GINConv", k, p), {}));
    break;
  }
  case Arch::GGCN: {
    Mat h = mapEach(linearLayer(x, P, 0, spec.H), relu);
    h = gatedLayer(h, g, P, 0);
    h = gatedLayer(h, g, P, 1);
    r.out = linearLayer(h, P, 1, spec.C);
    decay = l2(P("Linear#0.W", {}));
    break;
  }
  }
  r.loss = crossEntropy(r.out, labels) + 5e-4 * decay;
  r.params = P.used;
  return r;
}

const Reference &reference(int specIndex, int graphIndex) {
  static std::map<std::pair<int, int>, Reference> cache;
  auto it = cache.find({specIndex, graphIndex});
  if (it == cache.end())
    it = cache
             .emplace(std::make_pair(specIndex, graphIndex),
                      computeReference(specs()[size_t(specIndex)],
                                       edgeLists()[size_t(graphIndex)]))
             .first;
  return it->second;
}

} // namespace sagatest::modelref
