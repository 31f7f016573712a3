//! Our shape functions at graph construction inside TensorFlow: an adapter
//! from TensorFlow's C shape context to our [`InferenceContext`].
//!
//! TensorFlow calls a shape function through a bare C function pointer
//! with no user data and no op name, so each op gets a function of its own:
//! [`SLOTS`] trampolines, one per exported op with a shape function, each
//! knowing its slot.
//!
//! The C context gives the input shapes (rank and dims, known or not) and
//! `type` attrs only: no other attr, no constant input values. So:
//!
//! | the op | its shapes in TensorFlow |
//! | --- | --- |
//! | has a shape function, and only `type` attrs (or none) | ours, run on the input shapes (input values unknown, as in a graph they may be) |
//! | has another attr (an `int`, a list length `N`...) | unknown: our function might read that attr, which TensorFlow does not show it |
//! | has no shape function | unknown |
//!
//! An output dim ours leaves unknown is written unknown, never guessed; an
//! output of unknown rank is left unknown. A shape function's error (an
//! input of the wrong rank) fails graph construction with our message.

use std::ffi::{CString, c_int};
use std::sync::OnceLock;

use op_core::registry::OpEntry;
use op_core::shape_inference::{InferenceContext, PartialShape};
use op_core::{AttrKind, AttrValue, DType, Error, Result, contain_panic};

use crate::api::{Api, ShapeFn, TF_ShapeHandle, TF_ShapeInferenceContext, TF_Status};
use crate::kernel::{API, input_types};
use crate::status::{check, set_error, status};

/// How many ops of one library can have their shape functions run: the
/// number of trampolines. The rest get unknown shapes.
pub const SLOTS: usize = 512;

/// The ops whose shape functions the trampolines run, by slot.
static OPS: OnceLock<Vec<&'static OpEntry>> = OnceLock::new();

/// What shapes an exported op gets in TensorFlow (see the [module
/// docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeSupport {
    /// Ours.
    Ours,
    /// Unknown, for this reason.
    Unknown(&'static str),
}

impl ShapeSupport {
    /// What `op` gets.
    pub fn of(op: &OpEntry) -> ShapeSupport {
        if op.shape_fn().is_none() {
            return ShapeSupport::Unknown("the op has no shape function");
        }
        let only_types = op
            .def()
            .attrs
            .iter()
            .all(|a| a.ty.kind == AttrKind::Type && !a.ty.is_list);
        if !only_types {
            return ShapeSupport::Unknown(
                "the op has an attr other than a type, which TensorFlow's C shape API does not give",
            );
        }
        ShapeSupport::Ours
    }
}

