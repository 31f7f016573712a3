//! Placement over a simulated GPU: a device backend whose "device memory"
//! is host bytes behind the `DeviceMemory` seam, so that every rule of
//! placement runs without a GPU. A GPU node runs where it has a kernel;
//! a node without one falls back to the host (or fails, when placement is
//! strict); inputs are copied to where each kernel reads them, except the
//! args a kernel keeps in host memory; outputs of a device kernel are made
//! in device memory; and a device that cannot be used is a typed error.

use std::any::Any;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use op_core::device::{DeviceBackend, DeviceBackendRegistration, DeviceMemory};
use op_core::registry::{KernelRegistration, OpRegistration};
use op_core::{
    Code, DType, Device, DeviceType, Error, FnKernel, KernelContext, OpCall, OpDefBuilder, Result,
    Runtime, Tensor,
};

// ---------------------------------------------------------------------------
// The simulated GPU: two devices, memory on the host, counted copies.

/// Copies and allocations the backend made, for the tests to count.
static UPLOADS: AtomicUsize = AtomicUsize::new(0);
static DOWNLOADS: AtomicUsize = AtomicUsize::new(0);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
/// The tests run one at a time, so that each counts its own copies.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

struct SimMemory {
    device: Device,
    bytes: Vec<u8>,
}

impl DeviceMemory for SimMemory {
    fn device(&self) -> Device {
        self.device
    }
    fn byte_len(&self) -> usize {
        self.bytes.len()
    }
    fn copy_to_host(&self, host: &mut [u8]) -> Result<()> {
        DOWNLOADS.fetch_add(1, Ordering::SeqCst);
        host.copy_from_slice(&self.bytes);
        Ok(())
    }
}

struct SimGpu;

impl DeviceBackend for SimGpu {
    fn name(&self) -> &'static str {
        "simulated GPU"
    }
    fn device_type(&self) -> DeviceType {
        DeviceType::Gpu
    }
    fn open(&self, device: Device) -> Result<()> {
        if device.index() < 2 {
            Ok(())
        } else {
            Err(Error::invalid_argument(format!(
                "GPU {} does not exist: the simulation has 2",
                device.index()
            )))
        }
    }
    fn allocate(
        &self,
        device: Device,
        bytes: usize,
        _zeroed: bool,
    ) -> Result<Box<dyn DeviceMemory>> {
        self.open(device)?;
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        Ok(Box::new(SimMemory {
            device,
            bytes: vec![0; bytes],
        }))
    }
    fn copy_from_host(&self, device: Device, host: &[u8]) -> Result<Box<dyn DeviceMemory>> {
        self.open(device)?;
        UPLOADS.fetch_add(1, Ordering::SeqCst);
        Ok(Box::new(SimMemory {
            device,
            bytes: host.to_vec(),
        }))
    }
    fn copy_on_device(&self, memory: &dyn DeviceMemory) -> Result<Box<dyn DeviceMemory>> {
        let sim = (memory as &dyn Any)
            .downcast_ref::<SimMemory>()
            .ok_or_else(|| Error::internal("not simulated memory"))?;
        Ok(Box::new(SimMemory {
            device: sim.device,
            bytes: sim.bytes.clone(),
        }))
    }
    fn synchronize(&self, _: Device) -> Result<()> {
        Ok(())
    }
}

static SIM_GPU: SimGpu = SimGpu;
op_core::inventory::submit! { DeviceBackendRegistration::new(&SIM_GPU, file!(), line!()) }

