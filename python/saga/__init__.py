"""Saga: a compiler and runtime for graph neural networks, from Python.

    import saga
    model = saga.compile("examples/gcn.saga")
    model.set_graph(src, dst, num_vertices)      # NumPy arrays
    model.set_inputs(x=features, label=labels)   # float32 bound, no copy
    history = model.fit(train_ids, val_ids, test_ids, epochs=200)
    logits = model.forward()

Graphs also come from SciPy matrices (Model.set_graph_csr), PyG's
edge_index (Model.set_edge_index) and DGL graphs (Model.set_dgl_graph);
saga.load_dataset reads any dataset sagac reads (Planetoid folders, OGB
folders, .npz archives, .sgf graph files) as NumPy arrays. Errors are
saga.Error with Saga's located messages; wrong shapes, dtypes and names are
ValueError, TypeError and KeyError.
"""
import os
import sys

import numpy as np

from . import _saga

Error = _saga.Error

__all__ = ["Error", "Model", "compile", "load_dataset", "row_normalize",
           "split_edges", "save_edge_split", "load_edge_split", "roc_auc",
           "hits_at_k", "mrr"]


def load_dataset(path):
    """A dataset as NumPy arrays: src, dst (int64 edges), x (float32
    features), y (int64 classes, -1 unlabelled), train / val / test (vertex
    ids), num_vertices, num_classes, name."""
    return _saga.load_dataset(os.fspath(path))


def split_edges(src, dst, num_nodes, val=0.05, test=0.1, negatives=1.0,
                seed=0, undirected=True):
    """Link prediction's held-out edges, as sagac split-edges and PyG's
    RandomLinkSplit make them: a dict of train_pos, val_pos, val_neg,
    test_pos and test_neg ([pairs, 2] int64; undirected pairs with the
    smaller id first), num_nodes and undirected. The graph to propagate
    over is train_pos (both ways when undirected)."""
    return _saga.split_edges(np.asarray(src), np.asarray(dst), int(num_nodes),
                             float(val), float(test), float(negatives),
                             int(seed), bool(undirected))


def save_edge_split(path, split):
    """Writes split_edges' dict as the .npz sagac split-edges writes."""
    _saga.write_edge_split(os.fspath(path), split)


def load_edge_split(path, num_nodes, undirected=True):
    """An .npz of train_pos, val_pos, val_neg, test_pos and test_neg
    ([pairs, 2] integers), checked against a graph of num_nodes vertices
    (a leak of a held-out pair into train_pos, a negative that is a
    positive, an id out of range: saga.Error naming the array and row)."""
    return _saga.load_edge_split(os.fspath(path), int(num_nodes),
                                 bool(undirected))


def _scores(x):
    return np.ascontiguousarray(np.asarray(x, dtype=np.float32).ravel())


def roc_auc(positive, negative):
    """ROC AUC of positive pairs' scores against negative pairs' (ties
    count one half, as scikit-learn's roc_auc_score); NaN when either is
    empty or a score is NaN."""
    return _saga.roc_auc(_scores(positive).tolist(), _scores(negative).tolist())


def hits_at_k(positive, negative, k):
    """OGB's Hits@K: the fraction of positives above the K-th highest
    negative (1 with fewer than K negatives)."""
    return _saga.hits_at_k(_scores(positive).tolist(),
                           _scores(negative).tolist(), int(k))


def mrr(positive, negative):
    """OGB's MRR: negative is [positives, M], each row the positive's own
    negatives; a tie ranks half-way."""
    negative = np.asarray(negative, dtype=np.float32)
    if negative.ndim != 2 or negative.shape[0] != len(np.ravel(positive)):
        raise ValueError("negative must be [len(positive), M]")
    return _saga.mrr(_scores(positive).tolist(), _scores(negative).tolist(),
                     int(negative.shape[1]))


def row_normalize(x):
    """Each row divided by its sum (rows summing to 0 stay 0), as sagac
    does to Planetoid features by default."""
    x = np.asarray(x, dtype=np.float32)
    s = x.sum(axis=1, keepdims=True)
    return np.divide(x, s, out=np.zeros_like(x), where=s != 0)


