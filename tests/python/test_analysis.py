"""The Python loader on a real run, and the output file against its documented schema.

Needs LOCKSTEP_BIN (the program), LOCKSTEP_SOURCE_DIR (the source tree) and analysis/ on PYTHONPATH;
ctest sets all three (tests/CMakeLists.txt).
"""

import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import h5py
import numpy as np
import pandas as pd

import lockstep_analysis as la

BIN = os.environ["LOCKSTEP_BIN"]
SOURCE = Path(os.environ["LOCKSTEP_SOURCE_DIR"])
SCHEMA = SOURCE / "analysis" / "hdf5_schema.md"

RANKS, STEPS = 8, 3
GRADIENT_BYTES = 2_600_000_000  # job.gradient_size in scenarios/default.yaml
# The default scenario's slow rank 17 does not exist with 8 ranks, so move it to rank 3.
SMALL_RUN = ["--set", f"job.ranks={RANKS}", "--set", f"job.steps={STEPS}",
             "--set", "job.slow_ranks=[{rank: 3, slowdown: 8%}]"]


def parse_schema(text):
    """{section: {name: (type, unit, meaning)}} from every "### `section`" and the table under it.

    Column order is kept (dicts are ordered) because the doc promises the file's column order.
    """
    sections = {}
    current = None
    for number, line in enumerate(text.splitlines(), start=1):
        heading = re.fullmatch(r"### `([^`]+)`\s*", line)
        if heading:
            current = sections.setdefault(heading.group(1), {})
            continue
        if current is None or not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4:
            raise ValueError(f"{SCHEMA}:{number}: expected | name | type | unit | meaning |")
        if cells[1:3] == ["type", "unit"] or set(line) <= set("|-: "):
            continue  # header and separator rows
        # The meaning may itself contain '|' only inside backticks; rejoin it.
        name, kind, unit, meaning = cells[0], cells[1], cells[2], " | ".join(cells[3:])
        match = re.fullmatch(r"`([^`]+)`", name)
        if not match:
            raise ValueError(f"{SCHEMA}:{number}: name {name!r} is not in backticks")
        if match.group(1) in current:
            raise ValueError(f"{SCHEMA}:{number}: {match.group(1)} documented twice")
        current[match.group(1)] = (kind, unit, meaning)
    return sections


def type_in_file(dtype):
    """The doc's name for an HDF5 type as h5py maps it to numpy."""
    if dtype.kind == "S":
        return f"string[{dtype.itemsize}]"
    names = {np.dtype("<i8"): "int64", np.dtype("<u8"): "uint64", np.dtype("<f8"): "float64"}
    return names.get(dtype, f"undocumented type {dtype.str}")


def type_matches(documented, dtype):
    # Plain `string` is sized to its content, so any length matches.
    if documented == "string":
        return dtype.kind == "S"
    return documented == type_in_file(dtype)


def unit_of_name(name):
    """The unit a column's name promises (the naming convention in the schema doc)."""
    if name.endswith("_ps"):
        return "ps"
    if name.endswith("_bps"):
        return "bit/s"
    if name == "bytes" or name.endswith("_bytes"):
        return "bytes"
    return "-"


