//! Memory planning: where in one arena each tensor lives, so that tensors
//! whose lifetimes do not overlap share bytes.
//!
//! The planner sees only sizes and lifetimes ([`Request`]: the first and the
//! last step at which a buffer is in use), never a model or a tensor, so
//! that any executor with a fixed order of steps can use it. It places the
//! buffers greedily by size, as TensorFlow Lite's `ArenaPlanner` and the
//! "greedy by size" strategy of Pisarchyk and Lee (*Efficient Memory
//! Management for Deep Neural Net Inference*, 2020) do: the largest buffer
//! first, each in the smallest gap that fits among the buffers already
//! placed whose lifetimes overlap its own, or past the last of them.
//!
//! [`AlignedBytes`] is the arena itself: bytes whose start is aligned to
//! [`ALIGNMENT`], so that every offset the planner returns (a multiple of
//! [`ALIGNMENT`]) is aligned for any element type.

use op_core::{Error, Result};

/// The alignment of every planned offset and of an [`AlignedBytes`]
/// buffer's start, in bytes: enough for any element type and for a cache
/// line, as TensorFlow Lite's `kDefaultTensorAlignment`.
pub const ALIGNMENT: usize = 64;

/// One buffer to place: its size in bytes and the steps (inclusive) during
/// which it holds a value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The size in bytes; 0 needs no memory.
    pub size: usize,
    /// The first step that writes or reads the buffer.
    pub first: usize,
    /// The last step that reads it (at least `first`).
    pub last: usize,
}

impl Request {
    /// Whether `self` and `other` are in use at a common step.
    pub fn overlaps(&self, other: &Request) -> bool {
        self.first <= other.last && other.first <= self.last
    }
}

/// Where each request of a [`plan`] lives, and how large the arena is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArenaPlan {
    /// The offset of each request, in request order: a multiple of
    /// [`ALIGNMENT`] (0 for an empty request).
    pub offsets: Vec<usize>,
    /// The arena's size in bytes: the end of the highest buffer, rounded up
    /// to [`ALIGNMENT`].
    pub size: usize,
}

/// Places `requests` in one arena: two requests whose lifetimes overlap
/// never share a byte; others may.
///
/// Fails (`ResourceExhausted`) only when a size or the arena's size
/// overflows `usize`.
///
/// ```
/// use op_lite::arena::{plan, Request};
///
/// // a -> b -> c: `a` is dead when `c` is written, so they share.
/// let plan = plan(&[
///     Request { size: 100, first: 0, last: 1 },
///     Request { size: 100, first: 1, last: 2 },
///     Request { size: 100, first: 2, last: 2 },
/// ])?;
/// assert_eq!(plan.offsets[0], plan.offsets[2]);
/// assert_ne!(plan.offsets[0], plan.offsets[1]);
/// assert_eq!(plan.size, 256); // two buffers of 128 bytes
/// # Ok::<(), op_core::Error>(())
/// ```
pub fn plan(requests: &[Request]) -> Result<ArenaPlan> {
    let sizes = requests
        .iter()
        .map(|r| align_up(r.size))
        .collect::<Result<Vec<_>>>()?;
    let mut order: Vec<usize> = (0..requests.len()).filter(|&i| sizes[i] > 0).collect();
    // Largest first; among equals the earliest, then request order, so that
    // the plan does not depend on the sort's stability.
    order.sort_by_key(|&i| (std::cmp::Reverse(sizes[i]), requests[i].first, i));

    let mut offsets: Vec<usize> = vec![0; requests.len()];
    // The requests placed so far, by offset.
    let mut placed: Vec<usize> = Vec::with_capacity(order.len());
    let mut arena_size = 0usize;
    for &i in &order {
        let size = sizes[i];
        // The best gap: the smallest that fits, lowest first.
        let mut best: Option<(usize, usize)> = None; // (gap size, offset)
        let mut cursor = 0usize;
        for &p in &placed {
            if !requests[p].overlaps(&requests[i]) {
                continue;
            }
            let gap = offsets[p].saturating_sub(cursor);
            if gap >= size && best.is_none_or(|(best_gap, _)| gap < best_gap) {
                best = Some((gap, cursor));
            }
            cursor = cursor.max(offsets[p] + sizes[p]);
        }
        let offset = best.map_or(cursor, |(_, offset)| offset);
        let end = offset
            .checked_add(size)
            .ok_or_else(|| too_large("the arena"))?;
        arena_size = arena_size.max(end);
        offsets[i] = offset;
        let at = placed.partition_point(|&p| offsets[p] <= offset);
        placed.insert(at, i);
    }
    Ok(ArenaPlan {
        offsets,
        size: arena_size,
    })
}

