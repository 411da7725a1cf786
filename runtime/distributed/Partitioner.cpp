//===- Partitioner.cpp - contiguous vertex partitions, ROC's cost model ---===//

#include "runtime/distributed/Partitioner.h"

#include <metis.h>

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

using namespace saga;

const char *saga::costFeatureName(int feature) {
  static const char *names[kCostFeatures] = {
      "vertices", "in_edges", "neighbour_runs", "mean_run_length", "out_edges"};
  return feature >= 0 && feature < kCostFeatures ? names[feature] : "?";
}

CostFeatures saga::vertexCostFeatures(const Graph &g, int32_t v) {
  CostFeatures f{};
  int64_t begin = g.inOffsets[size_t(v)], end = g.inOffsets[size_t(v) + 1];
  std::vector<int32_t> sources(g.inSources.begin() + begin,
                               g.inSources.begin() + end);
  std::sort(sources.begin(), sources.end());
  int64_t runs = 0;
  for (size_t i = 0; i < sources.size(); ++i)
    runs += i == 0 || (sources[i] != sources[i - 1] &&
                       sources[i] != sources[i - 1] + 1);
  f[kCostVertex] = 1;
  f[kCostInEdges] = double(end - begin);
  f[kCostNeighbourRuns] = double(runs);
  f[kCostMeanRunLength] = runs ? double(end - begin) / double(runs) : 0.0;
  f[kCostOutEdges] =
      double(g.outOffsets[size_t(v) + 1] - g.outOffsets[size_t(v)]);
  return f;
}

CostFeatures saga::rangeCostFeatures(const Graph &g, int32_t begin,
                                     int32_t end) {
  CostFeatures sum{};
  for (int32_t v = begin; v < end; ++v) {
    CostFeatures f = vertexCostFeatures(g, v);
    for (int k = 0; k < kCostFeatures; ++k)
      sum[size_t(k)] += f[size_t(k)];
  }
  return sum;
}

namespace {

/// The least-squares solution over the columns in `passive` (the others
/// 0), by the normal equations with partial pivoting (the columns are
/// scaled to unit norm by the caller, and there are few of them).
std::vector<double> solvePassive(const std::vector<double> &a, int64_t rows,
                                 int64_t cols, const std::vector<double> &b,
                                 const std::vector<bool> &passive) {
  std::vector<int64_t> idx;
  for (int64_t j = 0; j < cols; ++j)
    if (passive[size_t(j)])
      idx.push_back(j);
  size_t n = idx.size();
  std::vector<double> m(n * (n + 1), 0.0); // [A_P^T A_P | A_P^T b]
  for (size_t p = 0; p < n; ++p) {
    for (size_t q = 0; q < n; ++q) {
      double s = 0;
      for (int64_t r = 0; r < rows; ++r)
        s += a[size_t(r * cols + idx[p])] * a[size_t(r * cols + idx[q])];
      m[p * (n + 1) + q] = s;
    }
    double s = 0;
    for (int64_t r = 0; r < rows; ++r)
      s += a[size_t(r * cols + idx[p])] * b[size_t(r)];
    m[p * (n + 1) + n] = s;
  }
  for (size_t c = 0; c < n; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::fabs(m[r * (n + 1) + c]) > std::fabs(m[pivot * (n + 1) + c]))
        pivot = r;
    for (size_t k = 0; k <= n; ++k)
      std::swap(m[c * (n + 1) + k], m[pivot * (n + 1) + k]);
    double d = m[c * (n + 1) + c];
    if (std::fabs(d) < 1e-300)
      continue; // a dependent column: its coefficient stays 0
    for (size_t r = 0; r < n; ++r) {
      if (r == c)
        continue;
      double f = m[r * (n + 1) + c] / d;
      for (size_t k = c; k <= n; ++k)
        m[r * (n + 1) + k] -= f * m[c * (n + 1) + k];
    }
  }
  std::vector<double> x(size_t(cols), 0.0);
  for (size_t p = 0; p < n; ++p) {
    double d = m[p * (n + 1) + p];
    x[size_t(idx[p])] = std::fabs(d) < 1e-300 ? 0.0 : m[p * (n + 1) + n] / d;
  }
  return x;
}

} // namespace

