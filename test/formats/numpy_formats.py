"""NumPy datasets and outputs (sagac --data X.npz, sagac run --output X.npy).

Usage: numpy_formats.py SAGAC MODEL PLANETOID_DIR OUT_DIR

1. Cora as the Planetoid folder and as .npz archives written by NumPy
   itself (np.savez with edge_index and masks; np.savez_compressed with
   src/dst, index splits and Fortran-order features) trains to identical
   parameters.
2. sagac run --output writes the model's output as .npy: NumPy reads it,
   one row per vertex, and its arg-max gives the accuracy sagac prints;
   with --reorder=degree the rows come back in the input's order.
3. Malformed archives and arrays (37) each fail with one located line
   naming the file (and the member, offset or key).
"""
import os
import re
import sys
import zipfile

import numpy as np

from checks import Planetoid, check, finish, params as param_lines, run as run_sagac

sagac, model, planetoid, out_dir = sys.argv[1:5]
os.makedirs(out_dir, exist_ok=True)
out = lambda name: os.path.join(out_dir, name)
run = lambda args, expect=0: run_sagac(sagac, args, expect)

# Cora from the Planetoid text form.
cora = Planetoid(planetoid)
n, f = cora.n, cora.f
x = cora.dense()
y = np.array(cora.labels, dtype=np.int64)
pairs = np.array(cora.pairs)
# Undirected edge i as edges 2i (u -> v) and 2i + 1 (v -> u), as Saga reads
# the folder.
src = np.empty(2 * len(pairs), dtype=np.int64)
dst = np.empty(2 * len(pairs), dtype=np.int64)
src[0::2], dst[0::2] = pairs[:, 0], pairs[:, 1]
src[1::2], dst[1::2] = pairs[:, 1], pairs[:, 0]
split = {k: np.array(v) for k, v in cora.split.items()}
masks = {}
for k, ids in split.items():
    m = np.zeros(n, dtype=bool)
    m[ids] = True
    masks[k + "_mask"] = m
np.savez(out("cora.npz"), edge_index=np.stack([src, dst]), x=x, y=y, **masks)
np.savez_compressed(out("cora_c.npz"), src=src.astype(np.int32),
                    dst=dst.astype(np.int32), x=np.asfortranarray(x),
                    y=y.astype(np.int32), train_idx=split["train"],
                    val_idx=split["val"], test_idx=split["test"])

# 1. The same parameters from every form.
params = {}
for name, data in [("folder", planetoid), ("npz", out("cora.npz")),
                   ("npz-compressed", out("cora_c.npz"))]:
    run(["train", model, "--data", data, "--epochs", "5", "--quiet",
         "--save-params", out(name + ".txt")])
    params[name] = param_lines(out(name + ".txt"))
check(params["folder"] == params["npz"] == params["npz-compressed"],
      "Planetoid, np.savez and np.savez_compressed train identical "
      "parameters")

# 2. Outputs.
text = run(["run", model, "--data", out("cora.npz"), "--params",
            out("npz.txt"), "--output", out("pred.npy")])
pred = np.load(out("pred.npy"))
check(pred.shape == (n, 7) and pred.dtype == np.float32,
      "the output is %s %s (2708 x 7 float32)" % (pred.shape, pred.dtype))
printed = float(re.search(r"accuracy: train [0-9.]+  val [0-9.]+  test "
                          r"([0-9.]+)", text).group(1))
mine = float((pred.argmax(1)[split["test"]] == y[split["test"]]).mean())
check(abs(printed - mine) < 1e-4,
      "the output's arg-max gives the printed test accuracy (%.4f, %.4f)" %
      (mine, printed))
run(["run", model, "--data", out("cora.npz"), "--params", out("npz.txt"),
     "--reorder=degree", "--output", out("pred-reordered.npy")])
again = np.load(out("pred-reordered.npy"))
check(np.allclose(pred, again, atol=1e-4),
      "with --reorder=degree the rows come back in the input's order "
      "(largest difference %.2e)" % np.abs(pred - again).max())
run(["run", model, "--data", out("cora.npz"), "--output",
     os.path.join(out_dir, "no-such-dir", "p.npy")], expect=1)
# Named vertex values of the model body: GCN's hidden layer `h`.
for order in ["none", "degree"]:
    run(["run", model, "--data", out("cora.npz"), "--params", out("npz.txt"),
         "--reorder=" + order, "--output", "h=" + out("h-%s.npy" % order),
         "--output", out("pred-%s.npy" % order)])
