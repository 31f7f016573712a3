//! The kernels the framework ships.
