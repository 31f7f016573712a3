//! TensorFlow's string elements (`tstring`), read and written by hand: the
//! wheel exports none of its `TF_String*` functions (they are inline in
//! `tensorflow/tsl/platform/ctstring_internal.h`), so this follows that
//! header's layout, for little-endian 64-bit machines.
//!
//! A `tstring` is 24 bytes; the low two bits of its first byte say which of
//! four forms it has:
//!
//! | form | first bytes | the characters |
//! | --- | --- | --- |
//! | small (0) | `u8` size << 2 | inline, after the size (up to 22, NUL-ended) |
//! | large (1) | `usize` size << 2 \| 1, `usize` capacity, pointer | `malloc`ed by TensorFlow (freed with `free`) |
//! | offset (2) | `u32` size << 2 \| 2, `u32` offset from the element | inside the tensor's buffer |
//! | view (3) | `usize` size << 2 \| 3, pointer, owner | another's memory |

#[cfg(not(all(target_endian = "little", target_pointer_width = "64")))]
compile_error!("op-tf reads TensorFlow's strings on little-endian 64-bit machines only");

/// The size of one `tstring`.
pub const TSTRING_SIZE: usize = 24;
/// The most bytes a small `tstring` holds inline.
const SMALL_CAPACITY: usize = TSTRING_SIZE - 2;

fn usize_at(raw: &[u8; TSTRING_SIZE], at: usize) -> usize {
    usize::from_le_bytes(raw[at..at + 8].try_into().expect("8 bytes"))
}

/// The characters of the `tstring` at `element`.
///
/// # Safety
///
/// `element` points at a live, initialized `tstring` (one element of a
/// TensorFlow string tensor), whose characters stay as they are for `'a`.
pub unsafe fn read<'a>(element: *const [u8; TSTRING_SIZE]) -> &'a [u8] {
    // SAFETY: the caller's contract.
    let raw = unsafe { &*element };
    let (len, data): (usize, *const u8) = match raw[0] & 3 {
        0 => (usize::from(raw[0] >> 2), raw[1..].as_ptr()),
        1 | 3 => (
            usize_at(raw, 0) >> 2,
            usize_at(raw, if raw[0] & 3 == 1 { 16 } else { 8 }) as *const u8,
        ),
        _ => {
            let size = u32::from_le_bytes(raw[0..4].try_into().expect("4 bytes")) >> 2;
            let offset = u32::from_le_bytes(raw[4..8].try_into().expect("4 bytes"));
            // SAFETY: an offset string's characters are `offset` bytes past
            // the element, in the same buffer (the caller's contract).
            (size as usize, unsafe {
                element.cast::<u8>().add(offset as usize)
            })
        }
    };
    if len == 0 {
        return &[];
    }
    // SAFETY: the caller's contract: `len` bytes at `data`, as the form
    // says.
    unsafe { std::slice::from_raw_parts(data, len) }
}

/// Writes `bytes` into the `tstring` at `element`, which must be empty (as
/// TensorFlow allocates a string output): inline when short enough, else in
/// a `malloc`ed buffer TensorFlow frees with `free`.
///
/// Returns a `ResourceExhausted` error when the buffer cannot be had.
///
/// # Safety
///
/// `element` points at an empty small `tstring` that nothing else reads
/// or writes meanwhile.
pub unsafe fn write(element: *mut [u8; TSTRING_SIZE], bytes: &[u8]) -> op_core::Result<()> {
    // SAFETY: the caller's contract.
    let raw = unsafe { &mut *element };
    let len = bytes.len();
    if len <= SMALL_CAPACITY {
        raw[0] = (len << 2) as u8;
        raw[1..1 + len].copy_from_slice(bytes);
        raw[1 + len] = 0;
        return Ok(());
    }
    // The header's rule: a capacity one short of a multiple of 16.
    let capacity = ((len + 1 + 15) & !15) - 1;
    // SAFETY: malloc returns `capacity + 1` bytes or null; TensorFlow
    // frees a large string's buffer with free.
    let data = unsafe { libc::malloc(capacity + 1) }.cast::<u8>();
    if data.is_null() {
        return Err(op_core::Error::resource_exhausted(format!(
            "no memory for a string of {len} bytes"
        )));
    }
    // SAFETY: `data` has `capacity + 1 > len` bytes, not overlapping `bytes`.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), data, len);
        *data.add(len) = 0;
    }
    raw[0..8].copy_from_slice(&((len << 2) | 1).to_le_bytes());
    raw[8..16].copy_from_slice(&capacity.to_le_bytes());
    raw[16..24].copy_from_slice(&(data as usize).to_le_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frees what `write` put in a large string, as TensorFlow would.
    fn dealloc(raw: &[u8; TSTRING_SIZE]) {
        if raw[0] & 3 == 1 {
            // SAFETY: `write` malloced it.
            unsafe { libc::free(usize_at(raw, 16) as *mut libc::c_void) };
        }
    }

    #[test]
    fn small_and_large_strings_read_back_what_was_written() {
        for len in [0usize, 1, 21, 22, 23, 24, 100, 1000] {
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let mut raw = [0u8; TSTRING_SIZE];
            // SAFETY: an empty small tstring of ours.
            unsafe { write(&mut raw, &bytes) }.unwrap();
            assert_eq!(raw[0] & 3, u8::from(len > SMALL_CAPACITY), "len {len}");
            // SAFETY: as written above.
            assert_eq!(unsafe { read(&raw) }, bytes, "len {len}");
            dealloc(&raw);
        }
    }

    #[test]
    fn the_layouts_are_the_headers() {
        // A small "abc": size 3 << 2 | SMALL, then the bytes, NUL-ended.
        let mut raw = [0u8; TSTRING_SIZE];
        // SAFETY: an empty small tstring of ours.
        unsafe { write(&mut raw, b"abc") }.unwrap();
        assert_eq!(&raw[..5], &[12, b'a', b'b', b'c', 0]);
        // An offset string whose characters follow it in the buffer.
        let mut buffer = [0u8; TSTRING_SIZE + 5];
        buffer[0..4].copy_from_slice(&((5u32 << 2) | 2).to_le_bytes());
        buffer[4..8].copy_from_slice(&(TSTRING_SIZE as u32).to_le_bytes());
        buffer[TSTRING_SIZE..].copy_from_slice(b"hello");
        // SAFETY: a whole offset tstring and its characters.
        assert_eq!(unsafe { read(buffer.as_ptr().cast()) }, b"hello");
        // A view of 4 bytes elsewhere.
        let elsewhere = *b"view";
        let mut view = [0u8; TSTRING_SIZE];
        view[0..8].copy_from_slice(&((4usize << 2) | 3).to_le_bytes());
        view[8..16].copy_from_slice(&(elsewhere.as_ptr() as usize).to_le_bytes());
        // SAFETY: the view's bytes live on the stack meanwhile.
        assert_eq!(unsafe { read(&view) }, b"view");
    }
}
