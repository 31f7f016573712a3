//! Files that are not regular files, for testing a file reader: every
//! reader of this framework must refuse them at once, through
//! [`crate::file::read_regular_file`], rather than block on a FIFO, read
//! an endless device or read a directory.
//!
//! ```
//! use op_core::testing::files::assert_refuses_non_regular_files;
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("model.bin");
//! let at = path.clone();
//! assert_refuses_non_regular_files(&path, move || {
//!     op_core::file::read_regular_file(&at).map(drop)
//! });
//! # Ok::<(), std::io::Error>(())
//! ```

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use crate::{Code, Result};

/// How long a reader may take to refuse a file before the test calls it
/// blocked.
const LIMIT: Duration = Duration::from_secs(10);

/// The kinds of file that [`assert_refuses_non_regular_files`] puts in
/// place, as a refusal must name them.
const KINDS: [&str; 3] = ["a FIFO", "a character device", "a directory"];

/// Puts a file of `kind` (one of [`KINDS`]) at `at`, replacing what is
/// there: a FIFO without a writer, a symbolic link to `/dev/zero` (a
/// device that never ends), or an empty directory. `false` where the
/// system has no such file (FIFOs and devices off Unix).
fn put(kind: &str, at: &Path) -> bool {
    remove(at);
    match kind {
        "a directory" => {
            std::fs::create_dir(at).unwrap_or_else(|e| panic!("mkdir {}: {e}", at.display()));
            true
        }
        #[cfg(unix)]
        "a FIFO" => {
            let c_path = std::ffi::CString::new(at.as_os_str().as_encoded_bytes())
                .expect("a path without NUL bytes");
            // SAFETY: `c_path` is a valid NUL-terminated path that outlives the call.
            let made = unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) };
            assert_eq!(made, 0, "mkfifo {}", at.display());
            true
        }
        #[cfg(unix)]
        "a character device" => {
            std::os::unix::fs::symlink("/dev/zero", at)
                .unwrap_or_else(|e| panic!("ln -s /dev/zero {}: {e}", at.display()));
            true
        }
        _ => false,
    }
}

/// Removes what is at `at`, if anything (a directory only if empty).
fn remove(at: &Path) {
    match std::fs::symlink_metadata(at) {
        Ok(m) if m.is_dir() => drop(std::fs::remove_dir(at)),
        Ok(_) => drop(std::fs::remove_file(at)),
        Err(_) => {}
    }
}

/// Checks that `read` refuses the file at `at` when it is a FIFO without a
/// writer, `/dev/zero` (through a symbolic link) and a directory: for each,
/// puts that file at `at` (replacing what is there), runs `read` on another
/// thread and requires, within 10 seconds, a `FailedPrecondition` error
/// whose text names `at` and says what the file is and that it is not a
/// regular file. Removes what it put at `at` when done.
///
/// # Panics
///
/// If `read` succeeds, blocks, or fails otherwise.
pub fn assert_refuses_non_regular_files(
    at: &Path,
    read: impl Fn() -> Result<()> + Send + Sync + 'static,
) {
    let read = std::sync::Arc::new(read);
    for kind in KINDS {
        if !put(kind, at) {
            continue;
        }
        let (send, receive) = mpsc::channel();
        let read = read.clone();
        std::thread::spawn(move || {
            let _ = send.send(read());
        });
        let Ok(result) = receive.recv_timeout(LIMIT) else {
            if kind == "a FIFO" {
                // Let the blocked reader go: open the write end.
                drop(std::fs::OpenOptions::new().write(true).open(at));
            }
            panic!(
                "reading {} ({kind}) did not stop within {LIMIT:?}",
                at.display()
            );
        };
        let err = match result {
            Ok(()) => panic!("reading {} ({kind}) succeeded", at.display()),
            Err(err) => err,
        };
        let text = err.to_string();
        assert_eq!(err.code(), Code::FailedPrecondition, "{kind}: {text}");
        for part in [kind, "not a regular file", &at.display().to_string()] {
            assert!(text.contains(part), "{kind}: {text:?} lacks {part:?}");
        }
    }
    remove(at);
}
