//! Our kernels as PyTorch boxed kernels: what runs when PyTorch calls one
//! of the library's ops on CPU tensors.
//!
//! PyTorch's boxed kernel is a bare `void (*)(StableIValue* stack,
//! uint64_t num_args, uint64_t num_outputs)`: it gets no user data, so
//! each op needs a function of its own. The library has [`SLOTS`] of
//! them, [`TRAMPOLINES`], each knowing its slot; at load, op `i` of the
//! plan (and its gradient) is given a slot, and the trampoline reads its
//! op from [`OPS`].
//!
//! A call:
//! 1. takes every value off the stack into an owner (PyTorch hands over
//!    a new reference per tensor, and owns nothing it passed): tensors,
//!    lists, strings and optionals are freed on every path;
//! 2. lends each input tensor to our kernel without a copy when it is
//!    contiguous on the CPU; a non-contiguous one is first copied into a
//!    contiguous tensor PyTorch allocates (`aoti_torch_empty_strided` and
//!    `aoti_torch_copy_`), as `Tensor.contiguous()` would;
//! 3. reads the attrs by the slots of the op's [schema](crate::schema);
//!    a type attr that an input sets is that input's dtype;
//! 4. runs our kernel (made once per op, input dtypes and attrs, then
//!    cached), each output written into a tensor PyTorch allocates;
//! 5. on success, writes the outputs' handles over the stack; on failure
//!    (our error, or a contained panic), frees what it made and throws
//!    PyTorch's own `c10::Error` with our message, through
//!    `aoti_torch_check`: Python sees a `RuntimeError`.

use std::ffi::{CString, c_void};
use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

use op_core::registry::OpEntry;
use op_core::{AttrValue, DType, Error, ListValue, Result, contain_panic};
use op_host::kernel::{HostBuffer, OutputSink, lend_input};
use op_host::prepared::{Inputs, Prepared, PreparedCache};
use smallvec::SmallVec;

use crate::schema::{Schema, Slot};
use crate::shim::{AtenTensorHandle, BoxedKernel, Host, StableIValue};

/// How many ops (forward and gradient together) one library can give
/// PyTorch.
pub const SLOTS: usize = 1024;

