"""Prints TensorFlow's own OpDefs, in protobuf text format, for the ops that
opkit registers under TensorFlow's names.

Usage: python dump_opdefs.py > op-kernels/tests/data/tensorflow_ops.pbtxt

The output is TensorFlow's `OpList` text with the docs stripped (TensorFlow
keeps docs in ApiDefs, not in the registry), ops sorted by name. The test
`op-kernels/tests/tensorflow_opdefs.rs` compares every op we register under
one of these names with this copy.
"""

import sys

from google.protobuf import text_format
from tensorflow.core.framework import op_def_pb2
from tensorflow.python.framework import op_def_registry

import tensorflow as tf

# The standard ops (the graphs issue) and the ops of the guide that carry
# TensorFlow's names.
OPS = """
Const Placeholder PlaceholderWithDefault Identity IdentityN NoOp StopGradient
AddV2 Sub Mul RealDiv Neg Square Sqrt Rsqrt Exp Log Sin Cos Tanh Sigmoid Relu
Maximum Minimum Pow SquaredDifference MatMul Sum Mean Max Prod Reshape Shape
Size Rank Fill ZerosLike OnesLike Cast ExpandDims Squeeze Transpose ConcatV2
Pack Select SelectV2 Greater Less Equal AddN BroadcastTo BroadcastGradientArgs
Tile
SqrtGrad RsqrtGrad TanhGrad SigmoidGrad ReluGrad Reciprocal ReciprocalGrad GreaterEqual LessEqual Conj
StringToNumber VarHandleOp ReadVariableOp AssignVariableOp VarIsInitializedOp
DestroyResourceOp
ResourceApplyGradientDescent ResourceApplyMomentum ResourceApplyAdam
InvertPermutation ConcatOffset Slice Pad Unpack DynamicStitch ListDiff Cumsum Cumprod Range FloorDiv FloorMod DivNoNan
FIFOQueueV2 QueueEnqueueV2 QueueDequeueV2 QueueSizeV2 QueueCloseV2
MutableHashTableV2 LookupTableFindV2 LookupTableInsertV2 LookupTableRemoveV2 LookupTableSizeV2
LookupTableExportV2 LookupTableImportV2
""".split()


def main():
    out = op_def_pb2.OpList()
    for name in sorted(OPS):
        op = op_def_registry.get(name)
        if op is None:
            sys.exit(f"TensorFlow {tf.__version__} has no op {name}")
        op = op_def_pb2.OpDef.FromString(op.SerializeToString())
        op.ClearField("summary")
        op.ClearField("description")
        for arg in list(op.input_arg) + list(op.output_arg):
            arg.ClearField("description")
        for attr in op.attr:
            attr.ClearField("description")
        out.op.append(op)
    sys.stdout.write(f"# TensorFlow {tf.__version__}: tools/tensorflow/dump_opdefs.py\n")
    sys.stdout.write(text_format.MessageToString(out))


if __name__ == "__main__":
    main()
