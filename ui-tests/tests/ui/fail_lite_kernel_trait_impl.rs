use op_core::Result;
use op_lite::kernel::PrepareContext;
use op_lite::lite_kernel;

struct Sin;

trait Phases {
    fn prepare(ctx: &mut PrepareContext<'_>) -> Result<()>;
}

#[lite_kernel(custom = "Sin")]
impl Phases for Sin {
    fn prepare(_ctx: &mut PrepareContext<'_>) -> Result<()> {
        Ok(())
    }
}

fn main() {}
