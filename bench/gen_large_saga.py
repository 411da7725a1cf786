#!/usr/bin/env python3
"""Writes a large, valid .saga file for front-end scaling measurements.

Usage: gen_large_saga.py LINES > big.saga

The file has one graph, many distinct layers (each with parameters and all
four stages, about 12 lines) and one model that chains every layer, so each
line is parsed, checked and generated into IR.
"""
import sys

def main():
    lines = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    out = ["graph(self_loops) {", "  vertex x: f32[32];", "  vertex label: class[4];", "}", ""]
    n = max(1, (lines - 10) // 14)
    for i in range(n):
        out += [
            f"layer L{i}(in: int, out: int) {{",
            "  param W: f32[in, out] = glorot;",
            "  param b: f32[out] = zeros;",
            "  param g: f32[in, out] = glorot;",
            "  scatter(v) { h = v.h * rsqrt(v.deg); s = sum(v.h, -1); }",
            "  apply_edge(e) {",
            "    w = sigmoid(e.src.s + e.dst.s);",
            "    return e.src.h * w;",
            "  }",
            "  gather(sum);",
            "  apply_vertex(v, a) {",
            "    return relu((a * rsqrt(v.deg)) @ W + v.h @ g + b);",
            "  }",
            "}",
        ]
    out.append("model Big {")
    out.append("  h = x;")
    for i in range(n):
        out.append(f"  h = L{i}(32, 32)(h);")
    out.append("  out = h;")
    out.append("  loss = cross_entropy(L0(32, 4)(h), label);")
    out.append("}")
    sys.stdout.write("\n".join(out) + "\n")

if __name__ == "__main__":
    main()
