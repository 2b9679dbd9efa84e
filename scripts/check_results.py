#!/usr/bin/env python3
"""Checks bench/results: one folder per run, named <date>_<device>_<commit>, each with a
MANIFEST.json that names every file in it (docs/results_schema.md), one run per (device,
suite), no result from a dirty tree, and every path under bench/results/ that the docs,
code, tests and scripts mention exists.

    scripts/check_results.py [--root REPO]

Prints one line per problem (`path: what`) and exits 1 if there is any; 0 and a summary
line otherwise. Python 3 standard library only.
"""
import argparse
import glob
import json
import pathlib
import re
import subprocess
import sys

MANIFEST = "MANIFEST.json"
FOLDER_RE = re.compile(r"^(\d{4}-\d\d-\d\d)_([a-z0-9]+(?:-[a-z0-9]+)*)_([0-9a-f]{7})$")
REQUIRED = {"schema": str, "schema_version": int, "suite": str, "about": str, "date": str,
            "device": str, "device_short": str, "commit": str, "files": dict}
# Where references to results files may appear, and what a reference looks like.
REFERRING = ["README.md", "docs/**/*.md", "src/**/*", "include/**/*", "tests/**/*", "apps/**/*",
             "bench/**/*.py", "bench/**/*.sh", "bench/**/*.cpp", "bench/**/*.cu", "scripts/*",
             "python/**/*.py", "bench/results/*/README.md", "bench/results/README.md"]
REF_RE = re.compile(r"bench/results/[A-Za-z0-9_.*{},/-]*")


def load_manifest(folder, problems):
    path = folder / MANIFEST
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        problems.append(f"{folder}: no {MANIFEST}")
        return None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        problems.append(f"{path}: not JSON ({e})")
        return None
    if not isinstance(doc, dict):
        problems.append(f"{path}: not a JSON object")
        return None
    for key, kind in REQUIRED.items():
        if not isinstance(doc.get(key), kind):
            problems.append(f"{path}: `{key}` missing or not a {kind.__name__}")
            return None
    if doc["schema"] != "gemmkit-results-manifest" or doc["schema_version"] != 1:
        problems.append(f"{path}: schema must be gemmkit-results-manifest, version 1")
        return None
    for key in ("driver", "cuda"):
        if key not in doc or not (doc[key] is None or isinstance(doc[key], str)):
            problems.append(f"{path}: `{key}` must be a string or null (null: no GPU)")
    return doc


def meta_commit(path):
    """(commit as recorded, dirty) of a result JSON's run metadata; None if it has none."""
    try:
        doc = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError):
        return "not JSON"
    meta = (doc.get("meta") or doc.get("environment")) if isinstance(doc, dict) else None
    if not isinstance(meta, dict) or not isinstance(meta.get("commit"), str):
        return None
    commit = meta["commit"]
    return commit, commit.endswith("-dirty") or meta.get("dirty") is True