/// Checks a plan: every offset aligned, every buffer inside the arena, and
/// no two buffers with overlapping lifetimes sharing a byte. The planner's
/// own invariant, checked by its tests and by the interpreter's debug
/// builds.
pub fn check(requests: &[Request], plan: &ArenaPlan) -> Result<()> {
    let broken = |what: String| Err(Error::internal(format!("arena plan: {what}")));
    if plan.offsets.len() != requests.len() {
        return broken(format!(
            "{} offsets for {} requests",
            plan.offsets.len(),
            requests.len()
        ));
    }
    let ends: Vec<usize> = requests
        .iter()
        .zip(&plan.offsets)
        .map(|(r, &offset)| offset.saturating_add(r.size))
        .collect();
    for (i, r) in requests.iter().enumerate() {
        if r.size == 0 {
            continue;
        }
        if !plan.offsets[i].is_multiple_of(ALIGNMENT) || ends[i] > plan.size {
            return broken(format!(
                "request {i} at {} (size {}) is unaligned or past the arena's {} bytes",
                plan.offsets[i], r.size, plan.size
            ));
        }
        for (j, other) in requests.iter().enumerate().skip(i + 1) {
            let shared = plan.offsets[i] < ends[j] && plan.offsets[j] < ends[i];
            if other.size > 0 && r.overlaps(other) && shared {
                return broken(format!(
                    "requests {i} and {j} are live together and share bytes"
                ));
            }
        }
    }
    Ok(())
}

/// `size` rounded up to [`ALIGNMENT`].
fn align_up(size: usize) -> Result<usize> {
    size.checked_next_multiple_of(ALIGNMENT)
        .ok_or_else(|| too_large("a buffer"))
}

fn too_large(what: &str) -> Error {
    Error::resource_exhausted(format!("{what} would be larger than the address space"))
}

