#!/usr/bin/env python3
"""The checkers behind `results.manifests` and `docs.generated` catch what they are for:
run on a copy of the repository's results, docs and kernel files with one fault put in at
a time, each must exit 1 and name the fault; on the untouched copy both must pass.

    doc_tools.py SOURCE_DIR GEMMKIT
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE = pathlib.Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2]
GEMMKIT = sys.argv[2] if len(sys.argv) > 2 else str(SOURCE / "build/release/bin/gemmkit")
COPIED = ["bench/results", "docs", "README.md", "src/ops/gemm/cuda", "src/ops/gemm/cpu", "scripts"]


class DocTools(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.tmp.name)
        for rel in COPIED:
            src, dst = SOURCE / rel, self.root / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, script, *args):
        out = subprocess.run([sys.executable, str(SOURCE / "scripts" / script), "--root", str(self.root), *args],
                             capture_output=True, text=True, timeout=120)
        return out.returncode, out.stdout + out.stderr

    def check_results(self):
        return self.run_script("check_results.py")

    def gen_docs(self):
        return self.run_script("gen_docs.py", "--check", "--gemmkit", GEMMKIT)

    def run_folder(self, suite):
        for manifest in (self.root / "bench/results").glob("*/MANIFEST.json"):
            if json.loads(manifest.read_text())["suite"] == suite:
                return manifest.parent
        self.fail(f"no run of {suite}")

    def edit_manifest(self, folder, change):
        path = folder / "MANIFEST.json"
        doc = json.loads(path.read_text())
        change(doc)
        path.write_text(json.dumps(doc, indent=2))

    def test_untouched_copy_passes(self):
        rc, out = self.check_results()
        self.assertEqual(rc, 0, out)
        rc, out = self.gen_docs()
        self.assertIn(rc, (0, 77), out)

    def test_loose_file_is_refused(self):
        (self.root / "bench/results" / "2026-11-25_h200_bench.json").write_text("{}")
        rc, out = self.check_results()
        self.assertEqual(rc, 1)
        self.assertIn("2026-11-25_h200_bench.json", out)

    def test_file_missing_from_manifest(self):
        folder = self.run_folder("cuda_ladder_f32")
        (folder / "extra.txt").write_text("x")
        rc, out = self.check_results()
        self.assertEqual(rc, 1)
        self.assertIn("extra.txt: not in MANIFEST.json", out)

    def test_listed_file_that_is_gone(self):
        folder = self.run_folder("cuda_ladder_f32")
        (folder / "shapes.csv").unlink()
        rc, out = self.check_results()
        self.assertEqual(rc, 1)
        self.assertIn("lists `shapes.csv`", out)

    def test_dirty_result(self):
        folder = self.run_folder("cuda_ladder_f32")
        doc = json.loads((folder / "square.json").read_text())
        doc["environment"]["commit"] += "-dirty"
        (folder / "square.json").write_text(json.dumps(doc))
        rc, out = self.check_results()
        self.assertEqual(rc, 1)
        self.assertIn("from a dirty tree", out)

    def test_result_of_another_commit(self):
        folder = self.run_folder("cuda_ladder_f32")
        doc = json.loads((folder / "square.json").read_text())
        doc["environment"]["commit"] = "0123456789ab"
        (folder / "square.json").write_text(json.dumps(doc))
        rc, out = self.check_results()
        self.assertEqual(rc, 1)
        self.assertIn("built from 0123456789ab", out)

    def test_baseline_of_a_pair(self):
        folder = self.run_folder("cuda_ladder_f32")
        doc = json.loads((folder / "square.json").read_text())
        doc["environment"]["commit"] = "0123456789ab"
        (folder / "square.json").write_text(json.dumps(doc))
        self.edit_manifest(folder, lambda m: m.update(baseline={"commit": "0123456", "files": ["square.json"],
                                                                "why": "before"}))
        rc, out = self.check_results()
        self.assertEqual(rc, 0, out)
        # Only the named files may come from the baseline's build, and only from that one.
        self.edit_manifest(folder, lambda m: m.update(baseline={"commit": "fedcba9", "files": ["square.json"],
                                                                "why": "before"}))
        rc, out = self.check_results()
        self.assertEqual(rc, 1)
        self.assertIn("the baseline says fedcba9", out)
        self.edit_manifest(folder, lambda m: m.update(baseline={"commit": "0123456", "files": ["nope.json"],
                                                                "why": "before"}))
        rc, out = self.check_results()
        self.assertEqual(rc, 1)
        self.assertIn("`baseline` names `nope.json`", out)

    def test_two_runs_of_one_suite(self):
        folder = self.run_folder("cuda_ladder_f32")
        twin = folder.parent / "2026-11-30_h200_5e2f756"
        shutil.copytree(folder, twin)
        self.edit_manifest(twin, lambda d: d.update(date="2026-11-30"))
        rc, out = self.check_results()
        self.assertEqual(rc, 1)
        self.assertIn("a second run of suite `cuda_ladder_f32`", out)

    def test_folder_name_and_manifest_disagree(self):
        folder = self.run_folder("cpu_ladder")
        self.edit_manifest(folder, lambda d: d.update(commit="abcdef0"))
        rc, out = self.check_results()
        self.assertEqual(rc, 1)
        self.assertIn("must be those of the folder's name", out)

    def test_broken_reference(self):
        doc = self.root / "docs/ladder.md"
        # (spelled in two parts, so that the real tree's check does not read it as a reference)
        doc.write_text(doc.read_text() + "\nSee `bench/" + "results/2026-01-01_h200_0000000/x.json`.\n")
        rc, out = self.check_results()
        self.assertEqual(rc, 1)
        self.assertIn("2026-01-01_h200_0000000/x.json` does not exist", out)

    def test_stale_generated_table(self):
        doc = self.root / "docs/ladder.md"
        doc.write_text(doc.read_text().replace("| 3 | `cuda_naive` |", "| 3 | `cuda_naive_old` |"))
        rc, out = self.gen_docs()
        if rc == 77:
            self.skipTest("gemmkit built without CUDA")
        self.assertEqual(rc, 1)
        self.assertIn("docs/ladder.md: generated part not current", out)

    def test_summary_drifts_from_kernel_file(self):
        path = self.root / "src/ops/gemm/cuda/hopper/18_wgmma_tma.cuh"
        path.write_text(path.read_text().replace("Rung 18, Hopper wgmma fed by TMA.", "Rung 18, Hopper wgmma, one warpgroup.", 1))
        rc, out = self.gen_docs()
        if rc == 77:
            self.skipTest("gemmkit built without CUDA")
        self.assertEqual(rc, 1)
        self.assertIn("cuda_wgmma_tma (rung 18): registry summary", out)

    def test_slower_rung_needs_a_reason(self):
        self.edit_manifest(self.run_folder("cuda_ladder_f32"), lambda d: d["slower_because"].pop("cuda_coalesced"))
        rc, out = self.gen_docs()
        if rc == 77:
            self.skipTest("gemmkit built without CUDA")
        self.assertEqual(rc, 1)
        self.assertIn("needs slower_because.cuda_coalesced", out)

    def test_a_drafted_run_is_refused_until_filled_in(self):
        src = self.run_folder("exact_int8")
        draft = self.root / "draft"
        draft.mkdir()
        for name in ("i8_squares_tn.json", "i8_squares_nn.json"):
            shutil.copy(src / name, draft / name)
        out = subprocess.run([sys.executable, str(SOURCE / "scripts/new_run.py"), str(draft), "--suite", "int8_again",
                              "--device-short", "h200"], capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        doc = json.loads((draft / "MANIFEST.json").read_text())
        self.assertEqual((doc["date"], doc["commit"], doc["device"]), ("2026-11-24", "261e11a", "NVIDIA H200"))
        target = self.root / "bench/results" / f"{doc['date']}_h200_{doc['commit']}x"
        draft.rename(target)  # a name off the convention, and files without what/command
        rc, out = self.check_results()
        self.assertEqual(rc, 1)
        self.assertIn(target.name, out)
        target.rename(target.with_name(target.name[:-1] + "_"))  # still off: no underscore after the commit
        rc, out = self.check_results()
        self.assertEqual(rc, 1)

    def new_run(self, folder):
        return subprocess.run([sys.executable, str(SOURCE / "scripts/new_run.py"), str(folder), "--suite", "x",
                               "--device-short", "h200"], capture_output=True, text=True, timeout=60)

    def test_new_run_refuses_a_dirty_build_and_keeps_a_manifest(self):
        draft = self.root / "draft"
        draft.mkdir()
        shutil.copy(self.run_folder("suite_tuning") / "suite_all_f16.json", draft)  # meta: dirty
        out = self.new_run(draft)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("dirty tree", out.stderr)
        self.assertFalse((draft / "MANIFEST.json").exists())
        out = self.new_run(self.run_folder("cpu_ladder"))
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("exists", out.stderr)

    def test_newer_run_of_a_suite_takes_over(self):
        # A run replaced under a new folder name: the tables follow it without any code change.
        old = self.run_folder("tensor_ladder")
        new = old.parent / "2026-11-29_h200_87b9a6e"
        old.rename(new)
        self.edit_manifest(new, lambda d: d.update(date="2026-11-29"))
        rc, out = self.gen_docs()
        if rc == 77:
            self.skipTest("gemmkit built without CUDA")
        self.assertEqual(rc, 1)  # the tables now name the new folder: not current until rewritten
        rc, out = self.run_script("gen_docs.py", "--gemmkit", GEMMKIT)
        self.assertEqual(rc, 0, out)
        self.assertIn("2026-11-29_h200_87b9a6e", (self.root / "docs/ladder.md").read_text())
        rc, out = self.gen_docs()
        self.assertEqual(rc, 0, out)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=1)
