"""gemmkit.walks: every kind of graph input, exact counts against Python integers, the CLI's
answers, result types, labels and errors."""

import csv
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import gemmkit

networkx = pytest.importorskip("networkx")
scipy_sparse = pytest.importorskip("scipy.sparse")

ROOT = Path(__file__).resolve().parents[2]
GRAPH = ROOT / "examples" / "graph.txt"
NAMES = list("ABCDEFGHIJ")


def seed_edges():
    """The teaching texts' graph as (u, v) name pairs, read here without the library."""
    edges = []
    for line in GRAPH.read_text().splitlines():
        line = line.split("#")[0].split()
        if line:
            edges.append((line[0], line[1]))
    return edges


def seed_adjacency():
    """The teaching texts' undirected adjacency matrix as lists of Python ints."""
    a = [[0] * 10 for _ in range(10)]
    for u, v in seed_edges():
        i, j = NAMES.index(u), NAMES.index(v)
        a[i][j] += 1
        if i != j:
            a[j][i] += 1
    return a


def matmul(a, b):
    n, m, p = len(a), len(b), len(b[0])
    return [[sum(a[i][t] * b[t][j] for t in range(m)) for j in range(p)] for i in range(n)]


def powers(a, k):
    """[A^1, ..., A^k] in Python ints."""
    out = [a]
    for _ in range(k - 1):
        out.append(matmul(out[-1], a))
    return out


# The teaching texts' answer (README "Counting walks": C to J, length 4) and its table.
SEED_TABLE_4 = [
    [12, 14, 12, 15, 8, 13, 6, 5, 4, 4],
    [14, 30, 22, 23, 11, 21, 17, 18, 15, 8],
    [12, 22, 27, 16, 6, 23, 9, 13, 8, 7],
    [15, 23, 16, 23, 11, 19, 16, 16, 14, 8],
    [8, 11, 6, 11, 10, 15, 12, 6, 6, 10],
    [13, 21, 23, 19, 15, 48, 31, 23, 20, 31],
    [6, 17, 9, 16, 12, 31, 35, 28, 26, 25],
    [5, 18, 13, 16, 6, 23, 28, 34, 29, 17],
    [4, 15, 8, 14, 6, 20, 26, 29, 26, 16],
    [4, 8, 7, 8, 10, 31, 25, 17, 16, 25],
]


def seed_graph_inputs():
    """The teaching texts' graph in every input form the package takes, with how to name C and J."""
    g = networkx.Graph()
    g.add_nodes_from(NAMES)
    g.add_edges_from(seed_edges())
    dense = np.array(seed_adjacency(), dtype=np.int64)
    return {
        "path": (dict(graph=str(GRAPH), undirected=True), "C", "J"),
        "pathlike": (dict(graph=GRAPH, undirected=True), "C", "J"),
        "networkx": (dict(graph=g), "C", "J"),
        "scipy": (dict(graph=scipy_sparse.csr_matrix(dense), labels=NAMES), "C", "J"),
        "scipy_indices": (dict(graph=scipy_sparse.coo_matrix(dense)), 2, 9),
        "numpy": (dict(graph=dense, labels=NAMES), "C", "J"),
        "edge_list": (dict(graph=seed_edges(), undirected=True), "C", "J"),
        "index_edges": (dict(graph=[(NAMES.index(u), NAMES.index(v)) for u, v in seed_edges()],
                             undirected=True), 2, 9),
        "mtx": (dict(graph=str(ROOT / "examples" / "graph.mtx"), labels=NAMES), "C", "J"),
    }


@pytest.mark.parametrize("form", list(seed_graph_inputs()))
def test_the_seeds_answer_from_every_input(form):
    kwargs, c, j = seed_graph_inputs()[form]
    graph = kwargs.pop("graph")
    count = gemmkit.walks(graph, 4, source=c, target=j, **kwargs)
    assert count == 7 and type(count) is int
    table = gemmkit.walks(graph, 4, **kwargs)
    assert table.counts.dtype == object
    assert table.counts.tolist() == SEED_TABLE_4
    assert all(type(x) is int for x in table.counts.ravel())
    if form in ("scipy_indices", "index_edges"):
        assert table.sources == list(range(10))
    else:
        assert [str(x) for x in table.sources] == NAMES and table.targets == table.sources


def test_the_seeds_table_prints_like_the_cli():
    text = str(gemmkit.walks(str(GRAPH), 4, undirected=True))
    lines = text.splitlines()
    assert lines[0].split() == ["from/to"] + NAMES
    assert lines[3].split() == ["C"] + [str(x) for x in SEED_TABLE_4[2]]


