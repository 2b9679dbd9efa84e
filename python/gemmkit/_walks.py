"""Exact walk counts: ``gemmkit.walks(graph, length, ...)``.

The graph comes in as a networkx graph, a scipy sparse matrix, a dense numpy adjacency
matrix, an edge list or a file the library reads; the library counts (exactly by default,
without the GIL) and the counts come back as Python ints (one pair) or as a
:class:`WalkCounts` holding a numpy array and the vertex labels of its rows and columns.
"""

from __future__ import annotations

import operator
import os
import sys
from typing import Any, Callable, Dict, Hashable, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _gemmkit
from ._gemmkit import InputError, NumericError, UsageError

_MODES = {"exact": "exact", "int64": "int64", "float": "float", "float64": "float"}
_RESULTS = ("int", "int64", "float")


class WalkCounts:
    """Walk counts for one source, one target or every pair (and one length or each of 1..k).

    Attributes:
        counts: numpy array. Its axes: the lengths (only with ``all_lengths=True``), then the
            sources (absent when ``source=`` was given), then the targets (absent when
            ``target=`` was given). dtype ``object`` holding Python ints (``result='int'``,
            exact at any size), ``int64`` or ``float64``.
        sources, targets: the labels of the rows and columns of the table, in order: the
            networkx nodes, the edge list's names, the file's vertex names, or the vertex
            indices (ints) of a graph without names. A single given source or target is a
            one-element list.
        lengths: the walk lengths, one per leading entry of ``counts`` with ``all_lengths``.
        mode, method, bound_bits, primes, rounded, gpu: what the engine did (see
            :func:`walks`).

    ``result[u, v]`` (or ``result[u, v, length]`` with ``all_lengths``) is one count by
    labels; ``to_frame()`` a pandas DataFrame labelled like the CLI's table; ``str(result)``
    the table itself.
    """

    def __init__(self, counts: np.ndarray, sources: List[Any], targets: List[Any],
                 lengths: List[int], axes: Tuple[bool, bool, bool], info: Dict[str, Any]):
        self.counts = counts
        self.sources = sources
        self.targets = targets
        self.lengths = lengths
        self._axes = axes  # (lengths, sources, targets): whether counts has that axis
        self.mode: str = info["mode"]
        self.method: str = info["method"]
        self.bound_bits: int = info["bound_bits"]
        self.primes: int = info["primes"]
        self.rounded: bool = info["rounded"]
        self.gpu: Optional[Dict[str, Any]] = info["gpu"]

    def __array__(self, dtype=None, copy=None):
        if dtype is None and not copy:
            return self.counts
        return self.counts.astype(dtype if dtype is not None else self.counts.dtype)

    def _full(self) -> np.ndarray:
        """counts with all three axes (lengths, sources, targets)."""
        shape = (len(self.lengths), len(self.sources), len(self.targets))
        return self.counts.reshape(shape)

    def __getitem__(self, key: Tuple[Any, ...]):
        if not isinstance(key, tuple) or len(key) not in (2, 3):
            raise UsageError("index a WalkCounts by (source, target) or (source, target, length)")
        source, target = key[0], key[1]
        length = key[2] if len(key) == 3 else self.lengths[-1]
        try:
            li = self.lengths.index(length)
        except ValueError:
            raise UsageError(f"no length {length!r} in this result (lengths {self.lengths[0]}"
                             f" to {self.lengths[-1]})") from None
        r = _position(self.sources, source, "source")
        c = _position(self.targets, target, "target")
        return self._full()[li, r, c]

    def to_frame(self):
        """A pandas DataFrame of the last length's table (rows: sources, columns: targets);
        with ``all_lengths`` a MultiIndex (length, source) on the rows."""
        import pandas

        full = self._full()
        if len(self.lengths) == 1:
            return pandas.DataFrame(full[0], index=list(self.sources), columns=list(self.targets))
        index = pandas.MultiIndex.from_product([self.lengths, list(self.sources)],
                                               names=["length", "from"])
        return pandas.DataFrame(full.reshape(-1, len(self.targets)), index=index,
                                columns=list(self.targets))

    def __str__(self) -> str:
        full = self._full()
        blocks = []
        for li, length in enumerate(self.lengths):
            cells = [[str(x) for x in row] for row in full[li]]
            heads = [str(t) for t in self.targets]
            names = [str(s) for s in self.sources]
            widths = [max([len("from/to")] + [len(s) for s in names])]
            widths += [max([len(h)] + [len(row[c]) for row in cells]) for c, h in enumerate(heads)]
            lines = [" ".join([("from/to").ljust(widths[0])] +
                              [h.rjust(widths[c + 1]) for c, h in enumerate(heads)])]
            for name, row in zip(names, cells):
                lines.append(" ".join([name.ljust(widths[0])] +
                                      [x.rjust(widths[c + 1]) for c, x in enumerate(row)]))
            prefix = f"length {length}:\n" if len(self.lengths) > 1 else ""
            blocks.append(prefix + "\n".join(lines))
        return "\n\n".join(blocks)

    def __repr__(self) -> str:
        return (f"gemmkit.WalkCounts(lengths {self.lengths[0]}..{self.lengths[-1]}, "
                f"{len(self.sources)} x {len(self.targets)}, mode={self.mode!r}, "
                f"method={self.method!r})")


