//! Where a tensor's elements live: [`Storage`] is host memory or device
//! memory, in the manner of candle's `Storage::{Cpu, Cuda}`.
//!
//! Plain tensors of at most 8 bytes (scalars, the commonest tensors: shapes,
//! indices, counters) keep their elements inside the tensor itself,
//! [`Storage::Small`], like a string's small-string optimization: making,
//! cloning and dropping one allocates nothing and touches no reference
//! count, and a clone is a copy (so it is never shared).
//!
//! Other host memory is one reference-counted [`HostData`] (one allocation
//! holds the count and the bookkeeping, and for small plain tensors the
//! elements too). Its variants are the ways a tensor comes by its elements:
//!
//! | variant | from | elements |
//! | --- | --- | --- |
//! | [`HostData::Inline`] | small plain tensors (scalars, short vectors) | in the same allocation as the count |
//! | [`HostData::Block`] | an allocator ([`HostAllocator`](crate::allocator::HostAllocator)), for outputs and zeros | a cached, 64-byte aligned block |
//! | [`HostData::Vec`] | a `Vec` handed over (`Tensor::from_vec`, `from_array`) | the `Vec`'s own buffer, not copied |
//! | [`HostData::Shared`] | an ndarray `ArcArray` still shared with its owner (`Tensor::from_shared`) | the array's buffer, kept alive |
//! | [`HostData::Lent`] | memory another runtime owns, lent for a call (`Tensor::lend`, `Tensor::lend_mut`: a lite interpreter's arena) | not owned: the lender keeps it alive |
//!
//! Device memory is a [`DeviceBuffer`]: a backend's
//! [`DeviceMemory`](crate::device::DeviceMemory) (see [`device`](crate::device)),
//! shared by reference count; host accessors refuse it with an error.

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::allocator::Block;
pub use crate::device::DeviceBuffer;
use crate::element::private::{SharedArray, VecData};

/// A tensor's memory.
#[derive(Clone)]
pub enum Storage {
    /// Up to [`SMALL_BYTES`] of plain elements inside the tensor: the first
    /// `len` bytes of `bits`, and the identity a gradient tape gave them, if
    /// any. (Fields, not a struct, so that the enum's tag shares their first
    /// word and the storage stays 16 bytes.)
    Small { len: u8, tag: SmallTag, bits: u64 },
    /// Host memory.
    Host(Arc<HostData>),
    /// Memory on a device (not the host), from its backend.
    Device(DeviceBuffer),
}

/// Host memory (see the [module docs](self)). Public, like [`Storage`], only
/// so that the sealed `Element` trait can name it; the module is private to
/// the crate.
pub enum HostData {
    /// Plain elements inside the reference count's own allocation.
    Inline(Inline),
    /// Plain elements in an allocator's block.
    Block(Block),
    /// A `Vec` of any element type.
    Vec(VecData),
    /// An ndarray array of any element type, shared with code outside.
    Shared(Box<SharedArray>),
    /// Plain elements in memory the tensor does not own.
    Lent(Lent),
}

impl HostData {
    /// Whether the elements are referenced only through this `HostData`
    /// (a shared array may have other owners).
    #[inline]
    pub(crate) fn is_exclusive(&self) -> bool {
        match self {
            HostData::Shared(array) => array.is_unique(),
            // Memory lent for reading is never written through the tensor
            // (a writer gets a copy) nor handed on as a kernel's output.
            HostData::Lent(lent) => lent.writable,
            _ => true,
        }
    }
}

/// The most bytes a tensor keeps inside itself ([`Storage::Small`]).
pub(crate) const SMALL_BYTES: usize = 8;

impl Storage {
    /// `len` zero bytes inside the tensor, if they fit.
    #[inline]
    pub(crate) fn small_zeroed(len: usize) -> Option<Storage> {
        (len <= SMALL_BYTES).then_some(Storage::Small {
            len: len as u8,
            tag: SmallTag::NONE,
            bits: 0,
        })
    }

