"""Writes a random graph as a Planetoid folder (see examples/data/README.md).

Usage: random_planetoid.py OUT_DIR VERTICES EDGES FEATURES CLASSES SEED
Undirected edges without loops or repeats; binary bag-of-words features
(each vertex 1 to 30 random columns, as Cora's); labels uniform;
train/val/test: the first 10%, the next 20% and the last 30% of the
vertices.
"""
import os
import random
import sys

out, n, m, f, c, seed = sys.argv[1], *map(int, sys.argv[2:7])
rng = random.Random(seed)
os.makedirs(out, exist_ok=True)
edges = set()
while len(edges) < m:
    u, v = rng.randrange(n), rng.randrange(n)
    if u != v:
        edges.add((min(u, v), max(u, v)))
with open(os.path.join(out, "edges.txt"), "w") as e:
    for u, v in sorted(edges):
        e.write("%d %d\n" % (u, v))
nnz = 0
with open(os.path.join(out, "features.txt"), "w") as x:
    for v in range(n):
        for j in sorted(rng.sample(range(f), rng.randint(1, min(30, f)))):
            x.write("%d %d 1\n" % (v, j))
            nnz += 1
with open(os.path.join(out, "labels.txt"), "w") as y:
    for v in range(n):
        y.write("%d\n" % rng.randrange(c))
splits = {"train": range(0, n // 10), "val": range(n // 10, 3 * n // 10),
          "test": range(n - 3 * n // 10, n)}
for name, ids in splits.items():
    with open(os.path.join(out, name + ".txt"), "w") as s:
        for v in ids:
            s.write("%d\n" % v)
with open(os.path.join(out, "meta.txt"), "w") as meta:
    meta.write("name random\nnum_nodes %d\nnum_edges %d\nnum_features %d\n"
               "num_classes %d\nfeature_nnz %d\nfeature_values binary\n"
               % (n, m, f, c, nnz))