/// A float tensor's simulated device memory as floats.
fn sim_floats(t: &Tensor) -> Result<Vec<f32>> {
    let memory = t
        .device_memory()
        .ok_or_else(|| Error::internal("a GPU kernel got a host tensor"))?;
    let sim = (memory as &dyn Any)
        .downcast_ref::<SimMemory>()
        .ok_or_else(|| Error::internal("not simulated memory"))?;
    Ok(sim
        .bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// Writes floats into a tensor's simulated device memory.
fn write_sim_floats(t: &mut Tensor, values: &[f32]) -> Result<()> {
    let memory = t
        .device_memory_mut()
        .ok_or_else(|| Error::internal("an output on the host or shared"))?;
    let sim = (memory as &mut dyn Any)
        .downcast_mut::<SimMemory>()
        .ok_or_else(|| Error::internal("not simulated memory"))?;
    for (dst, v) in sim.bytes.chunks_exact_mut(4).zip(values) {
        dst.copy_from_slice(&v.to_le_bytes());
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Ops: `Scale` has both kernels (the GPU one triples, the host one doubles,
// so a result tells where it ran), `HostOnly` only a host kernel, `Fill`
// a GPU kernel that keeps its `dims` input in host memory.

op_core::inventory::submit! {
    OpRegistration::new("Scale", || OpDefBuilder::new("Scale").input("x: float").output("y: float").build(), file!(), line!())
}
op_core::inventory::submit! {
    OpRegistration::new("HostOnly", || OpDefBuilder::new("HostOnly").input("x: float").output("y: float").build(), file!(), line!())
}
op_core::inventory::submit! {
    OpRegistration::new("Fill", || OpDefBuilder::new("Fill").input("dims: int32").input("value: float").output("y: float").build(), file!(), line!())
}
op_core::inventory::submit! {
    OpRegistration::new("Fails", || OpDefBuilder::new("Fails").input("x: float").output("y: float").build(), file!(), line!())
}

fn scale_cpu(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    ctx.unary(0, 0, 1, |x: &f32| x * 2.0)
}

fn scale_gpu(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    let x = sim_floats(ctx.input(0)?)?;
    let dims = ctx.input(0)?.dims().to_vec();
    let y: Vec<f32> = x.iter().map(|v| v * 3.0).collect();
    write_sim_floats(ctx.allocate_output(0, &dims)?, &y)
}

fn host_only(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    ctx.unary(0, 0, 1, |x: &f32| x + 1.0)
}

fn fill_gpu(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    // `dims` stays on the host: read directly.
    let dims: Vec<usize> = ctx
        .input_slice::<i32>(0)?
        .iter()
        .map(|&d| d as usize)
        .collect();
    let value = sim_floats(ctx.input(1)?)?[0];
    let y = vec![value; dims.iter().product()];
    write_sim_floats(ctx.allocate_output(0, &dims)?, &y)
}

fn fails_gpu(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    Err(ctx.error(Code::InvalidArgument, "the GPU kernel refuses"))
}

op_core::inventory::submit! {
    KernelRegistration::new("Scale", DeviceType::Cpu, "scale_cpu", |c| FnKernel::<()>::create(c, scale_cpu), file!(), line!())
}
op_core::inventory::submit! {
    KernelRegistration::new("Scale", DeviceType::Gpu, "scale_gpu", |c| FnKernel::<()>::create(c, scale_gpu), file!(), line!())
}
op_core::inventory::submit! {
    KernelRegistration::new("HostOnly", DeviceType::Cpu, "host_only", |c| FnKernel::<()>::create(c, host_only), file!(), line!())
}
op_core::inventory::submit! {
    KernelRegistration::new("Fill", DeviceType::Gpu, "fill_gpu", |c| FnKernel::<()>::create(c, fill_gpu), file!(), line!())
        .with_host_memory(&["dims"])
}
op_core::inventory::submit! {
    KernelRegistration::new("Fails", DeviceType::Gpu, "fails_gpu", |c| FnKernel::<()>::create(c, fails_gpu), file!(), line!())
}

/// The copies made while `f` runs: (uploads, downloads). The caller holds
/// [`serial`].
fn copies<T>(f: impl FnOnce() -> T) -> (T, usize, usize) {
    let (up, down) = (
        UPLOADS.load(Ordering::SeqCst),
        DOWNLOADS.load(Ordering::SeqCst),
    );
    let value = f();
    (
        value,
        UPLOADS.load(Ordering::SeqCst) - up,
        DOWNLOADS.load(Ordering::SeqCst) - down,
    )
}

fn floats(values: &[f32]) -> Tensor {
    Tensor::from_vec([values.len()], values.to_vec()).unwrap()
}

// ---------------------------------------------------------------------------

#[test]
fn a_gpu_node_runs_on_the_gpu_with_its_input_copied_there_once() {
    let _serial = serial();
    let gpu = Runtime::gpu(0).unwrap();
    let x = floats(&[1.0, 2.0, 3.0]);
    let (y, up, down) = copies(|| OpCall::new("Scale").input(&x).run_on(&gpu).unwrap());
    assert_eq!((up, down), (1, 0));
    assert_eq!(y[0].device(), Device::gpu(0));
    assert!(!y[0].is_on_host());
    // The GPU kernel ran (it triples).
    let (host, up, down) = copies(|| y[0].to_host().unwrap());
    assert_eq!((up, down), (0, 1));
    assert_eq!(host.as_slice::<f32>().unwrap(), [3.0, 6.0, 9.0]);
    assert_eq!(
        gpu.prepare("Scale", &[DType::F32.into()], &[])
            .unwrap()
            .device(),
        Device::gpu(0)
    );

    // A GPU output feeds the next GPU node without a copy.
    let (z, up, down) = copies(|| OpCall::new("Scale").input(&y[0]).run_on(&gpu).unwrap());
    assert_eq!((up, down), (0, 0));
    assert_eq!(
        z[0].to_host().unwrap().as_slice::<f32>().unwrap(),
        [9.0, 18.0, 27.0]
    );
}

#[test]
fn a_node_without_a_gpu_kernel_falls_back_to_the_host_with_copies() {
    let _serial = serial();
    let gpu = Runtime::gpu(0).unwrap();
    let prepared = gpu.prepare("HostOnly", &[DType::F32.into()], &[]).unwrap();
    assert_eq!(prepared.device(), Device::CPU);
    assert_eq!(prepared.kernel().name, "host_only");

    // GPU -> host (fallback) -> GPU: one copy at each edge.
    let x = floats(&[1.0, 2.0]);
    let ((a, b, c), up, down) = copies(|| {
        let a = OpCall::new("Scale")
            .input(&x)
            .run_on(&gpu)
            .unwrap()
            .remove(0);
        let b = OpCall::new("HostOnly")
            .input(&a)
            .run_on(&gpu)
            .unwrap()
            .remove(0);
        let c = OpCall::new("Scale")
            .input(&b)
            .run_on(&gpu)
            .unwrap()
            .remove(0);
        (a, b, c)
    });
    assert_eq!((up, down), (2, 1));
    assert_eq!(a.device(), Device::gpu(0));
    assert_eq!(b.device(), Device::CPU);
    assert_eq!(b.as_slice::<f32>().unwrap(), [4.0, 7.0]);
    assert_eq!(
        c.to_host().unwrap().as_slice::<f32>().unwrap(),
        [12.0, 21.0]
    );
}

#[test]
fn strict_placement_makes_a_missing_gpu_kernel_an_error() {
    let _serial = serial();
    let strict = Runtime::gpu(0).unwrap().strict_placement(true);
    let err = strict
        .prepare("HostOnly", &[DType::F32.into()], &[])
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let text = err.to_string();
    assert!(
        text.contains("no kernel for op 'HostOnly' on device 'gpu'"),
        "{text}"
    );
    assert!(text.contains("placement is strict"), "{text}");
    // Nodes with a GPU kernel still run.
    let y = OpCall::new("Scale")
        .input(floats(&[1.0]))
        .run_on(&strict)
        .unwrap();
    assert_eq!(y[0].device(), Device::gpu(0));
}

#[test]
fn host_memory_args_stay_on_the_host_and_the_others_move_to_the_gpu() {
    let _serial = serial();
    let gpu = Runtime::gpu(1).unwrap();
    let dims = Tensor::from_vec([2], vec![2i32, 3]).unwrap();
    let (y, up, down) = copies(|| {
        OpCall::new("Fill")
            .input(&dims)
            .input(Tensor::scalar(1.5f32))
            .run_on(&gpu)
            .unwrap()
    });
    // Only `value` went to the device; `dims` was read on the host.
    assert_eq!((up, down), (1, 0));
    assert_eq!(y[0].device(), Device::gpu(1));
    assert_eq!(y[0].dims(), [2, 3]);
    assert_eq!(y[0].to_host().unwrap().as_slice::<f32>().unwrap(), [1.5; 6]);

    // A host-memory arg given in device memory is copied back to the host.
    let dims_on_gpu = Tensor::from_vec([1], vec![4i32])
        .unwrap()
        .to_device(Device::gpu(1));
    let dims_on_gpu = dims_on_gpu.unwrap();
    let (y, up, down) = copies(|| {
        OpCall::new("Fill")
            .input(&dims_on_gpu)
            .input(Tensor::scalar(2.0f32))
            .run_on(&gpu)
            .unwrap()
    });
    assert_eq!((up, down), (1, 1));
    assert_eq!(y[0].to_host().unwrap().as_slice::<f32>().unwrap(), [2.0; 4]);
}

#[test]
fn a_host_runtime_copies_device_inputs_to_the_host() {
    let _serial = serial();
    let x = floats(&[1.0, 2.0]).to_device(Device::gpu(0)).unwrap();
    let (y, up, down) = copies(|| {
        OpCall::new("Scale")
            .input(&x)
            .run_on(&Runtime::new())
            .unwrap()
    });
    assert_eq!((up, down), (0, 1));
    assert_eq!(y[0].as_slice::<f32>().unwrap(), [2.0, 4.0]);
}

#[test]
fn inputs_on_another_gpu_are_moved_to_the_runtimes() {
    let _serial = serial();
    let x = floats(&[1.0]).to_device(Device::gpu(1)).unwrap();
    let gpu0 = Runtime::gpu(0).unwrap();
    let y = OpCall::new("Scale").input(&x).run_on(&gpu0).unwrap();
    assert_eq!(y[0].device(), Device::gpu(0));
    assert_eq!(y[0].to_host().unwrap().as_slice::<f32>().unwrap(), [3.0]);
}

#[test]
fn a_device_that_cannot_be_used_is_a_typed_error_not_a_panic() {
    let _serial = serial();
    let err = Runtime::gpu(7).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("GPU 7 does not exist"), "{err}");

    // Unchecked, the error comes when a node would run there, naming it.
    let unchecked = Runtime::new().on_device(Device::gpu(7));
    let err = OpCall::new("Scale")
        .input(floats(&[1.0]))
        .node_name("scale7")
        .run_on(&unchecked)
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let text = err.to_string();
    assert!(text.contains("GPU 7 does not exist"), "{text}");
    assert!(
        text.contains("scale_gpu") && text.contains("gpu:7"),
        "{text}"
    );

    let err = floats(&[1.0]).to_device(Device::gpu(9)).unwrap_err();
    assert!(err.message().contains("GPU 9 does not exist"), "{err}");
}

#[test]
fn kernel_errors_name_the_node_and_its_device() {
    let _serial = serial();
    let gpu = Runtime::gpu(0).unwrap();
    let err = OpCall::new("Fails")
        .input(floats(&[1.0]))
        .node_name("refuser")
        .run_on(&gpu)
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("the GPU kernel refuses"), "{text}");
    assert!(
        text.contains("refuser") && text.contains("device 'gpu:0'"),
        "{text}"
    );
}

#[test]
fn device_tensors_copy_share_and_refuse_what_no_device_holds() {
    let _serial = serial();
    let x = floats(&[1.0, -2.0, 3.5]);
    let on_gpu = x.to_device(Device::gpu(0)).unwrap();
    assert_eq!(on_gpu.dims(), [3]);
    assert_eq!(on_gpu.dtype(), DType::F32);
    // Already there: the same buffer, no copy.
    let (same, up, down) = copies(|| on_gpu.to_device(Device::gpu(0)).unwrap());
    assert_eq!((up, down), (0, 0));
    assert_eq!(same.buffer_address(), on_gpu.buffer_address());
    assert_eq!(on_gpu.to_host().unwrap(), x);

    // Copy-on-write: a shared device tensor made distinct is copied on
    // the device.
    let mut distinct = on_gpu.clone();
    assert!(!distinct.is_unique());
    distinct.make_distinct().unwrap();
    assert!(distinct.is_unique());
    assert_ne!(distinct.identity(), on_gpu.identity());
    assert_eq!(distinct.to_host().unwrap(), x);

    // Every plain dtype goes and comes back.
    let ints = Tensor::from_vec([2, 2], vec![1i64, -2, 3, i64::MAX]).unwrap();
    assert_eq!(
        ints.to_device(Device::gpu(0)).unwrap().to_host().unwrap(),
        ints
    );
    let scalar = Tensor::scalar(op_core::f16::from_f32(0.5));
    assert_eq!(
        scalar.to_device(Device::gpu(1)).unwrap().to_host().unwrap(),
        scalar
    );
    let empty = Tensor::zeros(DType::F64, [0, 3]).unwrap();
    assert_eq!(
        empty.to_device(Device::gpu(0)).unwrap().to_host().unwrap(),
        empty
    );

    for host_only in [Tensor::scalar(true), Tensor::string("s")] {
        let err = host_only.to_device(Device::gpu(0)).unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument);
        assert!(
            err.message().contains("cannot live in a device's memory"),
            "{err}"
        );
    }

    // A wrong size is refused.
    let err = Tensor::from_device_memory(
        DType::F32,
        &[4],
        Box::new(SimMemory {
            device: Device::gpu(0),
            bytes: vec![0; 12],
        }),
    )
    .unwrap_err();
    assert!(
        err.message()
            .contains("needs 16 bytes, but the memory holds 12"),
        "{err}"
    );
}

#[test]
fn device_outputs_come_from_the_backend() {
    let _serial = serial();
    let gpu = Runtime::gpu(0).unwrap();
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    let x = floats(&[1.0; 8]).to_device(Device::gpu(0)).unwrap();
    let y = OpCall::new("Scale").input(&x).run_on(&gpu).unwrap();
    assert!(ALLOCATIONS.load(Ordering::SeqCst) > before);
    assert_eq!(y[0].device(), Device::gpu(0));
}

// A resource made by a host kernel a GPU runtime fell back to is read by a
// GPU kernel: resources belong to the runtime's device, whichever kernel
// made their handle.

struct Counter(std::sync::atomic::AtomicI64);

impl op_core::resource::Resource for Counter {
    fn debug_string(&self) -> String {
        "Counter".into()
    }
}

op_core::inventory::submit! {
    OpRegistration::new("MakeCounter", || OpDefBuilder::new("MakeCounter").output("counter: resource").set_is_stateful().build(), file!(), line!())
}
op_core::inventory::submit! {
    OpRegistration::new("BumpCounter", || OpDefBuilder::new("BumpCounter").input("counter: resource").output("value: int64").set_is_stateful().build(), file!(), line!())
}

fn make_counter(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    ctx.set_resource_output(0, std::sync::Arc::new(Counter(0.into())))
}

fn bump_counter_gpu(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    assert_eq!(ctx.device(), Device::gpu(0));
    let counter = ctx.resource::<Counter>(0)?;
    let value = counter.0.fetch_add(1, Ordering::SeqCst) + 1;
    // An int64 output of a GPU kernel is device memory.
    let out = Tensor::scalar(value).to_device(ctx.device())?;
    ctx.set_output(0, out)
}

op_core::inventory::submit! {
    KernelRegistration::new("MakeCounter", DeviceType::Cpu, "make_counter", |c| FnKernel::<()>::create(c, make_counter), file!(), line!())
}
op_core::inventory::submit! {
    KernelRegistration::new("BumpCounter", DeviceType::Gpu, "bump_counter_gpu", |c| FnKernel::<()>::create(c, bump_counter_gpu), file!(), line!())
}

#[test]
fn resources_made_on_the_host_fallback_belong_to_the_runtimes_device() {
    let _serial = serial();
    let gpu = Runtime::gpu(0).unwrap();
    let counter = OpCall::new("MakeCounter").run_on(&gpu).unwrap().remove(0);
    let handle = counter.scalar_value::<op_core::ResourceHandle>().unwrap();
    assert_eq!(handle.device, Device::gpu(0));
    for expected in 1..=2i64 {
        let value = OpCall::new("BumpCounter")
            .input(&counter)
            .run_on(&gpu)
            .unwrap();
        assert_eq!(
            value[0].to_host().unwrap().scalar_value::<i64>().unwrap(),
            expected
        );
    }
}
