#!/usr/bin/env python3
"""README.md's Layout block against the tree: every path it names exists, and every folder
of src/ and tests/ (one level down) is named, so the map cannot drift from the code.

  check_layout.py --root DIR [--pretend-folder src/NAME]
--pretend-folder adds a folder the README does not name (the test that shows the check fails).
Exit 0 when they agree, 1 with one line per disagreement."""

import argparse
import pathlib
import re
import sys


def layout_paths(readme: str) -> list[str]:
    """The paths at the start of the lines of the code block under '## Layout'."""
    match = re.search(r"^## Layout\n+```\n(.*?)^```", readme, re.S | re.M)
    if not match:
        raise SystemExit("check_layout: README.md has no '## Layout' code block")
    return [line.split()[0] for line in match.group(1).splitlines() if line and not line[0].isspace()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, type=pathlib.Path)
    parser.add_argument("--pretend-folder", action="append", default=[])
    args = parser.parse_args()
    root = args.root
    named = layout_paths((root / "README.md").read_text())
    problems = [f"README.md's Layout names {p}, which does not exist" for p in named if not (root / p).exists()]
    folders = {f"{d.relative_to(root)}/" for top in ("src", "tests") for d in (root / top).iterdir() if d.is_dir()}
    folders |= set(args.pretend_folder)
    covered = lambda folder: any(folder == p or folder.startswith(p) for p in named)
    problems += [f"README.md's Layout does not name {f}" for f in sorted(folders) if not covered(f)]
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
