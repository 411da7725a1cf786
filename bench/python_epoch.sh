#!/bin/sh
# The Python package's training loop against sagac train, same run, same
# graph: GCN (bench/models/gcn64.saga, Adam) on R-MAT scale 20 with 64
# features (a Saga graph file), EPOCHS epochs each, THREADS threads, no
# relabelling (the package binds the graph in the given order, so sagac
# runs with --reorder=none), no row normalisation. Prints the median epoch
# time of each (training step and evaluation) and their ratio.
#
#   bench/python_epoch.sh [WORKDIR]   (default /work/dist; SCALE=20,
#                                      EPOCHS=5, THREADS=2, BUILD=build:
#                                      its bin/sagac and python/ package)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/work/dist}
scale=${SCALE:-20}
epochs=${EPOCHS:-5}
threads=${THREADS:-2}
build=${BUILD:-build}
case $build in /*) ;; *) build=$here/$build ;; esac
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git -C "$here" rev-parse --short HEAD), $(nproc) cores"
file=$(BUILD=$build "$here/bench/rmat_sgf.sh" "$scale" "$work")
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "## sagac train"
OPENBLAS_NUM_THREADS=1 "$build/bin/sagac" train "$here/bench/models/gcn64.saga" \
  --data "$file" --no-normalize --reorder=none --epochs "$epochs" \
  --threads "$threads" --log "$work/python-epoch-sagac.jsonl" | grep -E '^(epoch|final)'
echo "## python: saga.Model.fit"
OPENBLAS_NUM_THREADS=1 PYTHONPATH="$build/python" /usr/bin/python3 - "$file" "$here/bench/models/gcn64.saga" "$epochs" "$threads" "$work/python-epoch-python.jsonl" <<'PY'
import sys
import saga
path, model_file, epochs, threads, log = sys.argv[1:6]
d = saga.load_dataset(path)
m = saga.compile(model_file, threads=int(threads))
m.set_graph(d["src"], d["dst"], d["num_vertices"])
m.set_inputs(x=d["x"], label=d["y"])
for e in m.fit(d["train"], d["val"], d["test"], epochs=int(epochs), log=log,
               progress=False):
    print("epoch %d  loss %.4f  %.1f ms" % (e["epoch"], e["loss"], e["seconds"] * 1e3))
PY
s=$(sed -n 's/.*"seconds": \([0-9.]*\).*/\1/p' "$work/python-epoch-sagac.jsonl" | median)
p=$(sed -n 's/.*"seconds": \([0-9.]*\).*/\1/p' "$work/python-epoch-python.jsonl" | median)
echo "median epoch: sagac $s s, python $p s; python / sagac = $(echo "$p $s" | awk '{printf "%.3f", $1 / $2}')"
