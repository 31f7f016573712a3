// `require_linked!` takes crate names as Rust writes them, separated by
// commas: each other form is one error saying what to write instead.

op_core::require_linked!();
op_core::require_linked!("my-kernels");
op_core::require_linked!(my_kernels::ops);
op_core::require_linked!(my_kernels other_kernels);

fn main() {}
