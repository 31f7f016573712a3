//! The `opkit` tool through its library entry point, as a user runs it.

use std::process::ExitCode;

/// Runs the tool; returns its status, stdout and stderr.
fn opkit(args: &[&str]) -> (ExitCode, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let argv = std::iter::once("opkit").chain(args.iter().copied());
    let status = opkit::cli::run(argv, &mut out, &mut err);
    (
        status,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn ops_lists_each_op_with_its_attrs_and_kernels() {
    let (status, out, err) = opkit(&["ops", "ZeroOutPolymorphic"]);
    assert_eq!(status, ExitCode::SUCCESS, "{err}");
    assert_eq!(
        out,
        "ZeroOutPolymorphic(to_zero: T) -> (zeroed: T)\n\
         \x20   attrs: T: {float, double, int32} = DT_INT32\n\
         \x20   cpu, 3 kernels: T in {float, double, int32}\n\
         1 ops, 3 kernels\n"
    );
}

#[test]
fn ops_without_a_filter_lists_every_linked_op() {
    let (status, out, _) = opkit(&["ops"]);
    assert_eq!(status, ExitCode::SUCCESS);
    let count = op_core::Registry::global().ops().count();
    assert!(out.ends_with(&format!("{count} ops, {} kernels\n", {
        op_core::Registry::global()
            .ops()
            .map(|op| op.kernels().len())
            .sum::<usize>()
    })));
    assert!(out.contains("StringToNumber(string_tensor: string) -> (output: out_type)"));
}

#[test]
fn a_usage_error_is_reported_on_stderr_with_status_2() {
    let (status, out, err) = opkit(&["bogus"]);
    assert_eq!(status, ExitCode::from(2));
    assert!(out.is_empty());
    assert!(err.contains("unrecognized subcommand 'bogus'"), "{err}");
}
