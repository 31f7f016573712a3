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
  ZeroOuts with Grappler off (per op);
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


def run(library, which, python=sys.executable):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    out = subprocess.run([python, "-c", CHILD, library, which], capture_output=True, text=True, env=env)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{which} failed:\n{out.stderr[-3000:]}")


def build_cpp(workdir):
    import tensorflow as tf

    so = os.path.join(workdir, "zero_out_cc.so")
    command = ["g++", "-shared", "-fPIC", "-O2", os.path.join(HERE, "zero_out.cc"), "-o", so]
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
        best = {}
        for round_ in range(ROUNDS):
            for which, lib in (("ours", ours_lib), ("theirs", theirs_lib), ("tf_mul", ours_lib)):
                for key, value in run(lib, which).items():
                    best[(which, key)] = min(value, best.get((which, key), float("inf")))
            print(f"round {round_ + 1}/{ROUNDS} done", file=sys.stderr)
    ours_e, theirs_e = best[("ours", "eager_us")], best[("theirs", "eager_us")]
    ours_g, theirs_g = best[("ours", "graph_us_per_op")], best[("theirs", "graph_us_per_op")]
    ours_x, tf_x = best[("ours", "x2_1e7_ms")], best[("tf_mul", "x2_1e7_ms")]
    print(f"ZeroOut eager, 1 element:   ours {ours_e:.2f} us, C++ {theirs_e:.2f} us per call "
          f"(+{ours_e - theirs_e:.2f} us, {ours_e / theirs_e:.2f}x)")
    print(f"ZeroOut in a graph, 100 ops: ours {ours_g:.2f} us, C++ {theirs_g:.2f} us per op "
          f"(+{ours_g - theirs_g:.2f} us, {ours_g / theirs_g:.2f}x)")
    print(f"2x on 1e7 float32, twice:    ours {ours_x:.2f} ms, tf.multiply {tf_x:.2f} ms "
          f"({ours_x / tf_x:.2f}x)")
    print(f"tf.load_op_library:         ours {best[('ours', 'load_s')] * 1e3:.1f} ms, "
          f"C++ ZeroOut {best[('theirs', 'load_s')] * 1e3:.1f} ms")
    print(f"(best of {ROUNDS} rounds, each in its own process)")


if __name__ == "__main__":
    main()
