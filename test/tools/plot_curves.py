"""sagac plot and sagac train --plot: training curves as SVG.

Usage: plot_curves.py SAGAC MODEL DATA OUT_DIR

The plot of a training log is well-formed SVG with three panels (loss,
accuracy, epoch time), each with its axis labels, tick labels and a legend,
and one point per epoch in every curve, placed by the logged values; a
resumed run's --plot covers the whole log. Bad logs are one located error.
"""
import json
import os
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "formats"))
from checks import check, finish, run as run_sagac  # noqa: E402

sagac, model, data, out_dir = sys.argv[1:5]
os.makedirs(out_dir, exist_ok=True)
out = lambda name: os.path.join(out_dir, name)
NS = "{http://www.w3.org/2000/svg}"
run = lambda args, expect=0: run_sagac(sagac, args, expect)


def curves(path):
    root = ET.parse(path).getroot()
    texts = [t.text for t in root.iter(NS + "text")]
    lines = {}
    for p in root.iter(NS + "polyline"):
        pts = [tuple(map(float, xy.split(","))) for xy in p.get("points").split()]
        lines[p.get("stroke")] = pts
    return texts, lines


for f in ["run.jsonl", "run.ckpt"]:
    if os.path.exists(out(f)):
        os.remove(out(f))
run(["train", model, "--data", data, "--epochs", "30", "--quiet", "--log",
     out("run.jsonl"), "--plot", out("train.svg")])
log = [json.loads(l) for l in open(out("run.jsonl"))]
texts, lines = curves(out("train.svg"))
for label in ["loss", "accuracy", "epoch time (ms)", "training loss",
              "train accuracy", "validation accuracy", "test accuracy",
              "epoch time"]:
    check(label in texts, "the plot has the label or legend entry '%s'" % label)
check(texts.count("epoch") == 3, "three x axes labelled 'epoch'")
check(len(lines) == 5 and all(len(p) == len(log) for p in lines.values()),
      "five curves of %d points" % len(log))
loss = lines["#1f77b4"]
check(all(a[0] < b[0] for a, b in zip(loss, loss[1:])),
      "epochs run left to right")
# Higher loss is higher on the page (smaller y), in the log's order.
pairs = [(log[i]["loss"] - log[j]["loss"]) * (loss[j][1] - loss[i][1])
         for i in range(len(log)) for j in range(i + 1, len(log))]
check(all(p >= -1e-9 for p in pairs), "the loss curve follows the logged loss")
check(any(t in texts for t in ["0", "0.5", "1"]), "tick labels on the axes")

# sagac plot on the same log draws the same curves.
run(["plot", out("run.jsonl"), out("plot.svg")])
check(curves(out("plot.svg"))[1] == lines, "sagac plot draws the same curves")

# A resumed run's plot covers every logged epoch.
run(["train", model, "--data", data, "--epochs", "10", "--quiet", "--log",
     out("resumed.jsonl"), "--checkpoint", out("run.ckpt")])
run(["train", model, "--data", data, "--epochs", "20", "--quiet", "--log",
     out("resumed.jsonl"), "--checkpoint", out("run.ckpt"), "--resume",
     "--plot", out("resumed.svg")])
check(all(len(p) == 20 for p in curves(out("resumed.svg"))[1].values()),
      "a resumed run's plot has all 20 epochs")

# Bad logs.
good = open(out("run.jsonl")).read().splitlines()
bad = {
    "not-json.jsonl": (good[:3] + ["{oops"], ":4: not JSON"),
    "array.jsonl": (good[:1] + ["[1, 2]"], ":2: not a JSON object"),
    "no-loss.jsonl": (good[:2] + [json.dumps({k: v for k, v in log[2].items() if k != "loss"})], ":3: no number 'loss'"),
    "backwards.jsonl": ([good[1], good[0]], ":2: epoch 1 after epoch 2"),
    "empty.jsonl": ([], "no epochs to plot"),
}
for name, (lines_, message) in bad.items():
    with open(out(name), "w") as fh:
        fh.write("\n".join(lines_) + ("\n" if lines_ else ""))
    text = run(["plot", out(name), out("bad.svg")], expect=1)
    check(message in text and name in text and len(text.strip().splitlines()) == 1,
          "%s: %s" % (name, text.strip()))
text = run(["plot", out("missing.jsonl"), out("bad.svg")], expect=1)
check("missing.jsonl: cannot read" in text, text.strip())
text = run(["plot", out("run.jsonl"), os.path.join(out_dir, "no-dir", "x.svg")],
           expect=1)
check("x.svg: cannot write" in text, text.strip())
finish()
