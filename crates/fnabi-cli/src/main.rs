//! `fnabi`: the command-line face of the fnabi library.
//!
//! Every subcommand lives in its own module and uses the library only
//! through its public API. Errors are one line on stderr (`fnabi: error: …`)
//! and a non-zero exit status; the process never panics on bad input.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod cache;
mod compile;
mod demangle;
mod externals;
mod flatten;
mod inspect;
mod inspect_native;
mod run;
#[cfg(feature = "iree")]
mod run_iree;

/// Function ABIs of compiled tensor functions: signatures, modules, calls.
#[derive(Parser)]
#[command(name = "fnabi", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Most bytes of one array fnabi allocates (text splats, raw inputs,
    /// results): `1048576`, `64K`, `8M`, `16G`. Default: the environment's
    /// FNABI_MAX_ARRAY_BYTES, else half the physical memory.
    #[arg(long, global = true, value_name = "BYTES", value_parser = byte_size)]
    max_array_bytes: Option<u64>,
    /// Most bytes of all the inputs of one call together (FNABI_MAX_CALL_BYTES).
    #[arg(long, global = true, value_name = "BYTES", value_parser = byte_size)]
    max_call_bytes: Option<u64>,
    /// Most bytes of one file read (modules, .npy, JSON, raw bytes, stdin; FNABI_MAX_FILE_BYTES).
    #[arg(long, global = true, value_name = "BYTES", value_parser = byte_size)]
    max_file_bytes: Option<u64>,
    /// Longest a compile may take, in seconds (`0` for none): MLIR's tools
    /// or iree-compile are killed then. Default: FNABI_COMPILE_TIMEOUT, else 600.
    #[arg(long, global = true, value_name = "SECONDS", value_parser = seconds)]
    compile_timeout: Option<CompileTimeout>,
}

/// The value of `--compile-timeout`: a duration, or none.
#[derive(Clone, Copy)]
struct CompileTimeout(Option<std::time::Duration>);

/// `--pass-option PASS:OPTION[=VALUE]`: an option on a pass of fnabi's pipeline.
pub fn pass_option(text: &str) -> Result<(String, String), String> {
    match text.split_once(':') {
        Some((pass, option)) if !pass.is_empty() && !option.is_empty() => Ok((pass.to_owned(), option.to_owned())),
        _ => {
            Err("expected PASS:OPTION=VALUE (e.g. one-shot-bufferize:unknown-type-conversion=identity-layout-map)"
                .into())
        }
    }
}

/// A timeout in seconds for `--compile-timeout` (`0`: none).
fn seconds(text: &str) -> Result<CompileTimeout, String> {
    fnabi::tool::parse_timeout(text)
        .map(CompileTimeout)
        .ok_or_else(|| "not a number of seconds (0 for none)".to_string())
}

/// A positive byte size for the `--max-*-bytes` flags.
fn byte_size(text: &str) -> Result<u64, String> {
    fnabi::limits::parse_byte_size(text)
        .filter(|&b| b > 0)
        .ok_or_else(|| "not a byte size (such as 1048576, 64K, 8M or 16G)".to_string())
}

#[derive(Subcommand)]
enum Command {
    /// Print the human-readable form of a mangled signature.
    Demangle(demangle::DemangleArgs),
    /// Print the mangled form of a human-readable raw signature.
    Mangle(demangle::MangleArgs),
    /// Print the leaves of a JSON value in raw order, by a SIP signature.
    Flatten(flatten::FlattenArgs),
    /// Show what a compiled module declares: exports, calling conventions, reflection.
    Inspect(inspect::InspectArgs),
    /// Call a function of a compiled module (.mlir, .ll, .bc, .so, .vmfb) and print its results.
    Run(run::RunArgs),
    /// Compile an MLIR module to a shared library that carries its own ABI.
    Compile(compile::CompileArgs),
    /// List the external functions an MLIR module declares and who provides each.
    Externals(externals::ExternalsArgs),
    /// List or clear the compile cache of MLIR modules.
    Cache(cache::CacheArgs),
}