class Model:
    """A compiled .saga model, its graph and its bound inputs."""

    def __init__(self, impl):
        self._impl = impl

    # Graphs.
    def set_graph(self, src, dst, num_vertices=None, graph_offsets=None):
        """Edges src[i] -> dst[i] (integer arrays); num_vertices defaults to
        1 + the largest id. The model's declared self loops are added.
        graph_offsets: a batch of graphs (G + 1 offsets from 0 to
        num_vertices; graph g owns vertices offsets[g] .. offsets[g+1] - 1),
        which the model's readouts (sum_nodes, ...) reduce one by one;
        None: one graph."""
        src, dst = np.asarray(src), np.asarray(dst)
        if num_vertices is None:
            num_vertices = int(max(src.max(initial=-1), dst.max(initial=-1))) + 1
        if graph_offsets is not None:
            graph_offsets = np.asarray(graph_offsets, dtype=np.int64)
        self._impl.set_graph(src, dst, int(num_vertices), graph_offsets)
        return self

    def set_edge_index(self, edge_index, num_vertices=None):
        """PyG's edge_index (2 x E: sources, then targets; a torch tensor or
        an array)."""
        e = np.asarray(edge_index.cpu().numpy() if hasattr(edge_index, "cpu")
                       else edge_index)
        if e.ndim != 2 or e.shape[0] != 2:
            raise ValueError("edge_index must have shape (2, E), not %s" %
                             (e.shape,))
        return self.set_graph(e[0], e[1], num_vertices)

    def set_graph_csr(self, matrix):
        """A SciPy sparse matrix: entry (i, j) is the edge i -> j."""
        coo = matrix.tocoo()
        if coo.shape[0] != coo.shape[1]:
            raise ValueError("an adjacency matrix is square, not %s" %
                             (coo.shape,))
        return self.set_graph(coo.row, coo.col, coo.shape[0])

    def set_dgl_graph(self, g):
        """A DGL graph's edges (g.edges()) and vertex count."""
        u, v = g.edges()
        return self.set_graph(u.numpy(), v.numpy(), g.num_nodes())

    # Inputs.
    def set_input(self, name, value):
        """Binds an array to the model's input `name` (one row per vertex or
        edge). A C-ordered float32 array is bound without a copy and must
        not be resized while bound."""
        self._impl.set_input(name, np.asarray(value))
        return self

    def set_inputs(self, **values):
        for name, value in values.items():
            self.set_input(name, value)
        return self

    def shares_memory(self, name, value):
        """Whether input `name` is bound to `value`'s memory (no copy)."""
        return self._impl.shares_memory(name, value)

    @property
    def inputs(self):
        return self._impl.inputs()

    # Running and training.
    def forward(self, outputs=False):
        """The model's output, one row per vertex (float32). With
        outputs=True, a dict: "out" (the output) and each vertex value named
        in compile(..., outputs=[...])."""
        return self._impl.forward(bool(outputs))

    def loss_and_grad(self, mask=None, seed=0, pairs=None):
        """One training step without an update: (loss, {parameter name:
        d loss / d parameter}), the loss averaged over the vertex ids in
        `mask` (all labelled vertices when None; an empty mask is a
        ValueError), dropout drawn from `seed`. A link predictor's loss
        (pair_bce) scores `pairs`: (src, dst, labels), labels 1 for an edge
        and 0 for a negative. Parameters must be set (init_params or
        set_param)."""
        return self._impl.loss_and_grad(
            None if mask is None else np.asarray(mask), int(seed),
            None if pairs is None else tuple(np.asarray(p) for p in pairs))

    @property
    def self_loops(self):
        """Whether the model's graph declares self_loops (set_graph adds
        one to every vertex)."""
        return self._impl.self_loops

    @property
    def device(self):
        """Where the model runs, e.g. "CPU, 1 thread"."""
        return self._impl.device

    def fit(self, train, val, test, epochs=200, lr=0.01, optimizer="adam",
            seed=0, patience=0, log=None, checkpoint=None, resume=False,
            batch_size=0, fanout=(), progress=True):
        """Trains with sagac train's trainer: one dict per epoch (epoch,
        loss, train_acc, val_acc, test_acc, seconds) is returned.
        `progress`: True for a progress bar on stderr, a callable taking
        each epoch's dict, or False."""
        if progress is True:
            progress = _ProgressBar(epochs) if sys.stderr.isatty() else None
        elif progress is False:
            progress = None
        history = self._impl.train(
            np.asarray(train), np.asarray(val), np.asarray(test), int(epochs),
            float(lr), optimizer, int(seed), int(patience),
            os.fspath(log) if log else "",
            os.fspath(checkpoint) if checkpoint else "", bool(resume),
            int(batch_size), [int(f) for f in fanout], progress)
        if isinstance(progress, _ProgressBar):
            progress.close()
        return history

    def fit_links(self, split, epochs=100, lr=0.01, optimizer="adam", seed=0,
                  negatives=1, batch_size=0, fanout=(), max_batches=0,
                  hits_k=50, log=None, progress=True):
        """Trains a link predictor (a model whose loss is pair_bce(out)) on
        `split`, the dict saga.split_edges or saga.load_edge_split returns:
        the graph set is replaced by the split's message graph (train_pos,
        both ways), the features stay bound; each epoch draws `negatives`
        uniform negatives per train edge. batch_size > 0: mini-batches of
        train edges, their ends' neighbourhoods sampled by `fanout`. One
        dict per epoch (epoch, loss, val_auc, val_hits, val_mrr, test_auc,
        test_hits, test_mrr, batches, seconds) is returned; Hits@`hits_k`.
        `progress`: True for a progress bar on stderr, a callable taking
        each epoch's dict, or False."""
        if progress is True:
            progress = (_ProgressBar(epochs, "val_auc") if sys.stderr.isatty()
                        else None)
        elif progress is False:
            progress = None
        history = self._impl.train_links(
            split, int(epochs), float(lr), optimizer, int(seed),
            int(negatives), os.fspath(log) if log else "", int(batch_size),
            [int(f) for f in fanout], int(max_batches), int(hits_k), progress)
        if isinstance(progress, _ProgressBar):
            progress.close()
        return history

    # Parameters and plans.
    def params(self):
        """name -> a copy of the parameter (float32)."""
        return self._impl.params()

    def set_param(self, name, value):
        self._impl.set_param(name, np.asarray(value, dtype=np.float32))

    def init_params(self, seed=0):
        """Initialises the parameters not set yet (Glorot for weights)."""
        self._impl.init_params(int(seed))

    @property
    def plan(self):
        """The execution plan (saga dialect, plan level) as text."""
        return self._impl.plan


