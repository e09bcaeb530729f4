//! `fnabi demangle` and `fnabi mangle`.

use crate::CliError;
use clap::Args;
use fnabi::structure::{IndexPath, PathKey, Structure};
use fnabi::{Dim, ParseError, RawSignature, RawType, SipSignature};
use serde_json::{Value as Json, json};
use std::io::{BufRead, Write};
use std::process::ExitCode;

#[derive(Args)]
pub struct DemangleArgs {
    /// The mangled signature, or `-` to read one signature per line from stdin.
    signature: String,
    /// Read the signature as a raw function signature (`f` attribute).
    #[arg(long, conflicts_with = "sip")]
    raw: bool,
    /// Read the signature as a SIP signature (`sip` attribute). Without
    /// `--raw` or `--sip` the kind is detected; a signature that reads as
    /// both is an error.
    #[arg(long)]
    sip: bool,
    /// Print a JSON description (kind, inputs, results, and the exact
    /// human-readable form under `display`; for SIP also the reference text
    /// of each side under `inputs_reference` and `results_reference`).
    #[arg(long, conflicts_with = "reference")]
    json: bool,
    /// Print the reference text form: for SIP, IREE's ToStringVisitor text
    /// of each side after `inputs:` and `results:` lines.
    #[arg(long)]
    reference: bool,
}

#[derive(Args)]
pub struct MangleArgs {
    /// A human-readable raw signature, e.g. '(Buffer<float32[?x4]>) -> (sint32)'.
    signature: String,
}

/// Quotes `input` and names the byte offset of `e`: the one-line form of
/// every parse error the CLI prints.
pub fn describe_parse_error(what: &str, input: &str, e: &ParseError) -> String {
    format!("invalid {what} {} {e}", fnabi::inputs::quoted_excerpt(input))
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
        "inputs": sig.inputs().iter().map(raw_type_json).collect::<Vec<_>>(),
        "results": sig.results().iter().map(raw_type_json).collect::<Vec<_>>(),
    })
}

/// An index path as JSON: integers and strings.
pub fn path_json(path: &IndexPath) -> Json {
    Json::Array(
        path.keys()
            .iter()
            .map(|k| match k {
                PathKey::Index(i) => json!(i),
                PathKey::Name(n) => json!(&**n),
            })
            .collect(),
    )
}

fn side_json(side: Option<&Structure>) -> Json {
    let mut leaves: Vec<(usize, IndexPath)> =
        side.map(|s| s.leaves().map(|(p, r)| (r, p)).collect()).unwrap_or_default();
    leaves.sort_by_key(|(r, _)| *r);
    Json::Array(leaves.iter().map(|(r, p)| json!({"raw": r, "path": path_json(p)})).collect())
}

/// The JSON description of a SIP signature: each side's leaves in raw order
/// with their index paths, and each side's exact reference text.
pub fn sip_signature_json(sig: &SipSignature) -> Json {
    json!({
        "kind": "sip",
        "display": sig.to_string(),
        "mangled": sig.to_mangled(),
        "inputs": side_json(sig.inputs()),
        "results": side_json(sig.results()),
        "inputs_reference": sig.inputs_reference(),
        "results_reference": sig.results_reference(),
    })
}

/// A signature of either kind.
enum Parsed {
    Raw(RawSignature),
    Sip(SipSignature),
}

/// Parses `input` as the kind the flags name, or detects it.
fn parse_any(args: &DemangleArgs, input: &str) -> Result<Parsed, String> {
    let raw = || RawSignature::parse(input).map_err(|e| describe_parse_error("raw signature", input, &e));
    let sip = || SipSignature::parse(input).map_err(|e| describe_parse_error("SIP signature", input, &e));
    if args.raw {
        return raw().map(Parsed::Raw);
    }
    if args.sip {
        return sip().map(Parsed::Sip);
    }
    match (RawSignature::parse(input), SipSignature::parse(input)) {
        (Ok(r), Err(_)) => Ok(Parsed::Raw(r)),
        (Err(_), Ok(s)) => Ok(Parsed::Sip(s)),
        (Ok(r), Ok(s)) => Err(format!(
            "ambiguous signature {input:?}: it reads as raw {:?} and as SIP {:?}; pass --raw or --sip",
            r.to_string(),
            s.to_string()
        )),
        (Err(r), Err(s)) => {
            Err(format!("invalid signature {}: not raw ({r}), not SIP ({s})", fnabi::inputs::quoted_excerpt(input)))
        }
    }
}

/// Demangles one signature into its output (one line, or several for `--reference`).
fn demangle_one(args: &DemangleArgs, input: &str) -> Result<String, String> {
    Ok(match parse_any(args, input)? {
        Parsed::Raw(sig) if args.json => raw_signature_json(&sig).to_string(),
        Parsed::Raw(sig) => sig.to_string(),
        Parsed::Sip(sig) if args.json => sip_signature_json(&sig).to_string(),
        Parsed::Sip(sig) if args.reference => {
            let text = format!("inputs:\n{}results:\n{}", sig.inputs_reference(), sig.results_reference());
            text.strip_suffix('\n').unwrap_or(&text).to_owned()
        }
        Parsed::Sip(sig) => sig.to_string(),
    })
}

pub fn demangle(args: DemangleArgs) -> Result<ExitCode, CliError> {
    if args.signature != "-" {
        let line = demangle_one(&args, &args.signature).map_err(CliError)?;
        crate::outln!("{line}");
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
        writeln!(out, "{answer}").map_err(CliError::output)?;
    }
    out.flush().map_err(CliError::output)?;
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

pub fn mangle(args: MangleArgs) -> Result<ExitCode, CliError> {
    let sig = RawSignature::parse_human(&args.signature)
        .map_err(|e| CliError(describe_parse_error("human-readable signature", &args.signature, &e)))?;
    crate::outln!("{}", sig.to_mangled());
    Ok(ExitCode::SUCCESS)
}
