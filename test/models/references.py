"""The example models (examples/*.saga) written again over the float64
autograd of autograd.py, with dropout off: each function takes the graph
(src, dst with the model's self loops appended, n), the inputs (x, label),
the loss mask and the parameters by Saga's names (T values), and returns
(out, loss). check_models.py compares Saga's loss and gradients with these.
"""
import numpy as np

from autograd import (T, batch_norm, concat, cross_entropy, div, elu, l2,
                      leaky_relu,
                      log, mul, pair_bce, relu, reshape, rows, segment_max,
                      segment_mean, segment_min, segment_softmax_sum,
                      segment_sum, sigmoid, tanh, total, lift)


class Graph:
    def __init__(self, src, dst, n, self_loops, offsets=None):
        src, dst = np.asarray(src), np.asarray(dst)
        if self_loops:  # appended to every vertex, as Graph::build does
            src = np.concatenate([src, np.arange(n)])
            dst = np.concatenate([dst, np.arange(n)])
        self.src, self.dst, self.n = src, dst, n
        self.deg = np.bincount(dst, minlength=n).astype(np.float64)
        # A batch of graphs: graph k owns vertices offsets[k] .. offsets[k+1].
        offsets = [0, n] if offsets is None else list(offsets)
        self.graphs = len(offsets) - 1
        self.graph_of = np.repeat(np.arange(self.graphs), np.diff(offsets))


def readout(g, h, segment):
    """sum_nodes, mean_nodes, max_nodes, min_nodes: each vertex gets its
    graph's reduction (segment_sum, ...) of h."""
    return rows(segment(lift(h), g.graph_of, g.graphs), g.graph_of)


def a_hat(g, h):
    """D^-1/2 A D^-1/2 h (A with the self loops the model declares)."""
    s = (g.deg ** -0.5)[:, None]
    return segment_sum(rows(h * s, g.src), g.dst, g.n) * s


def gcn_conv(g, h, P, name):
    return a_hat(g, h) @ P[name + ".W"] + P[name + ".b"]


def linear(h, P, name):
    return h @ P[name + ".W"] + P[name + ".b"]


def l2_sum(P, names):
    out = 0.0
    for n in names:
        out = out + l2(P[n])
    return out


def gcn(g, x, label, mask, P):
    h = relu(gcn_conv(g, x, P, "GCNConv#0"))
    out = gcn_conv(g, h, P, "GCNConv#1")
    return out, cross_entropy(out, label, mask) + 5e-4 * l2(P["GCNConv#0.W"])


def graphsage(g, x, label, mask, P):
    def conv(h, name):
        a = segment_mean(rows(h, g.src), g.dst, g.n)
        return h @ P[name + ".Ws"] + a @ P[name + ".Wn"] + P[name + ".b"]

    h = relu(conv(x, "SAGEConv#0"))
    out = conv(h, "SAGEConv#1")
    return out, cross_entropy(out, label, mask) + 5e-4 * (
        l2(P["SAGEConv#0.Ws"]) + l2(P["SAGEConv#0.Wn"]))


def gin(g, x, label, mask, P):
    def conv(h, name):
        a = segment_sum(rows(h, g.src), g.dst, g.n)
        t = (1 + P[name + ".eps"]) * h + a
        t = relu(t @ P[name + ".W1"] + P[name + ".b1"])
        return t @ P[name + ".W2"] + P[name + ".b2"]

    h = relu(conv(x, "GINConv#0"))
    out = conv(h, "GINConv#1")
    names = [f"GINConv#{i}.{p}" for i in range(2)
             for p in ("eps", "W1", "b1", "W2", "b2")]
    return out, cross_entropy(out, label, mask) + 5e-4 * l2_sum(P, names)


