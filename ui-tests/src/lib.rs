//! Compile-fail tests for the proc macros live in `tests/`.
