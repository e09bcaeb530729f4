//! `fnabi demangle` and `fnabi mangle`.

use crate::CliError;
use clap::Args;
use fnabi::{Dim, ParseError, RawSignature, RawType};
use serde_json::{Value as Json, json};
use std::io::{BufRead, Write};
use std::process::ExitCode;

#[derive(Args)]
pub struct DemangleArgs {
    /// The mangled signature, or `-` to read one signature per line from stdin.
    signature: String,
    /// Read the signature as a raw function signature (`f` attribute).
    #[arg(long)]
    raw: bool,
    /// Print a JSON description (kind, inputs, results, and the exact
    /// human-readable form under `display`).
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct MangleArgs {
    /// A human-readable raw signature, e.g. '(Buffer<float32[?x4]>) -> (sint32)'.
    signature: String,
}

/// Quotes `input` and names the byte offset of `e`: the one-line form of
/// every parse error the CLI prints.
pub fn describe_parse_error(what: &str, input: &str, e: &ParseError) -> String {
    format!("invalid {what} {input:?} {e}")
}

fn dims_json(dims: &[Dim]) -> Json {
    Json::Array(dims.iter().map(|d| d.as_static().map_or(Json::Null, |n| json!(n))).collect())
}

fn raw_type_json(t: &RawType) -> Json {
    match t {
        RawType::Buffer(b) => json!({
            "type": "buffer",
            "dtype": b.dtype().name(),
            "dims": dims_json(b.dims()),
            "layout": b.layout().name(),
            "display": t.to_string(),
        }),
        RawType::Scalar(s) => json!({"type": "scalar", "dtype": s.name(), "display": t.to_string()}),
        RawType::RefObject => json!({"type": "ref_object", "display": t.to_string()}),
        RawType::Unrecognized => json!({"type": "unrecognized", "display": t.to_string()}),
    }
}

/// The JSON description of a raw signature.
pub fn raw_signature_json(sig: &RawSignature) -> Json {
    json!({
        "kind": "raw",
        "display": sig.to_string(),
        "mangled": sig.to_mangled(),
        "abi_version": sig.abi_version(),
        "inputs": sig.inputs.iter().map(raw_type_json).collect::<Vec<_>>(),
        "results": sig.results.iter().map(raw_type_json).collect::<Vec<_>>(),
    })
}

/// Demangles one signature into its output line.
fn demangle_one(args: &DemangleArgs, input: &str) -> Result<String, String> {
    // Only raw signatures exist so far; `--raw` forces that kind.
    let _ = args.raw;
    let sig = RawSignature::parse(input).map_err(|e| describe_parse_error("raw signature", input, &e))?;
    Ok(if args.json { raw_signature_json(&sig).to_string() } else { sig.to_string() })
}

pub fn demangle(args: DemangleArgs) -> Result<ExitCode, CliError> {
    if args.signature != "-" {
        let line = demangle_one(&args, &args.signature).map_err(CliError)?;
        println!("{line}");
        return Ok(ExitCode::SUCCESS);
    }
    // Batch mode: one answer line per input line, errors included, so the
    // output lines up with the input; the exit status reports any failure.
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut failed = false;
    for line in stdin.lock().lines() {
        let line = line?;
        let input = line.strip_suffix('\r').unwrap_or(&line);
        let answer = match demangle_one(&args, input) {
            Ok(s) => s,
            Err(msg) => {
                failed = true;
                if args.json { json!({"error": msg}).to_string() } else { format!("error: {msg}") }
            }
        };
        writeln!(out, "{answer}")?;
    }
    out.flush()?;
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

pub fn mangle(args: MangleArgs) -> Result<ExitCode, CliError> {
    let sig = RawSignature::parse_human(&args.signature)
        .map_err(|e| CliError(describe_parse_error("human-readable signature", &args.signature, &e)))?;
    println!("{}", sig.to_mangled());
    Ok(ExitCode::SUCCESS)
}
