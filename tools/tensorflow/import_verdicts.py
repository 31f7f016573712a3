"""What TensorFlow's importer says of small GraphDefs that test its rules.

Usage: python tools/tensorflow/import_verdicts.py [--verify]

Each `op-graph/tests/data/tensorflow/import_verdicts/<case>.pbtxt` is a
GraphDef in text format that tries one rule of the importer (a missing attr
with or without a default, an attr the op does not declare, an attr of the
wrong type...). Each is imported into a fresh `tf.Graph` with
`tf.compat.v1.import_graph_def`, and `verdicts.txt` next to them gets one
line per case, sorted: `<case>: accepted`, or `<case>: refused: <the first
200 chars of TensorFlow's message>`. op-graph's test
`tests/graphdef_verdicts.rs` checks that our importer accepts and refuses
the same files.

With `--verify`, nothing is written: the verdicts are compared with the
committed file, and any difference exits 1.
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # noqa: E402
from google.protobuf import text_format  # noqa: E402
from tensorflow.core.framework import graph_pb2  # noqa: E402

CASES = Path(__file__).resolve().parents[2] / "op-graph/tests/data/tensorflow/import_verdicts"


def verdict(path):
    graph_def = text_format.Parse(path.read_text(), graph_pb2.GraphDef())
    with tf.Graph().as_default():
        try:
            tf.compat.v1.import_graph_def(graph_def, name="")
        except Exception as e:  # TensorFlow raises ValueError and its own errors
            message = " ".join(str(e).split())
            return f"refused: {message[:200]}"
    return "accepted"


def main():
    lines = [f"{p.stem}: {verdict(p)}\n" for p in sorted(CASES.glob("*.pbtxt"))]
    text = f"# tensorflow {tf.__version__}; made by tools/tensorflow/import_verdicts.py\n"
    text += "".join(lines)
    out = CASES / "verdicts.txt"
    if "--verify" in sys.argv[1:]:
        if out.read_text() != text:
            print(f"{out} differs from what TensorFlow says now:\n{text}")
            sys.exit(1)
        print(f"{len(lines)} verdicts as committed")
        return
    out.write_text(text)
    print(f"{len(lines)} verdicts written to {out}")


if __name__ == "__main__":
    main()