std::vector<double> saga::nonNegativeLeastSquares(const std::vector<double> &a0,
                                                  int64_t rows, int64_t cols,
                                                  const std::vector<double> &b) {
  // Columns scaled to unit norm (x >= 0 is unchanged by positive scales).
  std::vector<double> a = a0, scale(size_t(cols), 1.0);
  for (int64_t j = 0; j < cols; ++j) {
    double s = 0;
    for (int64_t r = 0; r < rows; ++r)
      s += a[size_t(r * cols + j)] * a[size_t(r * cols + j)];
    scale[size_t(j)] = s > 0 ? 1.0 / std::sqrt(s) : 0.0;
    for (int64_t r = 0; r < rows; ++r)
      a[size_t(r * cols + j)] *= scale[size_t(j)];
  }
  std::vector<double> x(size_t(cols), 0.0);
  std::vector<bool> passive(size_t(cols), false);
  auto gradient = [&] {
    std::vector<double> w(size_t(cols), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      double res = b[size_t(r)];
      for (int64_t j = 0; j < cols; ++j)
        res -= a[size_t(r * cols + j)] * x[size_t(j)];
      for (int64_t j = 0; j < cols; ++j)
        w[size_t(j)] += a[size_t(r * cols + j)] * res;
    }
    return w;
  };
  const double tol = 1e-12;
  for (int outer = 0; outer < 3 * cols + 10; ++outer) {
    std::vector<double> w = gradient();
    int64_t best = -1;
    for (int64_t j = 0; j < cols; ++j)
      if (!passive[size_t(j)] && scale[size_t(j)] > 0 && w[size_t(j)] > tol &&
          (best < 0 || w[size_t(j)] > w[size_t(best)]))
        best = j;
    if (best < 0)
      break;
    passive[size_t(best)] = true;
    for (int inner = 0; inner < 3 * cols + 10; ++inner) {
      std::vector<double> s = solvePassive(a, rows, cols, b, passive);
      bool allPositive = true;
      for (int64_t j = 0; j < cols; ++j)
        allPositive &= !passive[size_t(j)] || s[size_t(j)] > tol;
      if (allPositive) {
        x = s;
        break;
      }
      double alpha = 1;
      for (int64_t j = 0; j < cols; ++j)
        if (passive[size_t(j)] && s[size_t(j)] <= tol)
          alpha = std::min(alpha, x[size_t(j)] / (x[size_t(j)] - s[size_t(j)]));
      for (int64_t j = 0; j < cols; ++j) {
        x[size_t(j)] += alpha * (s[size_t(j)] - x[size_t(j)]);
        if (passive[size_t(j)] && x[size_t(j)] <= tol) {
          passive[size_t(j)] = false;
          x[size_t(j)] = 0;
        }
      }
    }
  }
  for (int64_t j = 0; j < cols; ++j)
    x[size_t(j)] = std::max(0.0, x[size_t(j)] * scale[size_t(j)]);
  return x;
}

CostModel::CostModel(std::vector<int64_t> widths) : widths_(std::move(widths)) {
  weights_[kCostInEdges] = 1; // until fitted: equal in-edges
}

CostFeatures CostModel::inputs(const Graph &g, int32_t begin,
                               int32_t end) const {
  CostFeatures f = rangeCostFeatures(g, begin, end);
  double width = double(std::accumulate(widths_.begin(), widths_.end(),
                                        int64_t(0)));
  for (double &x : f)
    x *= width;
  return f;
}

double CostModel::predict(const CostFeatures &in) const {
  double s = 0;
  for (int k = 0; k < kCostFeatures; ++k)
    s += weights_[size_t(k)] * in[size_t(k)];
  return s;
}

double CostModel::predictVertex(const Graph &g, int32_t v) const {
  return predict(inputs(g, v, v + 1));
}

double CostModel::fit(const std::vector<Sample> &samples) {
  // Relative residuals: each row divided by its measured time, so that
  // small and large partitions count alike.
  int64_t rows = int64_t(samples.size());
  std::vector<double> a(size_t(rows * kCostFeatures)), b(size_t(rows), 1.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int k = 0; k < kCostFeatures; ++k)
      a[size_t(r * kCostFeatures + k)] =
          samples[size_t(r)].seconds > 0
              ? samples[size_t(r)].inputs[size_t(k)] / samples[size_t(r)].seconds
              : 0.0;
  std::vector<double> w = nonNegativeLeastSquares(a, rows, kCostFeatures, b);
  std::copy(w.begin(), w.end(), weights_.begin());
  double sq = 0;
  for (const Sample &s : samples) {
    double rel = s.seconds > 0 ? (predict(s.inputs) - s.seconds) / s.seconds : 0;
    sq += rel * rel;
  }
  return samples.empty() ? 0.0 : std::sqrt(sq / double(samples.size()));
}