/// One kernel function per slot.
pub static TRAMPOLINES: [BoxedKernel; SLOTS] =
    seq_macro::seq!(N in 0..1024 { [#(trampoline::<N>,)*] });

/// What one slot runs.
pub struct SlotOp {
    /// The forward op.
    pub entry: &'static OpEntry,
    /// The schema PyTorch called it by.
    pub schema: Schema,
    /// Whether the slot is the op's gradient.
    pub gradient: bool,
    /// `namespace::name`, for errors.
    pub qualified: String,
    /// The schema's tensor args' names, in order, for errors.
    pub tensor_names: Vec<String>,
}

/// PyTorch's ABI and the slots' ops, set once at load.
pub struct Loaded {
    /// PyTorch's functions.
    pub host: Host,
    /// The op of each slot.
    pub ops: Vec<SlotOp>,
}

/// What the load set ([`crate::load`]).
pub static OPS: OnceLock<Loaded> = OnceLock::new();

/// The boxed kernel of slot `SLOT`.
///
/// # Safety
///
/// PyTorch calls it with a stack of `max(num_args, num_outputs)` values
/// for the schema the slot's op was registered with.
unsafe extern "C-unwind" fn trampoline<const SLOT: usize>(
    stack: *mut StableIValue,
    num_args: u64,
    num_outputs: u64,
) {
    // SAFETY: the caller's contract.
    let failure = unsafe { call(SLOT, stack, num_args as usize, num_outputs as usize) };
    if let Err(message) = failure {
        // Nothing of ours is live here: the throw unwinds no Rust value.
        // SAFETY: as `raise` requires.
        unsafe { raise(message) }
    }
}

thread_local! {
    /// The message of the last error thrown on this thread: PyTorch's
    /// `c10::Error` copies it, but the throw never returns to free it.
    static MESSAGE: std::cell::RefCell<CString> = std::cell::RefCell::new(CString::default());
}

/// Throws `message` as PyTorch's `c10::Error`.
///
/// # Safety
///
/// Called from a boxed kernel that PyTorch called (its dispatcher
/// catches the throw), with no Rust value left to drop in any frame up to
/// it.
unsafe fn raise(message: CString) {
    let Some(loaded) = OPS.get() else {
        // No PyTorch: nothing called us.
        return;
    };
    let text = MESSAGE.with(|m| {
        *m.borrow_mut() = message;
        m.borrow().as_ptr()
    });
    // SAFETY: `aoti_torch_check(false, ...)` throws c10::Error, which
    // unwinds through the `extern "C-unwind"` trampoline (declared so)
    // into PyTorch's dispatcher; the strings are C strings that outlive
    // the call (static, or the thread's MESSAGE).
    unsafe {
        (loaded.host.raise)(
            false,
            c"op_torch::kernel".as_ptr(),
            c"op-torch/src/kernel.rs".as_ptr(),
            line!(),
            text,
        )
    }
}

/// Runs slot `slot`'s op on the stack; the message to throw otherwise.
///
/// # Safety
///
/// As [`trampoline`].
unsafe fn call(
    slot: usize,
    stack: *mut StableIValue,
    num_args: usize,
    num_outputs: usize,
) -> std::result::Result<(), CString> {
    let Some(loaded) = OPS.get() else {
        return Err(c"the library's ops were not registered with PyTorch".into());
    };
    let Some(op) = loaded.ops.get(slot) else {
        return Err(c"PyTorch called a kernel slot the library did not give out".into());
    };
    let host = &loaded.host;
    if num_args != op.schema.slots.len() {
        // Not the schema we registered: read nothing.
        return Err(message(
            op,
            &Error::internal(format!(
                "PyTorch passed {num_args} arguments, but the schema has {}",
                op.schema.slots.len()
            )),
        ));
    }
    // SAFETY: the caller's contract: `num_args` values, of the slots'
    // kinds; each is owned from here.
    let args: SmallVec<[Owned<'_>; 8]> = (0..num_args)
        .map(|i| unsafe { Owned::take(host, op.schema.slots[i].0, *stack.add(i)) })
        .collect();
    let outputs = contain_panic("the kernel", || run(host, op, &args, num_outputs));
    drop(args);
    match outputs {
        Ok(outputs) => {
            for (i, output) in outputs.into_iter().enumerate() {
                // SAFETY: the stack holds at least `num_outputs` values
                // (checked by `run`); PyTorch takes each handle's
                // reference.
                unsafe { *stack.add(i) = output.release() as StableIValue };
            }
            Ok(())
        }
        Err(error) => Err(message(op, &error)),
    }
}

/// The text PyTorch shows for `error` in `op`.
fn message(op: &SlotOp, error: &Error) -> CString {
    let error = error.clone().with_context(format!("in {}", op.qualified));
    op_host::status::c_message_of(&error)
}

/// A value taken off the stack, freed when dropped.
enum Owned<'h> {
    Tensor(TensorRef<'h>),
    List(&'h Host, *mut c_void, Slot),
    Str(&'h Host, *mut c_void),
    Optional(&'h Host, *mut StableIValue),
    Plain(StableIValue),
}

impl<'h> Owned<'h> {
    /// # Safety
    ///
    /// `value` is a value of `slot`'s kind that PyTorch handed over.
    unsafe fn take(host: &'h Host, slot: Slot, value: StableIValue) -> Owned<'h> {
        let pointer = value as usize as *mut c_void;
        match slot {
            Slot::Tensor => Owned::Tensor(TensorRef {
                host,
                handle: pointer,
            }),
            Slot::IntList | Slot::FloatList | Slot::BoolList | Slot::StrList => {
                Owned::List(host, pointer, slot)
            }
            Slot::Str => Owned::Str(host, pointer),
            Slot::OptionalScalarType if value != 0 => Owned::Optional(host, pointer.cast()),
            _ => Owned::Plain(value),
        }
    }
}

impl Drop for Owned<'_> {
    fn drop(&mut self) {
        // SAFETY: each handle is ours (taken off the stack) and freed once
        // here, by the function its kind is freed with; a list's strings
        // are its items, each owned too.
        unsafe {
            match *self {
                Owned::Tensor(_) | Owned::Plain(_) => {}
                Owned::List(host, list, slot) => {
                    if slot == Slot::StrList {
                        for item in list_items(host, list).unwrap_or_default() {
                            (host.torch.torch_delete_string)(item as usize as *mut c_void);
                        }
                    }
                    (host.torch.torch_delete_list)(list);
                }
                Owned::Str(host, string) => {
                    (host.torch.torch_delete_string)(string);
                }
                Owned::Optional(host, boxed) => {
                    if let Some(delete) = host.delete_stable_ivalue {
                        delete(boxed);
                    }
                }
            }
        }
    }
}

/// An owned tensor handle.
struct TensorRef<'h> {
    host: &'h Host,
    handle: AtenTensorHandle,
}

impl TensorRef<'_> {
    /// The handle, no longer ours.
    fn release(self) -> AtenTensorHandle {
        let handle = self.handle;
        std::mem::forget(self);
        handle
    }
}

impl Drop for TensorRef<'_> {
    fn drop(&mut self) {
        if !self.handle.is_null() {
            // SAFETY: an owned reference, freed once.
            unsafe { (self.host.torch.aoti_torch_delete_tensor_object)(self.handle) };
        }
    }
}

/// That a PyTorch call succeeded.
fn check(code: i32, what: &str) -> Result<()> {
    if code == 0 {
        Ok(())
    } else {
        Err(Error::internal(format!("PyTorch failed to {what}")))
    }
}

/// A list's items.
///
/// # Safety
///
/// `list` is a live list handle.
unsafe fn list_items(host: &Host, list: *mut c_void) -> Result<Vec<StableIValue>> {
    let mut len = 0usize;
    // SAFETY: the caller's contract.
    let code = unsafe { (host.torch.torch_list_size)(list, &mut len) };
    check(code, "read a list's size")?;
    (0..len)
        .map(|i| {
            let mut item = 0;
            // SAFETY: `i` is in the list.
            let code = unsafe { (host.torch.torch_list_get_item)(list, i, &mut item) };
            check(code, "read a list")?;
            Ok(item)
        })
        .collect()
}

/// A string handle's text.
///
/// # Safety
///
/// `string` is a live string handle.
unsafe fn string_bytes(host: &Host, string: *mut c_void) -> Result<Vec<u8>> {
    let (mut len, mut data) = (0usize, std::ptr::null());
    // SAFETY: the caller's contract.
    unsafe {
        check(
            (host.torch.torch_string_length)(string, &mut len),
            "read a string",
        )?;
        check(
            (host.torch.torch_string_c_str)(string, &mut data),
            "read a string",
        )?;
    }
    if data.is_null() {
        return Ok(Vec::new());
    }
    // SAFETY: `len` bytes at `data`, live while the handle is.
    Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) }.to_vec())
}

/// The kernels made, by op, input dtypes and attr values.
static CACHE: PreparedCache = PreparedCache::new();

thread_local! {
    /// The buffer each call writes its cache key into.
    static KEY: std::cell::RefCell<String> = std::cell::RefCell::new(String::with_capacity(128));
}

/// The kernel for `op` with these inputs and attrs, made once.
fn prepared(
    op: &SlotOp,
    key: &str,
    inputs: impl FnOnce() -> Vec<DType>,
    attrs: &[(&str, AttrValue)],
) -> Result<Arc<Prepared>> {
    CACHE.get_or_make(key, || {
        let types: Vec<op_core::InputTypes> = inputs().into_iter().map(Into::into).collect();
        Prepared::new(op.entry, op.gradient, &types, attrs, &op.qualified)
    })
}

/// An input, read: its dtype and dims, and the tensor whose memory is lent
/// (the contiguous copy, for a non-contiguous input).
struct Input<'h> {
    dtype: DType,
    dims: SmallVec<[usize; 8]>,
    data: *const u8,
    _copy: Option<TensorRef<'h>>,
}

