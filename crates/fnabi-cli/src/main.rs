//! `fnabi`: the command-line face of the fnabi library.
//!
//! Every subcommand lives in its own module and uses the library only
//! through its public API. Errors are one line on stderr (`fnabi: error: …`)
//! and a non-zero exit status; the process never panics on bad input.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

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
    /// Call a function of a compiled module (.mlir, .so, .vmfb) and print its results.
    Run(run::RunArgs),
    /// List the external functions an MLIR module declares and who provides each.
    Externals(externals::ExternalsArgs),
}

/// A failure that ends the command: printed as one line on stderr.
pub struct CliError(pub String);

impl<E: std::fmt::Display> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError(e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demangle(args) => demangle::demangle(args),
        Command::Mangle(args) => demangle::mangle(args),
        Command::Flatten(args) => flatten::flatten(args),
        Command::Inspect(args) => inspect::inspect(args),
        Command::Run(args) => run::run(args),
        Command::Externals(args) => externals::externals(args),
    };
    match result {
        Ok(code) => code,
        Err(CliError(msg)) => {
            eprintln!("fnabi: error: {msg}");
            ExitCode::FAILURE
        }
    }
}
