"""The TensorFlow plugin's benchmarks: ratios against baselines measured in
the same run.

    python op-tf/python/bench/bench.py LIBRARY.so

LIBRARY.so is op-kernels' ops as the plugin builds them (libopkit_ops.so;
build it with --release for figures worth reporting). The script compiles
the seed's C++ ZeroOut (zero_out.cc) with g++ against the installed wheel's
headers, then runs each measurement in a process of its own (TensorFlow
allows one op per name per process, and both are named ZeroOut),
alternating ours and theirs, and reports the best of the rounds:

- ZeroOut on one element: eager calls, and a tf.function of 100 chained
  ZeroOuts with Grappler off (per op), each in a process of its own, and
  again with both in one process (the C++ op renamed CppZeroOut), measured
  in alternation, which takes the difference between processes out;
- Example (2x) on 1e7 float32 in a tf.function chain, against TensorFlow's
  own multiply by 2;
- the time of tf.load_op_library for the library.
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))

CHILD = r'''
import json, sys, time, timeit
t0 = time.perf_counter()
import tensorflow as tf
t1 = time.perf_counter()
module = tf.load_op_library(sys.argv[1])
load = time.perf_counter() - t1
which = sys.argv[2]
tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
result = {"load_s": load}
if which in ("ours", "theirs"):
    x = tf.constant([5], tf.int32)
    for _ in range(1000):
        module.zero_out(x)
    n = 20000
    result["eager_us"] = min(timeit.repeat(lambda: module.zero_out(x), number=n, repeat=3)) / n * 1e6

    @tf.function
    def chain(x):
        for _ in range(100):
            x = module.zero_out(x)
        return x
    chain(x)
    n = 2000
    result["graph_us_per_op"] = min(timeit.repeat(lambda: chain(x), number=n, repeat=3)) / n / 100 * 1e6
if which == "both":
    # Ours and the C++ one (renamed CppZeroOut) in one process, measured in
    # alternation: no difference of process, address layout or clock
    # between the two.
    cpp = tf.load_op_library(sys.argv[3])
    x = tf.constant([5], tf.int32)
    fns = {"ours": module.zero_out, "theirs": cpp.cpp_zero_out}
    chains = {}
    for key, fn in fns.items():
        for _ in range(1000):
            fn(x)

        def chain(x, fn=fn):
            for _ in range(100):
                x = fn(x)
            return x
        chains[key] = tf.function(chain)
        chains[key](x)
    for _ in range(7):
        for key in fns:
            n = 20000
            t = min(timeit.repeat(lambda: fns[key](x), number=n, repeat=1)) / n * 1e6
            result[key + "_eager_us"] = min(t, result.get(key + "_eager_us", t))
            n = 1000
            t = min(timeit.repeat(lambda: chains[key](x), number=n, repeat=1)) / n / 100 * 1e6
            result[key + "_graph_us_per_op"] = min(t, result.get(key + "_graph_us_per_op", t))
if which in ("ours", "tf_mul"):
    big = tf.random.uniform([10_000_000])
    if which == "ours":
        f = tf.function(lambda v: module.example(module.example(v)))
    else:
        f = tf.function(lambda v: tf.multiply(tf.multiply(v, 2.0), 2.0))
    f(big)
    n = 20
    result["x2_1e7_ms"] = min(timeit.repeat(lambda: f(big).numpy(), number=n, repeat=3)) / n * 1e3
print("RESULT " + json.dumps(result))
'''


def run(library, which, *more, python=sys.executable):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    out = subprocess.run([python, "-c", CHILD, library, which, *more], capture_output=True, text=True, env=env)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{which} failed:\n{out.stderr[-3000:]}")


def build_cpp(workdir, op_name="ZeroOut"):
    """The seed's zero_out.cc built with g++ against the wheel, its op named
    `op_name` (CppZeroOut, to load it beside ours in one process)."""
    import tensorflow as tf

    source = os.path.join(workdir, f"{op_name}.cc")
    with open(os.path.join(HERE, "zero_out.cc")) as f:
        text = f.read()
    with open(source, "w") as f:
        f.write(text.replace('"ZeroOut"', f'"{op_name}"'))
    so = os.path.join(workdir, f"{op_name}.so")
    command = ["g++", "-shared", "-fPIC", "-O2", source, "-o", so]
    command += tf.sysconfig.get_compile_flags() + tf.sysconfig.get_link_flags()
    built = subprocess.run(command, capture_output=True, text=True)
    if built.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{built.stderr[-3000:]}")
    return so


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    ours_lib = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as workdir:
        theirs_lib = build_cpp(workdir)
        renamed_lib = build_cpp(workdir, "CppZeroOut")
        best = {}
        for round_ in range(ROUNDS):
            runs = (("ours", ours_lib), ("theirs", theirs_lib), ("tf_mul", ours_lib), ("both", ours_lib, renamed_lib))
            for which, lib, *more in runs:
                for key, value in run(lib, which, *more).items():
                    best[(which, key)] = min(value, best.get((which, key), float("inf")))
            print(f"round {round_ + 1}/{ROUNDS} done", file=sys.stderr)
    ours_e, theirs_e = best[("ours", "eager_us")], best[("theirs", "eager_us")]
    ours_g, theirs_g = best[("ours", "graph_us_per_op")], best[("theirs", "graph_us_per_op")]
    ours_x, tf_x = best[("ours", "x2_1e7_ms")], best[("tf_mul", "x2_1e7_ms")]
    print(f"ZeroOut eager, 1 element:   ours {ours_e:.2f} us, C++ {theirs_e:.2f} us per call "
          f"(+{ours_e - theirs_e:.2f} us, {ours_e / theirs_e:.2f}x)")
    print(f"ZeroOut in a graph, 100 ops: ours {ours_g:.2f} us, C++ {theirs_g:.2f} us per op "
          f"(+{ours_g - theirs_g:.2f} us, {ours_g / theirs_g:.2f}x)")
    for kind, label in (("eager_us", "eager, per call"), ("graph_us_per_op", "in a graph, per op")):
        ours, theirs = best[("both", "ours_" + kind)], best[("both", "theirs_" + kind)]
        print(f"  same process, alternating, {label}: ours {ours:.2f} us, C++ {theirs:.2f} us "
              f"(+{ours - theirs:.2f} us, {ours / theirs:.2f}x)")
    print(f"2x on 1e7 float32, twice:    ours {ours_x:.2f} ms, tf.multiply {tf_x:.2f} ms "
          f"({ours_x / tf_x:.2f}x)")
    print(f"tf.load_op_library:         ours {best[('ours', 'load_s')] * 1e3:.1f} ms, "
          f"C++ ZeroOut {best[('theirs', 'load_s')] * 1e3:.1f} ms")
    print(f"(best of {ROUNDS} rounds, each in its own process)")


if __name__ == "__main__":
    main()
