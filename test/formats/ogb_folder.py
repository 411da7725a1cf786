"""OGB node-property folders (sagac --data DIR, DIR/raw/edge.csv.gz, ...).

Usage: ogb_folder.py SAGAC MODEL PLANETOID_DIR OUT_DIR

1. Cora written as OGB unpacks a dataset (gzip CSV files under raw/ and
   split/<kind>/) trains to the Planetoid folder's parameters, bit for bit.
2. Malformed folders (26: bad lines, ranges, counts, splits, corrupt and
   truncated gzip streams) each fail with one line naming the file and,
   where there is one, the line.
"""
import gzip
import os
import shutil
import sys

from checks import Planetoid, check, finish, params, run as run_sagac

sagac, model, planetoid, out_dir = sys.argv[1:5]
shutil.rmtree(out_dir, ignore_errors=True)
os.makedirs(out_dir)
out = lambda *p: os.path.join(out_dir, *p)
run = lambda args, expect=0: run_sagac(sagac, args, expect)

# Cora's files as text, in OGB's layout.
cora = Planetoid(planetoid)
n, f = cora.n, cora.f
rows = [["0"] * f for _ in range(n)]
for r, c, v in cora.features:
    rows[r][c] = v
edges = []
for u, v in cora.pairs:
    edges += ["%d,%d" % (u, v), "%d,%d" % (v, u)]  # both ways, as Saga reads
good = {
    "raw/num-node-list.csv.gz": "%d\n" % n,
    "raw/node-feat.csv.gz": "".join(",".join(r) + "\n" for r in rows),
    "raw/edge.csv.gz": "\n".join(edges) + "\n",
    "raw/node-label.csv.gz": open(os.path.join(planetoid, "labels.txt")).read(),
}
for k, name in [("train", "train"), ("val", "valid"), ("test", "test")]:
    good["split/random/%s.csv.gz" % name] = open(
        os.path.join(planetoid, k + ".txt")).read()


def folder(name, changes=None, raw_bytes=None):
    """A folder of `good` with `changes` (path -> text, or None to drop)."""
    files = dict(good)
    files.update(changes or {})
    root = out(name)
    for path, text in files.items():
        if text is None:
            continue
        os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
        with gzip.open(os.path.join(root, path), "wt") as fh:
            fh.write(text)
    for path, data in (raw_bytes or {}).items():
        with open(os.path.join(root, path), "wb") as fh:
            fh.write(data)
    return root


# 1. The same parameters.
ogb = folder("cora-ogb")
run(["train", model, "--data", planetoid, "--epochs", "5", "--quiet",
     "--save-params", out("planetoid.txt")])
text = run(["train", model, "--data", ogb, "--epochs", "5", "--quiet",
            "--save-params", out("ogb.txt")])
same = params(out("planetoid.txt")) == params(out("ogb.txt"))
check(same, "the OGB folder trains the Planetoid folder's parameters")

