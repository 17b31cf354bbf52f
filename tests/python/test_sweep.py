"""`lockstep sweep`: a study of many runs, the same whichever way it is run.

Needs LOCKSTEP_BIN, LOCKSTEP_SOURCE_DIR and analysis/ on PYTHONPATH (ctest sets them), and Debian's
OpenMPI (`mpirun`) for the MPI case.
"""

import filecmp
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

import h5py
import lockstep_analysis as la

BIN = os.environ["LOCKSTEP_BIN"]
SOURCE = Path(os.environ["LOCKSTEP_SOURCE_DIR"])
SANITIZED = os.environ.get("LOCKSTEP_SANITIZED", "0") == "1"
# About 0.05 s a run: plain data parallelism over 64 GPUs at flow level, two steps.
QUICK = SOURCE / "scenarios" / "war-stories" / "4_gradient_overlap_off.yaml"
# About 0.5 s a run (without its fault): long enough to kill a sweep while a point runs.
SLOWER = SOURCE / "scenarios" / "war-stories" / "2_xid_hang.yaml"

GRID = f"""base: {QUICK}
set: {{job.steps: 2}}
vary:
  job.overlap_grad_reduce: [false, true]
  network.topology.link_rate: {{from: 200Gbps, to: 400Gbps, step: 100Gbps}}
"""


def documented_index():
    """{"points": [(column, type)], "/meta": [(dataset, type)]} from the schema doc's sweep index
    section."""
    text = (SOURCE / "analysis" / "hdf5_schema.md").read_text()
    section = text[text.index("## Sweep index"):]
    documented = {}
    current = None
    for line in section.splitlines()[1:]:
        if line.startswith("## "):
            break
        heading = re.fullmatch(r"#### `([^`]+)`", line)
        if heading:
            current = documented.setdefault(heading.group(1), [])
        elif current is not None and line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            current.append((cells[0].strip("`"), cells[1]))
    return documented


