//! What the tests share: finding a GPU, or saying why a test is skipped.

#![allow(dead_code)]

#[allow(unused_imports)]
pub use op_cuda::testing::{gpu_or_skip, nvrtc_or_skip};

#[allow(unused_imports)]
pub use op_cuda::testing::TWICE;
