//! The README's shell snippets, so that it cannot drift from the tool: every
//! `$ …` line of its `console` blocks runs (in order, one bash per block, in
//! a scratch folder that links the repository's `examples/` and `crates/`)
//! and its output (stdout and stderr together) must be the lines the README
//! shows under it; `sh` blocks must parse (`bash -n`) and name files that
//! exist. The README's Rust code is a doctest of the `fnabi` crate.
//!
//! Conventions of the README's transcripts, which this test reads:
//! - `$ cat FILE` shows a file the next commands use: the test writes the
//!   shown text to `FILE` first.
//! - `…` in an output stands for any text (lines left out, or the rest of a
//!   line); hexadecimal addresses (`0x55c0a3c85880`) match any address.
//! - `lib.so` is `crates/fnabi/tests/mlir/structured.mlir` compiled by
//!   fnabi's pipeline without its ABI (`MlirLibrary::compile`: the
//!   README's "shared library without its source").
//! - `./scripts/demo.sh` is not run here (it installs packages and builds;
//!   CI runs it in a clean clone): its last line, the MLP run it ends with,
//!   is run instead and must print what the README shows.

#[allow(dead_code)] // this test runs `fnabi` through bash, not through `common::fnabi`
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// A fenced block of the README: its info string, first line number, lines.
struct Block {
    lang: String,
    line: usize,
    lines: Vec<String>,
}

fn blocks(readme: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut cur: Option<Block> = None;
    for (i, l) in readme.lines().enumerate() {
        match (&mut cur, l.strip_prefix("```")) {
            (None, Some(lang)) => cur = Some(Block { lang: lang.trim().to_owned(), line: i + 1, lines: Vec::new() }),
            (Some(_), Some("")) => out.push(cur.take().unwrap()),
            (Some(b), _) => b.lines.push(l.to_owned()),
            (None, None) => {}
        }
    }
    assert!(cur.is_none(), "README: a code block is not closed");
    out
}

/// One command of a console block, with the output the README shows.
struct Step {
    line: usize,
    command: String,
    expected: String,
}

fn steps(b: &Block) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    for (i, l) in b.lines.iter().enumerate() {
        if let Some(c) = l.strip_prefix("$ ") {
            out.push(Step { line: b.line + 1 + i, command: c.to_owned(), expected: String::new() });
        } else {
            let s = out
                .last_mut()
                .unwrap_or_else(|| panic!("README line {}: output before any `$ ` command", b.line + 1 + i));
            s.expected.push_str(l);
            s.expected.push('\n');
        }
    }
    out
}

/// Replaces hexadecimal addresses by `0x…`.
fn mask_addresses(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("0x") {
        out.push_str(&rest[..i + 2]);
        rest = &rest[i + 2..];
        let n = rest.bytes().take_while(u8::is_ascii_hexdigit).count();
        if n > 0 {
            out.push('…');
            rest = &rest[n..];
        }
    }
    out.push_str(rest);
    out
}

/// The output as the README shows it: lines without trailing blanks (MLIR's
/// `printMemref` ends some lines with a space), and without bash's report
/// of a command killed by a signal (`bash: line 4: 123 Aborted  fnabi …`),
/// which is the shell's, not the command's.
fn normalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for l in s.lines() {
        let killed = l.strip_prefix("bash: line ").is_some_and(|r| r.contains(" Aborted "));
        if !killed {
            out.push_str(l.trim_end());
            out.push('\n');
        }
    }
    out
}