def run_small(directory):
    out = Path(directory) / "small.h5"
    scenario = SOURCE / "scenarios" / "default.yaml"
    result = subprocess.run([BIN, "run", str(scenario), "-o", str(out), "--quiet", *SMALL_RUN],
                            capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise AssertionError(f"lockstep run failed ({result.returncode}): {result.stderr}")
    return out, scenario


class LoaderOnARealRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._directory = tempfile.TemporaryDirectory()
        cls.path, cls.scenario = run_small(cls._directory.name)
        cls.ops = la.load_table(cls.path, "rank_ops")
        cls.rank_steps = la.load_table(cls.path, "rank_steps")
        cls.steps = la.load_table(cls.path, "steps")
        cls.meta = la.meta(cls.path)

    @classmethod
    def tearDownClass(cls):
        cls._directory.cleanup()

    def test_tables_lists_the_three_tables_and_not_meta(self):
        self.assertEqual(la.tables(self.path), ["rank_ops", "rank_steps", "steps"])

    def test_every_table_loads_as_a_dataframe_with_columns_in_file_order(self):
        with h5py.File(self.path, "r") as f:
            for name in la.tables(self.path):
                with self.subTest(table=name):
                    df = la.load_table(self.path, name)
                    self.assertIsInstance(df, pd.DataFrame)
                    self.assertEqual(list(df.columns), list(f[name].dtype.names))
                    self.assertEqual(len(df), f[name].shape[0])

    def test_an_unknown_table_raises_keyerror_naming_the_real_ones(self):
        with self.assertRaisesRegex(KeyError, "rank_ops, rank_steps, steps"):
            la.load_table(self.path, "meta")
        with self.assertRaises(KeyError):
            la.load_table(self.path, "no_such_table")

    def test_rank_ops_has_a_compute_and_an_all_reduce_per_rank_and_step(self):
        ops = self.ops
        self.assertEqual(len(ops), RANKS * STEPS * 2)
        self.assertTrue(all(type(k) is str for k in ops["kind"]), "kind must be decoded to str")
        self.assertEqual(set(ops["kind"]), {"compute", "all_reduce"})
        self.assertFalse(ops.duplicated(["rank", "step", "kind"]).any())
        self.assertEqual(set(ops["rank"]), set(range(RANKS)))
        self.assertEqual(set(ops["step"]), set(range(STEPS)))
        self.assertTrue((ops["end_ps"] >= ops["start_ps"]).all())
        self.assertTrue((ops["start_ps"] >= 0).all())
        compute = ops[ops["kind"] == "compute"]
        reduce = ops[ops["kind"] == "all_reduce"]
        self.assertTrue((compute["bytes"] == 0).all())
        self.assertTrue((reduce["bytes"] == GRADIENT_BYTES).all())
        self.assertTrue((compute["end_ps"] > compute["start_ps"]).all(), "compute takes time")

    def test_rank_steps_accounts_for_every_rank_in_every_step(self):
        rs = self.rank_steps
        self.assertEqual(len(rs), RANKS * STEPS)
        self.assertFalse(rs.duplicated(["rank", "step"]).any())
        for column in ["compute_ps", "wait_for_slowest_ps", "exposed_comm_ps"]:
            self.assertTrue((rs[column] >= 0).all(), column)
        # Each rank's compute in rank_steps is the length of its compute span in rank_ops.
        compute = self.ops[self.ops["kind"] == "compute"]
        spans = compute.assign(span=compute["end_ps"] - compute["start_ps"])
        joined = rs.merge(spans[["rank", "step", "span"]], on=["rank", "step"], validate="1:1")
        self.assertTrue((joined["compute_ps"] == joined["span"]).all())

    def test_every_rank_step_adds_up_to_its_step_duration(self):
        joined = self.rank_steps.merge(self.steps, on="step", validate="m:1")
        parts = joined["compute_ps"] + joined["wait_for_slowest_ps"] + joined["exposed_comm_ps"]
        self.assertTrue((parts == joined["end_ps"] - joined["start_ps"]).all())
        self.assertTrue((joined["exposed_comm_ps"] == joined["all_reduce_ps"]).all())

    def test_steps_follow_each_other_and_name_the_rank_that_computed_longest(self):
        steps = self.steps.sort_values("step")
        self.assertEqual(list(steps["step"]), list(range(STEPS)))
        self.assertEqual(steps["start_ps"].iloc[0], 0)
        self.assertEqual(list(steps["start_ps"].iloc[1:]), list(steps["end_ps"].iloc[:-1]))
        self.assertTrue((steps["all_reduce_ps"] > 0).all())
        for step, group in self.rank_steps.groupby("step"):
            longest = group["compute_ps"].max()
            # On a tie the highest rank counts as the slowest (schema doc).
            slowest = group.loc[group["compute_ps"] == longest, "rank"].max()
            row = steps[steps["step"] == step].iloc[0]
            self.assertEqual(row["slowest_rank"], slowest, f"step {step}")
            self.assertEqual(group.loc[group["rank"] == slowest, "wait_for_slowest_ps"].iloc[0], 0)

    def test_meta_is_plain_python_values_describing_the_run(self):
        m = self.meta
        self.assertEqual(set(m), {"scenario", "scenario_file", "seed", "version", "outcome",
                                  "end_ps", "events"})
        for name in ["scenario", "scenario_file", "version", "outcome"]:
            self.assertIs(type(m[name]), str, name)
        for name in ["seed", "end_ps", "events"]:
            self.assertIs(type(m[name]), int, name)
        self.assertEqual(m["outcome"], "completed")
        self.assertEqual(m["seed"], 1)
        self.assertEqual(m["scenario_file"], str(self.scenario))
        self.assertEqual(m["end_ps"], int(self.steps["end_ps"].max()))
        self.assertGreater(m["events"], 0)
        # The resolved scenario shows the overrides, not the file's values.
        self.assertRegex(m["scenario"], rf"(?m)^  ranks: {RANKS}$")
        self.assertRegex(m["scenario"], rf"(?m)^  steps: {STEPS}$")
        version = subprocess.run([BIN, "--version"], capture_output=True, text=True, timeout=10)
        self.assertEqual(version.stdout.strip(), f"lockstep {m['version']}")

    def test_step_summary_has_one_row_per_step_with_seconds(self):
        summary = la.step_summary(self.path)
        self.assertEqual(list(summary["step"]), list(range(STEPS)))
        steps = self.steps.sort_values("step").reset_index(drop=True)
        self.assertEqual(list(summary["step_ps"]), list(steps["end_ps"] - steps["start_ps"]))
        self.assertEqual(list(summary["slowest_rank"]), list(steps["slowest_rank"]))
        means = self.rank_steps.groupby("step")["compute_ps"].mean()
        np.testing.assert_allclose(summary["mean_compute_ps"], means.to_numpy())
        np.testing.assert_allclose(summary["step_s"], summary["step_ps"] / 1e12)
        # Step time is the slowest rank's compute plus the all-reduce, so it exceeds the mean compute.
        self.assertTrue((summary["step_s"] > summary["mean_compute_s"] + summary["comm_s"]).all())

    def test_summarize_script_prints_a_line_per_step(self):
        script = SOURCE / "analysis" / "summarize.py"
        result = subprocess.run([sys.executable, str(script), str(self.path)],
                                capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertIn("completed", lines[0])
        self.assertIn("slowest rank", lines[1])
        self.assertEqual(len(lines), 2 + STEPS)
        self.assertEqual([int(line.split()[0]) for line in lines[2:]], list(range(STEPS)))

    def test_summarize_script_fails_cleanly_on_a_missing_file(self):
        script = SOURCE / "analysis" / "summarize.py"
        result = subprocess.run([sys.executable, str(script), str(self.path) + ".missing"],
                                capture_output=True, text=True, timeout=30)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("cannot read", result.stderr)
        self.assertNotIn("Traceback", result.stderr)


class WithSeconds(unittest.TestCase):
    def test_adds_a_seconds_column_beside_each_picosecond_column(self):
        df = pd.DataFrame({"rank": [0, 1], "start_ps": [0, 1_500_000_000_000],
                           "wait_for_slowest_ps": [2_000_000, 0], "bytes": [10, 20]})
        out = la.with_seconds(df)
        self.assertEqual(list(out.columns), ["rank", "start_ps", "wait_for_slowest_ps", "bytes",
                                             "start_s", "wait_for_slowest_s"])
        self.assertEqual(list(out["start_s"]), [0.0, 1.5])
        self.assertEqual(list(out["wait_for_slowest_s"]), [2e-6, 0.0])
        self.assertEqual(list(out["rank"]), [0, 1])
        self.assertEqual(list(out["bytes"]), [10, 20])

    def test_leaves_its_argument_unchanged(self):
        df = pd.DataFrame({"end_ps": [7]})
        la.with_seconds(df)
        self.assertEqual(list(df.columns), ["end_ps"])

    def test_the_conversion_factor_is_picoseconds_per_second(self):
        self.assertEqual(la.PS_PER_SECOND, 10**12)


class FileMatchesSchemaDoc(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.doc = parse_schema(SCHEMA.read_text())
        cls._directory = tempfile.TemporaryDirectory()
        cls.path, _ = run_small(cls._directory.name)

    @classmethod
    def tearDownClass(cls):
        cls._directory.cleanup()

    def test_the_doc_documents_meta_and_at_least_one_table(self):
        self.assertIn("/meta", self.doc)
        self.assertGreater(len(self.doc), 1)
        for section, entries in self.doc.items():
            self.assertTrue(entries, f"### `{section}` has no table")

    def test_every_documented_name_carries_its_unit_in_the_name(self):
        for section, entries in self.doc.items():
            for name, (_, unit, meaning) in entries.items():
                with self.subTest(section=section, name=name):
                    self.assertEqual(unit, unit_of_name(name))
                    self.assertTrue(meaning, "meaning is empty")

    def test_the_root_holds_exactly_the_documented_tables_and_meta(self):
        with h5py.File(self.path, "r") as f:
            documented = {name.lstrip("/") for name in self.doc}
            self.assertEqual(set(f.keys()), documented)
            self.assertIsInstance(f["meta"], h5py.Group)

    def test_every_table_has_exactly_the_documented_columns_types_and_order(self):
        with h5py.File(self.path, "r") as f:
            for table, columns in self.doc.items():
                if table == "/meta":
                    continue
                with self.subTest(table=table):
                    dataset = f[table]
                    self.assertIsInstance(dataset, h5py.Dataset)
                    self.assertEqual(dataset.ndim, 1)
                    self.assertIsNotNone(dataset.dtype.names, "not a compound type")
                    self.assertEqual(list(dataset.dtype.names), list(columns))
                    for column, (documented, _, _) in columns.items():
                        actual = dataset.dtype[column]
                        self.assertTrue(type_matches(documented, actual),
                                        f"{table}.{column}: doc says {documented}, file has "
                                        f"{type_in_file(actual)}")

    def test_meta_has_exactly_the_documented_scalar_datasets_and_types(self):
        with h5py.File(self.path, "r") as f:
            group = f["meta"]
            self.assertEqual(set(group.keys()), set(self.doc["/meta"]))
            for name, (documented, _, _) in self.doc["/meta"].items():
                with self.subTest(dataset=name):
                    self.assertIsInstance(group[name], h5py.Dataset)
                    self.assertEqual(group[name].shape, ())
                    self.assertTrue(type_matches(documented, group[name].dtype),
                                    f"/meta/{name}: doc says {documented}, file has "
                                    f"{type_in_file(group[name].dtype)}")

    def test_strings_are_fixed_length_nul_padded_ascii(self):
        with h5py.File(self.path, "r") as f:
            found = []

            def check(name, obj):
                if not isinstance(obj, h5py.Dataset):
                    return
                file_type = obj.id.get_type()
                members = ([file_type.get_member_type(i) for i in range(file_type.get_nmembers())]
                           if file_type.get_class() == h5py.h5t.COMPOUND else [file_type])
                for member in members:
                    if member.get_class() == h5py.h5t.STRING:
                        found.append(name)
                        self.assertFalse(member.is_variable_str(), name)
                        self.assertEqual(member.get_strpad(), h5py.h5t.STR_NULLPAD, name)
                        self.assertEqual(member.get_cset(), h5py.h5t.CSET_ASCII, name)

            f.visititems(check)
            self.assertIn("rank_ops", found)
            self.assertIn("meta/outcome", found)

    def test_nothing_in_the_file_is_undocumented(self):
        # A walk over every object, so that a nested group or stray attribute is caught too.
        documented = {"meta"} | {name.lstrip("/") for name in self.doc}
        documented |= {f"meta/{name}" for name in self.doc["/meta"]}
        with h5py.File(self.path, "r") as f:
            seen = []
            f.visit(seen.append)
            self.assertEqual(set(seen), documented)
            for name in ["/", *seen]:
                self.assertEqual(list(f[name].attrs), [], f"{name} has attributes")

    def test_tables_are_chunked_and_compressed_as_documented(self):
        with h5py.File(self.path, "r") as f:
            for table in self.doc:
                if table == "/meta":
                    continue
                with self.subTest(table=table):
                    self.assertEqual(f[table].chunks, (8192,))
                    self.assertEqual(f[table].compression, "gzip")
                    self.assertTrue(f[table].shuffle)


if __name__ == "__main__":
    unittest.main()
