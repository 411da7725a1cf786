"""Graph-only files with NumPy vertex arrays: Matrix Market (.mtx) and
edge lists (SNAP's), with --features X.npy --labels Y.npy --split S.npz.

Usage: graph_only.py SAGAC MODEL PLANETOID_DIR OUT_DIR

1. Cora as a general .mtx, a symmetric .mtx (each edge once, lower
   triangle), a SNAP edge list (comments, tabs), and each of them
   converted to a Saga graph file (sagac convert), train to the Planetoid
   folder's parameters (the symmetric matrix lists an edge's two
   directions next to each other, as the folder does).
2. 22 malformed Matrix Market files and 21 malformed edge lists or
   arrays each fail with one line naming the file (and line).
"""
import os
import shutil
import sys

import numpy as np

from checks import Planetoid, check, finish, params, run as run_sagac

sagac, model, planetoid, out_dir = sys.argv[1:5]
shutil.rmtree(out_dir, ignore_errors=True)
os.makedirs(out_dir)
out = lambda name: os.path.join(out_dir, name)
run = lambda args, expect=0: run_sagac(sagac, args, expect)

cora = Planetoid(planetoid)
n, f = cora.n, cora.f
x, y, pairs = cora.dense(), np.array(cora.labels), cora.pairs
np.save(out("x.npy"), x)
np.save(out("y.npy"), y)
np.savez(out("split.npz"), **{k + "_idx": np.array(v)
                              for k, v in cora.split.items()})
ARRAYS = ["--features", out("x.npy"), "--labels", out("y.npy"), "--split",
          out("split.npz")]

general = ["%%MatrixMarket matrix coordinate pattern general",
           "% Cora, both directions", "%d %d %d" % (n, n, 2 * len(pairs))]
for u, v in pairs:
    general += ["%d %d" % (u + 1, v + 1), "%d %d" % (v + 1, u + 1)]
open(out("cora.mtx"), "w").write("\n".join(general) + "\n")
# Symmetric: the lower triangle, one entry per edge; Saga adds i -> j then
# j -> i, so an edge listed as (u, v) with u > v comes out as the folder's.
sym = ["%%MatrixMarket matrix coordinate real symmetric",
       "%d %d %d" % (n, n, len(pairs))]
for u, v in pairs:
    i, j = max(u, v), min(u, v)
    sym.append("%d %d 1.0" % (i + 1, j + 1))
open(out("cora-sym.mtx"), "w").write("\n".join(sym) + "\n")
snap = ["# Directed graph (each unordered pair of nodes is saved twice)",
        "# FromNodeId\tToNodeId"]
for u, v in pairs:
    snap += ["%d\t%d" % (u, v), "%d\t%d" % (v, u)]
open(out("cora.txt"), "w").write("\n".join(snap) + "\n")

run(["train", model, "--data", planetoid, "--epochs", "5", "--quiet",
     "--save-params", out("planetoid.txt")])
want = params(out("planetoid.txt"))
for name in ["cora.mtx", "cora.txt"]:
    run(["train", model, "--data", out(name), "--epochs", "5", "--quiet",
         "--save-params", out(name + ".params")] + ARRAYS)
    got = params(out(name + ".params"))
    check(got == want, "%s trains the Planetoid folder's parameters" % name)
    run(["convert", out(name), out(name + ".sgf")] + ARRAYS)
    run(["train", model, "--data", out(name + ".sgf"), "--epochs", "5",
         "--quiet", "--save-params", out(name + ".sgf.params")])
    got = params(out(name + ".sgf.params"))
    check(got == want, "%s converted to .sgf trains the same parameters" % name)
# The symmetric matrix has the same edges; their order differs where u < v,
# so the parameters agree to rounding.
run(["train", model, "--data", out("cora-sym.mtx"), "--epochs", "5", "--quiet",
     "--save-params", out("sym.params")] + ARRAYS)


def numbers(path):
    """Every number of a parameter file (header lines skipped)."""
    values = []
    for line in open(path):
        if line[0] == "#" or line[0].isalpha():
            continue
        values += [float(t) for t in line.split()]
    return np.array(values)


