//! Shared by the tests that run an example binary.

use std::path::PathBuf;

/// The binary of example `name`, which `cargo test` builds beside the test
/// binaries (`target/<profile>/examples/<name>`), or `None` when it is not
/// built: `cargo test -p examples --test <one>` alone does not build
/// examples. Under CI (`CI` set), where a plain `cargo test` always builds
/// them, a missing binary fails the test instead of skipping it.
pub fn example_binary(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let profile_dir = exe.parent()?.parent()?;
    let path = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if path.is_file() {
        return Some(path);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "the example binary {} is not built, which `cargo test` does",
        path.display()
    );
    eprintln!("the example binary {name} is not built; skipping (run `cargo test -p examples`)");
    None
}
