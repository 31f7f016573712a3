//! Saves a hash table to a checkpoint and restores it into a fresh one.
//!
//! ```sh
//! cargo run --example hash_table_checkpoint -- table.safetensors            # fill and save
//! cargo run --example hash_table_checkpoint -- --restore table.safetensors  # load into a new table
//! ```
//!
//! Saving fills a `SimpleHashTable<i64, f32>` with the keys 0..1000, each
//! mapped to half its value, writes it to PATH (atomically: an interrupted
//! save leaves the previous file) and prints the names of the tensors it
//! wrote. Restoring loads PATH into a new, empty table and prints how many
//! entries it got and the value of key 10. The file is plain safetensors;
//! the README's "Checkpoints" section gives its layout.

use std::process::ExitCode;

use op_core::checkpoint::Checkpoint;
use op_kernels::hash_table::SimpleHashTableHandle;

/// The name of the table in the checkpoint: its tensors are `table/keys`
/// and `table/values`.
const TABLE: &str = "table";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [flag, path] if flag == "--restore" => restore(path),
        [path] if !path.starts_with('-') => save(path),
        _ => {
            eprintln!(
                "usage: hash_table_checkpoint PATH            fill a table and save it to PATH\n       \
                 hash_table_checkpoint --restore PATH  load PATH into a new table"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(lines) => {
            for line in lines {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// A new, empty table; `find` of a missing key gives -1.
fn new_table() -> op_core::Result<SimpleHashTableHandle<'static, i64, f32>> {
    op_kernels::link();
    SimpleHashTableHandle::new(-1.0)
}

/// Fills a table and saves it to `path`; the lines to print: the names of
/// the tensors written.
pub fn save(path: &str) -> op_core::Result<Vec<String>> {
    let table = new_table()?;
    let keys: Vec<i64> = (0..1000).collect();
    let values: Vec<f32> = keys.iter().map(|&k| k as f32 * 0.5).collect();
    table.insert_many(&keys, &values)?;

    let mut checkpoint = Checkpoint::new();
    checkpoint.add(TABLE, &table)?;
    checkpoint.save(path)
}

/// Restores `path` into a new table; the lines to print: the number of
/// entries and the value of key 10.
pub fn restore(path: &str) -> op_core::Result<Vec<String>> {
    let table = new_table()?;
    let mut checkpoint = Checkpoint::new();
    checkpoint.add(TABLE, &table)?;
    checkpoint.restore(path)?;
    let (keys, _) = table.export()?;
    Ok(vec![
        format!("restored {} entries", keys.len()),
        format!("key 10 = {}", table.find(10)?),
    ])
}
