#!/bin/sh
# No Saga binary defines an IFUNC symbol. A GNU ifunc (what
# __attribute__((target_clones)) makes) has its resolver called by the
# dynamic loader while it relocates the binary, before the sanitizers'
# runtimes start: under TSan every test binary crashed before main (issue
# 41). Dispatch on the CPU once at run time instead (RowNormalize.cpp).
#   no_ifunc.sh BUILD_DIR
set -eu
build=$1
status=0
checked=0
for f in "$build"/bin/* "$build"/lib/libsaga.so; do
  [ -f "$f" ] && [ -x "$f" ] || continue
  head -c 4 "$f" | grep -q 'ELF' || continue
  checked=$((checked + 1))
  found=$(readelf -sW "$f" | awk '$4 == "IFUNC" && $7 != "UND" {print $8}' | sort -u)
  if [ -n "$found" ]; then
    echo "no_ifunc: ${f#$build/} defines IFUNC symbols:"
    echo "$found" | head
    status=1
  fi
done
[ "$checked" -gt 0 ] || { echo "no_ifunc: no binaries under $build"; exit 1; }
[ $status -eq 0 ] && echo "no_ifunc: $checked binaries, no IFUNC symbol"
exit $status
