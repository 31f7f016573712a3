//! The variable ops (`VarHandleOp`, `ReadVariableOp`, `AssignVariableOp`,
//! `VarIsInitializedOp`, `DestroyResourceOp`) and the typed `Variable`:
//! create, read and assign; named sharing; the errors (never assigned,
//! wrong dtype, wrong shape, destroyed, wrong resource type); destroying
//! named and owning handles; the variable freed with its last owning
//! handle; checkpoint round trips; the shape functions; the registered
//! ops; and many threads on one variable.

use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

use op_core::checkpoint::Saveable;
use op_core::resource::Resource;
use op_core::shape_inference::testing::ShapeTest;
use op_core::{Code, DType, OpCall, Registry, ResourceHandle, Result, Runtime, ShapeValue, Tensor};
use op_kernels::hash_table::SimpleHashTableHandle;
use op_kernels::variable::{Var, Variable};

mod common;
use common::{assert_contains, run_jobs};

const HANDLE: &str = "VarHandleOp";
const READ: &str = "ReadVariableOp";
const ASSIGN: &str = "AssignVariableOp";
const IS_INITIALIZED: &str = "VarIsInitializedOp";
const DESTROY: &str = "DestroyResourceOp";
const OPS: [&str; 5] = [HANDLE, READ, ASSIGN, IS_INITIALIZED, DESTROY];

fn i64s(values: &[i64]) -> Tensor {
    Tensor::from_vec([values.len()], values.to_vec()).unwrap()
}

fn scalar_shape() -> ShapeValue {
    ShapeValue::from_sizes(&[])
}

/// `VarHandleOp` with these names, for `dtype` and an unknown shape.
fn handle_op(rt: &Runtime, container: &str, shared_name: &str, dtype: DType) -> Tensor {
    op_kernels::link();
    let mut out = OpCall::new(HANDLE)
        .attr("container", container)
        .attr("shared_name", shared_name)
        .attr("dtype", dtype)
        .attr("shape", ShapeValue::unknown_rank())
        .run_on(rt)
        .unwrap();
    assert_eq!(out.len(), 1);
    out.remove(0)
}

fn assign(rt: &Runtime, handle: &Tensor, value: Tensor) -> Result<()> {
    OpCall::new(ASSIGN)
        .input(handle)
        .input(value)
        .run_on(rt)
        .map(|out| assert!(out.is_empty()))
}

fn read(rt: &Runtime, handle: &Tensor, dtype: DType) -> Result<Tensor> {
    OpCall::new(READ)
        .input(handle)
        .attr("dtype", dtype)
        .run_on(rt)
        .map(|mut out| out.remove(0))
}

fn is_initialized(rt: &Runtime, handle: &Tensor) -> bool {
    let out = OpCall::new(IS_INITIALIZED)
        .input(handle)
        .run_on(rt)
        .unwrap();
    out[0].scalar_value::<bool>().unwrap()
}

fn destroy(rt: &Runtime, handle: &Tensor, ignore_lookup_error: bool) -> Result<()> {
    OpCall::new(DESTROY)
        .input(handle)
        .attr("ignore_lookup_error", ignore_lookup_error)
        .run_on(rt)
        .map(drop)
}

#[test]
fn create_read_assign() {
    op_kernels::link();
    let v = Variable::new(i64s(&[1, 2, 3])).unwrap();
    assert_eq!(v.dtype(), DType::I64);
    assert_eq!(v.shape(), &ShapeValue::from_sizes(&[3]));
    assert!(v.is_initialized().unwrap());
    assert_eq!(v.read().unwrap().as_slice::<i64>().unwrap(), [1, 2, 3]);
    v.assign(i64s(&[4, 5, 6])).unwrap();
    assert_eq!(v.read().unwrap().as_slice::<i64>().unwrap(), [4, 5, 6]);

    // Strings, bools, floats and complex numbers, on their own runtime.
    let rt = Runtime::new();
    let s = Variable::new_on(&rt, Tensor::strings([2], ["a", "bc"]).unwrap()).unwrap();
    s.assign(Tensor::strings([2], ["x", ""]).unwrap()).unwrap();
    assert_eq!(
        s.read().unwrap().as_slice::<Vec<u8>>().unwrap(),
        [b"x".to_vec(), Vec::new()]
    );
    let b = Variable::new_on(&rt, Tensor::scalar(true)).unwrap();
    b.assign(Tensor::scalar(false)).unwrap();
    assert!(!b.read().unwrap().scalar_value::<bool>().unwrap());
    let f = Variable::new_on(&rt, Tensor::from_vec([2, 2], vec![0.5f32; 4]).unwrap()).unwrap();
    assert_eq!(f.read().unwrap().dims(), [2, 2]);
    let c = Variable::new_on(&rt, Tensor::scalar(op_core::Complex64::new(1.0, -1.0))).unwrap();
    assert_eq!(
        c.read()
            .unwrap()
            .scalar_value::<op_core::Complex64>()
            .unwrap(),
        op_core::Complex64::new(1.0, -1.0)
    );
}

