"""Checks README's training transcript against a sagac train output.

Usage: readme_transcript.py README.md OUTPUT
The README block's lines that start with "epoch  200/200" and "final (" must
equal the output's lines of the same start, with the milliseconds masked.
Exits 1 naming the line that drifted.
"""
import re
import sys

readme, output = open(sys.argv[1]).read(), open(sys.argv[2]).read()


def mask(line):
    return re.sub(r"[0-9.]+ ms(/epoch)?", "<ms>", line.strip())


for start in ("epoch  200/200", "final ("):
    stated = [l for l in readme.splitlines() if l.startswith(start)]
    printed = [l for l in output.splitlines() if l.startswith(start)]
    if len(stated) != 1 or len(printed) != 1:
        sys.exit("README has %d and the output %d lines starting %r"
                 % (len(stated), len(printed), start))
    if mask(stated[0]) != mask(printed[0]):
        sys.exit("README's transcript drifted:\n  README: %s\n  sagac:  %s"
                 % (stated[0], printed[0]))
print("README's transcript matches")
