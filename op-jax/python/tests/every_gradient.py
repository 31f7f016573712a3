"""`jax.test_util.check_grads` (first order, reverse mode) for every op of
the installed opkit_ops and examples_tf packages that has a `#[gradient]`,
on the first case of the conformance suite's cases (CASES.jsonl, `cargo
xtask conformance`) that has float inputs of at most 32 elements each and
finite float outputs (an integer output has no derivative to check). Float64 is on (`jax_enable_x64`), for numeric derivatives
that a float64 case can check tightly. Run by test_jax.Gradients:

    python every_gradient.py CASES.jsonl

Prints one line per op ("ok", "FAIL" with why, or "no case" with why) and
"N checked, N failed, N without a case"; exits 1 when one failed."""

import json
import sys

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.test_util import check_grads  # noqa: E402

import examples_tf.jax  # noqa: E402
import opkit_ops.jax  # noqa: E402

NUMPY = {
    1: np.float32, 2: np.float64, 3: np.int32, 4: np.uint8, 5: np.int16, 6: np.int8, 9: np.int64,
    10: np.bool_, 17: np.uint16, 19: np.float16, 22: np.uint32, 23: np.uint64,
}


def finite(tensor):
    return all(not isinstance(v, str) for v in tensor["values"])


def usable(case):
    if "outputs" not in case:
        return False
    inputs = case["inputs"]
    return (
        "outputs" in case
        and all(t["dtype"] in NUMPY and len(t["values"]) <= 32 for t in inputs)
        and any(t["dtype"] in (1, 2) for t in inputs)
        and all(finite(t) and t["dtype"] in (1, 2) for t in case["outputs"])
    )


def main(path):
    functions, entries = {}, {}
    for module in (opkit_ops.jax, examples_tf.jax):
        for op in module._MANIFEST["ops"]:
            if op["differentiable"]:
                entries.setdefault(op["name"], op)
                functions.setdefault(op["name"], getattr(module, op["python_name"]))
    cases = {}
    for line in open(path):
        case = json.loads(line)
        if case.get("op") in entries and case["op"] not in cases and usable(case):
            cases[case["op"]] = case
    checked = failed = 0
    for name in sorted(entries):
        if name not in cases:
            print(f"no case  {name}: no drawn case has float inputs of at most 32 elements and finite float outputs")
            continue
        case, entry = cases[name], entries[name]
        types = {a["name"]: a for a in entry["attrs"]}
        kwargs = {
            types[k]["python_name"]: NUMPY[v] if types[k]["type"] == "type" else v for k, v in case["attrs"].items()
        }
        arrays = [np.array(t["values"], NUMPY[t["dtype"]]).reshape(t["shape"]) for t in case["inputs"]]
        floats = [i for i, t in enumerate(case["inputs"]) if t["dtype"] in (1, 2)]

        def f(*xs, arrays=arrays, floats=floats, op=functions[name], kwargs=kwargs):
            args = list(arrays)
            for i, x in zip(floats, xs):
                args[i] = x
            return op(*args, **kwargs)

        tolerance = 1e-5 if all(case["inputs"][i]["dtype"] == 2 for i in floats) else 2e-2
        checked += 1
        try:
            check_grads(f, [jnp.asarray(arrays[i]) for i in floats], order=1, modes=["rev"], atol=tolerance, rtol=tolerance)
            print(f"ok       {name} ({case['kernel']})")
        except Exception as e:
            failed += 1
            print(f"FAIL     {name} ({case['kernel']}): {str(e).splitlines()[0][:300] if str(e) else type(e).__name__}")
    print(f"{checked} checked, {failed} failed, {len(entries) - checked} without a case")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main(sys.argv[1])
