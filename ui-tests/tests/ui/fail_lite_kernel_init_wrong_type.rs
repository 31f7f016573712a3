use op_core::Result;
use op_lite::kernel::{InitContext, InvokeContext, PrepareContext};
use op_lite::lite_kernel;

struct Scale(f32);

#[lite_kernel(custom = "Scale")]
impl Scale {
    fn init(ctx: &InitContext<'_>) -> Result<f32> {
        ctx.option("scale")
    }
    fn prepare(&mut self, _ctx: &mut PrepareContext<'_>) -> Result<()> {
        Ok(())
    }
    fn invoke(&mut self, _ctx: &mut InvokeContext<'_>) -> Result<()> {
        Ok(())
    }
}

fn main() {}