def _position(labels: List[Any], label: Any, what: str) -> int:
    for i, x in enumerate(labels):
        if x == label:
            return i
    raise InputError(f"no {what} {label!r} in this result")


class _Prepared:
    """A graph ready for the engine: the library's Graph and the labels the caller knows."""

    def __init__(self, graph: "_gemmkit.Graph", nodes: Optional[List[Any]]):
        self.graph = graph
        # The caller's vertex labels in index order (None: the library's own: its names,
        # or the indices).
        self.nodes = nodes
        self._index = None if nodes is None else {node: i for i, node in enumerate(nodes)}
        # The library's names, copied out once (each read of Graph.labels copies them all).
        self._names: Optional[List[str]] = None if nodes is not None else graph.labels

    def vertex(self, label: Any) -> int:
        if self._index is not None:
            try:
                i = self._index.get(label)
            except TypeError:  # unhashable: no node can be it
                i = None
            if i is not None:
                return i
        elif not self._names and isinstance(label, (int, np.integer)) \
                and not isinstance(label, bool):
            label = str(int(label))
        # The library's lookup (and its message when there is no such vertex).
        return self.graph.vertex(str(label))

    def label(self, v: int) -> Any:
        if self.nodes is not None:
            return self.nodes[v]
        if self._names:
            return self._names[v]
        return v


def _labels_for_library(nodes: Sequence[Any]) -> List[str]:
    """The nodes' names for the library's messages, when their texts are unique."""
    names = [str(node) for node in nodes]
    return names if len(set(names)) == len(names) else []


def _integer_weight(w: Any, where: str) -> int:
    """w as an int: integers, and floats with an integer value; InputError otherwise."""
    value: Optional[int] = None
    try:
        value = operator.index(w)
    except TypeError:
        if isinstance(w, (float, np.floating)) and float(w).is_integer():
            value = int(w)
    if value is None:
        raise InputError(f"{where}: weight {w!r} is not an integer (walk counts need integer "
                         "edge weights)")
    if not -2**63 <= value < 2**63:
        raise InputError(f"{where}: weight {w!r} does not fit a 64-bit integer")
    return value


