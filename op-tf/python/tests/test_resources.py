"""Resources in TensorFlow: seed 000's hash table (`Examples>SimpleHashTable*`
over TensorFlow's ref-counted handles, its state in our Rust table), its
`SimpleHashTable` class through a SavedModel, handles freed with their last
reference, wrong handles refused, and resources kept by name."""

import ctypes
import gc
import os
import shutil
import tempfile
import threading

import tensorflow as tf
from absl.testing import parameterized

from common import LIBRARY, REPORT, TestCase, ops, run_python
from opkit_ops.simple_hash_table import SimpleHashTable

# The test library (op-tf/test-ops), for its named counter.
test_ops = tf.load_op_library(os.environ["OPKIT_TF_TEST_OPS"])

_lib = ctypes.CDLL(LIBRARY)
_lib.op_tf_live_resources.restype = ctypes.c_size_t


def live_tables():
    """How many of the library's resources TensorFlow's handles keep alive."""
    return _lib.op_tf_live_resources()


# The kernels' 15 (key, value) pairs, each with a key, a value and a default.
PAIRS = [
    (tf.int32, tf.float64, 1, 100.0, -999.0),
    (tf.int32, tf.float32, 1, 100.0, -999.0),
    (tf.int32, tf.int32, 1, 100, -999),
    (tf.int32, tf.string, 1, "bar", "none"),
    (tf.int64, tf.float64, 1, 100.0, -999.0),
    (tf.int64, tf.float32, 1, 100.0, -999.0),
    (tf.int64, tf.int32, 1, 100, -999),
    (tf.int64, tf.int64, 1, 100, -999),
    (tf.int64, tf.string, 1, "bar", "none"),
    (tf.string, tf.bool, "foo", True, False),
    (tf.string, tf.float64, "foo", 100.0, -999.0),
    (tf.string, tf.float32, "foo", 100.0, -999.0),
    (tf.string, tf.int32, "foo", 100, -999),
    (tf.string, tf.int64, "foo", 100, -999),
    (tf.string, tf.string, "foo", "bar", "none"),
]


def value_of(tensor):
    value = tensor.numpy()
    return value.decode() if isinstance(value, bytes) else value


class SimpleHashTableTest(TestCase, parameterized.TestCase):
    # The guide's own tests (simple_hash_table_test.py).
    def test_find_insert_find_strings_eager(self):
        default, foo, bar = "Default", "Foo", "Bar"
        hash_table = SimpleHashTable(tf.string, tf.string, default)
        result1 = hash_table.find(foo, default)
        self.assertEqual(result1, default)
        hash_table.insert(foo, bar)
        result2 = hash_table.find(foo, default)
        self.assertEqual(result2, bar)

    def _use_table(self, key_dtype, value_dtype):
        hash_table = SimpleHashTable(key_dtype, value_dtype, 111)
        result1 = hash_table.find(1, -999)
        hash_table.insert(1, 100)
        result2 = hash_table.find(1, -999)
        hash_table.remove(1)
        result3 = hash_table.find(1, -999)
        results = tf.stack((result1, result2, result3))
        return results  # expect [-999, 100, -999]

    @parameterized.parameters((tf.int32, tf.float32), (tf.int64, tf.int32))
    def test_find_insert_find_tf_function(self, key_dtype, value_dtype):
        before = live_tables()
        results = tf.function(lambda: self._use_table(key_dtype, value_dtype))
        self.assertAllClose(self.evaluate(results()), [-999.0, 100.0, -999.0])
        # Ref-counting frees the function's table when the function returns.
        self.assertEqual(live_tables(), before)

    def test_every_dtype_pair_creates_finds_inserts_removes_exports_imports(self):
        for key_dtype, value_dtype, key, value, default in PAIRS:
            with self.subTest(key_dtype=key_dtype.name, value_dtype=value_dtype.name):
                table = SimpleHashTable(key_dtype, value_dtype, default)
                self.assertEqual(value_of(table.find(key)), default)
                table.insert(key, value)
                self.assertEqual(value_of(table.find(key)), value)
                keys, values = table.export()
                self.assertEqual([value_of(k) for k in tf.unstack(keys)], [key])
                self.assertEqual([value_of(v) for v in tf.unstack(values)], [value])
                table.remove(key)
                self.assertEqual(value_of(table.find(key)), default)
                table.do_import(keys, values)
                self.assertEqual(value_of(table.find(key)), value)

    def test_removing_a_missing_key_is_not_found(self):
        table = SimpleHashTable(tf.int64, tf.float32, 0.0)
        with self.assertRaisesRegex(tf.errors.NotFoundError, "SimpleHashTableRemove"):
            table.remove(5)

    def test_in_a_graph_the_shapes_are_the_guides(self):
        table = SimpleHashTable(tf.int32, tf.float32, -1.0)

        @tf.function(input_signature=[tf.TensorSpec(None, tf.int32)])
        def find(key):
            value = table.find(key)
            keys, values = table.export()
            self.assertEqual(value.shape.as_list(), [])
            self.assertEqual(keys.shape.as_list(), [None])
            self.assertEqual(values.shape.as_list(), [None])
            return value

        table.insert(3, 30.0)
        self.assertEqual(find(tf.constant(3)).numpy(), 30.0)

        @tf.function
        def find_vector():
            return table.find([1, 2])

        with self.assertRaisesRegex(ValueError, "rank"):
            find_vector.get_concrete_function()


