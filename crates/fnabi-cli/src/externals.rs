//! `fnabi externals FILE.mlir`: the external functions an MLIR module
//! declares and who provides each when fnabi runs it from the command line
//! (MLIR's runtime utilities; Rust host functions exist only for programs
//! that register them through the library). Exits with an error naming the
//! missing ones, before anything is compiled.

use crate::CliError;
use clap::Args;
use fnabi::mlir::{Compiler, Externals, HostFunctions, Provider, RuntimeUtils, parse_functions};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ExternalsArgs {
    /// The MLIR source.
    file: PathBuf,
}

pub fn externals(args: ExternalsArgs) -> Result<ExitCode, CliError> {
    let shown = args.file.display();
    let text = std::fs::read_to_string(&args.file).map_err(|e| CliError(format!("cannot read {shown}: {e}")))?;
    let decls = parse_functions(&text).map_err(|e| CliError(format!("{shown}: {e}")))?;
    // Without the MLIR tools the runtime utilities cannot be located: say so.
    let runtime = match Compiler::new() {
        Ok(c) => RuntimeUtils::for_toolchain(c.toolchain())?,
        Err(e) => {
            eprintln!("fnabi: note: {e}");
            RuntimeUtils::none().into()
        }
    };
    let ext = Externals::resolve(&decls, &HostFunctions::new(), &runtime)?;
    if ext.is_empty() {
        crate::outln!("{shown}: no external functions");
        return Ok(ExitCode::SUCCESS);
    }
    crate::outln!("{shown}: {} external function{}", ext.all().len(), if ext.all().len() == 1 { "" } else { "s" });
    for e in ext.all() {
        let by = match &e.provider {
            Provider::Host => "a host function".to_string(),
            Provider::Runtime { library, shim: false, .. } => library.clone(),
            Provider::Runtime { library, shim: true, .. } => format!("{library} (plain function, through a shim)"),
            Provider::Missing { .. } => "missing".to_string(),
        };
        crate::outln!("  @{}: {}  {by}", e.name, e.ty);
    }
    ext.check()?;
    Ok(ExitCode::SUCCESS)
}