/// A failure that ends the command: printed as one line on stderr.
pub struct CliError(pub String);

impl<E: std::fmt::Display> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError(e.to_string())
    }
}

/// The message of a [`CliError`] that is no error: stdout was closed by its
/// reader (`fnabi … | head`), so the command ends quietly with status 0.
const CLOSED_PIPE: &str = "\0stdout closed";

impl CliError {
    /// A failed write to stdout (a closed pipe ends the command quietly).
    pub fn output(e: std::io::Error) -> CliError {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            CliError(CLOSED_PIPE.into())
        } else {
            CliError(format!("writing to stdout: {e}"))
        }
    }
}

/// Writes a line to stdout, returning [`CliError::output`] from the
/// enclosing function when that fails (instead of `println!`'s panic).
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*).map_err($crate::CliError::output)?
    }};
}

/// Writes to stdout as [`outln!`] does, without a newline.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*).map_err($crate::CliError::output)?
    }};
}

/// A file's bytes, refused (before reading) when its size is over the
/// byte limit per file read (`fnabi::limits`).
pub fn read_file(path: &std::path::Path) -> Result<Vec<u8>, String> {
    use fnabi::limits::{ByteLimit, check_bytes};
    let len = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    check_bytes(ByteLimit::File, u128::from(len), || format!("the file {}", path.display()))
        .map_err(|e| e.to_string())?;
    std::fs::read(path).map_err(|e| e.to_string())
}

/// Standard input into `bytes`, refused past the byte limit per file read.
pub fn read_stdin(bytes: &mut Vec<u8>) -> Result<(), String> {
    use fnabi::limits::{ByteLimit, check_bytes, max_bytes};
    use std::io::Read as _;
    let limit = max_bytes(ByteLimit::File);
    std::io::stdin().take(limit.saturating_add(1)).read_to_end(bytes).map_err(|e| e.to_string())?;
    check_bytes(ByteLimit::File, bytes.len() as u128, || "standard input".into()).map_err(|e| e.to_string())
}

/// A failed call as one line: a runtime's own report (IREE's status with
/// its VM stack trace) is cut to its first line unless `verbose`.
pub fn run_error(e: fnabi::Error, verbose: bool) -> CliError {
    runtime_report(e.to_string(), verbose)
}

/// A runtime's report as one line (its first, unless `verbose`): a failed
/// call, or a module whose loading failed inside IREE's runtime (which adds
/// its VM stack trace).
pub fn runtime_report(msg: String, verbose: bool) -> CliError {
    match msg.split_once('\n') {
        Some((first, _)) if !verbose => CliError(format!("{} (--verbose for the full report)", first.trim_end())),
        _ => CliError(msg.trim_end().to_owned()),
    }
}

