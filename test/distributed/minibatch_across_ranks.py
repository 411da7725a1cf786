"""Distributed mini-batch training (sagac train --partition --batch-size).

Usage: minibatch_across_ranks.py SAGAC MODEL DATA OUT_DIR

1. One rank of a partitioned run trains the parameters one process trains
   (the same batches; its gradient sum over one rank changes no bit).
2. On 3 ranks, MassiveGNN's buffer changes where feature rows come from,
   never their values: no buffer, a buffer of half of each halo evicting
   every 2 batches (alpha 0.5: slots are replaced), and the whole halo
   buffered all give identical parameters.
3. The counters: without a buffer no hits; with the whole halo buffered no
   misses, fewer rows fetched per epoch than without; with half of it and
   evictions, hits and misses both.
4. Accuracy: 2 ranks reach >= 78% test accuracy on Cora in 60 epochs.
5. Errors: buffer options without --partition, or out of range, are one
   line before anything runs.
"""
import os
import re
import subprocess
import sys

sagac, model, data, out_dir = sys.argv[1:5]
os.makedirs(out_dir, exist_ok=True)
out = lambda name: os.path.join(out_dir, name)
MPI = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "btl",
       "self,vader,tcp", "--mca", "btl_vader_single_copy_mechanism", "none",
       "-x", "OPENBLAS_NUM_THREADS=1"]
COMMON = [model, "--data", data, "--batch-size", "64", "--fanout", "10,25",
          "--threads", "1", "--quiet"]
failures = []


def run(cmd, expect=0):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode != expect:
        sys.exit("FAIL: %s exited %d:\n%s" % (" ".join(cmd), r.returncode,
                                               r.stdout))
    return r.stdout


def params(path):
    return [l for l in open(path) if not l.startswith("#")]


def trainers(text):
    """Per trainer: fetched rows per epoch, hits, misses."""
    rows = re.findall(r"^trainer (\d+): .*?, (\d+) fetched, .*hit rate "
                      r"[0-9.]+% \((\d+) hits, (\d+) misses\)", text, re.M)
    if not rows:
        sys.exit("FAIL: no trainer lines in:\n" + text)
    return [(float(f), int(h), int(m)) for _, f, h, m in rows]


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


# 1. One rank = one process.
run([sagac, "train"] + COMMON + ["--epochs", "3", "--save-params",
                                 out("single.txt")])
run(MPI + ["-np", "1", sagac, "train"] + COMMON +
    ["--epochs", "3", "--partition", "vertices", "--save-params",
     out("one.txt")])
check(params(out("single.txt")) == params(out("one.txt")),
      "one rank trains the single process's parameters, bit for bit")

# 2. and 3. The buffer changes no value.
runs = {}
for name, extra in [("none", []),
                    ("half", ["--buffer-fraction", "0.5", "--buffer-period",
                              "2", "--buffer-alpha", "0.5"]),
                    ("whole", ["--buffer-fraction", "1"])]:
    text = run(MPI + ["-np", "3", sagac, "train"] + COMMON +
               ["--epochs", "3", "--partition", "metis", "--save-params",
                out(name + ".txt")] + extra)
    runs[name] = trainers(text)
    if name == "half":
        check("buffer holding 50% of each halo" in text,
              "the run says what its buffer holds")
check(params(out("none.txt")) == params(out("half.txt")) ==
      params(out("whole.txt")),
      "no buffer, half a halo with evictions and the whole halo give the "
      "same parameters on 3 ranks")
check(all(h == 0 for _, h, _ in runs["none"]), "no buffer: no hits")
check(all(m == 0 and h > 0 for _, h, m in runs["whole"]),
      "the whole halo buffered: hits and no misses")
check(sum(f for f, _, _ in runs["whole"]) < sum(f for f, _, _ in runs["none"]),
      "the whole halo buffered: fewer rows fetched per epoch")
check(sum(h for _, h, _ in runs["half"]) > 0 and
      sum(m for _, _, m in runs["half"]) > 0,
      "half a halo: hits and misses")

# 4. Accuracy.
text = run(MPI + ["-np", "2", sagac, "train"] + COMMON +
           ["--epochs", "60", "--partition", "metis", "--buffer-fraction",
            "0.5"])
acc = float(re.search(r"test accuracy ([0-9.]+)", text).group(1))
check(acc >= 0.78, "2 ranks: test accuracy %.3f >= 0.78" % acc)

# 5. Errors.
for extra, message in [
        (["--buffer-fraction", "0.5"], "need --batch-size and --partition"),
        (["--partition", "metis", "--buffer-fraction", "1.5"],
         "0 <= --buffer-fraction <= 1"),
        (["--partition", "metis", "--buffer-alpha", "0"],
         "0 < --buffer-alpha < 1")]:
    text = run([sagac, "train"] + COMMON + ["--epochs", "1"] + extra, expect=1)
    check(message in text and len(text.strip().splitlines()) == 1,
          "%s: one line saying '%s'" % (" ".join(extra), message))

sys.exit(1 if failures else 0)
