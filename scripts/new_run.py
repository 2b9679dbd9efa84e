#!/usr/bin/env python3
"""Drafts the MANIFEST.json of a new run from the run metadata of its result files, and says
the folder name it takes under bench/results (docs/results_schema.md, "Adding a run").

    scripts/new_run.py DIR --suite NAME --device-short SHORT [--about TEXT]

DIR holds the run's files. Every result JSON with run metadata must name the same clean
commit (a dirty one is refused: rebuild from a commit). The draft lists every file with an
empty `what` and `command`, which scripts/check_results.py refuses until they are filled
in; `driver` is left for you when the files do not say it. Nothing is written if DIR
already has a MANIFEST.json. Python 3 standard library only.
"""
import argparse
import json
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from check_results import MANIFEST, meta_commit  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=pathlib.Path, help="the folder with the run's files")
    ap.add_argument("--suite", required=True, help="what was run, e.g. tensor_ladder, exact_int8")
    ap.add_argument("--device-short", required=True, help="short lower-case device name, e.g. h200")
    ap.add_argument("--about", default="", help="one sentence on the run")
    args = ap.parse_args()
    folder = args.dir
    if not folder.is_dir():
        sys.exit(f"new_run.py: {folder}: not a folder")
    if (folder / MANIFEST).exists():
        sys.exit(f"new_run.py: {folder / MANIFEST} exists; edit it instead")
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", args.device_short):
        sys.exit(f"new_run.py: --device-short '{args.device_short}': lower-case letters, digits and '-' only")
    commits, dates, device, cuda = set(), [], None, None
    for path in sorted(folder.rglob("*.json")):
        found = meta_commit(path)
        if found in (None, "not JSON"):
            continue
        commit, dirty = found
        if dirty:
            sys.exit(f"new_run.py: {path}: built from a dirty tree ({commit}); rebuild from a commit and run again")
        commits.add(commit[:7])
        meta = json.loads(path.read_text()).get("meta") or {}
        if meta.get("date"):
            dates.append(meta["date"])
        device = device or (meta.get("gpu") or {}).get("name") or meta.get("cpu")
        if meta.get("cuda_runtime_version"):
            v = meta["cuda_runtime_version"]
            cuda = f"{v // 1000}.{v % 1000 // 10}"
    if len(commits) != 1:
        sys.exit(f"new_run.py: the result JSONs name {len(commits)} commits ({', '.join(sorted(commits)) or 'none'}); "
                 "a run is one build")
    commit = commits.pop()
    date = min(dates)[:10] if dates else "YYYY-MM-DD"
    doc = {"schema": "gemmkit-results-manifest", "schema_version": 1, "suite": args.suite, "about": args.about,
           "date": date, "device": device or "", "device_short": args.device_short, "driver": None if cuda is None else "",
           "cuda": cuda, "commit": commit,
           "files": {str(p.relative_to(folder)): {"what": "", "command": ""}
                     for p in sorted(folder.rglob("*")) if p.is_file()}}
    (folder / MANIFEST).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    print(f"new_run.py: wrote {folder / MANIFEST}; fill in `what`, `command` and `driver`, then move the "
          f"folder to bench/results/{date}_{args.device_short}_{commit}/ and run scripts/check_results.py")


if __name__ == "__main__":
    main()