#[test]
fn the_ops_directly_anonymous() {
    let rt = Runtime::new();
    let handle = handle_op(&rt, "", "", DType::F64);
    let resource = handle.scalar_value::<ResourceHandle>().unwrap();
    assert!(
        resource.is_owning(),
        "an empty shared_name makes an owning handle"
    );
    assert!(
        resource.name.starts_with("_anonymous_"),
        "{}",
        resource.name
    );
    assert!(!is_initialized(&rt, &handle));
    let value = Tensor::from_vec([2], vec![1.5f64, -2.0]).unwrap();
    assign(&rt, &handle, value.clone()).unwrap();
    assert!(is_initialized(&rt, &handle));
    assert_eq!(read(&rt, &handle, DType::F64).unwrap(), value);
    // A read shares the value's buffer; writing to it copies, so the
    // variable keeps its value.
    let mut snapshot = read(&rt, &handle, DType::F64).unwrap();
    snapshot.as_slice_mut::<f64>().unwrap()[0] = 99.0;
    assert_eq!(read(&rt, &handle, DType::F64).unwrap(), value);
    // Each run of the op makes a new variable, even on one node.
    let other = handle_op(&rt, "", "", DType::F64);
    assert_ne!(other, handle);
    assert!(!is_initialized(&rt, &other));
    // An assign may change the shape (no validate_shape).
    assign(&rt, &handle, Tensor::scalar(3.0f64)).unwrap();
    assert_eq!(
        read(&rt, &handle, DType::F64).unwrap().dims(),
        [] as [usize; 0]
    );
}

#[test]
fn debug_name_and_allowed_devices_are_accepted_and_change_nothing() {
    op_kernels::link();
    let rt = Runtime::new();
    let plain = handle_op(&rt, "", "same", DType::F32);
    let hinted = OpCall::new(HANDLE)
        .attr("shared_name", "same")
        .attr("dtype", DType::F32)
        .attr("shape", ShapeValue::unknown_rank())
        .attr("debug_name", "my_variable")
        .attr(
            "allowed_devices",
            op_core::AttrValue::List(op_core::ListValue::String(vec![
                b"/job:localhost/device:CPU:1".to_vec(),
            ])),
        )
        .run_on(&rt)
        .unwrap()
        .remove(0);
    assert_eq!(
        plain.scalar_value::<ResourceHandle>().unwrap(),
        hinted.scalar_value::<ResourceHandle>().unwrap()
    );
    // Defaults as TensorFlow's: an empty name and no other devices.
    let def = Registry::global().op(HANDLE).unwrap().def();
    let default = |name: &str| def.attr(name).unwrap().default_value.clone();
    assert_eq!(
        default("debug_name"),
        Some(op_core::AttrValue::String(Vec::new()))
    );
    assert_eq!(
        default("allowed_devices"),
        Some(op_core::AttrValue::List(op_core::ListValue::String(
            Vec::new()
        )))
    );
    // Still typed: a device list is a list of strings.
    let err = OpCall::new(HANDLE)
        .attr("dtype", DType::F32)
        .attr("shape", ShapeValue::unknown_rank())
        .attr("allowed_devices", 3i64)
        .run_on(&rt)
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["VarHandleOp", "allowed_devices"]);
}

#[test]
fn two_handles_with_one_shared_name_see_one_variable() {
    let rt = Runtime::new();
    let a = OpCall::new(HANDLE)
        .attr("shared_name", "w")
        .attr("dtype", DType::I32)
        .attr("shape", scalar_shape())
        .node_name("first")
        .run_on(&rt)
        .unwrap()
        .remove(0);
    let b = OpCall::new(HANDLE)
        .attr("shared_name", "w")
        .attr("dtype", DType::I32)
        .attr("shape", scalar_shape())
        .node_name("second")
        .run_on(&rt)
        .unwrap()
        .remove(0);
    op_kernels::link();
    let (ha, hb) = (
        a.scalar_value::<ResourceHandle>().unwrap(),
        b.scalar_value::<ResourceHandle>().unwrap(),
    );
    assert_eq!(ha, hb);
    assert!(!ha.is_owning());
    assert_eq!(ha.container, "localhost", "the manager's default container");
    assert_eq!(ha.name, "w");
    assert!(ha.is_type::<Var>().unwrap());

    // Neither handle op created the variable: the first assign does.
    assert!(!is_initialized(&rt, &a));
    assert!(!rt.resource_manager().is_initialized(&ha));
    assign(&rt, &a, Tensor::scalar(5i32)).unwrap();
    assert!(rt.resource_manager().is_initialized(&ha));
    assert!(is_initialized(&rt, &b));
    assert_eq!(
        read(&rt, &b, DType::I32)
            .unwrap()
            .scalar_value::<i32>()
            .unwrap(),
        5
    );
    assign(&rt, &b, Tensor::scalar(6i32)).unwrap();
    assert_eq!(
        read(&rt, &a, DType::I32)
            .unwrap()
            .scalar_value::<i32>()
            .unwrap(),
        6
    );
    let var = rt.resource_manager().lookup::<Var>("", "w").unwrap();
    assert_eq!(var.value().unwrap().scalar_value::<i32>().unwrap(), 6);

    // Another container, another runtime: other variables.
    let elsewhere = handle_op(&rt, "other", "w", DType::I32);
    assert!(!is_initialized(&rt, &elsewhere));
    let other_runtime = Runtime::new();
    assert!(!is_initialized(&other_runtime, &a));

    // The typed API shares by name too.
    let x = Variable::named_on(&rt, "", "w", DType::I32, scalar_shape()).unwrap();
    let y = Variable::named_on(&rt, "", "w", DType::I32, scalar_shape()).unwrap();
    assert_eq!(x.name(), "w");
    x.assign(Tensor::scalar(7i32)).unwrap();
    assert_eq!(y.read().unwrap().scalar_value::<i32>().unwrap(), 7);
    assert_eq!(
        read(&rt, &a, DType::I32)
            .unwrap()
            .scalar_value::<i32>()
            .unwrap(),
        7
    );
}