a, b = numbers(out("planetoid.txt")), numbers(out("sym.params"))
check(a.shape == b.shape and np.abs(a - b).max() < 1e-4,
      "the symmetric .mtx trains the same parameters to 1e-4 (%.1e)" %
      np.abs(a - b).max())

# Malformed files.
def mtx(name, lines):
    open(out(name), "w").write("\n".join(lines) + "\n")
    return out(name)


H = "%%MatrixMarket matrix coordinate pattern general"
cases = [
    (mtx("m-header.mtx", ["%%MatrixMarket matrix coordinate", "2 2 1", "1 2"]), ":1: expected '%%MatrixMarket matrix coordinate FIELD SYMMETRY'"),
    (mtx("m-vector.mtx", ["%%MatrixMarket vector coordinate pattern general", "2 2 1", "1 2"]), ":1: a Matrix Market 'vector', not a matrix"),
    (mtx("m-array.mtx", ["%%MatrixMarket matrix array real general", "2 2", "1", "2", "3", "4"]), ":1: a dense 'array' matrix"),
    (mtx("m-complex.mtx", ["%%MatrixMarket matrix coordinate complex general", "2 2 1", "1 2 1 1"]), ":1: 'complex' entries"),
    (mtx("m-hermitian.mtx", ["%%MatrixMarket matrix coordinate real hermitian", "2 2 1", "2 1 1"]), ":1: 'hermitian' symmetry"),
    (mtx("m-no-size.mtx", [H, "% only comments"]), "has no size line"),
    (mtx("m-size-columns.mtx", [H, "2 2", "1 2"]), ":2: expected 3 columns, found 2"),
    (mtx("m-not-square.mtx", [H, "2 3 1", "1 2"]), ":2: a 2 x 3 matrix; an adjacency matrix is square"),
    (mtx("m-size-word.mtx", [H, "two 2 1", "1 2"]), ":2: "),
    (mtx("m-zero-size.mtx", [H, "0 0 0"]), ":2: "),
    (mtx("m-negative-nnz.mtx", [H, "2 2 -1"]), ":2: "),
    (mtx("m-row-zero.mtx", [H, "2 2 1", "0 2"]), ":3: "),
    (mtx("m-row-range.mtx", [H, "2 2 1", "3 1"]), ":3: "),
    (mtx("m-column-range.mtx", [H, "2 2 1", "1 5"]), ":3: "),
    (mtx("m-entry-columns.mtx", [H, "2 2 1", "1 2 3"]), ":3: expected 2 columns, found 3"),
    (mtx("m-value-missing.mtx", ["%%MatrixMarket matrix coordinate real general", "2 2 1", "1 2"]), ":3: expected 3 columns, found 2"),
    (mtx("m-value-word.mtx", ["%%MatrixMarket matrix coordinate real general", "2 2 1", "1 2 abc"]), ":3: "),
    (mtx("m-value-inf.mtx", ["%%MatrixMarket matrix coordinate real general", "2 2 1", "1 2 1e99"]), ":3: "),
    (mtx("m-too-many.mtx", [H, "2 2 1", "1 2", "2 1"]), ":4: more entries than the 1 of the size line (line 2)"),
    (mtx("m-too-few.mtx", [H, "2 2 3", "1 2", "2 1"]), "has 2 entries; its size line (line 2) declares 3"),
    (mtx("m-upper.mtx", ["%%MatrixMarket matrix coordinate pattern symmetric", "2 2 1", "1 2"]), ":3: entry (1, 2) above the diagonal of a symmetric matrix"),
    (mtx("m-more-vertices.mtx", [H, "3000 3000 1", "1 2"]), "has 3000 vertices but"),
]
edge_cases = [
    (mtx("e-columns.txt", ["0 1", "1 2 3"]), ":2: expected 2 columns, found 3"),
    (mtx("e-word.txt", ["0 1", "a 2"]), ":2: 'a' is not a non-negative integer"),
    (mtx("e-negative.txt", ["0 -1"]), ":1: '-1' is not a non-negative integer"),
    (mtx("e-range.txt", ["0 1", "2708 1"]), "has 2709 vertices but"),
    (mtx("e-empty.txt", ["# nothing"]), "has no edges"),
    (mtx("e-float.txt", ["0.5 1"]), ":1: '0.5' is not a non-negative integer"),
    (mtx("e-single.txt", ["5"]), ":1: expected 2 columns, found 1"),
    (mtx("e-huge.txt", ["99999999999 1"]), ":1: vertex id 99999999999 is out of range"),
    (mtx("e-hex.txt", ["0x1 2"]), ":1: '0x1' is not a non-negative integer"),
    (mtx("e-comma.txt", ["0,1"]), ":1: expected 2 columns, found 1"),
    (mtx("e-plus.txt", ["+1 2"]), ":1: "),
    (mtx("e-trailing.txt", ["0 1 # comment"]), ":1: expected 2 columns, found 4"),
    (mtx("e-tab-only.txt", ["1\t"]), ":1: expected 2 columns, found 1"),
    (mtx("e-unicode.txt", ["\uff11 2"]), ":1: "),
    (mtx("e-negative-src.txt", ["-3 1"]), ":1: '-3' is not a non-negative integer"),
    (mtx("e-exponent.txt", ["0 1e3"]), ":1: '1e3' is not a non-negative integer"),
    (mtx("e-blank.txt", ["", "   ", ""]), "has no edges"),
    (mtx("e-four.txt", ["0 1 2 3"]), ":1: expected 2 columns, found 4"),
    (mtx("e-double-minus.txt", ["--1 2"]), ":1: "),
    (mtx("e-far.txt", ["0 5000"]), "has 5001 vertices but"),
]
open(out("e-zero-bytes.txt"), "w").close()
edge_cases.append((out("e-zero-bytes.txt"), "is empty"))
missing = out("nothing.npy")
array_cases = [
    (["--features", missing], "nothing.npy: cannot read"),
    (["--labels", missing], "nothing.npy: cannot read"),
    (["--split", missing.replace(".npy", ".npz")], "nothing.npz: cannot read"),
]
np.save(out("x-int.npy"), x.astype(np.int32))
np.save(out("x-1d.npy"), x[:, 0])
np.save(out("y-short.npy"), y[:10])
np.savez(out("split-none.npz"), train_idx=np.arange(3))
np.savez(out("split-range.npz"), train_idx=[0, 9999], val_idx=[1], test_idx=[2])
array_cases += [
    (["--features", out("x-int.npy")], "x-int.npy: features must be a 2-D float array"),
    (["--features", out("x-1d.npy")], "x-1d.npy: features must be a 2-D float array"),
    (["--labels", out("y-short.npy")], "y-short.npy: must be 2708 integer classes"),
    (["--split", out("split-none.npz")], "no 'val_mask' or 'val_idx'"),
    (["--split", out("split-range.npz")], "'train_idx'[1]: vertex 9999 is out of range"),
]