def sweep(*args, cwd, env=None, timeout=300):
    return subprocess.run([BIN, "sweep", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout)


def point_files(directory):
    return sorted(p.name for p in (directory / "points").glob("*.h5"))


class SweepTestCase(unittest.TestCase):
    def setUp(self):
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.dir = Path(directory.name)

    def write(self, name, text):
        path = self.dir / name
        path.write_text(text)
        return path

    def assert_exit(self, result, code):
        self.assertEqual(result.returncode, code,
                         f"exit {result.returncode}\nstdout: {result.stdout}\nstderr: {result.stderr}")

    def assert_same_study(self, first, second):
        """Every point's file and the index identical to the byte (logs hold wall times)."""
        self.assertEqual(point_files(first), point_files(second))
        names = point_files(first) + ["../index.h5", "../points.txt"]
        match, mismatch, errors = filecmp.cmpfiles(first / "points", second / "points", names,
                                                   shallow=False)
        self.assertEqual((mismatch, errors), ([], []))


class GridTest(SweepTestCase):
    def test_cartesian_points_run_and_index_their_results(self):
        sweep_file = self.write("grid.yaml", GRID)
        result = sweep(sweep_file, "-o", "study", cwd=self.dir)
        self.assert_exit(result, 0)
        index = la.load_table(self.dir / "study" / "index.h5", "points")
        # The first key varies slowest; the range includes both ends.
        self.assertEqual(list(index["job.overlap_grad_reduce"]), ["false"] * 3 + ["true"] * 3)
        self.assertEqual(list(index["network.topology.link_rate"]),
                         ["200Gbps", "300Gbps", "400Gbps"] * 2)
        self.assertEqual(list(index.status), ["done"] * 6)
        for _, row in index.iterrows():
            path = self.dir / "study" / row.file
            steps = la.load_table(path, "steps")
            durations = sorted(steps.end_ps - steps.start_ps)
            self.assertEqual(row.step_time_ps, durations[(len(durations) - 1) // 2])
            self.assertEqual(row.outcome, la.meta(path)["outcome"])
            resolved = la.scenario(path)
            self.assertEqual(str(resolved["job"]["overlap_grad_reduce"]).lower(),
                             row["job.overlap_grad_reduce"])
            self.assertEqual(resolved["network"]["topology"]["link_rate"],
                             row["network.topology.link_rate"])
        # Faster links shorten the step; overlapping the reduction shortens it more.
        by_rate = index.groupby("job.overlap_grad_reduce").step_time_ps.apply(list)
        for times in by_rate:
            self.assertEqual(times, sorted(times, reverse=True))
            self.assertGreater(times[0], times[-1])
        for overlapped, exposed in zip(by_rate["true"], by_rate["false"]):
            self.assertLess(overlapped, exposed)

    def test_the_index_is_as_documented(self):
        sweep_file = self.write("seeded.yaml", GRID.replace("vary:", "seeds: 2\nvary:"))
        self.assert_exit(sweep(sweep_file, "-j", 2, "-o", "study", cwd=self.dir), 0)
        documented = documented_index()
        types = {"int64": "<i8", "float64": "<f8"}
        with h5py.File(self.dir / "study" / "index.h5", "r") as f:
            table = f["points"]
            names = list(table.dtype.names)
            parameters = ["job.overlap_grad_reduce", "network.topology.link_rate"]
            self.assertEqual(names[1:3], parameters)
            self.assertEqual([n for n in names if n not in parameters],
                             [name for name, _ in documented["points"]])
            for name, kind in documented["points"] + [(p, "string") for p in parameters]:
                dtype = table.dtype[name]
                if kind == "string":
                    self.assertEqual(dtype.kind, "S", name)
                else:
                    self.assertEqual(dtype.str, types[kind], name)
            self.assertEqual(table.chunks, (1024,))
            self.assertEqual(table.compression, "gzip")
            self.assertEqual(sorted(f["meta"]), sorted(name for name, _ in documented["/meta"]))
            self.assertEqual(f["meta/kind"][()], b"sweep")
            seen = []
            f.visit(seen.append)
            self.assertEqual(sorted(seen), sorted(["points", "meta"] +
                                                  [f"meta/{n}" for n, _ in documented["/meta"]]))
        index = la.load_table(self.dir / "study" / "index.h5", "points")
        self.assertEqual(list(index.seed), [1, 2] * 6)
        self.assertEqual(list(index.point), list(range(12)))

    def test_zip_seeds_and_factor_ranges_expand_as_written(self):
        sweep_file = self.write("zipped.yaml", f"""base: {QUICK}
vary:
  job.global_batch: {{from: 64, to: 256, factor: 2}}
  job.steps: [1, 2, 3]
zip: [[job.global_batch, job.steps]]
seeds: [7, 9]
""")
        result = sweep(sweep_file, "--list", cwd=self.dir)
        self.assert_exit(result, 0)
        lines = result.stdout.splitlines()
        self.assertEqual(len(lines), 6)
        self.assertIn("--set job.global_batch=64 --set job.steps=1 --seed 7", lines[0])
        self.assertIn("--set job.global_batch=64 --set job.steps=1 --seed 9", lines[1])
        self.assertIn("--set job.global_batch=256 --set job.steps=3 --seed 9", lines[5])
        self.assertFalse((self.dir / "zipped").exists(), "--list ran something")


class SameStudyEveryWayTest(SweepTestCase):
    def test_one_two_processes_and_mpi_give_identical_files(self):
        sweep_file = self.write("grid.yaml", GRID)
        self.assert_exit(sweep(sweep_file, "-j", 1, "-o", "serial", cwd=self.dir), 0)
        self.assert_exit(sweep(sweep_file, "-j", 2, "-o", "parallel", cwd=self.dir), 0)
        mpirun = shutil.which("mpirun")
        self.assertIsNotNone(mpirun, "Debian's openmpi-bin is needed (.ci/install-dependencies)")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1")
        if SANITIZED:
            env["ASAN_OPTIONS"] = "detect_leaks=0"  # Open MPI keeps its allocations to exit
        result = subprocess.run([mpirun, "-n", "3", BIN, "sweep", sweep_file, "-o", "mpi"],
                                capture_output=True, text=True, cwd=self.dir, env=env, timeout=300)
        self.assert_exit(result, 0)
        self.assertIn("by 3 MPI processes", result.stdout)
        self.assert_same_study(self.dir / "serial", self.dir / "parallel")
        self.assert_same_study(self.dir / "serial", self.dir / "mpi")

    def test_slurm_array_tasks_share_the_points_and_the_last_writes_the_index(self):
        sweep_file = self.write("grid.yaml", GRID)
        self.assert_exit(sweep(sweep_file, "-o", "whole", cwd=self.dir), 0)
        for task in (3, 7):  # an array --array=3-7:4
            env = dict(os.environ, SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_TASK_MIN="3",
                       SLURM_ARRAY_TASK_STEP="4", SLURM_ARRAY_TASK_COUNT="2")
            result = sweep(sweep_file, "-o", "array", cwd=self.dir, env=env)
            self.assert_exit(result, 0)
            done = point_files(self.dir / "array")
            if task == 3:
                self.assertEqual(done, ["0000.h5", "0002.h5", "0004.h5"])
                self.assertFalse((self.dir / "array" / "index.h5").exists())
        self.assert_same_study(self.dir / "whole", self.dir / "array")
        bad = sweep(sweep_file, "-o", "x", "--shard", "2/2", cwd=self.dir)
        self.assert_exit(bad, 2)
        self.assertIn("--shard takes I/N", bad.stderr)


class ResumeTest(SweepTestCase):
    def test_a_killed_sweep_resumes_without_redoing_finished_points(self):
        sweep_file = self.write("slow.yaml", f"""base: {SLOWER}
set: {{faults: []}}
vary:
  job.steps: [1, 2, 3, 4]
""")
        study = self.dir / "slow"
        killed = subprocess.Popen([BIN, "sweep", sweep_file], cwd=self.dir,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while not (study / "points" / "0000.h5").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        first = (study / "points" / "0000.h5").stat()
        # The running point's child was told to stop with its parent: nothing half-written stays.
        deadline = time.monotonic() + 30
        while list((study / "points").glob("*.partial*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(list((study / "points").glob("*.partial*")), [])

        done_before = len(point_files(study))
        self.assertLess(done_before, 4, "the sweep finished before it could be killed")
        resumed = sweep(sweep_file, cwd=self.dir)
        self.assert_exit(resumed, 0)
        self.assertIn(f"{done_before} already done, {4 - done_before} to run", resumed.stdout)
        self.assertEqual(resumed.stdout.count("done in"), 4 - done_before)
        again = (study / "points" / "0000.h5").stat()
        self.assertEqual((first.st_ino, first.st_mtime_ns), (again.st_ino, again.st_mtime_ns))
        index = la.load_table(study / "index.h5", "points")
        self.assertEqual(list(index.steps), [1, 2, 3, 4])

    def test_a_directory_of_another_sweep_is_refused(self):
        self.assert_exit(sweep(self.write("grid.yaml", GRID), "-o", "study", cwd=self.dir), 0)
        other = self.write("other.yaml", GRID.replace("200Gbps", "100Gbps"))
        result = sweep(other, "-o", "study", cwd=self.dir)
        self.assert_exit(result, 2)
        self.assertIn("holds another sweep's points", result.stderr)


class FailureTest(SweepTestCase):
    def test_a_failing_point_is_recorded_and_the_others_go_on(self):
        sweep_file = self.write("some_bad.yaml", f"""base: {QUICK}
vary:
  job.parallelism.data: [64, sixty-four, 32]
""")
        result = sweep(sweep_file, "-j", 2, cwd=self.dir)
        self.assert_exit(result, 1)
        self.assertIn("1 failed", result.stdout)
        index = la.load_table(self.dir / "some_bad" / "index.h5", "points")
        self.assertEqual(list(index.status), ["done", "failed", "done"])
        self.assertIn("job.parallelism.data", index.message[1])
        self.assertIn("sixty-four", index.message[1])
        self.assertEqual(index.message[0], "")
        self.assertEqual(index.step_time_ps[1], -1)
        self.assertGreater(index.step_time_ps[0], 0)
        # Resuming retries only the failed point.
        again = sweep(sweep_file, cwd=self.dir)
        self.assertIn("2 already done, 1 to run", again.stdout)

    def test_bad_sweep_files_name_the_place_and_create_nothing(self):
        cases = {
            "vary: {job.steps: [1]}\n": "missing: the scenario the sweep varies",
            f"base: {QUICK}\nvary: {{job.steps: []}}\n": "2:19: vary.job.steps: an empty list",
            f"base: {QUICK}\nvary: {{job.steps: [1]}}\nseed: 3\n": "did you mean `seeds`",
            f"base: {QUICK}\nvary:\n  a: [1, 2]\n  b: [1]\nzip: [[a, b]]\n":
                "`b` has 1 values where the group's first key has 2",
            f"base: {QUICK}\nvary:\n  x: {{from: 1Gbps, to: 4GB/s, step: 1Gbps}}\n":
                "the same unit",
            f"base: {QUICK}\nvary:\n  x: {{from: 1, to: 1e9, step: 1}}\n": "more than 100000",
            "base: nowhere.yaml\nvary: {job.steps: [1]}\n": "no scenario file at",
            f"base: {QUICK}\nvary: {{job.steps: [1]}}\nvary: {{job.steps: [2]}}\n": "3:1",
        }
        for text, message in cases.items():
            with self.subTest(text=text):
                result = sweep(self.write("bad.yaml", text), cwd=self.dir)
                self.assert_exit(result, 2)
                self.assertIn(message, result.stderr)
                self.assertFalse((self.dir / "bad").exists())


if __name__ == "__main__":
    unittest.main()
