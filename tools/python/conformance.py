"""The conformance suite across hosts: the cases `cargo xtask conformance`
wrote (each op's drawn inputs, attrs, and our runtime's outputs or error)
run in TensorFlow, JAX, ONNX Runtime and PyTorch from the installed package
(`opkit_ops`), compared with ours.

    cargo xtask conformance --out target/conformance/cases.jsonl
    python tools/python/conformance.py run target/conformance/cases.jsonl --hosts tensorflow \
        --packages opkit_ops,examples_tf --out tf.json
    python tools/python/conformance.py run target/conformance/cases.jsonl --hosts jax,onnxruntime \
        --packages opkit_ops,examples_tf --out hosts.json
    python tools/python/conformance.py run target/conformance/cases.jsonl \
        --hosts pytorch,pytorch-opcheck,pytorch-gradcheck --packages opkit_ops,examples_tf --out torch.json
    python tools/python/conformance.py report tf.json hosts.json torch.json

(Each `run` in a venv with its hosts' frameworks; `report` needs only
Python.) A case agrees when the host gives the same number of outputs, of
the same dtypes and shapes, and the same values: bit-equal for integers
and bools, within a stated tolerance for floats (FLOAT_TOLERANCE), nan
where ours is nan; or when both ours and the host refuse it (an error). An
op a host cannot hold is "not exportable", with the host's reason. TensorFlow
runs our library's op, or, for an op TensorFlow has itself (our library
leaves those to it), TensorFlow's own (`tf.raw_ops`, eagerly; a case ours
refuses counts as refused there too when a `tf.function`, where
TensorFlow's shape functions run, refuses it): that compares our kernel
with TensorFlow's. `report` prints a table (op x host) and "N
passed, N failed", and exits non-zero when any case differs. One host
behaviour is counted apart: XLA (JAX) makes a call's outputs without
calling the kernel when they are all empty, so a case our kernel refuses
may come back as empty arrays there ("elided"). `pytorch-opcheck` also runs
`torch.library.opcheck` on the first case of each kernel, and
`pytorch-gradcheck` `torch.autograd.gradcheck` on one case of each op with a
`#[gradient]`: a check that fails is a case that differs.
"""

import argparse
import inspect
import json
import sys

try:
    # `run` needs numpy (in each host's venv); `report` needs only Python.
    import numpy as np
except ImportError:
    np = None

#: Relative and absolute tolerance of float outputs, by our DataType number.
FLOAT_TOLERANCE = {1: (1e-5, 1e-6), 2: (1e-12, 1e-12), 19: (1e-2, 1e-3), 14: (2e-2, 1e-2)}
#: numpy's names of our DataType numbers.
_NUMPY = {
    1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8", 9: "int64",
    10: "bool", 17: "uint16", 19: "float16", 22: "uint32", 23: "uint64",
}


def _numpy_dtype(number):
    if number == 14:
        import ml_dtypes

        return ml_dtypes.bfloat16
    return np.dtype(_NUMPY[number])


def _array(tensor):
    values = [float(v) if isinstance(v, str) else v for v in tensor["values"]]
    return np.array(values, dtype=_numpy_dtype(tensor["dtype"])).reshape(tensor["shape"])


def _compare(case, got):
    """None when `got` (a list of numpy arrays) agrees with our outputs, else why not."""
    ours = case["outputs"]
    if len(got) != len(ours):
        return f"{len(got)} outputs, ours {len(ours)}"
    for j, (g, o) in enumerate(zip(got, ours)):
        expected = _array(o)
        g = np.asarray(g)
        if g.dtype != expected.dtype:
            return f"output {j} is {g.dtype}, ours {expected.dtype}"
        if g.shape != expected.shape:
            return f"output {j} has shape {list(g.shape)}, ours {list(expected.shape)}"
        if o["dtype"] in FLOAT_TOLERANCE:
            rtol, atol = FLOAT_TOLERANCE[o["dtype"]]
            if not np.allclose(g.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True):
                return f"output {j} differs: {g.ravel()[:6].tolist()} vs ours {expected.ravel()[:6].tolist()}"
        elif not np.array_equal(g, expected):
            return f"output {j} differs: {g.ravel()[:6].tolist()} vs ours {expected.ravel()[:6].tolist()}"
    return None