def arrays_with(change):
    a = list(ARRAYS)
    for i in range(0, len(change), 2):
        a[a.index(change[i]) + 1] = change[i + 1]
    return a


checked = 0
for path, message in cases + edge_cases:
    text = run(["run", model, "--data", path] + ARRAYS, expect=1)
    lines = [l for l in text.splitlines() if not l.startswith("compiled ")]
    check(message in text and os.path.basename(path) in text and
          len(lines) == 1, "%s: %s" % (os.path.basename(path),
                                       lines[0] if lines else "(none)"))
    checked += 1
for change, message in array_cases:
    text = run(["run", model, "--data", out("cora.mtx")] + arrays_with(change),
               expect=1)
    lines = [l for l in text.splitlines() if not l.startswith("compiled ")]
    check(message in text and len(lines) == 1,
          "%s: %s" % (" ".join(change[1::2]), lines[0] if lines else "(none)"))
    checked += 1
# Without the arrays, and with arrays for a dataset that has its own.
text = run(["run", model, "--data", out("cora.mtx")], expect=1)
error = lambda t: [l for l in t.splitlines() if "error" in l][0]
check("cora.mtx holds only a graph: give its vertex arrays" in text, error(text))
text = run(["run", model, "--data", planetoid] + ARRAYS, expect=1)
check("has its own vertex arrays" in text, error(text))
check(len(cases) == 22, "%d malformed Matrix Market files (README says 22)" % len(cases))
check(len(edge_cases) == 21, "%d malformed edge lists (README says 21)" % len(edge_cases))
finish()