double CostModel::refine(const std::vector<Sample> &samples,
                         double priorStrength) {
  const int64_t n = int64_t(samples.size());
  if (n == 0)
    return 0.0;
  // Relative rows, as fit()'s: inputs / seconds, target 1.
  std::vector<double> rel(size_t(n * kCostFeatures), 0.0);
  for (int64_t r = 0; r < n; ++r)
    if (samples[size_t(r)].seconds > 0)
      for (int k = 0; k < kCostFeatures; ++k)
        rel[size_t(r * kCostFeatures + k)] =
            samples[size_t(r)].inputs[size_t(k)] / samples[size_t(r)].seconds;
  // The prior in seconds: the scale c minimising sum (c p_r - 1)^2, p_r the
  // prior's relative prediction of sample r.
  double pp = 0, p1 = 0;
  for (int64_t r = 0; r < n; ++r) {
    double p = 0;
    for (int k = 0; k < kCostFeatures; ++k)
      p += weights_[size_t(k)] * rel[size_t(r * kCostFeatures + k)];
    pp += p * p;
    p1 += p;
  }
  if (!(pp > 0) || !(priorStrength > 0))
    return fit(samples);
  const double c = p1 / pp;
  std::vector<double> a = rel, b(size_t(n), 1.0);
  // Prior rows: feature k's share of a typical sample (its mean relative
  // input m_k), at the prior's weight.
  const double root = std::sqrt(priorStrength);
  for (int k = 0; k < kCostFeatures; ++k) {
    double m = 0;
    for (int64_t r = 0; r < n; ++r)
      m += rel[size_t(r * kCostFeatures + k)];
    m /= double(n);
    for (int j = 0; j < kCostFeatures; ++j)
      a.push_back(j == k ? root * m : 0.0);
    b.push_back(root * m * c * weights_[size_t(k)]);
  }
  std::vector<double> w =
      nonNegativeLeastSquares(a, n + kCostFeatures, kCostFeatures, b);
  std::copy(w.begin(), w.end(), weights_.begin());
  double sq = 0;
  for (const Sample &s : samples) {
    double e = s.seconds > 0 ? (predict(s.inputs) - s.seconds) / s.seconds : 0;
    sq += e * e;
  }
  return std::sqrt(sq / double(n));
}

std::string CostModel::serialize() const {
  std::ostringstream os;
  os.precision(17);
  os << "saga-cost-model 1\nwidths";
  for (int64_t w : widths_)
    os << ' ' << w;
  os << '\n';
  for (int k = 0; k < kCostFeatures; ++k)
    os << costFeatureName(k) << ' ' << weights_[size_t(k)] << '\n';
  return os.str();
}

llvm::Expected<CostModel> CostModel::parse(const std::string &text) {
  llvm::SmallVector<llvm::StringRef> all, lines;
  llvm::StringRef(text).split(all, '\n');
  // Bare, or as '# ' lines inside a parameter file: the block from the
  // "# saga-cost-model" line on, its prefixes stripped.
  size_t first = 0; // `text`'s line of lines[0]
  bool embedded = !llvm::StringRef(text).starts_with("saga-cost-model");
  if (embedded) {
    while (first < all.size() &&
           !all[first].trim().starts_with("# saga-cost-model"))
      ++first;
    if (first == all.size())
      return llvm::createStringError("no cost model here (a cost model file "
                                     "starts with 'saga-cost-model 1'; a "
                                     "parameter file holds one when it was "
                                     "saved by a --partition run)");
    for (size_t i = first;
         i < all.size() && lines.size() < size_t(2 + kCostFeatures); ++i) {
      llvm::StringRef l = all[i].trim();
      if (!l.consume_front("#"))
        break;
      lines.push_back(l.trim());
    }
  } else {
    for (llvm::StringRef l : all)
      if (!l.trim().empty())
        lines.push_back(l);
  }
  auto bad = [&](size_t line, const std::string &what) {
    return llvm::createStringError("cost model, line " +
                                   std::to_string(first + line + 1) + ": " +
                                   what);
  };
  if (lines.empty() || lines[0].trim() != "saga-cost-model 1")
    return bad(0, "expected 'saga-cost-model 1'");
  if (lines.size() != size_t(2 + kCostFeatures))
    return bad(lines.size() - 1, "expected the widths and " +
                                     std::to_string(kCostFeatures) +
                                     " weights, one per line");
  llvm::SmallVector<llvm::StringRef> words;
  lines[1].split(words, ' ', -1, false);
  if (words.empty() || words[0] != "widths")
    return bad(1, "expected 'widths W1 W2 ...'");
  std::vector<int64_t> widths;
  for (size_t i = 1; i < words.size(); ++i) {
    int64_t w;
    if (words[i].getAsInteger(10, w) || w <= 0)
      return bad(1, "width '" + words[i].str() + "' is not a positive integer");
    widths.push_back(w);
  }
  CostModel m(widths);
  CostFeatures weights{};
  for (int k = 0; k < kCostFeatures; ++k) {
    auto [name, value] = lines[size_t(2 + k)].trim().split(' ');
    double v;
    if (name != costFeatureName(k))
      return bad(size_t(2 + k), "expected the weight of '" +
                                    std::string(costFeatureName(k)) + "'");
    if (value.trim().getAsDouble(v) || !(v >= 0) || !std::isfinite(v))
      return bad(size_t(2 + k), "weight '" + value.str() +
                                    "' is not a non-negative number");
    weights[size_t(k)] = v;
  }
  m.setWeights(weights);
  return m;
}

