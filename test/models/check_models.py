"""Every example model (examples/*.saga) against its float64 reference
(references.py over autograd.py): the loss and the gradient of every
parameter of one training step, and the forward pass's prediction, at -O0
and -O2, on the CPU and (with --standin) on the emulated GPU, on a random
graph with a hub, vertices that only send and isolated vertices, repeated
edges and self loops in the input. Dropout rates are set to 0 and Cora's
1433 input features narrowed to 24 in the model's text (the reference has no dropout; the dropout masks are tested in
TrainingDropoutTest.cpp).

Bounds (float32 against float64): the loss to 2e-6 relative; each gradient
and the prediction to 2e-5 of the tensor's largest magnitude, element by
element (the largest differences measured: 3.8e-7 and 3.1e-6, the latter GIN with batch norm; a teleport
of 0.11 instead of APPNP's 0.1, or LeakyReLU's slope 0.3 instead of 0.2 in
GATv2's gradient, fail by 1e-2 and more). Run by ctest as `model-references`:
  PYTHONPATH=build/python python3 test/models/check_models.py \
      --examples examples [--standin build/standin/libsaga-cuda-standin.so]
"""
import argparse
import os
import re
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from autograd import T, backward  # noqa: E402
from references import MODELS, Graph  # noqa: E402

LOSS_RTOL = 2e-6
TENSOR_TOL = 2e-5


def random_graph(seed):
    """80 vertices: 0..59 receive and send, 60..69 only send, 70..79 are
    isolated; vertex 0 is a hub with 40 extra in-edges; vertex 3 has two
    input self loops; 1 -> 2 appears three times."""
    rng = np.random.default_rng(seed)
    src = list(rng.integers(0, 70, 200)) + list(rng.integers(1, 70, 40))
    dst = list(rng.integers(0, 60, 200)) + [0] * 40
    src += [3, 3, 5, 1, 1, 1]
    dst += [3, 3, 5, 2, 2, 2]
    return np.array(src), np.array(dst), 80


def without_dropout(text):
    """Every `dropout(value, rate)` with rate 0.0 (the rate is the call's
    last argument: its own parentheses matched, not the value's) and every
    attention `dropout = rate` with 0.0."""
    out, at = [], 0
    for m in re.finditer(r"\bdropout\(", text):
        depth, i = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        comma = text.rindex(",", m.end(), i)
        out.append(text[at:comma] + ", 0.0)")
        at = i
    text = "".join(out) + text[at:]
    return re.sub(r"dropout\s*=\s*(\d*\.\d+|\d+)", "dropout = 0.0", text)


def narrowed(text):
    """Cora's 1433 input features (every literal 1433 in the file: the
    input's declaration and the first layers' widths) as 24, so that the
    -O0 plans compile and run in seconds."""
    return re.sub(r"\b1433\b", "24", text)


def declared(text, what):
    """The width of `vertex x: f32[W]` or the count of `class[C]`."""
    pattern = {"x": r"vertex\s+x\s*:\s*f32\[(\d+)\]",
               "label": r"vertex\s+label\s*:\s*class\[(\d+)\]"}[what]
    return int(re.search(pattern, text).group(1))


def compare(name, got, ref, tol):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    if got.shape != ref.shape:
        return f"{name}: shape {got.shape}, reference {ref.shape}", np.inf
    scale = max(np.abs(ref).max(initial=0.0), 1e-30)
    err = np.abs(got - ref).max(initial=0.0) / scale
    return (None if err <= tol else
            f"{name}: max |saga - ref| / max |ref| = {err:.3g} > {tol}"), err


# A model with graph readouts (sum_nodes, ...) runs on the random graph cut
# into a batch of graphs of these vertex ranges (the hub in the first, one
# graph of a single vertex, the send-only and isolated vertices in the
# last); its loss takes each graph's first vertex.
GRAPH_OFFSETS = [0, 10, 25, 26, 45, 60, 80]


