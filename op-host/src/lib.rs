//! What every bridge to a foreign runtime shares: TensorFlow
//! (`op-tf`), ONNX Runtime (`op-onnx`), and the hosts after them. A host
//! crate holds only what is its own (its C ABI, its registration, its
//! tensor layout); everything here is the same for each:
//!
//! | concept | module |
//! | --- | --- |
//! | running one of our kernels over memory a host owns: inputs lent, outputs in buffers the host allocates | [`kernel`] |
//! | the dtypes of a node's inputs from its attrs, as a host that builds a kernel from a node knows them | [`kernel::input_types`] |
//! | our shape function called from outside, with shapes, dtypes and attrs | [`shape`] |
//! | our gradient function run for a host, on our runtime | [`gradient`] |
//! | a call's kernel or gradient, made once per key and kept | [`prepared`] |
//! | our errors (and contained panics) as the text of a host's status | [`status`] |
//! | which crates' ops a library exports | [`Crates`] |
//! | the names Python sees (`zero_out`, `in_`) and docstrings | [`names`] |
//! | what a library holds (ops, args, attrs, kernels, shape rules), as JSON for generated Python | [`manifest`] |
//! | a host's C functions found in the process, not linked | [`mod@c_api`] |
//!
//! A crate of its own because each host crate speaks a different C ABI
//! and is linked only into a library built for that host, while all of
//! them need these; it has no foreign ABI of its own, and depends on op-core (and libc, to
//! look a host's functions up).
//!
//! ```
//! op_kernels::link();
//! use op_core::{DType, Runtime, Tensor};
//! use op_host::kernel::{HostBuffer, HostKernel, OutputSink};
//!
//! // A host's output allocator: here, one Vec per output.
//! struct Vecs(Vec<Vec<u8>>);
//! impl OutputSink for Vecs {
//!     fn allocate(&mut self, _index: usize, dtype: DType, dims: &[usize]) -> op_core::Result<HostBuffer> {
//!         let len = dims.iter().product::<usize>() * dtype.size_of().unwrap_or(0);
//!         self.0.push(vec![0; len]);
//!         let buffer = self.0.last_mut().unwrap();
//!         Ok(HostBuffer { data: buffer.as_mut_ptr(), len })
//!     }
//! }
//!
//! let kernel = HostKernel::new(Runtime::global(), "ZeroOut", &[DType::I32.into()], &[], "zero_out")?;
//! let x = [5i32, 6, 7];
//! // SAFETY: `x` outlives the lent tensor, which is gone after the call.
//! let mut inputs = [unsafe { op_host::kernel::lend_input(DType::I32, &[3], bytemuck::cast_slice(&x)) }?];
//! let mut outputs = Vecs(Vec::new());
//! // SAFETY: each buffer the sink gives is its own, live through the call.
//! unsafe { kernel.run(&mut inputs, &mut outputs) }?;
//! // (A Vec<u8> need not be aligned for i32s: the bytes are read as such.)
//! let zeroed: Vec<i32> = outputs.0[0].chunks(4).map(|b| i32::from_ne_bytes(b.try_into().unwrap())).collect();
//! assert_eq!(zeroed, [5, 0, 0]);
//! # Ok::<(), op_core::Error>(())
//! ```

pub mod c_api;
#[cfg(feature = "conformance")]
pub mod conformance;
pub mod gradient;
pub mod kernel;
pub mod manifest;
pub mod names;
pub mod plan;
pub mod prepared;
pub mod request;
pub mod shape;
pub mod status;

use op_core::registry::OpEntry;

/// Whose ops a library exports: every linked crate's (`export!()`), or
/// those of the crates named (`export!(crates = [my_ops])`), so that a
/// library whose crate links another op crate (for its kernels' helpers,
/// or as a dependency) does not register that crate's ops a second time
/// beside the other crate's own library.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crates {
    /// Every crate's ops.
    All,
    /// The ops of these crates (names as in Rust paths: `my_ops`).
    Only(&'static [&'static str]),
}

impl Crates {
    /// The crate `op` is of, when this selection leaves it out.
    ///
    /// ```
    /// op_kernels::link();
    /// let zero_out = op_core::Registry::global().op("ZeroOut")?;
    /// assert_eq!(op_host::Crates::All.leaves_out(zero_out), None);
    /// assert_eq!(op_host::Crates::Only(&["my_ops"]).leaves_out(zero_out), Some("op_kernels"));
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn leaves_out(self, op: &OpEntry) -> Option<&'static str> {
        let Crates::Only(names) = self else {
            return None;
        };
        let module = op.registration().module_path;
        let krate = module.split("::").next().unwrap_or(module);
        (!names.contains(&krate)).then_some(krate)
    }
}
