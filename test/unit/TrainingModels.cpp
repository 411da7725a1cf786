//===- TrainingModels.cpp - the models the training tests differentiate ---===//
//
// Small models written inline (one per family of ops the autodiff handles)
// and reduced copies of examples/{gcn,graphsage,gin,ggcn,gat}.saga: the
// gradient checks' cases (TrainingTest.cpp), which the dropout, thread and
// not-implemented tests (Training*Test.cpp) reuse.
//
//===----------------------------------------------------------------------===//

#include "TrainingTestUtil.h"

#include <map>
#include <string>
#include <vector>

namespace sagatest::training {

//===----------------------------------------------------------------------===//
// The models
//===----------------------------------------------------------------------===//

// Elementwise ops: a two-layer model whose apply_vertex computes t from the
// vertex's features v.h, its aggregate a (sum over in-edges) and parameters
// c, d (vectors) and s (a scalar), then t @ W + b.
const char *kElementwise = R"(
graph$LOOPS {
  vertex x: f32[4];
  vertex label: class[3];
}
layer L(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param b: f32[out] = zeros;
  param c: f32[in] = ones;
  param d: f32[in] = zeros;
  param s: f32 = 1.0;
  apply_vertex(v, a) {
    t = $BODY;
    return t @ W + b;
  }
}
model M {
  h = L(4, 5)(x);
  out = L(5, 3)(h);
  loss = cross_entropy(out, label);
}
)";

GradCase elementwise(std::string name, std::string body,
                     bool selfLoops = false) {
  return {
      std::move(name),
      substitute(kElementwise, {{"BODY", std::move(body)},
                                {"LOOPS", selfLoops ? "(self_loops)" : ""}})};
}

// The example models with small widths and dropout rate $DROP (0: the loss
// is deterministic and forward() computes it).
const char *kGcn = R"(
graph(self_loops) {
  vertex x: f32[$F];
  vertex label: class[$C];
}
layer GCNConv(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param b: f32[out] = zeros;
  scatter(v)         { h = v.h * rsqrt(v.deg); }
  apply_edge(e)      { return e.src.h; }
  gather(sum);
  apply_vertex(v, a) { return (a * rsqrt(v.deg)) @ W + b; }
}
model GCN {
  h = dropout(x, $DROP);
  h = relu(GCNConv($F, $H)(h));
  h = dropout(h, $DROP);
  out = GCNConv($H, $C)(h);
  loss = cross_entropy(out, label) + 5e-4 * l2(GCNConv#0.W);
}
)";