namespace {
/// Bounds where the prefix sum of `cost` crosses k / parts of the total.
Partitioning cutByPrefix(const std::vector<double> &cost, int64_t parts) {
  Partitioning p;
  int64_t n = int64_t(cost.size());
  parts = std::max<int64_t>(parts, 1);
  double total = std::accumulate(cost.begin(), cost.end(), 0.0);
  p.bounds.push_back(0);
  if (!(total > 0)) { // no cost to share: equal vertices
    for (int64_t k = 1; k <= parts; ++k)
      p.bounds.push_back(int32_t(n * k / parts));
    return p;
  }
  double prefix = 0;
  int64_t v = 0;
  for (int64_t k = 1; k < parts; ++k) {
    double target = total * double(k) / double(parts);
    while (v < n && prefix + cost[size_t(v)] / 2 < target)
      prefix += cost[size_t(v++)];
    p.bounds.push_back(int32_t(v));
  }
  p.bounds.push_back(int32_t(n));
  return p;
}
} // namespace

Partitioning saga::partitionByVertices(const Graph &g, int64_t parts) {
  return cutByPrefix(std::vector<double>(size_t(g.numVertices), 1.0), parts);
}

Partitioning saga::partitionByInEdges(const Graph &g, int64_t parts) {
  std::vector<double> cost(size_t(g.numVertices));
  for (int32_t v = 0; v < g.numVertices; ++v)
    cost[size_t(v)] = double(g.inOffsets[size_t(v) + 1] - g.inOffsets[size_t(v)]);
  return cutByPrefix(cost, parts);
}

Partitioning saga::partitionByCost(const Graph &g, int64_t parts,
                                   const CostModel &model) {
  std::vector<double> cost(size_t(g.numVertices));
  for (int32_t v = 0; v < g.numVertices; ++v)
    cost[size_t(v)] = model.predictVertex(g, v);
  return cutByPrefix(cost, parts);
}

double saga::imbalance(const std::vector<double> &values) {
  if (values.empty())
    return 0;
  double mean = std::accumulate(values.begin(), values.end(), 0.0) /
                double(values.size());
  double most = *std::max_element(values.begin(), values.end());
  return mean > 0 ? most / mean : 1.0;
}