def _from_edges(edges: Iterable[Any], n: Optional[int], undirected: bool,
                where: str) -> _Prepared:
    """An edge list of (u, v) or (u, v, w): non-negative int vertices are indices (0..n-1,
    n inferred as max + 1 when not given); anything else names, numbered in order of first
    appearance."""
    us: List[Any] = []
    vs: List[Any] = []
    ws: List[int] = []
    weighted = False
    for i, edge in enumerate(edges):
        try:
            items = tuple(edge)
        except TypeError:
            raise InputError(f"{where}: edge {i} is {edge!r}, not a pair (u, v) or a triple "
                             "(u, v, weight)") from None
        if len(items) not in (2, 3):
            raise InputError(f"{where}: edge {i} has {len(items)} items, not 2 (u, v) or 3 "
                             "(u, v, weight)")
        us.append(items[0])
        vs.append(items[1])
        if len(items) == 3:
            weighted = True
            ws.append(_integer_weight(items[2], f"{where} edge {i} ({items[0]!r}, {items[1]!r})"))
        else:
            ws.append(1)

    def is_index(x: Any) -> bool:
        return isinstance(x, (int, np.integer)) and not isinstance(x, bool) and x >= 0

    nodes: Optional[List[Any]] = None
    if all(is_index(x) for x in us) and all(is_index(x) for x in vs):
        u = np.asarray(us, dtype=np.int64)
        v = np.asarray(vs, dtype=np.int64)
        if n is None:
            n = int(max(u.max(initial=-1), v.max(initial=-1))) + 1
    else:
        if n is not None:
            raise UsageError("n= applies to edge lists of vertex indices; these edges name "
                             "their vertices")
        index: Dict[Hashable, int] = {}
        nodes = []
        for a, b in zip(us, vs):
            for x in (a, b):
                if x not in index:
                    index[x] = len(nodes)
                    nodes.append(x)
        u = np.fromiter((index[x] for x in us), dtype=np.int64, count=len(us))
        v = np.fromiter((index[x] for x in vs), dtype=np.int64, count=len(vs))
        n = len(nodes)
    w = np.asarray(ws, dtype=np.int64) if weighted else None
    return _build(int(n), u, v, w, undirected, nodes)


def _build(n: int, u: np.ndarray, v: np.ndarray, w: Optional[np.ndarray], undirected: bool,
           nodes: Optional[List[Any]]) -> _Prepared:
    if undirected:  # every edge both ways; a loop once, as the library's reader does
        other = u != v
        u, v = np.concatenate([u, v[other]]), np.concatenate([v, u[other]])
        if w is not None:
            w = np.concatenate([w, w[other]])
    u = np.ascontiguousarray(u, dtype=np.int64)
    v = np.ascontiguousarray(v, dtype=np.int64)
    if w is not None:
        w = np.ascontiguousarray(w, dtype=np.int64)
    labels = _labels_for_library(nodes) if nodes is not None else []
    graph = _gemmkit.graph_from_edges(n, u.ctypes.data, v.ctypes.data,
                                      0 if w is None else w.ctypes.data, len(u), labels)
    return _Prepared(graph, nodes)


def _integer_array(values: np.ndarray, where: str) -> np.ndarray:
    """values as int64, refusing entries that are not integers."""
    if values.dtype == np.bool_ or np.issubdtype(values.dtype, np.integer):
        if values.dtype == np.uint64 and values.size and values.max() > np.iinfo(np.int64).max:
            raise InputError(f"{where}: an entry is above 2^63 - 1")
        return values.astype(np.int64, copy=False)
    if np.issubdtype(values.dtype, np.floating):
        bad = ~np.isfinite(values) | (values != np.round(values)) | (np.abs(values) >= 2.0**63)
        if bad.any():
            i = int(np.flatnonzero(bad.ravel())[0])
            raise InputError(f"{where}: entry {np.unravel_index(i, values.shape)} is "
                             f"{values.ravel()[i]!r}, not an integer (walk counts need "
                             "integer edge weights)")
        return values.astype(np.int64)
    raise InputError(f"{where}: entries of dtype {values.dtype} are not integers (walk counts "
                     "need integer edge weights)")


