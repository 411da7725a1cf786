#!/usr/bin/python3
"""DGL and PyTorch on a Saga graph file (.sgf): the out-of-core bench's peers.

Usage:
  ooc_baselines.py dgl|pytorch FILE [--threads N] [--epochs N]
  ooc_baselines.py check FILE     (read and check it with NumPy alone)

Reads the file the way an in-memory system must: the whole in-edge CSR, the
features and the labels into RAM (the header and section table as
runtime/graph/GraphFileWriter.cpp writes them, versions 1 and 2: sections of
kinds it does not know are skipped with a note; sizes are checked against
the counts, checksums only by `check`), then
trains the GCN of bench/models/gcn256.saga (features -> 64 -> classes,
dropout 0.5, ReLU, GCN normalisation D^-1/2 (A + I) D^-1/2, cross-entropy
over the train split, Adam lr 0.01) with
  dgl      dgl.nn.GraphConv (update_all), self loops added;
  pytorch  torch.sparse.mm with the normalised CSR adjacency.
It prints a `progress` line with the resident set after each stage, so that
when the process is killed for memory (bench/outofcore.sh runs it in a
memory cgroup the size of this machine's RAM) the last line says how far it
got; an epoch that completes ends in a `RESULT` line. A peer whose library
(torch, dgl) is not installed is skipped after the file is read: one line
says so and the exit status is 77 (bench/peers.py).
"""

import argparse
import os
import resource
import struct
import sys
import time
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import need, need_spec  # noqa: E402

# The layout runtime/graph/GraphFile.cpp writes and reads (keep in step):
# a 4096-byte header (magic, version, counts, the section table, the name
# at 3584, the header's CRC-32 in its last 4 bytes), then the sections.
MAGIC = b"SAGAGRF1"
HEADER_BYTES = 4096
SECTIONS_AT, SECTION_BYTES = 96, 32
NAME_AT, NAME_BYTES = 3584, 256
KINDS = {1: "in-offsets", 2: "in-sources", 3: "in-edge-ids", 4: "out-offsets",
         5: "out-targets", 6: "out-edge-ids", 7: "bounds", 8: "chunk-table",
         9: "chunk-edges", 10: "features", 11: "feature-crcs", 12: "labels",
         13: "train", 14: "val", 15: "test", 16: "chunk-row-table",
         17: "chunk-rows"}
# Sections per version: version 2 added each chunk's distinct rows
# (chunk-row-table, chunk-rows).
SECTIONS = {1: 15, 2: 17}


class SgfError(Exception):
    """A file this reader cannot read, with the file and what is wrong."""