class ConcurrencyTest(TestCase):
    def test_inserts_and_finds_from_many_threads_all_land(self):
        # TensorFlow runs eager ops of several Python threads at once on
        # one table; each of our calls takes the table's lock once.
        table = SimpleHashTable(tf.int64, tf.int64, -1)
        errors = []

        def worker(base):
            try:
                for k in range(base, base + 200):
                    table.insert(k, 2 * k)
                    if int(table.find(k)) != 2 * k:
                        errors.append(k)
            except Exception as e:  # reported below, not lost in a thread
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(i * 200,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        keys, values = table.export()
        self.assertEqual(sorted(keys.numpy().tolist()), list(range(800)))
        self.assertAllEqual(values, keys * 2)


class LifetimeTest(TestCase):
    def test_the_table_is_freed_with_its_last_handle(self):
        gc.collect()
        before = live_tables()
        table = SimpleHashTable(tf.int32, tf.float32, 0.0)
        table.insert(1, 1.0)
        copy = tf.identity(table.resource_handle)
        self.assertEqual(live_tables(), before + 1)
        del table
        gc.collect()
        # The copy of the handle keeps the table, entries and all.
        self.assertEqual(live_tables(), before + 1)
        self.assertEqual(ops.examples_simple_hash_table_find(copy, 1, 0.0).numpy(), 1.0)
        del copy
        gc.collect()
        self.assertEqual(live_tables(), before)


class WrongHandleTest(TestCase):
    def test_a_variables_handle_is_refused_naming_its_type(self):
        variable = tf.Variable(1.0)
        with self.assertRaisesRegex(
            tf.errors.InvalidArgumentError,
            r"SimpleHashTableFind.*input 0 \('resource_handle'\).*Var.*this library's kernels "
            r"take only handles its own ops made",
        ):
            ops.examples_simple_hash_table_find(variable.handle, 1, 0.0)

    def test_a_table_of_other_dtypes_is_refused_naming_both(self):
        table = SimpleHashTable(tf.int64, tf.float32, 0.0)
        with self.assertRaisesRegex(
            tf.errors.InvalidArgumentError,
            r"SimpleHashTable<i64, f32>, not a .*SimpleHashTable<i32, f32>",
        ):
            ops.examples_simple_hash_table_find(table.resource_handle, 1, 0.0)

    def test_our_handle_in_a_tensorflow_op_is_tensorflows_error(self):
        table = SimpleHashTable(tf.int32, tf.float32, 0.0)
        with self.assertRaisesRegex(
            tf.errors.FailedPreconditionError, r"of type 'op_kernels.*SimpleHashTable<i32, f32>'"
        ):
            tf.raw_ops.ReadVariableOp(resource=table.resource_handle, dtype=tf.float32)
        # The table is still whole.
        table.insert(1, 2.0)
        self.assertEqual(table.find(1).numpy(), 2.0)

    def test_a_named_handle_to_no_table_is_not_found(self):
        counter = test_ops.opkit_test_named_counter(shared_name="not_a_table")
        with self.assertRaisesRegex(
            tf.errors.NotFoundError, r"input 0 \('resource_handle'\).*'not_a_table'.*does not exist"
        ):
            ops.examples_simple_hash_table_find(counter, 1, 0.0)


BROKEN_SHIM = """
import ctypes, sys
import tensorflow as tf
module = tf.load_op_library(sys.argv[1])
lib = ctypes.CDLL(sys.argv[1])
lib.op_tf_load_report.restype = ctypes.c_char_p
print(lib.op_tf_load_report().decode())
print("zero_out" in dir(module))
"""


class ShimTest(TestCase):
    def test_the_report_names_the_shim(self):
        self.assertTrue(
            any(line.startswith("shim ") for line in REPORT), REPORT[:3]
        )

    def test_a_shim_that_does_not_load_fails_the_load_saying_why(self):
        with tempfile.TemporaryDirectory() as directory:
            library = os.path.join(directory, os.path.basename(LIBRARY))
            shutil.copy(LIBRARY, library)
            # Beside the library, where its load looks first.
            with open(os.path.join(directory, "libop_tf_shim.so"), "w") as f:
                f.write("not a shared library")
            out = run_python(BROKEN_SHIM, library)
            self.assertRanWell(out)
            report, has_zero_out = out.stdout.strip().splitlines()[-2:]
            self.assertRegex(report, r"^error: .*the shim .*libop_tf_shim.so did not load")
            self.assertEqual(has_zero_out, "False")


class Model(tf.Module):
    def __init__(self):
        super().__init__()
        self.table = SimpleHashTable(tf.string, tf.int64, -1)

    @tf.function(input_signature=[tf.TensorSpec([], tf.string)])
    def lookup(self, key):
        return self.table.find(key)


LOAD = """
import sys
import tensorflow as tf
import opkit_ops.tensorflow  # registers our ops before the model is read
model = tf.saved_model.load(sys.argv[1])
print([int(model.lookup(k)) for k in ("apple", "pear", "plum")])
"""


class SavedModelTest(TestCase):
    def test_a_saved_table_is_found_in_a_fresh_process(self):
        model = Model()
        model.table.insert("apple", 3)
        model.table.insert("pear", 5)
        with tempfile.TemporaryDirectory() as directory:
            tf.saved_model.save(model, directory)
            self.assertEqual(self.assertRanWell(run_python(LOAD, directory)), "[3, 5, -1]")

    def test_a_checkpoint_restores_the_entries(self):
        model = Model()
        model.table.insert("plum", 7)
        with tempfile.TemporaryDirectory() as directory:
            path = tf.train.Checkpoint(model=model).save(os.path.join(directory, "ckpt"))
            restored = Model()
            tf.train.Checkpoint(model=restored).restore(path).assert_consumed()
            self.assertEqual(int(restored.table.find("plum")), 7)


class NamedResourceTest(TestCase):
    """Resources kept by `container` and `shared_name` (the ResourceMgr kind),
    with the test library's counter."""

    def test_one_shared_name_is_one_resource(self):
        count = lambda **names: int(
            test_ops.opkit_test_counter_increment(test_ops.opkit_test_named_counter(**names))
        )
        self.assertEqual(count(shared_name="a"), 1)
        self.assertEqual(count(shared_name="a"), 2)
        self.assertEqual(count(shared_name="b"), 1)
        # Another container holds another "a".
        self.assertEqual(count(shared_name="a", container="other"), 1)
        self.assertEqual(count(shared_name="a"), 3)

    def test_a_named_handle_is_shown_by_name_and_kept_in_a_tf_function(self):
        handle = test_ops.opkit_test_named_counter(shared_name="in_function")
        self.assertIn('name="in_function"', repr(handle))

        @tf.function
        def step():
            counter = test_ops.opkit_test_named_counter(shared_name="in_function")
            return test_ops.opkit_test_counter_increment(counter)

        self.assertEqual([int(step()) for _ in range(3)], [1, 2, 3])
        self.assertEqual(int(test_ops.opkit_test_counter_increment(handle)), 4)

    def test_without_a_shared_name_the_counter_is_the_kernels_own(self):
        # As for TensorFlow's own resource ops (MutableHashTableV2): eager
        # execution keeps one kernel per op and attrs, and that kernel keeps
        # its resource; other attrs make another kernel, with its own.
        handle = test_ops.opkit_test_named_counter()
        self.assertIn('container="Anonymous"', repr(handle))
        first = int(test_ops.opkit_test_counter_increment(handle))
        again = test_ops.opkit_test_named_counter()
        self.assertEqual(int(test_ops.opkit_test_counter_increment(again)), first + 1)
        other = test_ops.opkit_test_named_counter(container="elsewhere")
        self.assertEqual(int(test_ops.opkit_test_counter_increment(other)), 1)

    def test_a_handle_of_another_library_is_refused(self):
        table = SimpleHashTable(tf.int32, tf.float32, 0.0)
        with self.assertRaisesRegex(
            tf.errors.InvalidArgumentError, r"CounterIncrement.*SimpleHashTable<i32, f32>"
        ):
            test_ops.opkit_test_counter_increment(table.resource_handle)


if __name__ == "__main__":
    tf.test.main()