def _check_square(shape: Tuple[int, ...], what: str) -> int:
    if len(shape) != 2 or shape[0] != shape[1]:
        raise InputError(f"{what} is {' x '.join(map(str, shape))}; an adjacency matrix must "
                         "be square")
    return int(shape[0])


def _prepare(graph: Any, *, weight: Optional[str], n: Optional[int], undirected: Optional[bool],
             labels: Optional[Sequence[Any]], format: str) -> _Prepared:
    if isinstance(graph, (str, os.PathLike)):
        lib_labels = [str(x) for x in labels] if labels is not None else []
        return _Prepared(_gemmkit.read_graph(os.fspath(graph), format, bool(undirected),
                                             lib_labels), None)
    if hasattr(graph, "is_directed") and hasattr(graph, "nodes") and hasattr(graph, "edges"):
        if labels is not None:
            raise UsageError("labels= names the vertices of a matrix or an edge list of "
                             "indices; a networkx graph's nodes are its labels")
        return _from_networkx(graph, weight, undirected)
    is_matrix = (hasattr(graph, "tocoo") and hasattr(graph, "shape")) or isinstance(
        graph, np.ndarray) or hasattr(graph, "__array_interface__") or hasattr(graph, "__array__")
    if is_matrix and undirected:
        raise UsageError("undirected=True applies to edge lists; an adjacency matrix says both "
                         "directions itself")
    if hasattr(graph, "tocoo") and hasattr(graph, "shape"):  # scipy.sparse
        size = _check_square(tuple(graph.shape), "the sparse matrix")
        coo = graph.tocoo()
        data = _integer_array(np.asarray(coo.data), "the sparse matrix")
        return _with_labels(_build(size, np.asarray(coo.row), np.asarray(coo.col), data, False,
                                   None), labels, size)
    if is_matrix:
        dense = np.asarray(graph)
        size = _check_square(dense.shape, "the adjacency matrix")
        values = np.ascontiguousarray(_integer_array(dense, "the adjacency matrix"))
        lib_labels = [str(x) for x in labels] if labels is not None else []
        prepared = _Prepared(_gemmkit.graph_from_dense(size, values.ctypes.data, lib_labels),
                             list(labels) if labels is not None else None)
        return prepared
    if isinstance(graph, Iterable):
        prepared = _from_edges(graph, n, False if undirected is None else undirected,
                               "the edge list")
        if labels is not None:
            return _with_labels(prepared, labels, prepared.graph.n)
        return prepared
    raise UsageError(f"walks: a graph of type {type(graph).__name__} is not supported (a "
                     "networkx graph, a scipy sparse matrix, a numpy adjacency matrix, an edge "
                     "list or a file path)")


def _with_labels(prepared: _Prepared, labels: Optional[Sequence[Any]], size: int) -> _Prepared:
    """The graph with the caller's labels for vertices 0..size-1 (a matrix or index list)."""
    if labels is None:
        return prepared
    labels = list(labels)
    if prepared.nodes is not None:
        raise UsageError("labels= names the vertices of a matrix or an edge list of indices; "
                         "these edges name their vertices already")
    if len(labels) != size:
        raise UsageError(f"{len(labels)} labels given but the graph has {size} vertices")
    if len(set(labels)) != len(labels):
        raise UsageError("labels= holds a name twice")
    return _Prepared(prepared.graph, labels)


def _from_networkx(graph: Any, weight: Optional[str], undirected: Optional[bool]) -> _Prepared:
    nodes = list(graph.nodes)
    index = {node: i for i, node in enumerate(nodes)}
    both_ways = (not graph.is_directed()) if undirected is None else bool(undirected)
    us = np.empty(graph.number_of_edges(), dtype=np.int64)
    vs = np.empty_like(us)
    ws = np.ones_like(us) if weight is not None else None
    if weight is None:
        for e, (a, b) in enumerate(graph.edges()):
            us[e], vs[e] = index[a], index[b]
    else:
        for e, (a, b, w) in enumerate(graph.edges(data=weight, default=1)):
            us[e], vs[e] = index[a], index[b]
            ws[e] = _integer_weight(w, f"the graph's edge ({a!r}, {b!r}) attribute {weight!r}")
    return _build(len(nodes), us, vs, ws, both_ways, nodes)