/// Zeroed bytes whose first byte is aligned to [`ALIGNMENT`]: the arena, and
/// the block that holds a model's constants.
///
/// Built on a `Vec<u8>` with [`ALIGNMENT`]` - 1` spare bytes in front, so it
/// needs no `unsafe`; the heap block never moves while the length stays, so
/// the aligned start stays aligned.
#[derive(Clone, Debug, Default)]
pub struct AlignedBytes {
    storage: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBytes {
    /// `len` zero bytes.
    ///
    /// Fails (`ResourceExhausted`) when `len` plus the alignment slack
    /// overflows `usize`.
    pub fn zeroed(len: usize) -> Result<AlignedBytes> {
        let mut bytes = AlignedBytes::default();
        bytes.resize_zeroed(len)?;
        Ok(bytes)
    }

    /// Makes the buffer `len` zero bytes, reusing its memory when it is
    /// large enough.
    pub fn resize_zeroed(&mut self, len: usize) -> Result<()> {
        let needed = len
            .checked_add(ALIGNMENT - 1)
            .ok_or_else(|| too_large("the arena"))?;
        if needed > self.storage.len() {
            self.storage = Vec::new(); // Free the old block before asking for the new.
            self.storage.try_reserve_exact(needed).map_err(|e| {
                Error::resource_exhausted(format!("cannot allocate an arena of {len} bytes: {e}"))
            })?;
            self.storage.resize(needed, 0);
        }
        self.start = self.storage.as_ptr().align_offset(ALIGNMENT);
        self.len = len;
        self.as_mut_slice().fill(0);
        Ok(())
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes, starting at an aligned address.
    pub fn as_slice(&self) -> &[u8] {
        &self.storage[self.start..self.start + self.len]
    }

    /// The bytes, for writing.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn request(size: usize, first: usize, last: usize) -> Request {
        Request { size, first, last }
    }

    #[test]
    fn buffers_live_at_the_same_time_get_distinct_bytes() {
        let requests = [request(10, 0, 3), request(10, 1, 2), request(10, 2, 3)];
        let plan = plan(&requests).unwrap();
        check(&requests, &plan).unwrap();
        assert_eq!(plan.size, 3 * ALIGNMENT);
    }

    #[test]
    fn a_dead_buffer_s_bytes_are_reused_by_a_later_one_that_fits() {
        // Step 0 writes a (200 bytes); step 1 reads a, writes b; step 2
        // reads b, writes c (50 bytes), which fits where a was.
        let requests = [request(200, 0, 1), request(100, 1, 2), request(50, 2, 2)];
        let plan = plan(&requests).unwrap();
        check(&requests, &plan).unwrap();
        assert_eq!(plan.offsets[2], plan.offsets[0]);
        assert_eq!(plan.size, 256 + 128);
    }

    #[test]
    fn the_smallest_gap_that_fits_is_chosen() {
        // Placed largest first: a (192, dead after step 0) at 0, the fence
        // f1 (128, live throughout) at 192, b (64, dead after 0) at 320,
        // the fence f2 at 384. x, live at steps 5-6, sees a hole of 192
        // bytes where a was and one of 64 where b was, and takes the
        // smaller.
        let requests = [
            request(192, 0, 0), // a
            request(128, 0, 9), // f1
            request(64, 0, 0),  // b
            request(64, 0, 9),  // f2
            request(64, 5, 6),  // x
        ];
        let plan = plan(&requests).unwrap();
        check(&requests, &plan).unwrap();
        assert_eq!(plan.offsets[..4], [0, 192, 320, 384]);
        assert_eq!(plan.offsets[4], 320);
    }

    #[test]
    fn empty_requests_take_no_memory() {
        let plan = plan(&[request(0, 0, 5), request(0, 1, 1)]).unwrap();
        assert_eq!(
            plan,
            ArenaPlan {
                offsets: vec![0, 0],
                size: 0
            }
        );
    }

    #[test]
    fn sizes_that_overflow_are_errors() {
        let err = plan(&[request(usize::MAX, 0, 0)]).unwrap_err();
        assert_eq!(err.code(), op_core::Code::ResourceExhausted);
        let huge = usize::MAX / 2 - ALIGNMENT;
        let err = plan(&[
            request(huge, 0, 0),
            request(huge, 0, 0),
            request(huge, 0, 0),
        ])
        .unwrap_err();
        assert_eq!(err.code(), op_core::Code::ResourceExhausted);
    }

    #[test]
    fn the_checker_catches_shared_bytes() {
        let requests = [request(8, 0, 1), request(8, 1, 2)];
        let bad = ArenaPlan {
            offsets: vec![0, 0],
            size: 64,
        };
        assert!(
            check(&requests, &bad)
                .unwrap_err()
                .message()
                .contains("share bytes")
        );
    }

    #[test]
    fn aligned_bytes_start_aligned_and_zeroed_after_a_resize() {
        let mut bytes = AlignedBytes::zeroed(100).unwrap();
        assert_eq!(bytes.as_slice().as_ptr() as usize % ALIGNMENT, 0);
        bytes.as_mut_slice().fill(7);
        bytes.resize_zeroed(50).unwrap();
        assert_eq!(bytes.len(), 50);
        assert!(bytes.as_slice().iter().all(|&b| b == 0));
        bytes.resize_zeroed(5000).unwrap();
        assert_eq!(bytes.as_slice().as_ptr() as usize % ALIGNMENT, 0);
        assert!(AlignedBytes::zeroed(0).unwrap().is_empty());
        assert!(AlignedBytes::zeroed(usize::MAX).is_err());
    }

    proptest! {
        #[test]
        fn plans_never_share_bytes_between_live_buffers_and_never_exceed_the_sum(
            raw in proptest::collection::vec((0usize..500, 0usize..20, 0usize..6), 0..40)
        ) {
            let requests: Vec<Request> = raw
                .iter()
                .map(|&(size, first, length)| request(size, first, first + length))
                .collect();
            let plan = plan(&requests).unwrap();
            check(&requests, &plan).unwrap();
            let sum: usize = requests.iter().map(|r| align_up(r.size).unwrap()).sum();
            prop_assert!(plan.size <= sum);
            // At least as large as what is live at the busiest step.
            for step in 0..26 {
                let live: usize = requests
                    .iter()
                    .filter(|r| r.first <= step && step <= r.last)
                    .map(|r| align_up(r.size).unwrap())
                    .sum();
                prop_assert!(plan.size >= live);
            }
        }
    }
}
