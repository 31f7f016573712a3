use std::sync::Arc;

use op_core::resource::Resource;
use op_core::{KernelContext, Result, Tensor, kernel, register_op};

pub struct Counter;

impl Resource for Counter {
    fn debug_string(&self) -> String {
        "Counter".into()
    }
}

#[register_op(
    name = "Counter>Read",
    inputs("handle: resource", "by: int64"),
    outputs("value: int64")
)]
pub struct CounterRead;

/// Makes a counter.
#[register_op(name = "Counter>Create", outputs("counter: resource"))]
pub struct CounterCreate;

#[kernel(op = CounterCreate)]
fn create(_ctx: &mut KernelContext<'_>) -> Result<Arc<Counter>> {
    Ok(Arc::new(Counter))
}

#[kernel(op = CounterRead)]
fn read(
    ctx: &mut KernelContext<'_>,
    attrs: &CounterRead,
    #[resource] handle: &Counter,
) -> Result<Tensor> {
    let _ = (attrs, handle);
    let by: i64 = ctx.input_scalar(1)?;
    Ok(Tensor::scalar(by))
}

fn main() {
    let handle = op_core::OpCall::new("Counter>Create").run().unwrap();
    let value = CounterRead::call(&handle[0], Tensor::scalar(3i64))
        .run()
        .unwrap();
    assert_eq!(value.scalar_value::<i64>().unwrap(), 3);
}
