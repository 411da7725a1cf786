#!/bin/sh
# The layers point one way (CONTRIBUTING.md, docs/architecture.md):
#   support -> dialect -> parser, passes, analysis, codegen -> runtime -> api
#   -> tools, python
# Each folder's #includes name only the folders allowed below it, and the
# runtime library calls nothing of the front end (ANTLR) or the passes.
#   check_layers.sh SOURCE_DIR BUILD_DIR
set -eu
src=$1 build=$2
status=0
# folder, then the project folders its files may include
check() {
  dir=$1; shift
  allowed="$*"
  for f in $(find "$src/$dir" -name '*.h' -o -name '*.cpp'); do
    for inc in $(sed -n 's/^#include "\([a-z]*\)\/.*/\1/p' "$f" | sort -u); do
      # LLVM and MLIR are below every layer but support/ (standard library
      # only); other quoted includes are generated or local.
      case "$inc" in
        llvm|mlir) [ "$dir" = support ] || continue ;;
        support|dialect|parser|passes|analysis|codegen|runtime|api|tools|python|emulator|bench) ;;
        *) continue ;;
      esac
      case " $allowed " in
        *" $inc "*) ;;
        *) echo "layering: ${f#$src/} includes $inc/ (allowed: $allowed)"
           status=1 ;;
      esac
    done
  done
}
check support support
check dialect dialect support
check parser parser dialect support
check analysis analysis dialect support
check codegen codegen dialect support
check passes passes analysis codegen dialect support
check runtime runtime analysis codegen dialect support
check api api runtime parser passes analysis codegen dialect support

# The runtime's archive references no ANTLR and no pass or front-end entry.
lib="$build/runtime/libSagaRuntime.a"
test -f "$lib" || { echo "layering: no $lib"; exit 1; }
bad=$(nm -C --undefined-only "$lib" 2>/dev/null |
      grep -E 'antlr4::|saga::compileSaga|saga::buildLowerToPlanPipeline|saga::compileModel' |
      sort -u || true)
if [ -n "$bad" ]; then
  echo "layering: libSagaRuntime.a calls the front end or the passes:"
  echo "$bad"
  status=1
fi
if [ $status -eq 0 ]; then
  echo "layering: every include points down; libSagaRuntime.a needs no front end"
fi
exit $status
