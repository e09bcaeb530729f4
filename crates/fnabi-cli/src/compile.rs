//! `fnabi compile FILE.mlir -o lib.so`: compile a module to a
//! self-describing shared library, which carries the ABI of its functions
//! (see `fnabi::mlir::abi_embed`), so that `fnabi run lib.so -f f` and
//! `fnabi inspect lib.so` need no `--signature`.

use crate::CliError;
use clap::Args;
use fnabi::mlir::{CompileOptions, HostFunctions, MlirLibrary};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct CompileArgs {
    /// The MLIR source (`.mlir`, tensor or memref level).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Where to write the shared library.
    #[arg(long, short = 'o', value_name = "LIB.so")]
    output: PathBuf,
    /// Your own pass pipeline in place of fnabi's high-level passes (as `fnabi run --pipeline`).
    #[arg(long, value_name = "PIPELINE")]
    pipeline: Option<String>,
    /// An option on a pass of fnabi's pipeline (as `fnabi run --pass-option`).
    #[arg(long = "pass-option", value_name = "PASS:OPTION=VALUE", value_parser = crate::pass_option)]
    pass_option: Vec<(String, String)>,
    /// Instrument the code with MLIR's runtime op verification.
    #[arg(long)]
    runtime_verification: bool,
}

pub fn compile(args: CompileArgs) -> Result<ExitCode, CliError> {
    let shown = args.file.display();
    // The library must not replace its own source (`-o model.mlir`, or a
    // link to it): the same file is the same device and inode.
    let id = |p: &std::path::Path| std::fs::metadata(p).map(|m| (m.dev(), m.ino()));
    if let (Ok(src), Ok(out)) = (id(&args.file), id(&args.output))
        && src == out
    {
        return Err(CliError(format!(
            "-o {} is the source itself: write the library to another file (e.g. -o {})",
            args.output.display(),
            args.file.with_extension("so").display()
        )));
    }
    let source = std::fs::read_to_string(&args.file).map_err(|e| CliError(format!("cannot read {shown}: {e}")))?;
    if source.trim().is_empty() {
        return Err(CliError(format!("{shown} is empty: there is nothing to compile")));
    }
    if !source.contains("func.func") {
        return Err(CliError(format!(
            "{shown} has no func.func function: `fnabi compile` takes MLIR source (LLVM-level inputs run with `fnabi run`)"
        )));
    }
    let mut options =
        CompileOptions::default().with_runtime_verification(args.runtime_verification).with_source_path(&args.file);
    options.embed_abi = true;
    if let Some(p) = args.pipeline {
        options = options.with_pipeline(p);
    }
    for (pass, option) in args.pass_option {
        options = options.with_pass_option(pass, option);
    }
    // SAFETY: compiling loads the library (its initialisers run, none of
    // its functions is called); the user vouches for the source.
    let lib = unsafe { MlirLibrary::compile_with_options(&source, &HostFunctions::new(), &options) }?;
    let tmp = args.output.with_extension(format!("tmp{}", std::process::id()));
    // Written beside the output, then renamed over it: a reader never sees
    // a half-written library. Errors name the output, not the scratch file.
    let cannot = |e: std::io::Error| CliError(format!("cannot write {}: {e}", args.output.display()));
    // The scratch file is one this call creates (O_EXCL): in a shared folder
    // a link planted at its name is never written through. Only what this
    // call created is removed when the rename fails.
    fnabi::mlir::cache::copy_to_new_file(lib.path(), &tmp, 0o755).map_err(cannot)?;
    if let Err(e) = std::fs::rename(&tmp, &args.output) {
        let _ = std::fs::remove_file(&tmp);
        return Err(cannot(e));
    }
    let names: Vec<&str> = lib.declarations().iter().filter(|d| d.has_body).map(|d| d.name.as_str()).collect();
    eprintln!("fnabi: wrote {} ({} function(s): {})", args.output.display(), names.len(), names.join(", "));
    Ok(ExitCode::SUCCESS)
}
