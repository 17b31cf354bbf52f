"""`lockstep plot`: every kind of figure drawn from a small real run, as a user runs it
(analysis/plot.py), checked for what a reader needs: a PNG of the promised size that is not blank,
an SVG whose title names the run and whose drawn elements match the run's data; and a run of the
wrong kind refused with exit 2 and a message that says what is needed.

Needs LOCKSTEP_BIN (the program), LOCKSTEP_SOURCE_DIR (the source tree) and analysis/ on PYTHONPATH:

    LOCKSTEP_BIN=build/release/lockstep LOCKSTEP_SOURCE_DIR=. PYTHONPATH=analysis \\
        /usr/bin/python3 tests/python/test_plot.py -v
"""

import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

import matplotlib.image
import numpy as np

import lockstep_analysis as la

BIN = os.environ["LOCKSTEP_BIN"]
SOURCE = Path(os.environ["LOCKSTEP_SOURCE_DIR"])
PLOT = SOURCE / "analysis" / "plot.py"
SVG = "{http://www.w3.org/2000/svg}"
# Every figure is 10 inches wide at 100 dpi; the default height is 6 inches.
WIDTH, HEIGHT = 1000, 600

# The worked example made small (as tests/python/test_cli.py does): 3 steps, rank 3's GPU at 92%;
# its ops are recorded for ranks 0, 8, 64, 128 and 192 (the scenario's job.record_ops).
SMALL_JOB = ["--set", "network.model=analytic", "--set", "job.model.layers=8",
             "--set", "job.global_batch=32", "--set", "job.steps=3",
             "--set", "job.slow_gpus=[{rank: 3, clock: 92%}]"]


def lockstep(*args, cwd=None):
    result = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                            timeout=60)
    if result.returncode != 0:
        raise RuntimeError(f"lockstep {' '.join(map(str, args))}: {result.stderr}")