#[test]
fn reading_a_variable_never_assigned_is_an_error_naming_it() {
    let rt = Runtime::new();
    // Anonymous: the variable exists without a value.
    let v = Variable::uninitialized_on(&rt, DType::I64, ShapeValue::from_sizes(&[10])).unwrap();
    let err = v.read().unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert_contains(
        &err,
        &[&format!(
            "op ReadVariableOp (node 'ReadVariableOp'): variable '{}' was never assigned: it has no value to read",
            v.name()
        )],
    );
    // Named: the variable does not exist until its first assign.
    let named = Variable::named_on(&rt, "", "never", DType::I64, scalar_shape()).unwrap();
    let err = named.read().unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(
        &err,
        &[
            "op ReadVariableOp (node 'ReadVariableOp'): variable 'never' in container 'localhost' was never assigned, or was destroyed",
            "resource 'never' of type op_kernels::variable::resource::Var does not exist in container 'localhost'",
        ],
    );
    let err = read(&rt, &handle_op(&rt, "box", "never", DType::F32), DType::F32).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(
        &err,
        &["variable 'never' in container 'box' was never assigned"],
    );
}

#[test]
fn assigning_another_dtype_is_invalid_argument_naming_both() {
    let rt = Runtime::new();
    // Through the op: the variable's dtype is fixed.
    let handle = handle_op(&rt, "", "", DType::I64);
    let name = handle.scalar_value::<ResourceHandle>().unwrap().name;
    let err = assign(&rt, &handle, Tensor::scalar(1.0f32)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[&format!(
            "op AssignVariableOp (node 'AssignVariableOp'): cannot assign a float value (input 1 'value') to variable '{name}', which has dtype int64"
        )],
    );
    assert!(
        !is_initialized(&rt, &handle),
        "the failed assign changed nothing"
    );

    // A named variable takes its dtype from its first assign.
    let named = handle_op(&rt, "", "typed", DType::I64);
    assign(&rt, &named, i64s(&[1])).unwrap();
    let err = assign(&rt, &named, Tensor::scalar(true)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "cannot assign a bool value (input 1 'value') to variable 'typed', which has dtype int64",
        ],
    );
    assert_eq!(
        read(&rt, &named, DType::I64)
            .unwrap()
            .as_slice::<i64>()
            .unwrap(),
        [1]
    );

    // Reading as another dtype.
    let err = read(&rt, &named, DType::I32).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "op ReadVariableOp (node 'ReadVariableOp'): cannot read variable 'typed' of dtype int64 as int32 (attr dtype)",
        ],
    );

    // The typed API checks before running the op (as tf.Variable does),
    // so a named variable is never created with the wrong dtype.
    let v = Variable::named_on(&rt, "", "checked", DType::F32, scalar_shape()).unwrap();
    let err = v.assign(Tensor::scalar(1i32)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "cannot assign to variable 'checked': the value has dtype int32, but the variable's dtype is float"
    );
    assert!(!v.is_initialized().unwrap());
}

#[test]
fn the_typed_api_checks_the_shape() {
    let rt = Runtime::new();
    let v = Variable::new_on(&rt, i64s(&[1; 10])).unwrap();
    let err = v.assign(i64s(&[1, 2, 3])).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        format!(
            "cannot assign to variable '{}': the value has shape [3], which does not fit the variable's shape [10]",
            v.name()
        )
    );
    assert_eq!(v.read().unwrap().dims(), [10]);

    // A partly known shape takes any size where it is unknown.
    let shape = ShapeValue::from_sizes(&[-1, 2]);
    let p = Variable::uninitialized_on(&rt, DType::I32, shape).unwrap();
    p.assign(Tensor::from_vec([3, 2], vec![0i32; 6]).unwrap())
        .unwrap();
    p.assign(Tensor::from_vec([1, 2], vec![0i32; 2]).unwrap())
        .unwrap();
    let err = p
        .assign(Tensor::from_vec([2, 3], vec![0i32; 6]).unwrap())
        .unwrap_err();
    assert_contains(
        &err,
        &["the value has shape [2,3], which does not fit the variable's shape [?,2]"],
    );
    let err = p
        .assign(Tensor::from_vec([2], vec![0i32; 2]).unwrap())
        .unwrap_err();
    assert_contains(&err, &["shape [2], which does not fit"]);
    // An unknown rank takes any shape.
    let any = Variable::uninitialized_on(&rt, DType::I32, ShapeValue::unknown_rank()).unwrap();
    any.assign(Tensor::scalar(1i32)).unwrap();
    any.assign(Tensor::from_vec([1, 1, 1], vec![1i32]).unwrap())
        .unwrap();
}

