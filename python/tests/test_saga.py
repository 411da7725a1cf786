"""The saga Python package: compile, graphs, inputs, forward, fit,
parameters, errors (pytest; run by ctest as python-package)."""
import json
import os
import re
import resource

import numpy as np
import pytest

import saga

ROOT = os.environ.get("SAGA_SOURCE_DIR",
                      os.path.join(os.path.dirname(__file__), "..", ".."))
CORA = os.path.join(ROOT, "examples", "data", "cora")
GCN = os.path.join(ROOT, "examples", "gcn.saga")
SAGE = os.path.join(ROOT, "examples", "graphsage.saga")

TINY = """
graph { vertex x: f32[4]; vertex label: class[2]; }
layer Lin(i: int, o: int) {
  param W: f32[i, o] = glorot;
  gather(sum);
  apply_vertex(v, a) { return a @ W; }
}
model M { out = Lin(4, 2)(x); loss = cross_entropy(out, label); }
"""


@pytest.fixture(scope="module")
def cora():
    return saga.load_dataset(CORA)


def gcn(cora, x=None):
    m = saga.compile(GCN)
    m.set_graph(cora["src"], cora["dst"], cora["num_vertices"])
    m.set_inputs(x=saga.row_normalize(cora["x"]) if x is None else x,
                 label=cora["y"])
    return m


def tiny(n=5):
    m = saga.compile(TINY)
    m.set_graph(np.arange(n - 1), np.arange(1, n), n)
    return m


# Datasets.
def test_load_dataset_arrays(cora):
    assert cora["x"].shape == (2708, 1433) and cora["x"].dtype == np.float32
    assert cora["src"].shape == cora["dst"].shape == (10556,)
    assert cora["num_classes"] == 7
    assert len(cora["train"]) == 140 and len(cora["test"]) == 1000


def test_load_dataset_missing_is_a_located_error(tmp_path):
    with pytest.raises(saga.Error, match="nothing-here: cannot open"):
        saga.load_dataset(tmp_path / "nothing-here")


def test_row_normalize_keeps_zero_rows():
    x = saga.row_normalize(np.array([[1, 3], [0, 0]], dtype=np.float32))
    assert np.allclose(x, [[0.25, 0.75], [0, 0]])


# Compiling.
def test_compile_file_and_source_give_the_same_plan():
    assert saga.compile(GCN).plan == saga.compile(open(GCN).read()).plan


def test_compile_error_is_located():
    with pytest.raises(saga.Error, match=r"<string>:\d+:\d+"):
        saga.compile("graph { vertex x: f32[4]; }\nmodel M { out = y; }\n")


def test_compile_missing_file():
    with pytest.raises(FileNotFoundError):
        saga.compile("no/such/model.saga")


def test_compile_bad_opt_level():
    with pytest.raises(ValueError, match="opt_level"):
        saga.compile(GCN, opt_level=1)


def test_plan_and_inputs():
    m = saga.compile(GCN)
    assert "saga.model" in m.plan
    names = {i["name"]: i for i in m.inputs}
    assert names["x"]["shape"] == [1433] and names["label"]["dtype"] == "int32"


# Graphs.
def test_graph_lengths_must_match():
    with pytest.raises(ValueError, match="src has 3 edges, dst 2"):
        saga.compile(TINY).set_graph([0, 1, 2], [1, 2], 4)


def test_graph_ids_in_range():
    with pytest.raises(ValueError, match=r"dst\[1\] = 9 is out of range"):
        saga.compile(TINY).set_graph([0, 1], [1, 9], 4)


def test_graph_ids_must_be_integers():
    with pytest.raises(TypeError, match="1-D integer array"):
        saga.compile(TINY).set_graph(np.array([0.0, 1.0]), [1, 2], 4)


def test_graph_ids_must_be_one_dimensional():
    with pytest.raises(TypeError, match="1-D integer array"):
        saga.compile(TINY).set_graph(np.zeros((2, 2), dtype=int), [1, 2], 4)


def test_graph_negative_vertex_count():
    with pytest.raises(ValueError, match="num_vertices"):
        saga.compile(TINY).set_graph([0], [0], -1)