def _stderr_progress(line: str) -> None:
    sys.stderr.write(f"\rgemmkit walks: {line:<40}")
    sys.stderr.flush()


def walks(graph: Any, length: int, *, source: Any = None, target: Any = None,
          all_lengths: bool = False, mode: str = "exact", result: Optional[str] = None,
          weight: Optional[str] = None, undirected: Optional[bool] = None,
          n: Optional[int] = None, labels: Optional[Sequence[Any]] = None,
          format: str = "auto", method: str = "auto", backend: str = "auto",
          progress: Union[bool, Callable[[str], None], None] = None
          ) -> Union[int, float, WalkCounts]:
    """Walks of length ``length`` between vertices: entries of A^length (with integer edge
    weights, the sum over the walks of the product of their weights), exact by default.

    graph:
        - a networkx Graph, DiGraph, MultiGraph or MultiDiGraph: undirected graphs count
          each edge both ways (a loop once), parallel edges add up, nodes keep their names
          (``source=``/``target=`` are nodes; the result's labels are the nodes);
          ``weight=`` names an integer edge attribute (default None: every edge counts 1;
          edges without it weigh 1);
        - a scipy sparse matrix or a dense numpy array: the square adjacency matrix with
          integer entries (integral floats are accepted; A[u, v] is the edge u -> v);
        - an edge list (a list, tuple or other iterable that is not an array) of (u, v) or
          (u, v, w): vertices that are all non-negative ints are indices 0..n-1 (``n=`` or
          max + 1), anything else names, numbered in order of first appearance;
          ``undirected=True`` makes every edge go both ways;
        - a file path (str or os.PathLike), read by the library as ``gemmkit walks GRAPH``
          reads it: edge lists, .mtx, .npy, .csv (``format=`` 'auto', 'edges', 'mtx', 'npy',
          'csv'), with ``undirected=`` and ``labels=`` as the CLI's --undirected, --labels.
        ``labels=`` names the vertices of a matrix or an index edge list.
    source, target: a vertex (its label, or its index in an unnamed graph); None: every
        vertex. An unknown vertex raises InputError (a ValueError).
    all_lengths: every length 1..length instead of length alone.
    mode: the engine's arithmetic, as the CLI's --mode: 'exact' (arbitrary precision, never
        wrong), 'int64' (exact while every count fits; NumericError naming the first that
        does not), 'float' (doubles; ``rounded`` says whether a count reached 2^53).
    result: the numbers handed back: 'int' (Python ints; numpy object arrays for tables),
        'int64' (numpy int64; NumericError naming the first count that does not fit, never
        wrapped) or 'float' (float64). Default: the mode's own: 'int' for exact,
        'int64' for int64, 'float' for float.
    method: 'auto', 'dense' or 'sparse'; backend: 'auto', 'cpu' or 'cuda' (exact dense
        products on GPU tensor cores), as the CLI's options.
    progress: a callable taking a short status line ('dense squaring product 3/6', ...),
        called between the engine's steps (raising in it, KeyboardInterrupt say, ends the
        count); True for the line on stderr; None/False for none.

    Returns: for one pair (source and target given, one length) the count itself (an int,
    or a float with result='float'); otherwise a :class:`WalkCounts` whose ``counts`` array
    has an axis of lengths (with all_lengths), of sources (unless source= was given) and of
    targets (unless target= was given), with the labels of its rows and columns in
    ``sources`` and ``targets``. The engine runs without the GIL.
    """
    if mode not in _MODES:
        raise UsageError(f"unknown mode {mode!r} (expected exact, int64 or float)")
    mode = _MODES[mode]
    if result is None:
        result = {"exact": "int", "int64": "int64", "float": "float"}[mode]
    if result not in _RESULTS:
        raise UsageError(f"unknown result {result!r} (expected int, int64 or float)")
    if mode == "float" and result != "float":
        raise UsageError(f"mode='float' counts in doubles; result={result!r} would pass "
                         "rounded counts off as integers (use mode='exact')")
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)):
        raise UsageError(f"the walk length must be an integer, not {length!r}")
    length = int(length)
    if length < 1:
        # The library's check, before any graph is read or built.
        raise UsageError(f"the walk length must be at least 1, not {length}")
    if length > 2**31 - 1:  # past the engine's int (the engine refuses past 10^6 itself)
        raise UsageError(f"the walk length {length} is above the supported 1000000")

    prepared = _prepare(graph, weight=weight, n=n, undirected=undirected, labels=labels,
                        format=format)
    s = None if source is None else prepared.vertex(source)
    t = None if target is None else prepared.vertex(target)
    callback = _stderr_progress if progress is True else (progress or None)
    engine = _gemmkit.count_walks(prepared.graph, length, s, t, all_lengths, mode, method,
                                  backend, callback)
    if progress is True:
        sys.stderr.write("\r" + " " * 60 + "\r")

    lengths = list(engine.lengths)
    sources = [prepared.label(v) for v in engine.sources]
    targets = [prepared.label(v) for v in engine.targets]
    flat = _flat_counts(engine, result, sources, targets, lengths)

    if s is not None and t is not None and not all_lengths:
        value = flat[0]
        return value.item() if isinstance(value, np.generic) else value
    axes = (all_lengths, s is None, t is None)
    shape = tuple(size for size, kept in zip((len(lengths), len(sources), len(targets)), axes)
                  if kept)
    info = {"mode": engine.mode, "method": engine.method, "bound_bits": engine.bound_bits,
            "primes": engine.primes, "rounded": engine.rounded, "gpu": engine.gpu}
    return WalkCounts(flat.reshape(shape), sources, targets, lengths, axes, info)


