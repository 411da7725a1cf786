"""A small reverse-mode automatic differentiation over NumPy float64 arrays:
the reference the example models' losses and gradients are checked against
(test/models/check_models.py). It shares nothing with Saga: every rule here
is written from the calculus, and every sum is taken in float64.

A T holds a value and, after backward(), its gradient. Elementwise binary
operations broadcast as NumPy does; `matmul` contracts the last axis of its
left side with the first of its right (Saga's `@`). The graph operations
take an edge list (src, dst) and a vertex count.
"""
import numpy as np


class T:
    """A float64 value in the computation, with the rule that sends its
    gradient to its inputs."""

    __array_ufunc__ = None  # numpy arrays defer to T's operators

    def __init__(self, value, parents=(), rule=None):
        self.value = np.asarray(value, dtype=np.float64)
        self.parents = parents
        self.rule = rule  # rule(grad) -> one gradient per parent
        self.grad = None

    @property
    def shape(self):
        return self.value.shape

    def __add__(self, o):
        return add(self, o)

    __radd__ = __add__

    def __sub__(self, o):
        return add(self, mul(o, -1.0))

    def __rsub__(self, o):
        return add(mul(self, -1.0), o)

    def __mul__(self, o):
        return mul(self, o)

    __rmul__ = __mul__

    def __pow__(self, k):
        return unary(self, lambda x: x**k, lambda x: k * x**(k - 1))

    def __neg__(self):
        return mul(self, -1.0)

    def __matmul__(self, o):
        return matmul(self, o)

    def __rmatmul__(self, o):
        return matmul(o, self)

    def __getitem__(self, index):
        return rows(self, index)


def lift(x):
    return x if isinstance(x, T) else T(x)


def unbroadcast(g, shape):
    """Sums `g` down to `shape` (the inverse of broadcasting)."""
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for i, n in enumerate(shape):
        if n == 1 and g.shape[i] != 1:
            g = g.sum(axis=i, keepdims=True)
    return g


def add(a, b):
    a, b = lift(a), lift(b)
    return T(a.value + b.value, (a, b),
             lambda g: (unbroadcast(g, a.shape), unbroadcast(g, b.shape)))


def mul(a, b):
    a, b = lift(a), lift(b)
    return T(a.value * b.value, (a, b),
             lambda g: (unbroadcast(g * b.value, a.shape),
                        unbroadcast(g * a.value, b.shape)))


def div(a, b):
    a, b = lift(a), lift(b)
    return T(a.value / b.value, (a, b),
             lambda g: (unbroadcast(g / b.value, a.shape),
                        unbroadcast(-g * a.value / b.value**2, b.shape)))


def matmul(a, b):
    """[..., k] @ [k, ...] -> [..., ...]."""
    a, b = lift(a), lift(b)
    na, nb = a.value.ndim, b.value.ndim
    out = np.tensordot(a.value, b.value, axes=([na - 1], [0]))

    def rule(g):
        # g: a.shape[:-1] + b.shape[1:].
        lead, trail = na - 1, nb - 1
        ga = np.tensordot(g, b.value, axes=(list(range(lead, lead + trail)),
                                            list(range(1, nb))))
        gb = np.tensordot(a.value, g, axes=(list(range(lead)),
                                            list(range(lead))))
        return ga, gb

    return T(out, (a, b), rule)


def unary(a, f, df):
    a = lift(a)
    return T(f(a.value), (a,), lambda g: (g * df(a.value),))


def relu(a):
    return unary(a, lambda x: np.maximum(x, 0), lambda x: (x > 0) * 1.0)


def leaky_relu(a, slope=0.01):
    return unary(a, lambda x: np.where(x > 0, x, slope * x),
                 lambda x: np.where(x > 0, 1.0, slope))


def elu(a):
    return unary(a, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
                 lambda x: np.where(x > 0, 1.0, np.exp(np.minimum(x, 0))))


def exp(a):
    return unary(a, np.exp, np.exp)


def log(a):
    return unary(a, np.log, lambda x: 1 / x)


def tanh(a):
    return unary(a, np.tanh, lambda x: 1 - np.tanh(x)**2)


def sigmoid(a):
    s = lambda x: 1 / (1 + np.exp(-x))
    return unary(a, s, lambda x: s(x) * (1 - s(x)))


def total(a, axis=-1):
    """Saga's sum(a, axis): the axis removed."""
    a = lift(a)
    ax = axis % a.value.ndim
    return T(a.value.sum(axis=ax), (a,),
             lambda g: (np.broadcast_to(np.expand_dims(g, ax), a.shape),))


def concat(*xs):
    xs = [lift(x) for x in xs]
    widths = np.cumsum([0] + [x.shape[-1] for x in xs])
    return T(np.concatenate([x.value for x in xs], axis=-1), tuple(xs),
             lambda g: tuple(g[..., widths[i]:widths[i + 1]]
                             for i in range(len(xs))))


