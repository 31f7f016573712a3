//! What one call of a host runs, made once and kept: our kernel for an op,
//! its input dtypes and attrs ([`HostKernel`]), or its gradient
//! ([`GradientRunner`]). A host whose calls carry no state of ours (JAX's
//! custom calls, PyTorch's boxed kernels) keys each by what the call says
//! (its request text, its op and attr values) in a [`PreparedCache`].
//!
//! ```
//! op_kernels::link();
//! use op_core::{DType, Runtime};
//! use op_host::kernel::HostKernel;
//! use op_host::prepared::{Prepared, PreparedCache};
//!
//! static CACHE: PreparedCache = PreparedCache::new();
//! let make = || Ok(Prepared::Kernel(HostKernel::new(Runtime::global(), "ZeroOut", &[DType::I32.into()], &[], "zero_out")?));
//! let first = CACHE.get_or_make("ZeroOut|int32", make)?;
//! let again = CACHE.get_or_make("ZeroOut|int32", || unreachable!("made once"))?;
//! assert!(std::sync::Arc::ptr_eq(&first, &again));
//! # Ok::<(), op_core::Error>(())
//! ```

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use op_core::registry::OpEntry;
use op_core::{AttrValue, InputTypes, Result, Runtime, Tensor};

use crate::gradient::GradientRunner;
use crate::kernel::{HostKernel, OutputSink, copy_outputs};

/// A call's inputs, on the stack up to 8.
pub type Inputs = smallvec::SmallVec<[Tensor; 8]>;

/// What a call runs.
pub enum Prepared {
    /// The op's kernel.
    Kernel(HostKernel),
    /// The op's gradient: its inputs are the forward inputs, outputs and
    /// output gradients.
    Gradient(GradientRunner),
}

impl Prepared {
    /// The call of `op` (its `#[gradient]` when `gradient`) for inputs of
    /// these dtypes and these attrs, prepared on the global runtime;
    /// `node` names it in errors.
    pub fn new(
        op: &OpEntry,
        gradient: bool,
        inputs: &[InputTypes],
        attrs: &[(&str, AttrValue)],
        node: &str,
    ) -> Result<Prepared> {
        Ok(if gradient {
            Prepared::Gradient(GradientRunner::new(op, attrs)?)
        } else {
            Prepared::Kernel(HostKernel::new(
                Runtime::global(),
                &op.def().name,
                inputs,
                attrs,
                node,
            )?)
        })
    }

    /// Runs on `inputs` (lent with [`crate::kernel::lend_input`]), each
    /// output written into a buffer `sink` gives; the inputs are dropped
    /// (or replaced) by the time it returns, as [`HostKernel::run`] says.
    ///
    /// # Safety
    ///
    /// As [`HostKernel::run`]: each buffer `sink` gives holds its output
    /// and is the host's alone until the call returns.
    pub unsafe fn run(&self, mut inputs: Inputs, sink: &mut impl OutputSink) -> Result<()> {
        match self {
            // SAFETY: the caller's contract.
            Prepared::Kernel(kernel) => unsafe { kernel.run(&mut inputs, sink) },
            Prepared::Gradient(gradient) => {
                let grads = gradient.run(Runtime::global(), &inputs)?;
                drop(inputs);
                // SAFETY: the caller's contract.
                unsafe { copy_outputs(grads.iter().map(Ok), sink) }
            }
        }
    }
}

/// [`Prepared`] calls by key, made once each and kept for the process.
pub struct PreparedCache(OnceLock<RwLock<HashMap<String, Arc<Prepared>>>>);

impl PreparedCache {
    /// An empty cache (for a `static`).
    pub const fn new() -> PreparedCache {
        PreparedCache(OnceLock::new())
    }

    /// The call for `key`: the one made before, or `make`'s, kept. An
    /// error of `make` is returned and nothing is kept.
    pub fn get_or_make(
        &self,
        key: &str,
        make: impl FnOnce() -> Result<Prepared>,
    ) -> Result<Arc<Prepared>> {
        let map = self.0.get_or_init(Default::default);
        if let Some(found) = map.read().ok().and_then(|m| m.get(key).cloned()) {
            return Ok(found);
        }
        let made = Arc::new(make()?);
        if let Ok(mut map) = map.write() {
            map.insert(key.to_owned(), made.clone());
        }
        Ok(made)
    }
}

impl Default for PreparedCache {
    fn default() -> PreparedCache {
        PreparedCache::new()
    }
}
