#!/usr/bin/env python3
"""Records what every compiled CUDA kernel uses, for `gemmkit explain` without a GPU.

Reads the device code that nvcc embeds in the given objects or static libraries (the
cubin ELF images of each architecture inside the fat binaries; large ones nvcc compresses
with zstd, which the `zstd` program unpacks), and writes one line per kernel and
architecture:

    NAME  ARCH  REGISTERS  STATIC_SMEM  LOCAL_BYTES  MANGLED

NAME is the demangled kernel without return type, parameters, namespaces or spaces
(gemmkit::normalized_kernel_name gives the same from the launcher's side). Registers come
from the cubin's EIATTR_REGCOUNT attribute, the stack frame from EIATTR_FRAME_SIZE, static
shared memory from the size of the kernel's .nv.shared section (on sm_90 the compiler lays
the driver's 1 KiB reserve into it; that part is left out, as the runtime reports it).

Usage: record_kernel_resources.py OUT.tsv INPUT...
"""

import os
import re
import struct
import subprocess
import sys

EM_CUDA = 190
EIATTR_REGCOUNT = 0x2F
EIATTR_FRAME_SIZE = 0x11
EIFMT_SVAL = 4
SM90_RESERVED_SMEM = 1024


FATBIN_MAGIC = struct.pack("<I", 0xBA55ED50)
FATBIN_CUBIN = 2
FATBIN_ZSTD = 0x8000
FATBIN_LZ4 = 0x2000