@pytest.mark.parametrize("length", [1, 2, 5, 17, 36, 61, 64])
def test_exact_counts_equal_python_integer_powers(length):
    expected = powers(seed_adjacency(), length)[-1]
    got = gemmkit.walks(str(GRAPH), length, undirected=True)
    assert got.counts.tolist() == expected
    if length >= 61:
        assert max(max(row) for row in expected) > 2**64  # past any fixed-width integer
        assert got.bound_bits > 64


def test_all_lengths_row_column_and_pair():
    expected = powers(seed_adjacency(), 62)
    g = networkx.Graph(seed_edges())
    nx_order = [NAMES.index(x) for x in g.nodes]

    row = gemmkit.walks(g, 62, source="C", all_lengths=True)
    assert row.counts.shape == (62, 10) and row.lengths == list(range(1, 63))
    assert row.sources == ["C"] and row.targets == list(g.nodes)
    assert row.counts.tolist() == [[p[NAMES.index("C")][t] for t in nx_order] for p in expected]

    column = gemmkit.walks(g, 62, target="J")
    assert column.counts.shape == (10,) and column.targets == ["J"]
    assert column.counts.tolist() == [expected[-1][s][NAMES.index("J")] for s in nx_order]

    pair = gemmkit.walks(g, 62, source="C", target="J", all_lengths=True)
    assert pair.counts.tolist() == [p[NAMES.index("C")][NAMES.index("J")] for p in expected]
    assert pair["C", "J", 40] == expected[39][NAMES.index("C")][NAMES.index("J")]


def _limb_words(value: int, limbs: int) -> list:
    """value as `limbs` 64-bit two's-complement words, least significant first."""
    return [(value >> (64 * i)) & (2**64 - 1) for i in range(limbs)]


def test_read_exact_table_gives_python_ints(tmp_path):
    values = [[0, 1, -1, 2**63 - 1], [-(2**63), 2**64 + 5, -(2**100) - 3, 3**80]]
    limbs = 3
    words = np.array([[_limb_words(v, limbs) for v in row] for row in values], dtype="<u8")
    assert words.shape == (2, 4, limbs)
    path = tmp_path / "table.npy"
    np.save(path, words)
    table = gemmkit.read_exact_table(path)
    assert table.shape == (2, 4) and table.dtype == object
    assert table.tolist() == values
    # A sequence of tables: shape (tables, rows, cols, limbs) gives (tables, rows, cols).
    stack = np.array([words, words[::-1]], dtype="<u8")
    np.save(tmp_path / "stack.npy", stack)
    tables = gemmkit.read_exact_table(tmp_path / "stack.npy")
    assert tables.shape == (2, 2, 4) and tables.dtype == object
    assert tables.tolist() == [values, values[::-1]]
    np.save(tmp_path / "five.npy", stack[None])
    with pytest.raises(gemmkit.InputError, match="5 dimensions"):
        gemmkit.read_exact_table(tmp_path / "five.npy")
    np.save(tmp_path / "floats.npy", np.zeros((2, 4, 1)))
    with pytest.raises(gemmkit.InputError, match="floats.npy"):
        gemmkit.read_exact_table(tmp_path / "floats.npy")
    with pytest.raises(gemmkit.InputError):
        gemmkit.read_exact_table(tmp_path / "missing.npy")


def test_length_60_equals_the_cli(tmp_path):
    cli = os.environ.get("GEMMKIT_CLI")
    if not cli:
        pytest.skip("GEMMKIT_CLI (the gemmkit executable) is not set: scripts/test_python.sh "
                    "sets it from the build tree")
    out = tmp_path / "counts.csv"
    subprocess.run([cli, "walks", str(GRAPH), "--undirected", "--length", "60", "-o", str(out)],
                   check=True, capture_output=True)
    with out.open() as f:
        rows = list(csv.reader(f))
    ours = gemmkit.walks(str(GRAPH), 60, undirected=True)
    assert rows[0] == ["from/to"] + [str(x) for x in ours.targets]
    assert [r[0] for r in rows[1:]] == [str(x) for x in ours.sources]
    assert [[int(x) for x in r[1:]] for r in rows[1:]] == ours.counts.tolist()
    # The exact binary table: uint64 limbs, read back as the same Python ints.
    npy = tmp_path / "counts.npy"
    subprocess.run([cli, "walks", str(GRAPH), "--undirected", "--length", "60", "-o", str(npy)],
                   check=True, capture_output=True)
    assert gemmkit.read_exact_table(npy).tolist() == ours.counts.tolist()
    # Every length 1..60 in one file: (60, 10, 10, limbs) words, the lengths' axis first.
    every = gemmkit.walks(str(GRAPH), 60, undirected=True, all_lengths=True)
    subprocess.run([cli, "walks", str(GRAPH), "--undirected", "--length", "60", "--all-lengths",
                    "-o", str(npy)], check=True, capture_output=True)
    assert np.load(npy).shape[:3] == (60, 10, 10)
    tables = gemmkit.read_exact_table(npy)
    assert tables.shape == (60, 10, 10)
    assert tables.tolist() == every.counts.tolist()
    assert tables[59].tolist() == ours.counts.tolist()
    # Counts that fit int64 are plain int64 for numpy, the same axes.
    subprocess.run([cli, "walks", str(GRAPH), "--undirected", "--length", "20", "--all-lengths",
                    "-o", str(npy)], check=True, capture_output=True)
    small = np.load(npy)
    assert small.dtype == np.int64 and small.shape == (20, 10, 10)
    assert small.tolist() == every.counts[:20].tolist()
    pair = subprocess.run([cli, "walks", str(GRAPH), "--undirected", "--length", "60", "--from",
                           "C", "--to", "J"], check=True, capture_output=True, text=True)
    assert int(pair.stdout) == gemmkit.walks(str(GRAPH), 60, undirected=True, source="C",
                                             target="J") > 2**64