def plot(*args, cwd=None):
    return subprocess.run([sys.executable, str(PLOT), *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


class PlotTestCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        directory = tempfile.TemporaryDirectory()
        cls.addClassCleanup(directory.cleanup)
        cls.dir = Path(directory.name)
        cls.job = cls.dir / "job.h5"
        lockstep("run", "-o", cls.job, *SMALL_JOB)
        # The incast pauses several ports (PFC) with a pause threshold half the shipped one (at
        # the shipped one, one or two, depending on the order of simultaneous arrivals);
        # victim.yaml's flows take 2 and 4 hops.
        cls.incast = cls.dir / "incast.h5"
        lockstep("run", SOURCE / "scenarios" / "fabric" / "incast.yaml", "--set",
                 "network.switches.pfc.alpha=6.25%", "-o", cls.incast)
        cls.victim = cls.dir / "victim.h5"
        lockstep("run", SOURCE / "scenarios" / "fabric" / "victim.yaml", "-o", cls.victim)
        cls.nccl = cls.dir / "nccl.h5"
        lockstep("nccl-tests", "all_reduce", SOURCE / "scenarios" / "collectives" /
                 "leaf_spine_16.yaml", "-b", "8", "-e", "1M", "-f", "4", "-o", cls.nccl)

    def draw(self, *args, name):
        """Run `lockstep plot ARGS -o DIR/NAME`; the parsed SVG's root and the PNG's pixels."""
        prefix = self.dir / name
        result = plot(*args, "-o", prefix)
        self.assertEqual(result.returncode, 0, result.stderr)
        png, svg = prefix.with_suffix(".png"), prefix.with_suffix(".svg")
        self.assertIn(f"wrote {png}", result.stdout)
        self.assertIn(f"wrote {svg}", result.stdout)
        return ET.parse(svg).getroot(), matplotlib.image.imread(png)

    def assert_picture(self, pixels, height=HEIGHT):
        self.assertEqual(pixels.shape[:2], (height, WIDTH))
        colours = np.unique(pixels.reshape(-1, pixels.shape[2]), axis=0)
        self.assertGreater(len(colours), 20, "the PNG is (nearly) one colour")

    def assert_text(self, root, text):
        self.assertIn(text, "".join(root.itertext()))

    def group(self, root, gid):
        found = root.find(f".//{SVG}g[@id='{gid}']")
        self.assertIsNotNone(found, f"no element with id {gid} in the SVG")
        return found

    def shapes(self, group):
        """Shapes an SVG group places: a line's markers, and a collection's shapes when that is
        shorter, are written once in <defs> and placed by <use>; else each is a path."""
        placed = group.findall(f".//{SVG}use")
        return len(placed) if placed else len(group.findall(f".//{SVG}path"))

    def groups(self, root, prefix):
        return [g for g in root.iter(f"{SVG}g") if g.get("id", "").startswith(prefix)]


class EachKind(PlotTestCase):
    def test_heatmap_marks_the_slowest_rank_of_every_step(self):
        root, pixels = self.draw("heatmap", self.job, name="heatmap")
        self.assert_picture(pixels)
        self.assert_text(root, "worked-example: own work / its pipeline stage's median per rank "
                               "and step")
        self.assert_text(root, "own work / its pipeline stage's median (x)")
        steps = la.load_table(self.job, "steps")
        self.assertEqual(self.shapes(self.group(root, "slowest-rank")), len(steps))

    def test_heatmap_of_many_ranks_shows_blocks_of_them(self):
        root, pixels = self.draw("heatmap", self.job, "--metric", "step", "--max-rows", "32",
                                 name="blocks")
        self.assert_picture(pixels)
        self.assert_text(root, "step time per rank and step")
        self.assert_text(root, "step time (ms)")
        self.assert_text(root, "each row: the largest of 8 ranks")  # 256 ranks in 32 rows

    def test_gantt_draws_every_op_of_the_step_on_the_chosen_ranks(self):
        root, pixels = self.draw("gantt", self.job, "--step", "0", "--ranks", "0,64", name="gantt")
        self.assert_text(root, "worked-example: step 0 on ranks 0,64")
        self.assert_text(root, "rank 64 compute")
        ops = la.load_table(self.job, "rank_ops")
        drawn = ops[ops["rank"].isin([0, 64]) & (ops["step"] == 0) & (ops["kind"] != "marker")]
        bars = sum(self.shapes(g) for g in self.groups(root, "ops-"))
        self.assertEqual(bars, len(drawn))
        self.assertEqual(pixels.shape[1], WIDTH)
        self.assert_picture(pixels, height=pixels.shape[0])

    def test_pfc_has_a_row_per_paused_port(self):
        root, pixels = self.draw("pfc", self.incast, name="pfc")
        self.assert_picture(pixels)
        self.assert_text(root, "incast: PFC pauses per port over time (class 3)")
        totals = la.load_table(self.incast, "port_totals")
        paused = totals[totals["paused_ps"] > 0]
        self.assertGreater(len(paused), 1)
        rows = [t for t in root.itertext() if t.split(" ", 1)[0].count(":") == 1
                and "→" in t]
        self.assertEqual(len(rows), len(paused))
        self.assertIn(f"{paused['node'].iloc[0]}:{paused['port'].iloc[0]} ", " ".join(rows))

    def test_queues_draw_the_four_deepest_queues_and_their_links(self):
        root, pixels = self.draw("queues", self.victim, name="queues")
        self.assertEqual(pixels.shape[:2], (700, WIDTH))
        self.assert_picture(pixels, height=700)
        self.assert_text(root, "victim: queue depth and utilization (class 3)")
        self.assertEqual(len(self.groups(root, "queue-")), 4)
        self.assertEqual(len(self.groups(root, "utilization-")), 4)
        self.assert_text(root, "12:1 spine0→leaf1")  # the port the victim flow shares

    def test_queues_of_chosen_ports(self):
        root, _ = self.draw("queues", self.victim, "--ports", "11:0,12:1", name="chosen")
        self.assertEqual(sorted(g.get("id") for g in self.groups(root, "queue-")),
                         ["queue-11-0", "queue-12-1"])

    def test_busbw_has_a_marker_per_size(self):
        root, pixels = self.draw("busbw", self.nccl, name="busbw")
        self.assert_picture(pixels)
        self.assert_text(root, "leaf_spine_16: nccl-tests all_reduce bus bandwidth")
        self.assert_text(root, "bus bandwidth (GB/s)")
        sizes = la.load_table(self.nccl, "nccl_tests")
        self.assertEqual(self.shapes(self.group(root, "busbw-0")), len(sizes))

    def test_fct_draws_a_cdf_per_run_and_group(self):
        root, pixels = self.draw("fct", self.victim, self.incast, "--by", "hops", name="fct")
        self.assert_picture(pixels)
        self.assert_text(root, "victim vs incast: flow completion time CDF by hops")
        groups = sum(la.flow_paths(run)["hops"].nunique() for run in (self.victim, self.incast))
        self.assertEqual(len(self.groups(root, "fct-")), groups)
        self.assert_text(root, "victim, 4 hops")

    def test_without_output_the_figure_is_named_after_the_run_in_the_working_directory(self):
        out = self.dir / "here"
        out.mkdir()
        result = plot("fct", self.victim, cwd=out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(sorted(p.name for p in out.iterdir()),
                         ["victim-fct.png", "victim-fct.svg"])

    def test_the_same_run_gives_the_same_files(self):
        from lockstep_analysis.plots import heatmap, save
        first = save(heatmap(self.job), self.dir / "first")
        second = save(heatmap(self.job), self.dir / "second")
        for a, b in zip(first, second):
            self.assertEqual(a.read_bytes(), b.read_bytes(), f"{a.name} differs between renders")


class OutputPaths(PlotTestCase):
    """-o names the file a user expects: its suffix names the format; only a path without one gets
    both PNG and SVG."""

    def written(self, output):
        out = self.dir / f"out-{output}"
        out.mkdir()
        result = plot("heatmap", self.job, "-o", out / output)
        return result, sorted(p.name for p in out.iterdir())

    def test_a_suffix_writes_exactly_that_file_in_its_format(self):
        magic = {"x.png": b"\x89PNG", "x.svg": b"<?xml", "x.pdf": b"%PDF"}
        for name, start in magic.items():
            with self.subTest(name=name):
                result, files = self.written(name)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(files, [name])
                written = self.dir / f"out-{name}" / name
                self.assertEqual(written.read_bytes()[:len(start)], start)
                self.assertEqual(result.stdout.strip(), f"lockstep plot: wrote {written.resolve()}")

    def test_no_suffix_writes_png_and_svg(self):
        result, files = self.written("x")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(files, ["x.png", "x.svg"])

    def test_a_suffix_that_names_no_format_is_refused_and_writes_nothing(self):
        for name in ("x.jpg", "x.txt"):
            with self.subTest(name=name):
                result, files = self.written(name)
                self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
                self.assertIn(f"'{name}' ends in '{name[1:]}'", result.stderr)
                self.assertIn(".png, .svg, .pdf", result.stderr)
                self.assertEqual(files, [])

    def test_a_default_name_with_dots_still_gets_png_and_svg(self):
        out = self.dir / "dotted"
        out.mkdir()
        dotted = out / "job.v2.h5"
        dotted.write_bytes(self.job.read_bytes())
        result = plot("heatmap", dotted, "-o", f"{out}/")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(sorted(p.name for p in out.iterdir()),
                         ["job.v2-heatmap.png", "job.v2-heatmap.svg", "job.v2.h5"])

    def test_the_same_run_gives_the_same_pdf(self):
        from lockstep_analysis.plots import heatmap, save
        first, = save(heatmap(self.job), self.dir / "first.pdf")
        second, = save(heatmap(self.job), self.dir / "second.pdf")
        self.assertEqual(first.read_bytes(), second.read_bytes())


class WrongInput(PlotTestCase):
    def assert_refused(self, result, *messages):
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        for message in messages:
            self.assertIn(message, result.stderr)
        self.assertEqual(list(self.dir.glob("refused*")), [])

    def test_a_figure_of_the_wrong_kind_of_run_is_refused(self):
        self.assert_refused(plot("heatmap", self.victim, "-o", self.dir / "refused"),
                            "heatmap needs a job run", "victim.h5 is a fabric run")
        self.assert_refused(plot("busbw", self.job, "-o", self.dir / "refused"),
                            "busbw needs an nccl-tests run", "job.h5 is a job run")

    def test_port_figures_need_sampled_counters(self):
        self.assert_refused(plot("pfc", self.job, "-o", self.dir / "refused"),
                            "network.sample_period", "'port_samples' table of job.h5 has no rows")

    def test_ranks_without_recorded_ops_are_named(self):
        self.assert_refused(plot("gantt", self.job, "--ranks", "1-3", "-o", self.dir / "refused"),
                            "ranks 1-3 have no ops recorded", "recorded: 0,8,64,128,192")

    def test_a_file_that_is_not_a_run_is_refused(self):
        not_a_run = self.dir / "notes.txt"
        not_a_run.write_text("not HDF5")
        self.assert_refused(plot("fct", not_a_run, "-o", self.dir / "refused"),
                            "is not a run file")


if __name__ == "__main__":
    unittest.main()