/// Reads input `index` (`name`) of `op`.
fn read_input<'h>(
    host: &'h Host,
    op: &SlotOp,
    tensor: &TensorRef<'h>,
    name: &str,
) -> Result<Input<'h>> {
    let t = &host.torch;
    let (mut code, mut device, mut rank, mut sizes, mut contiguous) =
        (0, 0, 0i64, std::ptr::null_mut(), false);
    // SAFETY: a live tensor handle; each getter writes its out-parameter.
    unsafe {
        check(
            (t.aoti_torch_get_dtype)(tensor.handle, &mut code),
            "read a tensor's dtype",
        )?;
        check(
            (t.aoti_torch_get_device_type)(tensor.handle, &mut device),
            "read a tensor's device",
        )?;
        check(
            (t.aoti_torch_get_dim)(tensor.handle, &mut rank),
            "read a tensor's rank",
        )?;
        check(
            (t.aoti_torch_get_sizes)(tensor.handle, &mut sizes),
            "read a tensor's sizes",
        )?;
        check(
            (t.aoti_torch_is_contiguous)(tensor.handle, &mut contiguous),
            "read a tensor's layout",
        )?;
    }
    let dtype = host.dtype(code).ok_or_else(|| {
        Error::invalid_argument(format!(
            "{}: input '{name}' has PyTorch dtype code {code}, which has no dtype of ours",
            op.qualified
        ))
    })?;
    if device != host.cpu {
        return Err(Error::invalid_argument(format!(
            "{}: input '{name}' is not on the CPU (device type {device}); the library's kernels \
             here run on CPU tensors",
            op.qualified
        )));
    }
    let dims: SmallVec<[usize; 8]> = (0..rank.max(0) as usize)
        // SAFETY: `rank` sizes, borrowed from the live tensor.
        .map(|d| unsafe { *sizes.add(d) }.max(0) as usize)
        .collect();
    let copy = if contiguous {
        None
    } else {
        Some(empty_like(host, dtype, &dims, |copy| {
            // SAFETY: two live tensors of one dtype and shape.
            check(
                unsafe { (t.aoti_torch_copy_)(copy, tensor.handle, 0) },
                "make an input contiguous",
            )
        })?)
    };
    let source = copy.as_ref().map_or(tensor.handle, |c| c.handle);
    let mut data = std::ptr::null_mut();
    // SAFETY: a live tensor handle.
    let code = unsafe { (t.aoti_torch_get_data_ptr)(source, &mut data) };
    check(code, "read a tensor's data")?;
    Ok(Input {
        dtype,
        dims,
        data: data.cast(),
        _copy: copy,
    })
}

