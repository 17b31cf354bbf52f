"""The notebooks of analysis/notebooks run from top to bottom without an error and draw figures.

Each is executed as Jupyter would run it, in its own directory, on a kernel that is this interpreter
(the one with h5py, pandas and matplotlib: the machine's default kernel may be another Python), with
LOCKSTEP_BIN passed on; the notebooks' own checks of their conclusions run as cells. The notebooks
are committed without outputs, and this test writes nothing back. LOCKSTEP_SANITIZED=1 (a sanitizer
build, several times slower) skips the notebook of packet-level runs.

    LOCKSTEP_BIN=build/release/lockstep LOCKSTEP_SOURCE_DIR=. PYTHONPATH=analysis \\
        /usr/bin/python3 tests/python/test_notebooks.py -v
"""

import json
import os
import sys
import tempfile
import unittest
from pathlib import Path

import nbformat
from nbclient import NotebookClient

SOURCE = Path(os.environ["LOCKSTEP_SOURCE_DIR"])
NOTEBOOKS = sorted((SOURCE / "analysis" / "notebooks").glob("*.ipynb"))
KERNEL = "lockstep-python3"
SANITIZED = os.environ.get("LOCKSTEP_SANITIZED") == "1"
PACKET_LEVEL = {"pause_storm_replay.ipynb"}
CELL_TIMEOUT_S = 180


def setUpModule():
    """A kernelspec for this interpreter, found through JUPYTER_PATH, in a directory of its own."""
    directory = tempfile.TemporaryDirectory()
    unittest.addModuleCleanup(directory.cleanup)
    spec = Path(directory.name) / "kernels" / KERNEL
    spec.mkdir(parents=True)
    # Without frozen modules off, the kernel's debugger warns about them on every start.
    spec.joinpath("kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-Xfrozen_modules=off", "-m", "ipykernel_launcher",
                 "-f", "{connection_file}"],
        "display_name": f"Python 3 ({sys.executable})", "language": "python"}))
    for name, value in (("JUPYTER_PATH", directory.name),
                        ("JUPYTER_RUNTIME_DIR", str(Path(directory.name) / "runtime"))):
        previous = os.environ.get(name)
        os.environ[name] = value
        unittest.addModuleCleanup(_restore, name, previous)


def _restore(name, value):
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


class Notebooks(unittest.TestCase):
    def test_there_are_notebooks(self):
        self.assertGreaterEqual(len(NOTEBOOKS), 3, [n.name for n in NOTEBOOKS])

    def test_notebooks_are_committed_without_outputs(self):
        for path in NOTEBOOKS:
            with self.subTest(notebook=path.name):
                cells = nbformat.read(path, as_version=4).cells
                self.assertFalse([c for c in cells if c.cell_type == "code"
                                  and (c.outputs or c.execution_count)], "outputs were committed")

    def test_each_notebook_runs_and_draws_figures(self):
        for path in NOTEBOOKS:
            with self.subTest(notebook=path.name):
                if SANITIZED and path.name in PACKET_LEVEL:
                    self.skipTest("packet-level runs take too long under a sanitizer")
                notebook = nbformat.read(path, as_version=4)
                # A failing cell raises CellExecutionError naming the cell and its traceback.
                NotebookClient(notebook, kernel_name=KERNEL, timeout=CELL_TIMEOUT_S,
                               resources={"metadata": {"path": str(path.parent)}}).execute()
                figures = [output for cell in notebook.cells for output in cell.get("outputs", [])
                           if "image/png" in output.get("data", {})]
                self.assertGreater(len(figures), 0, f"{path.name} drew no figure")


if __name__ == "__main__":
    unittest.main()
