//! Helpers shared by the kernel tests.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use op_core::Error;

/// Asserts that the error's full text (code, message, context) contains
/// every one of `parts`.
#[track_caller]
pub fn assert_contains(error: &Error, parts: &[&str]) {
    let text = error.to_string();
    for part in parts {
        assert!(
            text.contains(part),
            "expected {part:?} in the error:\n{text}"
        );
    }
}

/// Runs each job on a thread of its own and waits for all of them. A job
/// that panics fails the test with its name and message; a job still
/// running after `limit` fails it too (a deadlock fails the test instead
/// of hanging it).
#[allow(dead_code)] // not every test crate runs threads
pub fn run_jobs(jobs: Vec<(String, Box<dyn FnOnce() + Send>)>, limit: Duration) {
    let deadline = Instant::now() + limit;
    let count = jobs.len();
    let (done, finished) = mpsc::channel::<(String, Result<(), String>)>();
    for (name, job) in jobs {
        let done = done.clone();
        std::thread::spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).map_err(|p| {
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default()
            });
            let _ = done.send((name, result));
        });
    }
    drop(done);
    for finished_so_far in 0..count {
        let left = deadline.saturating_duration_since(Instant::now());
        match finished.recv_timeout(left) {
            Ok((_, Ok(()))) => {}
            Ok((name, Err(message))) => panic!("{name} panicked: {message}"),
            Err(_) => panic!(
                "deadlock or hang: {} of {count} threads still running after {limit:?}",
                count - finished_so_far
            ),
        }
    }
}