def read_sgf_header(path):
    """The header of a Saga graph file as a dict: version, name, the counts
    (vertices, edges, features, classes, intervals, train, val, test), the
    known sections {name: (offset, bytes, crc)} and the kinds it skipped.

    Checked as GraphFile::open checks them, less the sections' contents:
    the magic, the header's CRC-32, the section count of its version, each
    known section's size against the counts and its place in the file. A
    section of a kind this reader does not know (a version newer than 2)
    is skipped with a note on stderr; a section it needs and cannot find or
    size is an SgfError."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            header = f.read(HEADER_BYTES)
    except OSError as e:
        raise SgfError(f"{path}: cannot read: {e.strerror}") from e
    if header[:8] != MAGIC:
        raise SgfError(f"{path}: not a Saga graph file (no SAGAGRF1 magic)")
    if len(header) < HEADER_BYTES:
        raise SgfError(f"{path}: truncated: {size} bytes, the header alone "
                       f"has {HEADER_BYTES}")
    version, = struct.unpack_from("<I", header, 8)
    stored, = struct.unpack_from("<I", header, HEADER_BYTES - 4)
    if zlib.crc32(header[:HEADER_BYTES - 4]) != stored:
        raise SgfError(f"{path}: header checksum mismatch: the header is "
                       "corrupt")
    v, e, feats, classes, parts, n_train, n_val, n_test = struct.unpack_from(
        "<8q", header, 16)
    count, = struct.unpack_from("<I", header, 80)
    if count > (NAME_AT - SECTIONS_AT) // SECTION_BYTES:
        raise SgfError(f"{path}: header: {count} sections cannot fit in the "
                       "section table")
    if version in SECTIONS and count != SECTIONS[version]:
        raise SgfError(f"{path}: header: version {version} has "
                       f"{SECTIONS[version]} sections, the table has {count}")
    if version not in SECTIONS:
        print(f"{path}: graph file version {version}; this reader knows "
              f"versions {min(SECTIONS)} to {max(SECTIONS)} and reads the "
              "sections it knows", file=sys.stderr)
    expected = {
        "in-offsets": (v + 1) * 8, "in-sources": e * 4, "in-edge-ids": e * 4,
        "out-offsets": (v + 1) * 8, "out-targets": e * 4,
        "out-edge-ids": e * 4, "bounds": (parts + 1) * 4,
        "chunk-table": parts * parts * 24, "chunk-edges": e * 12,
        "features": v * feats * 4, "feature-crcs": parts * 4,
        "labels": v * 4, "train": n_train * 4, "val": n_val * 4,
        "test": n_test * 4, "chunk-row-table": parts * parts * 48}
    sections, unknown = {}, []
    for k in range(count):
        at = SECTIONS_AT + k * SECTION_BYTES
        kind, offset, nbytes, crc = struct.unpack_from("<I4xQQI", header, at)
        name = KINDS.get(kind)
        if name is None:
            unknown.append(kind)
            print(f"{path}: skipping section {k} of kind {kind} ({nbytes} "
                  f"bytes at {offset}): a kind this reader does not know "
                  f"(file version {version})", file=sys.stderr)
            continue
        want = expected.get(name, nbytes - nbytes % 4)
        if nbytes != want:
            raise SgfError(f"{path}: header: section {name} has {nbytes} "
                           f"bytes, its counts say {want}")
        if offset < HEADER_BYTES or offset + nbytes > size:
            raise SgfError(f"{path}: section {name} at {offset} ({nbytes} "
                           f"bytes) is not inside the file ({size} bytes)")
        sections[name] = (offset, nbytes, crc)
    name = header[NAME_AT:NAME_AT + NAME_BYTES].split(b"\0")[0].decode(
        "utf-8", "replace")
    return dict(path=path, version=version, name=name, vertices=v, edges=e,
                features=feats, classes=classes, intervals=parts,
                train=n_train, val=n_val, test=n_test, sections=sections,
                unknown=unknown)


def sgf_array(info, name, dtype, shape=None, verify=False):
    """Section `name` of the file as a NumPy array (its CRC-32 compared
    with the header's when `verify`)."""
    if name not in info["sections"]:
        raise SgfError(f"{info['path']}: no section {name} (file version "
                       f"{info['version']})")
    offset, nbytes, crc = info["sections"][name]
    a = np.fromfile(info["path"], dtype=dtype,
                    count=nbytes // np.dtype(dtype).itemsize, offset=offset)
    if a.nbytes != nbytes:
        raise SgfError(f"{info['path']}: section {name} is truncated")
    if verify and zlib.crc32(a.data) != crc:
        raise SgfError(f"{info['path']}: section {name} at {offset}: "
                       "checksum mismatch: the section is corrupt")
    return a.reshape(shape) if shape else a


def rss_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def progress(start, what):
    print(f"progress  {time.time() - start:7.1f} s  {what}  "
          f"(peak resident set {rss_gib():.2f} GiB)", flush=True)


def read_sgf(path, start, verify=False, info=None):
    """What an in-memory system reads of a graph file: the in-edge CSR
    (indptr by destination, int64; source indices, int32), the features
    [V, F] float32, the labels and the training split (int32), each
    checked against the counts (checksums too with `verify`). `info`:
    read_sgf_header's, when the caller has it."""
    info = info or read_sgf_header(path)
    v, e = info["vertices"], info["edges"]
    feats, classes = info["features"], info["classes"]
    indptr = sgf_array(info, "in-offsets", np.int64, verify=verify)
    indices = sgf_array(info, "in-sources", np.int32, verify=verify)
    if (indptr[0] != 0 or indptr[-1] != e or np.any(np.diff(indptr) < 0)
            or (e and (indices.min() < 0 or indices.max() >= v))):
        raise SgfError(f"{path}: the in-edge CSR is inconsistent")
    progress(start, f"read the in-edge CSR: {v} vertices, {e} edges")
    x = sgf_array(info, "features", np.float32, (v, feats), verify=verify)
    progress(start, f"read the features: {v} x {feats} float32 "
                    f"({x.nbytes / 2**30:.1f} GiB)")
    labels = sgf_array(info, "labels", np.int32, verify=verify)
    train = sgf_array(info, "train", np.int32, verify=verify)
    if v and (labels.min() < -1 or labels.max() >= classes):
        raise SgfError(f"{path}: labels outside -1..{classes - 1}")
    if len(train) and (train.min() < 0 or train.max() >= v):
        raise SgfError(f"{path}: training vertices outside 0..{v - 1}")
    return v, e, classes, indptr, indices, x, labels, train


def check(path):
    """Reads the file as the peers do, with every known section's checksum
    verified (NumPy only: no torch)."""
    start = time.time()
    info = read_sgf_header(path)
    v, e, classes, indptr, indices, x, labels, train = read_sgf(
        path, start, verify=True, info=info)
    for name in info["sections"]:
        sgf_array(info, name, np.uint8, verify=True)
    print(f"check: {path}: version {info['version']}, {v} vertices, {e} "
          f"edges, {info['features']} features, {classes} classes, "
          f"{info['intervals']} intervals, {len(train)} training vertices; "
          f"{len(info['sections'])} sections checked"
          + (f", {len(info['unknown'])} of unknown kinds skipped"
             if info["unknown"] else ""), flush=True)


def as_torch(data, threads, start, system):
    """read_sgf's arrays with the features, labels and training split as
    tensors, torch on `threads` threads and seeded."""
    v, e, classes, indptr, indices, x, labels, train = data
    torch = need("torch", system)
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    progress(start, f"{system}: torch {torch.__version__}")
    return (v, e, classes, indptr, indices, torch.from_numpy(x),
            torch.from_numpy(labels.astype(np.int64)),
            torch.from_numpy(train.astype(np.int64)))


def dgl_graph(v, indptr, indices):
    """The DGL graph src -> dst of an in-edge CSR (by destination)."""
    import dgl
    import torch
    g = dgl.graph(("csr", (torch.from_numpy(indptr),
                           torch.from_numpy(indices.astype(np.int64)),
                           torch.tensor([], dtype=torch.int64))),
                  num_nodes=v)
    return dgl.reverse(g)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("system", choices=["dgl", "pytorch", "check"])
    p.add_argument("file")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--epochs", type=int, default=1)
    a = p.parse_args()
    start = time.time()
    try:
        if a.system == "check":
            return check(a.file)
        data = read_sgf(a.file, start)
    except SgfError as err:
        sys.exit(f"ooc_baselines.py: {err}")
    if a.system == "dgl":
        need_spec("dgl", "dgl")  # before torch's few seconds of loading
    v, e, classes, indptr, indices, x, y, train = as_torch(
        data, a.threads, start, a.system)
    import torch
    hidden = 64
    if a.system == "dgl":
        dgl = need("dgl", "dgl")
        from dgl.nn import GraphConv
        g = dgl.add_self_loop(dgl_graph(v, indptr, indices))
        progress(start, f"dgl graph with self loops: {g.num_edges()} edges")
        conv0 = GraphConv(x.shape[1], hidden, norm="both")
        conv1 = GraphConv(hidden, classes, norm="both")

        def forward(training):
            h = torch.nn.functional.dropout(x, 0.5, training)
            h = torch.relu(conv0(g, h))
            h = torch.nn.functional.dropout(h, 0.5, training)
            return conv1(g, h)
        params = list(conv0.parameters()) + list(conv1.parameters())
        w0 = conv0.weight
    else:
        rows = torch.repeat_interleave(
            torch.arange(v), torch.from_numpy(np.diff(indptr)))
        cols = torch.from_numpy(indices.astype(np.int64))
        loops = torch.arange(v)
        rows = torch.cat([rows, loops])
        cols = torch.cat([cols, loops])
        deg = torch.bincount(rows, minlength=v).float()
        w = deg[rows].rsqrt() * deg[cols].rsqrt()
        adj = torch.sparse_coo_tensor(torch.stack([rows, cols]), w,
                                      (v, v)).coalesce().to_sparse_csr()
        del rows, cols, w
        progress(start, f"normalised CSR adjacency: {adj.values().numel()} "
                        "entries")
        w0 = torch.nn.Parameter(torch.empty(x.shape[1], hidden))
        w1 = torch.nn.Parameter(torch.empty(hidden, classes))
        torch.nn.init.xavier_uniform_(w0)
        torch.nn.init.xavier_uniform_(w1)
        b0 = torch.nn.Parameter(torch.zeros(hidden))
        b1 = torch.nn.Parameter(torch.zeros(classes))

        def forward(training):
            h = torch.nn.functional.dropout(x, 0.5, training)
            h = torch.relu(torch.sparse.mm(adj, h @ w0) + b0)
            h = torch.nn.functional.dropout(h, 0.5, training)
            return torch.sparse.mm(adj, h @ w1) + b1
        params = [w0, w1, b0, b1]
    opt = torch.optim.Adam(params, lr=0.01)
    for epoch in range(a.epochs):
        t = time.time()
        opt.zero_grad()
        out = forward(True)
        progress(start, f"epoch {epoch + 1}: forward done")
        loss = torch.nn.functional.cross_entropy(out[train], y[train]) + \
            5e-4 * (w0 ** 2).sum() / 2
        loss.backward()
        opt.step()
        progress(start, f"epoch {epoch + 1}: backward and Adam done")
        with torch.no_grad():
            acc = (forward(False).argmax(1)[train] == y[train]).float().mean()
        ms = (time.time() - t) * 1e3
        progress(start, f"epoch {epoch + 1}: loss {loss.item():.4f}, train "
                        f"accuracy {acc.item():.4f}, {ms:.0f} ms")
        print(f"RESULT kind=ooc system={a.system} epoch_ms={ms:.1f} "
              f"peak_rss_gib={rss_gib():.2f}", flush=True)


if __name__ == "__main__":
    main()
