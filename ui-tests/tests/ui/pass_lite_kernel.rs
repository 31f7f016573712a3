//! `#[lite_kernel]` in every form: without state, with state, a builtin
//! override with a range of versions, open-ended versions, one version.

use op_core::Result;
use op_lite::kernel::{InitContext, InvokeContext, PrepareContext};
use op_lite::registration::LiteOpName;
use op_lite::{MutableOpResolver, OpResolver, lite_kernel, linked_kernels};

struct Sin;

#[lite_kernel(custom = "Sin")]
impl Sin {
    fn prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
        let shape = ctx.input_shape(0)?;
        ctx.set_output_shape(0, shape)
    }

    fn invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
        let (x, y) = (ctx.input::<f32>(0)?, ctx.output_mut::<f32>(0)?);
        y.iter_mut().zip(x).for_each(|(y, x)| *y = x.sin());
        Ok(())
    }
}

pub struct Scale {
    scale: f32,
}

#[lite_kernel(custom = "Scale", versions = 2..)]
impl Scale {
    fn init(ctx: &InitContext<'_>) -> Result<Self> {
        Ok(Scale {
            scale: ctx.option_or("scale", 1.0)?,
        })
    }

    fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
        let shape = ctx.input_shape(0)?;
        ctx.set_output_shape(0, shape)
    }

    fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
        let (x, y) = (ctx.input::<f32>(0)?, ctx.output_mut::<f32>(0)?);
        y.iter_mut().zip(x).for_each(|(y, x)| *y = x * self.scale);
        Ok(())
    }

    /// Other items of the impl stay as written.
    pub fn scale(&self) -> f32 {
        self.scale
    }
}

mod kernels {
    use super::*;

    pub(crate) struct Relu;

    #[lite_kernel(builtin = "RELU", versions = 1..=3)]
    impl Relu {
        fn prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
            let shape = ctx.input_shape(0)?;
            ctx.set_output_shape(0, shape)
        }

        fn invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
            let (x, y) = (ctx.input::<f32>(0)?, ctx.output_mut::<f32>(0)?);
            y.iter_mut().zip(x).for_each(|(y, x)| *y = x.max(0.0));
            Ok(())
        }
    }

    pub(crate) struct Cos;

    #[lite_kernel(custom = "Cos", versions = 1)]
    impl Cos {
        fn prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
            let shape = ctx.input_shape(0)?;
            ctx.set_output_shape(0, shape)
        }

        fn invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
            let (x, y) = (ctx.input::<f32>(0)?, ctx.output_mut::<f32>(0)?);
            y.iter_mut().zip(x).for_each(|(y, x)| *y = x.cos());
            Ok(())
        }
    }
}

fn main() {
    assert_eq!(Scale { scale: 2.0 }.scale(), 2.0);
    let names: Vec<LiteOpName> = linked_kernels().iter().map(|k| k.name()).collect();
    assert_eq!(names.len(), 4);
    let mut resolver = MutableOpResolver::new();
    resolver.add_linked();
    assert!(resolver.find_custom("Sin", 1).is_some());
    assert!(resolver.find_custom("Scale", 1).is_none());
    assert!(resolver.find_custom("Scale", 9).is_some());
    assert!(resolver.find_custom("Cos", 2).is_none());
    assert!(resolver.find_builtin(op_lite::model::BuiltinOperator::RELU, 3).is_some());
    assert!(resolver.find_builtin(op_lite::model::BuiltinOperator::RELU, 4).is_none());
}