# 2. Malformed folders.
feat = good["raw/node-feat.csv.gz"].splitlines(True)
labels = good["raw/node-label.csv.gz"].splitlines(True)
edge_gz = gzip.compress(good["raw/edge.csv.gz"].encode())
flipped = bytearray(edge_gz)
for i in range(len(flipped) // 2, len(flipped) // 2 + 16):
    flipped[i] ^= 0x5a
cases = [
    ("no-feat", {"raw/node-feat.csv.gz": None}, None, "node-feat.csv.gz: missing"),
    ("edge-sep", {"raw/edge.csv.gz": "0,633\n0;1862\n"}, None, "edge.csv.gz:2: '0;1862' is not a 'src,dst' pair"),
    ("edge-range", {"raw/edge.csv.gz": "0,633\n5,2708\n"}, None, "edge.csv.gz:2: vertex 2708 is out of range [0, 2708)"),
    ("edge-three", {"raw/edge.csv.gz": "0,1,2\n"}, None, "edge.csv.gz:1: '0,1,2' is not"),
    ("edge-negative", {"raw/edge.csv.gz": "-1,2\n"}, None, "edge.csv.gz:1: '-1,2' is not"),
    ("feat-width", {"raw/node-feat.csv.gz": "".join(feat[:3]) + "1,2\n" + "".join(feat[4:])}, None, "node-feat.csv.gz:4: 2 features; the rows before have 1433"),
    ("feat-word", {"raw/node-feat.csv.gz": "".join(feat[:9]) + "abc" + feat[9][1:] + "".join(feat[10:])}, None, "node-feat.csv.gz:10: value 1 is not a finite number"),
    ("feat-sep", {"raw/node-feat.csv.gz": feat[0].replace(",", ";", 1) + "".join(feat[1:])}, None, "node-feat.csv.gz:1: value 1 is followed by ';'"),
    ("feat-inf", {"raw/node-feat.csv.gz": "inf" + feat[0][1:] + "".join(feat[1:])}, None, "node-feat.csv.gz:1: value 1 is not a finite number"),
    ("count-more", {"raw/num-node-list.csv.gz": "3000\n"}, None, "node-feat.csv.gz:2708: the file ends after 2708 feature rows; num-node-list.csv.gz says 3000"),
    ("count-less", {"raw/num-node-list.csv.gz": "100\n"}, None, "node-feat.csv.gz:101: more feature rows than the 100 vertices"),
    ("count-word", {"raw/num-node-list.csv.gz": "many\n"}, None, "num-node-list.csv.gz:1: 'many' is not a vertex count"),
    ("count-empty", {"raw/num-node-list.csv.gz": ""}, None, "num-node-list.csv.gz:0: empty"),
    ("label-word", {"raw/node-label.csv.gz": "".join(labels[:4]) + "x\n" + "".join(labels[5:])}, None, "node-label.csv.gz:5: 'x' is not a class"),
    ("label-negative", {"raw/node-label.csv.gz": "-2\n" + "".join(labels[1:])}, None, "node-label.csv.gz:1: '-2' is not a class"),
    ("label-fewer", {"raw/node-label.csv.gz": "".join(labels[:-1])}, None, "node-label.csv.gz:2707: the file ends after 2707 labels"),
    ("label-more", {"raw/node-label.csv.gz": "".join(labels) + "1\n"}, None, "node-label.csv.gz:2709: more labels than the 2708 vertices"),
    ("no-split", {k: None for k in good if k.startswith("split/")}, None, "split: missing"),
    ("two-splits", {"split/time/train.csv.gz": "0\n"}, None, "2 splits (random, time)"),
    ("train-range", {"split/random/train.csv.gz": "0\n9999\n"}, None, "train.csv.gz:2: vertex 9999 is out of range"),
    ("train-word", {"split/random/train.csv.gz": "0\nsix\n"}, None, "train.csv.gz:2: 'six' is not a vertex id"),
    ("no-valid", {"split/random/valid.csv.gz": None}, None, "valid.csv.gz: missing"),
    ("overlap", {"split/random/valid.csv.gz": "0\n"}, None, "valid.csv.gz: vertex 0 is also in the train split"),
    ("unlabelled", {"raw/node-label.csv.gz": "nan\n" + "".join(labels[1:])}, None, "train.csv.gz: vertex 0 has no label (nan)"),
    ("corrupt-gzip", None, {"raw/edge.csv.gz": bytes(flipped)}, "edge.csv.gz: the gzip stream is corrupt"),
    ("truncated-gzip", None, {"raw/edge.csv.gz": edge_gz[:len(edge_gz) // 2]}, "edge.csv.gz: the gzip stream is corrupt or truncated"),
]
for name, changes, raw, message in cases:
    root = folder(name, changes, raw)
    text = run(["run", model, "--data", root], expect=1)
    lines = [l for l in text.splitlines() if not l.startswith("compiled ")]
    check(message in text and name in text and len(lines) == 1,
          "%s: %s" % (name, lines[0] if lines else "(no message)"))
check(len(cases) == 26, "%d malformed folders (README says 26)" % len(cases))

# 3. A feature file that inflates past the memory available (a gzip bomb, in
# small): refused while it grows, before the allocation that cannot fit.
bomb = folder("bomb", {"raw/node-feat.csv.gz":
                       ("0," * 1023 + "0\n") * 2048})
os.environ["SAGA_AVAILABLE_MEMORY"] = "4M"
text = run(["run", model, "--data", bomb], expect=1)
del os.environ["SAGA_AVAILABLE_MEMORY"]
check("node-feat.csv.gz:1025: 1048576 feature values so far, growing needs "
      "8.00 MiB; 4.00 MiB is available (SAGA_AVAILABLE_MEMORY)" in text,
      "a growing feature file is refused: " + text.strip().splitlines()[-1])
finish()
