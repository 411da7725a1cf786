#!/usr/bin/env bash
# Forward-pass benchmark: Saga against PyTorch on the same machine, same run.
#
#   bench/forward.sh
#
# Builds saga-bench-forward, installs Debian's python3-torch (plus numpy and
# scipy) when missing, then for Cora (examples/gcn.saga) and an R-MAT graph
# (bench/models/gcn64.saga: 2^20 vertices, edge factor 16, 64 features) runs
#   1. saga-bench-forward, which times JIT compilation and the forward pass
#      and dumps the graph, features, parameters and its prediction, and
#   2. bench/pytorch_gcn.py on that dump (torch.sparse.mm, CSR adjacency),
#      which times the same forward pass and checks it against Saga's logits,
# and prints a table and writes bench/results/forward.csv (the raw output goes
# to bench/results/forward.log).
#
# Settings (environment): THREADS (2), SCALE (20), EDGE_FACTOR (16), SEED (1),
# REPEAT_CORA (20), REPEAT_RMAT (5), BUILD (build), JOBS (build jobs; default
# ninja's), DATA (where the dumps go; $BUILD/bench-data, ~0.5 GB for scale 20),
# RESULTS (bench/results: where forward.csv and forward.log go),
# SAGA_NO_BUILD (set: use $BUILD's saga-bench-forward as it is), PEERS (a
# venv whose bin/python3 runs PyTorch; default Debian's /usr/bin/python3),
# SAGA_NO_INSTALL (set: never apt-get; without torch the PyTorch runs are
# skipped with a line saying so, after reading Saga's dumps).
# Peak memory at scale 20 is about 1.9 GB for either system (the log has it).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
THREADS="${THREADS:-2}"
SCALE="${SCALE:-20}"
EDGE_FACTOR="${EDGE_FACTOR:-16}"
SEED="${SEED:-1}"
REPEAT_CORA="${REPEAT_CORA:-20}"
REPEAT_RMAT="${REPEAT_RMAT:-5}"
BUILD="${BUILD:-build}"
DATA="${DATA:-$BUILD/bench-data}"
if [ -n "${PEERS:-}" ]; then
  PYTHON="$PEERS/bin/python3"
  [ -x "$PYTHON" ] || { echo "forward.sh: PEERS=$PEERS has no bin/python3" >&2; exit 1; }
else
  PYTHON=/usr/bin/python3 # Debian's; the first python3 on PATH may be another
fi
RESULTS="${RESULTS:-bench/results}"
mkdir -p "$RESULTS"

# --- build -------------------------------------------------------------------
if [ -z "${SAGA_NO_BUILD:-}" ]; then
  if [ ! -f "$BUILD/build.ninja" ]; then
    cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
  fi
  cmake --build "$BUILD" --target saga-bench-forward ${JOBS:+-j "$JOBS"}
fi
BENCH="$BUILD/bin/saga-bench-forward"

# --- PyTorch -----------------------------------------------------------------
if [ -z "${PEERS:-}${SAGA_NO_INSTALL:-}" ] &&
   ! "$PYTHON" -c 'import torch, numpy' 2>/dev/null; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get install -y python3-torch python3-numpy python3-scipy
fi

# --- runs --------------------------------------------------------------------
LOG="$RESULTS/forward.log"
{
  echo "# bench/forward.sh $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
       "$(git diff --quiet HEAD -- . ':!bench/results' 2>/dev/null ||
          echo '(with uncommitted changes)')"
  git status --short --untracked-files=no -- . ':!bench/results' 2>/dev/null |
    sed 's/^/#   /'
  echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) CPUs," \
       "$(free -g | awk '/Mem:/ {print $2}') GiB; threads $THREADS"
  echo "# load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$LOG"

TIME=()
[ -x /usr/bin/time ] && TIME=(/usr/bin/time -f "memory    peak RSS %M KiB, wall %e s")
run() { # label, command...
  echo "== $1" | tee -a "$LOG"
  shift
  local status=0
  "${TIME[@]}" "$@" 2>&1 | tee -a "$LOG" || status=$?
  # 77: a peer that is not installed (its line says so); the rest goes on.
  [ "$status" = 0 ] || [ "$status" = 77 ] || exit "$status"
}

run "saga cora" "$BENCH" --graph cora --threads "$THREADS" \
    --repeat "$REPEAT_CORA" --seed "$SEED" --dump-graph "$DATA/cora"
run "pytorch cora" "$PYTHON" bench/pytorch_gcn.py "$DATA/cora" \
    --threads "$THREADS" --repeat "$REPEAT_CORA"
RMAT="rmat-s$SCALE-e$EDGE_FACTOR"
run "saga $RMAT" "$BENCH" --graph rmat --scale "$SCALE" \
    --edge-factor "$EDGE_FACTOR" --threads "$THREADS" --repeat "$REPEAT_RMAT" \
    --seed "$SEED" --dump-graph "$DATA/$RMAT"
run "pytorch $RMAT" "$PYTHON" bench/pytorch_gcn.py "$DATA/$RMAT" \
    --threads "$THREADS" --repeat "$REPEAT_RMAT" --graph rmat

echo "# load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$LOG"

# --- table -------------------------------------------------------------------
"$PYTHON" - "$LOG" "$RESULTS/forward.csv" "$RMAT" <<'EOF'
import csv, sys
log, out, rmat = sys.argv[1:]
rows = []
for line in open(log):
    if line.startswith("RESULT "):
        rows.append(dict(kv.split("=", 1) for kv in line.split()[1:]))
saga = {r["graph"]: r for r in rows if r["system"] == "saga"}
fields = ["system", "graph", "vertices", "edges", "threads", "compile_ms",
          "jit_ms", "forward_ms", "ratio_pytorch_over_saga", "max_abs_diff"]
table = []
for r in rows:
    s = saga[r["graph"]]
    table.append({
        "system": r["system"],
        "graph": rmat if r["graph"] == "rmat" else r["graph"],
        "vertices": r["vertices"], "edges": r["edges"],
        "threads": r["threads"],
        "compile_ms": r.get("compile_ms", ""),
        "jit_ms": r.get("jit_ms", ""),
        "forward_ms": r["forward_ms"],
        "ratio_pytorch_over_saga":
            "" if r["system"] == "saga"
            else f"{float(r['forward_ms']) / float(s['forward_ms']):.3f}",
        "max_abs_diff": r.get("max_abs_diff", ""),
    })
with open(out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=fields)
    w.writeheader()
    w.writerows(table)
print()
print(f"{'system':8} {'graph':14} {'edges':>9} {'compile ms':>11} "
      f"{'(JIT ms)':>9} {'forward ms':>11} {'PyTorch/Saga':>13}  "
      f"logits max|diff|")
for t in table:
    print(f"{t['system']:8} {t['graph']:14} {t['edges']:>9} "
          f"{t['compile_ms'] or '-':>11} {t['jit_ms'] or '-':>9} "
          f"{float(t['forward_ms']):>11.2f} "
          f"{t['ratio_pytorch_over_saga'] or '-':>13}  {t['max_abs_diff'] or '-'}")
print(f"\nedges include the self loops; compile = front end + lowering + JIT;"
      f" PyTorch runs eagerly (no compile step).")
for t in table:
    if t["max_abs_diff"] and not float(t["max_abs_diff"]) <= 1e-3:
        print(f"WARNING: on {t['graph']} PyTorch's logits differ from Saga's "
              f"by {t['max_abs_diff']}")
print(f"wrote {out} and {log}")
EOF