llvm::Expected<Partitioning> saga::partitionByMetis(const Graph &g,
                                                   int64_t parts,
                                                   VertexOrder &order,
                                                   int64_t *cut,
                                                   uint64_t seed) {
  const int64_t n = g.numVertices;
  order.newId.assign(size_t(n), 0);
  order.oldId.assign(size_t(n), 0);
  std::iota(order.oldId.begin(), order.oldId.end(), 0);
  std::iota(order.newId.begin(), order.newId.end(), 0);
  if (n == 0) {
    if (cut)
      *cut = 0;
    return partitionByVertices(g, parts);
  }
  // The undirected neighbours of each vertex (in and out, no loops), with
  // the number of directed edges between the pair as the edge's weight.
  std::vector<idx_t> xadj(size_t(n) + 1, 0), adjncy, adjwgt;
  std::vector<int32_t> row;
  for (int32_t v = 0; v < n; ++v) {
    row.clear();
    for (int64_t i = g.inOffsets[size_t(v)]; i < g.inOffsets[size_t(v) + 1]; ++i)
      if (g.inSources[size_t(i)] != v)
        row.push_back(g.inSources[size_t(i)]);
    for (int64_t i = g.outOffsets[size_t(v)]; i < g.outOffsets[size_t(v) + 1]; ++i)
      if (g.outTargets[size_t(i)] != v)
        row.push_back(g.outTargets[size_t(i)]);
    std::sort(row.begin(), row.end());
    for (size_t i = 0; i < row.size();) {
      size_t j = i;
      while (j < row.size() && row[j] == row[i])
        ++j;
      adjncy.push_back(idx_t(row[i]));
      adjwgt.push_back(idx_t(j - i));
      i = j;
    }
    xadj[size_t(v) + 1] = idx_t(adjncy.size());
  }
  // Recursive bisection into a fixed number of leaves (a power of two, at
  // least `parts`): leaf k's vertices get the k-th block of ids, and the
  // parts are runs of whole leaves. The leaves nest (the first half of
  // them is one side of the first bisection), so a run of them is a
  // coarser bisection's side, and the relabelling is the same for any
  // part count up to kMetisLeaves: results keyed by vertex id (dropout
  // masks) do not depend on how many workers share the graph.
  int64_t leaves = kMetisLeaves;
  while (leaves < parts)
    leaves *= 2;
  leaves = std::min<int64_t>(leaves, n);
  idx_t nvtxs = idx_t(n), ncon = 1, nparts = idx_t(leaves), objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = idx_t(seed & 0x7fffffff);
  options[METIS_OPTION_NUMBERING] = 0;
  std::vector<idx_t> part(size_t(n), 0);
  int status = leaves < 2 ? METIS_OK
                          : METIS_PartGraphRecursive(
                                &nvtxs, &ncon, xadj.data(),
                                adjncy.empty() ? nullptr : adjncy.data(),
                                nullptr, nullptr,
                                adjwgt.empty() ? nullptr : adjwgt.data(),
                                &nparts, nullptr, nullptr, options, &objval,
                                part.data());
  if (status != METIS_OK)
    return llvm::createStringError(
        "METIS_PartGraphRecursive failed (" +
        std::string(status == METIS_ERROR_INPUT    ? "bad input"
                    : status == METIS_ERROR_MEMORY ? "out of memory"
                                                   : "error") +
        ") partitioning " + std::to_string(n) + " vertices into " +
        std::to_string(leaves) + " leaves");
  // Relabel leaf by leaf: a counting sort by leaf, ascending id within.
  std::vector<int64_t> leafStart(size_t(leaves) + 1, 0);
  for (int64_t v = 0; v < n; ++v)
    ++leafStart[size_t(part[size_t(v)]) + 1];
  for (int64_t k = 0; k < leaves; ++k)
    leafStart[size_t(k) + 1] += leafStart[size_t(k)];
  std::vector<int64_t> next(leafStart.begin(), leafStart.end() - 1);
  for (int32_t v = 0; v < n; ++v) {
    int32_t id = int32_t(next[size_t(part[size_t(v)])]++);
    order.newId[size_t(v)] = id;
    order.oldId[size_t(id)] = v;
  }
  // Parts: runs of whole leaves of about equal vertex counts.
  std::vector<double> leafSize(static_cast<size_t>(leaves), 0.0);
  for (int64_t k = 0; k < leaves; ++k)
    leafSize[size_t(k)] = double(leafStart[size_t(k) + 1] - leafStart[size_t(k)]);
  Partitioning byLeaf = cutByPrefix(leafSize, parts);
  Partitioning p;
  for (int32_t k : byLeaf.bounds)
    p.bounds.push_back(int32_t(leafStart[size_t(k)]));
  if (cut) {
    *cut = 0;
    for (int32_t v = 0; v < n; ++v)
      for (int64_t i = g.inOffsets[size_t(v)]; i < g.inOffsets[size_t(v) + 1];
           ++i) {
        auto owner = [&](int32_t id) {
          return std::upper_bound(p.bounds.begin(), p.bounds.end(), id) -
                 p.bounds.begin();
        };
        *cut += owner(order.newId[size_t(v)]) !=
                owner(order.newId[size_t(g.inSources[size_t(i)])]);
      }
  }
  return p;
}

int64_t saga::edgeCut(const Graph &g, const Partitioning &p) {
  int64_t cut = 0;
  for (int64_t k = 0; k < p.parts(); ++k)
    for (int32_t v = p.bounds[size_t(k)]; v < p.bounds[size_t(k) + 1]; ++v)
      for (int64_t i = g.inOffsets[size_t(v)]; i < g.inOffsets[size_t(v) + 1];
           ++i) {
        int32_t u = g.inSources[size_t(i)];
        cut += u < p.bounds[size_t(k)] || u >= p.bounds[size_t(k) + 1];
      }
  return cut;
}