def test_edge_index_and_scipy_give_the_same_output(cora):
    import scipy.sparse as sp
    a = gcn(cora)
    a.init_params(3)
    b = saga.compile(GCN)
    b.set_edge_index(np.stack([cora["src"], cora["dst"]]))
    b.set_inputs(x=saga.row_normalize(cora["x"]), label=cora["y"])
    b.init_params(3)
    c = saga.compile(GCN)
    n = cora["num_vertices"]
    c.set_graph_csr(sp.csr_matrix((np.ones(len(cora["src"])),
                                   (cora["src"], cora["dst"])), shape=(n, n)))
    c.set_inputs(x=saga.row_normalize(cora["x"]), label=cora["y"])
    c.init_params(3)
    assert np.allclose(a.forward(), b.forward())
    assert np.allclose(a.forward(), c.forward(), atol=1e-5)


def test_edge_index_shape():
    with pytest.raises(ValueError, match=r"shape \(2, E\)"):
        saga.compile(TINY).set_edge_index(np.zeros((3, 4), dtype=int))


def test_dgl_style_graph():
    class G:  # what Model.set_dgl_graph reads of a DGL graph
        def edges(self):
            class T:
                def __init__(self, a):
                    self.a = np.array(a)

                def numpy(self):
                    return self.a
            return T([0, 1, 2]), T([1, 2, 3])

        def num_nodes(self):
            return 5
    m = saga.compile(TINY).set_dgl_graph(G())
    m.set_inputs(x=np.ones((5, 4), np.float32), label=np.zeros(5, int))
    m.init_params(0)
    assert m.forward().shape == (5, 2)


# Inputs.
def test_inputs_need_a_graph():
    with pytest.raises(ValueError, match="set the graph"):
        saga.compile(TINY).set_input("x", np.ones((5, 4), np.float32))


def test_unknown_input_names_the_inputs():
    with pytest.raises(KeyError, match="'x', 'label'"):
        tiny().set_input("features", np.ones((5, 4), np.float32))


def test_input_shape_is_checked():
    with pytest.raises(ValueError, match=r"needs shape \(5, 4\), got \(5, 3\)"):
        tiny().set_input("x", np.ones((5, 3), np.float32))


def test_input_rows_are_checked():
    with pytest.raises(ValueError, match=r"needs shape \(5, 4\)"):
        tiny().set_input("x", np.ones((6, 4), np.float32))


def test_features_must_be_floats():
    with pytest.raises(TypeError, match="needs floats"):
        tiny().set_input("x", np.ones((5, 4), np.int32))


def test_labels_must_be_integers():
    with pytest.raises(TypeError, match="holds classes"):
        tiny().set_input("label", np.ones(5, np.float32))


def test_float32_is_bound_without_a_copy():
    m = tiny()
    x = np.ones((5, 4), np.float32)
    m.set_input("x", x)
    assert m.shares_memory("x", x)
    m.set_input("label", np.zeros(5, int))
    m.init_params(1)
    before = m.forward().copy()
    x *= 2  # the model reads the array itself
    assert not np.allclose(before, m.forward())


def test_float64_and_fortran_order_are_copied_with_the_same_result():
    m = tiny()
    x = np.random.default_rng(0).random((5, 4)).astype(np.float32)
    m.set_inputs(x=x, label=np.zeros(5, int))
    m.init_params(1)
    want = m.forward()
    for other in [x.astype(np.float64), np.asfortranarray(x)]:
        m.set_input("x", other)
        assert not m.shares_memory("x", other)
        assert np.allclose(m.forward(), want)


def test_binding_a_1gib_array_copies_nothing():
    src = """
graph { vertex x: f32[256]; vertex label: class[2]; }
layer L(i: int, o: int) { param W: f32[i, o] = glorot; gather(sum);
  apply_vertex(v, a) { return a @ W; } }
model M { out = L(256, 2)(x); loss = cross_entropy(out, label); }
"""
    n = 1 << 20
    m = saga.compile(src)
    m.set_graph(np.arange(n - 1), np.arange(1, n), n)
    x = np.ones((n, 256), np.float32)  # 1 GiB, touched
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    m.set_input("x", x)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak
    assert m.shares_memory("x", x)
    assert grown < 0.05 * peak, "peak RSS grew by %d KiB of %d" % (grown, peak)


