#!/usr/bin/env python3
"""Compares a GPU run's results with the CPU references of the bundle.

  compare.py npy GPU.npy CPU.npy TOL      a forward output: max |gpu - cpu|
                                          <= TOL * max(1, max |cpu|)
  compare.py params GPU CPU TOL           parameter files (sagac --save-params),
                                          each tensor by the same rule
  compare.py losses GPU.jsonl CPU.jsonl TOL [EPOCHS]
                                          per-epoch losses within TOL (the
                                          first EPOCHS epochs when given; the
                                          rest are reported, not checked)
  compare.py accuracy GPU.jsonl CPU.jsonl POINTS
                                          the last epoch's test accuracy within
                                          POINTS percentage points

Prints one line, "ok: ..." or "FAIL: ...", and exits 0 or 1 (2 on unreadable
input). The tolerances are the emulated CUDA tests' (test/unit/
CudaExecutorTest.cpp, test/tools/sagac-device-cuda.test).
"""
import json
import sys

import numpy as np


def fail(message, code=1):
    print("FAIL: " + message)
    sys.exit(code)


def read_params(path):
    """name -> array, from Saga's text parameter file (runtime/train/ParamsFile.h)."""
    params, name, shape, values = {}, None, None, []
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        fail("%s: %s" % (path, e), 2)
    for line in lines:
        tokens = [t for t in line.split() if t]
        # A '#' that starts a token begins a comment.
        for i, t in enumerate(tokens):
            if t.startswith("#"):
                tokens = tokens[:i]
                break
        if not tokens:
            continue
        if name is not None and len(values) < int(np.prod(shape)):
            values.extend(float(t) for t in tokens)
            continue
        if name is not None:
            params[name] = np.array(values, dtype=np.float64).reshape(shape)
        name, shape, values = tokens[0], [int(t) for t in tokens[1:]], []
    if name is not None:
        params[name] = np.array(values, dtype=np.float64).reshape(shape)
    return params


def close(gpu, cpu, tol):
    gpu = np.asarray(gpu, dtype=np.float64)
    cpu = np.asarray(cpu, dtype=np.float64)
    if gpu.shape != cpu.shape:
        return False, "shapes %s vs %s" % (gpu.shape, cpu.shape)
    if not np.all(np.isfinite(gpu)):
        return False, "%d non-finite values" % int(np.sum(~np.isfinite(gpu)))
    scale = max(1.0, float(np.max(np.abs(cpu))) if cpu.size else 1.0)
    worst = float(np.max(np.abs(gpu - cpu))) if cpu.size else 0.0
    return worst <= tol * scale, "max |diff| %.3g (bound %.3g)" % (worst, tol * scale)


def read_log(path):
    try:
        return [json.loads(line) for line in open(path) if line.strip()]
    except (OSError, ValueError) as e:
        fail("%s: %s" % (path, e), 2)


def main(argv):
    if len(argv) < 5:
        print(__doc__)
        sys.exit(2)
    kind, a, b, tol = argv[1], argv[2], argv[3], float(argv[4])
    if kind == "npy":
        try:
            ok, what = close(np.load(a), np.load(b), tol)
        except (OSError, ValueError) as e:
            fail(str(e), 2)
        (print("ok: " + what) if ok else fail(what))
    elif kind == "params":
        gpu, cpu = read_params(a), read_params(b)
        if sorted(gpu) != sorted(cpu) or not cpu:
            fail("parameter names differ: %s vs %s" % (sorted(gpu), sorted(cpu)))
        worst = []
        for name in sorted(cpu):
            ok, what = close(gpu[name], cpu[name], tol)
            if not ok:
                fail("%s: %s" % (name, what))
            worst.append("%s %s" % (name, what.split(" (")[0].replace("max |diff| ", "")))
        print("ok: %d tensors within %g of their largest magnitude (%s)"
              % (len(cpu), tol, ", ".join(worst)))
    elif kind == "losses":
        gpu, cpu = read_log(a), read_log(b)
        checked = int(argv[5]) if len(argv) > 5 else len(cpu)
        if len(gpu) != len(cpu) or not cpu:
            fail("epochs differ: %d vs %d" % (len(gpu), len(cpu)))
        worst_checked = worst_all = 0.0
        for i, (x, y) in enumerate(zip(gpu, cpu)):
            d = abs(x["loss"] - y["loss"])
            worst_all = max(worst_all, d)
            if i < checked:
                worst_checked = max(worst_checked, d)
                if d > tol:
                    fail("epoch %d: loss %.6f vs %.6f" % (x["epoch"], x["loss"], y["loss"]))
        print("ok: %d epochs, the first %d within %g (largest %.2e; over all "
              "epochs %.2e)" % (len(cpu), min(checked, len(cpu)), tol,
                                worst_checked, worst_all))
    elif kind == "accuracy":
        gpu, cpu = read_log(a), read_log(b)
        if not gpu or not cpu:
            fail("an empty log: %d and %d epochs" % (len(gpu), len(cpu)))
        key = "test_acc" if "test_acc" in cpu[-1] else "test_accuracy"
        if key not in cpu[-1] or key not in gpu[-1]:
            fail("no test accuracy in the logs' last lines", 2)
        d = abs(gpu[-1][key] - cpu[-1][key]) * 100
        msg = "test accuracy %.4f (GPU) vs %.4f (CPU): %.2f points" % (
            gpu[-1][key], cpu[-1][key], d)
        (print("ok: " + msg) if d <= tol else fail(msg))
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv)
