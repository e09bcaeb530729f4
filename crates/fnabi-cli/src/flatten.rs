//! `fnabi flatten`: the leaves of a value (its JSON form, see the library's
//! `json` module) in raw order, by one side of a SIP signature.

use crate::CliError;
use crate::demangle::{describe_parse_error, path_json};
use clap::Args;
use fnabi::{SipSignature, json};
use serde_json::json;
use std::process::ExitCode;

#[derive(Args)]
pub struct FlattenArgs {
    /// The mangled SIP signature.
    #[arg(long)]
    sip: String,
    /// A file with the value in JSON form, or `-` for stdin.
    #[arg(long)]
    input: String,
    /// Flatten by the results side instead of the inputs side.
    #[arg(long)]
    results: bool,
    /// Print a JSON list of {"raw", "path", "value"} instead of lines.
    #[arg(long)]
    json: bool,
}

pub fn flatten(args: FlattenArgs) -> Result<ExitCode, CliError> {
    let sig =
        SipSignature::parse(&args.sip).map_err(|e| CliError(describe_parse_error("SIP signature", &args.sip, &e)))?;
    let plan = fnabi::Plan::new(if args.results { sig.results() } else { sig.inputs() })?;
    let value = if args.input == "-" {
        json::from_reader(std::io::stdin().lock())
    } else {
        let bytes = std::fs::read(&args.input).map_err(|e| CliError(format!("cannot read {}: {e}", args.input)))?;
        json::from_slice(&bytes)
    }
    .map_err(|e| CliError(format!("{}: {e}", args.input)))?;
    let leaves = plan.flatten(&value)?;
    let paths = plan.leaf_paths();
    let raws = plan.raw_indices();
    if args.json {
        let items: Vec<_> = leaves
            .iter()
            .zip(&paths)
            .zip(raws)
            .map(|((v, p), r)| {
                let value: serde_json::Value = serde_json::from_str(&json::to_string(v))?;
                Ok(json!({"raw": r, "path": path_json(p), "value": value}))
            })
            .collect::<Result<_, serde_json::Error>>()?;
        crate::outln!("{}", serde_json::Value::Array(items));
    } else {
        for ((v, p), r) in leaves.iter().zip(&paths).zip(raws) {
            let path = p.to_string();
            let sep = if path.is_empty() { "" } else { " " };
            crate::outln!("${r}{sep}{path} = {}", json::to_string(v));
        }
    }
    Ok(ExitCode::SUCCESS)
}
