#!/usr/bin/env python3
"""Converts a graph-classification dataset from the DGCNN/GIN text format
(the one in github.com/muhanzhang/pytorch_DGCNN's data/ and the GIN paper's
dataset.zip) to the TU Dortmund format (chrsmrrs.github.io/datasets):
NAME_A.txt, NAME_graph_indicator.txt, NAME_graph_labels.txt,
NAME_node_labels.txt and, when the nodes carry them, NAME_node_attributes.txt.

The source format: a line `N` (graphs); per graph a line `n label`, then n
lines `tag m nb_1 ... nb_m [attributes...]` (neighbours 0-based within the
graph). Edges are written as the neighbour lists give them (both directions
of an undirected edge), node ids 1-based and global, as TU files number
them. Python 3 and its standard library only.

  python3 scripts/dgcnn_to_tu.py MUTAG.txt examples/data/MUTAG MUTAG
"""
import os
import sys


def convert(source, folder, name):
    with open(source) as f:
        lines = [line.split() for line in f if line.strip()]
    at = 0

    def take():
        nonlocal at
        if at == len(lines):
            sys.exit(f"{source}: ends after {at} nonblank lines; the counts "
                     "in it promise more")
        at += 1
        return lines[at - 1]

    graphs = int(take()[0])
    edges, indicator, graph_labels, node_labels, attributes = [], [], [], [], []
    base = 0
    for g in range(graphs):
        n, label = (int(v) for v in take()[:2])
        graph_labels.append(label)
        for i in range(n):
            row = take()
            tag, m = int(row[0]), int(row[1])
            if len(row) < 2 + m:
                sys.exit(f"{source}: graph {g + 1}, node {i}: {m} neighbours "
                         f"announced, {len(row) - 2} given")
            for nb in row[2:2 + m]:
                nb = int(nb)
                if not 0 <= nb < n:
                    sys.exit(f"{source}: graph {g + 1}, node {i}: neighbour "
                             f"{nb} is not in [0, {n})")
                edges.append((base + i + 1, base + nb + 1))
            node_labels.append(tag)
            indicator.append(g + 1)
            if len(row) > 2 + m:
                attributes.append(row[2 + m:])
        base += n
    if at != len(lines):
        sys.exit(f"{source}: {len(lines) - at} lines after the last graph")
    if attributes and len(attributes) != base:
        sys.exit(f"{source}: {len(attributes)} of {base} nodes have "
                 "attributes")
    os.makedirs(folder, exist_ok=True)

    def write(suffix, rows):
        with open(os.path.join(folder, f"{name}_{suffix}.txt"), "w") as f:
            f.writelines(r + "\n" for r in rows)

    write("A", (f"{a}, {b}" for a, b in edges))
    write("graph_indicator", (str(g) for g in indicator))
    write("graph_labels", (str(label) for label in graph_labels))
    write("node_labels", (str(t) for t in node_labels))
    if attributes:
        write("node_attributes", (", ".join(a) for a in attributes))
    print(f"{name}: {graphs} graphs, {base} nodes, {len(edges)} directed "
          f"edges, graph labels {sorted(set(graph_labels))}, "
          f"{len(set(node_labels))} node labels, "
          f"{len(attributes[0]) if attributes else 0} attributes per node")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    convert(*sys.argv[1:])