def check(saga, model, text, device, opt, seed):
    src, dst, n = random_graph(seed)
    rng = np.random.default_rng(seed + 1)
    x = rng.normal(size=(n, declared(text, "x"))).astype(np.float32)
    link = "pair_bce(" in text
    if link:
        # Scored pairs in place of labels: the hub, a send-only and an
        # isolated vertex, a vertex in many pairs, a repeated pair and a
        # pair both ways; labels 0 and 1.
        ps = np.concatenate([[0, 0, 65, 75, 7, 7, 7], rng.integers(0, n, 40)])
        pd = np.concatenate([[5, 75, 3, 2, 8, 8, 9], rng.integers(0, n, 40)])
        pd = np.where(pd == ps, (pd + 1) % n, pd)
        label = (ps, pd, rng.integers(0, 2, len(ps)).astype(np.float32))
    else:
        label = rng.integers(0, declared(text, "label"), n)
    mask = np.concatenate([[0, 3, 65, 75], rng.choice(
        np.setdiff1d(np.arange(n), [0, 3, 65, 75]), 26, replace=False)])
    offsets = None
    if re.search(r"\b(sum|mean|max|min)_nodes\(", text):
        offsets = np.array(GRAPH_OFFSETS)
        mask = offsets[:-1]

    m = saga.compile(text, opt_level=opt, device=device)
    m.set_graph(src, dst, n, graph_offsets=offsets)
    inputs = {"x": x} if link else {"x": x, "label": label}
    rel = re.search(r"edge\s+rel\s*:\s*f32\[(\d+)\]", text)
    if rel:  # typed edges (R-GCN): a one-hot relation per edge
        kinds = rng.integers(0, int(rel.group(1)), len(src))
        inputs["rel"] = np.eye(int(rel.group(1)), dtype=np.float32)[kinds]
    m.set_inputs(**inputs)
    m.init_params(seed)
    params = m.params()
    loss, grads = (m.loss_and_grad(pairs=label) if link
                   else m.loss_and_grad(mask=mask))
    pred = m.forward()

    g = Graph(src, dst, n, m.self_loops, offsets)
    if rel:
        g.rel = inputs["rel"].astype(np.float64)
    P = {k: T(v.astype(np.float64)) for k, v in params.items()}
    out, ref_loss = MODELS[model](g, x.astype(np.float64), label, mask, P)
    backward(ref_loss)

    failures, worst = [], 0.0
    loss_err = abs(loss - float(ref_loss.value)) / max(1.0, abs(ref_loss.value))
    if loss_err > LOSS_RTOL:
        failures.append(f"loss {loss:.9g}, reference {float(ref_loss.value):.9g}"
                        f" (relative {loss_err:.3g} > {LOSS_RTOL})")
    if sorted(grads) != sorted(params):
        failures.append(f"gradients of {sorted(grads)}, parameters "
                        f"{sorted(params)}")
    for k in sorted(params):
        ref_grad = P[k].grad if P[k].grad is not None else np.zeros(P[k].shape)
        why, err = compare("d loss / d " + k, grads.get(k, np.zeros(0)),
                           ref_grad, TENSOR_TOL)
        worst = max(worst, err)
        if why:
            failures.append(why)
    why, err = compare("prediction", pred, out.value, TENSOR_TOL)
    if why:
        failures.append(why)
    return failures, loss_err, max(worst, err)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--examples", required=True, help="the examples folder")
    ap.add_argument("--standin", default="",
                    help="the stand-in CUDA driver: also run on the "
                         "emulated GPU")
    ap.add_argument("--models", default=",".join(MODELS))
    args = ap.parse_args()
    devices = ["cpu"]
    if args.standin:
        for v in ("SAGA_CUDA_DRIVER", "SAGA_NVRTC", "SAGA_CUBLAS"):
            os.environ[v] = args.standin
        devices.append("cuda")
    import saga

    failed = 0
    print(f"{'model':10} {'device':6} {'opt':3} {'loss rel err':>12} "
          f"{'worst tensor err':>16} {'time':>8}")
    for model in args.models.split(","):
        path = os.path.join(args.examples, model + ".saga")
        if not os.path.exists(path):  # a model of this folder's own
            path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "Inputs", model + ".saga")
        with open(path) as f:
            text = narrowed(without_dropout(f.read()))
        for device in devices:
            for opt in (0, 2):
                start = time.time()
                failures, loss_err, worst = check(saga, model, text, device,
                                                  opt, seed=11)
                print(f"{model:10} {device:6} -O{opt} {loss_err:12.2e} "
                      f"{worst:16.2e} {time.time() - start:6.1f} s "
                      f"{'FAIL' if failures else 'ok'}", flush=True)
                for why in failures:
                    print("    " + why)
                failed += bool(failures)
    if failed:
        print(f"{failed} run(s) differ from the float64 reference")
        return 1
    print("every model matches its float64 reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