# Forward.
def test_forward_shape(cora):
    m = gcn(cora)
    m.init_params(0)
    out = m.forward()
    assert out.shape == (2708, 7) and out.dtype == np.float32


def test_forward_needs_a_graph():
    with pytest.raises(ValueError, match="set the graph"):
        saga.compile(TINY).forward()


# Training.
def test_readme_example_prints_what_it_says():
    text = open(os.path.join(ROOT, "README.md")).read()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert len(code.strip().splitlines()) <= 15
    scope = {}
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(code, scope)
    finally:
        os.chdir(cwd)
    assert scope["history"][-1]["test_acc"] >= 0.80
    # The block's comment states what it prints.
    stated = re.search(r"# (0\.\d{3})\s*$", code, re.M).group(1)
    assert "%.3f" % scope["history"][-1]["test_acc"] == stated, (
        "README's Python block says %s; it prints %.3f"
        % (stated, scope["history"][-1]["test_acc"]))


def test_fit_history(cora):
    h = gcn(cora).fit(cora["train"], cora["val"], cora["test"], epochs=5,
                      progress=False)
    assert [e["epoch"] for e in h] == [1, 2, 3, 4, 5]
    assert set(h[0]) == {"epoch", "loss", "train_acc", "val_acc", "test_acc",
                         "seconds"}


def test_fit_progress_callback(cora):
    seen = []
    gcn(cora).fit(cora["train"], cora["val"], cora["test"], epochs=3,
                  progress=seen.append)
    assert [e["epoch"] for e in seen] == [1, 2, 3]


def test_fit_needs_labels():
    m = tiny()
    m.set_input("x", np.ones((5, 4), np.float32))
    with pytest.raises(ValueError, match="labels"):
        m.fit([0], [1], [2], epochs=1)


def test_fit_bad_optimizer(cora):
    with pytest.raises(ValueError, match="'adam' or 'sgd'"):
        gcn(cora).fit(cora["train"], cora["val"], cora["test"], epochs=1,
                      optimizer="rmsprop")


def test_fit_split_ids_in_range(cora):
    with pytest.raises(ValueError, match=r"train\[0\] = 5000"):
        gcn(cora).fit([5000], cora["val"], cora["test"], epochs=1)


def test_fit_sgd_lowers_the_loss(cora):
    h = gcn(cora).fit(cora["train"], cora["val"], cora["test"], epochs=30,
                      optimizer="sgd", lr=0.2, progress=False)
    assert h[-1]["loss"] < h[0]["loss"]


def test_fit_patience_stops_early(cora):
    h = gcn(cora).fit(cora["train"], cora["val"], cora["test"], epochs=300,
                      patience=5, progress=False)
    assert len(h) < 300


def test_fit_log_and_resume(cora, tmp_path):
    log, ckpt = tmp_path / "run.jsonl", tmp_path / "run.ckpt"
    full = gcn(cora)
    full.fit(cora["train"], cora["val"], cora["test"], epochs=10,
             progress=False)
    part = gcn(cora)
    part.fit(cora["train"], cora["val"], cora["test"], epochs=4, log=log,
             checkpoint=ckpt, progress=False)
    rest = gcn(cora)
    rest.fit(cora["train"], cora["val"], cora["test"], epochs=10, log=log,
             checkpoint=ckpt, resume=True, progress=False)
    assert [json.loads(l)["epoch"] for l in open(log)] == list(range(1, 11))
    for name, value in full.params().items():
        assert np.array_equal(value, rest.params()[name])


def test_fit_mini_batches(cora):
    m = saga.compile(SAGE)
    m.set_graph(cora["src"], cora["dst"], cora["num_vertices"])
    m.set_inputs(x=saga.row_normalize(cora["x"]), label=cora["y"])
    h = m.fit(cora["train"], cora["val"], cora["test"], epochs=30,
              batch_size=64, fanout=[10, 25], progress=False)
    assert h[-1]["test_acc"] > 0.7
    assert m.forward().shape == (2708, 7)  # the whole graph bound again


