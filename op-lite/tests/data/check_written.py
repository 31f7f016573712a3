"""Checks that the real TensorFlow Lite interpreter (LiteRT, from PyPI's
ai-edge-litert) loads the files op-lite's writer writes.

For each converted model beside this script, op-lite reads it and writes it
back (`cargo run -p op-lite --example tflite_round_trip`), with its buffers
inside the flatbuffer and again after it (the layout of models past 2 GiB);
LiteRT then loads the written file and runs it on the model's fixed input (NAME.input.npy).
For the builtin models its output must equal, bit for bit, what LiteRT
computed from TensorFlow's own file (NAME.output.npy); for the custom Sin
model, LiteRT must fail with its unresolved-custom-op error, as it does on
TensorFlow's file.

Run from the repository root, with a Python that has LiteRT:

    python op-lite/tests/data/check_written.py

It prints a line per model and exits non-zero if any check fails.
"""

import os
import subprocess
import sys
import tempfile
from importlib.metadata import version

import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from litert_invoke import invoke

HERE = os.path.dirname(os.path.abspath(__file__))
BUILTIN_MODELS = ["sin_builtin", "cnn", "mlp"]


def round_trip(name, out_dir, buffers_after=False):
    source = os.path.join(HERE, name + ".tflite")
    written = os.path.join(out_dir, name + ("_buffers_after" if buffers_after else "") + ".tflite")
    flags = ["--buffers-after"] if buffers_after else []
    subprocess.run(
        ["cargo", "run", "-q", "-p", "op-lite", "--example", "tflite_round_trip", "--", *flags, source, written],
        check=True,
    )
    return written


def run(path, inputs, resolver):
    return invoke(Interpreter(model_path=path, experimental_op_resolver_type=resolver), inputs)


def main():
    print(f"LiteRT (ai-edge-litert) {version('ai-edge-litert')}")
    failures = 0
    with tempfile.TemporaryDirectory() as out_dir:
        for name, buffers_after in [(n, after) for n in BUILTIN_MODELS for after in (False, True)]:
            written = round_trip(name, out_dir, buffers_after)
            layout = "buffers after the flatbuffer" if buffers_after else "buffers inside"
            inputs = np.load(os.path.join(HERE, name + ".input.npy"))
            expected = np.load(os.path.join(HERE, name + ".output.npy"))
            for resolver, label in [
                (OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES, "builtin kernels"),
                (OpResolverType.AUTO, "default delegates (XNNPACK)"),
            ]:
                original = run(os.path.join(HERE, name + ".tflite"), inputs, resolver)
                output = run(written, inputs, resolver)
                same = output.dtype == original.dtype and np.array_equal(output, original)
                if resolver == OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES:
                    same = same and np.array_equal(output, expected)
                diff = float(np.max(np.abs(output - expected)))
                print(
                    f"{name} ({layout}): LiteRT ran the written file with {label}: output {list(output.shape)}, "
                    f"{'identical to' if same else 'DIFFERENT from'} the converter's file "
                    f"(max |diff| to {name}.output.npy {diff:.3g})"
                )
                failures += not same

        written = round_trip("sin_custom", out_dir)
        try:
            interpreter = Interpreter(model_path=written)
            interpreter.allocate_tensors()
            print("sin_custom: LiteRT ran the written file (UNEXPECTED: it has no Sin kernel)")
            failures += 1
        except RuntimeError as error:
            message = str(error).strip().splitlines()[0]
            expected = "Encountered unresolved custom op: Sin."
            ok = message.startswith(expected)
            print(f"sin_custom: LiteRT on the written file: {message}" + ("" if ok else " (UNEXPECTED)"))
            failures += not ok

    print("all checks passed" if failures == 0 else f"{failures} checks FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