class NotExportable(Exception):
    """The host cannot hold the op, for the reason given."""


class RefusedInAGraph(Exception):
    """TensorFlow runs the case eagerly, but refuses it in a graph."""


def _modules(packages, host):
    """Each package's module for `host` (`opkit_ops.jax`), in order."""
    import importlib

    return [importlib.import_module(f"{package}.{host}") for package in packages]


def _skip_reasons(modules, reasons):
    """Why each op is left out: the first package's reason that is not
    "another crate's op" (each package holds its own crate's ops)."""
    merged = {}
    for module in modules:
        for name, why in reasons(module).items():
            if name not in merged or "which this library does not export" in merged[name]:
                merged[name] = why
    return merged


def tensorflow_host(packages):
    import tensorflow as tf

    modules = _modules(packages, "tensorflow")
    ours, wrappers = {}, {}
    for module in modules:
        manifest = module._MANIFEST
        for op in manifest["ops"] + manifest.get("held_back", []):
            ours.setdefault(op["name"], op)
            wrappers.setdefault(op["name"], getattr(module, op["python_name"]))
    skipped = _skip_reasons(modules, lambda m: {op["name"]: op["why"] for op in m._MANIFEST["skipped"]})

    def run(case):
        name = case["op"]
        inputs = [tf.constant(_array(t)) for t in case["inputs"]]
        attrs = {}
        for key, value in case["attrs"].items():
            attrs[key] = value
        if name in ours:
            entry = ours[name]
            types = {a["name"]: a for a in entry["attrs"]}
            kwargs = {}
            for key, value in attrs.items():
                if key in types and types[key]["type"] == "type":
                    value = tf.dtypes.as_dtype(value)
                kwargs[types[key]["python_name"] if key in types else key] = value
            outputs = wrappers[name](*inputs, **kwargs)
        elif hasattr(tf.raw_ops, name):
            # TensorFlow's Python names of its own ops' args (`axis` for
            # `reduction_indices`) are its api_defs': the wrapper's
            # parameters, inputs then attrs in the OpDef's order, as ours.
            wrapper = getattr(tf.raw_ops, name)
            params = [p for p in inspect.signature(wrapper).parameters if p != "name"]
            n = len(inputs)
            kwargs = dict(zip(params[:n], inputs))
            types = dict(zip(case["attr_names"], case["attr_types"]))
            for k, key in enumerate(case["attr_names"]):
                if key in attrs:
                    value = attrs[key]
                    if types[key] == "type":
                        value = tf.dtypes.as_dtype(value)
                    kwargs[params[n + k]] = value
            outputs = wrapper(**kwargs)
            if "error" in case:
                # Ours follows TensorFlow's shape functions, which run in a
                # graph; its eager kernels accept some inputs (legacy
                # shapes) that those refuse. Refused in a graph is refused.
                try:
                    tf.function(lambda: [wrapper(**kwargs)][:0])()
                except Exception as e:
                    raise RefusedInAGraph(str(e)) from None
        else:
            raise NotExportable(skipped.get(name, "not in the library"))
        if isinstance(outputs, tf.Operation) or outputs is None:
            return []
        if not isinstance(outputs, (list, tuple)):
            outputs = [outputs]
        return [o.numpy() for o in outputs]

    return run


def jax_host(packages):
    import jax

    jax.config.update("jax_enable_x64", True)
    modules = _modules(packages, "jax")
    by_name, functions = {}, {}
    for module in modules:
        for op in module._MANIFEST["ops"]:
            by_name.setdefault(op["name"], op)
            functions.setdefault(op["name"], getattr(module, op["python_name"]))
    skipped = _skip_reasons(modules, lambda m: m.SKIPPED)

    def run(case):
        entry = by_name.get(case["op"])
        if entry is None:
            raise NotExportable(skipped.get(case["op"], "not in the library"))
        types = {a["name"]: a for a in entry["attrs"]}
        kwargs = {}
        for key, value in case["attrs"].items():
            if types[key]["type"] == "type":
                value = _numpy_dtype(value)
            kwargs[types[key]["python_name"]] = value
        outputs = functions[case["op"]](*[_array(t) for t in case["inputs"]], **kwargs)
        if not isinstance(outputs, tuple):
            outputs = (outputs,)
        return [np.asarray(o) for o in outputs]

    return run


