//! The `opkit` command-line tool, over the ops linked into it: the shipped
//! kernels (`op-kernels`). A crate with ops of its own makes the same tool
//! by calling [`opkit::cli::main`] from its own `main`.

fn main() -> std::process::ExitCode {
    opkit::cli::main()
}