def test_result_types():
    g = networkx.Graph(seed_edges())
    exact = gemmkit.walks(g, 20)
    as_int64 = gemmkit.walks(g, 20, result="int64")
    assert as_int64.counts.dtype == np.int64
    assert as_int64.counts.tolist() == exact.counts.tolist()
    in_int64_mode = gemmkit.walks(g, 20, mode="int64")
    assert in_int64_mode.counts.dtype == np.int64
    assert in_int64_mode.counts.tolist() == exact.counts.tolist()
    assert gemmkit.walks(g, 20, mode="int64", result="int").counts.dtype == object
    as_float = gemmkit.walks(g, 60, result="float")
    exact60 = gemmkit.walks(g, 60)
    assert as_float.counts.dtype == np.float64
    assert as_float.counts.tolist() == [[float(x) for x in row] for row in exact60.counts.tolist()]
    float_mode = gemmkit.walks(g, 60, mode="float")
    assert float_mode.rounded and float_mode.counts.dtype == np.float64
    np.testing.assert_allclose(float_mode.counts, as_float.counts, rtol=1e-12)
    assert type(gemmkit.walks(g, 5, source="C", target="J", result="int64")) is int
    assert type(gemmkit.walks(g, 5, source="C", target="J", result="float")) is float
    assert np.asarray(exact) is exact.counts
    assert np.asarray(as_int64, dtype=np.float64).dtype == np.float64
    frame = exact.to_frame()
    assert frame.loc["C", "J"] == exact["C", "J"]


def test_int64_overflow_names_the_first_count_that_does_not_fit():
    # int64 overflows at length 36 on the teaching texts' graph (README).
    with pytest.raises(gemmkit.NumericError, match=r"length 36 from '\w' to '\w'.*64-bit"):
        gemmkit.walks(str(GRAPH), 36, undirected=True, result="int64")
    with pytest.raises(ArithmeticError, match=r"int64 overflow: .* length \d+ from '\w' to '\w'"):
        gemmkit.walks(str(GRAPH), 60, undirected=True, mode="int64")
    # No wrapping: just below, every count is exact.
    below = gemmkit.walks(str(GRAPH), 35, undirected=True, result="int64")
    assert below.counts.tolist() == powers(seed_adjacency(), 35)[-1]


def test_weighted_graphs_against_python_integers():
    rng = np.random.default_rng(7)
    n = 12
    weights = rng.integers(-3, 6, size=(n, n))
    weights[rng.random((n, n)) < 0.5] = 0
    expected = powers(weights.tolist(), 30)

    dense = gemmkit.walks(weights, 30, all_lengths=True)
    assert dense.counts.tolist() == expected
    sparse = gemmkit.walks(scipy_sparse.csr_matrix(weights), 30)
    assert sparse.counts.tolist() == expected[-1]
    edges = [(i, j, int(weights[i, j])) for i in range(n) for j in range(n) if weights[i, j]]
    assert gemmkit.walks(edges, 30, n=n).counts.tolist() == expected[-1]
    d = networkx.DiGraph()
    d.add_nodes_from(range(n))
    d.add_weighted_edges_from(edges, weight="w")
    assert gemmkit.walks(d, 30, weight="w").counts.tolist() == expected[-1]
    # Integral float weights are integers.
    assert gemmkit.walks(weights.astype(float), 30).counts.tolist() == expected[-1]


