//! Runs the real `xtask opdef` binary with piped stdin.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `cargo xtask opdef` with `input` on stdin.
fn run_opdef(input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("opdef")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("xtask runs");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn opdef_reads_stdin_and_reports_on_stdout_stderr_and_exit_status() {
    let input = concat!(
        r#"{"name":"ZeroOut","inputs":["to_zero: T"],"outputs":["zeroed: T"],"attrs":["T: {float, int32} = DT_INT32"]}"#,
        "\n\n",
        r#"{"name":"Broken","input":["x: float"]}"#,
        "\n",
        "not json\n",
        r#"{"name":"Counter","outputs":["n: int64"],"stateful":true}"#,
        "\n",
    );
    let output = run_opdef(input.as_bytes());

    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        stdout,
        r#"op {
  name: "ZeroOut"
  input_arg {
    name: "to_zero"
    type_attr: "T"
  }
  output_arg {
    name: "zeroed"
    type_attr: "T"
  }
  attr {
    name: "T"
    type: "type"
    default_value {
      type: DT_INT32
    }
    allowed_values {
      list {
        type: DT_FLOAT
        type: DT_INT32
      }
    }
  }
}
op {
  name: "Counter"
  output_arg {
    name: "n"
    type: DT_INT64
  }
  is_stateful: true
}
"#
    );
    assert_eq!(
        stderr,
        "Broken: unknown key \"input\" (did you mean \"inputs\"?)\n\
         line 4: invalid JSON at column 2: expected ident\n"
    );
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn opdef_exits_0_when_every_op_is_valid() {
    let output = run_opdef(br#"{"name": "Noop"}"#);
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "op {\n  name: \"Noop\"\n}\n"
    );
    assert_eq!(String::from_utf8(output.stderr).unwrap(), "");
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn help_lists_the_commands() {
    let output = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    assert!(help.contains("Usage: cargo xtask <COMMAND>"), "{help}");
    assert!(help.contains("opdef"), "{help}");
}
