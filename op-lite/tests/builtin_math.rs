//! The builtins' math against naive references written plainly here (loops
//! over indices, TensorFlow Lite's reference kernels transcribed), on random
//! shapes and params, plus the edge cases: empty tensors, padding larger
//! than the input, strides past the filter, dilation.

use op_lite::builtins::math::batch_matmul::{BatchMatMulParams, batch_matmul, batch_matmul_shape};
use op_lite::builtins::math::conv::{
    Conv2DParams, PackedFilter, conv2d, conv2d_packed, conv2d_scratch_len, conv2d_shape,
    depthwise_conv2d, depthwise_conv2d_packed, depthwise_conv2d_shape, window,
};
use op_lite::builtins::math::elementwise::{
    BinaryOp, BinaryParams, UnaryOp, binary, binary_shape, unary,
};
use op_lite::builtins::math::fully_connected::{
    FullyConnectedParams, PackedWeights, fully_connected, fully_connected_packed,
    fully_connected_shape,
};
use op_lite::builtins::math::pool::{Pool2DParams, average_pool2d, max_pool2d, pool2d_shape};
use op_lite::builtins::math::reduce::{ReduceOp, ReduceParams, reduce, reduce_shape};
use op_lite::builtins::math::shape_ops::{
    CumSumParams, GatherParams, StridedSliceParams, concatenation, concatenation_shape, cumsum,
    gather, gather_shape, pack, pack_shape, pad, pad_shape, slice, slice_shape, strided_slice,
    strided_slice_shape, transpose, transpose_shape,
};
use op_lite::builtins::math::softmax::{SoftmaxParams, softmax};
use op_lite::builtins::math::{ActivationRange, num_elements};
use op_lite::model::{Activation, Padding};
use proptest::prelude::*;

/// Deterministic values in [-2, 2) from a seed.
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
        })
        .collect()
}

/// Row-major offset of `idx` in `shape`.
fn offset(shape: &[usize], idx: &[usize]) -> usize {
    shape.iter().zip(idx).fold(0, |o, (&d, &i)| o * d + i)
}

/// Every index of `shape`, in row-major order.
fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let mut all = vec![vec![]];
    for &d in shape {
        all = all
            .into_iter()
            .flat_map(|p| (0..d).map(move |i| [p.clone(), vec![i]].concat()))
            .collect();
    }
    all
}

fn close(got: &[f32], want: &[f32], tol: f32) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (g.is_nan() && w.is_nan()) || (g - w).abs() <= tol * (1.0 + w.abs());
        assert!(
            ok,
            "element {i}: got {g}, want {w}\n got {got:?}\nwant {want:?}"
        );
    }
}

fn activation() -> impl Strategy<Value = Activation> {
    prop_oneof![
        Just(Activation::None),
        Just(Activation::Relu),
        Just(Activation::Relu6),
        Just(Activation::ReluN1To1)
    ]
}

fn padding() -> impl Strategy<Value = Padding> {
    prop_oneof![Just(Padding::Same), Just(Padding::Valid)]
}

