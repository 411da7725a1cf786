"""Compares the per-epoch losses of two `sagac train --log` files.

Usage: compare_losses.py A.jsonl B.jsonl TOLERANCE
Exits 1 (saying which epoch) when the epochs differ or a loss differs by
more than TOLERANCE; prints the largest difference otherwise.
"""
import json
import sys

a = [json.loads(line) for line in open(sys.argv[1])]
b = [json.loads(line) for line in open(sys.argv[2])]
tolerance = float(sys.argv[3])
if len(a) != len(b) or not a:
    sys.exit("epochs differ: %d vs %d" % (len(a), len(b)))
worst = 0.0
for x, y in zip(a, b):
    d = abs(x["loss"] - y["loss"])
    worst = max(worst, d)
    if d > tolerance:
        sys.exit("epoch %d: loss %.6f vs %.6f" % (x["epoch"], x["loss"], y["loss"]))
print("%d epochs, largest loss difference %.2e (tolerance %g)" % (len(a), worst, tolerance))