#[test]
fn validate_shape_requires_the_current_shape() {
    let rt = Runtime::new();
    let handle = handle_op(&rt, "", "", DType::I64);
    let assign_checked = |value: Tensor| {
        OpCall::new(ASSIGN)
            .input(&handle)
            .input(value)
            .attr("validate_shape", true)
            .run_on(&rt)
    };
    // Nothing to compare with before the first value.
    assign_checked(i64s(&[1, 2])).unwrap();
    assign_checked(i64s(&[3, 4])).unwrap();
    let err = assign_checked(i64s(&[5, 6, 7])).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let name = handle.scalar_value::<ResourceHandle>().unwrap().name;
    assert_contains(
        &err,
        &[&format!(
            "op AssignVariableOp (node 'AssignVariableOp'): variable '{name}': cannot assign a value of shape [3] to a variable of shape [2] (validate_shape=true)"
        )],
    );
    assert_eq!(
        read(&rt, &handle, DType::I64)
            .unwrap()
            .as_slice::<i64>()
            .unwrap(),
        [3, 4]
    );
    // The default, false, allows a new shape.
    assign(&rt, &handle, i64s(&[5, 6, 7])).unwrap();
}

#[test]
fn var_is_initialized_before_and_after() {
    let rt = Runtime::new();
    let anonymous = Variable::uninitialized_on(&rt, DType::F32, scalar_shape()).unwrap();
    assert!(!anonymous.is_initialized().unwrap());
    anonymous.assign(Tensor::scalar(1.0f32)).unwrap();
    assert!(anonymous.is_initialized().unwrap());

    let named = Variable::named_on(&rt, "c", "init", DType::F32, scalar_shape()).unwrap();
    assert!(!named.is_initialized().unwrap());
    named.assign(Tensor::scalar(1.0f32)).unwrap();
    assert!(named.is_initialized().unwrap());
    named.destroy().unwrap();
    assert!(!named.is_initialized().unwrap());

    // A handle that is not a variable's is an error, not `false`.
    let table = SimpleHashTableHandle::<i64, f32>::new_on(&rt, 0.0).unwrap();
    let err = OpCall::new(IS_INITIALIZED)
        .input(table.handle())
        .run_on(&rt)
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "op VarIsInitializedOp (node 'VarIsInitializedOp'): input 0 ('resource')",
            "not a op_kernels::variable::resource::Var",
        ],
    );
}

#[test]
fn a_handle_to_another_resource_type_is_invalid_argument() {
    let rt = Runtime::new();
    let table = SimpleHashTableHandle::<i64, f32>::new_on(&rt, 0.0).unwrap();
    for err in [
        read(&rt, table.handle(), DType::F32).unwrap_err(),
        assign(&rt, table.handle(), Tensor::scalar(1.0f32)).unwrap_err(),
    ] {
        assert_eq!(err.code(), Code::InvalidArgument);
        assert_contains(
            &err,
            &[
                "input 0 ('resource'): resource handle",
                "refers to a op_kernels::hash_table::resource::SimpleHashTable<i64, f32>, not a op_kernels::variable::resource::Var",
            ],
        );
    }
    // A handle must be a scalar.
    let v = Variable::new_on(&rt, Tensor::scalar(1.0f32)).unwrap();
    let handles = Tensor::from_vec(
        [1],
        vec![v.handle().scalar_value::<ResourceHandle>().unwrap()],
    );
    let err = read(&rt, &handles.unwrap(), DType::F32).unwrap_err();
    assert_contains(
        &err,
        &["input 0 ('resource') must be a scalar, but has shape [1]"],
    );
}

#[test]
fn destroy_a_named_variable() {
    let rt = Runtime::new();
    let handle = handle_op(&rt, "", "doomed", DType::I64);
    assign(&rt, &handle, i64s(&[1, 2])).unwrap();
    let var = rt.resource_manager().lookup::<Var>("", "doomed").unwrap();
    destroy(&rt, &handle, false).unwrap();
    let err = read(&rt, &handle, DType::I64).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(
        &err,
        &["variable 'doomed' in container 'localhost' was never assigned, or was destroyed"],
    );
    assert!(!is_initialized(&rt, &handle));
    // Whoever still holds the variable keeps it; the manager no longer does.
    assert_eq!(var.value().unwrap().as_slice::<i64>().unwrap(), [1, 2]);
    assert_eq!(Arc::strong_count(&var), 1);

    // Twice: fine when lookup errors are ignored (the default), else NotFound.
    destroy(&rt, &handle, true).unwrap();
    OpCall::new(DESTROY).input(&handle).run_on(&rt).unwrap();
    let err = destroy(&rt, &handle, false).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(
        &err,
        &[
            "op DestroyResourceOp (node 'DestroyResourceOp'): cannot destroy resource 'doomed' (ignore_lookup_error=false)",
            "resource 'doomed' of type op_kernels::variable::resource::Var does not exist in container 'localhost'",
        ],
    );

    // An assign creates it again, fresh.
    assign(&rt, &handle, i64s(&[3])).unwrap();
    assert_eq!(
        read(&rt, &handle, DType::I64)
            .unwrap()
            .as_slice::<i64>()
            .unwrap(),
        [3]
    );
    let v = Variable::named_on(&rt, "", "doomed", DType::I64, ShapeValue::unknown_rank()).unwrap();
    v.destroy().unwrap();
    assert_eq!(v.destroy().unwrap_err().code(), Code::NotFound);
}

