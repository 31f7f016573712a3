"""Tests of check_export.py and of the committed fixtures.

Usage: python tools/tensorflow/test_tools.py   (with the venv of requirements.txt)

check_export.py runs in-process on copies of the committed fixtures, some
altered the way a wrong export would be: every fetch must be judged right, and
the final line and the exit status must say so. The fixtures themselves are
checked for what op-graph's tests rely on (graph.pbtxt is graph.pb, only the
standard ops, a feed file per fed placeholder, an expected file per fetch).
`make_fixtures.py --verify` is the check that they regenerate byte-identically.
"""

import contextlib
import io
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ next to the scripts
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from google.protobuf import text_format  # noqa: E402
from tensorflow.core.framework import graph_pb2  # noqa: E402

import check_export  # noqa: E402
from make_fixtures import DEFAULT_OUT, FIXTURES, STANDARD_OPS  # noqa: E402


def run_check(*dirs):
    """(exit status, printed lines) of check_export on `dirs`."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = check_export.main([str(d) for d in dirs])
    return status, out.getvalue().splitlines()


class CheckExport(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)

    def copy(self, name):
        target = self.tmp / name
        shutil.copytree(DEFAULT_OUT / name, target)
        return target

    def alter_expected(self, directory, fetch, change):
        path = directory / "expected" / (check_export.file_stem(fetch) + ".npy")
        np.save(path, change(np.load(path)), allow_pickle=False)

    def test_the_committed_fixtures_all_pass(self):
        status, lines = run_check(*(DEFAULT_OUT / name for name in FIXTURES))
        total = sum(len(check_export.read_fetches(DEFAULT_OUT / n / "fetches.txt"))
                    for n in FIXTURES)
        self.assertEqual(lines[-1], f"{total} passed, 0 failed")
        self.assertEqual(status, 0)
        self.assertEqual(len(lines), total + 1)

    def test_a_float_off_by_more_than_the_tolerance_fails_that_fetch_only(self):
        d = self.copy("odd_but_valid")
        self.alter_expected(d, "out", lambda a: a + np.float32(1e-3))
        status, lines = run_check(d)
        self.assertEqual(status, 1)
        self.assertEqual(lines[-1], "3 passed, 1 failed")
        self.assertTrue(any(line.startswith("FAIL") and ": out: values differ" in line
                            for line in lines))

    def test_a_float_within_the_tolerance_passes(self):
        d = self.copy("odd_but_valid")
        self.alter_expected(d, "out", lambda a: a * np.float32(1 + 2e-6))
        status, lines = run_check(d)
        self.assertEqual((status, lines[-1]), (0, "4 passed, 0 failed"))

    def test_integers_must_match_exactly(self):
        d = self.copy("array_and_reductions")
        self.alter_expected(d, "bga:1", lambda a: a + 1)
        status, lines = run_check(d)
        self.assertEqual(status, 1)
        self.assertEqual(lines[-1], "67 passed, 1 failed")
        self.assertTrue(any(": bga:1: values differ (1 of 1 elements)" in line for line in lines))

    def test_bools_must_match_exactly(self):
        d = self.copy("array_and_reductions")
        self.alter_expected(d, "greater", np.logical_not)
        status, lines = run_check(d)
        self.assertEqual(status, 1)
        self.assertTrue(any(": greater: values differ (6 of 6 elements)" in line
                            for line in lines))

    def test_a_wrong_dtype_fails_even_with_equal_values(self):
        d = self.copy("mlp_frozen")
        self.alter_expected(d, "Identity", lambda a: a.astype(np.float64))
        status, lines = run_check(d)
        self.assertEqual(status, 1)
        self.assertIn("dtype: TensorFlow float32, expected float64", lines[0])

    def test_a_wrong_shape_fails_even_with_equal_values(self):
        d = self.copy("mlp_frozen")
        self.alter_expected(d, "Identity", lambda a: a.reshape(3, 5))
        status, lines = run_check(d)
        self.assertEqual(status, 1)
        self.assertIn("shape: TensorFlow [5, 3], expected [3, 5]", lines[0])

    def test_a_graph_tensorflow_cannot_import_is_an_error_that_fails_every_fetch(self):
        d = self.copy("odd_but_valid")
        graph = check_export.read_graph_def(d / "graph.pb")
        graph.node[0].op = "NoSuchOp"
        (d / "graph.pb").write_bytes(graph.SerializeToString())
        status, lines = run_check(d)
        self.assertEqual(status, 1)
        self.assertTrue(lines[0].startswith(f"ERROR {d}: "))
        self.assertIn("NoSuchOp", lines[0])
        self.assertEqual(lines[-1], "0 passed, 4 failed")

    def test_a_truncated_graph_is_an_error(self):
        d = self.copy("mlp_frozen")
        data = (d / "graph.pb").read_bytes()
        (d / "graph.pb").write_bytes(data[: len(data) // 2])
        status, lines = run_check(d)
        self.assertEqual((status, lines[-1]), (1, "0 passed, 1 failed"))
        self.assertTrue(lines[0].startswith("ERROR"))

    def test_a_missing_expected_file_is_an_error(self):
        d = self.copy("mlp_frozen")
        (d / "expected" / "Identity.npy").unlink()
        status, lines = run_check(d)
        self.assertEqual((status, lines[-1]), (1, "0 passed, 1 failed"))

    def test_a_missing_directory_is_an_error_and_the_others_still_run(self):
        status, lines = run_check(self.tmp / "absent", DEFAULT_OUT / "mlp_frozen")
        self.assertEqual(status, 1)
        self.assertEqual(lines[-1], "1 passed, 1 failed")

    def test_feeds_and_fetches_may_name_slash_scoped_nodes(self):
        # A fetch `layer1/add` is expected/layer1/add.npy; a feed of `x` may
        # also be overridden at an inner tensor, named by its path under feeds/.
        d = self.copy("odd_but_valid")
        (d / "fetches.txt").write_text("layer1/add:0\n# a comment\n\n7\n")
        (d / "expected" / "layer1").mkdir()
        (d / "feeds" / "layer1").mkdir()
        bias = np.array([1.0, -1.0], np.float32)
        np.save(d / "feeds" / "layer1" / "bias.npy", bias)
        x = np.load(d / "feeds" / "x.npy")
        w = np.frombuffer(bytes(self._const(d, "layer1/w").tensor_content), np.float32)
        add = x @ w.reshape(3, 2) + bias
        np.save(d / "expected" / "layer1" / "add_0.npy", add.astype(np.float32))
        np.save(d / "expected" / "7.npy", np.maximum(add, 0).astype(np.float32))
        status, lines = run_check(d)
        self.assertEqual((status, lines[-1]), (0, "2 passed, 0 failed"), lines)

    @staticmethod
    def _const(directory, name):
        graph = check_export.read_graph_def(directory / "graph.pb")
        (node,) = [n for n in graph.node if n.name == name]
        return node.attr["value"].tensor


class CommittedFixtures(unittest.TestCase):
    def test_each_fixture_is_consistent(self):
        for name in FIXTURES:
            with self.subTest(fixture=name):
                d = DEFAULT_OUT / name
                graph = check_export.read_graph_def(d / "graph.pb")
                text = text_format.Parse((d / "graph.pbtxt").read_text(), graph_pb2.GraphDef())
                self.assertEqual(text, graph)
                self.assertLessEqual({n.op for n in graph.node}, STANDARD_OPS)
                placeholders = {n.name for n in graph.node
                                if n.op in ("Placeholder", "PlaceholderWithDefault")}
                feeds = check_export.read_feeds(d / "feeds")
                self.assertLessEqual(set(feeds), placeholders)
                required = {n.name for n in graph.node if n.op == "Placeholder"}
                self.assertLessEqual(required, set(feeds))
                fetches = check_export.read_fetches(d / "fetches.txt")
                stems = {check_export.file_stem(f) + ".npy" for f in fetches}
                self.assertEqual({p.name for p in (d / "expected").iterdir()}, stems)
                self.assertEqual(graph.versions.producer, 2474)
                self.assertLess((d / "graph.pb").stat().st_size, 8 * 1024)


if __name__ == "__main__":
    unittest.main()