const char *kSage = R"(
graph {
  vertex x: f32[$F];
  vertex label: class[$C];
}
layer SAGEConv(in: int, out: int) {
  param Ws: f32[in, out] = glorot;
  param Wn: f32[in, out] = glorot;
  param b: f32[out] = zeros;
  gather(mean);
  apply_vertex(v, a) { return v.h @ Ws + a @ Wn + b; }
}
model GraphSAGE {
  h = dropout(x, $DROP);
  h = relu(SAGEConv($F, $H)(h));
  h = dropout(h, $DROP);
  out = SAGEConv($H, $C)(h);
  loss = cross_entropy(out, label)
       + 5e-4 * (l2(SAGEConv#0.Ws) + l2(SAGEConv#0.Wn));
}
)";

const char *kGin = R"(
graph {
  vertex x: f32[$F];
  vertex label: class[$C];
}
layer GINConv(in: int, out: int) {
  param eps: f32 = 0.0;
  param W1: f32[in, out] = glorot;
  param W2: f32[out, out] = glorot;
  gather(sum);
  apply_vertex(v, a) { return relu(((1 + eps) * v.h + a) @ W1) @ W2; }
}
model GIN {
  h = dropout(x, $DROP);
  h = relu(GINConv($F, $H)(h));
  h = dropout(h, $DROP);
  out = GINConv($H, $C)(h);
  loss = cross_entropy(out, label) + 5e-4 * l2(GINConv#0.W1);
}
)";

// G-GCN: parameters in the edge function, in products that read one end of
// the edge; -O2's operator motion moves them to the vertices.
const char *kGgcn = R"(
graph {
  vertex x: f32[$F];
  vertex label: class[$C];
}
layer Linear(in: int, out: int) {
  param W: f32[in, out] = glorot;
  apply_vertex(v, a) { return v.h @ W; }
}
layer GatedGCN(d: int) {
  param WH: f32[d, d] = glorot;
  param WC: f32[d, d] = glorot;
  param WS: f32[d, d] = glorot;
  param U: f32[d, d] = glorot;
  apply_edge(e) {
    eta = sigmoid(e.src.h @ WH + e.dst.h @ WC);
    return eta * (e.src.h @ WS);
  }
  gather(sum);
  apply_vertex(v, a) { return relu(v.h @ U + a); }
}
model GGCN {
  h = dropout(x, $DROP);
  h = relu(Linear($F, $H)(h));
  h = GatedGCN($H)(h);
  h = GatedGCN($H)(h);
  h = dropout(h, $DROP);
  out = Linear($H, $C)(h);
  loss = cross_entropy(out, label) + 5e-4 * l2(Linear#0.W);
}
)";

// GAT: per-head attention scores, softmax_sum gather, reshape of the heads.
const char *kGat = R"(
graph$LOOPS {
  vertex x: f32[$F];
  vertex label: class[$C];
}
layer GATConv(in: int, out: int, heads: int) {
  param W: f32[in, heads, out] = glorot;
  param as: f32[heads, out] = glorot;
  param ad: f32[heads, out] = glorot;
  scatter(v) {
    z = v.h @ W;
    s = sum(z * as, -1);
    d = sum(z * ad, -1);
  }
  apply_edge(e) {
    score = leaky_relu(e.src.s + e.dst.d, 0.2);
    return e.src.z;
  }
  gather(softmax_sum(score, dropout = $DROP));
  apply_vertex(v, a) { return reshape(a, [heads * out]); }
}
model GAT {
  h = dropout(x, $DROP);
  h = elu(GATConv($F, $H, $K)(h));
  h = dropout(h, $DROP);
  out = GATConv($HK, $C, 1)(h);
  loss = cross_entropy(out, label)
       + 5e-4 * (l2(GATConv#0.W) + l2(GATConv#0.as) + l2(GATConv#0.ad)
               + l2(GATConv#1.W) + l2(GATConv#1.as) + l2(GATConv#1.ad));
}
)";

/// The reduced GAT: F = 6 features, K heads of H = 3, C = 3 classes.
std::string gat(const std::string &drop, bool selfLoops, int K) {
  return substitute(kGat, {{"F", "6"},
                           {"H", "3"},
                           {"K", std::to_string(K)},
                           {"HK", std::to_string(3 * K)},
                           {"C", "3"},
                           {"DROP", drop},
                           {"LOOPS", selfLoops ? "(self_loops)" : ""}});
}

std::string example(const char *text, const std::string &drop, int F, int H,
                    int C) {
  return substitute(text, {{"F", std::to_string(F)},
                           {"H", std::to_string(H)},
                           {"C", std::to_string(C)},
                           {"DROP", drop}});
}

// Gathers: scattered values read at both ends of an edge, an edge input,
// and the gather $KIND.
const char *kEdges = R"(
graph$LOOPS {
  vertex x: f32[4];
  vertex label: class[3];
  edge w: f32 = 1.0;
}
layer E(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param U: f32[in, out] = glorot;
  param b: f32[out] = zeros;
  scatter(v) { m = v.h @ W; g = v.h @ U + b; }
  apply_edge(e) {
    return e.src.m * sigmoid(e.dst.g) * e.w + tanh(e.src.g - e.dst.m);
  }
  gather($KIND);
  apply_vertex(v, a) { return a + v.g; }
}
model M {
  h = relu(E(4, 5)(x));
  out = E(5, 3)(h);
  loss = cross_entropy(out, label);
}
)";

std::string edges(const std::string &kind, bool selfLoops) {
  return substitute(
      kEdges, {{"KIND", kind}, {"LOOPS", selfLoops ? "(self_loops)" : ""}});
}

// Max and min gathers of a message computed on the edge from parameters
// (relu(e.src.h @ W), gated by the destination): at -O2 operator motion
// moves the products to the vertices; at -O0 they stay on the edge.
const char *kEdgeExtremum = R"(
graph {
  vertex x: f32[4];
  vertex label: class[3];
}
layer X(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param U: f32[in, out] = glorot;
  apply_edge(e) { return relu(e.src.h @ W) * sigmoid(e.dst.h @ U); }
  gather($KIND);
  apply_vertex(v, a) { return a + v.h @ U; }
}
model M {
  h = X(4, 5)(x);
  out = X(5, 3)(tanh(h));
  loss = cross_entropy(out, label);
}
)";

/// The reduced GraphSAGE with a plain gather(KIND) of the features.
std::string sageGather(const std::string &kind, const std::string &drop) {
  std::string source = example(kSage, drop);
  size_t at = source.find("gather(mean)");
  source.replace(at, 12, "gather(" + kind + ")");
  return source;
}

const std::vector<GradCase> &gradCases() {
  static const std::vector<GradCase> all = [] {
    std::vector<GradCase> c{
        // + - * / with broadcasting: scalar with vector, and [1, in] with
        // [in, 1] (both operands broadcast).
        elementwise("add", "(v.h + c) + (a + s) + d"),
        elementwise("add_broadcast",
                    "sum(reshape(v.h + a, [1, in]) + reshape(c, [in, 1]), 0)"
                    " + s + d"),
        elementwise("sub", "(v.h - c) - (s - a) - d"),
        elementwise("sub_broadcast",
                    "sum(reshape(c, [in, 1]) - reshape(v.h * a, [1, in]), 0)"
                    " - d - s"),
        elementwise("mul", "v.h * c * s + a * d"),
        elementwise("mul_broadcast",
                    "sum(reshape(v.h, [1, in]) * reshape(c + a, [in, 1]), 1)"
                    " * s * d"),
        elementwise("div",
                    "(v.h + a) / (c * c + 0.5) + s / (v.h * v.h + d * d + 1)"),
        elementwise("div_broadcast",
                    "sum(reshape(v.h + a, [1, in]) / reshape(c * c + 1, "
                    "[in, 1]), 0) / (s * s + d * d + 1)"),
        elementwise("neg", "-(v.h * c) + -a - -d * s"),
        elementwise("relu", "relu(v.h * c + a + d) * s"),
        elementwise("elu", "elu(v.h * c + a + d) * s"),
        elementwise(
            "leaky_relu",
            "leaky_relu(v.h * c + a + d, 0.2) + leaky_relu(v.h * s - d)"),
        elementwise("sigmoid", "sigmoid(v.h * c + a + d) * s"),
        elementwise("tanh", "tanh(v.h * c + a + d) * s"),
        elementwise("exp", "exp(v.h * c + a * 0.5 + d) * s"),
        elementwise("log",
                    "log(v.h * v.h + c * c + a * a + s * s + d * d + 0.1)"),
        elementwise("rsqrt",
                    "rsqrt(v.h * v.h + c * c + a * a + s * s + d * d + 0.1)"),
        elementwise("abs", "abs(v.h * c + a + d) * s"),
        // The same with the graph's self loops (v.deg and the gather count
        // them).
        elementwise("tanh_self_loops", "tanh(v.h * c + a + d) * s", true),
    };
    // sum and mean reductions over either axis of a [3, 2] value that a
    // rank-1 left side times a rank-3 weight produces.
    c.push_back({"reduce", R"(
graph {
  vertex x: f32[4];
  vertex label: class[3];
}
layer R(in: int) {
  param W: f32[in, 3, 2] = glorot;
  param P: f32[3, 2] = glorot;
  param q: f32[2] = ones;
  apply_vertex(v, a) {
    z = (v.h + a) @ W;
    return sum(z * P, -1) + mean(z * z, 1) + sum(tanh(z) * q * mean(z, 0), 1);
  }
}
model M {
  out = R(4)(x);
  loss = cross_entropy(out, label);
}
)"});
    // max and min reductions over either axis, one through relu (whose
    // zeros tie exactly: the tied elements share the gradient, which relu
    // then stops).
    c.push_back({"reduce_extremum", R"(
graph {
  vertex x: f32[4];
  vertex label: class[3];
}
layer R(in: int) {
  param W: f32[in, 3, 2] = glorot;
  param P: f32[3, 2] = glorot;
  apply_vertex(v, a) {
    z = (v.h + a) @ W;
    return max(z * P, -1) + min(z, 1) + sum(max(z, 0) * P, 1)
         + max(relu(z), 1);
  }
}
model M {
  out = R(4)(x);
  loss = cross_entropy(out, label);
}
)"});
    // concat inside a body (three inputs, a parameter among them, along
    // the last axis of [2, n] values) and at the model level (JK-Net's
    // concatenation of the layers' outputs).
    c.push_back({"concat", R"(
graph {
  vertex x: f32[4];
  vertex label: class[3];
}
layer C(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param U: f32[in, 2, out] = glorot;
  param P: f32[2, 1] = glorot;
  apply_vertex(v, a) {
    z = concat(v.h @ U, P, tanh(a @ U));
    return concat(v.h @ W, mean(z, 0));
  }
}
layer Linear(in: int, out: int) {
  param W: f32[in, out] = glorot;
  apply_vertex(v, a) { return v.h @ W; }
}
model M {
  h1 = C(4, 2)(x);
  h2 = C(7, 2)(tanh(h1));
  out = Linear(14, 3)(concat(h1, h2));
  loss = cross_entropy(out, label);
}
)"});
    // reshape and multi-dimensional messages: multi-head values through a
    // mean gather, flattened with reshape.
    c.push_back({"reshape_heads", R"(
graph {
  vertex x: f32[4];
  vertex label: class[3];
}
layer H(in: int, heads: int, out: int) {
  param W: f32[in, heads, out] = glorot;
  param P: f32[heads, out] = glorot;
  scatter(v) { z = v.h @ W; }
  apply_edge(e) { return e.src.z * sigmoid(e.dst.z); }
  gather(mean);
  apply_vertex(v, a) {
    return reshape(a * P, [heads * out]) + reshape(tanh(v.z), [heads * out]);
  }
}
model M {
  h = elu(H(4, 2, 3)(x));
  out = H(6, 1, 3)(h);
  loss = cross_entropy(out, label);
}
)"});
    // Per-row matmuls that stay per row at -O2 (not GEMMs): a weight
    // computed in the body, a rank-1 right side (a dot product) and a
    // parameter on the left.
    c.push_back({"matmul_per_row", R"(
graph {
  vertex x: f32[4];
  vertex label: class[3];
}
layer MM(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param c: f32[in] = ones;
  param d: f32[out] = zeros;
  param s: f32 = 1.0;
  apply_vertex(v, a) {
    return v.h @ (W * s) + (a @ c) * d + c @ reshape(v.h * a, [in, 1]);
  }
}
model M {
  h = MM(4, 5)(x);
  out = MM(5, 3)(tanh(h));
  loss = cross_entropy(out, label);
}
)"});
    // Scatter stage, default apply_edge over a scattered name.
    c.push_back({"scatter", R"(
graph {
  vertex x: f32[4];
  vertex label: class[3];
}
layer S(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param c: f32[in] = ones;
  param b: f32[out] = zeros;
  scatter(v) { m = sigmoid(v.h * c) * v.deg; }
  apply_edge(e) { return e.src.m; }
  gather(sum);
  apply_vertex(v, a) { return (a + v.m) @ W + b; }
}
model M {
  h = S(4, 5)(x);
  out = S(5, 3)(h);
  loss = cross_entropy(out, label);
}
)"});
    for (bool loops : {false, true}) {
      std::string suffix = loops ? "_self_loops" : "";
      c.push_back({"gather_sum" + suffix, edges("sum", loops)});
      c.push_back({"gather_mean" + suffix, edges("mean", loops)});
      // Random features and edge values: no two messages of a vertex tie.
      c.push_back({"gather_max" + suffix, edges("max", loops)});
      c.push_back({"gather_min" + suffix, edges("min", loops)});
    }
    // Parameters on the edge (moved to the vertices at -O2; at -O0 their
    // gradients are sums over the edges).
    for (const char *kind : {"max", "min"})
      c.push_back({std::string("edge_relu_") + kind,
                   substitute(kEdgeExtremum, {{"KIND", kind}})});
    // A parameter applied to values of both ends of an edge, which operator
    // motion cannot move: its gradient is a sum over the edges at -O2 too.
    // Once with the layer's input computed from a parameter, once with a
    // graph input (no backward propagation for the input then).
    c.push_back({"edge_param_both_ends", R"(
graph { vertex x: f32[4]; vertex label: class[3]; }
layer P(in: int) {
  param c: f32[in] = ones;
  apply_vertex(v, a) { return v.h * c; }
}
layer L(in: int, out: int) {
  param W: f32[in, out] = glorot;
  apply_edge(e) { return (e.src.h - e.dst.h) @ W; }
  gather(sum);
}
model M { out = L(4, 3)(P(4)(x)); loss = cross_entropy(out, label); }
)"});
    c.push_back({"edge_param_graph_input", R"(
graph { vertex x: f32[4]; vertex label: class[3]; }
layer L(in: int, out: int) {
  param W: f32[in, out] = glorot;
  apply_edge(e) { return tanh((e.src.h - e.dst.h) @ W); }
  gather(mean);
}
model M { out = L(4, 3)(x); loss = cross_entropy(out, label); }
)"});
    // Model-level arithmetic on vertex values, a value used twice, a layer
    // without a gather, dropout at rate 0, weight decay, and a loss with
    // + - * / (subtracting or dividing by a term that depends on a
    // parameter: GradientCheckCornerCases.LossSubtractingAParameterTerm).
    c.push_back({"loss_arithmetic", R"(
graph {
  vertex x: f32[4];
  vertex label: class[3];
}
layer L(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param b: f32[out] = zeros;
  apply_vertex(v, a) { return (v.h + a) @ W + b; }
}
layer Linear(in: int, out: int) {
  param W: f32[in, out] = glorot;
  apply_vertex(v, a) { return v.h @ W; }
}
model M {
  h = dropout(L(4, 4)(x), 0.0);
  g = tanh(h) * 2 - 0.5 + h * x;
  out = Linear(4, 3)(relu(g) + L(4, 4)(g));
  loss = (cross_entropy(out, label) * 1.5 - 0.25) / 2 + 0.05 * l2(L#0.W)
       + l2(Linear#0.W) / 8 + 0.01 * l2(L#0.b) * (2 + 1);
}
)"});
    // A parameter the loss never reads: its gradient is zero.
    c.push_back({"unused_param", R"(
graph {
  vertex x: f32[4];
  vertex label: class[3];
}
layer L(in: int, out: int) {
  param W: f32[in, out] = glorot;
  param unused: f32[out] = zeros;
  apply_vertex(v, a) { return (v.h + a) @ W; }
}
model M {
  out = L(4, 3)(x);
  loss = cross_entropy(out, label);
}
)"});
    c.push_back({"gcn_small", example(kGcn, "0.0")});
    c.push_back({"graphsage_small", example(kSage, "0.0")});
    // gather(max/min) of the features themselves: the tiny graph's repeated
    // edges (0 -> 1 three times) carry equal messages, which tie exactly
    // and move together under any perturbation.
    c.push_back({"graphsage_max_small", sageGather("max", "0.0")});
    c.push_back({"graphsage_min_small", sageGather("min", "0.0")});
    c.push_back({"gin_small", example(kGin, "0.0")});
    c.push_back({"ggcn_small", example(kGgcn, "0.0", 6, 4, 3), 3});
    // Without self loops some vertices gather from no edge at all.
    c.push_back({"gat_small", gat("0.0", true)});
    c.push_back({"gat_small_no_self_loops", gat("0.0", false, 3)});
    return c;
  }();
  return all;
}

} // namespace sagatest::training
