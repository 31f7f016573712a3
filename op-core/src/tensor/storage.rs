//! Where a tensor's elements live: [`Storage`] is host memory or device
//! memory, in the manner of candle's `Storage::{Cpu, Cuda}`.
//!
//! Host memory is one reference-counted [`HostData`] (one allocation holds
//! the count and the bookkeeping, and for small plain tensors the elements
//! too). Its variants are the ways a tensor comes by its elements:
//!
//! | variant | from | elements |
//! | --- | --- | --- |
//! | [`HostData::Inline`] | small plain tensors (scalars, short vectors) | in the same allocation as the count |
//! | [`HostData::Block`] | an allocator ([`HostAllocator`](crate::allocator::HostAllocator)), for outputs and zeros | a cached, 64-byte aligned block |
//! | [`HostData::Vec`] | a `Vec` handed over (`Tensor::from_vec`, `from_array`) | the `Vec`'s own buffer, not copied |
//! | [`HostData::Shared`] | an ndarray `ArcArray` still shared with its owner (`Tensor::from_shared`) | the array's buffer, kept alive |
//!
//! [`DeviceBuffer`] stands in for device memory until the GPU kernels come:
//! code that needs host memory already handles it with an error rather than
//! a panic, and no public API can make one.

use std::sync::Arc;

use op_spec::Device;

use crate::allocator::Block;
use crate::element::private::{SharedArray, VecData};

/// A tensor's memory.
#[derive(Clone)]
pub(crate) enum Storage {
    /// Host memory.
    Host(Arc<HostData>),
    /// Memory on a device (not the host). Made only by tests until the GPU
    /// kernels' allocator makes it.
    #[cfg_attr(not(test), expect(dead_code))]
    Device(DeviceBuffer),
}

/// Host memory (see the [module docs](self)). Public only so that the sealed
/// `Element` trait can name it; the module is private to the crate.
pub enum HostData {
    /// Plain elements inside the reference count's own allocation.
    Inline(Inline),
    /// Plain elements in an allocator's block.
    Block(Block),
    /// A `Vec` of any element type.
    Vec(VecData),
    /// An ndarray array of any element type, shared with code outside.
    Shared(Box<SharedArray>),
}

impl HostData {
    /// Whether the elements are referenced only through this `HostData`
    /// (a shared array may have other owners).
    #[inline]
    pub(crate) fn is_exclusive(&self) -> bool {
        match self {
            HostData::Shared(array) => array.is_unique(),
            _ => true,
        }
    }
}

/// The most bytes a tensor keeps inline: four `double`s, sixteen `float`s.
pub(crate) const INLINE_BYTES: usize = 64;

/// Up to [`INLINE_BYTES`] bytes of plain elements, aligned for any element
/// type.
#[repr(C, align(16))]
pub struct Inline {
    bytes: [u8; INLINE_BYTES],
    len: u8,
}

impl Inline {
    /// `len` zero bytes, if they fit.
    #[inline]
    pub(crate) fn zeroed(len: usize) -> Option<Inline> {
        if len > INLINE_BYTES {
            return None;
        }
        Some(Inline {
            bytes: [0; INLINE_BYTES],
            len: len as u8,
        })
    }

    /// A copy of `bytes`, if they fit.
    pub(crate) fn copy_of(bytes: &[u8]) -> Option<Inline> {
        let mut inline = Inline::zeroed(bytes.len())?;
        inline.bytes_mut().copy_from_slice(bytes);
        Some(inline)
    }

    #[inline]
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    #[inline]
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes[..usize::from(self.len)]
    }
}

/// Memory on a device other than the host.
///
/// A stand-in until the GPU kernels (as candle's dummy CUDA backend is): it
/// records the device and nothing else, and only this crate's tests make
/// one, to check that host accessors refuse it with an error.
#[derive(Clone, Debug)]
pub(crate) struct DeviceBuffer {
    device: Device,
}

impl DeviceBuffer {
    /// A stand-in buffer on `device`, for tests of the host accessors.
    #[cfg(test)]
    pub(crate) fn stand_in(device: Device) -> DeviceBuffer {
        DeviceBuffer { device }
    }

    /// The device holding the memory.
    pub(crate) fn device(&self) -> Device {
        self.device
    }
}