/// A new contiguous CPU tensor of `dtype` and `dims`, passed to `fill`.
fn empty_like<'h>(
    host: &'h Host,
    dtype: DType,
    dims: &[usize],
    fill: impl FnOnce(AtenTensorHandle) -> Result<()>,
) -> Result<TensorRef<'h>> {
    let code = host
        .code(dtype)
        .ok_or_else(|| Error::unimplemented(format!("{dtype} has no PyTorch dtype")))?;
    let sizes: SmallVec<[i64; 8]> = dims.iter().map(|d| *d as i64).collect();
    let mut strides: SmallVec<[i64; 8]> = smallvec::smallvec![1; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * sizes[d + 1].max(1);
    }
    let mut handle = std::ptr::null_mut();
    // SAFETY: `dims.len()` sizes and strides; the handle is written.
    let code = unsafe {
        (host.torch.aoti_torch_empty_strided)(
            dims.len() as i64,
            sizes.as_ptr(),
            strides.as_ptr(),
            code,
            host.cpu,
            0,
            &mut handle,
        )
    };
    check(code, "allocate a tensor")?;
    let tensor = TensorRef { host, handle };
    fill(tensor.handle)?;
    Ok(tensor)
}

/// The outputs, as tensors PyTorch allocates.
struct TorchOutputs<'h> {
    host: &'h Host,
    made: SmallVec<[TensorRef<'h>; 4]>,
    expected: usize,
}