def onnxruntime_host(packages):
    import onnxruntime as ort
    from onnx import helper

    ort.set_default_logger_severity(3)
    modules = _modules(packages, "onnx")
    by_name, owner = {}, {}
    for module in modules:
        for op in module.OPS.values():
            by_name.setdefault(op["name"], op)
            owner.setdefault(op["name"], module)
    skipped = _skip_reasons(modules, lambda m: m.SKIPPED)
    onnx_types = {1: 1, 2: 11, 3: 6, 4: 2, 5: 5, 6: 3, 9: 7, 10: 9, 17: 4, 19: 10, 22: 12, 23: 13, 14: 16}

    def run(case):
        entry = by_name.get(case["op"])
        if entry is None:
            raise NotExportable(skipped.get(case["op"], "not in the library"))
        ops = owner[case["op"]]
        if not entry["outputs"]:
            raise NotExportable("it has no outputs, and an ONNX graph runs nothing without one")
        if any(t["dtype"] == 14 for t in case["inputs"] + case.get("outputs", [])):
            raise NotExportable("onnxruntime's Python API takes and gives no bfloat16 arrays")
        names = [f"in{i}" for i in range(len(case["inputs"]))]
        outputs = [f"out{j}" for j in range(len(entry["outputs"]))]
        types = {a["name"]: a for a in entry["attrs"]}
        node = ops.make_node(entry["python_name"], names, outputs, **{types[k]["python_name"]: v for k, v in case["attrs"].items()})
        graph = helper.make_graph(
            [node],
            "g",
            [helper.make_tensor_value_info(n, onnx_types[t["dtype"]], t["shape"]) for n, t in zip(names, case["inputs"])],
            # Our outputs' types (ONNX Runtime checks them against what our
            # shape function infers); float where ours refused the case.
            [helper.make_tensor_value_info(o, onnx_types[t["dtype"]], None) for o, t in zip(outputs, case.get("outputs") or [{"dtype": 1}] * len(outputs))],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), ops.opset()])
        options = ort.SessionOptions()
        options.register_custom_ops_library(ops.library_path())
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        return session.run(None, {n: _array(t) for n, t in zip(names, case["inputs"])})

    return run


def _torch_ops(packages):
    """Each exported op's manifest entry and `torch.ops` overload, and why each other op is left out."""
    import torch

    modules = _modules(packages, "torch")
    entries, overloads = {}, {}
    for module in modules:
        for op in module._MANIFEST["ops"]:
            entries.setdefault(op["name"], op)
            overloads.setdefault(op["name"], getattr(getattr(torch.ops, module.NAMESPACE), op["torch_name"]).default)
    return entries, overloads, _skip_reasons(modules, lambda m: m.SKIPPED), modules[0]._DTYPES


def _torch_call(torch, dtypes, entry, case):
    """The case's inputs as tensors, and its attrs as the schema's keyword arguments."""

    def tensor(t):
        if t["dtype"] == 14:  # numpy has no bfloat16 of its own
            return torch.tensor(_array(t).astype(np.float32)).to(torch.bfloat16)
        return torch.from_numpy(_array(t).copy())

    types = {a["name"]: a for a in entry["attrs"]}
    kwargs = {}
    for key, value in case["attrs"].items():
        if types[key]["type"] == "type":
            value = dtypes[value]
        kwargs[types[key]["python_name"]] = value
    return [tensor(t) for t in case["inputs"]], kwargs


def _torch_numpy(torch, outputs):
    if outputs is None:  # an op of no outputs
        return []
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    arrays = []
    for o in outputs:
        if o.dtype == torch.bfloat16:
            arrays.append(o.view(torch.int16).numpy().view(_numpy_dtype(14)))
        else:
            arrays.append(o.detach().numpy())
    return arrays