#[test]
fn destroy_works_for_any_named_resource() {
    // A handle that names its type deletes that type's entry.
    let rt = Runtime::new();
    let mgr = rt.resource_manager();
    let table = op_kernels::hash_table::SimpleHashTable::<i32, i32>::new();
    mgr.create("", "t", table).unwrap();
    type Table = op_kernels::hash_table::SimpleHashTable<i32, i32>;
    let handle = ResourceHandle::named::<Table>(op_core::Device::CPU, "localhost", "t");
    op_kernels::link();
    destroy(&rt, &Tensor::scalar(handle.clone()), false).unwrap();
    assert_eq!(
        mgr.lookup::<Table>("", "t").unwrap_err().code(),
        Code::NotFound
    );
    // A handle that does not know its type cannot delete.
    let untyped = ResourceHandle::new(op_core::Device::CPU, "localhost", "t", "Table");
    let err = destroy(&rt, &Tensor::scalar(untyped), true).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["does not know its resource's type"]);
}

#[test]
fn destroying_an_owning_handle_does_nothing() {
    let rt = Runtime::new();
    let v = Variable::new_on(&rt, i64s(&[4, 5])).unwrap();
    let weak = Arc::downgrade(&v.var().unwrap());
    destroy(&rt, v.handle(), false).unwrap();
    destroy(&rt, v.handle(), true).unwrap();
    v.destroy().unwrap();
    // Still there and readable: it goes with its last handle.
    assert_eq!(v.read().unwrap().as_slice::<i64>().unwrap(), [4, 5]);
    assert!(v.is_initialized().unwrap());
    drop(v);
    assert!(weak.upgrade().is_none());
}

#[test]
fn the_variable_is_freed_with_its_last_owning_handle() {
    let rt = Runtime::new();
    let v = Variable::new_on(&rt, i64s(&[1; 10])).unwrap();
    let weak = Arc::downgrade(&v.var().unwrap());
    let copy = v.clone();
    // The clone shares the handle tensor: one owner, plus the upgrade.
    assert_eq!(Arc::strong_count(&weak.upgrade().unwrap()), 2);
    // Handle tensors passed to ops and outputs read from it keep nothing.
    for _ in 0..3 {
        copy.assign(i64s(&[2; 10])).unwrap();
        copy.read().unwrap();
        copy.is_initialized().unwrap();
    }
    let raw = copy.handle().clone();
    drop(v);
    assert!(weak.upgrade().is_some(), "a handle remains");
    drop(copy);
    assert!(weak.upgrade().is_some(), "the raw handle tensor remains");
    assert_eq!(
        read(&rt, &raw, DType::I64)
            .unwrap()
            .as_slice::<i64>()
            .unwrap(),
        [2; 10]
    );
    drop(raw);
    assert!(weak.upgrade().is_none(), "the last handle is gone");
}

#[test]
fn checkpoint_round_trip() {
    let rt = Runtime::new();
    let v = Variable::new_on(&rt, i64s(&[1, 2, 3])).unwrap();
    let saved = v.serialize_to_tensors().unwrap();
    assert_eq!(saved, vec![("value".to_owned(), i64s(&[1, 2, 3]))]);

    let restored = Variable::new_on(&rt, i64s(&[0, 0, 0])).unwrap();
    restored.restore_from_tensors(saved.clone()).unwrap();
    assert_eq!(
        restored.read().unwrap().as_slice::<i64>().unwrap(),
        [1, 2, 3]
    );
    // Restoring into an uninitialized or named variable works too.
    let fresh = Variable::uninitialized_on(&rt, DType::I64, ShapeValue::from_sizes(&[3])).unwrap();
    fresh.restore_from_tensors(saved.clone()).unwrap();
    assert_eq!(fresh.read().unwrap(), i64s(&[1, 2, 3]));
    let named =
        Variable::named_on(&rt, "", "saved", DType::I64, ShapeValue::unknown_rank()).unwrap();
    named.restore_from_tensors(saved).unwrap();
    assert_eq!(named.read().unwrap(), i64s(&[1, 2, 3]));

    // Mistakes leave the variable as it was.
    let check = |tensors: Vec<(String, Tensor)>, code: Code, message: &str| {
        let err = restored.restore_from_tensors(tensors).unwrap_err();
        assert_eq!(err.code(), code, "{err}");
        assert_eq!(err.message(), message.replace("{}", restored.name()));
        assert_eq!(restored.read().unwrap(), i64s(&[1, 2, 3]));
    };
    check(
        vec![(
            "value".into(),
            Tensor::from_vec([3], vec![1i32; 3]).unwrap(),
        )],
        Code::InvalidArgument,
        "cannot restore variable '{}': the value has dtype int32, but the variable's dtype is int64",
    );
    check(
        vec![("value".into(), i64s(&[1, 2]))],
        Code::InvalidArgument,
        "cannot restore variable '{}': the value has shape [2], which does not fit the variable's shape [3]",
    );
    check(
        Vec::new(),
        Code::NotFound,
        "cannot restore variable '{}': no tensor for key 'value'",
    );
    check(
        vec![
            ("value".into(), i64s(&[4, 5, 6])),
            ("values".into(), i64s(&[4, 5, 6])),
        ],
        Code::InvalidArgument,
        "cannot restore variable '{}': unexpected key 'values' (a variable saves only 'value')",
    );
    check(
        vec![
            ("value".into(), i64s(&[4, 5, 6])),
            ("value".into(), i64s(&[7, 8, 9])),
        ],
        Code::InvalidArgument,
        "cannot restore variable '{}': key 'value' is given twice",
    );

    // Saving a variable without a value fails.
    let empty = Variable::uninitialized_on(&rt, DType::I64, scalar_shape()).unwrap();
    assert_eq!(
        empty.serialize_to_tensors().unwrap_err().code(),
        Code::FailedPrecondition
    );
}