def test_networkx_multigraph_loops_and_direction():
    m = networkx.MultiGraph()
    m.add_edges_from([("x", "y"), ("x", "y"), ("y", "z"), ("z", "z")])
    # Parallel edges add up; a loop of an undirected graph counts once.
    a = [[0, 2, 0], [2, 0, 1], [0, 1, 1]]
    assert gemmkit.walks(m, 9).counts.tolist() == powers(a, 9)[-1]
    d = networkx.DiGraph([("x", "y"), ("y", "z"), ("z", "x")])
    assert gemmkit.walks(d, 3, source="x", target="x") == 1
    assert gemmkit.walks(d, 2, source="x", target="z") == 1
    assert gemmkit.walks(d, 2, source="z", target="x") == 0
    undirected_edges = gemmkit.walks([("x", "y"), ("y", "z"), ("z", "z")], 9, undirected=True)
    assert undirected_edges.counts.tolist() == powers([[0, 1, 0], [1, 0, 1], [0, 1, 1]], 9)[-1]


def test_bad_input_raises_value_errors_with_the_library_message():
    g = networkx.Graph(seed_edges())
    with pytest.raises(ValueError, match="walk length must be at least 1, not -1"):
        gemmkit.walks(g, -1)
    with pytest.raises(ValueError, match="walk length must be at least 1, not 0"):
        gemmkit.walks(str(GRAPH), 0, undirected=True)
    with pytest.raises(gemmkit.InputError, match="no vertex named 'Z'"):
        gemmkit.walks(g, 3, source="Z")
    with pytest.raises(gemmkit.InputError, match=r"no vertex named 'Z' in '.*graph.txt'"):
        gemmkit.walks(str(GRAPH), 3, undirected=True, target="Z")
    with pytest.raises(gemmkit.InputError, match="no vertex named '10'.*named 0 to 9"):
        gemmkit.walks(np.eye(10, dtype=int), 3, source=10)
    w = networkx.Graph()
    w.add_edge("a", "b", weight=1.5)
    with pytest.raises(ValueError, match="weight 1.5 is not an integer"):
        gemmkit.walks(w, 2, weight="weight")
    with pytest.raises(ValueError, match="not an integer"):
        gemmkit.walks(np.array([[0, 0.5], [1, 0]]), 2)
    with pytest.raises(ValueError, match="not an integer"):
        gemmkit.walks([(0, 1, 2.5)], 2)
    with pytest.raises(ValueError, match="does not fit a 64-bit integer"):
        gemmkit.walks([(0, 1, 2**70)], 2)
    with pytest.raises(ValueError, match="must be square"):
        gemmkit.walks(np.ones((2, 3), dtype=int), 2)
    with pytest.raises(ValueError, match="must be square"):
        gemmkit.walks(scipy_sparse.csr_matrix(np.ones((3, 2))), 2)
    with pytest.raises(ValueError, match="edge 0 -> 5 outside the 3 vertices"):
        gemmkit.walks([(0, 5)], 2, n=3)
    with pytest.raises(ValueError, match="unknown mode"):
        gemmkit.walks(g, 2, mode="fast")
    with pytest.raises(ValueError, match="applies to edge lists"):
        gemmkit.walks(str(ROOT / "examples" / "graph.mtx"), 2, undirected=True)
    with pytest.raises(gemmkit.InputError, match="nonexistent"):
        gemmkit.walks(str(ROOT / "examples" / "nonexistent.txt"), 2)


def test_gil_is_released_during_the_count():
    import threading
    import time

    # A large enough graph that the count takes a while; another thread must make progress.
    n = 600
    ring = [(v, (v + 1) % n) for v in range(n)] + [(v, (v * 7 + 3) % n) for v in range(n)]
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    thread = threading.Thread(target=tick)
    thread.start()
    start = time.perf_counter()
    try:
        gemmkit.walks(ring, 200, undirected=True, backend="cpu")
    finally:
        elapsed = time.perf_counter() - start
        done.set()
        thread.join()
    if elapsed < 0.05:
        pytest.skip(f"the count took {elapsed * 1e3:.0f} ms, too short to tell")
    assert len([t for t in ticks if start <= t <= start + elapsed]) >= 5


def test_progress_lines_and_cancelling():
    lines = []
    exact = gemmkit.walks(str(GRAPH), 60, undirected=True, method="dense", progress=lines.append)
    assert lines and all("product" in line for line in lines)
    assert exact.counts.tolist() == powers(seed_adjacency(), 60)[-1]

    def stop(line):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        gemmkit.walks(str(GRAPH), 60, undirected=True, method="dense", progress=stop)


def test_out_of_memory_is_a_memory_error_with_the_figures():
    with pytest.raises(MemoryError, match=r"counting walks on 3000000 vertices.* needs [0-9.]+ GiB "
                                          r"of host memory, [0-9.]+ GiB available") as info:
        gemmkit.walks([(0, 1), (1, 2)], 3, n=3_000_000)
    assert isinstance(info.value, gemmkit.OutOfMemoryError)