def _flat_counts(engine: "_gemmkit.WalkCounts", result: str, sources: List[Any],
                 targets: List[Any], lengths: List[int]) -> np.ndarray:
    if result == "float":
        return np.frombuffer(engine.float64(), dtype=np.float64).copy()
    if result == "int64":
        data, first_bad = engine.int64()
        if first_bad >= 0:
            per_length = len(sources) * len(targets)
            li, rest = divmod(first_bad, per_length)
            r, c = divmod(rest, len(targets))
            raise NumericError(
                f"int64 overflow: the number of walks of length {lengths[li]} from "
                f"'{sources[r]}' to '{targets[c]}' does not fit a 64-bit integer (use "
                "result='int')")
        return np.frombuffer(data, dtype=np.int64).copy()
    values = engine.ints()
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def read_exact_table(path: Union[str, "os.PathLike[str]"]) -> np.ndarray:
    """Read an exact integer table that gemmkit wrote as ``.npy`` (``gemmkit walks -o
    counts.npy`` when counts outgrow int64, ``gemmkit multiply --out-dtype exact -o c.npy``):
    a uint64 array of shape (rows, cols, limbs), each entry ``limbs`` two's-complement words,
    least significant first. Returns a (rows, cols) numpy array of dtype ``object`` holding
    the exact Python ints. A sequence of tables, shape (tables, rows, cols, limbs) (``gemmkit
    walks --all-lengths -o counts.npy``: table i holds the walks of length i + 1), gives a
    (tables, rows, cols) array. A file of another dtype, order or rank raises InputError."""
    shape, values = _gemmkit.read_exact_table(os.fspath(path))
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out.reshape(shape)