std::string saga::serializePartitioning(const SavedPartitioning &p) {
  std::string out = "saga-partition 1\nmethod " + p.method + "\nvertices " +
                    std::to_string(p.vertices) + "\nbounds";
  for (int32_t b : p.parts.bounds)
    out += " " + std::to_string(b);
  out += "\n";
  if (!p.order.newId.empty()) {
    out += "order\n";
    for (int32_t id : p.order.newId)
      out += std::to_string(id) + "\n";
  }
  return out;
}

llvm::Expected<SavedPartitioning>
saga::parsePartitioning(const std::string &text, const std::string &path) {
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(text).split(lines, '\n', -1, /*KeepEmpty=*/true);
  while (!lines.empty() && lines.back().trim().empty())
    lines.pop_back();
  auto bad = [&](size_t line, const std::string &what) {
    return llvm::createStringError(path + ":" + std::to_string(line + 1) +
                                   ": " + what);
  };
  if (lines.empty() || lines[0].trim() != "saga-partition 1")
    return bad(0, "expected 'saga-partition 1' (not a saved partitioning)");
  SavedPartitioning p;
  if (lines.size() < 4)
    return bad(lines.size() - 1, "expected method, vertices and bounds lines");
  llvm::StringRef method = lines[1].trim();
  if (!method.consume_front("method ") || method.trim().empty())
    return bad(1, "expected 'method NAME'");
  p.method = method.trim().str();
  llvm::StringRef vertices = lines[2].trim();
  if (!vertices.consume_front("vertices ") ||
      vertices.trim().getAsInteger(10, p.vertices) || p.vertices < 0 ||
      p.vertices > std::numeric_limits<int32_t>::max())
    return bad(2, "expected 'vertices V' with V a vertex count");
  llvm::SmallVector<llvm::StringRef> words;
  lines[3].trim().split(words, ' ', -1, false);
  if (words.size() < 3 || words[0] != "bounds")
    return bad(3, "expected 'bounds 0 ... V' (at least one part)");
  for (size_t i = 1; i < words.size(); ++i) {
    int64_t b;
    if (words[i].getAsInteger(10, b) || b < 0 || b > p.vertices ||
        (!p.parts.bounds.empty() && b < p.parts.bounds.back()))
      return bad(3, "bound '" + words[i].str() +
                        "' is not a vertex count in order");
    p.parts.bounds.push_back(int32_t(b));
  }
  if (p.parts.bounds.front() != 0 || p.parts.bounds.back() != p.vertices)
    return bad(3, "the bounds must run from 0 to " +
                      std::to_string(p.vertices));
  if (lines.size() == 4)
    return p;
  if (lines[4].trim() != "order")
    return bad(4, "expected 'order' or the end of the file");
  if (int64_t(lines.size()) - 5 != p.vertices)
    return bad(lines.size() - 1,
               "the order has " + std::to_string(lines.size() - 5) +
                   " ids, the graph " + std::to_string(p.vertices) +
                   " vertices");
  p.order.newId.resize(size_t(p.vertices));
  p.order.oldId.assign(size_t(p.vertices), -1);
  for (int64_t v = 0; v < p.vertices; ++v) {
    int64_t id;
    if (lines[size_t(5 + v)].trim().getAsInteger(10, id) || id < 0 ||
        id >= p.vertices || p.order.oldId[size_t(id)] >= 0)
      return bad(size_t(5 + v), "'" + lines[size_t(5 + v)].trim().str() +
                                    "' is not an unused vertex id");
    p.order.newId[size_t(v)] = int32_t(id);
    p.order.oldId[size_t(id)] = int32_t(v);
  }
  return p;
}

std::vector<int64_t> saga::rowBlocksByCost(const Graph &g, int64_t blocks,
                                           const CostModel &model,
                                           int64_t align) {
  Partitioning p = partitionByCost(g, blocks, model);
  std::vector<int64_t> b{0};
  for (size_t k = 1; k + 1 < p.bounds.size(); ++k) {
    int64_t r = (int64_t(p.bounds[k]) + align / 2) / align * align;
    if (r > b.back() && r < g.numVertices)
      b.push_back(r);
  }
  if (g.numVertices > 0)
    b.push_back(g.numVertices);
  return b;
}

