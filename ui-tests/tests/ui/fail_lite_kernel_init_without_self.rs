use op_core::Result;
use op_lite::kernel::{InitContext, InvokeContext, PrepareContext};
use op_lite::lite_kernel;

struct Scale(f32);

#[lite_kernel(custom = "Scale")]
impl Scale {
    fn init(ctx: &InitContext<'_>) -> Result<Scale> {
        Ok(Scale(ctx.option("scale")?))
    }
    fn prepare(&mut self, _ctx: &mut PrepareContext<'_>) -> Result<()> {
        Ok(())
    }
    fn invoke(_ctx: &mut InvokeContext<'_>) -> Result<()> {
        Ok(())
    }
}

fn main() {}