#[test]
fn the_resource_describes_itself_briefly() {
    let var = Var::new(DType::I64);
    assert_eq!(var.debug_string(), "Var<int64, uninitialized>");
    assert_eq!(format!("{var:?}"), var.debug_string());
    let empty = var.memory_used();
    var.assign(Tensor::from_vec([10], vec![7i64; 10]).unwrap(), false)
        .unwrap();
    assert_eq!(var.debug_string(), "Var<int64, [10]>");
    assert_eq!(var.memory_used(), empty + 80);

    let big = Var::with_value(Tensor::from_vec([1000, 1000], vec![0u8; 1_000_000]).unwrap());
    assert_eq!(big.debug_string(), "Var<uint8, [1000,1000]>");
    assert!(big.memory_used() >= 1_000_000);

    let strings = Var::with_value(Tensor::strings([2], ["a".repeat(5000), String::new()]).unwrap());
    assert_eq!(strings.debug_string(), "Var<string, [2]>");
    assert!(strings.memory_used() >= 5000);

    // The resource's own checks.
    assert!(var.is_initialized());
    let err = var.assign(Tensor::scalar(1.0f64), false).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "cannot assign a value of dtype double to a variable of dtype int64"
    );
    var.assign(Tensor::scalar(1i64), false).unwrap();
    let err = var.assign(i64s(&[1]), true).unwrap_err();
    assert_eq!(
        err.message(),
        "cannot assign a value of shape [1] to a variable of shape [] (validate_shape=true)"
    );
    assert_eq!(var.value().unwrap(), Tensor::scalar(1i64));
}

#[test]
fn bad_names_are_rejected() {
    let rt = Runtime::new();
    op_kernels::link();
    let err = Variable::named_on(&rt, "", "", DType::I64, scalar_shape()).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["a named variable needs a non-empty shared_name"]);
    let err = Variable::named_on(&rt, "", "_hidden", DType::I64, scalar_shape()).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["op VarHandleOp (node 'VarHandleOp'): shared_name '_hidden' cannot start with '_'"],
    );
    let err =
        Variable::named_on(&rt, "bad container!", "v", DType::I64, scalar_shape()).unwrap_err();
    assert_contains(
        &err,
        &["container 'bad container!' contains invalid characters"],
    );
    // A dtype a variable cannot hold has no kernel.
    let err = Variable::uninitialized_on(&rt, DType::Resource, scalar_shape()).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(&err, &["VarHandleOp"]);
}

/// A `shape` attr that is no shape (a dimension below -1, more than 254
/// dimensions) is rejected before any handle is made, through the op and
/// through the typed API.
#[test]
fn impossible_shapes_are_rejected() {
    let rt = Runtime::new();
    op_kernels::link();
    let err = OpCall::new(HANDLE)
        .attr("dtype", DType::F32)
        .attr("shape", ShapeValue::from_sizes(&[-5, i64::MIN]))
        .run_on(&rt)
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "VarHandleOp",
            "attr 'shape'",
            "dimension 0 of [-5,-9223372036854775808] is -5",
        ],
    );
    let err =
        Variable::uninitialized_on(&rt, DType::F32, ShapeValue::from_sizes(&[2, -2])).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["VarHandleOp", "attr 'shape'", "[2,-2]"]);
    let too_many = ShapeValue::from_sizes(&[1; ShapeValue::MAX_DIMS + 1]);
    let err = Variable::named_on(&rt, "", "deep", DType::F32, too_many).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["VarHandleOp", "attr 'shape'", "it has 255 dimensions"],
    );
    // What TensorFlow allows still makes a handle.
    let most = ShapeValue::from_sizes(&[1; ShapeValue::MAX_DIMS]);
    assert!(Variable::uninitialized_on(&rt, DType::F32, most).is_ok());
    assert!(Variable::uninitialized_on(&rt, DType::F32, ShapeValue::from_sizes(&[-1, 0])).is_ok());
}