def test_fanout_needs_batch_size(cora):
    with pytest.raises(ValueError, match="fanout needs batch_size"):
        gcn(cora).fit(cora["train"], cora["val"], cora["test"], epochs=1,
                      fanout=[10, 25])


def test_fanout_per_hop(cora):
    with pytest.raises(saga.Error, match="give one fan-out per hop"):
        gcn(cora).fit(cora["train"], cora["val"], cora["test"], epochs=1,
                      batch_size=64, fanout=[10])


# Parameters.
def test_params_round_trip(cora):
    a = gcn(cora)
    a.init_params(7)
    b = gcn(cora)
    for name, value in a.params().items():
        b.set_param(name, value)
    assert np.array_equal(a.forward(), b.forward())


def test_init_params_is_seeded():
    a, b = tiny(), tiny()
    a.init_params(5)
    b.init_params(5)
    assert all(np.array_equal(v, b.params()[k]) for k, v in a.params().items())


def test_set_param_shape_is_checked():
    with pytest.raises(saga.Error, match=r"needs \[4, 2\] f32"):
        tiny().set_param("Lin#0.W", np.ones((2, 4)))


def test_set_param_unknown_name():
    with pytest.raises(saga.Error, match="no parameter 'W'"):
        tiny().set_param("W", np.ones((4, 2)))


# Named outputs: intermediate vertex values (embeddings).
def test_named_output_is_the_hidden_layer(cora):
    m = saga.compile(SAGE, outputs=["h"])
    m.set_graph(cora["src"], cora["dst"], cora["num_vertices"])
    x = saga.row_normalize(cora["x"])
    m.set_inputs(x=x, label=cora["y"])
    m.init_params(3)
    values = m.forward(outputs=True)
    assert sorted(values) == ["h", "out"]
    assert np.array_equal(values["out"], m.forward())
    # GraphSAGE-mean's first layer, in NumPy (dropout is off in inference).
    p = m.params()
    n = cora["num_vertices"]
    src, dst = cora["src"], cora["dst"]
    mean = np.zeros((n, x.shape[1]), np.float64)
    np.add.at(mean, dst, x[src])
    deg = np.bincount(dst, minlength=n)
    mean /= np.maximum(deg, 1)[:, None]
    h = np.maximum(x @ p["SAGEConv#0.Ws"] + mean @ p["SAGEConv#0.Wn"]
                   + p["SAGEConv#0.b"], 0)
    assert values["h"].shape == (n, 16)
    np.testing.assert_allclose(values["h"], h, atol=1e-5)


def test_named_output_unknown_name_lists_the_values():
    with pytest.raises(saga.Error,
                       match=r"no value named 'emb' to output; its vertex "
                             r"values: h, label, out, x"):
        saga.compile(SAGE, outputs="emb")


def test_named_output_must_be_a_vertex_value():
    with pytest.raises(saga.Error, match=r"'loss' is not a vertex value"):
        saga.compile(SAGE, outputs=["loss"])


def test_graph_too_large_for_memory_is_refused(monkeypatch):
    monkeypatch.setenv("SAGA_AVAILABLE_MEMORY", "1G")
    m = saga.compile(TINY)
    with pytest.raises(ValueError, match=r"a graph of 2000000000 vertices and "
                       r"1 edges needs 44\.7 GiB; 1\.00 GiB is available"):
        m.set_graph(np.array([0]), np.array([1]), 2000000000)


# Gradients without an update.
def test_loss_and_grad_matches_a_central_difference():
    m = tiny()
    m.set_inputs(x=np.random.default_rng(3).normal(size=(5, 4)),
                 label=np.array([0, 1, 1, 0, 1]))
    m.init_params(7)
    loss, grads = m.loss_and_grad()
    assert sorted(grads) == sorted(m.params())
    W = m.params()["Lin#0.W"].astype(np.float64)
    assert grads["Lin#0.W"].shape == W.shape
    # d loss / d W[1, 0] against (f(W + h) - f(W - h)) / 2h.
    h = 1e-2
    values = []
    for s in (1, -1):
        w = W.copy()
        w[1, 0] += s * h
        m.set_param("Lin#0.W", w)
        values.append(m.loss_and_grad()[0])
    m.set_param("Lin#0.W", W)
    assert m.loss_and_grad()[0] == loss  # nothing was updated
    assert abs((values[0] - values[1]) / (2 * h) - grads["Lin#0.W"][1, 0]) < 1e-3


