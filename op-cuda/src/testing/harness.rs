//! A test harness ([libtest-mimic]) for test files whose tests need
//! something of the machine: a GPU, NVRTC, or the absence of either.
//!
//! libtest's `#[test]` cannot decide at run time that a test did not run:
//! a test that returns early on a machine without a GPU shows as `ok`, and
//! nothing in `cargo test`'s output tells that the GPU half of the suite
//! did not run. Here each test declares what it [`Needs`]; where the
//! machine lacks it, the test is not run and shows as
//!
//! ```text
//! test gemm_matches_the_cpu ... ignored (needs a GPU; no CUDA driver: libcuda.so was not found (...))
//! ```
//!
//! and counts in the summary's `N ignored`. Where the machine has it, the
//! test runs like any other.
//!
//! The decision is made when the test runs, not with libtest's
//! `#[ignore]`: these tests are not `#[ignore]`d, so `cargo test --
//! --ignored` selects none of them, and `--include-ignored` changes
//! nothing: neither can make a test run that this machine cannot run, nor
//! turn it into a failure.
//!
//! libtest-mimic does not capture a test's output: what a test prints
//! shows in the run as it happens (`--nocapture` is accepted and changes
//! nothing).
//!
//! [libtest-mimic]: https://docs.rs/libtest-mimic

use std::process::ExitCode;

use libtest_mimic::{Arguments, Completion, Conclusion, Trial};

use crate::GpuDevice;
use crate::driver::{self, Library};

/// What a test needs of the machine to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Nothing: it runs everywhere.
    Nothing,
    /// GPU 0, usable (a CUDA driver and a device); the test takes it with
    /// [`gpu`](super::gpu).
    Gpu,
    /// NVRTC, which compiles CUDA C++ without a GPU.
    Nvrtc,
    /// No CUDA driver: a test of the errors a machine without one gives.
    NoDriver,
    /// No NVRTC: a test of the error compiling gives without it.
    NoNvrtc,
}

impl Needs {
    /// Why this machine cannot run a test that needs `self`, or `None` if
    /// it can.
    ///
    /// ```
    /// use op_cuda::testing::harness::Needs;
    /// assert_eq!(Needs::Nothing.unmet(), None);
    /// // Exactly one of the two holds on any machine.
    /// assert_ne!(Needs::Nvrtc.unmet().is_some(), Needs::NoNvrtc.unmet().is_some());
    /// ```
    pub fn unmet(self) -> Option<String> {
        let absent = |library, what| {
            driver::is_present(library)
                .then(|| format!("needs a machine without {what}, and this one has it"))
        };
        match self {
            Needs::Nothing => None,
            Needs::Gpu => GpuDevice::get(0)
                .err()
                .map(|e| format!("needs a GPU; {}", e.message())),
            Needs::Nvrtc => driver::require(Library::Nvrtc)
                .err()
                .map(|e| format!("needs NVRTC; {}", e.message())),
            Needs::NoDriver => absent(Library::Driver, "a CUDA driver"),
            Needs::NoNvrtc => absent(Library::Nvrtc, "NVRTC"),
        }
    }
}

/// The tests of one test file, each with what it needs; [`run`](Self::run)
/// runs them as libtest does, with its command-line arguments (filters,
/// `--exact`, `--skip`, `--test-threads`, `--list`, `--format`).
///
/// [`test_main!`](crate::test_main) writes the `main` that builds one.
#[derive(Debug, Default)]
pub struct Tests {
    trials: Vec<Trial>,
}

impl Tests {
    /// No tests yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the test `name`, which runs `test` (a panic fails it) where the
    /// machine has what it `needs`, and is ignored with the reason where it
    /// has not.
    pub fn add(mut self, name: &str, needs: Needs, test: fn()) -> Self {
        self.trials
            .push(Trial::ignorable_test(name, move || match needs.unmet() {
                Some(reason) => Ok(Completion::ignored_with(reason)),
                None => {
                    test();
                    Ok(Completion::Completed)
                }
            }));
        self
    }

    /// Runs the tests the command line selects, prints libtest's summary
    /// (`N passed; N failed; N ignored; ...`), and returns the exit code:
    /// failure if any test failed.
    pub fn run(self) -> ExitCode {
        self.run_with(&Arguments::from_args()).exit_code()
    }

    fn run_with(self, args: &Arguments) -> Conclusion {
        libtest_mimic::run(args, self.trials)
    }
}

