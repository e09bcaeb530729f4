//! `fnabi cache list|clear`: the compiled libraries in fnabi's compile
//! cache (`$FNABI_CACHE_DIR`, else `$XDG_CACHE_HOME/fnabi`, else
//! `~/.cache/fnabi`), with their sizes and whether each is intact.

use crate::{CliError, outln};
use clap::{Args, Subcommand};
use fnabi::mlir::cache;
use fnabi::mlir::compile::default_cache_dir;
use std::process::ExitCode;

#[derive(Args)]
pub struct CacheArgs {
    #[command(subcommand)]
    action: CacheAction,
}

#[derive(Subcommand)]
enum CacheAction {
    /// List the cached libraries: path, size, and `corrupt` for one whose
    /// bytes do not match what was recorded (it is rebuilt when next used).
    List,
    /// Remove every cached library.
    Clear,
}

pub fn cache(args: CacheArgs) -> Result<ExitCode, CliError> {
    let dir = default_cache_dir().join("mlir");
    let shown = dir.display();
    match args.action {
        CacheAction::List => {
            let entries = cache::list(&dir).map_err(|e| CliError(format!("cannot list {shown}: {e}")))?;
            let total: u64 = entries.iter().map(|e| e.size).sum();
            for e in &entries {
                let state = if e.intact { "" } else { "  corrupt" };
                outln!("{}  {} bytes{state}", e.library.display(), e.size);
            }
            outln!(
                "{} librar{} in {shown}, {total} bytes",
                entries.len(),
                if entries.len() == 1 { "y" } else { "ies" }
            );
        }
        CacheAction::Clear => {
            let n = cache::clear(&dir).map_err(|e| CliError(format!("cannot clear {shown}: {e}")))?;
            outln!("removed {n} librar{} from {shown}", if n == 1 { "y" } else { "ies" });
        }
    }
    Ok(ExitCode::SUCCESS)
}
