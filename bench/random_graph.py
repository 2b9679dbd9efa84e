#!/usr/bin/env python3
"""Write a seeded random undirected graph as an edge list: N vertices, N * DEGREE / 2 edges
between distinct random pairs (average degree DEGREE), one 'u v' line each; read it with
`gemmkit walks FILE --undirected`.

Usage: random_graph.py N DEGREE SEED > graph.txt
"""
import random
import sys

if len(sys.argv) != 4:
    sys.exit(__doc__)
n, degree, seed = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
edges = set()
target = int(n * degree / 2)
while len(edges) < target:
    u, v = rng.randrange(n), rng.randrange(n)
    if u != v:
        edges.add((min(u, v), max(u, v)))
print(f"# random graph: {n} vertices, {target} undirected edges, seed {seed}")
for u, v in sorted(edges):
    print(u, v)
