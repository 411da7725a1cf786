#!/usr/bin/env python3
"""Saga's figures from the GPU check's sagac outputs, and the closing table.

  report.py agg SAGAC.out SAGA.jsonl SCALE F
      From `sagac run bench/models/aggF.saga --repeat N --profile
      --kernel-traffic`: the forward median, the propagation kernels' time
      (the --profile lines of the steps --kernel-traffic calls propagate) and
      their compulsory bytes, so achieved GB/s. Appends a JSON line; prints
      one summary detail.
  report.py gcn LOG.jsonl SAGA.jsonl SCALE
      From `sagac train --log`: the median epoch time after the first.
  report.py table OUT_DIR SCALE...
      saga.jsonl beside peers-SCALE.jsonl (gpu/peers.py): time, ratio to each
      peer (Saga's propagation kernel against the peer's call; Saga's
      forward median, which also downloads the output, beside it), achieved
      bandwidth as a share of the copy bandwidth measured in the same run,
      and the issue's goals (>= 60 % of the copy bandwidth,
      >= 1.5x torch.sparse.mm, >= 2x PyG's propagation, GCN epoch >= 2x PyG).
Exit status 2 when an input cannot be parsed.
"""
import json
import os
import re
import statistics
import sys


def die(message):
    print("report: error: " + message)
    sys.exit(2)


def append(path, record):
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")


def agg(out, saga_jsonl, scale, width):
    text = open(out).read()
    graph = re.search(r"^graph [^:]*: (\d+) vertices, (\d+) edges", text, re.M)
    forward = re.search(r"^forward: ([0-9.]+) ms", text, re.M)
    if not graph or not forward:
        die(out + ": no graph or forward line")
    # --kernel-traffic: | launch @saga_kernel_0 | propagate | 580420 | ... |
    propagate = {}
    for step, kind, nbytes in re.findall(r"^\| (.+?) \| (\w+) \| (\d+) \|", text, re.M):
        if kind == "propagate":
            propagate[step.replace("@", "")] = int(nbytes)
    # --profile: "     0.050 ms  launch saga_kernel_0"
    times = {}
    for ms, step in re.findall(r"^\s+([0-9.]+) ms  (.+)$", text, re.M):
        times[step.strip()] = times.get(step.strip(), 0.0) + float(ms)
    kernel_ms = sum(times.get(s, 0.0) for s in propagate)
    nbytes = sum(propagate.values())
    if not propagate or kernel_ms <= 0:
        die(out + ": no propagation step in the traffic table and the profile")
    record = {"check": "agg", "system": "saga", "scale": scale, "F": width,
              "N": int(graph.group(1)), "E": int(graph.group(2)),
              "ms": float(forward.group(1)), "kernel_ms": kernel_ms,
              "bytes": nbytes, "gbps": nbytes / kernel_ms / 1e6}
    append(saga_jsonl, record)
    print("forward %.3f ms; propagation %.3f ms, %.1f MB compulsory -> %.1f GB/s"
          % (record["ms"], kernel_ms, nbytes / 1e6, record["gbps"]))


def gcn(log, saga_jsonl, scale):
    try:
        epochs = [json.loads(line) for line in open(log) if line.strip()]
    except (OSError, ValueError) as e:
        die("%s: %s" % (log, e))
    if not epochs:
        die(log + ": no epochs")
    seconds = [e["seconds"] for e in epochs[1:]] or [epochs[0]["seconds"]]
    record = {"check": "gcn_epoch", "system": "saga", "scale": scale,
              "ms": statistics.median(seconds) * 1e3, "loss": epochs[-1]["loss"],
              "epochs": len(epochs)}
    append(saga_jsonl, record)
    print("%.3f ms/epoch (median of %d after the first), final loss %.4f"
          % (record["ms"], len(seconds), record["loss"]))


def read(path):
    if not os.path.exists(path):
        return []
    return [json.loads(line) for line in open(path) if line.strip()]


def table(outdir, scales):
    saga = read(os.path.join(outdir, "saga.jsonl"))
    rows = ["| graph | measure | Saga | peer | peer time | Saga speed-up | goal |",
            "|---|---|---:|---|---:|---:|---|"]
    for s in scales:
        peers = read(os.path.join(outdir, "peers-%s.jsonl" % s))
        copy = [p for p in peers if p.get("check") == "copy" and "gbps" in p]
        copy_gbps = copy[-1]["gbps"] if copy else None
        if copy_gbps:
            rows.append("| R-MAT %s | device copy | | torch copy_ | %.0f GB/s | | |"
                        % (s, copy_gbps))
        for r in [r for r in saga if str(r["scale"]) == str(s)]:
            if r["check"] == "agg":
                share = (" (%.0f %% of copy)" % (100 * r["gbps"] / copy_gbps)
                         if copy_gbps else "")
                rows.append("| R-MAT %s | agg F=%d propagation | %.3f ms, %.0f GB/s%s | | | | >= 60 %% of copy: %s |"
                            % (s, r["F"], r["kernel_ms"], r["gbps"], share,
                               ("met" if copy_gbps and r["gbps"] >= 0.6 * copy_gbps
                                else "not met" if copy_gbps else "no copy figure")))
                for p in peers:
                    if p.get("check") != "agg" or p.get("F") != r["F"]:
                        continue
                    peer = p.get("peer", "?")
                    goal = 1.5 if peer == "torch.sparse.mm" else 2.0
                    if "ms" not in p or p.get("error"):
                        rows.append("| R-MAT %s | agg F=%d | %.3f ms | %s | %s | | |"
                                    % (s, r["F"], r["kernel_ms"], peer, str(p.get("error", "no time"))[:60]))
                        continue
                    # Saga's propagation kernel against the peer's whole call
                    # (its output allocated, left on the device); Saga's
                    # forward also downloads the output to the host.
                    x = p["ms"] / r["kernel_ms"]
                    rows.append("| R-MAT %s | agg F=%d | %.3f ms (forward with download %.3f ms) | %s | %.3f ms | %.2fx | >= %.1fx: %s |"
                                % (s, r["F"], r["kernel_ms"], r["ms"], peer, p["ms"], x, goal,
                                   "met" if x >= goal else "not met"))
            elif r["check"] == "gcn_epoch":
                pyg = [p for p in peers if p.get("check") == "gcn_epoch"]
                if pyg and "ms" in pyg[-1] and not pyg[-1].get("error"):
                    x = pyg[-1]["ms"] / r["ms"]
                    rows.append("| R-MAT %s | GCN epoch 64-64-16 | %.3f ms | pyg.GCNConv | %.3f ms | %.2fx | >= 2x: %s |"
                                % (s, r["ms"], pyg[-1]["ms"], x, "met" if x >= 2 else "not met"))
                else:
                    why = str(pyg[-1].get("error", "no time"))[:60] if pyg else "no peer figure"
                    rows.append("| R-MAT %s | GCN epoch 64-64-16 | %.3f ms | pyg.GCNConv | %s | | |"
                                % (s, r["ms"], why))
    print("\n".join(rows))
    print("\nSaga relabels vertices by degree (sagac's --reorder auto, from "
          "65536 vertices); the peers run on the generated ids. Epochs, "
          "both sides: the training step, then an evaluation forward pass.")


def main(argv):
    if len(argv) >= 6 and argv[1] == "agg":
        agg(argv[2], argv[3], argv[4], int(argv[5]))
    elif len(argv) >= 5 and argv[1] == "gcn":
        gcn(argv[2], argv[3], argv[4])
    elif len(argv) >= 3 and argv[1] == "table":
        table(argv[2], argv[3:])
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv)
