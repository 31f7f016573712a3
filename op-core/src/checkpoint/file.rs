//! The file system side of checkpoints: writing a file atomically and
//! removing the temporary files of dead writers. (Reading is
//! [`crate::file::read_regular_file`], shared with every other reader.)

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::path::Path;

pub(super) use crate::file::io_error;
use crate::{Error, Result};

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

/// The directory of `path` (`.` for a bare file name) and its file name;
/// `None` if `path` names no file (`/`, `..`).
fn dir_and_name(path: &Path) -> Option<(&Path, &OsStr)> {
    let name = path.file_name()?;
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    Some((dir, name))
}

/// A new temporary file in `dir` for the file named `file_name`, holding an
/// exclusive lock on it (on Unix) until it is dropped: the lock tells
/// [`remove_stale_temp_files`] that its writer is alive.
///
/// A cleaner can remove the file between its creation and the lock (it was
/// not locked yet); then the file at the name is no longer the one open
/// here, and another is created.
fn create_locked_temp_file(dir: &Path, file_name: &OsStr) -> Result<tempfile::NamedTempFile> {
    let prefix = temp_prefix(file_name);
    let mut builder = tempfile::Builder::new();
    builder
        .prefix(&prefix)
        .rand_bytes(TEMP_RANDOM)
        .suffix(TEMP_SUFFIX);
    // Like `File::create`: 0o666 less the umask (tempfile's default is 0o600).
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    // Each try loses only to a cleaner that ran in the instant between
    // creating and locking; a few tries are plenty.
    for _ in 0..8 {
        let temp = builder
            .tempfile_in(dir)
            .map_err(|e| io_error(e, "creating a temporary file in", dir))?;
        #[cfg(unix)]
        {
            // Never blocks: only a cleaner takes the lock of a file this
            // new, and it does so to remove the file.
            let locked = match temp.as_file().try_lock() {
                Ok(()) => true,
                Err(fs::TryLockError::WouldBlock) => false,
                // No locks on this file system (some network or FUSE ones):
                // go on unlocked; cleaners, unable to lock the file either,
                // leave it alone.
                Err(fs::TryLockError::Error(_)) => true,
            };
            if !locked || !is_same_file(temp.as_file(), temp.path()) {
                // Being removed, or removed, by a cleaner. Close it without
                // removing the name ourselves (tempfile removes by name, and
                // the name may be someone else's by now); a file left over
                // goes with the next cleanup.
                let _ = temp.into_temp_path().keep();
                continue;
            }
        }
        return Ok(temp);
    }
    Err(Error::aborted(format!(
        "creating a temporary file in '{}': each new file was removed before it could be \
         locked",
        dir.display()
    )))
}

/// Whether `path` still names the file open as `file` (the same device and
/// inode), without following a symbolic link at `path`.
#[cfg(unix)]
fn is_same_file(file: &fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::symlink_metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

/// Whether `name` is the name of one of this module's temporary files:
/// `.<anything>.<TEMP_RANDOM letters or digits><TEMP_SUFFIX>`.
#[cfg(unix)]
fn is_temp_name(name: &OsStr) -> bool {
    let name = name.as_encoded_bytes();
    let Some(rest) = name.strip_suffix(TEMP_SUFFIX.as_bytes()) else {
        return false;
    };
    let Some((rest, random)) = rest.split_at_checked(rest.len().saturating_sub(TEMP_RANDOM)) else {
        return false;
    };
    random.len() == TEMP_RANDOM
        && random.iter().all(u8::is_ascii_alphanumeric)
        && rest.len() >= 2
        && rest.starts_with(b".")
        && rest.ends_with(b".")
}

/// Removes the stale temporary files in `dir` that writers of this module
/// left behind when they died, except one named `keep` (the checkpoint
/// being saved or restored, should it be named like one).
///
/// A temporary file is stale if nobody holds its lock: a writer holds an
/// exclusive lock on its temporary file until the file is renamed into
/// place or removed, and the system releases a dead process's locks. So a
/// file is removed only if its name is one this module makes
/// ([`is_temp_name`]), it is a regular file, and a non-blocking exclusive
/// lock on it succeeds. On a file system without locks nothing is removed.
///
/// Best effort: the caller's save or restore goes on whatever happens here
/// (an unreadable directory, a file removed by another cleaner).
#[cfg(unix)]
pub(super) fn remove_stale_temp_files(dir: &Path, keep: &OsStr) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name != keep && is_temp_name(&name) {
            let _ = remove_if_stale(&entry.path());
        }
    }
}

/// Other systems: nothing is removed (the lock and the file identity that
/// make removal safe are checked with Unix calls).
#[cfg(not(unix))]
pub(super) fn remove_stale_temp_files(_dir: &Path, _keep: &OsStr) {}

/// Removes the file at `path` if it is a regular file that nobody holds a
/// lock on.
#[cfg(unix)]
fn remove_if_stale(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    // Not through a symbolic link, and without blocking on a FIFO.
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Ok(());
    }
    match file.try_lock() {
        Ok(()) => {}
        // A live writer's, or locks are not supported here: keep it.
        Err(fs::TryLockError::WouldBlock | fs::TryLockError::Error(_)) => return Ok(()),
    }
    // Holding the lock, the file is ours to remove if the name still
    // points to it.
    if is_same_file(&file, path) {
        fs::remove_file(path)?;
    }
    Ok(())
}

/// Removes the stale temporary files in the directory of the checkpoint at
/// `path` (see [`remove_stale_temp_files`]); nothing if `path` names no file.
pub(super) fn remove_stale_temp_files_beside(path: &Path) {
    if let Some((dir, name)) = dir_and_name(path) {
        remove_stale_temp_files(dir, name);
    }
}

/// Writes a file at `path` atomically: removes the stale temporary files
/// beside it, creates and locks a temporary file next to it, has `contents`
/// write the file's bytes to it (given the open file and its path, for
/// messages), syncs it, renames it over `path` and syncs the directory.
pub(super) fn write_atomically(
    path: &Path,
    contents: impl FnOnce(&mut fs::File, &Path) -> Result<()>,
) -> Result<()> {
    let (dir, file_name) = dir_and_name(path).ok_or_else(|| {
        Error::invalid_argument(format!(
            "checkpoint path '{}' names no file",
            path.display()
        ))
    })?;
    remove_stale_temp_files(dir, file_name);
    let mut temp = create_locked_temp_file(dir, file_name)?;
    // On error, dropping `temp` deletes the temporary file.
    let temp_path = temp.path().to_path_buf();
    contents(temp.as_file_mut(), &temp_path)?;
    temp.as_file()
        .sync_all()
        .map_err(|e| io_error(e, "syncing", &temp_path))?;
    temp.persist(path)
        .map_err(|e| io_error(e.error, "renaming the temporary file to", path))?;
    #[cfg(unix)]
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_error(e, "syncing the directory", dir))?;
    Ok(())
}