def reshape(a, shape):
    a = lift(a)
    return T(a.value.reshape(shape), (a,), lambda g: (g.reshape(a.shape),))


def rows(a, index):
    """a[index] along the first axis (an edge's source or target rows)."""
    a = lift(a)
    index = np.asarray(index)

    def rule(g):
        out = np.zeros(a.shape)
        np.add.at(out, index, g)
        return (out,)

    return T(a.value[index], (a,), rule)


def segment_sum(m, dst, n):
    """Per vertex, the sum of the messages of its in-edges (zero without)."""
    m = lift(m)
    out = np.zeros((n,) + m.shape[1:])
    np.add.at(out, dst, m.value)
    return T(out, (m,), lambda g: (g[dst],))


def segment_extremum(m, dst, n, take):
    """Per vertex, the largest (np.maximum) or smallest (np.minimum) message
    of its in-edges, element by element (zero without in-edges); the
    gradient goes to the in-edges whose message equals it, split evenly
    among ties."""
    m = lift(m)
    init = -np.inf if take is np.maximum else np.inf
    top = np.full((n,) + m.shape[1:], init)
    take.at(top, dst, m.value)
    top[np.isinf(top)] = 0.0
    wins = (m.value == top[dst]).astype(np.float64)
    ties = np.zeros(top.shape)
    np.add.at(ties, dst, wins)

    def rule(g):
        return (wins * g[dst] / np.maximum(ties[dst], 1),)

    return T(top, (m,), rule)


def segment_max(m, dst, n):
    return segment_extremum(m, dst, n, np.maximum)


def segment_min(m, dst, n):
    return segment_extremum(m, dst, n, np.minimum)


def segment_mean(m, dst, n):
    count = np.bincount(dst, minlength=n).astype(np.float64)
    count = np.maximum(count, 1).reshape((n,) + (1,) * (m.value.ndim - 1))
    return div(segment_sum(m, dst, n), count)


def segment_softmax_sum(score, m, dst, n):
    """Per vertex, sum over in-edges of softmax(score) * message, the
    softmax over the vertex's in-edges; score's shape a prefix of the
    message's (one score per head)."""
    score, m = lift(score), lift(m)
    top = np.full((n,) + score.shape[1:], -np.inf)
    np.maximum.at(top, dst, score.value)
    w = exp(score - T(top[dst]))  # the shift is a constant: no gradient
    den = segment_sum(w, dst, n)
    alpha = div(w, rows(den, dst))
    extra = m.value.ndim - score.value.ndim
    alpha = reshape(alpha, alpha.shape + (1,) * extra)
    return segment_sum(alpha * m, dst, n)


def cross_entropy(logits, labels, mask):
    """The mean over `mask` of -log softmax(logits)[label]."""
    logits = lift(logits)
    z = logits.value[mask]
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    y = np.asarray(labels)[mask]
    loss = -np.log(p[np.arange(len(mask)), y]).mean()

    def rule(g):
        d = p.copy()
        d[np.arange(len(mask)), y] -= 1
        out = np.zeros(logits.shape)
        np.add.at(out, mask, g * d / len(mask))
        return (out,)

    return T(loss, (logits,), rule)


def batch_norm(x, eps=1e-5):
    """Each column standardised over the rows: (x - mean) / sqrt(var + eps),
    the biased variance (PyTorch's BatchNorm1d in training, no affine).
    Composed of the operations above, so that its gradient is theirs (not
    the closed form Saga uses)."""
    x = lift(x)
    n = x.shape[0]
    d = x - total(x, axis=0) * (1.0 / n)
    var = total(d * d, axis=0) * (1.0 / n)
    return d * (var + eps) ** -0.5


def pair_bce(h, src, dst, y):
    """Link prediction's loss: the mean over the pairs (src[i], dst[i]) of
    the binary cross-entropy with logits of the score sum(h[src] * h[dst])
    against y[i] in {0, 1}."""
    s = total(rows(h, src) * rows(h, dst))
    y = np.asarray(y, np.float64)
    z = s.value
    loss = (np.maximum(z, 0) - y * z + np.log1p(np.exp(-np.abs(z)))).mean()

    def rule(g):
        return (g * (1 / (1 + np.exp(-z)) - y) / len(z),)

    return T(loss, (s,), rule)


def l2(p):
    """sum(p^2) / 2."""
    p = lift(p)
    return T(0.5 * (p.value**2).sum(), (p,), lambda g: (g * p.value,))


def backward(out):
    """Gradients of the scalar `out` with respect to every T it reads."""
    order, seen = [], set()
    stack = [(out, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for p in node.parents:
            stack.append((p, False))
    for node in order:
        node.grad = None
    out.grad = np.ones(out.shape)
    for node in reversed(order):
        if node.rule is None or node.grad is None:
            continue
        for p, g in zip(node.parents, node.rule(node.grad)):
            p.grad = g if p.grad is None else p.grad + g