def unzstd(data, path):
    """The zstd frame unpacked: by the zstandard module, else the zstd program; None (with a
    warning: those kernels go unrecorded) when neither is there."""
    try:
        import zstandard
        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    except ImportError:
        pass
    try:
        return subprocess.run(["zstd", "-d", "-c"], input=data, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print("%s: a zstd-compressed cubin left out (%s)" % (path, e), file=sys.stderr)
        return None


def cubins(blob, path):
    """Every cubin (ELF bytes) in the fat binaries inside blob."""
    at = 0
    while True:
        at = blob.find(FATBIN_MAGIC, at)
        if at < 0:
            return
        _, _, header, size = struct.unpack_from("<IHHQ", blob, at)
        entry, end = at + header, at + header + size
        while entry + 64 <= end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", blob, entry)
            if entry_header == 0:
                break
            packed, = struct.unpack_from("<I", blob, entry + 16)
            flags, = struct.unpack_from("<Q", blob, entry + 40)
            body = blob[entry + entry_header:entry + entry_header + payload]
            if kind == FATBIN_CUBIN:
                if flags & FATBIN_ZSTD:
                    body = unzstd(body[:packed], path)
                elif flags & FATBIN_LZ4:
                    print("%s: an LZ4-compressed cubin left out (nvcc's default compresses with zstd)" % path,
                          file=sys.stderr)
                    body = None
                if body:
                    yield body
            entry += entry_header + payload
        at = max(end, at + 4)


def parse_cubin(blob, base):
    """(arch, {mangled: [regs, smem, frame]}) of the cubin at blob[base:], or None."""
    if blob[base + 4] != 2 or base + 64 > len(blob):  # 64-bit ELF only
        return None
    (machine,) = struct.unpack_from("<H", blob, base + 18)
    if machine != EM_CUDA:
        return None
    (flags,) = struct.unpack_from("<I", blob, base + 48)
    shoff, = struct.unpack_from("<Q", blob, base + 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", blob, base + 58)
    sections = []
    for i in range(shnum):
        name, kind, _, _, offset, size, link, info, _, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", blob, base + shoff + i * shentsize)
        sections.append((name, kind, offset, size, link, info, entsize))
    names_at = sections[shstrndx][2]

    def cstr(at):
        end = blob.index(b"\0", base + at)
        return blob[base + at:end].decode("ascii", "replace")

    named = [(cstr(names_at + s[0]), s) for s in sections]
    arch_number = (flags >> 8) & 0xFF if flags & 0xFF00 else flags & 0xFF
    arch = "sm_%d" % arch_number + ("a" if flags & 0x8 and arch_number >= 90 else "")
    symtab = next((s for n, s in named if n == ".symtab"), None)
    symbols = []
    if symtab:
        strtab_at = sections[symtab[4]][2]
        for i in range(symtab[3] // 24):
            st_name, = struct.unpack_from("<I", blob, base + symtab[2] + i * 24)
            symbols.append(cstr(strtab_at + st_name))
    kernels = {}
    reserved = any(n.startswith(".nv.shared.reserved") for n, _ in named)
    for name, s in named:
        if name.startswith(".text."):
            kernels.setdefault(name[6:], [0, 0, 0])
    for name, s in named:
        if name.startswith(".nv.shared.") and name[11:] in kernels:
            size = s[3]
            if reserved and size >= SM90_RESERVED_SMEM:
                size -= SM90_RESERVED_SMEM
            kernels[name[11:]][1] = size
        if name == ".nv.info":
            data = blob[base + s[2]:base + s[2] + s[3]]
            at = 0
            while at + 4 <= len(data):
                fmt, attr, size = data[at], data[at + 1], struct.unpack_from("<H", data, at + 2)[0]
                if fmt == EIFMT_SVAL:
                    if attr in (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE) and size == 8:
                        symbol, value = struct.unpack_from("<II", data, at + 4)
                        if symbol < len(symbols) and symbols[symbol] in kernels:
                            kernels[symbols[symbol]][0 if attr == EIATTR_REGCOUNT else 2] = value
                    at += 4 + size
                else:
                    at += 4
    return arch, kernels


def normalized(demangled):
    """What gemmkit::normalized_kernel_name makes of a demangled kernel."""
    s = demangled.replace("(anonymous namespace)::", "").replace("{anonymous}::", "")
    if s.startswith("void "):
        s = s[5:]
    depth = 0
    for i, c in enumerate(s):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "(" and depth == 0 and i > 0:
            s = s[:i]
            break
    # Spaces go, but for one between two words ("signed char").
    s = re.sub(r" +", " ", s)
    s = "".join(c for i, c in enumerate(s)
                if c != " " or (0 < i < len(s) - 1 and (s[i - 1].isalnum() or s[i - 1] == "_")
                                and (s[i + 1].isalnum() or s[i + 1] == "_")))
    s = s.replace("(anonymousnamespace)::", "").replace("{anonymous}::", "")
    s = re.sub(r"[A-Za-z_][A-Za-z_0-9]*::", "", s)
    s = re.sub(r"(?<![A-Za-z_0-9])(\d+)u(?=[,>])", r"\1", s)
    return s


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, inputs = sys.argv[1], sys.argv[2:]
    found = {}
    for path in inputs:
        with open(path, "rb") as f:
            blob = f.read()
        for cubin in cubins(blob, path):
            parsed = parse_cubin(cubin, 0)
            if parsed:
                arch, kernels = parsed
                for mangled, values in kernels.items():
                    found[(mangled, arch)] = values
    mangled_names = sorted({m for m, _ in found})
    demangled = subprocess.run(["c++filt"], input="\n".join(mangled_names), capture_output=True,
                               text=True, check=True).stdout.splitlines()
    names = dict(zip(mangled_names, demangled))
    lines = []
    for (mangled, arch), (regs, smem, frame) in found.items():
        lines.append("%s\t%s\t%d\t%d\t%d\t%s" % (normalized(names[mangled]), arch, regs, smem, frame, mangled))
    with open(out + ".tmp", "w") as f:
        f.write("# name\tarch\tregisters\tstatic_smem\tlocal_bytes\tmangled (scripts/record_kernel_resources.py)\n")
        f.write("\n".join(sorted(lines)) + "\n")
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
