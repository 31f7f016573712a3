//! Every mistake an author can make in a macro is a compile error that points
//! at the author's own token and says how to fix it. Each case is a file in
//! `tests/ui/` with its expected compiler output beside it.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass_*.rs");
    t.compile_fail("tests/ui/fail_*.rs");
}