/// An argument problem clap found, as fnabi's one line: the first line of
/// clap's report without its `error: ` prefix, and for arguments that are
/// not UTF-8, which one (its bytes escaped as `\xff`).
fn usage_error(e: &clap::Error, args: &[std::ffi::OsString]) -> String {
    if e.kind() == clap::error::ErrorKind::InvalidUtf8
        && let Some((i, a)) = args.iter().enumerate().skip(1).find(|(_, a)| a.to_str().is_none())
    {
        return format!("argument {i} is not valid UTF-8: \"{}\"", a.as_encoded_bytes().escape_ascii());
    }
    let text = e.to_string();
    let mut lines = text.lines().skip_while(|l| l.trim().is_empty());
    let first = lines.next().unwrap_or("invalid arguments").trim_start_matches("error: ").trim_end();
    // A list clap gives on the lines below (`the following required
    // arguments were not provided:` then `  --output <FILE>`): on this line.
    let listed: Vec<&str> = lines.take_while(|l| l.starts_with("  ") && !l.trim().is_empty()).map(str::trim).collect();
    if first.ends_with(':') && !listed.is_empty() {
        return format!("{first} {} (fnabi --help for usage)", listed.join(", "));
    }
    format!("{first} (fnabi --help for usage)")
}

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() || e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            e.exit()
        }
        Err(e) => {
            eprintln!("fnabi: error: {}", usage_error(&e, &args));
            return ExitCode::FAILURE;
        }
    };
    if let Some(e) = fnabi::limits::env_error() {
        eprintln!("fnabi: error: {e}");
        return ExitCode::FAILURE;
    }
    use fnabi::limits::{ByteLimit, set_max_bytes};
    for (kind, bytes) in [
        (ByteLimit::Array, cli.max_array_bytes),
        (ByteLimit::Call, cli.max_call_bytes),
        (ByteLimit::File, cli.max_file_bytes),
    ] {
        if bytes.is_some() {
            set_max_bytes(kind, bytes);
        }
    }
    // A malformed FNABI_COMPILE_TIMEOUT is an error even when nothing compiles.
    if let Err(e) = fnabi::tool::compile_timeout_from_env() {
        eprintln!("fnabi: error: {e}");
        return ExitCode::FAILURE;
    }
    if let Some(CompileTimeout(t)) = cli.compile_timeout {
        fnabi::tool::set_compile_timeout(Some(t));
    }
    let result = match cli.command {
        Command::Demangle(args) => demangle::demangle(args),
        Command::Mangle(args) => demangle::mangle(args),
        Command::Flatten(args) => flatten::flatten(args),
        Command::Inspect(args) => inspect::inspect(args),
        Command::Run(args) => run::run(args),
        Command::Compile(args) => compile::compile(args),
        Command::Externals(args) => externals::externals(args),
        Command::Cache(args) => cache::cache(args),
    };
    match result {
        Ok(code) => code,
        Err(CliError(msg)) if msg == CLOSED_PIPE => ExitCode::SUCCESS,
        Err(CliError(msg)) => {
            eprintln!("fnabi: error: {}", msg.trim_end());
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_errors_are_one_line() {
        use std::ffi::OsString;
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStringExt;
            // Issue 18, defect 3.
            let args = vec![
                OsString::from("fnabi"),
                OsString::from("mangle"),
                OsString::from_vec(b"(Buffer<\xff\xfe[4]>) -> ()".to_vec()),
            ];
            let e = Cli::try_parse_from(&args).err().unwrap();
            assert_eq!(usage_error(&e, &args), r#"argument 2 is not valid UTF-8: "(Buffer<\xff\xfe[4]>) -> ()""#);
        }
        let args: Vec<OsString> = ["fnabi", "run", "--no-such-flag"].iter().map(OsString::from).collect();
        let e = Cli::try_parse_from(&args).err().unwrap();
        let msg = usage_error(&e, &args);
        assert!(!msg.contains('\n') && msg.contains("--no-such-flag"), "{msg}");
    }

    #[test]
    fn runtime_reports_are_cut_to_one_line_unless_verbose() {
        // The shape of an IREE status with its VM stack trace.
        let report = "IREE runtime (calling module.main): <vm>:0: FAILED_PRECONDITION; expected 4 rows; \n\
                      [ 0] bytecode module.main:0x0000001c model.mlir:3:5\n\
                      [ 1] bytecode module.__init:0x0 model.mlir:1:1";
        let e = || fnabi::Error::from(fnabi::ErrorKind::Backend(report.into()));
        assert_eq!(
            run_error(e(), false).0,
            "IREE runtime (calling module.main): <vm>:0: FAILED_PRECONDITION; expected 4 rows; (--verbose for the full report)"
        );
        assert_eq!(run_error(e(), true).0, report);
        assert_eq!(run_error(fnabi::Error::invalid_argument("x"), false).0, "invalid argument: x");
    }
}