def ggcn(g, x, label, mask, P):
    def gated(h, name):
        hs, hd = rows(h, g.src), rows(h, g.dst)
        eta = sigmoid(hs @ P[name + ".WH"] + hd @ P[name + ".WC"])
        a = segment_sum(eta * (hs @ P[name + ".WS"]), g.dst, g.n)
        return relu(h @ P[name + ".U"] + a)

    h = relu(x @ P["Linear#0.W"])
    h = gated(gated(h, "GatedGCN#0"), "GatedGCN#1")
    out = h @ P["Linear#1.W"]
    return out, cross_entropy(out, label, mask) + 5e-4 * l2(P["Linear#0.W"])


def gat_conv(g, h, P, name, heads, width, v2):
    if v2:
        zs, zd = h @ P[name + ".Ws"], h @ P[name + ".Wd"]
        score = total(leaky_relu(rows(zs, g.src) + rows(zd, g.dst), 0.2)
                      * P[name + ".att"], -1)
    else:
        zs = h @ P[name + ".W"]
        s, d = total(zs * P[name + ".as"], -1), total(zs * P[name + ".ad"], -1)
        score = leaky_relu(rows(s, g.src) + rows(d, g.dst), 0.2)
    a = segment_softmax_sum(score, rows(zs, g.src), g.dst, g.n)
    return reshape(a, (g.n, heads * width)) + P[name + ".b"]


def gat(g, x, label, mask, P, v2=False):
    layer = "GATv2Conv" if v2 else "GATConv"
    h = elu(gat_conv(g, x, P, layer + "#0", 8, 8, v2))
    out = gat_conv(g, h, P, layer + "#1", 1, 7, v2)
    params = ("Ws", "Wd", "att", "b") if v2 else ("W", "as", "ad", "b")
    names = [f"{layer}#{i}.{p}" for i in range(2) for p in params]
    return out, cross_entropy(out, label, mask) + 5e-4 * l2_sum(P, names)


def gatv2(g, x, label, mask, P):
    return gat(g, x, label, mask, P, v2=True)


def sgc(g, x, label, mask, P):
    h = a_hat(g, a_hat(g, x))
    out = linear(h, P, "Linear#0")
    return out, cross_entropy(out, label, mask) + 5e-5 * l2_sum(
        P, ["Linear#0.W", "Linear#0.b"])


def appnp(g, x, label, mask, P):
    h = relu(linear(x, P, "Linear#0"))
    h0 = linear(h, P, "Linear#1")
    z = h0
    for _ in range(10):
        z = 0.9 * a_hat(g, z) + 0.1 * h0
    return z, cross_entropy(z, label, mask) + 5e-3 * l2(P["Linear#0.W"])


def jknet(g, x, label, mask, P):
    h1 = relu(gcn_conv(g, x, P, "GCNConv#0"))
    h2 = relu(gcn_conv(g, h1, P, "GCNConv#1"))
    h3 = relu(gcn_conv(g, h2, P, "GCNConv#2"))
    out = linear(concat(h1, h2, h3), P, "Linear#0")
    names = [f"GCNConv#{i}.{p}" for i in range(3) for p in "Wb"]
    names += ["Linear#0.W", "Linear#0.b"]
    return out, cross_entropy(out, label, mask) + 5e-4 * l2_sum(P, names)


def gcnii(g, x, label, mask, P):
    h0 = relu(linear(x, P, "Linear#0"))
    h = h0
    for l in range(1, 9):
        beta = np.log(0.5 / l + 1)
        s = 0.9 * a_hat(g, h) + 0.1 * h0
        h = relu((1 - beta) * s + beta * (s @ P[f"GCNIIConv#{l - 1}.W"]))
    out = linear(h, P, "Linear#1")
    conv = [f"GCNIIConv#{i}.W" for i in range(8)]
    dense = [f"Linear#{i}.{p}" for i in range(2) for p in "Wb"]
    return out, (cross_entropy(out, label, mask) + 0.01 * l2_sum(P, conv)
                 + 5e-4 * l2_sum(P, dense))


