#!/usr/bin/env python3
"""Regenerates hidden.txt and logits.txt (README.md beside this file).

Usage: generate.py [CORA_DIR] [OUT_DIR]   (defaults: examples/data/cora, this folder)

The 2-layer GCN forward pass on Cora with the closed-form weights of README.md,
in float64 (numpy). Also runs the same computation in float32 (numpy, in
another order: dense products) and prints its largest difference from the
float64 logits: how close a float32 program can be expected to come.
"""
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.normpath(os.path.join(here, "..", "..", ".."))
cora = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "examples", "data", "cora")
out = sys.argv[2] if len(sys.argv) > 2 else here

meta = dict(line.split() for line in open(os.path.join(cora, "meta.txt")) if line.strip())
n, f = int(meta["num_nodes"]), int(meta["num_features"])
X = np.zeros((n, f))
for line in open(os.path.join(cora, "features.txt")):
    v, j, x = line.split()
    X[int(v), int(j)] = float(x)
A = np.zeros((n, n))
for line in open(os.path.join(cora, "edges.txt")):
    u, v = map(int, line.split())
    A[u, v] = A[v, u] = 1.0
s = X.sum(1, keepdims=True)
Xn = np.divide(X, s, out=np.zeros_like(X), where=s != 0)
A_hat = A + np.eye(n)
d = A_hat.sum(1)
A_hat = A_hat / np.sqrt(d)[:, None] / np.sqrt(d)[None, :]

i, j = np.meshgrid(np.arange(f), np.arange(16), indexing="ij")
W1 = ((i * 131 + j * 71 + 7) % 257 - 128) / 128.0
b1 = ((np.arange(16) * 37 + 11) % 29 - 14) / 128.0
i, j = np.meshgrid(np.arange(16), np.arange(7), indexing="ij")
W2 = ((i * 53 + j * 97 + 3) % 61 - 30) / 32.0
b2 = ((np.arange(7) * 19 + 5) % 13 - 6) / 64.0


def forward(dtype):
    t = lambda a: a.astype(dtype)
    H = np.maximum(t(A_hat) @ (t(Xn) @ t(W1)) + t(b1), 0)
    return H, t(A_hat) @ (H @ t(W2)) + t(b2)


H, logits = forward(np.float64)
_, logits32 = forward(np.float32)
for name, m in (("hidden.txt", H), ("logits.txt", logits)):
    with open(os.path.join(out, name), "w") as fh:
        for row in m:
            fh.write(" ".join("%.10e" % x for x in row) + "\n")
print("wrote hidden.txt and logits.txt; numpy float32 against float64: "
      "largest logit difference %.2e" % np.max(np.abs(logits32 - logits)))
