"""Times the lite runtime (`opkit lite benchmark --json`) against LiteRT, the
real TensorFlow Lite interpreter, on the same models and inputs, in one run.

    cargo build --release -p opkit
    /path/to/venv/bin/python tools/lite_bench/bench.py [--opkit target/release/opkit]

The venv needs TensorFlow (for the flatbuffer schema's Python module) and
LiteRT: `pip install tensorflow-cpu ai-edge-litert`.

Models:
- add_1 and add_1000: chains of 1 and 1,000 ADD nodes over 4 floats
  (t[k+1] = t[k] + c), written here with TensorFlow Lite's schema (the
  converter would fold such a chain). Their difference over 999 nodes is
  the time per node, free of the fixed cost of a call (Python's included);
- cnn and mlp: op-lite/tests/data/{cnn,mlp}.tflite on their .input.npy.

LiteRT runs twice per model, single-threaded: with its default XNNPACK
delegate, and with `BUILTIN_WITHOUT_DEFAULT_DELEGATES` (TensorFlow Lite's
own kernels). Both sides time single invokes and take the median: on a
shared machine, preemption puts milliseconds into a few invokes, which a
mean over a loop would count. LiteRT's invokes are timed from Python
(`perf_counter_ns` around `interpreter.invoke()`), so they include the
Python call and the clock reads (about 0.8 us in all: the add_1 figure);
ours are timed in Rust (`opkit lite benchmark --json`, `median_us`). The
fixed costs cancel in the per-node figure. Each side reports the lowest
median over `--repeats` runs.

Prints a table and writes it to results.md beside this file (with the
versions and the machine), and all the numbers to results.json.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import flatbuffers
import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from tensorflow.lite.python import schema_py_generated as schema

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(ROOT, "op-lite", "tests", "data")


def add_chain(n, length=4):
    """A .tflite model of `n` ADD nodes: t[k+1] = t[k] + c, c a constant of
    ones, from input `x` to output `y`, all float32 of shape [length]."""
    model = schema.ModelT()
    model.version = 3
    model.description = f"{n} ADD nodes (tools/lite_bench/bench.py)"
    code = schema.OperatorCodeT()
    code.builtinCode = schema.BuiltinOperator.ADD
    code.deprecatedBuiltinCode = schema.BuiltinOperator.ADD
    code.version = 1
    model.operatorCodes = [code]
    empty = schema.BufferT()
    ones = schema.BufferT()
    ones.data = np.ones(length, np.float32).tobytes()
    model.buffers = [empty, ones]

    def tensor(name, buffer=0):
        t = schema.TensorT()
        t.name = name
        t.type = schema.TensorType.FLOAT32
        t.shape = [length]
        t.buffer = buffer
        return t

    tensors = [tensor("x"), tensor("c", buffer=1)]
    operators = []
    previous = 0
    for k in range(n):
        tensors.append(tensor("y" if k + 1 == n else f"t{k}"))
        op = schema.OperatorT()
        op.opcodeIndex = 0
        op.inputs = [previous, 1]
        op.outputs = [len(tensors) - 1]
        op.builtinOptionsType = schema.BuiltinOptions.AddOptions
        op.builtinOptions = schema.AddOptionsT()
        operators.append(op)
        previous = len(tensors) - 1
    subgraph = schema.SubGraphT()
    subgraph.tensors = tensors
    subgraph.inputs = [0]
    subgraph.outputs = [previous]
    subgraph.operators = operators
    subgraph.name = "main"
    model.subgraphs = [subgraph]
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def litert_us(path, inputs, delegates, loops, repeats):
    """LiteRT's time per invoke in microseconds (the lowest, over `repeats`
    loops of `loops` invokes, of the median invoke), single-threaded,
    with the default delegates (XNNPACK) or without, and its output."""
    kwargs = {"model_path": path, "num_threads": 1}
    if not delegates:
        kwargs["experimental_op_resolver_type"] = (
            OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
        )
    interpreter = Interpreter(**kwargs)
    (detail,) = interpreter.get_input_details()
    if list(detail["shape"]) != list(inputs.shape):
        interpreter.resize_tensor_input(detail["index"], inputs.shape)
    interpreter.allocate_tensors()
    interpreter.set_tensor(detail["index"], inputs)
    invoke = interpreter.invoke
    for _ in range(max(loops // 10, 1)):
        invoke()
    clock = time.perf_counter_ns
    medians = []
    for _ in range(repeats):
        times = []
        for _ in range(loops):
            start = clock()
            invoke()
            times.append(clock() - start)
        medians.append(float(np.median(times)) / 1e3)
    (out,) = interpreter.get_output_details()
    return min(medians), interpreter.get_tensor(out["index"])


def ours_us(opkit, path, input_path, runs, repeats):
    """Our time per invoke in microseconds (the lowest, over `repeats` runs
    of `opkit lite benchmark --json`, of the median single invoke), and the
    last run's report (its op profile)."""
    medians = []
    report = None
    for _ in range(repeats):
        result = subprocess.run(
            [
                opkit, "lite", "benchmark", path, "--json",
                "--runs", str(runs), "--warmup", str(max(runs // 10, 1)),
                "--input", f"#0={input_path}",
            ],
            check=True, capture_output=True, text=True,
        )
        report = json.loads(result.stdout)
        medians.append(report["median_us"])
    return min(medians), report


def check_same_output(opkit, path, input_path, expected, tmp):
    """Runs the model once with `opkit lite run` and compares with LiteRT's
    output: a benchmark of wrong results would mean nothing."""
    out_dir = os.path.join(tmp, "out")
    result = subprocess.run(
        [opkit, "lite", "run", path, "--input", f"#0={input_path}", "--output-dir", out_dir],
        check=True, capture_output=True, text=True,
    )
    written = result.stdout.strip().split(" -> ")[-1]
    ours = np.load(written)
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)


def cpu_name():
    """The CPU's model name, from /proc/cpuinfo where there is one."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown cpu"


def tf_version():
    """TensorFlow's version, whichever distribution installed it."""
    for name in ("tensorflow", "tensorflow-cpu"):
        try:
            return version(name)
        except Exception:
            pass
    import tensorflow

    return tensorflow.__version__


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--opkit", default=os.path.join(ROOT, "target", "release", "opkit"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every loop count")
    args = parser.parse_args()
    before = " ".join(f"{x:.2f}" for x in os.getloadavg())

    with tempfile.TemporaryDirectory() as tmp:
        rng = np.random.default_rng(0)
        chain_input = os.path.join(tmp, "add.input.npy")
        np.save(chain_input, rng.uniform(-1, 1, 4).astype(np.float32))
        models = []
        for n in (1, 1000):
            path = os.path.join(tmp, f"add_{n}.tflite")
            with open(path, "wb") as f:
                f.write(add_chain(n))
            models.append((f"add_{n}", path, chain_input, 20000 if n == 1 else 2000))
        for name, loops in (("cnn", 2000), ("mlp", 20000)):
            models.append(
                (name, os.path.join(DATA, f"{name}.tflite"),
                 os.path.join(DATA, f"{name}.input.npy"), loops)
            )

        rows = {}
        for name, path, input_path, loops in models:
            loops = max(int(loops * args.scale), 10)
            inputs = np.load(input_path)
            xnnpack, expected = litert_us(path, inputs, True, loops, args.repeats)
            builtin, expected_builtin = litert_us(path, inputs, False, loops, args.repeats)
            np.testing.assert_allclose(expected, expected_builtin, rtol=1e-4, atol=1e-5)
            check_same_output(args.opkit, path, input_path, expected_builtin, tmp)
            ours, report = ours_us(args.opkit, path, input_path, loops, args.repeats)
            rows[name] = {
                "nodes": report["nodes"],
                "litert_xnnpack_us": xnnpack,
                "litert_builtin_us": builtin,
                "ours_us": ours,
                "ours_profile": report["ops"],
            }
            print(
                f"{name:>9}: {report['nodes']:>5} nodes  LiteRT XNNPACK {xnnpack:9.3f} us  "
                f"LiteRT builtin {builtin:9.3f} us  ours {ours:9.3f} us",
                flush=True,
            )

    per_node = {
        key: (rows["add_1000"][key] - rows["add_1"][key]) / 999 * 1e3
        for key in ("litert_xnnpack_us", "litert_builtin_us", "ours_us")
    }
    versions = {
        "ai-edge-litert": version("ai-edge-litert"),
        "tensorflow": tf_version(),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "rustc": subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip(),
        "machine": f"{platform.machine()}, {cpu_name()}, {os.cpu_count()} cpus",
        "load average before the run": before,
    }
    lines = [
        "# The lite runtime against LiteRT",
        "",
        "`python tools/lite_bench/bench.py`: the median invoke in microseconds, one thread"
        " (the lowest of several repeats; the script's docstring has the method).",
        "",
        "| model | nodes | LiteRT + XNNPACK | LiteRT builtin kernels | ours | ours / best LiteRT |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, row in rows.items():
        best = min(row["litert_xnnpack_us"], row["litert_builtin_us"])
        lines.append(
            f"| {name} | {row['nodes']} | {row['litert_xnnpack_us']:.3f} | "
            f"{row['litert_builtin_us']:.3f} | {row['ours_us']:.3f} | {row['ours_us'] / best:.2f} |"
        )
    lines += [
        "",
        "Time per ADD node, (add_1000 - add_1) / 999, in nanoseconds: "
        f"LiteRT + XNNPACK {per_node['litert_xnnpack_us']:.1f}, "
        f"LiteRT builtin {per_node['litert_builtin_us']:.1f}, "
        f"ours {per_node['ours_us']:.1f} (target: at most 50).",
        "",
        "The fixed cost of one call, add_1 less one node, in microseconds (LiteRT's includes"
        " Python's call and two clock reads): "
        + ", ".join(
            f"{label} {rows['add_1'][key] - per_node[key] / 1e3:.3f}"
            for label, key in (
                ("LiteRT + XNNPACK", "litert_xnnpack_us"),
                ("LiteRT builtin", "litert_builtin_us"),
                ("ours", "ours_us"),
            )
        )
        + ".",
        "",
        "Where our time goes (`opkit lite benchmark`'s summary by node type, share of the"
        " nodes' time):",
        "",
    ]
    for name in ("cnn", "mlp"):
        shares = ", ".join(
            f"{op['op']} {op['percent']:.0f}% ({op['count']})" for op in rows[name]["ours_profile"]
        )
        lines.append(f"- {name}: {shares}")
    lines += [
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(HERE, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(HERE, "results.json"), "w") as f:
        json.dump({"rows": rows, "per_node_ns": per_node, "versions": versions}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    sys.exit(main())
