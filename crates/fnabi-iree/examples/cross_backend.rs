//! Measures the IREE backend for MLIR source against fnabi's MLIR backend,
//! on the same tensor-level file and inputs (default: the MLP of
//! `examples/mlp_tensor.mlir`): `iree-compile` cold (an empty cache folder)
//! and cached, and one call of the same function on both backends, with
//! the results compared.
//!
//! `cargo run --release -p fnabi-iree --example cross_backend [-- FILE.mlir INPUTS.json FUNCTION]`

use fnabi::Value;
use fnabi::mlir::MlirModule;
use fnabi_iree::{Device, IreeCompileOptions, IreeCompiler, IreeModule};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The median time of one call over `batches` batches of `n` calls.
fn per_call(f: &fnabi::Function, inputs: &[Value<'static>], n: u32, batches: usize) -> Duration {
    median(
        (0..batches)
            .map(|_| {
                let t = Instant::now();
                for _ in 0..n {
                    std::hint::black_box(f.call(inputs.iter().cloned()).unwrap());
                }
                t.elapsed() / n
            })
            .collect(),
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (file, inputs, function) = match &args[..] {
        [f, i, name] => (f.clone(), i.clone(), name.clone()),
        _ => (
            format!("{root}/examples/mlp_tensor.mlir"),
            format!("{root}/examples/mlp_tensor_inputs.json"),
            "mlp".to_owned(),
        ),
    };
    let source = std::fs::read(&file)?;
    let Value::List(inputs) = fnabi::json::from_reader(std::fs::File::open(&inputs)?)? else {
        return Err("the inputs file must hold a list of positional arguments".into());
    };
    let compiler = IreeCompiler::find()?;
    let options = IreeCompileOptions::default().with_source_path(&file);
    println!("iree-compile {} ({})", compiler.version(), compiler.path().display());
    let scratch = std::env::temp_dir().join(format!("fnabi-cross-backend-{}", std::process::id()));
    let cold: Vec<Duration> = (0..3)
        .map(|i| {
            let c = compiler.clone().with_cache_dir(scratch.join(i.to_string()));
            let t = Instant::now();
            c.compile(&source, &options).unwrap();
            t.elapsed()
        })
        .collect();
    let cached = compiler.clone().with_cache_dir(scratch.join("0"));
    let warm = median(
        (0..50)
            .map(|_| {
                let t = Instant::now();
                cached.compile(&source, &options).unwrap();
                t.elapsed()
            })
            .collect(),
    );
    println!("compile {file}: cold {:?} (median of 3), cached {warm:?} (median of 50)", median(cold.clone()));
    let (vmfb, _) = cached.compile(&source, &options)?;
    // SAFETY: the repository's example, compiled by IREE's compiler.
    let iree = unsafe { IreeModule::from_bytes(&vmfb, Device::LocalSync) }?;
    let fi = iree.function(&function)?;
    // SAFETY: the same source through fnabi's MLIR pipeline.
    let mlir = unsafe { MlirModule::load(&file) }?;
    let fm = mlir.function(&function)?;
    let (ri, rm) = (fi.call(inputs.iter().cloned())?, fm.call(inputs.iter().cloned())?);
    println!("results: iree {} | mlir {}", fnabi::json::to_string(&ri), fnabi::json::to_string(&rm));
    for (name, f) in [("mlir (native)", &fm), ("iree (local-sync)", &fi)] {
        println!(
            "call {function}, Function::call: {name}: {:?} per call (median of 7 x 20000)",
            per_call(f, &inputs, 20000, 7)
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}
