//! Reads a `.tflite` file with op-lite's reader and writes it back with its
//! writer: `cargo run -p op-lite --example tflite_round_trip -- IN OUT`;
//! with `--buffers-after` before the paths, with the buffers after the
//! flatbuffer (the layout of models past 2 GiB).
//!
//! `tests/data/check_written.py` runs it to check that the real TensorFlow
//! Lite interpreter (LiteRT) loads what the writer writes and computes the
//! same outputs from it.

use op_lite::Model;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let buffers_after = args.first().is_some_and(|a| a == "--buffers-after");
    if buffers_after {
        args.remove(0);
    }
    let [input, output] = args.as_slice() else {
        return Err("usage: tflite_round_trip [--buffers-after] IN.tflite OUT.tflite".into());
    };
    let model = Model::from_bytes(&std::fs::read(input)?).map_err(|e| format!("{input}: {e}"))?;
    let bytes = match buffers_after {
        true => model.to_bytes_with_buffers_after()?,
        false => model.to_bytes()?,
    };
    std::fs::write(output, &bytes)?;
    let ops: Vec<String> = model
        .operator_codes
        .iter()
        .map(|code| match &code.custom_name {
            Some(name) => name.clone(),
            None => code.builtin.to_string(),
        })
        .collect();
    println!("{input} -> {output}: {} bytes, ops {ops:?}", bytes.len());
    Ok(())
}