    /// A copy of `bytes` inside the tensor, if they fit.
    #[inline]
    pub(crate) fn small_copy(bytes: &[u8]) -> Option<Storage> {
        let mut storage = Storage::small_zeroed(bytes.len())?;
        if let Storage::Small { len, bits, .. } = &mut storage {
            small_bytes_mut(*len, bits).copy_from_slice(bytes);
        }
        Some(storage)
    }
}

/// The identity of a small tensor's value: none ([`SmallTag::NONE`], what
/// every new small tensor has), or a number no other small tensor was
/// given ([`SmallTag::fresh`]). Copies keep it, as clones of a tensor in a
/// buffer keep its address, and writing to the elements drops it, as
/// copy-on-write gives a shared buffer's writer a new address: so tensors
/// with one tag hold one value. Public only so that [`Storage`] can name
/// it.
///
/// 48 bits, in the padding beside `len`, so a small tensor is no bigger
/// for it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SmallTag([u16; 3]);

/// The next tag the process hands out, in blocks of [`TAG_BLOCK`] to each
/// thread (so that tagging needs no atomic operation but once a block).
static NEXT_TAG_BLOCK: AtomicU64 = AtomicU64::new(1);

/// How many tags a thread takes from [`NEXT_TAG_BLOCK`] at a time.
const TAG_BLOCK: u64 = 1 << 12;

/// Tags are 48 bits (after 2^48 of them, about three days of a billion a
/// second, they start again from 1).
const TAG_MASK: u64 = (1 << 48) - 1;

