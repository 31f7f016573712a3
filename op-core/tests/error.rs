//! Tests of `Error`, `ResultExt` and the `op_requires!` macros.

use op_core::{Code, Error, Result, ResultExt, op_requires, op_requires_ok};

#[test]
fn constructors_set_the_code() {
    type Constructor = fn(String) -> Error;
    let cases: [(Constructor, Code); 16] = [
        (Error::cancelled, Code::Cancelled),
        (Error::unknown, Code::Unknown),
        (Error::invalid_argument, Code::InvalidArgument),
        (Error::deadline_exceeded, Code::DeadlineExceeded),
        (Error::not_found, Code::NotFound),
        (Error::already_exists, Code::AlreadyExists),
        (Error::permission_denied, Code::PermissionDenied),
        (Error::resource_exhausted, Code::ResourceExhausted),
        (Error::failed_precondition, Code::FailedPrecondition),
        (Error::aborted, Code::Aborted),
        (Error::out_of_range, Code::OutOfRange),
        (Error::unimplemented, Code::Unimplemented),
        (Error::internal, Code::Internal),
        (Error::unavailable, Code::Unavailable),
        (Error::data_loss, Code::DataLoss),
        (Error::unauthenticated, Code::Unauthenticated),
    ];
    for (i, (make, code)) in cases.into_iter().enumerate() {
        let err = make(format!("message {i}"));
        assert_eq!(err, Error::new(code, format!("message {i}")));
        assert_eq!(err.code(), code);
        assert_eq!(code.value(), i as i32 + 1);
        assert_eq!(Code::ALL[i], code);
        assert_eq!(err.message(), format!("message {i}"));
        assert!(err.context().is_empty());
        assert_eq!(err.to_string(), format!("{code}: message {i}"));
    }
}

#[test]
fn code_names() {
    assert_eq!(Code::Cancelled.value(), 1);
    assert_eq!(Code::Unauthenticated.value(), 16);
    assert_eq!(Code::FailedPrecondition.to_string(), "FailedPrecondition");
    assert_eq!(Code::FailedPrecondition.tf_name(), "FAILED_PRECONDITION");
    assert_eq!(Code::DataLoss.name(), "DataLoss");
    assert_eq!(Code::from_value(0), None);
}

#[test]
fn context_chain_and_display() {
    let err = Error::not_found("no kernel for Foo")
        .with_context("while instantiating node 'foo'")
        .with_context(String::from("in graph 'g'"));
    assert_eq!(err.code(), Code::NotFound);
    assert_eq!(err.message(), "no kernel for Foo");
    assert_eq!(
        err.context(),
        ["while instantiating node 'foo'", "in graph 'g'"]
    );
    assert_eq!(
        err.to_string(),
        "NotFound: no kernel for Foo\n\twhile instantiating node 'foo'\n\tin graph 'g'"
    );
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(err);
    assert!(boxed.to_string().starts_with("NotFound: "));
}

#[test]
fn result_ext() {
    let ok: Result<i32> = Ok(1);
    assert_eq!(ok.context("unused").unwrap(), 1);
    let ok: Result<i32> = Ok(1);
    let value = ok
        .with_context(|| -> String { panic!("context is lazy") })
        .unwrap();
    assert_eq!(value, 1);

    let err: Result<i32> = Err(Error::aborted("conflict"));
    let err = err
        .context("inner")
        .with_context(|| format!("outer {}", 2))
        .unwrap_err();
    assert_eq!(err.code(), Code::Aborted);
    assert_eq!(err.context(), ["inner", "outer 2"]);
}

fn checked_div(a: i32, b: i32) -> Result<i32> {
    op_requires!(b != 0, Code::InvalidArgument, "cannot divide {} by zero", a);
    op_requires!(
        !(a == i32::MIN && b == -1),
        Error::out_of_range(format!("{a} / {b} overflows")),
    );
    Ok(a / b)
}

#[test]
fn op_requires_returns_early_with_a_formatted_message() {
    assert_eq!(checked_div(7, 2).unwrap(), 3);
    let err = checked_div(7, 0).unwrap_err();
    assert_eq!(err, Error::invalid_argument("cannot divide 7 by zero"));
    let err = checked_div(i32::MIN, -1).unwrap_err();
    assert_eq!(err.code(), Code::OutOfRange);
    assert_eq!(err.message(), "-2147483648 / -1 overflows");
}

#[test]
fn op_requires_formats_only_on_failure() {
    fn check(cond: bool, formatted: &mut bool) -> Result<()> {
        let mut arg = || {
            *formatted = true;
            "x"
        };
        op_requires!(cond, Code::Internal, "{}", arg());
        Ok(())
    }
    let mut formatted = false;
    check(true, &mut formatted).unwrap();
    assert!(!formatted);
    assert!(check(false, &mut formatted).is_err());
    assert!(formatted);
}

#[test]
fn op_requires_accepts_inline_format_args_and_other_error_types() {
    fn boxed(n: usize) -> std::result::Result<usize, Box<dyn std::error::Error>> {
        op_requires!(n < 3, Code::OutOfRange, "n = {n} is not below 3");
        Ok(n)
    }
    assert_eq!(boxed(2).unwrap(), 2);
    assert_eq!(
        boxed(5).unwrap_err().to_string(),
        "OutOfRange: n = 5 is not below 3"
    );
}

fn sum_quotients(pairs: &[(i32, i32)]) -> Result<i32> {
    let mut sum = 0;
    for (i, &(a, b)) in pairs.iter().enumerate() {
        sum += op_requires_ok!(checked_div(a, b), "in pair {i} ({a}, {b})");
    }
    Ok(sum)
}

#[test]
fn op_requires_ok_yields_values_and_returns_errors_with_context() {
    assert_eq!(sum_quotients(&[(4, 2), (9, 3)]).unwrap(), 5);
    let err = sum_quotients(&[(4, 2), (1, 0), (9, 3)]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(err.message(), "cannot divide 1 by zero");
    assert_eq!(err.context(), ["in pair 1 (1, 0)"]);
}

#[test]
fn op_requires_ok_without_context_is_like_the_question_mark() {
    fn run(b: i32, reached: &mut bool) -> Result<i32> {
        let q = op_requires_ok!(checked_div(6, b));
        *reached = true;
        Ok(q)
    }
    let mut reached = false;
    assert_eq!(run(3, &mut reached).unwrap(), 2);
    assert!(reached);
    reached = false;
    assert_eq!(
        run(0, &mut reached).unwrap_err().code(),
        Code::InvalidArgument
    );
    assert!(!reached, "returned early");
}
