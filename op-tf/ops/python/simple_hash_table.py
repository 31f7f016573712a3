"""The guide's `SimpleHashTable`: a hash table in TensorFlow whose entries
live in op-kernels' Rust table, over the `Examples>SimpleHashTable*` ops.

    import tensorflow as tf
    from opkit_ops.simple_hash_table import SimpleHashTable

    table = SimpleHashTable(tf.int32, tf.float32, default_value=-999.0)
    table.find(1)           # -999.0
    table.insert(1, 100.0)
    table.find(1)           # 100.0

A `tf.saved_model.experimental.TrackableResource`: a `tf.Module` that holds
one saves its entries in a SavedModel or checkpoint (through `export`) and
restores them on load (through `do_import`). A process that loads such a
SavedModel imports `opkit_ops.tensorflow` first, so that TensorFlow knows
the ops. The table is freed when TensorFlow drops the last handle to it.

Copied into the package by `cargo xtask package` from op-tf/ops/python/.
"""

import tensorflow as tf

from . import tensorflow as _ops


class SimpleHashTable(tf.saved_model.experimental.TrackableResource):
    """A mutable hash table from `key_dtype` to `value_dtype` (one of the
    15 pairs the kernels have: int32 or int64 keys to double, float,
    int32, int64 (int64 keys only) or string values; string keys to bool,
    double, float, int32, int64 or string values)."""

    def __init__(self, key_dtype, value_dtype, default_value, name="SimpleHashTable"):
        super().__init__()
        self._key_dtype = tf.as_dtype(key_dtype)
        self._value_dtype = tf.as_dtype(value_dtype)
        self._default_value = tf.convert_to_tensor(default_value, dtype=self._value_dtype)
        self._name = name
        # Made now, as the guide's class does (TrackableResource makes it
        # on first use otherwise).
        self._resource_handle = self._create_resource()

    @property
    def key_dtype(self):
        """The dtype of the keys."""
        return self._key_dtype

    @property
    def value_dtype(self):
        """The dtype of the values."""
        return self._value_dtype

    @property
    def default_value(self):
        """The value `find` gives for a missing key by default."""
        return self._default_value

    def _create_resource(self):
        """The table's handle, from `Examples>SimpleHashTableCreate`
        (TrackableResource calls it, also when a SavedModel is loaded)."""
        assert self._default_value.get_shape().ndims == 0
        return _ops.examples_simple_hash_table_create(
            key_dtype=self._key_dtype, value_dtype=self._value_dtype, name=self._name
        )

    def _serialize_to_tensors(self):
        """The entries, for a checkpoint or SavedModel."""
        keys, values = self.export()
        return {"table-keys": keys, "table-values": values}

    def _restore_from_tensors(self, restored_tensors):
        """Puts saved entries back."""
        return _ops.examples_simple_hash_table_import(
            self.resource_handle,
            restored_tensors["table-keys"],
            restored_tensors["table-values"],
        )

    def find(self, key, dynamic_default_value=None, name=None):
        """The value of `key`, or `dynamic_default_value` (the table's
        `default_value` when None) if the table has none."""
        with tf.name_scope(name or f"{self._name}_find"):
            key = tf.convert_to_tensor(key, dtype=self._key_dtype, name="key")
            if dynamic_default_value is None:
                default = self._default_value
            else:
                default = tf.convert_to_tensor(
                    dynamic_default_value, dtype=self._value_dtype, name="default_value"
                )
            return _ops.examples_simple_hash_table_find(self.resource_handle, key, default)

    def insert(self, key, value, name=None):
        """Sets the value of `key`."""
        with tf.name_scope(name or f"{self._name}_insert"):
            key = tf.convert_to_tensor(key, self._key_dtype, name="key")
            value = tf.convert_to_tensor(value, self._value_dtype, name="value")
            return _ops.examples_simple_hash_table_insert(self.resource_handle, key, value)

    def remove(self, key, name=None):
        """Removes `key`; a `NotFoundError` if the table has none."""
        with tf.name_scope(name or f"{self._name}_remove"):
            key = tf.convert_to_tensor(key, self._key_dtype, name="key")
            return _ops.examples_simple_hash_table_remove(
                self.resource_handle, key, value_dtype=self._value_dtype
            )

    def export(self, name=None):
        """Every key and its value, as two vectors."""
        with tf.name_scope(name or f"{self._name}_export"):
            return _ops.examples_simple_hash_table_export(
                self.resource_handle, key_dtype=self._key_dtype, value_dtype=self._value_dtype
            )

    def do_import(self, keys, values, name=None):
        """Replaces the entries with `keys` and their `values`."""
        with tf.name_scope(name or f"{self._name}_import"):
            keys = tf.convert_to_tensor(keys, self._key_dtype, name="keys")
            values = tf.convert_to_tensor(values, self._value_dtype, name="values")
            return _ops.examples_simple_hash_table_import(self.resource_handle, keys, values)
