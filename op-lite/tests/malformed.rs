//! Malformed files give errors, never panics: every truncation and every
//! single bit flip of the converted models, random mutations of them (a
//! property test), and a few hand-made cases. A file that still reads after
//! a mutation must be a valid model that writes and reads back the same.
//! (Each kind of bad index or size, with its message, is tested beside the
//! reader and the checks: `src/model/read/tests.rs`, `src/model/check.rs`.)

use op_core::Code;
use op_lite::Model;
use proptest::prelude::*;

const MODELS: [(&str, &[u8]); 4] = [
    ("sin_custom", include_bytes!("data/sin_custom.tflite")),
    ("sin_builtin", include_bytes!("data/sin_builtin.tflite")),
    ("cnn", include_bytes!("data/cnn.tflite")),
    ("mlp", include_bytes!("data/mlp.tflite")),
];

/// What any input may give: a valid model that survives writing and
/// reading (`Ok(true)`), or a user error that names something (`Ok(false)`).
fn check_outcome(bytes: &[u8]) -> Result<bool, String> {
    match Model::from_bytes(bytes) {
        Ok(model) => {
            model
                .validate()
                .map_err(|e| format!("read a model that does not validate: {e}"))?;
            let written = model
                .to_bytes()
                .map_err(|e| format!("read a model that does not write: {e}"))?;
            let again = Model::from_bytes(&written)
                .map_err(|e| format!("wrote a file that does not read: {e}"))?;
            let rewritten = again.to_bytes().map_err(|e| e.to_string())?;
            // Bytes, not models: a mutated float option may be NaN.
            if rewritten != written {
                return Err("writing what was read back changed the file".into());
            }
            Ok(true)
        }
        Err(error) if matches!(error.code(), Code::InvalidArgument | Code::Unimplemented) => {
            if error.message().is_empty() {
                return Err("an error without a message".into());
            }
            Ok(false)
        }
        Err(error) => Err(format!("unexpected error code: {error}")),
    }
}

#[test]
fn every_truncation_of_a_converted_model_is_an_invalid_argument() {
    for (name, bytes) in MODELS {
        for len in 0..bytes.len() {
            let error = Model::from_bytes(&bytes[..len])
                .err()
                .unwrap_or_else(|| panic!("{name} cut to {len} bytes read"));
            assert_eq!(
                error.code(),
                Code::InvalidArgument,
                "{name} cut to {len} bytes: {error}"
            );
        }
    }
}

#[test]
fn bit_flips_in_converted_models_read_as_valid_models_or_fail() {
    // Every bit of the small Sin models; one bit of each byte (a different
    // one from byte to byte) of the larger ones, to keep the test short.
    for (name, bytes) in MODELS {
        let every_bit = bytes.len() < 2000;
        let mut failures = 0;
        for at in 0..bytes.len() {
            let bits = if every_bit { 0..8 } else { at % 8..at % 8 + 1 };
            for bit in bits {
                let mut flipped = bytes.to_vec();
                flipped[at] ^= 1 << bit;
                let read = check_outcome(&flipped)
                    .unwrap_or_else(|e| panic!("{name}, byte {at} bit {bit} flipped: {e}"));
                failures += usize::from(!read);
            }
        }
        // Flips in offsets, lengths, indices and type codes fail; those in
        // weights and names do not.
        assert!(
            failures > bytes.len() / 10,
            "{name}: only {failures} flips failed"
        );
    }
}

#[test]
fn short_empty_and_foreign_files_are_invalid_arguments() {
    let error = Model::from_bytes(&[]).unwrap_err();
    assert_eq!(
        error.message(),
        "not a .tflite file: it has 0 bytes, fewer than the 8 of a root offset and the identifier \"TFL3\""
    );
    let mut foreign = MODELS[0].1.to_vec();
    foreign[4..8].copy_from_slice(b"TFL2");
    let error = Model::from_bytes(&foreign).unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument);
    assert_eq!(
        error.message(),
        "not a .tflite file: its identifier (bytes 4 to 8) is 'TFL2', expected \"TFL3\""
    );
    let mut dangling = MODELS[0].1.to_vec();
    dangling[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
    let error = Model::from_bytes(&dangling).unwrap_err();
    assert!(
        error.message().starts_with("malformed .tflite file: "),
        "{error}"
    );
}

/// One change to a file.
#[derive(Clone, Debug)]
enum Mutation {
    Set(usize, u8),
    Insert(usize, Vec<u8>),
    Remove(usize, usize),
    /// A little-endian `u32` written over four bytes: offsets, lengths and
    /// indices are 32-bit.
    Word(usize, u32),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Mutation::Set(at, b)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(at, b)| Mutation::Insert(at, b)),
        (any::<usize>(), 1usize..16).prop_map(|(at, n)| Mutation::Remove(at, n)),
        (
            any::<usize>(),
            prop_oneof![any::<u32>(), 0u32..64, Just(u32::MAX), Just(0x7fff_ffff)]
        )
            .prop_map(|(at, w)| Mutation::Word(at, w)),
    ]
}

fn apply(bytes: &mut Vec<u8>, mutation: &Mutation) {
    let len = bytes.len().max(1);
    match mutation {
        Mutation::Set(at, b) => {
            if let Some(byte) = bytes.get_mut(at % len) {
                *byte = *b;
            }
        }
        Mutation::Insert(at, new) => {
            let at = at % (bytes.len() + 1);
            bytes.splice(at..at, new.iter().copied());
        }
        Mutation::Remove(at, n) => {
            let at = at % len;
            let end = (at + n).min(bytes.len());
            bytes.drain(at.min(end)..end);
        }
        Mutation::Word(at, w) => {
            let at = (at % len) & !3;
            if let Some(word) = bytes.get_mut(at..at + 4) {
                word.copy_from_slice(&w.to_le_bytes());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn mutated_converted_models_read_as_valid_models_or_fail(
        model in 0..MODELS.len(),
        mutations in prop::collection::vec(mutation(), 1..5),
    ) {
        let mut bytes = MODELS[model].1.to_vec();
        for mutation in &mutations {
            apply(&mut bytes, mutation);
        }
        if let Err(problem) = check_outcome(&bytes) {
            prop_assert!(false, "{}: {}", MODELS[model].0, problem);
        }
    }
}
