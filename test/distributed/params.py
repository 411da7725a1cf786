"""Shared by the distributed tests: parameter files and their comparison."""


def load(path):
    """A `--save-params` file (runtime/train/ParamsFile.h: a header line with
    the name and shape, then the numbers): name -> list of floats."""
    params, cur, need = {}, None, 0
    for line in open(path):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if need == 0:
            parts = s.split()
            cur, need = parts[0], 1
            for d in parts[1:]:
                need *= int(d)
            params[cur] = []
            continue
        vals = [float(v) for v in s.split()]
        params[cur].extend(vals)
        need -= len(vals)
    return params


def relative_difference(a, b):
    """name -> (||a - b|| / ||a||, the largest element's difference over a's
    largest magnitude), for every parameter of `a` (KeyError when b lacks
    one, ValueError when sizes differ)."""
    out = {}
    for name, x in a.items():
        y = b[name]
        if len(x) != len(y):
            raise ValueError("parameter %s: %d vs %d values" %
                             (name, len(x), len(y)))
        norm = max(sum(v * v for v in x) ** 0.5, 1e-30)
        d = sum((u - v) ** 2 for u, v in zip(x, y)) ** 0.5 / norm
        e = max(abs(u - v) for u, v in zip(x, y)) / max(
            max(abs(v) for v in x), 1e-30)
        out[name] = (d, e)
    return out


def sagac_pids(binary):
    """Processes whose command starts with `binary` (a path)."""
    import os
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = open("/proc/%s/cmdline" % pid, "rb").read()
        except OSError:
            continue
        if cmd.startswith(binary.encode()):
            found.append(int(pid))
    return found
