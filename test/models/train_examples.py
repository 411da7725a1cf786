"""Each newer example model trains on Cora with the command its file's
header gives (`//   sagac train examples/NAME.saga ...`) and reaches at
least the test accuracy stated here (measured: SGC 0.811, APPNP 0.805,
JK-Net 0.791, GATv2 0.805, GCNII 0.832, PNA 0.783;
bench/results/examples-cora.log). Run by ctest
as `examples-train-cora`:
  python3 test/models/train_examples.py build/bin/sagac <source dir>
"""
import os
import re
import subprocess
import sys

AT_LEAST = {"sgc": 0.80, "appnp": 0.79, "jknet": 0.78, "gatv2": 0.79,
            "gcnii": 0.82, "pna": 0.77}


def main():
    sagac, root = sys.argv[1], sys.argv[2]
    failed = 0
    for name, floor in AT_LEAST.items():
        path = os.path.join(root, "examples", name + ".saga")
        with open(path) as f:
            header = f.read()
        m = re.search(r"^//\s+sagac train (\S+) (.*)$", header, re.M)
        if not m or m.group(1) != "examples/%s.saga" % name:
            print("%s: no '//   sagac train examples/%s.saga ...' line in "
                  "its header" % (path, name))
            failed += 1
            continue
        cmd = [sagac, "train", m.group(1)] + m.group(2).split()
        r = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
        acc = re.search(r"test accuracy (\d\.\d+)", r.stdout)
        ok = r.returncode == 0 and acc and float(acc.group(1)) >= floor
        print("%-6s %s  (at least %.2f)  %s" % (
            name, acc.group(0) if acc else "no accuracy", floor,
            "ok" if ok else "FAIL"))
        if not ok:
            print(" ".join(cmd))
            print(r.stdout[-2000:] + r.stderr[-2000:])
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
