//! The file system side: reading a regular file with a bounded read,
//! writing a file atomically, and I/O errors.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

use super::writer::Stored;
use crate::{Code, Error, Result};

/// The contents of the regular file at `path`.
///
/// Opening a FIFO for reading blocks until a writer opens it, so the file is
/// opened with `O_NONBLOCK` (on Unix; regular files ignore the flag), then
/// the open file's type is checked: anything but a regular file (a FIFO, a
/// device such as the endless `/dev/zero`, a directory) is a
/// `FailedPrecondition` error. At most the size that the open file has is
/// read, so a file that changes size while it is read is `DataLoss` rather
/// than read without bound.
pub(super) fn read_regular_file(path: &Path) -> Result<Vec<u8>> {
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

/// The end of the name of every temporary file this module writes.
const TEMP_SUFFIX: &str = ".op-ckpt.tmp";

/// The number of random characters (ASCII letters and digits) in a
/// temporary file's name.
const TEMP_RANDOM: usize = 6;

/// The longest file name that common file systems allow, in bytes: Linux's
/// `NAME_MAX`, and the limit of ext4, XFS, btrfs, APFS.
const NAME_MAX: usize = 255;

/// The start of the name of the temporary file for the file named
/// `file_name`: `.<file name>.`, the name cut short so that the whole
/// temporary name, `.<file name>.<random>.op-ckpt.tmp`, fits in
/// [`NAME_MAX`] bytes whatever the file's own name.
///
/// A UTF-8 name is cut at a character boundary; another (Unix only) at a
/// byte. The name is only there to tell a person whose temporary file it
/// is; nothing reads it back.
fn temp_prefix(file_name: &OsStr) -> OsString {
    let budget = NAME_MAX - 2 - TEMP_RANDOM - TEMP_SUFFIX.len();
    let mut prefix = OsString::from(".");
    match file_name.to_str() {
        Some(name) => prefix.push(&name[..name.floor_char_boundary(budget)]),
        None => {
            #[cfg(unix)]
            {
                use std::os::unix::ffi::OsStrExt;
                let bytes = file_name.as_bytes();
                prefix.push(OsStr::from_bytes(&bytes[..bytes.len().min(budget)]));
            }
            #[cfg(not(unix))]
            {
                let name = file_name.to_string_lossy();
                prefix.push(&name[..name.floor_char_boundary(budget)]);
            }
        }
    }
    prefix.push(".");
    prefix
}

/// Writes the file to a temporary file next to `path`, syncs it, renames it
/// over `path` and syncs the directory.
pub(super) fn write_atomically(path: &Path, header: &[u8], stored: &[Stored<'_>]) -> Result<()> {
    let file_name = path.file_name().ok_or_else(|| {
        Error::invalid_argument(format!(
            "checkpoint path '{}' names no file",
            path.display()
        ))
    })?;
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let prefix = temp_prefix(file_name);
    let mut builder = tempfile::Builder::new();
    builder
        .prefix(&prefix)
        .rand_bytes(TEMP_RANDOM)
        .suffix(TEMP_SUFFIX);
    // Like `File::create`: 0o666 less the umask (tempfile's default is 0o600).
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut temp = builder
        .tempfile_in(dir)
        .map_err(|e| io_error(e, "creating a temporary file in", dir))?;

    let written = (|| {
        let mut out = BufWriter::with_capacity(1 << 20, temp.as_file_mut());
        out.write_all(&(header.len() as u64).to_le_bytes())?;
        out.write_all(header)?;
        for entry in stored {
            entry.data.write_to(&mut out)?;
        }
        out.flush()?;
        drop(out);
        temp.as_file().sync_all()
    })();
    // On error, dropping `temp` deletes the temporary file.
    written.map_err(|e| io_error(e, "writing", temp.path()))?;
    temp.persist(path)
        .map_err(|e| io_error(e.error, "renaming the temporary file to", path))?;
    #[cfg(unix)]
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_error(e, "syncing the directory", dir))?;
    Ok(())
}

/// An I/O error as an [`Error`] with TensorFlow's code for it
/// ([`Code::from_io_error`]): what was being done, the path, and the error.
pub(super) fn io_error(error: io::Error, doing: &str, path: &Path) -> Error {
    Error::new(
        Code::from_io_error(&error),
        format!("{doing} '{}': {error}", path.display()),
    )
}
