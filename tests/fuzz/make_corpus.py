#!/usr/bin/env python3
"""Writes the committed seed corpus under tests/fuzz/corpus/<harness>/: small valid and
malformed files of each format, and argv seeds for the command line. Run it again after
adding a seed here (existing files are rewritten, nothing else is touched)."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
BOM = b"\xef\xbb\xbf"


def put(harness, name, data):
    folder = os.path.join(HERE, "corpus", harness)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def npy(descr, shape, data, version=1, fortran=False, pad=True):
    d = "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (
        descr if descr.startswith(("'", "[")) else "'%s'" % descr, "True" if fortran else "False", shape)
    head = 10 if version == 1 else 12
    if pad:
        while (head + len(d) + 1) % 64:
            d += " "
    d = (d + "\n").encode("utf-8" if version == 3 else "latin-1")
    size = struct.pack("<H", len(d)) if version == 1 else struct.pack("<I", len(d))
    return b"\x93NUMPY" + bytes([version, 0]) + size + d + data


def npy_seeds():
    f8 = struct.pack("<4d", 1.0, -0.0, float("nan"), 1e-310)
    put("npy", "f8_v1", npy("<f8", "(2, 2)", f8))
    put("npy", "f8_v2", npy("<f8", "(2, 2)", f8, version=2))
    put("npy", "f8_v3", npy("<f8", "(4,)", f8, version=3))
    put("npy", "v3_unicode_key", npy("<f8", "(4,), '\u00e9t\u00e9': 1", f8, version=3))
    put("npy", "f8_fortran", npy("<f8", "(2, 2)", f8, fortran=True))
    put("npy", "f4", npy("<f4", "(1, 3)", struct.pack("<3f", 1.5, -2.0, float("inf"))))
    put("npy", "f2", npy("<f2", "(2,)", struct.pack("<2e", 1.0, -65504.0)))
    put("npy", "bf16_void", npy("<V2", "(2,)", b"\x80\x3f\x00\xc0"))
    put("npy", "bf16_named", npy("[('bfloat16', '<V2')]", "(1,)", b"\x80\x3f"))
    put("npy", "i8", npy("<i8", "(1, 2)", struct.pack("<2q", 2**63 - 1, -2**63)))
    put("npy", "i4", npy("<i4", "(2, 1)", struct.pack("<2i", 7, -7)))
    put("npy", "i2", npy("<i2", "(2,)", struct.pack("<2h", 300, -300)))
    put("npy", "u2", npy("<u2", "(1,)", struct.pack("<H", 65535)))
    put("npy", "u4", npy("<u4", "(1,)", struct.pack("<I", 2**32 - 1)))
    put("npy", "u8_big", npy("<u8", "(1,)", struct.pack("<Q", 2**64 - 1)))
    put("npy", "i1", npy("|i1", "(3,)", b"\x80\x00\x7f"))
    put("npy", "u1", npy("|u1", "(2, 2)", b"\x00\x01\xfe\xff"))
    put("npy", "b1", npy("|b1", "(2,)", b"\x00\x01"))
    put("npy", "native_eq", npy("=f8", "(1,)", struct.pack("<d", 2.0)))
    put("npy", "big_endian", npy(">f8", "(1,)", struct.pack(">d", 2.0)))
    put("npy", "complex", npy("<c16", "(1,)", b"\x00" * 16))
    put("npy", "scalar_shape", npy("<f8", "()", struct.pack("<d", 3.0)))
    put("npy", "empty_rows", npy("<f8", "(0, 3)", b""))
    put("npy", "three_d", npy("<f8", "(1, 1, 1)", struct.pack("<d", 1.0)))
    put("npy", "huge_shape", npy("<f8", "(4611686018427387904, 4)", f8))
    put("npy", "shape_past_int64", npy("<f8", "(99999999999999999999,)", f8))
    put("npy", "negative_shape", npy("<f8", "(-1, 4)", f8))
    put("npy", "truncated_data", npy("<f8", "(3, 3)", f8))
    put("npy", "extra_data", npy("<f8", "(1,)", f8))
    put("npy", "unpadded", npy("<f8", "(2, 2)", f8, pad=False))
    full = npy("<f8", "(2, 2)", f8)
    put("npy", "truncated_header", full[:40])
    put("npy", "truncated_preamble", full[:9])
    put("npy", "bad_magic", b"\x93NUMPX" + full[6:])
    put("npy", "version_4", full[:6] + b"\x04\x00" + full[8:])
    put("npy", "header_len_past_end", full[:8] + b"\xff\xff" + full[10:])
    put("npy", "unterminated_header", full[:10] + full[10:74].replace(b"\n", b" ") + b"")
    put("npy", "duplicate_key", npy("<f8", "(1,), 'shape': (1,)", struct.pack("<d", 1.0)))
    put("npy", "escape_in_string", npy("<f\\x38", "(1,)", struct.pack("<d", 1.0)))
    # Exact integer tables: one table (rows, cols, limbs) and a sequence of them.
    put("npy", "limb_table", npy("<u8", "(1, 2, 2)", struct.pack("<4Q", 5, 0, 2**64 - 1, 2**64 - 1)))
    put("npy", "limb_tables", npy("<u8", "(2, 1, 1, 2)", struct.pack("<4Q", 1, 0, 0, 1)))


def mtx_seeds():
    put("mtx", "coord_real", "%%MatrixMarket matrix coordinate real general\n% c\n3 3 3\n1 1 1.5\n2 3 -2e3\n3 1 nan\n")
    put("mtx", "coord_double_dup", "%%MatrixMarket matrix coordinate double general\n2 2 3\n1 1 1\n1 1 2\n2 2 inf\n")
    put("mtx", "coord_integer", "%%MatrixMarket matrix coordinate integer general\n2 3 2\n1 3 9223372036854775807\n2 1 -9223372036854775808\n")
    put("mtx", "coord_pattern", "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n2 3\n3 1\n")
    put("mtx", "coord_symmetric", "%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n1 1 1\n2 1 2\n3 2 3\n")
    put("mtx", "coord_skew", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1.5\n3 1 -2\n")
    put("mtx", "coord_pattern_symmetric", "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n")
    put("mtx", "array_real", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n")
    put("mtx", "array_integer", "%%MatrixMarket matrix array integer general\n1 3\n1\n-2\n3\n")
    put("mtx", "array_symmetric", "%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n")
    put("mtx", "array_skew", "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n")
    put("mtx", "crlf", "%%MatrixMarket matrix coordinate real general\r\n2 2 1\r\n1 1 1.0\r\n")
    put("mtx", "cr_only", "%%MatrixMarket matrix coordinate real general\r2 2 1\r1 1 1.0\r")
    put("mtx", "bom", BOM + b"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0\n")
    put("mtx", "upper_case", "%%MATRIXMARKET MATRIX COORDINATE REAL GENERAL\n1 1 1\n1 1 2\n")
    put("mtx", "complex", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 2\n")
    put("mtx", "hermitian", "%%MatrixMarket matrix coordinate complex hermitian\n1 1 1\n1 1 1 0\n")
    put("mtx", "vector", "%%MatrixMarket vector coordinate real general\n3 1\n1 1.0\n")
    put("mtx", "no_banner", "2 2 1\n1 1 1.0\n")
    put("mtx", "no_size", "%%MatrixMarket matrix coordinate real general\n% only comments\n")
    put("mtx", "index_zero", "%%MatrixMarket matrix coordinate real general\n2 2 1\n0 1 1.0\n")
    put("mtx", "index_huge", "%%MatrixMarket matrix coordinate real general\n2 2 1\n9223372036854775807 1 1.0\n")
    put("mtx", "index_past_int64", "%%MatrixMarket matrix coordinate real general\n2 2 1\n99999999999999999999 1 1.0\n")
    put("mtx", "size_huge", "%%MatrixMarket matrix coordinate real general\n9223372036854775807 9223372036854775807 1\n1 1 1\n")
    put("mtx", "array_size_huge", "%%MatrixMarket matrix array real general\n3037000500 3037000500\n1\n")
    put("mtx", "nnz_huge", "%%MatrixMarket matrix coordinate real general\n2 2 9223372036854775807\n1 1 1\n")
    put("mtx", "nnz_past_square", "%%MatrixMarket matrix coordinate real general\n1 1 3\n1 1 1\n1 1 1\n1 1 1\n")
    put("mtx", "too_few", "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1.0\n")
    put("mtx", "too_many", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0\n2 2 2.0\n")
    put("mtx", "symmetric_upper", "%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1.0\n")
    put("mtx", "skew_diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1.0\n")
    put("mtx", "value_overflow", "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e400\n")
    put("mtx", "int_overflow", "%%MatrixMarket matrix coordinate integer general\n1 1 2\n1 1 9223372036854775807\n1 1 1\n")
    put("mtx", "int_past_int64", "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 9223372036854775808\n")
    put("mtx", "skew_min_int", "%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 -9223372036854775808\n")
    put("mtx", "bad_token", "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 abc\n")
    put("mtx", "extra_token", "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1 1\n")
    put("mtx", "empty_matrix", "%%MatrixMarket matrix coordinate real general\n0 0 0\n")
    put("mtx", "nul_byte", b"%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\x00\n")


def csv_seeds():
    put("csv", "ints", "1,2,3\n4,5,6\n")
    put("csv", "floats", "1.5 -2e-3\n3 nan\n-inf 1e308\n")
    put("csv", "comments_blank", "# header\n\n1, 2 # trailing\n\t3 ,4\n\n")
    put("csv", "crlf", "1,2\r\n3,4\r\n")
    put("csv", "cr_only", "1,2\r3,4\r")
    put("csv", "bom", BOM + b"1,2\n3,4\n")
    put("csv", "no_final_newline", "1 2\n3 4")
    put("csv", "ragged", "1,2,3\n4,5\n")
    put("csv", "token", "1,2\n3,abc\n")
    put("csv", "int64_edges", "9223372036854775807,-9223372036854775808\n")
    put("csv", "past_int64", "9223372036854775808,1\n")
    put("csv", "mixed_big", "99999999999999999999999,1.5\n")
    put("csv", "double_overflow", "1e400\n")
    put("csv", "subnormal", "4.9e-324\n")
    put("csv", "empty", "")
    put("csv", "only_comments", "# nothing\n# here\n")
    put("csv", "empty_fields", "1,,2\n")
    put("csv", "trailing_comma", "1,2,\n3,4,\n")
    put("csv", "signs", "+1,-0,+-1\n")
    put("csv", "column", "1\n2\n3\n")
    put("csv", "nul_byte", b"1,2\x00\n3,4\n")
    put("csv", "long_line", ",".join(["7"] * 500) + "\n")


def edges_seeds():
    put("edges", "indices", "0 1\n1 2\n2 0\n")
    put("edges", "names", "alice bob\nbob carol\ncarol alice\n")
    put("edges", "weights", "0 1 5\n1 0 -5\n0 1 -5\n2 2 9223372036854775807\n")
    put("edges", "weight_overflow", "0 1 9223372036854775807\n0 1 1\n")
    put("edges", "weight_past_int64", "0 1 9223372036854775808\n")
    put("edges", "comments_blank", "# graph\n\n0 1 # edge\n  \t\n1,2\n")
    put("edges", "crlf", "a b\r\nb c\r\n")
    put("edges", "cr_only", "a b\rb c\r")
    put("edges", "bom", BOM + b"0 1\n1 0\n")
    put("edges", "bom_names", BOM + b"a b\nb a\n")
    put("edges", "huge_index", "0 1\n1 999999999999\n")
    put("edges", "index_past_int64", "0 99999999999999999999999\n")
    put("edges", "mixed", "0 1\n1 x\n")
    put("edges", "one_token", "0\n")
    put("edges", "four_tokens", "0 1 2 3\n")
    put("edges", "bad_weight", "0 1 1.5\n")
    put("edges", "negative_index", "-1 0\n")
    put("edges", "self_loops", "0 0\n1 1 3\n")
    put("edges", "utf8_names", "\u00e9t\u00e9 hiver\nhiver \u00e9t\u00e9\n")
    put("edges", "control_chars", b"a\x01 b\x7f\nb\x1b[31m a\n")
    put("edges", "cancelling", "0 1 2\n0 1 -2\n")
    put("edges", "empty", "")
    put("edges", "nul_byte", b"0 1\x00\n1 0\n")
    put("edges", "leading_zeros", "000 001\n001 000\n")


def cli_seeds():
    seeds = {
        "multiply": ["multiply", "A.npy", "A.csv", "-o", "C.npy"],
        "multiply_opts": ["multiply", "A.npy", "B.npy", "-o", "C.csv", "--backend", "cpu", "--dtype", "f32",
                          "--verify", "full", "--json", "r.json"],
        "multiply_beta": ["multiply", "A.mtx", "A.npy", "--beta", "2", "--c", "A.csv", "-o", "C.mtx",
                          "--transpose-a", "--alpha", "-1.5"],
        "multiply_wrap": ["multiply", "I.csv", "I.csv", "--transpose-b", "-o", "W.npy", "--verify", "none"],
        "multiply_bad": ["multiply", "bad.npy", "A.npy", "-o", "C.npy"],
        "multiply_json_fails": ["multiply", "A.npy", "A.npy", "-o", "C.npy", "--json", "."],
        "gen": ["gen", "4", "3", "-o", "g.npy", "--seed", "7", "--dist", "ints:-9:9", "--dtype", "i64"],
        "gen_csv": ["gen", "2", "2", "-o", "g.csv", "--dtype", "f16", "--dist", "normal:0:1"],
        "gen_bad": ["gen", "0", "3", "-o", "g.xyz"],
        "gen_seed": ["gen", "2", "2", "-o", "g.txt", "--seed", "-1"],
        "bench": ["bench", "--backend", "cpu", "--sizes", "8,16", "--reps", "1", "--warmup", "0", "--json", "b.json",
                  "--csv", "b.csv"],
        "bench_shapes": ["bench", "--shapes", "8x4x2", "--kernels", "cpu_naive", "--dtype", "i32"],
        "list": ["list", "--json", "-"],
        "device": ["device"],
        "walks": ["walks", "G.txt", "--length", "3", "--from", "a", "--to", "c"],
        "walks_edges": ["walks", "E.txt", "-k", "4", "--mode", "int64", "--all-lengths", "-o", "w.csv"],
        "walks_mtx": ["walks", "S.mtx", "--length", "2", "--labels", "x,y,z", "--method", "sparse", "--json", "w.json"],
        "walks_undirected": ["walks", "E.txt", "--undirected", "--length", "2", "--mode", "float"],
        "walks_format": ["walks", "A.csv", "--format", "edges", "--length", "1"],
        "spmv": ["spmv", "A.mtx", "x.csv", "-o", "y.npy"],
        "spmv_bad": ["spmv", "bad.mtx", "x.csv"],
        "reduce": ["reduce", "A.npy", "--op", "norm2"],
        "reduce_opts": ["reduce", "A.csv", "--op", "max", "--dtype", "f32", "-o", "r.csv", "--json", "-"],
        "conv1d": ["conv1d", "v.npy", "m.csv", "-o", "c.npy"],
        "conv1d_list": ["conv1d", "--list"],
        "help": ["--help"],
        "version": ["--version"],
        "sub_help": ["walks", "--help"],
        "misspelled": ["multipy", "A.npy", "B.npy"],
        "empty": [],
        # Regression seeds for earlier findings: control characters in an unexpected
        # argument and in an option's value must be escaped in the one error line.
        "unexpected_newline": ["list", "x\ny"],
        "mode_escape_sequence": ["walks", "E.txt", "--length", "1", "--mode", "a\x1b[31m"],
    }
    for name, argv in seeds.items():
        put("cli", name, "\0".join(argv))


def pipes_seeds():
    """fuzz_pipes: the first byte picks the reader (0 npy, 1 mtx, 2 csv, 3 edges, 4 edges
    undirected), the rest is the file: every seed of those formats."""
    for selector, harness in enumerate(["npy", "mtx", "csv", "edges", "edges"]):
        folder = os.path.join(HERE, "corpus", harness)
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name), "rb") as f:
                put("pipes", "%d_%s_%s" % (selector, harness, name), bytes([selector]) + f.read())
    # Issue 15: a truncated .npy from a pipe was allocated at its declared size (7.2 GB here).
    put("pipes", "0_npy_declares_7GB", b"\0" + npy("<f8", "(30000, 30000)", struct.pack("<4d", 1, 2, 3, 4)))


if __name__ == "__main__":
    npy_seeds()
    mtx_seeds()
    csv_seeds()
    edges_seeds()
    pipes_seeds()
    cli_seeds()
