#!/bin/sh
# Out of core with the next tier in host RAM: GCN (bench/models/gcn64.saga)
# on R-MAT scale 20, in memory and at X = 2, 4, 8 times oversubscription
# (the device budget is the training step's unbounded peak / X), and at 8x
# with selective loading off (8w: source pieces loaded whole) and with
# each op run over every interval before the next (8o: op-major), in ROUNDS
# alternating rounds so that the VM's drift hits every setting alike.
#
#   bench/outofcore_ram.sh [ROUNDS]     (default 2; EPOCHS, default 4;
#                                        SETTINGS, default "0 8 8w 8o 4 2";
#                                        SCALE, default 20; BUILD, build)
#
# Prints each run's summary, breakdown and RESULT line, then per setting
# the median of its rounds' epoch medians and its ratio to in memory. A
# run that fails stops the script with its output (8x needs scale 12 or
# more: a smaller graph's budget is below one chunk).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-2}
epochs=${EPOCHS:-4}
scale=${SCALE:-20}
build=${BUILD:-build}
case $build in /*) ;; *) build=$here/$build ;; esac
bin=$build/bin/saga-bench-suite
out=$(mktemp)
run=$(mktemp)
trap 'rm -f "$out" "$run"' EXIT
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git -C "$here" rev-parse --short HEAD), $(nproc) cores"
r=1
while [ "$r" -le "$rounds" ]; do
  for x in ${SETTINGS:-0 8 8w 8o 4 2}; do
    echo "## round $r, oversubscription ${x}x (0: in memory; w: whole pieces; o: op-major)"
    set -- train --scale "$scale" --threads 2 --epochs "$epochs"
    n=${x%[wo]}
    [ "$x" = 0 ] || set -- "$@" --oversubscribe "$n"
    case $x in *w) set -- "$@" --no-selective ;; *o) set -- "$@" --op-major ;; esac
    "$bin" "$@" > "$run" 2>&1 || {
      cat "$run"; echo "outofcore_ram.sh: setting $x failed" >&2; exit 1; }
    grep -v '^progress  epoch' "$run" | tee -a "$out" |
      grep -E '^(train|breakdown|progress  out of core|RESULT)' | tail -40
    echo "x=$x $(grep '^RESULT' "$out" | tail -1)" >> "$out.x"
  done
  r=$((r + 1))
done
echo "## medians over $rounds rounds"
/usr/bin/python3 - "$out.x" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    x = line.split()[0][2:]
    ms = float(re.search(r" ms=([0-9.]+)", line).group(1))
    loss = re.search(r"last_loss=([0-9.]+)", line).group(1)
    runs.setdefault(x, []).append((ms, loss))
base = statistics.median(ms for ms, _ in runs.get("0", [(float("nan"), "")]))
for x in sorted(runs, key=lambda x: (int(x.rstrip("wo")), x)):
    ms = [m for m, _ in runs[x]]
    med = statistics.median(ms)
    name = {"0": "in memory"}.get(x, f"{x.rstrip('wo')}x" + (" whole pieces" if x.endswith("w") else " op-major" if x.endswith("o") else ""))
    print(f"{name}: epoch {med:.1f} ms "
          f"(rounds {', '.join(f'{m:.1f}' for m in ms)}), {med / base:.2f}x in memory; "
          f"last loss {', '.join(sorted(set(l for _, l in runs[x])))}")
PY
rm -f "$out.x"
