//! The arithmetic that needs no GPU: size classes, grids, gemm's mapping.

use op_cuda::allocator::{MIN_BLOCK, SMALL_LIMIT, size_class};
use op_cuda::blas::GemmShape;
use op_cuda::launch::{BLOCK_SIZE, BLOCKS_PER_SM, elementwise_config, grid_size};

#[test]
fn small_sizes_round_to_512_bytes() {
    assert_eq!(size_class(0), MIN_BLOCK);
    assert_eq!(size_class(1), 512);
    assert_eq!(size_class(512), 512);
    assert_eq!(size_class(513), 1024);
    assert_eq!(size_class(SMALL_LIMIT), SMALL_LIMIT);
}

#[test]
fn large_sizes_round_to_a_quarter_of_their_power_of_two() {
    let mib = 1 << 20;
    assert_eq!(size_class(mib + 1), mib + mib / 4);
    assert_eq!(size_class(3 * mib), 3 * mib);
    assert_eq!(size_class(3 * mib + 1), 3 * mib + mib / 2);
    assert_eq!(size_class(4 * mib), 4 * mib);
    // 1e8 float32.
    assert_eq!(size_class(400_000_000), 402_653_184);
}

#[test]
fn a_class_holds_its_request_and_wastes_at_most_a_quarter() {
    let mut bytes = 1usize;
    while bytes < 1 << 40 {
        for b in [bytes - 1, bytes, bytes + 1, bytes + bytes / 3] {
            let class = size_class(b);
            assert!(class >= b, "{b} -> {class}");
            assert_eq!(size_class(class), class, "classes are fixed points");
            if b > SMALL_LIMIT {
                assert!(class - b <= class / 4, "{b} -> {class}");
            }
        }
        bytes *= 2;
    }
}

#[test]
fn grids_cover_n_up_to_the_cap() {
    assert_eq!(grid_size(0, 132), 0);
    assert_eq!(grid_size(1, 132), 1);
    assert_eq!(grid_size(256, 132), 1);
    assert_eq!(grid_size(257, 132), 2);
    assert_eq!(grid_size(132 * 32 * 256, 132), 132 * BLOCKS_PER_SM);
    assert_eq!(grid_size(100_000_000, 132), 132 * BLOCKS_PER_SM);
    assert_eq!(grid_size(usize::MAX, 132), 132 * BLOCKS_PER_SM);
    // A device reporting no SMs still gets a grid.
    assert_eq!(grid_size(1 << 30, 0), BLOCKS_PER_SM);
    let config = elementwise_config(1000, 132);
    assert_eq!(config.block_dim, (BLOCK_SIZE, 1, 1));
    assert_eq!(config.grid_dim, (4, 1, 1));
}

#[test]
fn row_major_gemm_swaps_operands() {
    let plain = GemmShape {
        m: 2,
        n: 3,
        k: 4,
        transpose_a: false,
        transpose_b: false,
    }
    .column_major();
    assert_eq!((plain.m, plain.n, plain.k), (3, 2, 4));
    assert!(!plain.transpose_first && !plain.transpose_second);
    assert_eq!((plain.ld_first, plain.ld_second, plain.ld_c), (3, 4, 3));

    let both = GemmShape {
        m: 2,
        n: 3,
        k: 4,
        transpose_a: true,
        transpose_b: true,
    }
    .column_major();
    assert!(both.transpose_first && both.transpose_second);
    // A stored [k, m] = [4, 2], B stored [n, k] = [3, 4].
    assert_eq!((both.ld_first, both.ld_second, both.ld_c), (4, 2, 3));

    let empty = GemmShape {
        m: 0,
        n: 0,
        k: 0,
        transpose_a: false,
        transpose_b: false,
    }
    .column_major();
    assert_eq!((empty.ld_first, empty.ld_second, empty.ld_c), (1, 1, 1));
}
