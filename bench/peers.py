"""What the bench's Python peers share: importing a peer library that may
not be installed.

A peer whose library is not installed for this interpreter is skipped: the
script prints one line saying which and why and exits SKIPPED (77), which
the bench scripts report as "skipped" and go on. A library that is
installed but fails to load (a missing dependency of its own, a DGL built
for another torch) is an error like any other: it must not pass as
"not installed".
"""
import importlib
import importlib.util
import sys

SKIPPED = 77


def skip(system, why):
    print(f"{system}: skipped, {why}", flush=True)
    sys.exit(SKIPPED)


def need(module, system, what=None):
    """`module` imported, or the skip line and exit SKIPPED when its
    top-level package is not installed for this interpreter."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        top = module.split(".")[0]
        if e.name is None or e.name.split(".")[0] != top:
            raise  # installed, but something it needs is missing
        skip(system, f"{what or top} is not installed for {sys.executable} "
                     f"({e})")


def need_spec(module, system, what=None):
    """The skip line and exit SKIPPED when `module` is not installed,
    without importing it (torch and PyG take seconds to load)."""
    if importlib.util.find_spec(module) is None:
        skip(system, f"{what or module} is not installed for "
                     f"{sys.executable}")
