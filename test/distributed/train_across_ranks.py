"""N MPI ranks train the model one process trains (the distributed issue).

Usage: train_across_ranks.py SAGAC MODEL DATA OUT_DIR [--epochs E]
       [--ranks 1,2,3,4] [--partitions vertices,edges,roc,metis] [--rtol R]

For every partitioner and every rank count, runs
  mpirun -np N sagac train MODEL --data DATA --epochs E --partition P
and compares the saved parameters with the 1-rank run's: each tensor's
relative difference ||a - b|| / ||a|| at most R (1e-5 by default); the
first 1-rank run's with those of one process without MPI, which must be
the same bits (the same dropout masks: over edges they are keyed by the
whole graph's edge ids; parameters are saved with %.9g, which round-trips
float32).
Also
checks that every rank's halo gathers received, and its scatters sent
back, exactly the analytic volume per epoch: halo rows (unique remote
sources) x the widths the plan exchanges x 4 bytes, given per halo row by
--gather-row-bytes and --scatter-row-bytes (without them, the first rank's
figure must hold for all). Exits 1 saying what differs.
"""
import argparse
import os
import re
import subprocess
import sys
import time

from params import load, relative_difference

p = argparse.ArgumentParser()
p.add_argument("sagac")
p.add_argument("model")
p.add_argument("data")
p.add_argument("out")
p.add_argument("--epochs", type=int, default=5)
p.add_argument("--ranks", default="1,2,3,4")
p.add_argument("--partitions", default="vertices,edges,roc,metis")
p.add_argument("--rtol", type=float, default=1e-5)
p.add_argument("--gather-row-bytes", type=float,
               help="the analytic bytes each halo row receives per epoch")
p.add_argument("--scatter-row-bytes", type=float,
               help="the analytic bytes each halo row sends back per epoch")
p.add_argument("--random-graph", metavar="V,E,F,C,SEED",
               help="train on a random graph written to OUT/data instead "
                    "(random_planetoid.py)")
args = p.parse_args()
os.makedirs(args.out, exist_ok=True)
if args.random_graph:
    data = os.path.join(args.out, "data")
    subprocess.run([sys.executable, os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "random_planetoid.py"), data] +
        args.random_graph.split(","), check=True)
    args.data = data


def run(n, part, extra=()):
    params = os.path.join(args.out, "params-%s-%d%s.txt" %
                          (part, n, "".join(extra).replace("=", "-")))
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(n),
           "--mca", "btl", "self,vader,tcp",
           "--mca", "btl_vader_single_copy_mechanism", "none", "-x", "OPENBLAS_NUM_THREADS=1",
           args.sagac, "train", args.model, "--data", args.data, "--epochs",
           str(args.epochs), "--partition", part, "--threads", "1",
           "--save-params", params, "--quiet"] + list(extra)
    start = time.time()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=600)
    if r.returncode != 0:
        sys.exit("FAILED (%d ranks, %s): %s\n%s" % (n, part, " ".join(cmd),
                                                     r.stdout))
    halo = {int(m.group(1)): int(m.group(2)) for m in re.finditer(
        r"rank (\d+): \d+ vertices \(\d+% interior\), \d+ in-edges, halo (\d+) rows", r.stdout)}
    received = {int(m.group(1)): (float(m.group(2)), float(m.group(3)))
                for m in re.finditer(
        r"exchanged per epoch by rank (\d+): halo rows [\d.]+ bytes sent, "
        r"([\d.]+) received; partial sums ([\d.]+) sent", r.stdout)}
    if len(halo) != n or len(received) != n:
        sys.exit("no per-rank report in the output of %s:\n%s" %
                 (" ".join(cmd), r.stdout))
    return load(params), halo, received, time.time() - start


failed = False
last = None  # the last run: partitioner, rank count, parameters


def single_process():
    params = os.path.join(args.out, "params-one-process.txt")
    cmd = [args.sagac, "train", args.model, "--data", args.data, "--epochs",
           str(args.epochs), "--threads", "1", "--save-params", params,
           "--quiet"]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=600,
                       env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    if r.returncode != 0:
        sys.exit("FAILED (one process): %s\n%s" % (" ".join(cmd), r.stdout))
    return load(params)


one_process = single_process()
# Bytes per halo row per epoch: received by gathers, sent back by scatters.
expected = [args.gather_row_bytes, args.scatter_row_bytes]
for part in args.partitions.split(","):
    ref = None
    for n in [int(x) for x in args.ranks.split(",")]:
        params, halo, received, seconds = run(n, part)
        last = (part, n, params)
        for rank in range(n):
            for k, what in enumerate(["received by halo gathers",
                                      "sent back as partial sums"]):
                got = received[rank][k]
                if halo[rank] == 0:
                    if got != 0:
                        print("FAIL %s N=%d rank %d: no halo but %g bytes %s"
                              % (part, n, rank, got, what))
                        failed = True
                    continue
                if expected[k] is None:
                    expected[k] = got / halo[rank]
                if got != expected[k] * halo[rank]:
                    print("FAIL %s N=%d rank %d: %g bytes %s per epoch for %d "
                          "halo rows, expected %g (%g per row)"
                          % (part, n, rank, got, what, halo[rank],
                             expected[k] * halo[rank], expected[k]))
                    failed = True
        if ref is None:
            ref = params
            print("%-8s N=%d: reference (%.1f s)" % (part, n, seconds))
            if one_process is not None:
                worst = max(d for d, _ in
                            relative_difference(ref, one_process).values())
                print("%-8s N=%d against one process without MPI: largest "
                      "relative difference %.2e" % (part, n, worst))
                # The same operations in the same order: the same bits
                # (README says so), not merely within the tolerance.
                if worst != 0:
                    print("FAIL: %d rank(s) and one process differ by %.2e "
                          "(they must be the same bits)" % (n, worst))
                    failed = True
                one_process = None
            continue
        worst = worst_element = 0.0
        try:
            diffs = relative_difference(ref, params)
        except (KeyError, ValueError) as e:
            sys.exit("%s N=%d: parameter missing or resized: %s" % (part, n, e))
        for name, (d, e) in diffs.items():
            worst = max(worst, d)
            worst_element = max(worst_element, e)
            if d > args.rtol:
                print("FAIL %s N=%d: %s differs by %.2e relative "
                      "(tolerance %g)" % (part, n, name, d, args.rtol))
                failed = True
        print("%-8s N=%d: largest relative difference %.2e (one element: "
              "%.2e of the largest magnitude) (%.1f s)"
              % (part, n, worst, worst_element, seconds))
# Computing interior rows while the halo is in flight changes only the
# order of independent rows: the parameters are the same bits.
part, n, params = last
if n > 1:
    serial = run(n, part, ["--halo-overlap=false"])[0]
    same = all(params[k] == serial[k] for k in params) and \
        params.keys() == serial.keys()
    print("%-8s N=%d: --halo-overlap=false gives %s parameters"
          % (part, n, "the same" if same else "DIFFERENT"))
    failed |= not same
print("per halo row and epoch: %s bytes gathered, %s bytes of partial sums "
      "sent back (4 x the exchanged widths)" % tuple(expected))
sys.exit(1 if failed else 0)
