//! The builtin kernels by code ([`BuiltinKernel`], [`builtin_kernel`]) and
//! TensorFlow Lite's `BuiltinOpResolver`: every builtin registered.

use std::fmt;
use std::ops::{Deref, DerefMut};

use op_core::Result;

use super::kernels::*;
use crate::kernel::{InitContext, LiteNode, LiteOp};
use crate::model::BuiltinOperator as Op;
use crate::resolver::{MutableOpResolver, OpResolver, Versions};

/// The `init` of a builtin kernel, given the code it runs as.
type InitFn = fn(&InitContext<'_>, Op) -> Result<Box<dyn LiteNode>>;

/// One builtin kernel of this crate: the builtin code it implements, the
/// versions of the op it serves, and its registration (a [`LiteOp`]).
///
/// What a selective resolver is made of: [`builtin_kernel`] finds the
/// kernel for a code, [`BuiltinKernel::all`] lists them, and a kernel
/// registers as is.
///
/// ```
/// use op_lite::builtins::{BuiltinKernel, builtin_kernel};
/// use op_lite::model::BuiltinOperator;
/// use op_lite::{MutableOpResolver, OpResolver};
///
/// // A resolver with only the ops a model uses.
/// let mut resolver = MutableOpResolver::new();
/// for code in [BuiltinOperator::CONV_2D, BuiltinOperator::SOFTMAX] {
///     let kernel = builtin_kernel(code).expect("a builtin of this crate");
///     resolver.add_builtin_versions(code, kernel, kernel.versions());
/// }
/// assert!(resolver.find_builtin(BuiltinOperator::CONV_2D, 3).is_some());
/// assert!(resolver.find_builtin(BuiltinOperator::ADD, 1).is_none());
/// assert_eq!(BuiltinKernel::all().len(), 46);
/// ```
#[derive(Copy, Clone)]
pub struct BuiltinKernel {
    code: Op,
    versions: Versions,
    init: InitFn,
}

impl BuiltinKernel {
    /// The builtin code the kernel implements.
    pub fn code(&self) -> Op {
        self.code
    }

    /// The versions of the op it serves: those TensorFlow Lite's
    /// `BuiltinOpResolver` registers (`tensorflow/lite/core/kernels/register.cc`).
    pub fn versions(&self) -> Versions {
        self.versions
    }

    /// Every builtin kernel of this crate, in builtin-code order.
    pub fn all() -> &'static [BuiltinKernel] {
        &KERNELS
    }

    /// The kernel for `code`, if this crate has one.
    pub fn find(code: Op) -> Option<BuiltinKernel> {
        KERNELS
            .binary_search_by_key(&code, |k| k.code)
            .ok()
            .map(|i| KERNELS[i])
    }
}

/// The builtin kernel for `code`, if this crate has one: what a resolver
/// holding only the ops of given models registers. Same as
/// [`BuiltinKernel::find`].
pub fn builtin_kernel(code: Op) -> Option<BuiltinKernel> {
    BuiltinKernel::find(code)
}

impl LiteOp for BuiltinKernel {
    fn init(&self, ctx: &InitContext<'_>) -> Result<Box<dyn LiteNode>> {
        (self.init)(ctx, self.code)
    }
}

impl fmt::Debug for BuiltinKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuiltinKernel")
            .field("code", &self.code)
            .field("versions", &self.versions)
            .finish_non_exhaustive()
    }
}

const fn kernel(code: Op, max_version: i32, init: InitFn) -> BuiltinKernel {
    BuiltinKernel {
        code,
        versions: Versions {
            min: 1,
            max: max_version,
        },
        init,
    }
}

