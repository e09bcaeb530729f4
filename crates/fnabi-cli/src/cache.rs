//! `fnabi cache list|clear`: what fnabi's compile cache (`$FNABI_CACHE_DIR`,
//! else `$XDG_CACHE_HOME/fnabi`, else `~/.cache/fnabi`) holds: the MLIR
//! backend's libraries (`mlir/`) and the IREE modules `--backend iree`
//! compiled (`iree/`, shown when there), with their sizes and whether each
//! is intact.

use crate::{CliError, outln};
use clap::{Args, Subcommand};
use fnabi::mlir::cache::{self, ArtifactKind, default_cache_dir};
use std::process::ExitCode;

#[derive(Args)]
pub struct CacheArgs {
    #[command(subcommand)]
    action: CacheAction,
}

#[derive(Subcommand)]
enum CacheAction {
    /// List the cached libraries and modules: path, size, and `corrupt`
    /// for one whose bytes do not match what was recorded (it is rebuilt
    /// when next used).
    List,
    /// Remove every cached library and module.
    Clear,
}

/// The cache's folders: the MLIR backend's (always shown) and IREE's
/// (shown when it exists), with the kind of their entries and its name in
/// the singular and plural.
fn folders() -> [(std::path::PathBuf, ArtifactKind, &'static str, &'static str, bool); 2] {
    let root = default_cache_dir();
    let iree = root.join("iree");
    let has_iree = iree.is_dir();
    [
        (root.join("mlir"), ArtifactKind::SHARED_LIBRARY, "library", "libraries", true),
        (iree, ArtifactKind::VMFB, "IREE module", "IREE modules", has_iree),
    ]
}

pub fn cache(args: CacheArgs) -> Result<ExitCode, CliError> {
    for (dir, kind, one, many, shown_always) in folders() {
        if !shown_always {
            continue;
        }
        let shown = dir.display();
        match args.action {
            CacheAction::List => {
                let entries = cache::list(&dir, kind).map_err(|e| CliError(format!("cannot list {shown}: {e}")))?;
                let total: u64 = entries.iter().map(|e| e.size).sum();
                for e in &entries {
                    let state = if e.intact { "" } else { "  corrupt" };
                    outln!("{}  {} bytes{state}", e.artifact.display(), e.size);
                }
                outln!("{} {} in {shown}, {total} bytes", entries.len(), if entries.len() == 1 { one } else { many });
            }
            CacheAction::Clear => {
                let n = cache::clear(&dir, kind).map_err(|e| CliError(format!("cannot clear {shown}: {e}")))?;
                outln!("removed {n} {} from {shown}", if n == 1 { one } else { many });
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