impl OutputSink for TorchOutputs<'_> {
    fn allocate(&mut self, index: usize, dtype: DType, dims: &[usize]) -> Result<HostBuffer> {
        if index != self.made.len() || index >= self.expected {
            return Err(Error::internal(format!(
                "the kernel made output {index}, but PyTorch expects {}",
                self.expected
            )));
        }
        let tensor = empty_like(self.host, dtype, dims, |_| Ok(()))?;
        let mut data = std::ptr::null_mut();
        // SAFETY: a live tensor handle.
        let code = unsafe { (self.host.torch.aoti_torch_get_data_ptr)(tensor.handle, &mut data) };
        check(code, "read a tensor's data")?;
        self.made.push(tensor);
        let len = dims.iter().product::<usize>() * dtype.size_of().unwrap_or(0);
        Ok(HostBuffer {
            data: data.cast(),
            len,
        })
    }
}

/// Runs `op` on `args`; the outputs, owned.
fn run<'h>(
    host: &'h Host,
    op: &SlotOp,
    args: &[Owned<'h>],
    num_outputs: usize,
) -> Result<SmallVec<[TensorRef<'h>; 4]>> {
    if num_outputs != op.schema.returns {
        return Err(Error::internal(format!(
            "PyTorch expects {num_outputs} returns, but the schema has {}",
            op.schema.returns
        )));
    }
    let def = op.entry.def();
    let tensor_names = &op.tensor_names;
    let mut inputs: SmallVec<[Input<'_>; 8]> = SmallVec::new();
    let mut attrs: SmallVec<[(&str, AttrValue); 4]> = SmallVec::new();
    for (arg, (slot, attr)) in args.iter().zip(&op.schema.slots) {
        match (arg, attr) {
            (Owned::Tensor(tensor), _) => {
                let name = tensor_names.get(inputs.len()).map_or("?", String::as_str);
                inputs.push(read_input(host, op, tensor, name)?);
            }
            (arg, Some(name)) => {
                // SAFETY: each owner holds a live value of its slot's kind.
                if let Some(value) = unsafe { attr_value(host, op, *slot, arg, name) }? {
                    attrs.push((name, value));
                }
            }
            (_, None) => return Err(Error::internal("a non-tensor slot names no attr")),
        }
    }
    // A type attr an input sets is that input's dtype.
    let n_forward = def.inputs.len();
    for (arg, input) in def
        .inputs
        .iter()
        .zip(&inputs[..n_forward.min(inputs.len())])
    {
        if let Some(attr) = arg.type_attr()
            && !attrs.iter().any(|(name, _)| *name == attr)
        {
            attrs.push((attr, AttrValue::Type(input.dtype)));
        }
    }
    // The cache's key, written into this thread's buffer: no allocation
    // once the buffer has grown.
    let prepared = KEY.with(|key| {
        let mut key = key.borrow_mut();
        key.clear();
        let _ = write!(key, "{}", op.qualified);
        for input in &inputs {
            let _ = write!(key, "|{}", input.dtype.enum_value());
        }
        let _ = write!(key, "|{attrs:?}");
        let forward = || {
            inputs
                .iter()
                .take(n_forward)
                .map(|i| i.dtype)
                .collect::<Vec<DType>>()
        };
        prepared(op, &key, forward, &attrs)
    })?;
    let mut lent = Inputs::new();
    for (i, input) in inputs.iter().enumerate() {
        let len = input.dims.iter().product::<usize>() * input.dtype.size_of().unwrap_or(0);
        let bytes: &[u8] = if len == 0 || input.data.is_null() {
            &[]
        } else {
            // SAFETY: a contiguous tensor of `dims`' elements of `dtype`,
            // live (its handle is held) until `lent` is dropped below.
            unsafe { std::slice::from_raw_parts(input.data, len) }
        };
        // SAFETY: as above; nothing writes an input during the call.
        let tensor = unsafe { lend_input(input.dtype, &input.dims, bytes) }.map_err(|e| {
            e.with_context(format!(
                "reading input '{}'",
                tensor_names.get(i).map_or("?", String::as_str)
            ))
        })?;
        lent.push(tensor);
    }
    let mut outputs = TorchOutputs {
        host,
        made: SmallVec::new(),
        expected: num_outputs,
    };
    // SAFETY: each buffer the sink gives is a new tensor's, its alone.
    unsafe { prepared.run(lent, &mut outputs) }?;
    if outputs.made.len() != num_outputs {
        return Err(Error::internal(format!(
            "the kernel made {} outputs, but PyTorch expects {num_outputs}",
            outputs.made.len()
        )));
    }
    Ok(outputs.made)
}

/// The names of a schema's tensor args, in order.
pub fn tensor_arg_names(schema: &Schema) -> Vec<String> {
    let open = schema.text.find('(').map_or(0, |i| i + 1);
    let close = schema.text.find(") ->").unwrap_or(schema.text.len());
    schema.text[open..close]
        .split(", ")
        .filter_map(|a| a.strip_prefix("Tensor "))
        .map(str::to_owned)
        .collect()
}

/// Attr `name`'s value from its stack value; `None` for a `ScalarType?`
/// left `None` (the attr's default).
///
/// # Safety
///
/// `arg` holds a live value of `slot`'s kind.
unsafe fn attr_value(
    host: &Host,
    op: &SlotOp,
    slot: Slot,
    arg: &Owned<'_>,
    name: &str,
) -> Result<Option<AttrValue>> {
    let dtype = |code: StableIValue| {
        let code = code as u32 as i32;
        host.dtype(code).map(AttrValue::Type).ok_or_else(|| {
            Error::invalid_argument(format!(
                "{}: attr '{name}' is PyTorch dtype code {code}, which has no dtype of ours",
                op.qualified
            ))
        })
    };
    // SAFETY: the caller's contract, for each kind.
    unsafe {
        Ok(Some(match (slot, arg) {
            (Slot::Int, Owned::Plain(v)) => AttrValue::Int(*v as i64),
            (Slot::Float, Owned::Plain(v)) => AttrValue::Float(f64::from_bits(*v) as f32),
            (Slot::Bool, Owned::Plain(v)) => AttrValue::Bool(*v as u8 != 0),
            (Slot::ScalarType, Owned::Plain(v)) => dtype(*v)?,
            (Slot::OptionalScalarType, Owned::Plain(_)) => return Ok(None),
            (Slot::OptionalScalarType, Owned::Optional(_, boxed)) => dtype(**boxed)?,
            (Slot::Str, Owned::Str(_, string)) => AttrValue::String(string_bytes(host, *string)?),
            (_, Owned::List(_, list, _)) => {
                let items = list_items(host, *list)?;
                AttrValue::List(match slot {
                    Slot::IntList => ListValue::Int(items.iter().map(|v| *v as i64).collect()),
                    Slot::FloatList => {
                        ListValue::Float(items.iter().map(|v| f64::from_bits(*v) as f32).collect())
                    }
                    Slot::BoolList => {
                        ListValue::Bool(items.iter().map(|v| *v as u8 != 0).collect())
                    }
                    _ => ListValue::String(
                        items
                            .iter()
                            .map(|v| string_bytes(host, *v as usize as *mut c_void))
                            .collect::<Result<_>>()?,
                    ),
                })
            }
            _ => {
                return Err(Error::internal(format!(
                    "attr '{name}' is not of its slot's kind"
                )));
            }
        }))
    }
}
