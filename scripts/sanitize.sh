#!/usr/bin/env bash
# The sanitizer suites: `make test-asan` (ASan + UBSan, build-asan/) and
# `make test-tsan` (TSan, build-tsan/). Saga's own code is instrumented
# (SAGA_SANITIZE); Debian's libraries (LLVM, MLIR, OpenBLAS, Open MPI) are
# not. Suppressions (test/sanitizers/*.supp) name third-party code only,
# each with its reason.
#   ASan + UBSan: every ctest test but the three whose host is not Saga's:
#     python-package and model-references (the interpreter is not
#     instrumented: ASan's runtime would have to be preloaded into CPython
#     and NumPy) and
#     install-find-package (the install carries no sanitizer flags to the
#     project built against it).
#   TSan: the tests of the threaded runtime: the thread pool under every
#     kernel (training, fused and threaded tests), the out-of-core transfer
#     thread, the mini-batch loader thread, the halo buffer, and the MPI
#     runs (ranks with a loader thread beside the trainer under
#     MPI_THREAD_MULTIPLE, across namespaced hosts too) with their
#     kill-and-resume tests. OpenBLAS runs single-threaded
#     (OPENBLAS_NUM_THREADS=1): its own threads synchronise in code TSan
#     does not see, so their writes would be reported as races on Saga's
#     buffers. history_size=7: the loader thread's accesses must still be
#     in TSan's history when a report is made, or its stack is lost and no
#     suppression of Open MPI's frames can match (see tsan.supp).
#   The tier (--tier, address only; `make test-sanitizer-tier`, which CI
#     runs after `make test`): lit and the fast dialect, runtime, engine and CUDA
#     unit tests (ctest label sanitizer-tier), building only what they need
#     (target saga-sanitizer-tier).
# Usage: scripts/sanitize.sh address|thread [--tier] [ctest arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?address or thread}
shift
tier=0
if [ "${1:-}" = --tier ]; then
  tier=1
  shift
  if [ "$kind" != address ]; then
    echo "sanitize.sh: --tier is the ASan + UBSan tier, not '$kind'" >&2
    exit 2
  fi
fi
jobs=${JOBS:-$(nproc)}
root=$PWD
case $kind in
  address) dir=build-asan ;;
  thread) dir=build-tsan ;;
  *) echo "sanitize.sh: address or thread, not '$kind'" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSAGA_SANITIZE="$kind" >/dev/null
if [ $tier = 1 ]; then
  cmake --build "$dir" -j "$jobs" --target saga-sanitizer-tier
else
  cmake --build "$dir" -j "$jobs"
fi
cd "$dir"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# An mpirun first on PATH that runs the real one as BODY says (printf
# format: %s is the real mpirun, run as `exec -a mpirun`: an mpirun started
# by its absolute path passes --prefix to remote daemons, which the
# multi-host test's namespaced launcher does not take).
wrapMpirun() {
  wrap=$(mktemp -d)
  trap 'rm -rf "$wrap"' EXIT
  printf "#!/usr/bin/env bash\n$1\n" "$(command -v mpirun)" > "$wrap/mpirun"
  chmod +x "$wrap/mpirun"
  export PATH=$wrap:$PATH
}
if [ "$kind" = address ]; then
  # allow_user_poisoning=0: LLVM's and MLIR's headers poison allocator
  # memory in Saga's instrumented code that their uninstrumented libraries
  # then touch (false use-after-poison in memmove).
  # intercept_tls_get_addr=0: GCC 12's runtime (up to GCC 13 and LLVM 16)
  # takes a dynamic TLS block that happens to start 16 bytes into a page
  # for a pre-2.25 glibc header and reads the two words before it; LSan's
  # tracer then dies at exit ("Tracer caught signal 11") in a test that
  # passed. Dynamic TLS comes from the libraries the CUDA tests dlopen (the
  # stand-in driver, NVRTC, the emulated modules); at 2ca6241 it failed
  # two of them (bench/results/sanitizers/asan-2ca6241.log).
  export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=0:allow_user_poisoning=0:intercept_tls_get_addr=0
  export LSAN_OPTIONS=suppressions=$root/test/sanitizers/lsan.supp:print_suppressions=0
  # Ranks under mpirun run without leak detection. Open MPI and PMIx
  # dlclose their plugins at MPI_Finalize, so what those keep is reported
  # as leaked from "<unknown module>", which no suppression can name (Open
  # MPI 4.1 has no setting that keeps them loaded). Every other ASan and
  # UBSan check stays on for the ranks, and the same Saga code runs
  # leak-checked in the single-process tests.
  wrapMpirun 'ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" exec -a mpirun %s "$@"'
  filter=(-E '^(python-package|install-find-package|model-references)$')
  if [ $tier = 1 ]; then
    filter=(-L sanitizer-tier)
  fi
else
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:history_size=7:suppressions=$root/test/sanitizers/tsan.supp
  export OPENBLAS_NUM_THREADS=1
  filter=(-R 'ThreadPool|TrainingThreads|Fusion|PlanRunner|OutOfCore|MiniBatch|HaloBuffer|Sampler|TrainingCheckpoint|SourceIntervals|^distributed-|^reliability-kill-resume-')
fi
log=sanitize-$kind.log
[ $tier = 1 ] && log=sanitize-$kind-tier.log
ctest -j "$jobs" --output-on-failure "${filter[@]}" "$@" 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
