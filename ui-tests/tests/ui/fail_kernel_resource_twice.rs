use op_core::resource::Resource;
use op_core::{KernelContext, Result, Tensor, kernel, register_op};

pub struct Counter;

impl Resource for Counter {
    fn debug_string(&self) -> String {
        "Counter".into()
    }
}

#[register_op(name = "Counter>Read", inputs("handle: resource", "by: int64"), outputs("value: int64"))]
pub struct CounterRead;

#[kernel(op = CounterRead)]
fn read(
    _ctx: &mut KernelContext<'_>,
    #[resource] handle: &Counter,
    #[resource(input = "handle")] again: &Counter,
) -> Result<Tensor> {
    let _ = (handle, again);
    Ok(Tensor::scalar(0i64))
}

fn main() {}