h, h2 = np.load(out("h-none.npy")), np.load(out("h-degree.npy"))
check(h.shape == (n, 16) and h.dtype == np.float32 and h.min() >= 0 and
      h.max() > 0, "--output h=FILE writes GCN's hidden layer: %s, after "
      "its ReLU (min %.3g)" % (h.shape, h.min()))
check(np.allclose(h, h2, atol=1e-4),
      "with --reorder=degree h's rows come back in the input's order")
check(np.array_equal(np.load(out("pred-none.npy")), pred),
      "beside a named value, --output FILE is the same prediction")
text = run(["run", model, "--data", out("cora.npz"), "--output",
            "emb=" + out("emb.npy")], expect=1)
check("no value named 'emb' to output; its vertex values: h, label, out, x"
      in text, "an unknown name lists the model's vertex values")

# 3. Malformed files.
good = dict(np.load(out("cora.npz")))
raw = open(out("cora.npz"), "rb").read()


def npy_bytes(array):
    import io
    b = io.BytesIO()
    np.save(b, array)
    return b.getvalue()


def archive(name, members, compress=False):
    """A .npz of raw member bytes (name -> bytes)."""
    path = out(name)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED if compress
                         else zipfile.ZIP_STORED) as z:
        for k, v in members.items():
            z.writestr(k, v)
    return path


def with_key(name, **changes):
    arrays = dict(good)
    for k, v in changes.items():
        if v is None:
            del arrays[k]
        else:
            arrays[k] = v
    return archive(name, {k + ".npy": npy_bytes(v) for k, v in arrays.items()})


def with_npy(name, key, data):
    members = {k + ".npy": npy_bytes(v) for k, v in good.items()}
    members[key + ".npy"] = data
    return archive(name, members)


