"""Writes the GraphDef fixtures that op-graph's tests read, made by a real TensorFlow.

Usage: python tools/tensorflow/make_fixtures.py [--out DIR] [--verify]

Each fixture is a directory `op-graph/tests/data/tensorflow/<name>/`:

    graph.pb            the binary GraphDef (deterministic serialization)
    graph.pbtxt         the same in protobuf text format, for people
    feeds/<node>.npy    the inputs, one per placeholder fed
    fetches.txt         one fetch a line, `node` (output 0) or `node:k`
    expected/<f>.npy    TensorFlow's value for fetch f (':' replaced by '_'),
                        from importing graph.pb into a fresh graph
                        (`tf.compat.v1.import_graph_def`) and running it in a
                        `tf.compat.v1.Session` with the feeds

The fixtures use only the standard ops that opkit registers (STANDARD_OPS);
the script stops if TensorFlow put any other op into a graph. Inputs come from
fixed seeds and fixed values, so running it again rewrites the same bytes
(with the same TensorFlow and NumPy, see requirements.txt); `--verify` writes
into a temporary folder and fails if any file differs from the committed ones.

`check_export.py` checks the other direction (graphs written by opkit, run in
TensorFlow) over directories of the same layout.
"""

import argparse
import filecmp
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.dont_write_bytecode = True  # no __pycache__ next to the scripts from importing check_export

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from google.protobuf import text_format  # noqa: E402
from tensorflow.core.framework import attr_value_pb2, graph_pb2  # noqa: E402
from tensorflow.python.framework.convert_to_constants import (  # noqa: E402
    convert_variables_to_constants_v2,
)

from check_export import file_stem, run_graph  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "op-graph" / "tests" / "data" / "tensorflow"

# The ops of the graphs issue (section 1); nothing else may appear in a fixture.
STANDARD_OPS = frozenset(
    """
Const Placeholder PlaceholderWithDefault Identity IdentityN NoOp StopGradient
AddV2 Sub Mul RealDiv Neg Square Sqrt Rsqrt Exp Log Sin Cos Tanh Sigmoid Relu
Maximum Minimum Pow SquaredDifference MatMul Sum Mean Max Prod Reshape Shape
Size Rank Fill ZerosLike OnesLike Cast ExpandDims Squeeze Transpose ConcatV2
Pack Select SelectV2 Greater Less Equal AddN BroadcastTo BroadcastGradientArgs
Tile
""".split()
)

v1 = tf.compat.v1
raw = tf.raw_ops


def unary(op, x, name):
    """Calls a unary raw op; Relu names its input `features`, the others `x`."""
    return op(features=x, name=name) if op is raw.Relu else op(x=x, name=name)