/// Writes a test file's `main` (a `[[test]]` with `harness = false`): each
/// test function named, with what it needs ([`Needs`]; nothing if left
/// out).
///
/// ```no_run
/// fn entry_names_carry_the_dtype() { /* runs everywhere */ }
/// fn kernels_compile_to_ptx() { /* needs NVRTC */ }
/// fn a_kernel_launches() { let _gpu = op_cuda::testing::gpu(); }
///
/// op_cuda::test_main! {
///     entry_names_carry_the_dtype,
///     kernels_compile_to_ptx: Nvrtc,
///     a_kernel_launches: Gpu,
/// }
/// ```
///
/// A test function left out of the list is never called, which the
/// compiler's dead-code warning points out.
#[macro_export]
macro_rules! test_main {
    (@needs) => {
        $crate::testing::harness::Needs::Nothing
    };
    (@needs $needs:ident) => {
        $crate::testing::harness::Needs::$needs
    };
    ($($test:ident $(: $needs:ident)?),* $(,)?) => {
        fn main() -> ::std::process::ExitCode {
            $crate::testing::harness::Tests::new()
                $(.add(
                    ::std::stringify!($test),
                    $crate::test_main!(@needs $($needs)?),
                    $test,
                ))*
                .run()
        }
    };
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use libtest_mimic::{Arguments, Conclusion};

    use super::{Needs, Tests};

    static RAN_EVERYWHERE: AtomicUsize = AtomicUsize::new(0);
    static RAN_ON_A_GPU: AtomicUsize = AtomicUsize::new(0);
    static RAN_WITHOUT_A_DRIVER: AtomicUsize = AtomicUsize::new(0);

    fn everywhere() {
        RAN_EVERYWHERE.fetch_add(1, Ordering::SeqCst);
    }
    fn on_a_gpu() {
        RAN_ON_A_GPU.fetch_add(1, Ordering::SeqCst);
    }
    fn without_a_driver() {
        RAN_WITHOUT_A_DRIVER.fetch_add(1, Ordering::SeqCst);
    }
    fn fails() {
        panic!("a failing test");
    }

    /// Runs `tests` with `flags`, its report written to a file (the run's
    /// own output would show a failure in this passing test's run);
    /// returns the conclusion and the report.
    fn run(tests: Tests, flags: &[&str]) -> (Conclusion, String) {
        let log = std::env::temp_dir().join(format!(
            "op-cuda-harness-{}-{}.log",
            std::process::id(),
            flags.join("")
        ));
        let log_arg = format!("--logfile={}", log.display());
        let mut argv = vec!["harness-test", "--test-threads=1", &log_arg];
        argv.extend(flags);
        let conclusion = tests.run_with(&Arguments::from_iter(argv));
        let report = std::fs::read_to_string(&log).unwrap();
        std::fs::remove_file(&log).unwrap();
        (conclusion, report)
    }

    /// One test that fails, and three that pass or are ignored according
    /// to the machine: with no flags, or with `--include-ignored`, the
    /// ones it cannot run are ignored with the reason, never run nor
    /// failed.
    #[test]
    fn a_test_runs_where_the_machine_has_what_it_needs_and_is_ignored_elsewhere() {
        let gpu = Needs::Gpu.unmet();
        let no_driver = Needs::NoDriver.unmet();
        assert!(
            gpu.is_some() || no_driver.is_some(),
            "a GPU without a driver"
        );
        for (round, flags) in [&[][..], &["--include-ignored"]].into_iter().enumerate() {
            let tests = Tests::new()
                .add("everywhere", Needs::Nothing, everywhere)
                .add("on_a_gpu", Needs::Gpu, on_a_gpu)
                .add("without_a_driver", Needs::NoDriver, without_a_driver)
                .add("fails", Needs::Nothing, fails);
            let (conclusion, report) = run(tests, flags);
            let runs = round + 1;
            assert_eq!(RAN_EVERYWHERE.load(Ordering::SeqCst), runs);
            let ran = |unmet: &Option<String>| runs * usize::from(unmet.is_none());
            assert_eq!(RAN_ON_A_GPU.load(Ordering::SeqCst), ran(&gpu));
            assert_eq!(RAN_WITHOUT_A_DRIVER.load(Ordering::SeqCst), ran(&no_driver));
            let ignored = u64::from(gpu.is_some()) + u64::from(no_driver.is_some());
            assert_eq!(conclusion.num_failed, 1, "{report}");
            assert_eq!(conclusion.num_passed, 3 - ignored, "{report}");
            assert_eq!(conclusion.num_ignored, ignored, "{report}");
            for (name, unmet) in [("on_a_gpu", &gpu), ("without_a_driver", &no_driver)] {
                let line = match unmet {
                    Some(reason) => format!("test {name} ... ignored ({reason})"),
                    None => format!("test {name} ... ok"),
                };
                let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
                assert!(
                    report.lines().any(|l| words(l) == words(&line)),
                    "{line} in {report}"
                );
            }
            let summary = format!("{} passed; 1 failed; {ignored} ignored", 3 - ignored);
            assert!(report.contains(&summary), "{summary} in {report}");
        }
        // `--ignored` selects the `#[ignore]`d tests: these are not.
        let tests = Tests::new().add("on_a_gpu", Needs::Gpu, on_a_gpu);
        let (conclusion, _) = run(tests, &["--ignored"]);
        assert_eq!(
            (conclusion.num_ignored, conclusion.num_filtered_out),
            (0, 1)
        );
    }

    #[test]
    fn the_reasons_say_what_is_missing() {
        match Needs::Gpu.unmet() {
            Some(reason) => assert!(reason.starts_with("needs a GPU; "), "{reason}"),
            None => assert!(crate::GpuDevice::get(0).is_ok()),
        }
        match Needs::NoDriver.unmet() {
            Some(reason) => assert_eq!(
                reason,
                "needs a machine without a CUDA driver, and this one has it"
            ),
            None => assert!(Needs::Gpu.unmet().is_some()),
        }
    }
}
