//! Calls one function of an IREE module with arguments given as JSON and
//! prints the result as JSON (fnabi's JSON form of values).
//!
//! `cargo run -p fnabi-iree --example call -- MODULE.vmfb FUNCTION '[ARGS…]' [local-sync|local-task]`
//!
//! A JSON list is the positional arguments, an object the keyword
//! arguments; arrays are `{"dtype": "f32", "shape": [4], "data": [...]}`.

use fnabi_iree::{Device, IreeModule};
use std::process::ExitCode;

fn run(args: &[String]) -> Result<String, String> {
    let [path, function, inputs, rest @ ..] = args else {
        return Err("usage: call MODULE.vmfb FUNCTION '[ARGS…]' [local-sync|local-task]".into());
    };
    let device: Device = rest.first().map_or(Ok(Device::LocalSync), |d| d.parse()).map_err(|e| e.to_string())?;
    // SAFETY: the user names the module to run, as when running a program.
    let module = unsafe { IreeModule::load(path, device) }.map_err(|e| format!("{path}: {e}"))?;
    let f = module.function(function).map_err(|e| e.to_string())?;
    let inputs = fnabi::json::from_str(inputs).map_err(|e| e.to_string())?;
    let out = f.call_value(inputs).map_err(|e| format!("{}: {e}", f.describe()))?;
    Ok(fnabi::json::to_string(&out))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(out) => {
            println!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("call: error: {e}");
            ExitCode::FAILURE
        }
    }
}
