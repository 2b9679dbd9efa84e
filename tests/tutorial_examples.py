#!/usr/bin/env python3
"""Runs the commands of docs/tutorial.md and checks that each prints what the page shows.

The page's runnable blocks are fenced as ```console run (CPU) or ```console gpu (needs a CUDA
device). In them a line starting with "$ " is a command; the lines after it, up to the next
command or the fence, are what it prints (stdout and stderr together), and a last line
"[exit N]" is its exit status (0 when absent). In the expected text, <var> stands for one
run of non-blank characters (a time, a rate, a size that depends on the machine) together
with the blanks before it (a right-aligned column pads it by its width), and <any> for any
text on the rest of its line; everything else must match exactly (trailing blanks and
blank lines at the end ignored). Every block runs in order, in one scratch copy of
examples/, with the gemmkit under test first on PATH, so later blocks see the files earlier
ones wrote. Without a CUDA device the gpu blocks are skipped, each one named.

usage: tutorial_examples.py DOC BIN_DIR EXAMPLES_DIR [--show] [--gpu-only]
  --show      print what every command printed (to refresh the page from a run)
  --gpu-only  run the gpu blocks only (with --show: the lines to paste after a GPU run);
              cpu blocks that write files the gpu blocks read still run, unprinted
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

EXIT = re.compile(r"^\[exit (\d+)\]$")


def parse(doc):
    """The runnable blocks: [(kind, line_number, [(command, [expected lines], status)])]."""
    blocks, current, kind = [], None, None
    with open(doc, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if current is None:
                m = re.match(r"^```console (run|gpu)\s*$", line)
                if m:
                    kind, current = m.group(1), []
                    start = number
                continue
            if line.startswith("```"):
                blocks.append((kind, start, current))
                current = None
                continue
            if line.startswith("$ "):
                current.append([line[2:], [], 0])
            elif not current:
                raise SystemExit(f"{doc}:{number}: output before the first command of the block")
            else:
                m = EXIT.match(line)
                if m:
                    current[-1][2] = int(m.group(1))
                else:
                    current[-1][1].append(line)
    if current is not None:
        raise SystemExit(f"{doc}: block at line {start} is not closed")
    return blocks


def pattern(expected_line):
    """<var>: one word, with the blanks before it (right-aligned columns change their
    padding with the width of the word); <any>: the rest of the line; the rest literal."""
    parts = re.split(r"(<var>|<any>)", expected_line.rstrip())
    out = ""
    for p in parts:
        if p == "<var>":
            padded = out.endswith(" ")
            out = out.rstrip(" ") if padded else out
            out += r" *\S+" if padded else r"\S+"
        elif p == "<any>":
            out += ".*"
        else:
            out += re.escape(p).replace("\\ ", " ")
    return re.compile(out + r"\Z")


def trimmed(lines):
    lines = [l.rstrip() for l in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    show, gpu_only = "--show" in sys.argv, "--gpu-only" in sys.argv
    if len(args) != 3:
        raise SystemExit(__doc__)
    doc, bin_dir, examples = os.path.abspath(args[0]), os.path.abspath(args[1]), args[2]
    blocks = parse(doc)
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""), LC_ALL="C")
    work = tempfile.mkdtemp(prefix="gemmkit-tutorial-")
    try:
        shutil.copytree(examples, work, dirs_exist_ok=True)
        gpu = subprocess.run(["gemmkit", "device"], cwd=work, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL).returncode == 0
        count = failed = skipped = 0
        for kind, start, commands in blocks:
            if kind == "gpu" and not gpu:
                for command, _, _ in commands:
                    skipped += 1
                    print(f"SKIPPED (no CUDA device): {os.path.basename(doc)}:{start}: {command}")
                continue
            for command, expected, status in commands:
                r = subprocess.run(["sh", "-c", command], cwd=work, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
                actual = trimmed(r.stdout.decode("utf-8", "replace").split("\n"))
                if gpu_only and kind != "gpu":
                    continue
                count += 1
                if show:
                    print("$ " + command)
                    print("\n".join(actual))
                    if r.returncode:
                        print(f"[exit {r.returncode}]")
                    continue
                want = trimmed(expected)
                problem = None
                if r.returncode != status:
                    problem = f"exit {r.returncode}, expected {status}"
                elif len(actual) != len(want):
                    problem = f"{len(actual)} lines, expected {len(want)}"
                else:
                    for a, w in zip(actual, want):
                        if not pattern(w).match(a):
                            problem = f"printed '{a}', expected '{w}'"
                            break
                if problem:
                    failed += 1
                    print(f"FAILED ({problem}): {os.path.basename(doc)}:{start}: {command}")
                    for l in actual[:40]:
                        print("    " + l)
                else:
                    print(f"ok: {command}")
        print(f"{count} tutorial commands, {failed} failed, {skipped} skipped (GPU: {int(gpu)})")
        return 0 if count > 0 and failed == 0 else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
