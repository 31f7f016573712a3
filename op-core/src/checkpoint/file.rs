//! The file system side: writing a file atomically, and I/O errors.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::writer::Stored;
use crate::{Code, Error, Result};

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
    let prefix = format!(".{}.", file_name.to_string_lossy());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
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

/// An I/O error as an [`Error`] with TensorFlow's code for it.
pub(super) fn io_error(error: io::Error, doing: &str, path: &Path) -> Error {
    let code = match error.kind() {
        io::ErrorKind::NotFound => Code::NotFound,
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
            Code::PermissionDenied
        }
        io::ErrorKind::AlreadyExists => Code::AlreadyExists,
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => Code::ResourceExhausted,
        _ => Code::Unknown,
    };
    Error::new(code, format!("{doing} '{}': {error}", path.display()))
}