def pna(g, x, label, mask, P):
    # log(d + 1) / delta with d the in-degree (self loops included).
    amp = T((np.log(g.deg + 1) / 1.6501)[:, None])

    def layer(h, pre, post):
        z = linear(h, P, pre)
        zs = rows(z, g.src)
        mu = segment_mean(zs, g.dst, g.n)
        var = relu(segment_mean(zs * zs, g.dst, g.n) - mu * mu) + 1e-5
        sd = mul(var, var ** -0.5)
        agg = concat(mu, segment_max(zs, g.dst, g.n),
                     segment_min(zs, g.dst, g.n), sd)
        return linear(concat(h, agg, agg * amp, div(agg, amp)), P, post)

    h = relu(layer(x, "Linear#0", "Linear#1"))
    out = layer(h, "Linear#2", "Linear#3")
    names = [f"Linear#{i}.{p}" for i in range(4) for p in "Wb"]
    return out, cross_entropy(out, label, mask) + 5e-3 * l2_sum(P, names)


def gin_mutag(g, x, label, mask, P):
    def norm(h, i):  # batch_norm, then Affine#i's scale and shift
        return relu(batch_norm(h) * P[f"Affine#{i}.g"] + P[f"Affine#{i}.b"])

    def conv(h, i):
        a = segment_sum(rows(h, g.src), g.dst, g.n)
        name = f"GINConv#{i}"
        t = norm((h + a) @ P[name + ".W1"], 2 * i)
        return norm(t @ P[f"Dense#{i}.W"], 2 * i + 1)

    hs = [x]
    for i in range(4):
        hs.append(conv(hs[-1], i))
    out = 0.0
    for i, h in enumerate(hs):
        out = out + linear(readout(g, h, segment_sum), P, f"Score#{i}")
    return out, cross_entropy(out, label, mask)


def readouts(g, x, label, mask, P):
    a = segment_mean(rows(x, g.src), g.dst, g.n)
    h = tanh((x + a) @ P["Conv#0.W"] + P["Conv#0.b"])
    r = concat(readout(g, h, segment_sum), readout(g, h, segment_mean),
               readout(g, h, segment_max), readout(g, h, segment_min))
    out = linear(r, P, "Score#0") + linear(readout(g, x, segment_mean), P,
                                          "Score#1")
    return out, cross_entropy(out, label, mask)


def rgcn(g, x, label, mask, P):
    """g.rel: the edges' one-hot relations [E, R] (no self loops added)."""
    def conv(h, name):
        W = P[name + ".W"]  # [in, R, out]
        hr = reshape(h @ reshape(W, (W.shape[0], -1)),
                     (h.shape[0], W.shape[1], W.shape[2]))
        m = total(rows(hr, g.src) * g.rel[:, :, None], axis=1)
        return h @ P[name + ".W0"] + segment_mean(m, g.dst, g.n) + P[name + ".b"]

    h = relu(conv(x, "RGCNConv#0"))
    out = conv(h, "RGCNConv#1")
    return out, cross_entropy(out, label, mask)


def graphsage_link(g, x, pairs, mask, P):
    """A link predictor: `pairs` is (src, dst, labels) in place of the
    labels; the mask is unused."""
    def conv(h, name):
        a = segment_mean(rows(h, g.src), g.dst, g.n)
        return h @ P[name + ".Ws"] + a @ P[name + ".Wn"] + P[name + ".b"]

    h = relu(conv(x, "SAGEConv#0"))
    out = conv(h, "SAGEConv#1")
    return out, pair_bce(out, *pairs)


MODELS = {
    "gcn": gcn, "graphsage": graphsage, "gin": gin, "gat": gat, "ggcn": ggcn,
    "sgc": sgc, "appnp": appnp, "jknet": jknet, "gatv2": gatv2,
    "gcnii": gcnii, "pna": pna, "gin-mutag": gin_mutag, "gin-proteins": gin_mutag,
    "readouts": readouts, "graphsage-link": graphsage_link, "rgcn": rgcn,
}