x_npy = npy_bytes(good["x"])
header_end = x_npy.index(b"\n") + 1
cases = [
    # (file, what the message must say)
    (out("missing.npz"), "cannot open"),
]
with open(out("truncated.npz"), "wb") as fh:
    fh.write(raw[:len(raw) // 2])
cases.append((out("truncated.npz"), "no end of central directory"))
with open(out("short-dir.npz"), "wb") as fh:
    fh.write(raw[:-30] + raw[-22:])  # the directory cut short
cases.append((out("short-dir.npz"), "offset"))
corrupt = bytearray(raw)
corrupt[200] ^= 0xff
with open(out("flipped.npz"), "wb") as fh:
    fh.write(bytes(corrupt))
cases.append((out("flipped.npz"), "CRC-32 mismatch"))
comp = bytearray(open(out("cora_c.npz"), "rb").read())
comp[60:70] = b"\x00" * 10
with open(out("flipped-deflate.npz"), "wb") as fh:
    fh.write(bytes(comp))
cases.append((out("flipped-deflate.npz"), "offset"))
cases += [
    (with_npy("magic.npz", "x", b"NOTNUMPY" + x_npy[8:]), "x.npy: offset 0: not a .npy file"),
    (with_npy("version.npz", "x", x_npy[:6] + b"\x07" + x_npy[7:]), "format version 7"),
    (with_npy("header-length.npz", "x", x_npy[:8] + b"\xff\xff" + x_npy[10:100]), "runs past the end"),
    (with_npy("not-dict.npz", "x", x_npy[:10] + b"[" + x_npy[11:]), "not a Python dict"),
    (with_npy("no-descr.npz", "x", x_npy.replace(b"'descr'", b"'dtype'", 1)), "no 'descr'"),
    (with_npy("big-endian.npz", "x", x_npy.replace(b"<f4", b">f4", 1)), "big-endian"),
    (with_npy("complex.npz", "x", x_npy.replace(b"<f4", b"<c8", 1)), "not one Saga reads"),
    (with_npy("no-fortran.npz", "x", x_npy.replace(b"'fortran_order'", b"'fortran_xxxxx'", 1)), "fortran_order"),
    (with_npy("no-shape.npz", "x", x_npy.replace(b"'shape'", b"'shapo'", 1)), "no 'shape'"),
    (with_npy("bad-dim.npz", "x", x_npy.replace(b"(2708, 1433)", b"(2708, -433)", 1)), "non-negative integer"),
    (with_npy("truncated-x.npz", "x", x_npy[:len(x_npy) - 4]), "truncated"),
    (with_npy("trailing-x.npz", "x", x_npy + b"1234"), "trailing bytes"),
    (with_npy("huge-x.npz", "x", x_npy.replace(b"(2708, 1433)", b"(99999999999, 99999999999999)", 1)), "x.npy: offset"),
    (with_key("no-x.npz", x=None), "no 'x'"),
    (with_key("int-x.npz", x=good["x"].astype(np.int32)), "2-D float array"),
    (with_key("edge-shape.npz", edge_index=good["edge_index"][:1]), "2 x E integer array"),
    (with_key("edge-range.npz", edge_index=np.array([[0, 1], [1, 2708]])), "vertex 2708 is out of range [0, 2708)"),
    (with_key("negative-edge.npz", edge_index=np.array([[0, -1], [1, 2]])), "vertex -1 is out of range"),
    (with_key("float-edges.npz", edge_index=good["edge_index"].astype(np.float32)), "2 x E integer array"),
    (with_key("no-edges.npz", edge_index=None), "no edges"),
    (with_key("y-length.npz", y=good["y"][:100]), "'y': must be 2708 integer classes"),
    (with_key("y-float.npz", y=good["y"].astype(np.float64)), "'y': must be"),
    (with_key("y-range.npz", y=np.where(np.arange(n) == 5, -3, good["y"])), "'y'[5]: class -3"),
    (with_key("no-y.npz", y=None), "'y': missing"),
    (with_key("mask-length.npz", train_mask=good["train_mask"][:10]), "'train_mask': must be 2708 booleans"),
    (with_key("mask-value.npz", val_mask=np.where(np.arange(n) == 7, 2, 0).astype(np.uint8)), "'val_mask'[7]: 2 is not 0 or 1"),
    (with_key("no-split.npz", test_mask=None), "no 'test_mask' or 'test_idx'"),
    (with_key("overlap.npz", val_mask=good["train_mask"]), "in both the train and the val split"),
    (with_key("unlabelled.npz", y=np.where(np.arange(n) == 0, -1, good["y"])), "vertex 0 of the train split has no label"),
]
src_dst = {k: v for k, v in good.items() if k != "edge_index"}
src_dst["src"], src_dst["dst"] = good["edge_index"][0], good["edge_index"][1][:-1]
cases.append((archive("src-dst.npz", {k + ".npy": npy_bytes(v) for k, v in src_dst.items()}), "'src' has"))
with zipfile.ZipFile(out("bzip2.npz"), "w", zipfile.ZIP_BZIP2) as z:
    for k, v in good.items():
        z.writestr(k + ".npy", npy_bytes(v))
cases.append((out("bzip2.npz"), "compression method 12"))
# A member whose directory entry claims more than deflate can expand to.
bomb = bytearray(open(archive("claims.npz", {"x.npy": npy_bytes(good["x"])},
                              compress=True), "rb").read())
entry = bomb.index(b"PK\x01\x02")
bomb[entry + 24:entry + 28] = (0xFFFFFFF0).to_bytes(4, "little")
with open(out("claims.npz"), "wb") as fh:
    fh.write(bytes(bomb))
cases.append((out("claims.npz"), "an absurd uncompressed size (4294967280 "
              "bytes from"))
for path, message in cases:
    text = run(["run", model, "--data", path], expect=1)
    lines = [l for l in text.splitlines()
             if not l.startswith("compiled ")]
    located = os.path.basename(path) in text and message in text
    check(located and len(lines) == 1,
          "%s: %s" % (os.path.basename(path),
                      lines[0] if lines else "(no message)"))
check(len(cases) == 37, "%d malformed files (README says 37)" % len(cases))

# A member that inflates past the memory available is refused before the
# buffer is allocated.
big = archive("big.npz", {"x.npy": npy_bytes(np.zeros((4096, 1024),
                                                      np.float32))}, True)
os.environ["SAGA_AVAILABLE_MEMORY"] = "8M"
text = run(["run", model, "--data", big], expect=1)
del os.environ["SAGA_AVAILABLE_MEMORY"]
check(big + ": x.npy: inflating it needs 16.0 MiB; 8.00 MiB is available "
      "(SAGA_AVAILABLE_MEMORY)" in text, "inflation past the memory "
      "available: " + text.strip().splitlines()[-1])
finish()