def test_loss_and_grad_mask():
    m = tiny()
    m.set_inputs(x=np.ones((5, 4)), label=np.array([0, 1, 1, 0, 1]))
    m.init_params(7)
    whole, _ = m.loss_and_grad()
    parts = [m.loss_and_grad(mask=[v])[0] for v in range(5)]
    assert abs(whole - sum(parts) / 5) < 1e-6
    with pytest.raises(ValueError, match=r"mask\[0\] = 5 is out of range"):
        m.loss_and_grad(mask=[5])
    with pytest.raises(ValueError, match="mask is empty"):
        m.loss_and_grad(mask=np.array([], dtype=np.int64))


def test_compile_bad_device():
    with pytest.raises(ValueError, match="device must be 'cpu' or 'cuda'"):
        saga.compile(TINY, device="tpu")
    assert saga.compile(TINY).device.startswith("CPU")


MUTAG = os.path.join(ROOT, "examples", "data", "MUTAG")
GIN_MUTAG = os.path.join(ROOT, "examples", "gin-mutag.saga")


def test_cross_validate_graphs():
    seen = []
    r = saga.cross_validate(GIN_MUTAG, MUTAG, folds=2, epochs=3,
                            batch_size=64, lr_step=2, progress=seen.append)
    assert [(e["fold"], e["epoch"]) for e in r["history"]] == [
        (0, 1), (0, 2), (0, 3), (1, 1), (1, 2), (1, 3)]
    assert seen == r["history"]
    assert len(r["mean_test_acc"]) == 3 and 1 <= r["best_epoch"] <= 3
    means = [np.mean([e["test_acc"] for e in r["history"]
                      if e["epoch"] == k]) for k in (1, 2, 3)]
    assert np.allclose(means, r["mean_test_acc"])
    assert r["mean_test_acc"][r["best_epoch"] - 1] == max(r["mean_test_acc"])


def test_cross_validate_errors():
    with pytest.raises(saga.Error, match="cross-validation needs 2 to 188 folds"):
        saga.cross_validate(GIN_MUTAG, MUTAG, folds=1, epochs=1)
    with pytest.raises(saga.Error, match="features per vertex; MUTAG has 7"):
        saga.cross_validate(GCN, MUTAG, folds=2, epochs=1)
    with pytest.raises(saga.Error, match="holds one NAME_graph_indicator.txt; found none"):
        saga.cross_validate(GIN_MUTAG, CORA, folds=2, epochs=1)


def test_set_graph_offsets_are_checked():
    m = saga.compile(TINY)
    with pytest.raises(ValueError, match="graph offsets must run from 0"):
        m.set_graph([0, 1], [1, 2], 3, graph_offsets=[0, 2])
    m.set_graph([0, 1], [1, 2], 3, graph_offsets=[0, 1, 3])


def test_split_edges_and_metrics(cora, tmp_path):
    d = cora
    s = saga.split_edges(d["src"], d["dst"], d["num_vertices"], seed=1)
    assert s["train_pos"].shape == (4488, 2) and s["test_neg"].shape == (527, 2)
    train = set(map(tuple, s["train_pos"]))
    assert not train & set(map(tuple, s["test_pos"]))
    edges = set(zip(np.minimum(d["src"], d["dst"]), np.maximum(d["src"], d["dst"])))
    assert not edges & set(map(tuple, s["val_neg"]))
    path = tmp_path / "split.npz"
    saga.save_edge_split(path, s)
    back = saga.load_edge_split(path, d["num_vertices"])
    assert (back["val_pos"] == s["val_pos"]).all()
    # The file sagac split-edges writes, seed for seed.
    z = np.load(path)
    assert (z["test_pos"] == s["test_pos"]).all()
    # A leak is refused, naming the array and row.
    leaky = dict(s)
    leaky["test_pos"] = np.concatenate([s["test_pos"], s["train_pos"][:1]])
    saga.save_edge_split(tmp_path / "leak.npz", leaky)
    with pytest.raises(saga.Error, match="test_pos row 527: .* is also train_pos row 0"):
        saga.load_edge_split(tmp_path / "leak.npz", d["num_vertices"])
    with pytest.raises(ValueError, match="out of range"):
        saga.split_edges([0, 5], [1, 2], 3)
    assert saga.roc_auc([0.35, 0.8], [0.1, 0.4]) == 0.75
    assert saga.hits_at_k([4.5, 9, 4, 1], [1, 2, 3, 4, 5], 2) == 0.5
    assert abs(saga.mrr([0.9, 0.5], [[0.1, 0.2], [0.6, 0.5]]) - (1 + 1 / 2.5) / 2) < 1e-12