class _ProgressBar:
    def __init__(self, total, metric="val_acc"):
        self.total = total
        self.metric = metric

    def __call__(self, e):
        done = int(30 * e["epoch"] / max(1, self.total))
        sys.stderr.write("\r[%s%s] epoch %d/%d loss %.4f val %.4f" %
                         ("#" * done, "." * (30 - done), e["epoch"],
                          self.total, e["loss"], e[self.metric]))
        sys.stderr.flush()

    def close(self):
        sys.stderr.write("\n")


def compile(model, opt_level=2, threads=1, outputs=(), device="cpu"):
    """Compiles a .saga file (a path) or source text (a string holding a
    `model` block) for inference and training. `outputs` names vertex
    values of the model body (the value a name holds at the end of the
    model, e.g. "h" for embeddings) that forward(outputs=True) returns.
    `device`: "cpu", or "cuda" for the generated CUDA kernels on the GPU
    the driver (libcuda, or SAGA_CUDA_DRIVER) offers."""
    if isinstance(outputs, str):
        outputs = [outputs]
    text = os.fspath(model)
    is_source = "\n" in text or "{" in text
    if not is_source and not os.path.exists(text):
        raise FileNotFoundError(text)
    return Model(_saga.compile(text, is_source, int(opt_level), int(threads),
                               [str(o) for o in outputs], str(device)))


def cross_validate(model, data, folds=10, epochs=350, batch_size=32, lr=0.01,
                   optimizer="adam", lr_step=0, lr_gamma=0.5, seed=0,
                   threads=1, opt_level=2, device="cpu", progress=None):
    """Graph classification: k-fold cross-validation of `model` (a .saga
    path or source text whose loss reads a readout such as sum_nodes) on
    `data`, a TU Dortmund folder or an .npz of many graphs. Each fold trains
    a freshly compiled model on batches of `batch_size` whole graphs; the
    learning rate is multiplied by `lr_gamma` every `lr_step` epochs (0:
    never). Returns a dict: "history" (a dict per fold and epoch: fold,
    epoch, loss, train_acc, test_acc, seconds; `progress` is called with
    each), "mean_test_acc" and "std_test_acc" (per epoch, over the folds)
    and "best_epoch" (1-based; its mean is the GIN paper's figure)."""
    text = os.fspath(model)
    is_source = "\n" in text or "{" in text
    if not is_source and not os.path.exists(text):
        raise FileNotFoundError(text)
    return _saga.cross_validate(
        text, is_source, os.fspath(data), int(folds), int(epochs),
        int(batch_size), float(lr), str(optimizer), int(lr_step),
        float(lr_gamma), int(seed), int(threads), int(opt_level), str(device),
        progress)
