//! Lite kernels registered at link time: what
//! [`#[lite_kernel]`](crate::lite_kernel) submits, [`linked_kernels`]
//! lists, and [`MutableOpResolver::add`](crate::MutableOpResolver::add) and
//! [`add_linked`](crate::MutableOpResolver::add_linked) register.
//!
//! A kernel written with the macro is one [`LiteRegistration`] in a static,
//! collected with `inventory` as the framework's ops and kernels are: a
//! crate linked into the program contributes its kernels without a list to
//! keep. [`InitOp`] is the registration of a kernel with state (an `init`
//! that makes the node); a kernel without state is an
//! [`FnOp`](crate::FnOp).

use std::fmt;
use std::marker::PhantomData;

use op_core::Result;

use crate::kernel::{InitContext, LiteNode, LiteOp};
use crate::model::BuiltinOperator;
use crate::resolver::Versions;

/// What a registration is for: a builtin code (an override of TensorFlow
/// Lite's kernel) or a custom op's name.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum LiteOpName {
    /// A builtin operator.
    Builtin(BuiltinOperator),
    /// A custom op, by the name a model's operator code gives it.
    Custom(&'static str),
}

impl fmt::Display for LiteOpName {
    /// `builtin ADD`, `custom op 'Sin'`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LiteOpName::Builtin(code) => write!(f, "builtin {code}"),
            LiteOpName::Custom(name) => write!(f, "custom op '{name}'"),
        }
    }
}

/// A lite kernel registered at link time, by
/// [`#[lite_kernel]`](crate::lite_kernel): the op it serves, the versions,
/// the kernel, and where it was written.
#[derive(Copy, Clone)]
pub struct LiteRegistration {
    name: LiteOpName,
    versions: Versions,
    op: &'static dyn LiteOp,
    file: &'static str,
    line: u32,
    module_path: &'static str,
}

impl LiteRegistration {
    /// A registration of `op` for `name` at `versions`, written at
    /// `file:line` in `module_path` (what the macro generates).
    pub const fn new(
        name: LiteOpName,
        versions: Versions,
        op: &'static dyn LiteOp,
        file: &'static str,
        line: u32,
        module_path: &'static str,
    ) -> LiteRegistration {
        LiteRegistration {
            name,
            versions,
            op,
            file,
            line,
            module_path,
        }
    }

    /// The op this registration serves.
    pub fn name(&self) -> LiteOpName {
        self.name
    }

    /// The versions it serves.
    pub fn versions(&self) -> Versions {
        self.versions
    }

    /// The kernel.
    pub fn op(&self) -> &'static dyn LiteOp {
        self.op
    }

    /// Where the kernel was written: `file:line`.
    pub fn location(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }

    /// The module the kernel was written in.
    pub fn module_path(&self) -> &'static str {
        self.module_path
    }
}

impl fmt::Debug for LiteRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LiteRegistration")
            .field("name", &self.name)
            .field("versions", &self.versions)
            .field("location", &self.location())
            .finish_non_exhaustive()
    }
}

op_core::inventory::collect!(LiteRegistration);

/// Every lite kernel linked into the program, sorted by op (builtins by
/// code, then custom ops by name), then by lowest version, then by where
/// it was written: a stable order, whatever the order of linking.
///
/// ```
/// use op_lite::registration::{LiteOpName, linked_kernels};
///
/// // This crate links no kernel of its own through the macro.
/// assert!(linked_kernels().iter().all(|k| k.name() != LiteOpName::Custom("NoSuchOp")));
/// ```
pub fn linked_kernels() -> Vec<&'static LiteRegistration> {
    let mut kernels: Vec<&'static LiteRegistration> =
        op_core::inventory::iter::<LiteRegistration>().collect();
    kernels.sort_by(|a, b| {
        let key = |r: &LiteRegistration| match r.name {
            LiteOpName::Builtin(code) => (0, code.0, ""),
            LiteOpName::Custom(name) => (1, 0, name),
        };
        (key(a), a.versions.min, a.file, a.line).cmp(&(key(b), b.versions.min, b.file, b.line))
    });
    kernels
}

/// A registration that lives in a static, as a resolver entry.
pub(crate) struct Linked(pub(crate) &'static dyn LiteOp);

impl LiteOp for Linked {
    fn init(&self, ctx: &InitContext<'_>) -> Result<Box<dyn LiteNode>> {
        self.0.init(ctx)
    }
}

/// The registration of a kernel with state: `init` makes one node (`N`) per
/// operator of a model, from its options. Constant, so that it can live in
/// a static.
///
/// ```
/// use op_core::Result;
/// use op_lite::kernel::{InitContext, InvokeContext, LiteNode, PrepareContext};
/// use op_lite::registration::InitOp;
/// use op_lite::MutableOpResolver;
///
/// /// Multiplies by the `scale` option.
/// struct Scale(f32);
///
/// impl Scale {
///     fn init(ctx: &InitContext<'_>) -> Result<Scale> {
///         Ok(Scale(ctx.option("scale")?))
///     }
/// }
///
/// impl LiteNode for Scale {
///     fn prepare(&mut self, ctx: &mut PrepareContext<'_>) -> Result<()> {
///         let shape = ctx.input_shape(0)?;
///         ctx.set_output_shape(0, shape)
///     }
///     fn invoke(&mut self, ctx: &mut InvokeContext<'_>) -> Result<()> {
///         let x = ctx.input::<f32>(0)?;
///         let y = ctx.output_mut::<f32>(0)?;
///         y.iter_mut().zip(x).for_each(|(y, x)| *y = x * self.0);
///         Ok(())
///     }
/// }
///
/// static SCALE: InitOp<Scale> = InitOp::new(Scale::init);
/// let mut resolver = MutableOpResolver::new();
/// resolver.add_custom("Scale", SCALE);
/// ```
pub struct InitOp<N> {
    init: fn(&InitContext<'_>) -> Result<N>,
    node: PhantomData<fn() -> N>,
}

impl<N> InitOp<N> {
    /// The registration whose nodes `init` makes.
    pub const fn new(init: fn(&InitContext<'_>) -> Result<N>) -> InitOp<N> {
        InitOp {
            init,
            node: PhantomData,
        }
    }
}

impl<N> Clone for InitOp<N> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<N> Copy for InitOp<N> {}

impl<N> fmt::Debug for InitOp<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "InitOp<{}>", std::any::type_name::<N>())
    }
}

impl<N: LiteNode + 'static> LiteOp for InitOp<N> {
    fn init(&self, ctx: &InitContext<'_>) -> Result<Box<dyn LiteNode>> {
        Ok(Box::new((self.init)(ctx)?))
    }
}