LINK_SAGE = os.path.join(ROOT, "examples", "graphsage-link.saga")


def test_fit_links_on_cora(cora):
    """A link predictor from Python: the split's message graph replaces the
    graph; one dict per epoch with the metrics."""
    s = saga.split_edges(cora["src"], cora["dst"], cora["num_vertices"],
                         seed=1)
    m = saga.compile(LINK_SAGE)
    m.set_graph(cora["src"], cora["dst"], cora["num_vertices"])
    m.set_inputs(x=saga.row_normalize(cora["x"]))
    h = m.fit_links(s, epochs=40, lr=0.01, seed=0, progress=False)
    assert [e["epoch"] for e in h] == list(range(1, 41))
    assert h[-1]["loss"] < h[0]["loss"]
    assert max(e["val_auc"] for e in h) > 0.85
    assert m._impl.num_edges == 2 * len(s["train_pos"])  # held-out edges gone
    assert set(h[0]) >= {"test_auc", "test_hits", "test_mrr", "batches"}
    # The loss's pairs from Python: an edge scored 1, a non-edge 0.
    loss, grads = m.loss_and_grad(pairs=([0, 1], [633, 2], [1, 0]))
    assert loss > 0 and sorted(grads) == sorted(m.params())
    with pytest.raises(ValueError, match="labels are 0 or 1"):
        m.loss_and_grad(pairs=([0], [633], [0.5]))
    with pytest.raises(ValueError, match="the split has no 'test_neg'"):
        m.fit_links({k: v for k, v in s.items() if k != "test_neg"})


RGCN = os.path.join(ROOT, "examples", "rgcn.saga")


def typed_graph(seed=0):
    """400 vertices with 9 in-edges each, each edge of one of 3 relations;
    a vertex's class is the relation most of its in-edges carry (ties to
    the lowest). The features are small noise and a constant: only the edge
    types tell the class."""
    rng = np.random.default_rng(seed)
    n = 400
    dst = np.repeat(np.arange(n), 9)
    src = rng.integers(0, n, len(dst))
    kind = rng.integers(0, 3, len(dst))
    counts = np.zeros((n, 3), int)
    np.add.at(counts, (dst, kind), 1)
    y = counts.argmax(axis=1).astype(np.int32)
    x = (0.1 * rng.normal(size=(n, 16))).astype(np.float32)
    x[:, 0] = 1.0
    rel = np.eye(3, dtype=np.float32)[kind]
    return src, dst, n, x, y, rel


def test_rgcn_learns_what_only_edge_types_tell():
    src, dst, n, x, y, rel = typed_graph()
    ids = np.arange(n)
    train, val, test = ids[:240], ids[240:320], ids[320:]

    def fit(source, **inputs):
        m = saga.compile(source)
        m.set_graph(src, dst, n)
        m.set_inputs(x=x, label=y, **inputs)
        return m.fit(train, val, test, epochs=200, lr=0.02, progress=False)

    typed = fit(RGCN, rel=rel)
    assert typed[-1]["test_acc"] > 0.9
    # The same model with every edge of relation 0: the classes are
    # invisible (about 1/3 plus the majority class's share).
    blind = fit(RGCN, rel=np.eye(3, dtype=np.float32)[np.zeros(len(src), int)])
    assert max(e["test_acc"] for e in blind) < 0.6
    with pytest.raises(ValueError):
        m = saga.compile(RGCN)
        m.set_graph(src, dst, n)
        m.set_inputs(rel=rel[:-1])  # one row short