def pytorch_host(packages, check=None):
    """PyTorch: each case through `torch.ops.<namespace>.<op>`; with `check`, also
    `check(overload, entry, case, inputs, kwargs)` first (opcheck, gradcheck)."""
    import torch

    entries, overloads, skipped, dtypes = _torch_ops(packages)

    def run(case):
        entry = entries.get(case["op"])
        if entry is None:
            raise NotExportable(skipped.get(case["op"], "not in the library"))
        inputs, kwargs = _torch_call(torch, dtypes, entry, case)
        if check is not None and "error" not in case:
            check(overloads[case["op"]], entry, case, inputs, kwargs)
        return _torch_numpy(torch, overloads[case["op"]](*inputs, **kwargs))

    return run


class NotChecked(Exception):
    """A check that does not apply to the case (counted as n/a)."""


def pytorch_opcheck_host(packages):
    """`torch.library.opcheck` (schema, fake tensor, autograd registration,
    aot_dispatch_dynamic) on the first case of each kernel whose outputs are finite
    (opcheck compares eager and traced outputs without equal_nan), then the case's outputs."""
    import torch

    checked = set()

    def check(overload, entry, case, inputs, kwargs):
        key = (case["op"], case["kernel"])
        if key in checked:
            raise NotChecked("opcheck runs on the first case of each kernel")
        if any(isinstance(v, str) for t in case["outputs"] for v in t["values"]):
            raise NotChecked("opcheck compares outputs without equal_nan: it runs on finite ones")
        checked.add(key)
        try:
            torch.library.opcheck(overload, tuple(inputs), kwargs)
        except Exception as e:
            if "rank depends on input values" in str(e):
                checked.discard(key)
                raise NotChecked(
                    "an output's rank depends on an input's values, and PyTorch's fake tensors have no dynamic rank"
                ) from None
            raise

    return pytorch_host(packages, check)


def pytorch_gradcheck_host(packages):
    """`torch.autograd.gradcheck` of each op with a `#[gradient]` on its first case
    with float inputs of at most 32 elements and finite float outputs (in float64,
    with gradcheck's own tolerances, where the op has a float64 kernel; 2e-2
    otherwise), then the case's outputs."""
    import torch

    checked = set()

    def check(overload, entry, case, inputs, kwargs):
        if not entry["backward"]:
            raise NotChecked("the op has no #[gradient]")
        floats = [i for i, t in enumerate(case["inputs"]) if t["dtype"] in (1, 2)]
        usable = (
            floats
            and all(0 < len(t["values"]) <= 32 for t in case["inputs"])
            and all(t["dtype"] in (1, 2) and not any(isinstance(v, str) for v in t["values"]) for t in case["outputs"])
        )
        if not usable or case["op"] in checked:
            raise NotChecked("gradcheck runs on the first case with small float inputs and finite float outputs")
        checked.add(case["op"])
        # A float32 case of an op with a float64 kernel is checked in
        # float64, where numeric derivatives are tight.
        has_double = any(c["dtype"] == 2 for k in entry["kernels"] for c in k["constraints"])
        double = has_double or all(case["inputs"][i]["dtype"] == 2 for i in floats)
        tolerance = {} if double else {"eps": 1e-3, "atol": 2e-2, "rtol": 2e-2}

        def f(*xs):
            args = list(inputs)
            for i, x in zip(floats, xs):
                args[i] = x
            return overload(*args, **kwargs)

        xs = [inputs[i].to(torch.float64 if double else inputs[i].dtype, copy=True).requires_grad_(True) for i in floats]
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # gradcheck warns of float32 inputs
            torch.autograd.gradcheck(f, xs, **tolerance)

    return pytorch_host(packages, check)


HOSTS = {
    "tensorflow": tensorflow_host,
    "jax": jax_host,
    "onnxruntime": onnxruntime_host,
    "pytorch": pytorch_host,
    "pytorch-opcheck": pytorch_opcheck_host,
    "pytorch-gradcheck": pytorch_gradcheck_host,
}


