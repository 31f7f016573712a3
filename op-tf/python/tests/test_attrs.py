"""The guide's attr examples in TensorFlow (declared in op-tf/test-ops,
without kernels): each OpDef in TensorFlow's registry is the one the guide's
C++ `REGISTER_OP` gives, and TensorFlow's generated wrappers check the
constraints and fill the defaults when a graph is built."""

import os

import tensorflow as tf
from tensorflow.python.framework import op_def_registry

from common import TestCase

test_ops = tf.load_op_library(os.environ["OPKIT_TF_TEST_OPS"])

NUMBER_TYPES = (
    "type: DT_FLOAT type: DT_DOUBLE type: DT_INT32 type: DT_UINT8 type: DT_INT16 type: DT_INT8 "
    "type: DT_COMPLEX64 type: DT_INT64 type: DT_QINT8 type: DT_QUINT8 type: DT_QINT32 "
    "type: DT_BFLOAT16 type: DT_QINT16 type: DT_QUINT16 type: DT_UINT16 type: DT_COMPLEX128 "
    "type: DT_HALF type: DT_UINT32 type: DT_UINT64"
)

# What the guide's REGISTER_OPs give (as op-spec/tests/guide_examples.rs has them).
GUIDE_OPDEFS = {
    "EnumExample": 'attr { name: "e" type: "string" allowed_values { list { s: "apple" s: "orange" } } }',
    "RestrictedTypeExample": 'attr { name: "t" type: "type" allowed_values { list { type: DT_INT32 type: DT_FLOAT type: DT_BOOL } } }',
    "NumberType": f'attr {{ name: "t" type: "type" allowed_values {{ list {{ {NUMBER_TYPES} }} }} }}',
    "NumberOrBooleanType": f'attr {{ name: "t" type: "type" allowed_values {{ list {{ {NUMBER_TYPES} type: DT_BOOL }} }} }}',
    "MinIntExample": 'attr { name: "a" type: "int" has_minimum: true minimum: 2 }',
    "TypeListExample": 'attr { name: "a" type: "list(type)" has_minimum: true minimum: 3 allowed_values { list { type: DT_INT32 type: DT_FLOAT } } }',
    "AttrDefaultExample": 'attr { name: "i" type: "int" default_value { i: 0 } }',
    "AttrConstraintAndDefaultExample": 'attr { name: "i" type: "int" default_value { i: 1 } has_minimum: true minimum: 1 }',
    "AttrDefaultExampleForAllTypes": " ".join([
        'attr { name: "s" type: "string" default_value { s: "foo" } }',
        'attr { name: "i" type: "int" default_value { i: 0 } }',
        'attr { name: "f" type: "float" default_value { f: 1 } }',
        'attr { name: "b" type: "bool" default_value { b: true } }',
        'attr { name: "ty" type: "type" default_value { type: DT_INT32 } }',
        'attr { name: "sh" type: "shape" default_value { shape { dim { size: 1 } dim { size: 2 } } } }',
        'attr { name: "te" type: "tensor" default_value { tensor { dtype: DT_INT32 int_val: 5 } } }',
        'attr { name: "l_empty" type: "list(int)" default_value { list { } } }',
        'attr { name: "l_int" type: "list(int)" default_value { list { i: 2 i: 3 i: 5 i: 7 } } }',
    ]),
    "BuiltInTypesExample": 'input_arg { name: "integers" type: DT_INT32 } input_arg { name: "complex_numbers" type: DT_COMPLEX64 }',
}


class AttrExamplesTest(TestCase):
    def test_every_opdef_is_the_guides(self):
        for name, body in GUIDE_OPDEFS.items():
            with self.subTest(op=name):
                self.assertProtoEquals(f'name: "{name}" {body}', op_def_registry.get(name))

    def test_constraints_are_checked_when_a_graph_is_built(self):
        with tf.Graph().as_default():
            test_ops.enum_example(e="apple")
            with self.assertRaisesRegex(ValueError, "passed string 'banana' not in: \"apple\", \"orange\""):
                test_ops.enum_example(e="banana")
            test_ops.restricted_type_example(t=tf.bool)
            with self.assertRaisesRegex(TypeError, "int64.*not in list of allowed values"):
                test_ops.restricted_type_example(t=tf.int64)
            test_ops.number_type(t=tf.complex128)
            with self.assertRaisesRegex(TypeError, "bool"):
                test_ops.number_type(t=tf.bool)
            test_ops.number_or_boolean_type(t=tf.bool)
            test_ops.min_int_example(a=2)
            with self.assertRaisesRegex(ValueError, "passed 1 less than minimum 2"):
                test_ops.min_int_example(a=1)
            test_ops.type_list_example(a=[tf.int32, tf.float32, tf.int32])
            with self.assertRaisesRegex(ValueError, "minimum 3"):
                test_ops.type_list_example(a=[tf.int32, tf.float32])

    def test_defaults_are_filled_when_a_graph_is_built(self):
        with tf.Graph().as_default():
            self.assertEqual(test_ops.attr_default_example().get_attr("i"), 0)
            self.assertEqual(test_ops.attr_default_example(i=7).get_attr("i"), 7)
            self.assertEqual(test_ops.attr_constraint_and_default_example().get_attr("i"), 1)
            with self.assertRaisesRegex(ValueError, "passed 0 less than minimum 1"):
                test_ops.attr_constraint_and_default_example(i=0)
            op = test_ops.attr_default_example_for_all_types()
            self.assertEqual(op.get_attr("s"), b"foo")
            self.assertEqual(op.get_attr("f"), 1.0)
            self.assertEqual(op.get_attr("b"), True)
            self.assertEqual(op.get_attr("ty"), tf.int32)
            self.assertEqual(op.get_attr("sh").dim[1].size, 2)
            self.assertEqual(tf.make_ndarray(op.get_attr("te")), 5)
            self.assertEqual(op.get_attr("l_empty"), [])
            self.assertEqual(op.get_attr("l_int"), [2, 3, 5, 7])

    def test_built_in_input_types_convert_as_the_guide_says(self):
        with tf.Graph().as_default():
            op = test_ops.built_in_types_example(integers=[1, 2], complex_numbers=[1 + 2j])
            self.assertEqual([t.dtype for t in op.inputs], [tf.int32, tf.complex64])
            with self.assertRaises(TypeError):
                test_ops.built_in_types_example(integers=[1.5], complex_numbers=[1j])

    def test_eagerly_an_op_without_kernels_says_so(self):
        with self.assertRaisesRegex(tf.errors.NotFoundError, "MinIntExample"):
            test_ops.min_int_example(a=3)


if __name__ == "__main__":
    tf.test.main()