/// Writers assign whole tensors of one repeated value while readers read:
/// every read is one whole assigned tensor (never a mix of two), and every
/// thread finishes in time (a deadlock fails the test instead of hanging
/// it).
#[test]
fn many_threads_read_and_assign_without_tearing() {
    op_kernels::link();
    const WRITERS: i64 = 4;
    const READERS: i64 = 4;
    const ROUNDS: i64 = 300;
    const LEN: usize = 4096;
    let v = Variable::new(Tensor::from_vec([LEN], vec![0i64; LEN]).unwrap()).unwrap();
    let barrier = Arc::new(Barrier::new((WRITERS + READERS) as usize));
    let mut jobs: Vec<(String, Box<dyn FnOnce() + Send>)> = Vec::new();
    for t in 0..WRITERS + READERS {
        let (v, barrier) = (v.clone(), barrier.clone());
        let job = move || {
            barrier.wait();
            for round in 0..ROUNDS {
                if t < WRITERS {
                    let value = (t + 1) * 1_000_000 + round;
                    v.assign(Tensor::from_vec([LEN], vec![value; LEN]).unwrap())
                        .unwrap();
                } else {
                    let read = v.read().unwrap();
                    let values = read.as_slice::<i64>().unwrap();
                    assert_eq!(values.len(), LEN);
                    let first = values[0];
                    assert!(
                        values.iter().all(|&x| x == first),
                        "a torn read: {first} and {:?}",
                        values.iter().find(|&&x| x != first)
                    );
                    let (writer, round) = (first / 1_000_000, first % 1_000_000);
                    assert!(first == 0 || ((1..=WRITERS).contains(&writer) && round < ROUNDS));
                }
            }
        };
        jobs.push((format!("thread {t}"), Box::new(job)));
    }
    run_jobs(jobs, Duration::from_secs(120));
    // The last value is some writer's last round.
    let last = v.read().unwrap().as_slice::<i64>().unwrap()[0];
    assert_eq!(last % 1_000_000, ROUNDS - 1, "{last}");
}

/// Threads racing to assign a named variable first create exactly one.
#[test]
fn racing_first_assigns_create_one_variable() {
    op_kernels::link();
    const THREADS: usize = 8;
    let barrier = Arc::new(Barrier::new(THREADS));
    let created = Arc::new(Mutex::new(Vec::new()));
    let mut jobs: Vec<(String, Box<dyn FnOnce() + Send>)> = Vec::new();
    for t in 0..THREADS {
        let (barrier, created) = (barrier.clone(), created.clone());
        let job = move || {
            let v = Variable::named("race", "first", DType::I64, scalar_shape()).unwrap();
            barrier.wait();
            v.assign(Tensor::scalar(t as i64)).unwrap();
            created.lock().unwrap().push(v.var().unwrap());
        };
        jobs.push((format!("thread {t}"), Box::new(job)));
    }
    run_jobs(jobs, Duration::from_secs(120));
    let vars: Vec<Arc<Var>> = std::mem::take(&mut *created.lock().unwrap());
    assert_eq!(vars.len(), THREADS);
    assert!(vars.iter().all(|v| Arc::ptr_eq(v, &vars[0])));
    let value = vars[0].value().unwrap().scalar_value::<i64>().unwrap();
    assert!((0..THREADS as i64).contains(&value));
}