def run_cases(path, hosts, packages, out):
    cases = [json.loads(line) for line in open(path)]
    results = []
    for host in hosts:
        runner = HOSTS[host](packages)
        for case in cases:
            if "not_drawn" in case:
                results.append({"op": case["op"], "host": host, "kernel": "", "verdict": "not drawn", "why": case["not_drawn"]})
                continue
            result = {"op": case["op"], "host": host, "kernel": case["kernel"]}
            try:
                got = runner(case)
                if "error" in case and got and all(np.asarray(g).size == 0 for g in got):
                    # XLA skips a call whose outputs are all empty: the
                    # kernel that would refuse the inputs never runs.
                    result.update(verdict="elided", why=f"ours refuses it ({case['error'][:120]}); the host made empty outputs without calling the kernel")
                elif "error" in case:
                    result.update(verdict="differ", why=f"ours refuses it ({case['error'][:120]}), the host runs it")
                else:
                    why = _compare(case, got)
                    result.update(verdict="agree" if why is None else "differ", why=why)
            except NotExportable as e:
                result.update(verdict="not exportable", why=str(e))
            except NotChecked as e:
                result.update(verdict="not exportable", why=f"n/a: {e}")
            except ValueError as e:
                if "depends on input values" in str(e) and "error" not in case:
                    # JAX fixes output shapes before the kernel runs.
                    result.update(verdict="not exportable", why="its output shape depends on input values")
                elif "error" in case:
                    result.update(verdict="agree", why="both refuse it")
                else:
                    result.update(verdict="differ", why=f"the host refuses it: {str(e).splitlines()[0][:200]}")
            except Exception as e:  # the host refused the case
                if "error" in case:
                    result.update(verdict="agree", why="both refuse it")
                else:
                    result.update(verdict="differ", why=f"the host refuses it: {str(e).splitlines()[0][:200] if str(e) else type(e).__name__}")
            results.append(result)
    with open(out, "w") as f:
        json.dump(results, f)
    print(f"{out}: {len(results)} results for {', '.join(hosts)}")


def report(paths):
    results = [r for p in paths for r in json.load(open(p))]
    hosts = sorted({r["host"] for r in results})
    ops = sorted({r["op"] for r in results})
    table = {}
    for r in results:
        table.setdefault((r["op"], r["host"]), []).append(r)
    width = max(len(op) for op in ops) if ops else 2
    print(f"{'op':{width}}  " + "  ".join(f"{h:32}" for h in hosts))
    passed = failed = elided = 0
    failures = []
    for op in ops:
        cells = []
        for host in hosts:
            rs = table.get((op, host), [])
            agree = sum(r["verdict"] == "agree" for r in rs)
            differ = [r for r in rs if r["verdict"] == "differ"]
            passed += agree
            failed += len(differ)
            elided += sum(r["verdict"] == "elided" for r in rs)
            failures += differ
            run = [r for r in rs if r["verdict"] != "not drawn"]
            unheld = sum(r["verdict"] == "not exportable" for r in run)
            if not run:
                cells.append(f"no case: {rs[0]['why'].split(': ', 1)[-1]}"[:32] if rs else "")
            elif unheld == len(run):
                cells.append(f"not exportable: {run[0]['why']}"[:32])
            elif differ:
                cells.append(f"differ {len(differ)}/{len(run)}")
            else:
                cells.append(f"agree {agree}/{len(run)}" + (f" ({unheld} n/a)" if unheld else ""))
        print(f"{op:{width}}  " + "  ".join(f"{c:32}" for c in cells))
    for r in failures:
        print(f"DIFFER {r['op']} in {r['host']} (kernel {r['kernel']}): {r['why']}")
    for r in results:
        if r["verdict"] == "elided":
            print(f"ELIDED {r['op']} in {r['host']} (kernel {r['kernel']}): {r['why']}")
    print("Cells: agree N/M (cases run; n/a: cases of dtypes the host cannot hold); not exportable: why; no case: why none was drawn. Full reasons: the results files.")
    print(f"Conformance: {passed} passed, {failed} failed ({elided} cases our kernel refuses, whose empty outputs XLA made without calling it)")
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("cases")
    run.add_argument("--hosts", required=True)
    run.add_argument("--out", required=True)
    run.add_argument("--packages", default="opkit_ops", help="the packages whose ops run, comma-separated (opkit_ops,examples_tf)")
    rep = sub.add_parser("report")
    rep.add_argument("results", nargs="+")
    args = parser.parse_args()
    if args.command == "run":
        run_cases(args.cases, args.hosts.split(","), args.packages.split(","), args.out)
    else:
        sys.exit(report(args.results))


if __name__ == "__main__":
    main()
