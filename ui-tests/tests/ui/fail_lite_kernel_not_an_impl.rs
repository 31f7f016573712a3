use op_lite::lite_kernel;

#[lite_kernel(custom = "Sin")]
struct Sin;

fn main() {}
