//! How opcheck (`op_core::testing`) draws the queue ops' inputs: their
//! `resource` input must be a queue's handle, which only `FIFOQueueV2`
//! makes. Each case makes a fresh queue (owned by its handle, so it works
//! on any runtime) of one to three random component types, holding a few
//! random tuples, open or now and then closed, and tuples of those types.
//! Every enqueue and dequeue has a timeout of 0 or 1 ms, so no case waits
//! for long however opcheck mutates it. The ops are stateful, so opcheck
//! does not compare their results from run to run.

use op_core::testing::{Case, Draw, OpCheckRegistration};
use op_core::{DType, Result, Tensor, inventory};

use super::FifoQueueHandle;

/// Component types a queue is drawn with.
const TYPES: [DType; 5] = [
    DType::F32,
    DType::I32,
    DType::I64,
    DType::Bool,
    DType::String,
];

/// One to three component types.
fn dtypes(d: &mut Draw<'_>) -> Vec<DType> {
    (0..d.size(1..=3))
        .map(|_| *d.choose(&TYPES).unwrap_or(&DType::F32))
        .collect()
}

/// A tuple of `dtypes`, each component of random dimensions.
fn tuple(d: &mut Draw<'_>, dtypes: &[DType]) -> Result<Vec<Tensor>> {
    dtypes
        .iter()
        .map(|&dtype| {
            let dims = d.dims(0..=2, 0..=3);
            d.tensor(dtype, &dims)
        })
        .collect()
}

/// A new queue of random types and capacity holding `at_least` to three
/// tuples, closed now and then.
fn queue(d: &mut Draw<'_>, at_least: usize) -> Result<FifoQueueHandle<'static>> {
    let dtypes = dtypes(d);
    let mut builder = FifoQueueHandle::builder(&dtypes);
    if d.chance(0.5) {
        builder = builder.capacity(d.size(at_least..=4));
    }
    let queue = builder.build()?;
    for _ in 0..d.size(at_least..=3) {
        let tuple = tuple(d, &dtypes)?;
        // A full queue refuses it at once: fine, it is full then.
        let _ = queue.enqueue_timeout(tuple, std::time::Duration::ZERO);
    }
    if d.chance(0.2) {
        queue.close()?;
    }
    Ok(queue)
}

/// FIFOQueueV2: random types, shapes now and then, a capacity.
fn create_cases(d: &mut Draw<'_>) -> Result<Case> {
    let dtypes = dtypes(d);
    let mut case = Case::new()
        .attr("component_types", dtypes.clone())
        .attr("capacity", d.int(-1..=4));
    if d.chance(0.3) {
        let shapes: Vec<op_core::ShapeValue> = dtypes
            .iter()
            .map(|_| {
                let sizes: Vec<i64> = d.dims(0..=2, 0..=3).iter().map(|&n| n as i64).collect();
                op_core::ShapeValue::from_sizes(&sizes)
            })
            .collect();
        case = case.attr("shapes", shapes);
    }
    Ok(case)
}

/// A queue holding `at_least` tuples or more, and the component types a
/// case gives it: its own, now and then others.
fn queue_and_types(
    d: &mut Draw<'_>,
    at_least: usize,
) -> Result<(FifoQueueHandle<'static>, Vec<DType>)> {
    let queue = queue(d, at_least)?;
    let types = if d.chance(0.8) {
        queue.dtypes().to_vec()
    } else {
        dtypes(d)
    };
    Ok((queue, types))
}

/// QueueEnqueueV2: a queue and a tuple of its types (now and then of
/// other types).
fn enqueue_cases(d: &mut Draw<'_>) -> Result<Case> {
    let (queue, types) = queue_and_types(d, 0)?;
    Ok(Case::new()
        .input(queue.handle().clone())
        .input_list(tuple(d, &types)?)
        .attr("timeout_ms", d.int(0..=1)))
}

/// QueueDequeueV2: a queue holding a tuple or more, and its types (now
/// and then others).
fn dequeue_cases(d: &mut Draw<'_>) -> Result<Case> {
    let (queue, types) = queue_and_types(d, 1)?;
    Ok(Case::new()
        .input(queue.handle().clone())
        .attr("component_types", types)
        .attr("timeout_ms", d.int(0..=1)))
}

/// QueueSizeV2: a queue.
fn size_cases(d: &mut Draw<'_>) -> Result<Case> {
    Ok(Case::new().input(queue(d, 0)?.handle().clone()))
}

/// QueueCloseV2: a queue (closed already now and then), either way of
/// closing. No enqueue waits on a drawn queue, so no close waits either.
fn close_cases(d: &mut Draw<'_>) -> Result<Case> {
    Ok(Case::new()
        .input(queue(d, 0)?.handle().clone())
        .attr("cancel_pending_enqueues", d.bool()))
}

inventory::submit! { OpCheckRegistration::generator("FIFOQueueV2", create_cases, file!(), line!()) }
inventory::submit! { OpCheckRegistration::generator("QueueEnqueueV2", enqueue_cases, file!(), line!()) }
inventory::submit! { OpCheckRegistration::generator("QueueDequeueV2", dequeue_cases, file!(), line!()) }
inventory::submit! { OpCheckRegistration::generator("QueueSizeV2", size_cases, file!(), line!()) }
inventory::submit! { OpCheckRegistration::generator("QueueCloseV2", close_cases, file!(), line!()) }