#[test]
fn every_op_is_stateful_with_tensorflows_signature() {
    op_kernels::link();
    let registry = Registry::global();
    for op in OPS {
        let def = registry.op(op).unwrap().def();
        assert!(def.is_stateful, "{op} must be stateful");
    }
    let text = |op: &str| {
        let def = registry.op(op).unwrap().def();
        let args = |args: &[op_core::ArgDef]| {
            args.iter()
                .map(op_core::ArgDef::to_spec)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let attrs: Vec<String> = def.attrs.iter().map(|a| a.to_spec()).collect();
        format!(
            "({}) -> ({}) [{}]",
            args(&def.inputs),
            args(&def.outputs),
            attrs.join("; ")
        )
    };
    assert_eq!(
        text(HANDLE),
        "() -> (resource: resource) [container: string = ''; shared_name: string = ''; debug_name: string = ''; dtype: type; shape: shape; allowed_devices: list(string) = []]"
    );
    assert_eq!(
        text(READ),
        "(resource: resource) -> (value: dtype) [dtype: type]"
    );
    assert_eq!(
        text(ASSIGN),
        "(resource: resource, value: dtype) -> () [dtype: type; validate_shape: bool = false]"
    );
    assert_eq!(
        text(IS_INITIALIZED),
        "(resource: resource) -> (is_initialized: bool) []"
    );
    assert_eq!(
        text(DESTROY),
        "(resource: resource) -> () [ignore_lookup_error: bool = true]"
    );
}

#[test]
fn the_typed_ops_have_a_kernel_per_dtype() {
    op_kernels::link();
    let registry = Registry::global();
    let mut expected: Vec<DType> = op_core::TypeClass::from_spec_name("realnumbertype")
        .unwrap()
        .types()
        .iter()
        .chain(
            op_core::TypeClass::from_spec_name("quantizedtype")
                .unwrap()
                .types(),
        )
        .copied()
        .chain([
            DType::Complex64,
            DType::Complex128,
            DType::Bool,
            DType::String,
        ])
        .collect();
    expected.sort_by_key(|d| d.enum_value());
    for op in [HANDLE, READ, ASSIGN] {
        let mut dtypes: Vec<DType> = registry
            .op(op)
            .unwrap()
            .kernels()
            .iter()
            .filter(|k| k.device == op_core::DeviceType::Cpu)
            .map(|k| {
                assert_eq!(k.constraints.len(), 1);
                assert_eq!(k.constraints[0].attr, "dtype");
                k.constraints[0].dtype
            })
            .collect();
        dtypes.sort_by_key(|d| d.enum_value());
        assert_eq!(dtypes, expected, "kernels of {op}");
    }
    for op in [IS_INITIALIZED, DESTROY] {
        let kernels = registry.op(op).unwrap().kernels();
        // One on the CPU, one on GPUs (tests/gpu_kernels.rs).
        assert!(
            kernels
                .iter()
                .filter(|k| k.device == op_core::DeviceType::Cpu)
                .count()
                == 1,
            "{op}"
        );
        assert!(kernels.iter().all(|k| k.constraints.is_empty()));
    }
}

#[test]
fn shape_functions() {
    op_kernels::link();
    let t = ShapeTest::new(HANDLE)
        .attr("dtype", DType::I64)
        .attr("shape", ShapeValue::from_sizes(&[10]));
    t.ok("", "[]");

    let t = ShapeTest::new(READ).attr("dtype", DType::I64);
    t.ok("[]", "?");
    t.ok("?", "?");
    t.error(
        "[2]",
        "op ReadVariableOp (node 'ReadVariableOp'): input 0 ('resource') has shape [2], which must be rank 0 but is rank 1",
    );

    let t = ShapeTest::new(ASSIGN).attr("dtype", DType::I64);
    t.ok("[];[10]", "");
    t.ok("?;?", "");
    t.error(
        "[1];[10]",
        "input 0 ('resource') has shape [1], which must be rank 0 but is rank 1",
    );

    let t = ShapeTest::new(IS_INITIALIZED);
    t.ok("[]", "[]");
    t.ok("?", "[]");
    t.error(
        "[?,2]",
        "input 0 ('resource') has shape [?,2], which must be rank 0 but is rank 2",
    );

    let t = ShapeTest::new(DESTROY);
    t.ok("[]", "");
    t.error(
        "[3]",
        "input 0 ('resource') has shape [3], which must be rank 0 but is rank 1",
    );
}

/// The report's case: a worker thread makes runtimes in turn, each with a
/// named variable used through the typed API, and drops each one. Its
/// call cache must not keep a dropped runtime's variable alive.
#[test]
fn a_dropped_runtime_frees_its_named_variable_while_the_thread_lives() {
    std::thread::spawn(|| {
        for round in 0..3i64 {
            let rt = Runtime::new();
            let variable = Variable::named_on(&rt, "", "big", DType::I64, scalar_shape()).unwrap();
            variable.assign(Tensor::scalar(round)).unwrap();
            variable.assign(Tensor::scalar(round + 1)).unwrap();
            assert_eq!(
                variable.read().unwrap().scalar_value::<i64>().unwrap(),
                round + 1
            );
            let var = Arc::downgrade(&rt.resource_manager().lookup::<Var>("", "big").unwrap());
            drop(variable);
            assert!(var.upgrade().is_some(), "the manager holds it");
            drop(rt);
            assert!(
                var.upgrade().is_none(),
                "round {round}: freed with its runtime"
            );
        }
    })
    .join()
    .unwrap();
}

#[test]
fn a_huge_variable_name_is_quoted_at_a_bounded_length() {
    op_kernels::link();
    let rt = Runtime::new();
    let name = "v".repeat(10 << 20);
    let cut = format!("…' ({} bytes)", name.len());
    let variable = Variable::named_on(&rt, "", &name, DType::I64, scalar_shape()).unwrap();
    let err = variable.read().unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(
        err.to_string().len() < 2048,
        "{} bytes",
        err.to_string().len()
    );
    assert_contains(&err, &["variable 'vvv", &cut, "was never assigned"]);
    let err = variable.assign(Tensor::scalar(1.5f32)).unwrap_err();
    assert!(
        err.to_string().len() < 2048,
        "{} bytes",
        err.to_string().len()
    );
    assert_contains(&err, &["variable 'vvv", &cut]);
    let err = destroy(&rt, variable.handle(), false).unwrap_err();
    assert!(
        err.to_string().len() < 2048,
        "{} bytes",
        err.to_string().len()
    );
    assert_contains(&err, &["cannot destroy resource 'vvv", &cut]);
}
