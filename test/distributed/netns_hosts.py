"""Full-graph training across namespaced hosts (bench/netns/), and a host
whose link goes down.

Usage: netns_hosts.py SAGAC MODEL DATA OUT_DIR [--hosts 4] [--rate 1gbit]

1. hosts.sh up N RATE; run.sh N sagac train ... --partition edges for a
   few epochs: the parameters must be the 1-rank run's (relative < 1e-5).
2. A long run; when it has trained a few epochs, host N-1's link goes
   down: the job must end non-zero within 30 s (Open MPI's TCP keepalives,
   set by run.sh) with a message naming the lost host, and no sagac process
   may be left once the hosts are torn down.
Exits 77 (skipped) where network namespaces cannot be made (not root).
"""
import argparse
import os
import subprocess
import sys
import time

from params import load, relative_difference, sagac_pids

p = argparse.ArgumentParser()
p.add_argument("sagac")
p.add_argument("model")
p.add_argument("data")
p.add_argument("out")
p.add_argument("--hosts", type=int, default=4)
p.add_argument("--rate", default="1gbit")
args = p.parse_args()
os.makedirs(args.out, exist_ok=True)
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
netns = os.path.join(root, "bench", "netns")
env = dict(os.environ, SAGA_NETNS_STATE=os.path.join(args.out, "netns"))
sagac = os.path.abspath(args.sagac)
model, data = os.path.abspath(args.model), os.path.abspath(args.data)


def hosts(*what):
    return subprocess.run([os.path.join(netns, "hosts.sh")] + list(what),
                          env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)


def train(epochs, extra, np=None, **kw):
    cmd = [os.path.join(netns, "run.sh"), str(np or args.hosts), sagac,
           "train", model, "--data", data, "--epochs", str(epochs),
           "--partition", "edges", "--threads", "1", "--quiet"] + extra
    return cmd


up = hosts("up", str(args.hosts), args.rate)
if up.returncode != 0:
    print("cannot make network namespaces here (skipped):\n" + up.stdout)
    sys.exit(77)
failed = False
try:
    print(up.stdout.strip())
    # 1. N hosts train the model one process trains.
    ref = subprocess.run(["mpirun", "--allow-run-as-root", "-np", "1",
                          "-x", "OPENBLAS_NUM_THREADS=1", sagac, "train",
                          model, "--data", data, "--epochs", "5",
                          "--partition", "edges", "--threads", "1", "--quiet",
                          "--save-params", os.path.join(args.out, "one.txt")],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    if ref.returncode != 0:
        sys.exit("the 1-rank run failed:\n" + ref.stdout)
    start = time.time()
    r = subprocess.run(train(5, ["--save-params",
                                 os.path.join(args.out, "hosts.txt")]),
                       env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=300)
    if r.returncode != 0:
        sys.exit("FAIL: the %d-host run failed:\n%s" % (args.hosts, r.stdout))
    print("%d hosts at %s: 5 epochs in %.1f s" % (args.hosts, args.rate,
                                                    time.time() - start))
    for line in r.stdout.splitlines():
        if line.startswith("exchanged") or line.startswith("final"):
            print("  " + line)
    a = load(os.path.join(args.out, "one.txt"))
    b = load(os.path.join(args.out, "hosts.txt"))
    worst = max(d for d, _ in relative_difference(a, b).values())
    print("parameters: largest relative difference from 1 rank %.2e" % worst)
    failed |= worst > 1e-5

    # 2. A host's link goes down mid-run.
    log = os.path.join(args.out, "long.jsonl")
    if os.path.exists(log):
        os.remove(log)
    job = subprocess.Popen(train(100000, ["--log", log]), env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    deadline = time.time() + 120
    while time.time() < deadline and job.poll() is None:
        if os.path.exists(log) and sum(1 for _ in open(log)) >= 3:
            break
        time.sleep(0.1)
    if job.poll() is not None:
        sys.exit("FAIL: the long run ended early:\n" + job.stdout.read())
    lost = "sagaH%d" % (args.hosts - 1)
    hosts("link", lost, "down")
    downed = time.time()
    try:
        text, _ = job.communicate(timeout=30)
        waited = time.time() - downed
        named = "10.77.0.%d" % (10 + args.hosts - 1) in text or lost in text
        print("link of %s down: the job ended (status %d) in %.1f s%s"
              % (lost, job.returncode, waited,
                 ", naming it" if named else ", NOT naming it"))
        if job.returncode == 0 or not named:
            print(text[-3000:])
            failed = True
    except subprocess.TimeoutExpired:
        job.kill()
        print("FAIL: the job was still running 30 s after %s's link went "
              "down" % lost)
        failed = True
finally:
    hosts("down")
time.sleep(1)
left = sagac_pids(sagac)
if left:
    print("FAIL: sagac processes left behind: %s" % left)
    failed = True
sys.exit(1 if failed else 0)
