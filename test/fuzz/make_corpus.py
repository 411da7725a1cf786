#!/usr/bin/env python3
"""Writes the loader fuzzers' seed corpora (test/fuzz/corpus/<target>/):
small valid files of every format, the multi-file ones joined at
FuzzFiles.h's separator. Run from the repository root with Debian's python3
(NumPy) after a build: python3 test/fuzz/make_corpus.py build/bin/sagac"""
import gzip
import io
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

SEP = b"\n=====\n"
sagac = sys.argv[1]
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    d = os.path.join(root, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


PLANETOID = {
    "meta.txt": b"name tiny\nnum_nodes 5\nnum_edges 3\nnum_features 4\n"
                b"num_classes 3\nfeature_nnz 4\nfeature_values binary\n"
                b"num_train 2\nnum_val 1\nnum_test 1\n",
    "edges.txt": b"0 1\n0 4\n2 3\n",
    "features.txt": b"0 0 1\n0 3 1\n2 1 1\n4 2 1\n",
    "labels.txt": b"0\n1\n2\n-1\n1\n",
    "train.txt": b"0\n1\n", "val.txt": b"2\n", "test.txt": b"4\n"}
ORDER = ["meta.txt", "edges.txt", "features.txt", "labels.txt", "train.txt",
         "val.txt", "test.txt"]
put("planetoid", "tiny", SEP.join(PLANETOID[k] for k in ORDER))
floats = dict(PLANETOID)
floats["meta.txt"] = floats["meta.txt"].replace(b"binary", b"float32")
floats["features.txt"] = b"0 0 0.5\n0 3 1.25\n2 1 -3e-2\n4 2 7\n"
put("planetoid", "float-features", SEP.join(floats[k] for k in ORDER))

put("edgelist", "snap", b"# Directed graph\n# Nodes: 4 Edges: 4\n"
    b"0\t1\n1\t2\n2\t3\n3\t0\n")
put("edgelist", "spaces", b"% comment\n0 1\r\n\n 5  2\n3 3\n")
put("mtx", "general", b"%%MatrixMarket matrix coordinate pattern general\n"
    b"% comment\n4 4 3\n1 2\n2 3\n4 1\n")
put("mtx", "symmetric", b"%%MatrixMarket matrix coordinate real symmetric\n"
    b"3 3 3\n2 1 0.5\n3 1 -1\n3 3 2\n")


def npy(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


put("npy", "f32", npy(np.arange(12, dtype=np.float32).reshape(3, 4)))
put("npy", "i64", npy(np.array([3, -1, 7], dtype=np.int64)))
put("npy", "bool", npy(np.array([True, False, True])))
put("npy", "fortran", npy(np.asfortranarray(
    np.arange(6, dtype=np.float64).reshape(2, 3))))
put("npy", "big-endian", npy(np.arange(4, dtype=">i4")))

n = 5
arrays = dict(edge_index=np.array([[0, 0, 2], [1, 4, 3]]),
              x=np.eye(n, 4, dtype=np.float32), y=np.array([0, 1, 2, -1, 1]),
              train_mask=np.array([1, 1, 0, 0, 0], bool),
              val_mask=np.array([0, 0, 1, 0, 0], bool),
              test_mask=np.array([0, 0, 0, 0, 1], bool))
for name, save in [("stored", np.savez), ("deflated", np.savez_compressed)]:
    b = io.BytesIO()
    save(b, **arrays)
    put("npz", name, b.getvalue())
b = io.BytesIO()
np.savez(b, src=np.array([0, 1]), dst=np.array([1, 2]), x=np.ones((3, 2)),
         y=np.array([0, 1, 0]), train_idx=np.array([0]),
         valid_idx=np.array([1]), test_idx=np.array([2]))
put("npz", "src-dst-idx", b.getvalue())

# Datasets of many graphs: a TU folder (A, graph_indicator, graph_labels,
# node_labels, node_attributes; the last two optional) and its .npz.
tu = [b"1, 2\n2, 1\n2, 3\n3, 2\n4, 5\n5, 4\n", b"1\n1\n1\n2\n2\n",
      b"-1\n1\n", b"7\n3\n7\n5\n3\n", b"0.5, 1\n2, 3\n-1, 0\n4, 4\n1e-3, 2\n"]
put("tu", "small", SEP.join(tu))
put("tu", "no-node-files", SEP.join(tu[:3] + [b"", b""]))
b = io.BytesIO()
np.savez(b, graph_offsets=np.array([0, 3, 5]), src=np.array([0, 1, 3]),
         dst=np.array([1, 2, 4]), graph_labels=np.array([0, 1]),
         x=np.eye(5, 2, dtype=np.float32))
put("graphnpz", "offsets", b.getvalue())
b = io.BytesIO()
np.savez(b, graph_indicator=np.array([0, 0, 1, 1, 1]), src=np.array([0, 2]),
         dst=np.array([1, 4]), graph_labels=np.array([1, 0]))
put("graphnpz", "indicator", b.getvalue())

# Link prediction's split of a graph of 8 vertices.
b = io.BytesIO()
np.savez(b, train_pos=np.array([[0, 1], [1, 2], [2, 3]], dtype=np.int32),
         val_pos=np.array([[3, 4]]), val_neg=np.array([[0, 5]]),
         test_pos=np.array([[4, 5]]), test_neg=np.array([[0, 6]]),
         num_nodes=np.array([8]), undirected=np.array([1]))
put("edgesplit", "small", b.getvalue())

ogb = [b"5\n", b"0.5,1,0\n1,0,0\n0,0,1\n0,1,1\n1,1,1\n",
       b"0\n1\n2\n0\n1\n", b"0,1\n0,4\n2,3\n", b"0\n1\n", b"2\n", b"4\n"]
put("ogb", "plain", SEP.join(ogb))
put("ogb", "gzipped", SEP.join(gzip.compress(p) for p in ogb))
put("ogb", "no-count", SEP.join([b""] + ogb[1:]))

tmp = tempfile.mkdtemp()
try:
    folder = os.path.join(tmp, "tiny")
    os.makedirs(folder)
    for k, v in PLANETOID.items():
        open(os.path.join(folder, k), "wb").write(v)
    for p in [1, 2]:
        out = os.path.join(tmp, "tiny-%d.sgf" % p)
        subprocess.run([sagac, "convert", folder, out, "--intervals", str(p)],
                       check=True, stdout=subprocess.DEVNULL)
        put("sgf", "tiny-%d" % p, open(out, "rb").read())
    # corpus/sgf/version1-tiny-1 is tiny-1 as version 1 wrote it (no chunk
    # rows), kept so that the fuzzer reads that version too.
    model = os.path.join(tmp, "tiny.saga")
    open(model, "w").write(
        "graph { vertex x: f32[4]; vertex label: class[3]; }\n"
        "layer Lin(i: int, o: int) { param W: f32[i, o] = glorot;\n"
        "  param b: f32[o] = zeros; gather(sum);\n"
        "  apply_vertex(v, a) { return a @ W + b; } }\n"
        "model M { out = Lin(4, 3)(x); loss = cross_entropy(out, label); }\n")
    for opt in ["adam", "sgd"]:
        params = os.path.join(tmp, "p.txt")
        ckpt = os.path.join(tmp, "c.ckpt")
        subprocess.run([sagac, "train", model, "--data", folder, "--epochs",
                        "2", "--optimizer", opt, "--save-params", params,
                        "--checkpoint", ckpt, "--quiet"], check=True,
                       stdout=subprocess.DEVNULL)
        put("params", opt, open(params, "rb").read())
        put("checkpoint", opt, open(ckpt, "rb").read())
finally:
    shutil.rmtree(tmp)