def parent_of(root, commit):
    """The first parent's hash of commit, or None when git or the commit is not at hand."""
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "--verify", "--quiet", f"{commit}^"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def check_run(root, folder, problems):
    doc = load_manifest(folder, problems)
    if doc is None:
        return None
    where = folder / MANIFEST
    date, short, commit = FOLDER_RE.match(folder.name).groups()
    if (doc["date"], doc["device_short"], doc["commit"]) != (date, short, commit):
        problems.append(f"{where}: date, device_short and commit must be those of the folder's "
                        f"name ({date}, {short}, {commit})")
    on_disk = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST}
    listed = set(doc["files"])
    for name in sorted(on_disk - listed):
        problems.append(f"{folder / name}: not in {MANIFEST}")
    for name in sorted(listed - on_disk):
        problems.append(f"{where}: lists `{name}`, which is not in the folder")
    for name, entry in sorted(doc["files"].items()):
        if not (isinstance(entry, dict) and isinstance(entry.get("what"), str) and entry["what"]
                and isinstance(entry.get("command"), str) and entry["command"]):
            problems.append(f"{where}: `{name}` needs a non-empty `what` and `command`")
    built = doc.get("built_from_uncommitted")
    if built is not None:
        if not (isinstance(built, dict) and isinstance(built.get("recorded"), str)
                and isinstance(built.get("why"), str)):
            problems.append(f"{where}: `built_from_uncommitted` needs `recorded` and `why`")
            built = None
        else:
            # The build's tree must be exactly what `commit` recorded on top of its parent:
            # the parent is what the binary's metadata names.
            parent = parent_of(root, commit)
            recorded = built["recorded"].removesuffix("-dirty")
            if parent is not None and not parent.startswith(recorded[:7]):
                problems.append(f"{where}: the parent of {commit} is {parent[:12]}, not the recorded {recorded}")
    # A before/after pair (the same suite by an older build beside this one, in one session)
    # names the older build's commit; only the files listed under it may come from that build.
    baseline = doc.get("baseline")
    if baseline is not None and not (isinstance(baseline, dict) and isinstance(baseline.get("commit"), str)
                                     and isinstance(baseline.get("files"), list) and baseline["files"]
                                     and isinstance(baseline.get("why"), str) and baseline["why"]):
        problems.append(f"{where}: `baseline` needs `commit`, a non-empty `files` list and `why`")
        baseline = None
    baseline_files = set(baseline["files"]) if baseline else set()
    for name in sorted(baseline_files - listed):
        problems.append(f"{where}: `baseline` names `{name}`, which `files` does not list")
    for name in sorted(on_disk & listed):
        if not name.endswith(".json"):
            continue
        found = meta_commit(folder / name)
        if found == "not JSON":
            problems.append(f"{folder / name}: not JSON")
            continue
        if found is None:
            continue
        recorded, dirty = found
        if name in baseline_files:
            if dirty or not recorded.startswith(baseline["commit"]):
                problems.append(f"{folder / name}: built from {recorded}, the baseline says {baseline['commit']}")
            continue
        if built is not None and recorded.removesuffix("-dirty") == built["recorded"].removesuffix("-dirty"):
            continue
        if dirty:
            problems.append(f"{folder / name}: from a dirty tree ({recorded}); only a build whose "
                            "changes were committed next may be kept, named in `built_from_uncommitted`")
        elif not recorded.startswith(commit):
            problems.append(f"{folder / name}: built from {recorded}, the folder says {commit}")
    return doc


def check_references(root, problems):
    seen = set()
    for pattern in REFERRING:
        for path in sorted(root.glob(pattern)):
            if not path.is_file() or path in seen or ".git" in path.parts or path.name == "check_results.py":
                continue
            seen.add(path)
            try:
                text = path.read_text()
            except UnicodeDecodeError:
                continue
            for lineno, line in enumerate(text.splitlines(), 1):
                for ref in REF_RE.findall(line):
                    ref = ref.rstrip(".,")
                    if re.search(r"\{[^{},]*\}", ref):
                        continue  # a template such as {date}_{device}, not a list of names
                    if ref.endswith("/") or ref == "bench/results":
                        ref = ref.rstrip("/")
                    for one in expand_braces(ref):
                        if not glob.glob(str(root / one)):
                            problems.append(f"{path.relative_to(root)}:{lineno}: `{one}` does not exist")


def expand_braces(text):
    m = re.search(r"\{([^{}]*)\}", text)
    if not m:
        return [text]
    return [x for alt in m.group(1).split(",") for x in expand_braces(text[:m.start()] + alt + text[m.end():])]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parents[1],
                    help="the repository's root (default: this script's)")
    args = ap.parse_args()
    root = args.root.resolve()
    results = root / "bench/results"
    problems = []
    runs = {}
    for entry in sorted(results.iterdir()):
        if entry.name == "README.md":
            continue
        if not entry.is_dir() or not FOLDER_RE.match(entry.name):
            problems.append(f"{entry.relative_to(root)}: bench/results holds README.md and run folders "
                            "named <YYYY-MM-DD>_<device>_<7-digit commit> only")
            continue
        doc = check_run(root, entry, problems)
        if doc is not None:
            key = (doc["device"], doc["suite"])
            if key in runs:
                problems.append(f"{entry.relative_to(root)}: a second run of suite `{doc['suite']}` on "
                                f"{doc['device']} (the other: {runs[key]}); keep the newest, git rm the other")
            runs[key] = entry.name
    check_references(root, problems)
    for p in problems:
        print(str(p).replace(str(root) + "/", ""), file=sys.stderr)
    if problems:
        print(f"check_results.py: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"check_results.py: {len(runs)} runs, each with a manifest naming every file; references resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
