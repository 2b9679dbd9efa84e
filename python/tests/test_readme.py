"""README.md's Python example runs as written, in a scratch copy of examples/, and prints
what its comments say (a comment that is a bare value is what that line prints)."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def python_blocks(markdown: str):
    return re.findall(r"^```python\n(.*?)^```", markdown, flags=re.S | re.M)


def test_readme_python_example(tmp_path):
    blocks = python_blocks((ROOT / "README.md").read_text())
    assert blocks, "README.md has no python example"
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    for block in blocks:
        expected = [m.group(1) for m in re.finditer(r"#\s*(-?\d+)\s*$", block, flags=re.M)]
        result = subprocess.run([sys.executable, "-c", block], cwd=tmp_path / "examples",
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == expected, (block, result.stdout)
