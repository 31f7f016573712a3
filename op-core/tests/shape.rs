//! Tests of `TensorShape`.

use op_core::{Code, TensorShape};
use proptest::prelude::*;

#[test]
fn constructors_agree() {
    let dims = vec![2usize, 3];
    let shapes = [
        TensorShape::new(dims.clone()),
        TensorShape::new([2, 3]),
        TensorShape::from(dims.clone()),
        TensorShape::from(&dims[..]),
        TensorShape::from([2, 3]),
        TensorShape::matrix(2, 3),
        TensorShape::try_new(dims).unwrap(),
    ];
    for shape in &shapes {
        assert_eq!(shape, &shapes[0]);
        assert!(shape.is_same_size(&shapes[0]));
    }
    assert_eq!(TensorShape::vector(4).dims(), [4]);
    assert_eq!(TensorShape::scalar(), TensorShape::default());
    assert_eq!(TensorShape::scalar(), TensorShape::new([]));
}

#[test]
fn queries() {
    let s = TensorShape::new([2, 3, 4]);
    assert_eq!(s.rank(), 3);
    assert_eq!(s.dims(), [2, 3, 4]);
    assert_eq!(s.dim_size(1), Some(3));
    assert_eq!(s.dim_size(3), None);
    assert_eq!(s.num_elements(), 24);
    assert!(!s.is_scalar() && !s.is_vector() && !s.is_matrix());
    assert!(TensorShape::scalar().is_scalar());
    assert!(TensorShape::vector(0).is_vector());
    assert!(TensorShape::matrix(1, 1).is_matrix());
    assert!(!s.is_same_size(&TensorShape::new([2, 3])));
    assert!(!s.is_same_size(&TensorShape::new([4, 3, 2])));
}

#[test]
fn num_elements() {
    assert_eq!(TensorShape::scalar().num_elements(), 1);
    assert_eq!(TensorShape::vector(0).num_elements(), 0);
    assert_eq!(TensorShape::new([5, 0, 7]).num_elements(), 0);
    assert_eq!(TensorShape::new([1, 1, 1]).num_elements(), 1);
}

#[test]
fn display_is_tensorflows() {
    assert_eq!(TensorShape::new([2, 3]).to_string(), "[2,3]");
    assert_eq!(TensorShape::scalar().to_string(), "[]");
    assert_eq!(TensorShape::vector(7).to_string(), "[7]");
    assert_eq!(TensorShape::new([1, 0, 10]).to_string(), "[1,0,10]");
}

#[test]
fn add_and_remove_dims() {
    let mut s = TensorShape::scalar();
    s.add_dim(2);
    s.add_dim(0);
    s.add_dim(5);
    assert_eq!(s.dims(), [2, 0, 5]);
    s.remove_dim(1);
    assert_eq!(s.dims(), [2, 5]);
    s.try_add_dim(3).unwrap();
    assert_eq!(s.num_elements(), 30);
}

#[test]
fn overflowing_shapes_are_rejected() {
    let max = isize::MAX as usize;
    let err = TensorShape::try_new([max, 2]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        format!("shape [{max},2] has too many elements (more than {max})")
    );
    assert!(TensorShape::try_new([usize::MAX]).is_err());
    assert!(TensorShape::try_new([1 << 32, 1 << 32]).is_err());

    let mut s = TensorShape::vector(max);
    assert!(s.try_add_dim(2).is_err());
    assert_eq!(s.dims(), [max], "unchanged after a failed try_add_dim");
    s.try_add_dim(1).unwrap();
}

#[test]
#[should_panic(expected = "has too many elements")]
fn new_panics_on_overflow() {
    TensorShape::new([usize::MAX, 2]);
}

#[test]
#[should_panic(expected = "has too many elements")]
fn add_dim_panics_on_overflow() {
    TensorShape::vector(isize::MAX as usize).add_dim(2);
}

#[test]
#[should_panic(expected = "cannot remove dimension 2 of shape [1,2]")]
fn remove_dim_panics_out_of_range() {
    TensorShape::new([1, 2]).remove_dim(2);
}

proptest! {
    #[test]
    fn num_elements_is_the_product(dims in prop::collection::vec(0usize..100, 0..6)) {
        let shape = TensorShape::new(dims.clone());
        prop_assert_eq!(shape.num_elements(), dims.iter().product::<usize>());
        prop_assert_eq!(shape.rank(), dims.len());
        let text = format!("[{}]", dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(","));
        prop_assert_eq!(shape.to_string(), text);
    }
}

mod broadcasting {
    use op_core::TensorShape;
    use proptest::prelude::*;

    fn shape(dims: &[usize]) -> TensorShape {
        TensorShape::from(dims)
    }

    /// Two shapes and what they broadcast to.
    type Case = (&'static [usize], &'static [usize], Option<&'static [usize]>);

    #[test]
    fn shapes_broadcast_as_numpy_does() {
        let cases: &[Case] = &[
            (&[], &[], Some(&[])),
            (&[3], &[], Some(&[3])),
            (&[2, 3], &[3], Some(&[2, 3])),
            (&[2, 1], &[1, 3], Some(&[2, 3])),
            (&[5, 1, 4], &[3, 1], Some(&[5, 3, 4])),
            (&[0, 1], &[1, 7], Some(&[0, 7])),
            (&[0], &[1], Some(&[0])),
            (&[2, 3], &[2], None),
            (&[0], &[2], None),
        ];
        for &(a, b, expected) in cases {
            let got = shape(a).broadcast(&shape(b));
            assert_eq!(got, expected.map(shape), "{a:?} with {b:?}");
            assert_eq!(shape(b).broadcast(&shape(a)), got, "{b:?} with {a:?}");
        }
    }

    proptest! {
        /// Broadcasting is symmetric, and a shape broadcast with the result
        /// gives the result again.
        #[test]
        fn broadcasting_is_symmetric_and_idempotent(
            a in prop::collection::vec(0usize..4, 0..5),
            b in prop::collection::vec(0usize..4, 0..5),
        ) {
            let (a, b) = (shape(&a), shape(&b));
            let ab = a.broadcast(&b);
            prop_assert_eq!(&ab, &b.broadcast(&a));
            if let Some(out) = ab {
                prop_assert_eq!(a.broadcast(&out), Some(out.clone()));
                prop_assert_eq!(out.rank(), a.rank().max(b.rank()));
            }
        }
    }
}
