//! Tensors to and from NumPy's `.npy` files (ndarray-npy), for the tool's
//! inputs and outputs: bool, the integer types and float32/float64.

use std::path::Path;

use ndarray::{ArrayD, IxDyn};
use ndarray_npy::{ReadNpyError, read_npy, write_npy};
use op_core::{Code, DType, Error, Result, Tensor};

/// Calls `$body` with `$t` bound to the element type of each dtype a
/// `.npy` file here can hold, as `$dtype => { ... }` arms of a match.
macro_rules! npy_types {
    ($m:ident) => {
        $m! {
            DType::F32 => f32,
            DType::F64 => f64,
            DType::I32 => i32,
            DType::I64 => i64,
            DType::Bool => bool,
            DType::U8 => u8,
            DType::I8 => i8,
            DType::I16 => i16,
            DType::U16 => u16,
            DType::U32 => u32,
            DType::U64 => u64,
        }
    };
}

/// Reads the `.npy` file at `path` as a tensor of the file's dtype.
///
/// Returns an `InvalidArgument` error naming the file for a dtype this
/// reader does not take (strings, complex, half) or a malformed file, and
/// an I/O error for a missing file.
pub fn read(path: &Path) -> Result<Tensor> {
    macro_rules! try_each {
        ($($dtype:path => $t:ty,)*) => {{
            $(
                match read_npy::<_, ArrayD<$t>>(path) {
                    Ok(array) => return Ok(Tensor::from_array(array)),
                    Err(ReadNpyError::WrongDescriptor(_)) => {}
                    Err(e) => return Err(read_error(path, e)),
                }
            )*
        }};
    }
    npy_types!(try_each);
    Err(Error::invalid_argument(format!(
        "{}: the array's dtype is not one of bool, int8-64, uint8-64, float32, float64",
        path.display()
    )))
}

fn read_error(path: &Path, e: ReadNpyError) -> Error {
    match e {
        ReadNpyError::Io(io) => Error::new(
            Code::from_io_error(&io),
            format!("cannot read {}: {io}", path.display()),
        ),
        other => Error::invalid_argument(format!(
            "{}: not a valid .npy file: {other}",
            path.display()
        )),
    }
}

/// Writes `tensor` to `path` as a `.npy` file, creating its folder.
///
/// Returns an `InvalidArgument` error for a dtype `.npy` files here do not
/// take, and an I/O error naming the file.
pub fn write(path: &Path, tensor: &Tensor) -> Result<()> {
    // A fetch of a scoped node (`layer1/MatMul`) is a file in a folder.
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| {
            Error::new(
                Code::from_io_error(&e),
                format!("cannot create {}: {e}", parent.display()),
            )
        })?;
    }
    macro_rules! write_as {
        ($($dtype:path => $t:ty,)*) => {
            match tensor.dtype() {
                $($dtype => {
                    let view = tensor.view::<$t>()?;
                    let view = view.into_shape_with_order(IxDyn(tensor.dims()))
                        .map_err(|e| Error::internal(e.to_string()))?;
                    write_npy(path, &view)
                })*
                other => {
                    return Err(Error::invalid_argument(format!(
                        "{}: a {other} tensor cannot be written as .npy here",
                        path.display()
                    )));
                }
            }
        };
    }
    npy_types!(write_as)
        .map_err(|e| Error::invalid_argument(format!("cannot write {}: {e}", path.display())))
}
