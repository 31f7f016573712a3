//! What the tests share: a kernel to launch.

#![allow(dead_code)]

#[allow(unused_imports)]
pub use op_cuda::testing::TWICE;
