use op_core::Result;
use op_lite::kernel::{InvokeContext, PrepareContext};
use op_lite::lite_kernel;

struct MyAdd;

#[lite_kernel(builtin = "Add")]
impl MyAdd {
    fn prepare(_ctx: &mut PrepareContext<'_>) -> Result<()> {
        Ok(())
    }
    fn invoke(_ctx: &mut InvokeContext<'_>) -> Result<()> {
        Ok(())
    }
}

fn main() {}