/// The C shape functions for `ops`, in order: a trampoline for each op
/// whose shapes are ours, while slots last, and the unknown-shape function
/// for the others. Call once, before the ops are registered.
pub(crate) fn functions(ops: &[&'static OpEntry]) -> Vec<(ShapeFn, ShapeSupport)> {
    let mut slotted = Vec::new();
    let functions = ops
        .iter()
        .map(|op| match ShapeSupport::of(op) {
            ShapeSupport::Ours if slotted.len() < SLOTS => {
                let function = TRAMPOLINES[slotted.len()];
                slotted.push(*op);
                (function, ShapeSupport::Ours)
            }
            ShapeSupport::Ours => (
                unknown_shape as ShapeFn,
                ShapeSupport::Unknown("the library has more ops with shape functions than slots"),
            ),
            unknown => (unknown_shape as ShapeFn, unknown),
        })
        .collect();
    let _ = OPS.set(slotted);
    functions
}

/// Unknown output shapes, which TensorFlow accepts in graphs (and checks
/// at run time).
pub(crate) unsafe extern "C" fn unknown_shape(
    ctx: *mut TF_ShapeInferenceContext,
    status: *mut TF_Status,
) {
    if let Some(api) = API.get() {
        // SAFETY: TensorFlow's live context and status.
        unsafe { (api.TF_ShapeInferenceContextSetUnknownShape)(ctx, status) };
    }
}

/// The shape function of slot `SLOT`.
unsafe extern "C" fn trampoline<const SLOT: usize>(
    ctx: *mut TF_ShapeInferenceContext,
    status: *mut TF_Status,
) {
    let (Some(api), Some(op)) = (API.get(), OPS.get().and_then(|ops| ops.get(SLOT))) else {
        // SAFETY: TensorFlow's live context and status.
        return unsafe { unknown_shape(ctx, status) };
    };
    // SAFETY: as above.
    let result = contain_panic("the shape function", || unsafe { infer(api, op, ctx) });
    if let Err(error) = result {
        set_error(api, status, &error);
    }
}

static TRAMPOLINES: [ShapeFn; SLOTS] = seq_macro::seq!(N in 0..512 { [#(trampoline::<N>,)*] });

/// A shape handle of the context, deleted when dropped.
struct Shape<'a>(&'a Api, *mut TF_ShapeHandle);

impl Drop for Shape<'_> {
    fn drop(&mut self) {
        // SAFETY: a handle TF_New* made (or TensorFlow returned as new),
        // deleted once.
        unsafe { (self.0.TF_DeleteShapeHandle)(self.1) };
    }
}

impl<'a> Shape<'a> {
    fn new(api: &'a Api) -> Shape<'a> {
        // SAFETY: makes an empty handle.
        Shape(api, unsafe { (api.TF_NewShapeHandle)() })
    }
}

/// Runs `op`'s shape function on the node TensorFlow is building.
///
/// # Safety
///
/// `ctx` is live.
unsafe fn infer(api: &Api, op: &OpEntry, ctx: *mut TF_ShapeInferenceContext) -> Result<()> {
    let def = op.def();
    // SAFETY: live context.
    let count = unsafe { (api.TF_ShapeInferenceContextNumInputs)(ctx) };
    let mut shapes = Vec::with_capacity(count.max(0) as usize);
    for i in 0..count as c_int {
        let handle = Shape::new(api);
        let status = status(api);
        // SAFETY: live context, handle and status.
        unsafe { (api.TF_ShapeInferenceContextGetInput)(ctx, i, handle.1, status) };
        check(api, status, || format!("reading the shape of input {i}"))?;
        // SAFETY: live handle.
        shapes.push(unsafe { partial_shape(api, ctx, &handle) });
    }
    let mut attrs: Vec<(&str, AttrValue)> = Vec::with_capacity(def.attrs.len());
    for attr in &def.attrs {
        let name = CString::new(attr.name.as_str())
            .map_err(|_| Error::internal("an attr name holds a NUL"))?;
        let mut value = 0;
        let status = status(api);
        // SAFETY: live context and status; `value` receives the type.
        unsafe {
            (api.TF_ShapeInferenceContext_GetAttrType)(ctx, name.as_ptr(), &mut value, status)
        };
        check(api, status, || format!("reading attr '{}'", attr.name))?;
        let dtype = DType::from_enum_value(value).ok_or_else(|| {
            Error::invalid_argument(format!("attr '{}' is TensorFlow dtype {value}", attr.name))
        })?;
        attrs.push((attr.name.as_str(), AttrValue::Type(dtype)));
    }
    let node = op.instance(&input_types(def, &attrs)?, &attrs)?;
    let constants = vec![None; shapes.len()];
    let mut inference = InferenceContext::new(def, &node, &shapes, &constants)?;
    let shape_fn = op
        .shape_fn()
        .ok_or_else(|| Error::internal("the op lost its shape function"))?;
    shape_fn(&mut inference)?;
    let unknown = status(api);
    // SAFETY: live context and status: every output unknown, then each
    // that can be written exactly.
    unsafe { (api.TF_ShapeInferenceContextSetUnknownShape)(ctx, unknown) };
    check(api, unknown, || "setting unknown output shapes".into())?;
    for (j, shape) in inference.output_shapes().iter().enumerate() {
        // SAFETY: live context.
        if let Some(handle) = unsafe { handle_of(api, ctx, shape) }? {
            let status = status(api);
            // SAFETY: live context, handle and status.
            unsafe { (api.TF_ShapeInferenceContextSetOutput)(ctx, j as c_int, handle.1, status) };
            check(api, status, || format!("setting the shape of output {j}"))?;
        }
    }
    Ok(())
}

/// A shape handle's rank and dims.
///
/// # Safety
///
/// `ctx` and the handle are live.
unsafe fn partial_shape(
    api: &Api,
    ctx: *mut TF_ShapeInferenceContext,
    handle: &Shape<'_>,
) -> PartialShape {
    // SAFETY: the caller's contract.
    if unsafe { (api.TF_ShapeInferenceContextRankKnown)(ctx, handle.1) } == 0 {
        return PartialShape::unknown();
    }
    // SAFETY: as above.
    let rank = unsafe { (api.TF_ShapeInferenceContextRank)(ctx, handle.1) };
    // SAFETY: makes an empty dimension handle, deleted below.
    let dim = unsafe { (api.TF_NewDimensionHandle)() };
    let dims = (0..rank)
        .map(|d| {
            // SAFETY: live context, shape and dim handles; `d` below the rank.
            unsafe {
                (api.TF_ShapeInferenceContextDim)(ctx, handle.1, d, dim);
                ((api.TF_DimensionHandleValueKnown)(dim) != 0)
                    .then(|| (api.TF_DimensionHandleValue)(dim).max(0) as usize)
            }
        })
        .collect();
    // SAFETY: made above, deleted once.
    unsafe { (api.TF_DeleteDimensionHandle)(dim) };
    PartialShape(Some(dims))
}

/// What `TF_ShapeInferenceContextVectorFromSize` makes an unknown dim of:
/// its `size_t` becomes the `int64` of TensorFlow's `Vector(size)`, and
/// `SIZE_MAX` becomes -1, `InferenceContext::kUnknownDim` (the C API has no
/// call of its own for an unknown dim). Seen in TensorFlow 2.21; the
/// plugin's Python tests check `[?]` outputs.
const UNKNOWN_DIM: usize = usize::MAX;

/// A handle of `shape`, or `None` when its rank is unknown.
///
/// # Safety
///
/// `ctx` is live.
unsafe fn handle_of<'a>(
    api: &'a Api,
    ctx: *mut TF_ShapeInferenceContext,
    shape: &PartialShape,
) -> Result<Option<Shape<'a>>> {
    let Some(dims) = &shape.0 else {
        return Ok(None);
    };
    if dims.is_empty() {
        // SAFETY: live context; a new handle.
        return Ok(Some(Shape(api, unsafe {
            (api.TF_ShapeInferenceContextScalar)(ctx)
        })));
    }
    let mut whole: Option<Shape<'a>> = None;
    for dim in dims {
        // SAFETY: live context; a new handle.
        let piece = Shape(api, unsafe {
            (api.TF_ShapeInferenceContextVectorFromSize)(ctx, dim.unwrap_or(UNKNOWN_DIM))
        });
        whole = Some(match whole {
            None => piece,
            Some(first) => {
                let joined = Shape::new(api);
                let status = status(api);
                // SAFETY: live context, handles and status.
                unsafe {
                    (api.TF_ShapeInferenceContextConcatenateShapes)(
                        ctx, first.1, piece.1, joined.1, status,
                    )
                };
                check(api, status, || "joining dims".into())?;
                joined
            }
        });
    }
    Ok(whole)
}
