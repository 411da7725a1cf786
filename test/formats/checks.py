"""Shared by the format and tool tests: checks that count failures, sagac
runs that must end with a given status, and Cora's Planetoid files read
as arrays (without NumPy: lists)."""
import os
import subprocess
import sys

failures = []


def check(ok, what):
    """Prints the outcome; a failure is counted for `finish`."""
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def finish():
    sys.exit(1 if failures else 0)


def run(sagac, args, expect=0):
    """sagac's output (stdout and stderr); exits when the status differs."""
    r = subprocess.run([sagac] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode != expect:
        sys.exit("FAIL: sagac %s exited %d:\n%s" % (" ".join(args),
                                                     r.returncode, r.stdout))
    return r.stdout


def params(path):
    """A parameter file's lines without its comments."""
    return [l for l in open(path) if l[0] != "#"]


class Planetoid:
    """A Planetoid folder's contents: n vertices, f features, `features`
    (row, column, value) triples, `labels`, undirected `pairs` (as listed:
    Saga reads pair i as edges 2i = u -> v and 2i + 1 = v -> u), `split`
    (train / val / test vertex lists)."""

    def __init__(self, folder):
        path = lambda name: os.path.join(folder, name)
        meta = dict(l.split() for l in open(path("meta.txt")))
        self.n, self.f = int(meta["num_nodes"]), int(meta["num_features"])
        self.features = [(int(r), int(c), v) for r, c, v in
                         (l.split() for l in open(path("features.txt")))]
        self.labels = [int(l) for l in open(path("labels.txt"))]
        self.pairs = [tuple(int(a) for a in l.split())
                      for l in open(path("edges.txt"))]
        self.split = {k: [int(l) for l in open(path(k + ".txt"))]
                      for k in ["train", "val", "test"]}

    def dense(self):
        """The features as an n x f float32 NumPy array."""
        import numpy as np
        x = np.zeros((self.n, self.f), dtype=np.float32)
        for r, c, v in self.features:
            x[r, c] = float(v)
        return x
