"""Crash safety: SIGKILL a training run anywhere, then --resume.

Usage: kill_resume_property.py SAGAC MODEL DATA OUT_DIR MODE [--trials N]
       [--seed S]
MODE: outofcore (--memory-budget with spill files in a scratch folder),
      minibatch (--batch-size, --fanout), mpi (2 ranks, --partition).

1. An uninterrupted run gives the reference parameters and its duration.
2. N trials (default 20), each: a run with --checkpoint is killed with
   SIGKILL, at a random moment of its run (a third of the trials), or
   inside a write: half-way through the k-th checkpoint (SAGA_KILL_AT=
   checkpoint:k, runtime/FaultInjection.h) or, out of core, half-way
   through the k-th spill write (spill:k); k random. Then --resume from the
   checkpoint (a fresh run when the kill came before the first one) must
   finish with the reference parameters: bit for bit on one process (the
   same operations in the same order), relative difference < 1e-5 over
   MPI (as test/distributed/ checks). A half-written checkpoint is never
   read: the file is renamed into place whole, and checksummed.
3. A damaged and a truncated checkpoint are refused, naming the file.
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "distributed"))
from params import load, relative_difference  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("sagac")
p.add_argument("model")
p.add_argument("data")
p.add_argument("out")
p.add_argument("mode", choices=["outofcore", "minibatch", "mpi"])
p.add_argument("--trials", type=int, default=20)
p.add_argument("--seed", type=int, default=1)
p.add_argument("--epochs", type=int, default=6)
args = p.parse_args()
rng = random.Random(args.seed)
shutil.rmtree(args.out, ignore_errors=True)
os.makedirs(args.out)
out = lambda name: os.path.join(args.out, name)

base = [args.sagac, "train", args.model, "--data", args.data, "--epochs",
        str(args.epochs), "--seed", "3", "--quiet"]
if args.mode == "outofcore":
    base += ["--memory-budget", "6M", "--scratch", out("scratch"),
             "--threads", "1"]
    os.makedirs(out("scratch"))
elif args.mode == "minibatch":
    base += ["--batch-size", "256", "--fanout", "5,5", "--threads", "1"]
else:
    base = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2",
            "--mca", "btl", "self,vader,tcp", "--mca",
            "btl_vader_single_copy_mechanism", "none", "-x",
            "OPENBLAS_NUM_THREADS=1", "-x", "SAGA_KILL_AT"] + base + [
            "--partition", "vertices", "--threads", "1"]


def run(extra, env=None, timeout=300):
    e = dict(os.environ)
    e["SAGA_KILL_AT"] = "none:0"  # set, so that mpirun -x passes it on
    e.update(env or {})
    return subprocess.Popen(base + extra, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=e,
                            start_new_session=True)


def finish(job, timeout=300):
    try:
        text, _ = job.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        sys.exit("FAIL: a run did not end in %d s" % timeout)
    return job.returncode, text


def fail(msg):
    sys.exit("FAIL: " + msg)


# 1. The reference.
rc, text = finish(run(["--save-params", out("reference.txt"), "--log",
                       out("reference.jsonl")]))
if rc != 0:
    fail("the uninterrupted run failed:\n" + text)
times = sorted(float(m) for m in re.findall(
    r'"seconds": ([0-9.e-]+)', open(out("reference.jsonl")).read()))
epoch_seconds = times[len(times) // 2]  # the median epoch
reference = load(out("reference.txt"))


def same(params):
    if args.mode != "mpi":
        return open(params).read() == open(out("reference.txt")).read(), 0.0
    worst = max(d for d, _ in relative_difference(
        reference, load(params)).values())
    return worst < 1e-5, worst


# 2. Kill, resume, compare.
points = ["time", "checkpoint"] + (["spill"] if args.mode == "outofcore"
                                    else [])
counts = {}
for trial in range(args.trials):
    ckpt, params = out("run.ckpt"), out("resumed.txt")
    for f in [ckpt, ckpt + ".tmp", params]:
        if os.path.exists(f):
            os.remove(f)
    point = points[trial % len(points)]
    env = {}
    if point == "checkpoint":
        env["SAGA_KILL_AT"] = "checkpoint:%d" % rng.randint(1, args.epochs - 1)
    elif point == "spill":
        env["SAGA_KILL_AT"] = "spill:%d" % rng.randint(1, 150)
    log = out("run.jsonl")
    e = rng.randint(1, args.epochs - 1)
    delay = rng.uniform(0, 0.8 * epoch_seconds)
    for attempt in range(3):  # a moment the run outran: again, sooner
        for f in [ckpt, ckpt + ".tmp", log]:
            if os.path.exists(f):
                os.remove(f)
        job = run(["--checkpoint", ckpt, "--log", log], env)
        if point == "time":
            # A random moment of a random epoch: after the log shows epoch
            # e (not the last), within the next epoch's time.
            deadline = time.time() + 120
            while job.poll() is None and time.time() < deadline and not (
                    os.path.exists(log) and
                    sum(1 for _ in open(log)) >= e):
                time.sleep(0.002)
            time.sleep(delay)
            if job.poll() is None:
                os.killpg(job.pid, signal.SIGKILL)
        rc, text = finish(job)
        if rc != 0 or point != "time":
            break
        delay /= 4
    what = "epoch %d+%.0fms" % (e, delay * 1e3) if point == "time" else \
        env["SAGA_KILL_AT"]
    if rc == 0:
        outcome = "finished before the kill"
        counts["finished"] = counts.get("finished", 0) + 1
    else:
        counts[point] = counts.get(point, 0) + 1
        outcome = "killed"
    # A half-written checkpoint stays a temporary file, never the checkpoint.
    resume = ["--checkpoint", ckpt, "--resume"] if os.path.exists(ckpt) else \
        ["--checkpoint", ckpt]
    epoch = "the checkpoint"
    rc, text = finish(run(resume + ["--save-params", params]))
    if rc != 0:
        fail("trial %d (%s, %s): the resumed run failed:\n%s" %
             (trial, what, outcome, text))
    ok, worst = same(params)
    print("trial %2d: kill at %-14s %-25s resume from %-18s parameters %s" %
          (trial, what, outcome, epoch if resume[-1] == "--resume" else
           "scratch (none yet)", "identical" if ok and worst == 0 else
           "within %.1e" % worst if ok else "DIFFER (%.2e)" % worst))
    if not ok:
        fail("trial %d: the resumed parameters differ from the reference" %
             trial)
killed = sum(v for k, v in counts.items() if k != "finished")
print("%d trials: %s" % (args.trials, ", ".join(
    "%s %d" % kv for kv in sorted(counts.items()))))
if killed < args.trials * 3 // 4:
    fail("only %d of %d runs were killed before they finished" %
         (killed, args.trials))

# 3. A damaged or truncated checkpoint is refused, naming the file.
rc, text = finish(run(["--checkpoint", out("whole.ckpt")]))
data = bytearray(open(out("whole.ckpt"), "rb").read())
data[len(data) // 2] ^= 0x01
open(out("damaged.ckpt"), "wb").write(bytes(data))
open(out("truncated.ckpt"), "wb").write(bytes(data[:len(data) // 3]))
for name in ["damaged.ckpt", "truncated.ckpt"]:
    rc, text = finish(run(["--checkpoint", out(name), "--resume"]))
    if rc == 0 or out(name) not in text or "checksum mismatch" not in text:
        fail("%s was not refused by name:\n%s" % (name, text))
    print("%s: refused: %s" % (name, [l for l in text.splitlines()
                                      if out(name) in l][0].strip()))
print("PASS")