/// Whether `got` is `expected` where each `…` of `expected` stands for any text.
fn matches(expected: &str, got: &str) -> bool {
    let parts: Vec<&str> = expected.split('…').collect();
    if parts.len() == 1 {
        return expected == got;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !got.starts_with(first) || got.len() < first.len() + last.len() || !got.ends_with(last) {
        return false;
    }
    let mut rest = &got[first.len()..got.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

/// The scratch folder the console blocks run in, with what they use.
fn scratch() -> common::Scratch {
    let dir = common::Scratch::new("readme");
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    for d in ["examples", "crates"] {
        std::os::unix::fs::symlink(repo().join(d), dir.join(d)).unwrap();
    }
    // `fnabi` and a `python3` with numpy on PATH.
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_fnabi"));
    std::os::unix::fs::symlink(&exe, dir.join("bin/fnabi")).unwrap();
    let py = common::python_numpy();
    let py = if py.contains('/') { PathBuf::from(py) } else { which(&py) };
    std::os::unix::fs::symlink(py, dir.join("bin/python3")).unwrap();
    // lib.so: structured.mlir compiled.
    let src = std::fs::read_to_string(repo().join("crates/fnabi/tests/mlir/structured.mlir")).unwrap();
    // SAFETY: compiled only to copy the library; nothing of it runs here.
    let lib = unsafe { fnabi::mlir::MlirLibrary::compile(&src) }.unwrap();
    std::fs::copy(lib.path(), dir.join("lib.so")).unwrap();
    dir
}

fn which(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} is not on PATH"))
}

/// The command `scripts/demo.sh` ends with (its last line, run with `fnabi` from PATH).
fn demo_command() -> String {
    let demo = std::fs::read_to_string(repo().join("scripts/demo.sh")).unwrap();
    let last = demo.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
    let (_, args) =
        last.split_once("/debug/fnabi\" ").unwrap_or_else(|| panic!("demo.sh's last line runs no fnabi: {last}"));
    format!("fnabi {args}")
}

const END: &str = "\u{1e}fnabi-readme-step\n";

fn run_console_block(dir: &Path, b: &Block, failures: &mut Vec<String>) -> usize {
    let steps = steps(b);
    let mut script = String::from("exec 2>&1\n");
    for s in &steps {
        if let Some(file) = s.command.strip_prefix("cat ").filter(|f| !f.contains(' ')) {
            std::fs::write(dir.join(file), &s.expected).unwrap();
        }
        let command = if s.command == "./scripts/demo.sh" { demo_command() } else { s.command.clone() };
        script.push_str(&command);
        script.push_str("\nprintf '\\036fnabi-readme-step\\n'\n");
    }
    let mut path = std::ffi::OsString::from(dir.join("bin"));
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    let out = Command::new("bash")
        .args(["-c", &script])
        .current_dir(dir)
        .env("PATH", path)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let outputs: Vec<&str> = text.split_inclusive(END).map(|o| o.strip_suffix(END).unwrap_or(o)).collect();
    for (i, s) in steps.iter().enumerate() {
        let got = normalize(outputs.get(i).copied().unwrap_or("<the block ended before this command>"));
        let got = mask_addresses(&got);
        let want = mask_addresses(&s.expected);
        if !matches(&want, &got) {
            failures.push(format!("README line {}: $ {}\n--- README shows:\n{want}--- got:\n{got}", s.line, s.command));
        }
    }
    steps.len()
}

/// Checks an `sh` block: bash parses it, and the repository paths it names exist.
fn check_sh_block(b: &Block, failures: &mut Vec<String>) {
    let text = b.lines.join("\n");
    let out = Command::new("bash").args(["-n", "-c", &text]).output().unwrap();
    if !out.status.success() {
        failures.push(format!("README line {}: bash -n: {}", b.line, String::from_utf8_lossy(&out.stderr)));
    }
    let root = repo();
    for l in &b.lines {
        let code = l.split(" #").next().unwrap();
        let mut cwd = root.clone();
        let mut made: Vec<PathBuf> = Vec::new();
        let words: Vec<&str> = code.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            if i > 1 && words[i - 2] == "mkdir" && words[i - 1] == "-p" {
                made.push(cwd.join(w));
            }
            let looks_like_path = ["./scripts/", "scripts/", "crates/", "examples/", "corpus/", "seeds/"]
                .iter()
                .any(|p| w.starts_with(p))
                || (i > 0 && words[i - 1] == "cd");
            let p = cwd.join(w);
            if looks_like_path && !p.exists() && !made.contains(&p) {
                failures.push(format!("README line {}: `{w}` does not exist (in {})", b.line, cwd.display()));
            }
            if i > 0 && words[i - 1] == "cd" {
                cwd = cwd.join(w);
            }
        }
    }
}

#[test]
fn readme_snippets_run_as_shown() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let dir = scratch();
    let mut failures = Vec::new();
    let (mut commands, mut sh_blocks) = (0, 0);
    for b in blocks(&readme) {
        match b.lang.as_str() {
            "console" => commands += run_console_block(&dir, &b, &mut failures),
            // The Python session runs as a doctest in the Python package's
            // suite (crates/fnabi-py/tests/test_readme.py).
            "pycon" => {}
            "sh" => {
                check_sh_block(&b, &mut failures);
                sh_blocks += 1;
            }
            "rust" | "" | "text" => {}
            other => {
                failures.push(format!("README line {}: a `{other}` block, which this test does not check", b.line))
            }
        }
    }
    assert!(failures.is_empty(), "{} README snippet(s) differ:\n\n{}", failures.len(), failures.join("\n\n"));
    // The README's transcripts are many; a parsing slip must not make them vanish.
    assert!(commands >= 40 && sh_blocks >= 3, "{commands} commands, {sh_blocks} sh blocks");
}

#[test]
fn wildcards_and_addresses() {
    assert!(matches("a…c\n", "abbb\nc\n"));
    assert!(matches("x: …\n  …\n", "x: 1, 2\n  y\n  z\n"));
    assert!(!matches("a…c", "ab"));
    assert!(!matches("ab…ba", "aba"));
    assert_eq!(mask_addresses("base@ = 0x55c0a3c85880 rank"), "base@ = 0x… rank");
}