def values(seed, shape, dtype, low=-2.0, high=2.0):
    """Fixed pseudo-random values, rounded to two decimals so the .pbtxt and
    the .npy files stay readable."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(low, high, size=shape).round(2)
    return x.astype(dtype)


def ints(seed, shape, dtype, low=-5, high=6):
    """Fixed pseudo-random integers in [low, high)."""
    rng = np.random.default_rng(seed)
    return rng.integers(low, high, size=shape).astype(dtype)


# --------------------------------------------------------------------------
# mlp_frozen: what a TensorFlow 2.x user writes and freezes.


def mlp_frozen():
    w1 = tf.Variable(values(1, (4, 8), np.float32), name="w1")
    b1 = tf.Variable(values(2, (8,), np.float32), name="b1")
    w2 = tf.Variable(values(3, (8, 3), np.float32), name="w2")
    b2 = tf.Variable(values(4, (3,), np.float32), name="b2")

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
    def mlp(x):
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
        return tf.matmul(h, w2) + b2

    frozen = convert_variables_to_constants_v2(mlp.get_concrete_function())
    graph_def = frozen.graph.as_graph_def()
    (inp,) = [t.name for t in frozen.inputs]
    (out,) = [t.name for t in frozen.outputs]
    assert inp == "x:0" and out == "Identity:0", (inp, out)
    return graph_def, {"x": values(5, (5, 4), np.float32)}, ["Identity"]


# --------------------------------------------------------------------------
# elementwise: every unary and binary op, with broadcasting, several dtypes.


def elementwise():
    graph = tf.Graph()
    fetches = []

    def out(t):
        fetches.append(t.name[:-2] if t.name.endswith(":0") else t.name)
        return t

    with graph.as_default():
        a = v1.placeholder(tf.float32, [None, 3], name="a")
        b = v1.placeholder(tf.float32, [3], name="b")
        c = v1.placeholder(tf.float32, [None, 1], name="c")
        d = v1.placeholder(tf.float32, [1, None], name="d")
        s = v1.placeholder(tf.float32, [], name="s")
        p = v1.placeholder(tf.float32, [None, 3], name="p")  # positive
        a64 = v1.placeholder(tf.float64, [None, 3], name="a64")
        p64 = v1.placeholder(tf.float64, [None, None], name="p64")  # positive
        i = v1.placeholder(tf.int32, [None, 3], name="i")
        j = v1.placeholder(tf.int32, [3], name="j")  # small, not negative
        k = v1.placeholder(tf.int64, [2, None], name="k")
        n = v1.placeholder(tf.int64, [], name="n")

        # Unary, float32: the ops defined everywhere on `a`, the others on `p`.
        for op in (raw.Neg, raw.Square, raw.Exp, raw.Sin, raw.Cos, raw.Tanh,
                   raw.Sigmoid, raw.Relu):
            out(unary(op, a, op.__name__.lower()))
        for op in (raw.Sqrt, raw.Rsqrt, raw.Log):
            out(unary(op, p, op.__name__.lower()))
        # Unary, other dtypes.
        for op in (raw.Neg, raw.Exp, raw.Tanh, raw.Sigmoid):
            out(unary(op, a64, op.__name__.lower() + "_f64"))
        for op in (raw.Sqrt, raw.Log, raw.Rsqrt):
            out(unary(op, p64, op.__name__.lower() + "_f64"))
        for op in (raw.Neg, raw.Square, raw.Relu):
            out(unary(op, i, op.__name__.lower() + "_i32"))
        for op in (raw.Neg, raw.Square):
            out(unary(op, k, op.__name__.lower() + "_i64"))

        # Binary, float32: [2,3] with [3], [2,1] with [1,3], with a scalar,
        # same shapes, scalar with scalar.
        two = tf.constant(2.0, name="two")
        out(raw.AddV2(x=a, y=b, name="add_row"))
        out(raw.AddV2(x=s, y=two, name="add_scalars"))
        out(raw.Sub(x=c, y=d, name="sub_outer"))
        out(raw.Sub(x=two, y=a, name="sub_from_scalar"))
        out(raw.Mul(x=a, y=s, name="mul_scalar"))
        out(raw.Mul(x=c, y=b, name="mul_col_row"))
        out(raw.RealDiv(x=a, y=p, name="div_same"))
        out(raw.RealDiv(x=a, y=two, name="div_scalar"))
        out(raw.RealDiv(x=d, y=c, name="div_outer"))
        out(raw.Maximum(x=a, y=b, name="maximum_row"))
        out(raw.Minimum(x=c, y=d, name="minimum_outer"))
        out(raw.Pow(x=p, y=b, name="pow_row"))
        out(raw.Pow(x=a, y=two, name="pow_scalar"))
        out(raw.SquaredDifference(x=a, y=b, name="sqdiff_row"))
        out(raw.SquaredDifference(x=c, y=d, name="sqdiff_outer"))
        # Binary, float64.
        half = tf.constant(0.5, tf.float64, name="half")
        out(raw.AddV2(x=a64, y=p64, name="add_f64"))
        out(raw.Sub(x=a64, y=half, name="sub_f64"))
        out(raw.Mul(x=a64, y=p64, name="mul_f64"))
        out(raw.RealDiv(x=a64, y=p64, name="div_f64"))
        out(raw.Pow(x=p64, y=half, name="pow_f64"))
        out(raw.Maximum(x=a64, y=half, name="maximum_f64"))
        out(raw.Minimum(x=a64, y=p64, name="minimum_f64"))
        out(raw.SquaredDifference(x=a64, y=p64, name="sqdiff_f64"))
        # Binary, int32 and int64.
        out(raw.AddV2(x=i, y=j, name="add_i32"))
        out(raw.Sub(x=i, y=j, name="sub_i32"))
        out(raw.Mul(x=i, y=j, name="mul_i32"))
        out(raw.Maximum(x=i, y=j, name="maximum_i32"))
        out(raw.Minimum(x=i, y=j, name="minimum_i32"))
        out(raw.Pow(x=i, y=j, name="pow_i32"))
        out(raw.SquaredDifference(x=i, y=j, name="sqdiff_i32"))
        out(raw.AddV2(x=k, y=n, name="add_i64"))
        out(raw.Sub(x=n, y=k, name="sub_i64"))
        out(raw.Mul(x=k, y=k, name="mul_i64"))
        out(raw.Maximum(x=k, y=n, name="maximum_i64"))
        out(raw.Minimum(x=k, y=n, name="minimum_i64"))

    feeds = {
        "a": values(10, (2, 3), np.float32),
        "b": values(11, (3,), np.float32),
        "c": values(12, (2, 1), np.float32),
        "d": values(13, (1, 3), np.float32),
        "s": np.array(1.5, np.float32),
        "p": values(14, (2, 3), np.float32, 0.25, 3.0),
        "a64": values(15, (2, 3), np.float64),
        "p64": values(16, (2, 3), np.float64, 0.25, 3.0),
        "i": ints(17, (2, 3), np.int32),
        "j": np.array([0, 1, 3], np.int32),
        "k": ints(18, (2, 2), np.int64, -1000, 1000),
        "n": np.array(-7, np.int64),
    }
    return graph.as_graph_def(), feeds, fetches


# --------------------------------------------------------------------------
# array_and_reductions: the shape, array, reduction, selection and
# comparison ops, IdentityN, StopGradient, PlaceholderWithDefault,
# BroadcastGradientArgs and a NoOp with control inputs.


def array_and_reductions():
    graph = tf.Graph()
    fetches = []

    def out(t, name=None):
        fetches.append(name or (t.name[:-2] if t.name.endswith(":0") else t.name))
        return t

    with graph.as_default():
        x = v1.placeholder(tf.float32, [None, 3], name="x")
        u = v1.placeholder(tf.float32, None, name="u")  # unknown rank
        i = v1.placeholder(tf.int32, [None, 3], name="i")
        axis = v1.placeholder(tf.int32, [], name="axis")
        cond = v1.placeholder(tf.bool, [None, 3], name="cond")
        rows = v1.placeholder(tf.bool, [None], name="rows")
        pwd_fed = v1.placeholder_with_default(
            tf.constant([[1.0, 2.0, 3.0]], name="pwd_fed_default"), [None, 3], name="pwd_fed"
        )
        pwd_default = v1.placeholder_with_default(
            tf.constant([4, 5], tf.int64, name="pwd_default_value"), [2], name="pwd_default"
        )
        out(pwd_fed)
        out(pwd_default)

        # Shapes and sizes.
        shape = out(raw.Shape(input=x, name="shape"))
        out(raw.Shape(input=u, out_type=tf.int64, name="shape_i64"))
        size = out(raw.Size(input=x, name="size"))
        rank = out(raw.Rank(input=u, name="rank"))
        out(raw.Reshape(tensor=x, shape=[-1], name="reshape_flat"))
        out(raw.Reshape(tensor=x, shape=tf.constant([3, -1], tf.int64), name="reshape_3_m1"))
        fill = out(raw.Fill(dims=shape, value=tf.constant(7.0), name="fill"))
        out(raw.Fill(dims=[2, 2], value=tf.constant(3, tf.int64), name="fill_const"))
        zeros = out(raw.ZerosLike(x=x, name="zeros_like"))
        out(raw.OnesLike(x=i, name="ones_like"))

        # Casts.
        out(raw.Cast(x=x, DstT=tf.int32, name="cast_f32_i32"))
        out(raw.Cast(x=i, DstT=tf.float64, name="cast_i32_f64"))
        out(raw.Cast(x=cond, DstT=tf.float32, name="cast_bool_f32"))
        out(raw.Cast(x=i, DstT=tf.int64, name="cast_i32_i64"))

        # Dimensions.
        out(raw.ExpandDims(input=x, axis=0, name="expand_first"))
        expanded = out(raw.ExpandDims(input=x, axis=-1, name="expand_last"))
        out(raw.Squeeze(input=expanded, axis=[-1], name="squeeze_axis"))
        out(raw.Squeeze(input=u, name="squeeze_all"))
        out(raw.Transpose(x=x, perm=[1, 0], name="transpose"))
        out(raw.Transpose(x=u, perm=tf.constant([2, 0, 1], tf.int64), name="transpose_3d"))
        out(raw.ConcatV2(values=[x, fill], axis=0, name="concat_rows"))
        out(raw.ConcatV2(values=[x, zeros, x], axis=-1, name="concat_last"))
        out(raw.Pack(values=[x, fill], axis=0, name="pack_first"))
        out(raw.Pack(values=[x, x], axis=-1, name="pack_last"))
        out(raw.Pack(values=[size, rank], name="pack_scalars"))
        out(raw.Tile(input=x, multiples=[2, 1], name="tile"))
        out(raw.Tile(input=i, multiples=tf.constant([1, 2], tf.int64), name="tile_i64"))
        row = tf.constant([10.0, 20.0, 30.0], name="row")
        out(raw.BroadcastTo(input=row, shape=shape, name="broadcast_fed"))
        out(raw.BroadcastTo(input=tf.constant([[1], [2]], name="col"), shape=[2, 2, 3],
                            name="broadcast_const"))

        # Reductions: constant axes (lists, scalars, negative, int64, all),
        # with and without keep_dims, and a fed axis.
        for op, name in ((raw.Sum, "sum"), (raw.Mean, "mean"), (raw.Max, "max"),
                         (raw.Prod, "prod")):
            out(op(input=x, axis=[0], name=name + "_0"))
            out(op(input=x, axis=1, keep_dims=True, name=name + "_1_keep"))
            out(op(input=x, axis=axis, name=name + "_fed"))
        out(raw.Sum(input=x, axis=[0, 1], name="sum_all"))
        out(raw.Mean(input=x, axis=[-1], keep_dims=True, name="mean_neg_keep"))
        out(raw.Max(input=x, axis=axis, keep_dims=True, name="max_fed_keep"))
        out(raw.Prod(input=x, axis=tf.constant([1], tf.int64), name="prod_i64_axis"))
        out(raw.Sum(input=i, axis=[1], name="sum_i32"))
        out(raw.Max(input=i, axis=[0, 1], keep_dims=True, name="max_i32_all_keep"))
        out(raw.Prod(input=i, axis=0, name="prod_i32"))
        out(raw.Mean(input=i, axis=0, name="mean_i32"))  # -3 / 2 truncates to -1

        # Selection and comparisons.
        ones = raw.OnesLike(x=x, name="ones")
        out(raw.Select(condition=cond, x=x, y=ones, name="select"))
        out(raw.Select(condition=rows, x=x, y=zeros, name="select_rows"))
        out(raw.SelectV2(condition=cond, t=x, e=tf.constant(0.0), name="where_scalar"))
        out(raw.SelectV2(condition=tf.constant([True, False, True], name="mask"),
                         t=x, e=tf.constant([[-1.0], [-2.0]], name="fallback"),
                         name="where_broadcast"))
        out(raw.Greater(x=x, y=tf.constant(0.0), name="greater"))
        out(raw.Less(x=x, y=tf.constant([-0.5, 0.0, -1.6], name="threshold"), name="less_row"))
        out(raw.Equal(x=i, y=tf.constant([3, 5, 2], name="probe"), name="equal_i32"))
        out(raw.Greater(x=i, y=tf.constant([0, 1, 2]), name="greater_i32"))

        # AddN, IdentityN, StopGradient, BroadcastGradientArgs.
        out(raw.AddN(inputs=[x, fill, pwd_fed], name="add_n"))
        ident = raw.IdentityN(input=[x, i], name="identity_n")
        out(ident[0], "identity_n")
        out(ident[1], "identity_n:1")
        out(raw.StopGradient(input=x, name="stop_gradient"))
        bga = raw.BroadcastGradientArgs(s0=shape, s1=tf.constant([3]), name="bga")
        out(bga[0], "bga")
        out(bga[1], "bga:1")
        bga_outer = raw.BroadcastGradientArgs(
            s0=tf.constant([2, 1], tf.int64), s1=tf.constant([1, 3], tf.int64), name="bga_outer"
        )
        out(bga_outer[0], "bga_outer")
        out(bga_outer[1], "bga_outer:1")

        # A NoOp with control inputs, and an Identity that waits for it.
        with tf.control_dependencies([fill, bga[0]]):
            deps = tf.no_op(name="deps")
        with tf.control_dependencies([deps]):
            out(tf.identity(x, name="after_deps"))

    feeds = {
        "x": values(20, (2, 3), np.float32),
        "u": values(21, (2, 1, 3), np.float32),
        "i": ints(22, (2, 3), np.int32),
        "axis": np.array(1, np.int32),
        "cond": np.array([[True, False, True], [False, False, True]]),
        "rows": np.array([False, True]),
        "pwd_fed": values(23, (2, 3), np.float32),
    }
    return graph.as_graph_def(), feeds, fetches


# --------------------------------------------------------------------------
# odd_but_valid: a TensorFlow graph rewritten into forms a reader must accept.


def odd_but_valid():
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, [None, 3], name="x")
        with tf.name_scope("layer1"):
            w1 = tf.constant(values(30, (3, 2), np.float32), name="w")
            b1 = tf.constant(0.0, shape=[2], name="bias")  # rewritten below
            h = raw.AddV2(x=tf.matmul(x, w1, name="MatMul"), y=b1, name="add")
        hidden = raw.Relu(features=h, name="7")  # an all-digit name
        with tf.name_scope("layer2"):
            w2 = tf.constant(values(31, (3, 2), np.float32), name="w")
            b2 = tf.constant(np.ones(3, np.float32), name="zeros")  # rewritten below
            y = raw.AddV2(x=tf.matmul(hidden, w2, transpose_b=True, name="MatMul"), y=b2,
                          name="add")
        scale = tf.constant(np.ones((1, 3), np.float32), name="scale")  # rewritten below
        scaled = raw.Mul(x=y, y=scale, name="scaled")
        mask = tf.constant([[True, False, True]], name="mask")  # rewritten below
        masked = raw.SelectV2(condition=mask, t=scaled, e=tf.constant(-1.0, name="minus_one"),
                              name="masked")
        with tf.name_scope("ints"):
            ia = tf.constant([0, 0, 0, 0], name="a")  # rewritten below
            ib = tf.constant([0, 0, 0, 0], name="zeros")  # rewritten below
            isum = raw.Sum(input=raw.AddV2(x=ia, y=ib, name="add"), axis=0, name="sum")
        ints_f = raw.Cast(x=isum, DstT=tf.float32, name="ints_f")
        init = tf.no_op(name="init")
        plus_ints = raw.AddV2(x=masked, y=ints_f, name="plus_ints")
        with tf.control_dependencies([init]):
            raw.Identity(input=plus_ints, name="out")

    graph_def = graph.as_graph_def()
    nodes = {n.name: n for n in graph_def.node}

    def tensor(node_name):
        return nodes[node_name].attr["value"].tensor

    # Const values written in every encoding TensorFlow accepts:
    # tensor_content (layer1/w and layer2/w, as TensorFlow wrote them);
    assert tensor("layer1/w").tensor_content and tensor("layer2/w").tensor_content
    # one typed value that repeats to fill the shape (TensorFlow writes this
    # for tf.constant(scalar, shape=...)), here made explicit;
    t = tensor("layer1/bias")
    t.ClearField("tensor_content")
    t.ClearField("float_val")
    t.float_val.append(0.25)
    t = tensor("scale")
    t.ClearField("tensor_content")
    t.float_val.append(0.5)
    # a shorter list whose last value repeats: [1, 2] for shape [4] is [1, 2, 2, 2];
    t = tensor("ints/a")
    t.ClearField("tensor_content")
    t.int_val.extend([1, 2])
    # no value at all: zeros;
    for name in ("layer2/zeros", "ints/zeros"):
        tensor(name).ClearField("tensor_content")
    # and a bool tensor as tensor_content, one byte each (TensorFlow writes bool_val).
    t = tensor("mask")
    t.ClearField("bool_val")
    t.tensor_content = bytes([1, 0, 1])

    # Attrs at their default values: stripped from layer1/MatMul (transpose_a,
    # transpose_b, grad_a, grad_b), ints/sum (keep_dims), ints_f (Truncate) and
    # the placeholder's shape; written out on layer2/MatMul (TensorFlow writes them).
    for name, keys in (("layer1/MatMul", ("transpose_a", "transpose_b", "grad_a", "grad_b")),
                       ("ints/sum", ("keep_dims",)),
                       ("ints_f", ("Truncate",)),
                       ("x", ("shape",))):
        for key in keys:
            assert key in nodes[name].attr, (name, key)
            del nodes[name].attr[key]
    assert all(k in nodes["layer2/MatMul"].attr
               for k in ("transpose_a", "transpose_b", "grad_a", "grad_b"))

    # Attrs no op declares, starting with '_': a colocation class, inferred
    # output shapes.
    nodes["layer1/MatMul"].attr["_class"].list.s.append(b"loc:@layer1/w")
    shapes = nodes["7"].attr["_output_shapes"].list.shape.add()
    shapes.dim.add().size = -1
    shapes.dim.add().size = 2

    # Other NodeDef fields: a requested device, debug info, and an input that
    # names output 0 explicitly.
    nodes["scaled"].device = "/device:CPU:0"
    nodes["layer2/add"].experimental_debug_info.original_node_names.append("orig/add")
    inputs = nodes["layer1/add"].input
    assert inputs[0] == "layer1/MatMul"
    inputs[0] = "layer1/MatMul:0"
    # `^init` came from tf.control_dependencies; make `init` wait for a Const too.
    nodes["init"].input.append("^layer1/w")
    assert "^init" in nodes["out"].input

    # Nodes in reverse order: every input names a node that comes later.
    reordered = graph_pb2.GraphDef()
    reordered.CopyFrom(graph_def)
    del reordered.node[:]
    reordered.node.extend(reversed(graph_def.node))

    feeds = {"x": values(32, (2, 3), np.float32)}
    return reordered, feeds, ["out", "7", "masked", "ints_f"]


FIXTURES = {
    "mlp_frozen": mlp_frozen,
    "elementwise": elementwise,
    "array_and_reductions": array_and_reductions,
    "odd_but_valid": odd_but_valid,
}


def write_fixture(directory, graph_def, feeds, fetches):
    """Writes one fixture; returns a one-line summary."""
    ops = sorted({n.op for n in graph_def.node})
    unknown = [op for op in ops if op not in STANDARD_OPS]
    if unknown:
        sys.exit(f"{directory.name}: TensorFlow wrote ops outside the standard set: {unknown}")
    placeholders = {n.name for n in graph_def.node
                    if n.op in ("Placeholder", "PlaceholderWithDefault")}
    assert set(feeds) <= placeholders, set(feeds) - placeholders
    assert len(set(fetches)) == len(fetches), "duplicate fetch"

    # TensorFlow computes the expected values from the bytes we write.
    pb = graph_def.SerializeToString(deterministic=True)
    parsed = graph_pb2.GraphDef.FromString(pb)
    expected = run_graph(parsed, feeds, fetches)

    if directory.exists():
        shutil.rmtree(directory)
    (directory / "feeds").mkdir(parents=True)
    (directory / "expected").mkdir()
    (directory / "graph.pb").write_bytes(pb)
    text = text_format.MessageToString(parsed)
    assert text_format.Parse(text, graph_pb2.GraphDef()) == parsed
    (directory / "graph.pbtxt").write_text(text)
    for name, value in sorted(feeds.items()):
        np.save(directory / "feeds" / f"{name}.npy", value, allow_pickle=False)
    (directory / "fetches.txt").write_text("".join(f + "\n" for f in fetches))
    for fetch, value in zip(fetches, expected):
        np.save(directory / "expected" / f"{file_stem(fetch)}.npy", value, allow_pickle=False)

    total = sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())
    return (f"{directory.name}: {len(graph_def.node)} nodes, {len(fetches)} fetches, "
            f"graph.pb {len(pb)} B, all files {total} B, ops: {' '.join(ops)}")


def make_all(out_dir):
    for name, build in FIXTURES.items():
        graph_def, feeds, fetches = build()
        print(write_fixture(out_dir / name, graph_def, feeds, fetches))


def differing_files(a, b):
    """Relative paths that differ between two trees (missing on either side counts)."""
    bad = []
    cmp = filecmp.dircmp(a, b)
    stack = [(cmp, Path())]
    while stack:
        c, rel = stack.pop()
        bad += [str(rel / f) for f in c.left_only + c.right_only + c.funny_files]
        _, mismatch, errors = filecmp.cmpfiles(c.left, c.right, c.common_files, shallow=False)
        bad += [str(rel / f) for f in mismatch + errors]
        stack += [(sub, rel / d) for d, sub in c.subdirs.items()]
    return sorted(bad)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"where the fixture folders go (default {DEFAULT_OUT})")
    parser.add_argument("--verify", action="store_true",
                        help="regenerate into a temporary folder and compare with --out")
    args = parser.parse_args()
    if not args.verify:
        make_all(args.out)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        make_all(Path(tmp))
        bad = []
        for name in FIXTURES:
            bad += [f"{name}/{f}" for f in differing_files(Path(tmp) / name, args.out / name)]
    if bad:
        print("differs from the committed fixtures: " + ", ".join(bad))
        return 1
    print("all fixtures regenerate byte-identically")
    return 0


if __name__ == "__main__":
    sys.exit(main())