thread_local! {
    /// This thread's next tag and the end of its block.
    static THREAD_TAGS: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

impl SmallTag {
    /// No identity.
    pub(crate) const NONE: SmallTag = SmallTag([0; 3]);

    /// A tag no other small tensor was given (see [`TAG_MASK`]).
    #[inline]
    pub(crate) fn fresh() -> SmallTag {
        let tag = THREAD_TAGS.with(|tags| {
            let (mut next, mut end) = tags.get();
            if next == end {
                next = NEXT_TAG_BLOCK.fetch_add(TAG_BLOCK, Ordering::Relaxed);
                end = next + TAG_BLOCK;
            }
            tags.set((next + 1, end));
            next
        });
        // Zero is `NONE`; a wrapped counter skips it.
        let tag = (tag & TAG_MASK).max(1);
        SmallTag([tag as u16, (tag >> 16) as u16, (tag >> 32) as u16])
    }

    /// The tag as a number (0 for none).
    #[inline]
    pub(crate) fn get(self) -> u64 {
        let [low, mid, high] = self.0;
        u64::from(low) | u64::from(mid) << 16 | u64::from(high) << 32
    }
}

/// The `len` bytes of a small tensor's `bits` (8-byte aligned, so they can
/// be viewed as any plain element type).
#[inline]
pub(crate) fn small_bytes(len: u8, bits: &u64) -> &[u8] {
    &bytemuck::bytes_of(bits)[..usize::from(len)]
}

/// The `len` bytes of a small tensor's `bits`, for writing.
#[inline]
pub(crate) fn small_bytes_mut(len: u8, bits: &mut u64) -> &mut [u8] {
    &mut bytemuck::bytes_of_mut(bits)[..usize::from(len)]
}

/// The most bytes a tensor keeps inline: four `double`s, eight `float`s.
/// No larger than the biggest other variant, so inline storage costs no
/// memory.
pub(crate) const INLINE_BYTES: usize = 32;

/// Up to [`INLINE_BYTES`] bytes of plain elements, aligned for any element
/// type (8 bytes: `double`, `int64`, `complex128`).
#[repr(C, align(8))]
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

/// Plain elements in memory the tensor does not own: `len` bytes at `ptr`,
/// which the lender ([`Tensor::lend`](crate::Tensor::lend),
/// [`Tensor::lend_mut`](crate::Tensor::lend_mut)) promised stay valid (and,
/// when `writable`, reached only through this storage) while any tensor
/// holds it.
pub struct Lent {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
    writable: bool,
    /// The alignment the elements need, for repointing.
    align: u16,
    /// Whether `ptr` points at the bytes: an unbound storage (made before
    /// its memory exists) holds no bytes until repointed.
    bound: bool,
}

// SAFETY: a `Lent` is a borrowed byte slice whose lifetime the lender
// vouches for: shared across threads it is read (`&[u8]` is Sync), and it
// is written only through `&mut` of its one `HostData` (`&mut [u8]` is
// Send), as the `Arc` around it guarantees.
unsafe impl Send for Lent {}
// SAFETY: as above.
unsafe impl Sync for Lent {}

impl Lent {
    /// The storage of `len` bytes at `ptr`.
    ///
    /// # Safety
    ///
    /// Whenever the storage is used (`bytes`, `bytes_mut`), the bytes must
    /// be valid for reads (and writes when `writable`) and written by no
    /// one else (nor read by anyone else, when `writable`). It holds a
    /// pointer, not a reference: between uses the memory may change or go.
    pub(crate) unsafe fn new(
        ptr: std::ptr::NonNull<u8>,
        len: usize,
        writable: bool,
        align: u16,
    ) -> Lent {
        Lent {
            ptr,
            len,
            writable,
            align,
            bound: true,
        }
    }

    /// A storage of `len` bytes to come, holding none until
    /// [`repoint`](Self::repoint)ed (`bytes` is empty until then).
    pub(crate) fn unbound(len: usize, writable: bool, align: u16) -> Lent {
        Lent {
            ptr: std::ptr::NonNull::dangling(),
            len,
            writable,
            align,
            bound: false,
        }
    }

    /// Points this storage at `len` bytes at `ptr` instead, if it holds
    /// as many, for the same access, and `ptr` is aligned for its elements
    /// (`false`, and nothing changed, otherwise).
    ///
    /// # Safety
    ///
    /// `new`'s contract, for the new bytes.
    pub(crate) unsafe fn repoint(
        &mut self,
        ptr: std::ptr::NonNull<u8>,
        len: usize,
        writable: bool,
    ) -> bool {
        if len != self.len || writable != self.writable {
            return false;
        }
        if !(ptr.as_ptr() as usize).is_multiple_of(usize::from(self.align)) {
            return false;
        }
        self.ptr = ptr;
        self.bound = true;
        true
    }

    #[inline]
    pub(crate) fn bytes(&self) -> &[u8] {
        if !self.bound {
            return &[];
        }
        // SAFETY: `new`'s contract: `len` readable bytes at `ptr`, which
        // nobody writes while this storage is used.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes for writing, when they were lent for writing.
    #[inline]
    pub(crate) fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        // SAFETY: `new`'s contract: `len` writable bytes at `ptr` that only
        // this storage reaches, and `&mut self` is its only reference.
        (self.writable && self.bound)
            .then(|| unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_data_is_small() {
        // The count and the bookkeeping are one allocation of this size
        // plus two counts; inline elements cost nothing extra.
        assert_eq!(size_of::<HostData>(), 48);
        // Small elements fit beside the tag: a tensor is no bigger for them.
        assert_eq!(size_of::<Storage>(), 16);
        assert_eq!(size_of::<crate::Tensor>(), 64);
    }

    #[test]
    fn fresh_tags_differ_and_round_trip() {
        let tags: Vec<u64> = (0..2 * TAG_BLOCK)
            .map(|_| SmallTag::fresh().get())
            .collect();
        assert!(tags.iter().all(|&t| t != 0 && t <= TAG_MASK));
        let mut sorted = tags.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), tags.len(), "a tag was handed out twice");
        let other = std::thread::spawn(|| SmallTag::fresh().get())
            .join()
            .unwrap();
        assert!(!tags.contains(&other), "two threads got one tag");
        assert_eq!(SmallTag::NONE.get(), 0);
    }
}
