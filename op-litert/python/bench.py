"""Per-invoke time of the custom Sin in LiteRT with our delegate against
LiteRT's builtin SIN (sin_builtin.tflite), same run, on a tiny input and on
1e6 elements; prints each and the ratio (ours / builtin).

    cargo build --release -p op-litert-test-delegate
    target/litert-venv/bin/python op-litert/python/bench.py target/release/libop_litert_test_delegate.so
"""

import os
import sys
import time

import numpy as np
from ai_edge_litert.interpreter import Interpreter, load_delegate

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "op-lite", "tests", "data")


def prepared(interp, n):
    (inp,) = interp.get_input_details()
    interp.resize_tensor_input(inp["index"], [n])
    interp.allocate_tensors()
    interp.set_tensor(inp["index"], np.linspace(-10, 10, n, dtype=np.float32))
    return interp


def per_invoke(interp, seconds=1.0):
    """The median over 7 rounds of the mean invoke time, in seconds."""
    interp.invoke()
    calls = 1
    start = time.perf_counter()
    while time.perf_counter() - start < seconds / 20:
        interp.invoke()
        calls += 1
    rounds = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(calls):
            interp.invoke()
        rounds.append((time.perf_counter() - start) / calls)
    return sorted(rounds)[3]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench.py DELEGATE.so")
    delegate = load_delegate(os.path.abspath(sys.argv[1]))
    for n in (5, 1_000_000):
        ours = prepared(Interpreter(model_path=os.path.join(DATA, "sin_custom.tflite"),
                                    experimental_delegates=[delegate]), n)
        builtin = prepared(Interpreter(model_path=os.path.join(DATA, "sin_builtin.tflite")), n)
        t_ours, t_builtin = per_invoke(ours), per_invoke(builtin)
        print(f"n={n}: delegate {t_ours * 1e6:.2f} us, builtin SIN {t_builtin * 1e6:.2f} us, "
              f"ratio {t_ours / t_builtin:.2f}")


if __name__ == "__main__":
    main()
