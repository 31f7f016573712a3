"""One of two JAX processes on 127.0.0.1 (jax.distributed): each runs our op
under shard_map on its own shard and checks it against the op on that shard
alone. Run by test_jax.Sharding: `two_processes.py PROCESS_ID PORT`."""

import sys
pid = int(sys.argv[1]); port = sys.argv[2]
import jax, jax.numpy as jnp, numpy as np
jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=2, process_id=pid)
from jax.sharding import Mesh, PartitionSpec as P, NamedSharding
import opkit_ops.jax as ops
assert jax.process_count() == 2 and len(jax.devices()) == 2, (jax.process_count(), jax.devices())
mesh = Mesh(np.array(jax.devices()), ("x",))
local = np.arange(1, 5, dtype=np.float32) + 10 * pid   # this process's shard: one row
x = jax.make_array_from_process_local_data(NamedSharding(mesh, P("x")), local.reshape(1, 4))
f = jax.jit(jax.shard_map(lambda b: ops.zero_out_polymorphic(b.reshape(-1)).reshape(b.shape), mesh=mesh, in_specs=P("x"), out_specs=P("x")))
y = f(x)
mine = np.asarray(y.addressable_shards[0].data)
np.testing.assert_array_equal(mine, np.asarray(ops.zero_out_polymorphic(local)).reshape(1, 4))
print(f"process {pid} ok: {mine.tolist()}")
jax.distributed.shutdown()
