//! Our kernels over a host's memory: the placed path (large calls) and
//! the copied path (small ones) give our runtime's results, and a host's
//! mistakes come back as errors.

use op_core::{AttrValue, DType, Runtime, Tensor};
use op_host::kernel::{HostBuffer, HostKernel, OutputSink, PLACED_BYTES, lend_input};
use proptest::prelude::*;

/// A host that allocates each output in a Vec (of u64s: aligned as a
/// host's buffers are), and remembers the dims it was asked for.
#[derive(Default)]
struct Vecs {
    buffers: Vec<Vec<u64>>,
    lens: Vec<usize>,
    dims: Vec<Vec<usize>>,
    /// Bytes to give less than asked, to play a faulty host.
    short_by: usize,
}

impl OutputSink for Vecs {
    fn allocate(
        &mut self,
        _index: usize,
        dtype: DType,
        dims: &[usize],
    ) -> op_core::Result<HostBuffer> {
        let len = dims.iter().product::<usize>() * dtype.size_of().unwrap() - self.short_by;
        self.buffers.push(vec![u64::MAX; len.div_ceil(8)]);
        self.lens.push(len);
        self.dims.push(dims.to_vec());
        let buffer = self.buffers.last_mut().unwrap();
        Ok(HostBuffer {
            data: buffer.as_mut_ptr().cast(),
            len,
        })
    }
}

impl Vecs {
    /// Output `j`'s bytes.
    fn bytes(&self, j: usize) -> &[u8] {
        &bytemuck::cast_slice(&self.buffers[j])[..self.lens[j]]
    }
}

fn zero_out(values: &[i32]) -> op_core::Result<Vecs> {
    op_kernels::link();
    let kernel = HostKernel::new(Runtime::global(), "ZeroOut", &[DType::I32.into()], &[], "z")?;
    let mut sink = Vecs::default();
    // SAFETY: `values` outlives the lent input, gone when the block ends;
    // the sink's buffers are its own.
    unsafe {
        let mut inputs = [lend_input(
            DType::I32,
            &[values.len()],
            bytemuck::cast_slice(values),
        )?];
        kernel.run(&mut inputs, &mut sink)?;
    }
    Ok(sink)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Below and above the placed threshold, the host's buffer holds what
    /// our runtime gives.
    #[test]
    fn a_host_buffer_holds_our_runtimes_result(len in prop_oneof![0usize..64, (PLACED_BYTES / 4 - 8)..(PLACED_BYTES / 4 + 64)], seed: i32) {
        let values: Vec<i32> = (0..len as i32).map(|i| i.wrapping_mul(seed) | 1).collect();
        let sink = zero_out(&values).unwrap();
        let ours = Runtime::global()
            .run("ZeroOut", vec![Tensor::from_vec([len], values.clone()).unwrap()], &[])
            .unwrap();
        prop_assert_eq!(&sink.dims, &vec![vec![len]]);
        prop_assert_eq!(bytemuck::cast_slice::<u8, i32>(sink.bytes(0)), ours[0].as_slice::<i32>().unwrap());
    }
}

#[test]
fn a_host_buffer_of_the_wrong_size_is_an_error_not_a_write_past_its_end() {
    op_kernels::link();
    for len in [4, PLACED_BYTES] {
        let values = vec![1i32; len];
        let kernel =
            HostKernel::new(Runtime::global(), "ZeroOut", &[DType::I32.into()], &[], "z").unwrap();
        let mut sink = Vecs {
            short_by: 4,
            ..Vecs::default()
        };
        // SAFETY: as in `zero_out`.
        let error = unsafe {
            let mut inputs =
                [lend_input(DType::I32, &[len], bytemuck::cast_slice(&values)).unwrap()];
            kernel.run(&mut inputs, &mut sink).unwrap_err()
        };
        assert!(error.message().contains("bytes, not"), "{error}");
    }
}

#[test]
fn a_bool_input_that_is_not_0_or_1_is_refused() {
    // SAFETY: the bytes outlive the call.
    let error = unsafe { lend_input(DType::Bool, &[2], &[1, 7]) }.unwrap_err();
    assert!(error.message().contains("byte 7"), "{error}");
    // SAFETY: as above.
    let ok = unsafe { lend_input(DType::Bool, &[2], &[1, 0]) }.unwrap();
    assert_eq!(ok.as_slice::<bool>().unwrap(), [true, false]);
}

#[test]
fn strings_are_left_to_the_host() {
    // SAFETY: nothing is read.
    let error = unsafe { lend_input(DType::String, &[0], &[]) }.unwrap_err();
    assert_eq!(error.code(), op_core::Code::Unimplemented);
}

#[test]
fn a_kernel_error_names_the_op_and_node() {
    op_kernels::link();
    // ZeroOut takes int32 only.
    let error = HostKernel::new(
        Runtime::global(),
        "ZeroOut",
        &[DType::F64.into()],
        &[],
        "my_node",
    )
    .err()
    .unwrap();
    assert!(error.to_string().contains("ZeroOut"), "{error}");
    let error = HostKernel::new(
        Runtime::global(),
        "NoSuchOp",
        &[],
        &[("T", AttrValue::Type(DType::F32))],
        "n",
    )
    .err()
    .unwrap();
    assert!(error.to_string().contains("NoSuchOp"), "{error}");
}
