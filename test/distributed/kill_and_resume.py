"""Killing one rank stops the others, and --resume reproduces the run.

Usage: kill_and_resume.py SAGAC MODEL DATA OUT_DIR [--epochs E] [--ranks N]
       [--resume-ranks M] [--kill-after K] [-- EXTRA...]

EXTRA: more sagac train options for every run (e.g. mini-batches:
--batch-size 64 --fanout 10,25 --buffer-fraction 0.5; their batches depend
on the partitioning, so they resume on the same rank count).

1. An uninterrupted run: mpirun -np N sagac train ... --partition vertices.
2. The same run with a checkpoint; when its log shows some epochs, one
   rank (not 0) is killed with SIGKILL. The job must end non-zero within
   30 s, with a message naming the rank, and leave no sagac process behind.
3. --resume from the checkpoint on M ranks (another N: the checkpoint holds
   no partitioning) must end with the uninterrupted run's parameters
   (relative difference < 1e-5, as in train_across_ranks.py).
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time

from params import load, relative_difference, sagac_pids

p = argparse.ArgumentParser()
p.add_argument("sagac")
p.add_argument("model")
p.add_argument("data")
p.add_argument("out")
p.add_argument("--epochs", type=int, default=300)
p.add_argument("--ranks", type=int, default=3)
p.add_argument("--resume-ranks", type=int, default=2)
p.add_argument("--kill-after", type=int, default=10,
               help="epochs logged before the kill")
argv = sys.argv[1:]
extra = argv[argv.index("--") + 1:] if "--" in argv else []
args = p.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
args.extra = extra
os.makedirs(args.out, exist_ok=True)
out = lambda name: os.path.join(args.out, name)


def mpirun(n, extra):
    return ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(n),
            "--mca", "btl", "self,vader,tcp",
           "--mca", "btl_vader_single_copy_mechanism", "none", "-x", "OPENBLAS_NUM_THREADS=1",
            args.sagac, "train", args.model, "--data", args.data, "--epochs",
            str(args.epochs), "--partition", "vertices", "--threads", "1",
            "--quiet"] + args.extra + extra


def rank_of(pid):
    env = open("/proc/%d/environ" % pid, "rb").read().split(b"\0")
    for kv in env:
        if kv.startswith(b"OMPI_COMM_WORLD_RANK="):
            return int(kv.split(b"=")[1])
    return -1


# 1. Uninterrupted.
r = subprocess.run(mpirun(args.ranks, ["--save-params", out("full.txt")]),
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
if r.returncode != 0:
    sys.exit("the uninterrupted run failed:\n" + r.stdout)

# 2. Killed mid-run.
for f in ["run.ckpt", "run.jsonl"]:
    if os.path.exists(out(f)):
        os.remove(out(f))
job = subprocess.Popen(mpirun(args.ranks, ["--checkpoint", out("run.ckpt"),
                                           "--log", out("run.jsonl")]),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
deadline = time.time() + 120
while time.time() < deadline:
    if os.path.exists(out("run.jsonl")) and \
            sum(1 for _ in open(out("run.jsonl"))) >= args.kill_after:
        break
    if job.poll() is not None:
        sys.exit("the run ended before it could be killed:\n" + job.stdout.read())
    time.sleep(0.05)
victims = [pid for pid in sagac_pids(args.sagac) if rank_of(pid) == 1]
if not victims:
    sys.exit("no rank 1 process to kill")
os.kill(victims[0], signal.SIGKILL)
killed = time.time()
try:
    text, _ = job.communicate(timeout=30)
except subprocess.TimeoutExpired:
    job.kill()
    sys.exit("FAIL: the job was still running 30 s after rank 1 was killed")
waited = time.time() - killed
if job.returncode == 0:
    sys.exit("FAIL: the job exited 0 after rank 1 was killed:\n" + text)
if not re.search(r"rank 1\b", text):
    sys.exit("FAIL: the message does not name rank 1:\n" + text)
time.sleep(1)
left = sagac_pids(args.sagac)
if left:
    sys.exit("FAIL: sagac processes left behind: %s" % left)
epochs_done = sum(1 for _ in open(out("run.jsonl")))
print("killed rank 1 after %d epochs: the job ended (status %d) in %.1f s, "
      "naming it; no process left" % (epochs_done, job.returncode, waited))

# 3. Resume on another rank count.
r = subprocess.run(mpirun(args.resume_ranks,
                          ["--checkpoint", out("run.ckpt"), "--resume",
                           "--log", out("run.jsonl"),
                           "--save-params", out("resumed.txt")]),
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
if r.returncode != 0:
    sys.exit("FAIL: the resumed run failed:\n" + r.stdout)
lines = sum(1 for _ in open(out("run.jsonl")))
if lines != args.epochs:
    sys.exit("FAIL: the resumed log has %d epochs, not %d" % (lines,
                                                              args.epochs))
a, b = load(out("full.txt")), load(out("resumed.txt"))
worst = max(d for d, _ in relative_difference(a, b).values())
print("resumed on %d ranks: largest relative difference from the "
      "uninterrupted run %.2e" % (args.resume_ranks, worst))
sys.exit(1 if worst > 1e-5 else 0)
