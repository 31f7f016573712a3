//! The main demo: a downstream crate's own ops (declared in `examples`'
//! lib with the macros) and the shipped kernels, run by name and through
//! their typed wrappers, with mistakes caught and explained; then state: a
//! hash table and a variable, saved to a checkpoint and restored.
//!
//! Run it with `cargo run -p examples`.

use examples::{ClipByValue, L2Norm};
use op_core::checkpoint::Checkpoint;
use op_core::{DType, OpCall, Registry, Tensor};
use op_kernels::hash_table::SimpleHashTableHandle;
use op_kernels::variable::Variable;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Name every crate whose ops we use, so the linker keeps them.
    examples::link();
    op_kernels::link();
    let registry = Registry::global();

    println!("== 1. What got linked (this crate's ops)\n");
    for entry in registry
        .ops()
        .filter(|e| e.registration().file.starts_with("examples/"))
    {
        println!("{}", entry.def().name);
        for kernel in entry.kernels() {
            println!("    kernel {}: {}", kernel.name, kernel.describe());
        }
    }
    let shipped = registry.ops().count();
    println!(
        "(and {shipped} ops in all, with op-kernels; print `Registry::global()` for the full list)\n"
    );

    println!("== 2. An op's definition, as TensorFlow prints it\n");
    let clip = registry.op("Examples>ClipByValue")?.def();
    println!("{}", op_core::op_spec::pbtxt::op_list_to_string([&**clip]));

    println!("== 3. Kernels running\n");
    let t = examples::sample()?;
    let clipped = ClipByValue::call(&t).clip_max(0.5).run()?;
    println!(
        "ClipByValue({:?}, clip_max=0.5) = {:?}",
        t.as_slice::<f32>()?,
        clipped.as_slice::<f32>()?
    );
    let norm = L2Norm::call(&t).run()?;
    println!(
        "L2Norm({:?}) = {}",
        t.as_slice::<f32>()?,
        norm.scalar_value::<f32>()?
    );
    let v = Tensor::from_vec([5], vec![5i32, 4, 3, 2, 1])?;
    let zeroed = OpCall::new("ZeroOut").input(&v).run()?;
    println!(
        "ZeroOut({:?}) = {:?}  (by name, from op-kernels)\n",
        v.as_slice::<i32>()?,
        zeroed[0].as_slice::<i32>()?
    );

    println!("== 4. Mistakes, caught\n");
    let bounds = ClipByValue::call(&t).clip_min(2.0).clip_max(1.0).run();
    println!("{}\n", bounds.unwrap_err());
    let int8 = Tensor::from_vec([2], vec![1i8, 2])?;
    println!("{}\n", ClipByValue::call(&int8).run().unwrap_err());
    println!(
        "{}\n",
        OpCall::new("Examples>ClipByValu")
            .input(&t)
            .run()
            .unwrap_err()
    );
    let quantized = Tensor::from_vec([1], vec![op_core::QInt8(3)])?;
    println!(
        "{}\n",
        OpCall::new("Example").input(&quantized).run().unwrap_err()
    );
    let typed = registry.op("Examples>L2Norm")?;
    let node = op_core::OpInstanceBuilder::new(typed.def())
        .input(DType::I32)
        .build();
    println!("{}\n", node.unwrap_err());

    println!("== 5. State: a hash table, a variable, a checkpoint\n");
    let table = SimpleHashTableHandle::<i64, f32>::new(-1.0)?;
    table.insert_many(&[1, 2, 3], &[0.5, 1.0, 1.5])?;
    table.remove(2)?;
    println!(
        "table.find_many([1, 2, 3]) = {:?}  (2 was removed: the default)",
        table.find_many(&[1, 2, 3])?
    );
    let weights = Variable::new(Tensor::from_vec([3], vec![1.0f32, 2.0, 3.0])?)?;
    weights.assign(Tensor::from_vec([3], vec![4.0f32, 5.0, 6.0])?)?;
    println!("weights.read() = {:?}", weights.read()?.as_slice::<f32>()?);

    let path = std::env::temp_dir().join(format!("demo-{}.safetensors", std::process::id()));
    let mut checkpoint = Checkpoint::new();
    checkpoint.add("table", &table)?.add("weights", &weights)?;
    println!("saved {:?} to {}", checkpoint.save(&path)?, path.display());
    table.insert(1, 100.0)?;
    weights.assign(Tensor::from_vec([3], vec![0.0f32; 3])?)?;
    checkpoint.restore(&path)?;
    println!(
        "restored: table.find(1) = {}, weights = {:?}",
        table.find(1)?,
        weights.read()?.as_slice::<f32>()?
    );
    std::fs::remove_file(&path)?;
    // The int64 -> float table's handle, given to the int32-key kernel.
    let wrong = OpCall::new("Examples>SimpleHashTableFind")
        .input(table.handle())
        .input(Tensor::scalar(1i32))
        .input(Tensor::scalar(0.0f32))
        .run();
    println!("\n{}", wrong.unwrap_err());
    Ok(())
}
