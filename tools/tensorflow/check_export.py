"""Checks graphs written by opkit against a real TensorFlow.

Usage: python tools/tensorflow/check_export.py DIR [DIR...]

Each DIR holds one graph in the fixture layout (the same as
`op-graph/tests/data/tensorflow/<name>/`, see README.md next to this file):

    graph.pb               binary GraphDef (written by opkit)
    feeds/<node>.npy       a value for output 0 of node <node> (a placeholder,
                           or any tensor to override); a '/' in the name is a
                           subfolder
    fetches.txt            one fetch a line, `node` (output 0) or `node:k`;
                           blank lines and lines starting with '#' are skipped
    expected/<f>.npy       opkit's value for fetch f, ':' replaced by '_'

For each DIR the graph is imported into a fresh `tf.Graph` with
`tf.compat.v1.import_graph_def`, run once in a `tf.compat.v1.Session` with the
feeds, and every fetch is compared with the expected value: dtype and shape
must be equal, integers and bools exactly, floats within
`np.allclose(rtol=1e-5, atol=1e-6, equal_nan=True)`.

Prints one line per fetch (`ok` or `FAIL` with the reason), then exactly
`N passed, N failed`. A directory that cannot be read, imported or run prints
`ERROR` with TensorFlow's message and counts every fetch it names (at least
one) as failed. Exits 1 when anything failed, 0 otherwise.

`make_fixtures.py` uses the reading and running helpers of this file, so the
fixtures' expected values and this check run graphs the same way.
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import graph_pb2  # noqa: E402

RTOL = 1e-5
ATOL = 1e-6


def tensor_name(name):
    """`node` names output 0 (`node:0`); `node:k` is kept as it is."""
    return name if ":" in name else name + ":0"


def file_stem(fetch):
    """The file name (without `.npy`) under `expected/` for a fetch."""
    return fetch.replace(":", "_")


def read_fetches(path):
    lines = Path(path).read_text().splitlines()
    return [s.strip() for s in lines if s.strip() and not s.strip().startswith("#")]


def read_feeds(feeds_dir):
    """{node name: array} from `feeds/**.npy`, the path under feeds/ naming the node."""
    feeds = {}
    feeds_dir = Path(feeds_dir)
    if feeds_dir.is_dir():
        for path in sorted(feeds_dir.rglob("*.npy")):
            name = path.relative_to(feeds_dir).with_suffix("").as_posix()
            feeds[name] = np.load(path, allow_pickle=False)
    return feeds


def read_graph_def(path):
    graph_def = graph_pb2.GraphDef()
    graph_def.ParseFromString(Path(path).read_bytes())
    return graph_def


def run_graph(graph_def, feeds, fetches):
    """Imports `graph_def` into a fresh graph and runs `fetches` with `feeds`.

    One thread each for inter- and intra-op work, so that the values are the
    same on every run.
    """
    # import_graph_def fills default attrs into the GraphDef it is given: give it a copy.
    graph_def = graph_pb2.GraphDef.FromString(graph_def.SerializeToString())
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    feed_dict = {graph.get_tensor_by_name(tensor_name(n)): v for n, v in feeds.items()}
    fetch_tensors = [graph.get_tensor_by_name(tensor_name(f)) for f in fetches]
    config = tf.compat.v1.ConfigProto(
        inter_op_parallelism_threads=1, intra_op_parallelism_threads=1
    )
    with tf.compat.v1.Session(graph=graph, config=config) as sess:
        values = sess.run(fetch_tensors, feed_dict=feed_dict)
    return [np.asarray(v) for v in values]


def compare(actual, expected):
    """None when `actual` (TensorFlow's) matches `expected` (ours), else why not."""
    if actual.dtype != expected.dtype:
        return f"dtype: TensorFlow {actual.dtype}, expected {expected.dtype}"
    if actual.shape != expected.shape:
        return f"shape: TensorFlow {list(actual.shape)}, expected {list(expected.shape)}"
    if np.issubdtype(actual.dtype, np.inexact):
        if np.allclose(actual, expected, rtol=RTOL, atol=ATOL, equal_nan=True):
            return None
        with np.errstate(invalid="ignore"):
            diff = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
        return f"values differ (max abs diff {np.nanmax(diff):.3g})"
    if np.array_equal(actual, expected):
        return None
    bad = int(np.count_nonzero(actual != expected))
    return f"values differ ({bad} of {actual.size} elements)"


def check_dir(directory):
    """Returns (passed, failed) for one directory, printing a line per fetch."""
    directory = Path(directory)
    try:
        fetches = read_fetches(directory / "fetches.txt")
    except OSError as e:
        print(f"ERROR {directory}: cannot read fetches.txt: {e}")
        return 0, 1
    try:
        expected = [
            np.load(directory / "expected" / (file_stem(f) + ".npy"), allow_pickle=False)
            for f in fetches
        ]
        actual = run_graph(
            read_graph_def(directory / "graph.pb"), read_feeds(directory / "feeds"), fetches
        )
    except Exception as e:  # TensorFlow's import and run errors, missing files
        message = " ".join(str(e).split())
        print(f"ERROR {directory}: {type(e).__name__}: {message}")
        return 0, max(len(fetches), 1)
    passed = failed = 0
    for fetch, a, e in zip(fetches, actual, expected):
        why = compare(a, e)
        if why is None:
            passed += 1
            print(f"ok   {directory}: {fetch} {a.dtype} {list(a.shape)}")
        else:
            failed += 1
            print(f"FAIL {directory}: {fetch}: {why}")
    return passed, failed


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    passed = failed = 0
    for directory in argv:
        p, f = check_dir(directory)
        passed += p
        failed += f
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
