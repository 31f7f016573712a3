use op_core::Result;
use op_lite::kernel::PrepareContext;
use op_lite::lite_kernel;

struct Sin;

#[lite_kernel(custom = "Sin")]
impl Sin {
    fn prepare(_ctx: &mut PrepareContext<'_>) -> Result<()> {
        Ok(())
    }
}

fn main() {}