/// Every builtin, sorted by code, with the highest version TensorFlow
/// Lite's `BuiltinOpResolver` registers for it.
static KERNELS: [BuiltinKernel; 46] = [
    kernel(Op::ADD, 5, init_binary),
    kernel(Op::AVERAGE_POOL_2D, 3, init_average_pool),
    kernel(Op::CONCATENATION, 4, init_concatenation),
    kernel(Op::CONV_2D, 8, init_conv2d),
    kernel(Op::DEPTHWISE_CONV_2D, 7, init_depthwise_conv2d),
    kernel(Op::DEQUANTIZE, 6, init_quantized),
    kernel(Op::FULLY_CONNECTED, 13, init_fully_connected),
    kernel(Op::LOGISTIC, 3, init_unary),
    kernel(Op::MAX_POOL_2D, 3, init_max_pool),
    kernel(Op::MUL, 7, init_binary),
    kernel(Op::RELU, 3, init_unary),
    kernel(Op::RELU6, 3, init_unary),
    kernel(Op::RESHAPE, 1, init_reshape),
    kernel(Op::SOFTMAX, 3, init_softmax),
    kernel(Op::TANH, 3, init_unary),
    kernel(Op::PAD, 5, init_pad),
    kernel(Op::GATHER, 7, init_gather),
    kernel(Op::TRANSPOSE, 7, init_transpose),
    kernel(Op::MEAN, 3, init_mean),
    kernel(Op::SUB, 5, init_binary),
    kernel(Op::DIV, 2, init_binary),
    kernel(Op::SQUEEZE, 2, init_squeeze),
    kernel(Op::STRIDED_SLICE, 8, init_strided_slice),
    kernel(Op::EXP, 2, init_unary),
    kernel(Op::CAST, 7, init_cast),
    kernel(Op::MAXIMUM, 4, init_binary),
    kernel(Op::MINIMUM, 4, init_binary),
    kernel(Op::NEG, 1, init_unary),
    kernel(Op::SLICE, 6, init_slice),
    kernel(Op::SIN, 1, init_unary),
    kernel(Op::EXPAND_DIMS, 1, init_expand_dims),
    kernel(Op::LOG, 2, init_unary),
    kernel(Op::SUM, 2, init_sum),
    kernel(Op::SQRT, 2, init_unary),
    kernel(Op::RSQRT, 3, init_unary),
    kernel(Op::PACK, 4, init_pack),
    kernel(Op::SQUARE, 1, init_unary),
    kernel(Op::LEAKY_RELU, 2, init_unary),
    kernel(Op::SQUARED_DIFFERENCE, 2, init_binary),
    kernel(Op::ABS, 5, init_unary),
    kernel(Op::COS, 1, init_unary),
    kernel(Op::QUANTIZE, 4, init_quantized),
    kernel(Op::HARD_SWISH, 1, init_unary),
    kernel(Op::BATCH_MATMUL, 4, init_batch_matmul),
    kernel(Op::CUMSUM, 1, init_cumsum),
    kernel(Op::GELU, 2, init_unary),
];

/// TensorFlow Lite's `BuiltinOpResolver`: a [`MutableOpResolver`] with
/// every builtin of this crate registered for the versions TensorFlow
/// Lite's serves. It derefs to the [`MutableOpResolver`], so custom ops
/// are added, and builtins overridden, as there.
///
/// ```
/// use op_lite::kernel::{FnOp, InvokeContext, PrepareContext};
/// use op_lite::model::BuiltinOperator;
/// use op_lite::{BuiltinOpResolver, OpResolver};
///
/// fn prepare(_: &mut PrepareContext<'_>) -> op_core::Result<()> { Ok(()) }
/// fn invoke(_: &mut InvokeContext<'_>) -> op_core::Result<()> { Ok(()) }
///
/// let mut resolver = BuiltinOpResolver::new();
/// assert!(resolver.find_builtin(BuiltinOperator::CONV_2D, 3).is_some());
/// assert!(resolver.find_builtin(BuiltinOperator::CONV_2D, 9).is_none());
/// resolver.add_custom("Sin", FnOp::new(prepare, invoke));
/// assert!(resolver.find_custom("Sin", 1).is_some());
/// ```
#[derive(Clone)]
pub struct BuiltinOpResolver {
    resolver: MutableOpResolver,
}

impl BuiltinOpResolver {
    /// A resolver with every builtin of this crate.
    pub fn new() -> BuiltinOpResolver {
        let mut resolver = MutableOpResolver::new();
        for kernel in BuiltinKernel::all() {
            resolver.add_builtin_versions(kernel.code, *kernel, kernel.versions);
        }
        BuiltinOpResolver { resolver }
    }

    /// The resolver as a plain [`MutableOpResolver`].
    pub fn into_inner(self) -> MutableOpResolver {
        self.resolver
    }
}

impl Default for BuiltinOpResolver {
    fn default() -> BuiltinOpResolver {
        BuiltinOpResolver::new()
    }
}

impl fmt::Debug for BuiltinOpResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("BuiltinOpResolver")
            .field(&self.resolver)
            .finish()
    }
}

impl Deref for BuiltinOpResolver {
    type Target = MutableOpResolver;

    fn deref(&self) -> &MutableOpResolver {
        &self.resolver
    }
}

impl DerefMut for BuiltinOpResolver {
    fn deref_mut(&mut self) -> &mut MutableOpResolver {
        &mut self.resolver
    }
}

impl OpResolver for BuiltinOpResolver {
    fn find_builtin(&self, op: Op, version: i32) -> Option<&dyn LiteOp> {
        self.resolver.find_builtin(op, version)
    }

    fn find_custom(&self, name: &str, version: i32) -> Option<&dyn LiteOp> {
        self.resolver.find_custom(name, version)
    }

    fn builtin_ops(&self) -> Vec<(Op, Versions)> {
        self.resolver.builtin_ops()
    }

    fn custom_ops(&self) -> Vec<(String, Versions)> {
        self.resolver.custom_ops()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_by_code_and_has_each_code_once() {
        assert!(KERNELS.windows(2).all(|w| w[0].code < w[1].code));
        for kernel in &KERNELS {
            assert_eq!(
                builtin_kernel(kernel.code).map(|k| k.code),
                Some(kernel.code)
            );
            assert!(kernel.code.name().is_some(), "{:?}", kernel.code);
        }
        assert!(builtin_kernel(Op::CUSTOM).is_none());
    }
}
