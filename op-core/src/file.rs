//! Reading the files this framework takes from users: one path for every
//! reader (checkpoints, GraphDefs, `.tflite` models, `.npy` arrays, saved
//! models), so that none of them blocks on a FIFO, reads an endless device
//! such as `/dev/zero` until memory runs out, or reads a directory.
//!
//! [`read_regular_file`] opens without blocking, refuses what is not a
//! regular file with a `FailedPrecondition` error that says what it is, and
//! reads at most the size the open file has, into memory reserved with
//! [`Vec::try_reserve_exact`] (a file too large to hold is a
//! `ResourceExhausted` error, not an abort). [`read_text_file`] does the
//! same for UTF-8 text.
//!
//! ```
//! use op_core::{Code, file};
//! let err = file::read_regular_file("/dev/zero").unwrap_err();
//! assert_eq!(err.code(), Code::FailedPrecondition);
//! assert!(err.message().contains("a character device, not a regular file"));
//!
//! let dir = std::env::temp_dir();
//! let err = file::read_regular_file(&dir).unwrap_err();
//! assert!(err.message().contains("a directory"));
//! ```

use std::fs;
use std::io::{self, Read};
use std::path::Path;

use crate::{Code, Error, Result};

/// The contents of the regular file at `path`.
///
/// Opening a FIFO for reading blocks until a writer opens it, so the file is
/// opened with `O_NONBLOCK` (on Unix; regular files ignore the flag), then
/// the open file's type is checked: anything but a regular file (a FIFO, a
/// device such as the endless `/dev/zero`, a directory, a socket) is a
/// `FailedPrecondition` error naming the path and what it is. At most the
/// size that the open file has is read, so a file that changes size while it
/// is read is `DataLoss` rather than read without bound; a size that cannot
/// be held in memory is `ResourceExhausted`. A missing file is `NotFound`,
/// and other I/O errors have TensorFlow's code for them
/// ([`Code::from_io_error`]); every message names the path.
pub fn read_regular_file(path: impl AsRef<Path>) -> Result<Vec<u8>> {
    let path = path.as_ref();
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let mut file = options
        .open(path)
        .map_err(|e| io_error(e, "opening", path))?;
    let metadata = file
        .metadata()
        .map_err(|e| io_error(e, "reading the metadata of", path))?;
    if !metadata.is_file() {
        return Err(Error::failed_precondition(format!(
            "'{}' is {}, not a regular file",
            path.display(),
            describe(&metadata.file_type())
        )));
    }
    let size = metadata.len();
    let mut bytes = Vec::new();
    usize::try_from(size)
        .ok()
        .and_then(|size| bytes.try_reserve_exact(size).ok())
        .ok_or_else(|| {
            Error::resource_exhausted(format!(
                "cannot hold the {size} bytes of '{}' in memory",
                path.display()
            ))
        })?;
    // Exactly `size` bytes fit without growing the buffer; then one more
    // read tells whether the file has grown.
    (&mut file)
        .take(size)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(e, "reading", path))?;
    let more = loop {
        match file.read(&mut [0u8; 1]) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            result => break result.map_err(|e| io_error(e, "reading", path))?,
        }
    };
    if more != 0 {
        return Err(Error::data_loss(format!(
            "'{}' changed size while it was read: it had {size} bytes when opened, and more \
             after them",
            path.display()
        )));
    }
    if bytes.len() as u64 != size {
        return Err(Error::data_loss(format!(
            "'{}' changed size while it was read: it had {size} bytes when opened, but only {} \
             could be read",
            path.display(),
            bytes.len()
        )));
    }
    Ok(bytes)
}

/// The contents of the regular file at `path` as UTF-8 text: as
/// [`read_regular_file`], and an `InvalidArgument` error naming the path and
/// the offset of the first invalid byte if the text is not UTF-8.
pub fn read_text_file(path: impl AsRef<Path>) -> Result<String> {
    let path = path.as_ref();
    String::from_utf8(read_regular_file(path)?).map_err(|e| {
        Error::invalid_argument(format!(
            "'{}' is not UTF-8 text: {}",
            path.display(),
            e.utf8_error()
        ))
    })
}

/// What kind of file `file_type` is, for messages: "a directory", "a FIFO".
fn describe(file_type: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

/// An I/O error as an [`Error`] with TensorFlow's code for it
/// ([`Code::from_io_error`]): what was being done, the path, and the error,
/// as in `opening '/tmp/x.pb': No such file or directory (os error 2)`.
pub fn io_error(error: io::Error, doing: &str, path: &Path) -> Error {
    Error::new(
        Code::from_io_error(&error),
        format!("{doing} '{}': {error}", path.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // Miri does not emulate opening with O_NONBLOCK, which is how these
    // readers refuse FIFOs without blocking.
    #[test]
    #[cfg_attr(miri, ignore = "Miri cannot open files with O_NONBLOCK")]
    fn a_regular_file_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        fs::write(&path, b"abc\xff").unwrap();
        assert_eq!(read_regular_file(&path).unwrap(), b"abc\xff");
        let err = read_text_file(&path).unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument);
        assert!(err.message().contains("not UTF-8"), "{err}");
        fs::write(&path, "text").unwrap();
        assert_eq!(read_text_file(&path).unwrap(), "text");
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri cannot open files with O_NONBLOCK")]
    fn a_missing_file_is_not_found_and_named() {
        let err = read_regular_file("/nonexistent/opkit/file").unwrap_err();
        assert_eq!(err.code(), Code::NotFound);
        assert!(err.message().contains("/nonexistent/opkit/file"), "{err}");
    }
}
