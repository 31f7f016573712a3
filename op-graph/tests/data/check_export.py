"""Checks that the real TensorFlow Lite interpreter (LiteRT, from PyPI's
ai-edge-litert) runs the models op-graph's exporter writes.

It runs op-graph's export tests (`cargo test -p op-graph --test
tflite_export --test tflite_converter`) with OPKIT_TFLITE_EXPORT_DIR set, so
each test writes its model NAME.tflite there with its input (NAME.input.npy)
and what the framework's session computed on it (NAME.output.npy), and each
case of tflite_converter.rs (one framework op exported alone, for every op
of the exporter's builtin table) writes ops/K_OP.tflite with its inputs
(K_OP.inputI.npy for placeholder pI) and output. Then, in LiteRT:

- each builtin-only model (the seed's Sin program with the builtin SIN, a
  two-layer perceptron fused as the converter fuses and unfused, a layer
  whose output is read twice, a model of the other exported builtins) must run,
  with its builtin kernels and with its default delegates (XNNPACK), and
  give the session's output (within 1e-5, relative and absolute);
- each one-op model must run with the builtin kernels and give the
  session's output (floats within 1e-5 relative and absolute; ints and
  bools exactly);
- the Sin program exported with Sin kept custom must load and then fail at
  allocate_tensors with LiteRT's own unresolved-custom-op error,
  "Encountered unresolved custom op: Sin." (the seed's older wording is
  "Didn't find custom operator for name 'Sin'").

Run from the repository root, with a Python that has LiteRT and numpy:

    python op-graph/tests/data/check_export.py [DIR]

(DIR, where the models are written, defaults to a temporary directory.) It
prints a line per check and exits non-zero if any fails.
"""

import multiprocessing
import os
import subprocess
import sys
import tempfile
from importlib.metadata import version

import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType

BUILTIN_MODELS = ["sin_builtin", "mlp", "mlp_unfused", "shared", "identities", "ops"]
CUSTOM_MODEL = "sin_custom"


def export(out_dir):
    env = dict(os.environ, OPKIT_TFLITE_EXPORT_DIR=out_dir)
    subprocess.run(
        ["cargo", "test", "-q", "-p", "op-graph", "--test", "tflite_export", "--test", "tflite_converter"],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
    )


def invoke(path, inputs, resolver):
    interpreter = Interpreter(model_path=path, experimental_op_resolver_type=resolver)
    (input_detail,) = interpreter.get_input_details()
    (output_detail,) = interpreter.get_output_details()
    if list(input_detail["shape"]) != list(inputs.shape):
        interpreter.resize_tensor_input(input_detail["index"], inputs.shape)
    interpreter.allocate_tensors()
    interpreter.set_tensor(input_detail["index"], inputs)
    interpreter.invoke()
    return interpreter.get_tensor(output_detail["index"])


def invoke_named(path, inputs):
    """Runs the model at `path` with its builtin kernels, input tensor pI
    set to inputs[I]; returns its one output."""
    interpreter = Interpreter(
        model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    )
    interpreter.allocate_tensors()
    for detail in interpreter.get_input_details():
        interpreter.set_tensor(detail["index"], inputs[int(detail["name"][1:])])
    interpreter.invoke()
    (output_detail,) = interpreter.get_output_details()
    return interpreter.get_tensor(output_detail["index"])


def isolated(function, *args):
    """function(*args) in a child process, so that a crash of LiteRT's (it
    aborts on some models) is a failed check rather than the end of the
    script: the result, or a string saying what went wrong."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()

    def child():
        try:
            queue.put(function(*args))
        except Exception as error:  # LiteRT raises RuntimeError and ValueError
            queue.put(str(error).strip())

    process = context.Process(target=child)
    process.start()
    process.join()
    if process.exitcode != 0:
        return f"LiteRT crashed (exit code {process.exitcode})"
    return queue.get()


def same(output, expected):
    if output.dtype != expected.dtype or output.shape != expected.shape:
        return False
    if output.dtype.kind == "f":
        return np.allclose(output, expected, rtol=1e-5, atol=1e-5)
    return np.array_equal(output, expected)


def check_one_op_models(ops_dir):
    failures = 0
    names = sorted(f[: -len(".tflite")] for f in os.listdir(ops_dir) if f.endswith(".tflite"))
    for name in names:
        stem = os.path.join(ops_dir, name)
        inputs = []
        while os.path.exists(f"{stem}.input{len(inputs)}.npy"):
            inputs.append(np.load(f"{stem}.input{len(inputs)}.npy"))
        expected = np.load(stem + ".output.npy")
        output = isolated(invoke_named, stem + ".tflite", inputs)
        if isinstance(output, np.ndarray):
            ok = same(output, expected)
            result = f"output {output.dtype} {list(output.shape)} " + (
                "matches the session's" if ok else f"DOES NOT MATCH the session's: {output} vs {expected}"
            )
        else:
            ok, result = False, f"FAILED: {output}"
        print(f"ops/{name} ({', '.join(ops(stem + '.tflite'))}): {result}")
        failures += not ok
    return failures, len(names)


def ops(path):
    interpreter = Interpreter(model_path=path)
    return sorted({op["op_name"] for op in interpreter._get_ops_details()})


def main():
    print(f"LiteRT (ai-edge-litert) {version('ai-edge-litert')}, numpy {np.__version__}")
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else tmp
        export(out_dir)
        for name in BUILTIN_MODELS:
            path = os.path.join(out_dir, name + ".tflite")
            inputs = np.load(os.path.join(out_dir, name + ".input.npy"))
            expected = np.load(os.path.join(out_dir, name + ".output.npy"))
            for resolver, label in [
                (OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES, "builtin kernels"),
                (OpResolverType.AUTO, "default delegates (XNNPACK)"),
            ]:
                try:
                    output = invoke(path, inputs, resolver)
                except Exception as error:  # LiteRT raises RuntimeError and ValueError
                    print(f"{name}: LiteRT FAILED with {label}: {str(error).strip()}")
                    failures += 1
                    continue
                same = (
                    output.dtype == expected.dtype
                    and output.shape == expected.shape
                    and np.allclose(output, expected, rtol=1e-5, atol=1e-5)
                )
                diff = float(np.max(np.abs(output - expected))) if output.shape == expected.shape else float("nan")
                print(
                    f"{name} ({', '.join(ops(path))}): LiteRT with {label}: output {list(output.shape)} "
                    f"{'matches' if same else 'DOES NOT MATCH'} the session's (max |diff| {diff:.3g})"
                )
                failures += not same

        op_failures, op_models = check_one_op_models(os.path.join(out_dir, "ops"))
        print(f"one-op models: {op_models - op_failures} of {op_models} match the session in LiteRT")
        failures += op_failures

        path = os.path.join(out_dir, CUSTOM_MODEL + ".tflite")
        try:
            interpreter = Interpreter(model_path=path)
            print(f"{CUSTOM_MODEL}: LiteRT loaded the model")
            interpreter.allocate_tensors()
            print(f"{CUSTOM_MODEL}: LiteRT ran allocate_tensors (UNEXPECTED: it has no Sin kernel)")
            failures += 1
        except RuntimeError as error:
            message = str(error).strip().splitlines()[0]
            ok = message.startswith("Encountered unresolved custom op: Sin.")
            print(f"{CUSTOM_MODEL}: LiteRT's allocate_tensors: {message}" + ("" if ok else " (UNEXPECTED)"))
            failures += not ok

    print("all checks passed" if failures == 0 else f"{failures} checks FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