/// reference/conv.h, grouped, transcribed.
#[allow(clippy::too_many_arguments)]
fn naive_conv(
    p: &Conv2DParams,
    is: &[usize],
    x: &[f32],
    fs: &[usize],
    f: &[f32],
    bias: Option<&[f32]>,
    os: &[usize],
    depthwise: bool,
) -> Vec<f32> {
    let (ph, pw) = (
        window(p.padding, is[1], fs[1], p.stride_h, p.dilation_h)
            .unwrap()
            .pad as i64,
        window(p.padding, is[2], fs[2], p.stride_w, p.dilation_w)
            .unwrap()
            .pad as i64,
    );
    let act = ActivationRange::<f32>::new(p.activation);
    let mut out = vec![0.0; num_elements(os).unwrap()];
    for o in indices(os) {
        let (b, oy, ox, oc) = (o[0], o[1], o[2], o[3]);
        let mut total = 0.0f32;
        for fy in 0..fs[1] {
            for fx in 0..fs[2] {
                let iy = (oy * p.stride_h) as i64 - ph + (p.dilation_h * fy) as i64;
                let ix = (ox * p.stride_w) as i64 - pw + (p.dilation_w * fx) as i64;
                if iy < 0 || ix < 0 || iy >= is[1] as i64 || ix >= is[2] as i64 {
                    continue;
                }
                let (iy, ix) = (iy as usize, ix as usize);
                if depthwise {
                    let m = fs[3] / is[3];
                    total += x[offset(is, &[b, iy, ix, oc / m])] * f[offset(fs, &[0, fy, fx, oc])];
                } else {
                    let group = oc / (os[3] / (is[3] / fs[3]));
                    for ic in 0..fs[3] {
                        total += x[offset(is, &[b, iy, ix, ic + group * fs[3]])]
                            * f[offset(fs, &[oc, fy, fx, ic])];
                    }
                }
            }
        }
        out[offset(os, &o)] = act.apply(total + bias.map_or(0.0, |b| b[oc]));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn conv2d_matches_the_reference_loops(
        // Widths past 4 pixels and 4, 8 or more output channels reach every
        // register block of the direct loops, and more than 8 the GEMM.
        batches in 0usize..3, h in 1usize..8, w in 1usize..12, group_in in 1usize..4, groups in 1usize..3,
        group_out in 1usize..11, fh in 1usize..4, fw in 1usize..4, stride_h in 1usize..4, stride_w in 1usize..4,
        dilation_h in 1usize..3, dilation_w in 1usize..3, padding in padding(), activation in activation(),
        with_bias: bool, seed: u64,
    ) {
        let p = Conv2DParams { padding, stride_h, stride_w, dilation_h, dilation_w, activation };
        let is = [batches, h, w, group_in * groups];
        let fs = [group_out * groups, fh, fw, group_in];
        let Ok(os) = conv2d_shape(&is, &fs, None, &p) else {
            // Only a VALID window that cannot fit is refused.
            prop_assert_eq!(padding, Padding::Valid);
            return Ok(());
        };
        let x = values(num_elements(&is).unwrap(), seed);
        let f = values(num_elements(&fs).unwrap(), seed ^ 1);
        let b = values(fs[0], seed ^ 2);
        let bias = with_bias.then_some(&b[..]);
        let mut out = vec![f32::NAN; num_elements(&os).unwrap()];
        let mut scratch = vec![f32::NAN; conv2d_scratch_len(&is, &fs, &p).unwrap()];
        conv2d(&p, &is, &x, &fs, &f, bias, &mut out, &mut scratch).unwrap();
        let want = naive_conv(&p, &is, &x, &fs, &f, bias, &os, false);
        close(&out, &want, 1e-5);
        // The filter packed once (the direct loops only) gives the same sums.
        let packed = PackedFilter::conv2d(&p, &is, &fs, &f).unwrap();
        let planar = groups == 1 && fs[0] < 8 && stride_h == 1 && stride_w == 1;
        prop_assert_eq!(packed.is_some(), groups == 1 && fs[0] <= 8 && !planar);
        if let Some(packed) = packed {
            let mut packed_out = vec![f32::NAN; out.len()];
            scratch.fill(f32::NAN);
            conv2d_packed(&p, &is, &x, &packed, bias, &mut packed_out, &mut scratch).unwrap();
            prop_assert_eq!(
                packed_out.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                out.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn depthwise_conv2d_matches_the_reference_loops(
        // 4 and 8 channels (and multiples) take the vector blocks.
        batches in 0usize..3, h in 1usize..8, w in 1usize..12, channels in 1usize..10, multiplier in 1usize..4,
        fh in 1usize..4, fw in 1usize..4, stride_h in 1usize..4, stride_w in 1usize..4,
        dilation_h in 1usize..3, dilation_w in 1usize..3, padding in padding(), activation in activation(),
        with_bias: bool, seed: u64,
    ) {
        let p = Conv2DParams { padding, stride_h, stride_w, dilation_h, dilation_w, activation };
        let is = [batches, h, w, channels];
        let fs = [1, fh, fw, channels * multiplier];
        let Ok(os) = depthwise_conv2d_shape(&is, &fs, None, &p) else {
            prop_assert_eq!(padding, Padding::Valid);
            return Ok(());
        };
        let x = values(num_elements(&is).unwrap(), seed);
        let f = values(num_elements(&fs).unwrap(), seed ^ 1);
        let b = values(fs[3], seed ^ 2);
        let bias = with_bias.then_some(&b[..]);
        let mut out = vec![f32::NAN; num_elements(&os).unwrap()];
        depthwise_conv2d(&p, &is, &x, &fs, &f, bias, &mut out).unwrap();
        let want = naive_conv(&p, &is, &x, &fs, &f, bias, &os, true);
        close(&out, &want, 1e-5);
        // The filter packed once: the same sums, bit for bit.
        let packed = PackedFilter::depthwise_conv2d(&p, &is, &fs, &f).unwrap();
        let mut packed_out = vec![f32::NAN; out.len()];
        depthwise_conv2d_packed(&p, &is, &x, &packed, bias, &mut packed_out).unwrap();
        close(&packed_out, &want, 1e-5);
        prop_assert_eq!(
            packed_out.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            out.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn pooling_matches_the_reference_loops_counting_only_in_bounds_elements(
        // Past 4 channels: the 4-lane blocks and their tails.
        batches in 0usize..3, h in 1usize..8, w in 1usize..8, channels in 1usize..10, fh in 1usize..5,
        fw in 1usize..5, stride_h in 1usize..4, stride_w in 1usize..4, padding in padding(),
        activation in activation(), seed: u64,
    ) {
        let p = Pool2DParams { padding, stride_h, stride_w, filter_h: fh, filter_w: fw, activation };
        let is = [batches, h, w, channels];
        let Ok(os) = pool2d_shape(&is, &p) else {
            prop_assert_eq!(padding, Padding::Valid);
            return Ok(());
        };
        let x = values(num_elements(&is).unwrap(), seed);
        let (ph, pw) = (
            window(padding, h, fh, stride_h, 1).unwrap().pad as i64,
            window(padding, w, fw, stride_w, 1).unwrap().pad as i64,
        );
        let act = ActivationRange::<f32>::new(activation);
        let (mut avg, mut max) = (vec![0.0; num_elements(&os).unwrap()], vec![0.0; num_elements(&os).unwrap()]);
        for o in indices(&os) {
            let (mut sum, mut count, mut m) = (0.0f32, 0, f32::MIN);
            for fy in 0..fh as i64 {
                for fx in 0..fw as i64 {
                    let (iy, ix) = (o[1] as i64 * stride_h as i64 - ph + fy, o[2] as i64 * stride_w as i64 - pw + fx);
                    if iy >= 0 && ix >= 0 && iy < h as i64 && ix < w as i64 {
                        let v = x[offset(&is, &[o[0], iy as usize, ix as usize, o[3]])];
                        sum += v;
                        count += 1;
                        m = m.max(v);
                    }
                }
            }
            avg[offset(&os, &o)] = act.apply(sum / count as f32);
            max[offset(&os, &o)] = act.apply(m);
        }
        let mut out = vec![f32::NAN; avg.len()];
        average_pool2d(&p, &is, &x, &mut out).unwrap();
        close(&out, &avg, 1e-5);
        max_pool2d(&p, &is, &x, &mut out).unwrap();
        close(&out, &max, 0.0);
    }

    #[test]
    fn fully_connected_matches_the_reference_loops(
        lead in prop::collection::vec(0usize..4, 0..3), depth in 1usize..40, units in 0usize..40,
        keep_num_dims: bool, with_bias: bool, activation in activation(), seed: u64,
    ) {
        let is = [lead.clone(), vec![depth]].concat();
        let ws = [units, depth];
        let p = FullyConnectedParams { activation, keep_num_dims };
        let os = fully_connected_shape(&is, &ws, None, &p).unwrap();
        let batches = num_elements(&is).unwrap() / depth;
        if keep_num_dims {
            prop_assert_eq!(&os, &[lead, vec![units]].concat());
        } else {
            prop_assert_eq!(&os, &vec![batches, units]);
        }
        let x = values(num_elements(&is).unwrap(), seed);
        let wv = values(units * depth, seed ^ 1);
        let b = values(units, seed ^ 2);
        let bias = with_bias.then_some(&b[..]);
        let act = ActivationRange::<f32>::new(activation);
        let mut want = vec![0.0; batches * units];
        for i in 0..batches {
            for u in 0..units {
                let total: f32 = (0..depth).map(|d| x[i * depth + d] * wv[u * depth + d]).sum();
                want[i * units + u] = act.apply(total + bias.map_or(0.0, |b| b[u]));
            }
        }
        let mut out = vec![f32::NAN; want.len()];
        fully_connected(&p, &is, &x, &ws, &wv, bias, &mut out).unwrap();
        close(&out, &want, 1e-5);
        // The packed path (blocks of 8 units, the last padded) agrees too.
        let packed = PackedWeights::new(&ws, &wv).unwrap();
        let mut out = vec![f32::NAN; want.len()];
        fully_connected_packed(&p, &is, &x, &packed, bias, &mut out).unwrap();
        close(&out, &want, 1e-5);
    }

    #[test]
    fn batch_matmul_matches_the_reference_loops(
        lb in prop::collection::vec(prop_oneof![Just(1usize), Just(2), Just(3)], 0..4),
        rb_pick in prop::collection::vec(any::<bool>(), 0..4),
        m in 0usize..9, k in 0usize..9, n in 0usize..9, adj_x: bool, adj_y: bool, seed: u64,
    ) {
        // rhs batch dims: each a broadcast 1 or lhs's dim, possibly fewer.
        let lb: Vec<usize> = lb.into_iter().take(3).collect();
        let r = lb.len().min(rb_pick.len());
        let rb: Vec<usize> = lb[lb.len() - r..].iter().zip(&rb_pick).map(|(&d, &one)| if one { 1 } else { d }).collect();
        let ls = [lb.clone(), if adj_x { vec![k, m] } else { vec![m, k] }].concat();
        let rs = [rb.clone(), if adj_y { vec![n, k] } else { vec![k, n] }].concat();
        let p = BatchMatMulParams { adj_x, adj_y };
        let os = batch_matmul_shape(&ls, &rs, &p).unwrap();
        let a = values(num_elements(&ls).unwrap(), seed);
        let b = values(num_elements(&rs).unwrap(), seed ^ 1);
        let mut want = vec![0.0; num_elements(&os).unwrap()];
        for o in indices(&os) {
            let batch = &o[..o.len() - 2];
            let (i, j) = (o[o.len() - 2], o[o.len() - 1]);
            let pick = |dims: &[usize]| -> Vec<usize> {
                let skip = batch.len() - dims.len();
                dims.iter().zip(&batch[skip..]).map(|(&d, &x)| if d == 1 { 0 } else { x }).collect()
            };
            let (lbi, rbi) = (pick(&lb), pick(&rb));
            let mut total = 0.0f32;
            for q in 0..k {
                let l = if adj_x { [lbi.clone(), vec![q, i]] } else { [lbi.clone(), vec![i, q]] }.concat();
                let r = if adj_y { [rbi.clone(), vec![j, q]] } else { [rbi.clone(), vec![q, j]] }.concat();
                total += a[offset(&ls, &l)] * b[offset(&rs, &r)];
            }
            want[offset(&os, &o)] = total;
        }
        let mut out = vec![f32::NAN; want.len()];
        batch_matmul(&p, &ls, &a, &rs, &b, &mut out).unwrap();
        close(&out, &want, 1e-5);
    }

    #[test]
    fn binary_ops_broadcast_as_numpy_does(
        out_shape in prop::collection::vec(0usize..4, 0..5), a_ones: u8, b_ones: u8, a_drop in 0usize..3,
        b_drop in 0usize..3, op in 0usize..7, activation in activation(), seed: u64,
    ) {
        let ops = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Maximum,
                   BinaryOp::Minimum, BinaryOp::SquaredDifference];
        let shrink = |ones: u8, drop: usize| -> Vec<usize> {
            out_shape.iter().enumerate().skip(drop.min(out_shape.len()))
                .map(|(i, &d)| if ones & (1 << i) != 0 { 1 } else { d }).collect()
        };
        let (a_shape, b_shape) = (shrink(a_ones, a_drop), shrink(b_ones, b_drop));
        let os = binary_shape(&a_shape, &b_shape).unwrap();
        let a = values(num_elements(&a_shape).unwrap(), seed);
        let b = values(num_elements(&b_shape).unwrap(), seed ^ 1);
        let p = BinaryParams { op: ops[op], activation };
        let act = ActivationRange::<f32>::new(activation);
        let pick = |shape: &[usize], o: &[usize]| -> usize {
            let skip = o.len() - shape.len();
            let idx: Vec<usize> = shape.iter().zip(&o[skip..]).map(|(&d, &x)| if d == 1 { 0 } else { x }).collect();
            offset(shape, &idx)
        };
        let f = |x: f32, y: f32| match ops[op] {
            BinaryOp::Add => x + y, BinaryOp::Sub => x - y, BinaryOp::Mul => x * y, BinaryOp::Div => x / y,
            BinaryOp::Maximum => x.max(y), BinaryOp::Minimum => x.min(y),
            BinaryOp::SquaredDifference => (x - y) * (x - y),
        };
        let want: Vec<f32> = indices(&os).iter()
            .map(|o| act.apply(f(a[pick(&a_shape, o)], b[pick(&b_shape, o)]))).collect();
        let mut out = vec![f32::NAN; want.len()];
        binary(p, &a_shape, &a, &b_shape, &b, &mut out).unwrap();
        close(&out, &want, 0.0);
        // int32, where the op's values stay exact and divisors non-zero.
        let ai: Vec<i32> = a.iter().map(|v| (v * 10.0) as i32).collect();
        let bi: Vec<i32> = b.iter().map(|v| { let v = (v * 10.0) as i32; if v == 0 { 3 } else { v } }).collect();
        let fi = |x: i32, y: i32| match ops[op] {
            BinaryOp::Add => x + y, BinaryOp::Sub => x - y, BinaryOp::Mul => x * y, BinaryOp::Div => x / y,
            BinaryOp::Maximum => x.max(y), BinaryOp::Minimum => x.min(y),
            BinaryOp::SquaredDifference => (x - y) * (x - y),
        };
        let acti = ActivationRange::<i32>::new(activation);
        let want: Vec<i32> = indices(&os).iter()
            .map(|o| acti.apply(fi(ai[pick(&a_shape, o)], bi[pick(&b_shape, o)]))).collect();
        let mut out = vec![0; want.len()];
        binary(p, &a_shape, &ai, &b_shape, &bi, &mut out).unwrap();
        prop_assert_eq!(out, want);
    }

    #[test]
    fn mean_and_sum_match_the_reference_loops(
        shape in prop::collection::vec(0usize..4, 1..5), axes in prop::collection::vec(-4i32..4, 0..4),
        keep_dims: bool, seed: u64,
    ) {
        let r = shape.len() as i32;
        let axes: Vec<i32> = axes.into_iter().filter(|&a| a >= -r && a < r).collect();
        let p = ReduceParams { keep_dims };
        let os = reduce_shape(&shape, &axes, &p).unwrap();
        let reduced: Vec<bool> = (0..shape.len()).map(|i| axes.iter().any(|&a| (a + r) % r == i as i32)).collect();
        let kept: Vec<usize> = shape.iter().zip(&reduced).map(|(&d, &red)| if red { 1 } else { d }).collect();
        let x = values(num_elements(&shape).unwrap(), seed);
        let (mut sum, mut count) = (vec![0.0f32; num_elements(&kept).unwrap()], 0usize);
        for i in indices(&shape) {
            let o: Vec<usize> = i.iter().zip(&reduced).map(|(&x, &red)| if red { 0 } else { x }).collect();
            sum[offset(&kept, &o)] += x[offset(&shape, &i)];
        }
        if let Some(first) = indices(&kept).first() {
            count = indices(&shape).iter().filter(|i| {
                i.iter().zip(first).zip(&reduced).all(|((a, b), &red)| red || a == b)
            }).count();
        }
        prop_assert_eq!(num_elements(&os).unwrap(), sum.len());
        let mut out = vec![f32::NAN; sum.len()];
        reduce(ReduceOp::Sum, &shape, &x, &axes, &mut out).unwrap();
        close(&out, &sum, 1e-5);
        reduce(ReduceOp::Mean, &shape, &x, &axes, &mut out).unwrap();
        let mean: Vec<f32> = sum.iter().map(|s| s / count as f32).collect();
        close(&out, &mean, 1e-5);
    }

    #[test]
    fn transpose_moves_every_element_to_its_permuted_index(
        shape in prop::collection::vec(0usize..4, 0..7), perm_seed: u64,
    ) {
        let mut perm: Vec<i32> = (0..shape.len() as i32).collect();
        let mut s = perm_seed;
        for i in (1..perm.len()).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
            perm.swap(i, (s >> 33) as usize % (i + 1));
        }
        let os = transpose_shape(&shape, &perm).unwrap();
        let x: Vec<i64> = (0..num_elements(&shape).unwrap() as i64).collect();
        let mut out = vec![-1i64; x.len()];
        transpose(&shape, &x, &perm, &mut out).unwrap();
        for o in indices(&os) {
            let mut i = vec![0; shape.len()];
            for (d, &p) in perm.iter().enumerate() {
                i[p as usize] = o[d];
            }
            prop_assert_eq!(out[offset(&os, &o)], x[offset(&shape, &i)]);
        }
    }

    #[test]
    fn strided_slices_without_ellipsis_select_as_python_slices_do(
        shape in prop::collection::vec(0usize..6, 1..5),
        specs in prop::collection::vec((-7i32..7, -7i32..7, prop_oneof![-3i32..0, 1i32..4], any::<bool>(), any::<bool>(), any::<bool>()), 1..5),
    ) {
        let specs: Vec<_> = specs.into_iter().take(shape.len()).collect();
        let (mut p, mut begin, mut end, mut strides) = (StridedSliceParams::default(), vec![], vec![], vec![]);
        for (i, &(b, e, s, bm, em, shrink)) in specs.iter().enumerate() {
            begin.push(b);
            end.push(e);
            strides.push(if shrink { 1 } else { s });
            p.begin_mask |= (bm as i32) << i;
            p.end_mask |= (em as i32) << i;
            p.shrink_axis_mask |= (shrink as i32) << i;
        }
        // Python's slice.indices, and an index for a shrunk axis.
        let mut picks: Vec<Vec<usize>> = vec![];
        let mut out_shape = vec![];
        let mut valid = true;
        for (i, &n) in shape.iter().enumerate() {
            let n = n as i64;
            let Some(&(b, e, _, bm, em, shrink)) = specs.get(i) else {
                picks.push((0..n as usize).collect());
                out_shape.push(n as usize);
                continue;
            };
            if shrink {
                // TensorFlow Lite clamps a shrunk axis's begin into [0, n]
                // (TensorFlow itself would refuse one out of range); n has
                // no element, which is an error here.
                let b = if bm { 0 } else if b < 0 { (b as i64 + n).max(0) } else { (b as i64).min(n) };
                if b == n { valid = false; break; }
                picks.push(vec![b as usize]);
                continue;
            }
            let s = strides[i] as i64;
            let fix = |v: i64, lo: i64, hi: i64| { let v = if v < 0 { v + n } else { v }; v.clamp(lo, hi) };
            let (start, stop) = if s > 0 {
                (if bm { 0 } else { fix(b as i64, 0, n) }, if em { n } else { fix(e as i64, 0, n) })
            } else {
                (if bm { n - 1 } else { fix(b as i64, -1, n - 1) }, if em { -1 } else { fix(e as i64, -1, n - 1) })
            };
            let mut pick = vec![];
            let mut at = start;
            while (s > 0 && at < stop) || (s < 0 && at > stop) {
                pick.push(at as usize);
                at += s;
            }
            out_shape.push(pick.len());
            picks.push(pick);
        }
        let got = strided_slice_shape(&shape, &begin, &end, &strides, &p);
        if !valid {
            prop_assert!(got.is_err());
            return Ok(());
        }
        prop_assert_eq!(got.unwrap(), out_shape.clone());
        let x: Vec<i32> = (0..num_elements(&shape).unwrap() as i32).collect();
        let mut out = vec![-1; num_elements(&out_shape).unwrap()];
        strided_slice(&shape, &x, &begin, &end, &strides, &p, &mut out).unwrap();
        let mut want = vec![];
        let sizes: Vec<usize> = picks.iter().map(Vec::len).collect();
        for i in indices(&sizes) {
            let src: Vec<usize> = i.iter().zip(&picks).map(|(&k, pick)| pick[k]).collect();
            want.push(x[offset(&shape, &src)]);
        }
        prop_assert_eq!(out, want);
    }

    #[test]
    fn slice_and_pad_match_index_arithmetic(
        shape in prop::collection::vec(0usize..5, 1..6), cuts in prop::collection::vec((0usize..5, 0usize..5, any::<bool>()), 5),
        pads in prop::collection::vec((0i64..3, 0i64..3), 5),
    ) {
        let r = shape.len();
        let begin: Vec<i64> = (0..r).map(|i| cuts[i].0.min(shape[i]) as i64).collect();
        let size: Vec<i64> = (0..r).map(|i| if cuts[i].2 { -1 } else { cuts[i].1.min(shape[i] - begin[i] as usize) as i64 }).collect();
        let os = slice_shape(&shape, &begin, &size).unwrap();
        let x: Vec<i32> = (0..num_elements(&shape).unwrap() as i32).collect();
        let mut out = vec![-1; num_elements(&os).unwrap()];
        slice(&shape, &x, &begin, &size, &mut out).unwrap();
        let want: Vec<i32> = indices(&os).iter().map(|o| {
            let src: Vec<usize> = o.iter().zip(&begin).map(|(&a, &b)| a + b as usize).collect();
            x[offset(&shape, &src)]
        }).collect();
        prop_assert_eq!(out, want);

        let paddings: Vec<i64> = (0..r).flat_map(|i| [pads[i].0, pads[i].1]).collect();
        let ps = pad_shape(&shape, &paddings).unwrap();
        let mut out = vec![-1; num_elements(&ps).unwrap()];
        pad(&shape, &x, &paddings, 99, &mut out).unwrap();
        let want: Vec<i32> = indices(&ps).iter().map(|o| {
            let src: Option<Vec<usize>> = o.iter().enumerate().map(|(d, &a)| {
                let a = a as i64 - paddings[2 * d];
                (a >= 0 && a < shape[d] as i64).then_some(a as usize)
            }).collect();
            src.map_or(99, |s| x[offset(&shape, &s)])
        }).collect();
        prop_assert_eq!(out, want);
    }

    #[test]
    fn gather_picks_slices_along_the_axis_per_batch(
        params_shape in prop::collection::vec(1usize..4, 1..5), idx_extra in prop::collection::vec(0usize..3, 0..3),
        axis_pick: usize, bd_pick: usize, seed: u64,
    ) {
        let axis = axis_pick % params_shape.len();
        let batch_dims = bd_pick % (axis + 1);
        let indices_shape = [params_shape[..batch_dims].to_vec(), idx_extra].concat();
        let n = params_shape[axis];
        let idx: Vec<i32> = values(num_elements(&indices_shape).unwrap(), seed).iter()
            .map(|v| ((v + 2.0) * 100.0) as i32 % n as i32).collect();
        let p = GatherParams { axis: axis as i64, batch_dims: batch_dims as i64 };
        let os = gather_shape(&params_shape, &indices_shape, &p).unwrap();
        let x: Vec<i32> = (0..num_elements(&params_shape).unwrap() as i32).collect();
        let mut out = vec![-1; num_elements(&os).unwrap()];
        gather(&p, &params_shape, &x, &indices_shape, &idx, &mut out).unwrap();
        let ir = indices_shape.len() - batch_dims;
        let want: Vec<i32> = indices(&os).iter().map(|o| {
            let (lead, rest) = o.split_at(axis);
            let (coord, tail) = rest.split_at(ir);
            let which = idx[offset(&indices_shape, &[&lead[..batch_dims], coord].concat())];
            x[offset(&params_shape, &[lead, &[which as usize][..], tail].concat())]
        }).collect();
        prop_assert_eq!(out, want);
    }

    #[test]
    fn concatenation_pack_and_cumsum_match_index_arithmetic(
        shape in prop::collection::vec(0usize..4, 1..4), extra in prop::collection::vec(0usize..4, 1..4),
        axis_pick: usize, exclusive: bool, reverse: bool,
    ) {
        let axis = axis_pick % shape.len();
        let shapes: Vec<Vec<usize>> = extra.iter().map(|&e| { let mut s = shape.clone(); s[axis] = e; s }).collect();
        let datas: Vec<Vec<i32>> = shapes.iter().enumerate()
            .map(|(k, s)| (0..num_elements(s).unwrap() as i32).map(|v| v + 1000 * k as i32).collect()).collect();
        let refs: Vec<&[usize]> = shapes.iter().map(|s| &s[..]).collect();
        let os = concatenation_shape(&refs, axis as i64 - shape.len() as i64).unwrap();
        let mut out = vec![-1; num_elements(&os).unwrap()];
        concatenation(axis as i64, shapes.iter().map(|s| &s[..]).zip(datas.iter().map(|d| &d[..])), &mut out).unwrap();
        let want: Vec<i32> = indices(&os).iter().map(|o| {
            let (mut k, mut at) = (0, o[axis]);
            while at >= shapes[k][axis] { at -= shapes[k][axis]; k += 1; }
            let mut src = o.clone();
            src[axis] = at;
            datas[k][offset(&shapes[k], &src)]
        }).collect();
        prop_assert_eq!(out, want);

        let same: Vec<Vec<i32>> = (0..extra.len() as i32).map(|k| (0..num_elements(&shape).unwrap() as i32).map(|v| v + 1000 * k).collect()).collect();
        let ps = pack_shape(&shape, same.len(), axis as i64).unwrap();
        let mut out = vec![-1; num_elements(&ps).unwrap()];
        pack(&shape, axis as i64, same.iter().map(|d| &d[..]), &mut out).unwrap();
        let want: Vec<i32> = indices(&ps).iter().map(|o| {
            let mut src = o.clone();
            let k = src.remove(axis);
            same[k][offset(&shape, &src)]
        }).collect();
        prop_assert_eq!(out, want);

        let x: Vec<i64> = (0..num_elements(&shape).unwrap() as i64).map(|v| v * 3 - 5).collect();
        let mut out = vec![0; x.len()];
        cumsum(&CumSumParams { exclusive, reverse }, &shape, &x, axis as i64, &mut out).unwrap();
        for o in indices(&shape) {
            let mut want = 0;
            for a in 0..shape[axis] {
                let inside = if reverse { a > o[axis] || (!exclusive && a == o[axis]) } else { a < o[axis] || (!exclusive && a == o[axis]) };
                if inside {
                    let mut src = o.clone();
                    src[axis] = a;
                    want += x[offset(&shape, &src)];
                }
            }
            prop_assert_eq!(out[offset(&shape, &o)], want);
        }
    }

    #[test]
    fn softmax_and_unary_ops_match_their_formulas(
        rows in 0usize..4, depth in 1usize..9, beta in 0.1f32..3.0, seed: u64,
    ) {
        let x: Vec<f32> = values(rows * depth, seed).iter().map(|v| v * 5.0).collect();
        let mut out = vec![f32::NAN; x.len()];
        softmax(&SoftmaxParams { beta }, &[rows, depth], &x, &mut out).unwrap();
        let mut want = vec![];
        for r in x.chunks(depth) {
            let m = r.iter().cloned().fold(f32::MIN, f32::max) as f64;
            let e: Vec<f64> = r.iter().map(|&v| ((v as f64 - m) * beta as f64).exp()).collect();
            let s: f64 = e.iter().sum();
            want.extend(e.iter().map(|v| (v / s) as f32));
        }
        close(&out, &want, 1e-5);

        type Reference = fn(f64) -> f64;
        let cases: [(UnaryOp, Reference); 13] = [
            (UnaryOp::Square, |v| v * v), (UnaryOp::Exp, f64::exp), (UnaryOp::Sin, f64::sin),
            (UnaryOp::Cos, f64::cos), (UnaryOp::Abs, f64::abs), (UnaryOp::Neg, |v| -v),
            (UnaryOp::Tanh, f64::tanh), (UnaryOp::Logistic, |v| 1.0 / (1.0 + (-v).exp())),
            (UnaryOp::Relu, |v| v.max(0.0)), (UnaryOp::Relu6, |v| v.clamp(0.0, 6.0)),
            (UnaryOp::LeakyRelu { alpha: 0.2 }, |v| if v > 0.0 { v } else { 0.2 * v }),
            (UnaryOp::HardSwish, |v| v * (v + 3.0).clamp(0.0, 6.0) / 6.0),
            (UnaryOp::Gelu { approximate: true }, |v| 0.5 * v * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (v + 0.044715 * v * v * v)).tanh())),
        ];
        for (op, f) in cases {
            unary(op, &x, &mut out).unwrap();
            let want: Vec<f32> = x.iter().map(|&v| f(v as f64) as f32).collect();
            close(&out, &want, 1e-5);
        }
        let pos: Vec<f32> = x.iter().map(|v| v.abs() + 0.01).collect();
        for (op, f) in [(UnaryOp::Sqrt, f64::sqrt as fn(f64) -> f64), (UnaryOp::Rsqrt, |v: f64| 1.0 / v.sqrt()), (UnaryOp::Log, f64::ln)] {
            unary(op, &pos, &mut out).unwrap();
            let want: Vec<f32> = pos.iter().map(|&v| f(v as f64) as f32).collect();
            close(&out, &want, 1e-5);
        }
    }
}

#[test]
fn exact_gelu_is_x_times_the_normal_cdf() {
    // Φ(x) at x = -1, 0.5, 3 (from erf tables).
    let x = [-1.0f32, 0.5, 3.0];
    let mut out = [0.0; 3];
    unary(UnaryOp::Gelu { approximate: false }, &x, &mut out).unwrap();
    close(&out, &[-0.158_655_25, 0.345_731_3, 2.995_950_3], 1e-6);
}

#[test]
fn empty_tensors_flow_through_every_op() {
    let p = Conv2DParams {
        padding: Padding::Same,
        stride_h: 1,
        stride_w: 1,
        dilation_h: 1,
        dilation_w: 1,
        activation: Activation::None,
    };
    assert_eq!(
        conv2d_shape(&[0, 4, 4, 2], &[3, 3, 3, 2], None, &p).unwrap(),
        [0, 4, 4, 3]
    );
    conv2d(
        &p,
        &[0, 4, 4, 2],
        &[],
        &[3, 3, 3, 2],
        &[0.0; 54],
        None,
        &mut [],
        &mut [0.0; 54 + 16 * 18],
    )
    .unwrap();
    assert_eq!(
        conv2d_shape(&[1, 0, 4, 2], &[3, 3, 3, 2], None, &p).unwrap(),
        [1, 0, 4, 3]
    );
    let mut out: [f32; 0] = [];
    softmax(&SoftmaxParams { beta: 1.0 }, &[2, 0], &[], &mut out).unwrap();
    fully_connected(
        &FullyConnectedParams::default(),
        &[0, 3],
        &[],
        &[2, 3],
        &[0.0; 6],
        None,
        &mut out,
    )
    .unwrap();
    let mut mean = [0.0f32; 3];
    reduce(ReduceOp::Mean, &[3, 0], &[], &[1i32], &mut mean).unwrap();
    assert!(
        mean.iter().all(|v| v.is_nan()),
        "a float mean of nothing is NaN"
    );
    let mut mean = [7i32; 3];
    reduce(ReduceOp::Mean, &[3, 0], &[], &[1i32], &mut mean).unwrap();
    assert_eq!(mean, [0; 3], "an integer mean of nothing is 0");
}

#[test]
fn bad_inputs_are_errors_that_name_the_problem() {
    let err = fully_connected_shape(&[2, 5], &[3, 4], None, &FullyConnectedParams::default())
        .unwrap_err();
    assert!(err.message().contains("depth 4"), "{err}");
    assert!(
        gather(
            &GatherParams::default(),
            &[3],
            &[1, 2, 3],
            &[1],
            &[3i32],
            &mut [0]
        )
        .is_err()
    );
    assert!(
        gather(
            &GatherParams::default(),
            &[3],
            &[1, 2, 3],
            &[1],
            &[-1i64],
            &mut [0]
        )
        .is_err()
    );
    assert!(transpose_shape(&[2, 3], &[0i32, 2]).is_err());
    assert!(slice_shape(&[4], &[-1i32], &[2]).is_err());
    assert!(pad_shape(&[4], &[-1i32, 0]).is_err());
    assert!(pad_shape(&[4], &[i64::MAX, i64::MAX]).is_err());
    assert!(reduce_shape(&[2, 3], &[2i32], &ReduceParams::default()).is_err());
    assert!(
        strided_slice_shape(&[3], &[0i32], &[1], &[0], &StridedSliceParams::default()).is_err()
    );
    assert!(batch_matmul_shape(&[2, 3], &[4, 5], &BatchMatMulParams::default()).is_err());
    assert!(batch_matmul_shape(&[2, 2, 3], &[3, 3, 5], &BatchMatMulParams::default()).is_err());
    assert!(concatenation_shape(&[&[2, 3], &[3, 3]], 1).is_err());
    assert!(pack_shape(&[1; 6], 2, 0).is_err());
    // A buffer that does not match its shape.
    assert!(
        softmax(
            &SoftmaxParams { beta: 1.0 },
            &[2, 2],
            &[1.0; 3],
            &mut [0.0; 4]
        )
        .is_err()
    );
    let mut scratch = [0.0f32; 1];
    let p = Conv2DParams {
        padding: Padding::Valid,
        stride_h: 1,
        stride_w: 1,
        dilation_h: 1,
        dilation_w: 1,
        activation: Activation::None,
    };
    let err = conv2d(
        &p,
        &[1, 3, 3, 1],
        &[0.0; 9],
        &[1, 2, 2, 1],
        &[0.0; 4],
        None,
        &mut [0.0; 4],
        &mut scratch,
    );
    assert!(err.unwrap_err().message().contains("scratch"));
}

#[test]
fn strided_slice_expands_ellipsis_and_new_axes_as_tensorflow_does() {
    // x[..., tf.newaxis, 1:3] on [2, 3, 4]: ellipsis over the first two axes.
    let p = StridedSliceParams {
        ellipsis_mask: 1,
        new_axis_mask: 2,
        ..Default::default()
    };
    let shape = strided_slice_shape(&[2, 3, 4], &[0i32, 0, 1], &[0, 0, 3], &[1, 1, 1], &p).unwrap();
    assert_eq!(shape, [2, 3, 1, 2]);
    let x: Vec<i32> = (0..24).collect();
    let mut out = [0; 12];
    strided_slice(
        &[2, 3, 4],
        &x,
        &[0i32, 0, 1],
        &[0, 0, 3],
        &[1, 1, 1],
        &p,
        &mut out,
    )
    .unwrap();
    assert_eq!(out, [1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22]);
}
