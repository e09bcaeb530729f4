//! Checks, before the IREE runtime is built, that the tools its build needs
//! are there, and says what to install when one is not: `eerie-sys` (a
//! dependency) builds IREE's C runtime with CMake >= 3.26, make, a C/C++
//! compiler and bindgen's libclang with clang's resource headers, and fails
//! with a raw CMake or bindgen error without them.
//!
//! Cargo runs this script as soon as it is compiled: it does not wait for
//! `eerie-sys`'s build script (which has no `links` key), whose own
//! build-dependencies (bindgen, cmake, cc) take far longer to compile. So on
//! a first build this check fails first and Cargo starts nothing more. If
//! `eerie-sys`'s build script was already running (its build-dependencies
//! built by an earlier attempt), Cargo waits for it and prints its error
//! after this one. `FNABI_IREE_SKIP_BUILD_CHECK=1` skips the check.
//!
//! It runs once (`rerun-if-changed=build.rs`): once the tools are there,
//! the IREE build itself is what needs them.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const DEBIAN: &str = "Debian/Ubuntu";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if env::var_os("FNABI_IREE_SKIP_BUILD_CHECK").is_some_and(|v| v == "1") {
        return;
    }
    let mut problems = Vec::new();
    if let Err(p) = check_cmake() {
        problems.push(p);
    }
    let linux = env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if linux {
        problems.extend(check_build_tools());
        if let Err(p) = check_libclang() {
            problems.push(p);
        }
    }
    if problems.is_empty() {
        return;
    }
    eprintln!("error: fnabi-iree cannot build the IREE runtime (crate eerie-sys): a build tool is missing.");
    for p in &problems {
        eprintln!("  - {p}");
    }
    eprintln!(
        "  On {DEBIAN}: apt-get install build-essential libclang1-14 libclang-common-14-dev, and for CMake >= 3.26: \
         python3 -m venv ~/cmake-venv && ~/cmake-venv/bin/pip install 'cmake>=3.26' && export PATH=~/cmake-venv/bin:$PATH \
         (or set CMAKE=/path/to/cmake). FNABI_IREE_SKIP_BUILD_CHECK=1 skips this check."
    );
    std::process::exit(1);
}

/// The `cmake` cmake-rs runs: `CMAKE_<target>`, `CMAKE_<target_with_underscores>`,
/// `TARGET_CMAKE`/`HOST_CMAKE`, `CMAKE`, else `cmake` on `PATH`.
fn cmake_program() -> (String, String) {
    let target = env::var("TARGET").unwrap_or_default();
    let host = env::var("HOST").unwrap_or_default();
    let kind = if target == host { "HOST" } else { "TARGET" };
    let names = [
        format!("CMAKE_{target}"),
        format!("CMAKE_{}", target.replace('-', "_")),
        format!("{kind}_CMAKE"),
        "CMAKE".into(),
    ];
    for n in names {
        println!("cargo:rerun-if-env-changed={n}");
        if let Some(v) = env::var_os(&n).filter(|v| !v.is_empty()) {
            return (v.to_string_lossy().into_owned(), format!("{n} = "));
        }
    }
    ("cmake".into(), String::new())
}

fn check_cmake() -> Result<(), String> {
    let (cmake, how) = cmake_program();
    let out = Command::new(&cmake).arg("--version").output().map_err(|e| {
        format!("CMake >= 3.26 is needed, but {how}`{cmake}` cannot be run ({e}): install CMake >= 3.26")
    })?;
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text.lines().next().and_then(|l| l.strip_prefix("cmake version ")).map(str::trim);
    let parsed = version.and_then(|v| {
        let mut it = v.split(|c: char| !c.is_ascii_digit()).map(|p| p.parse::<u32>().ok());
        Some((it.next()??, it.next()??))
    });
    match parsed {
        Some((major, minor)) if (major, minor) >= (3, 26) => Ok(()),
        Some(_) => Err(format!(
            "CMake >= 3.26 is needed, but {how}`{cmake}` is CMake {} (Debian 12's is 3.25): install a newer one \
             (PyPI: pip install 'cmake>=3.26') and put it first on PATH, or set CMAKE to it",
            version.unwrap_or("?")
        )),
        None => Err(format!("CMake >= 3.26 is needed, but {how}`{cmake} --version` printed no CMake version")),
    }
}

fn on_path(name: &str) -> bool {
    let path = env::var_os("PATH").unwrap_or_default();
    env::split_paths(&path).any(|d| d.join(name).is_file())
}

/// make, and the C and C++ compilers CMake's project needs (`LANGUAGES C CXX`).
fn check_build_tools() -> Vec<String> {
    let mut problems = Vec::new();
    for (var, default, what) in [("CC", "cc", "a C compiler"), ("CXX", "c++", "a C++ compiler")] {
        println!("cargo:rerun-if-env-changed={var}");
        let tool = env::var(var).ok().filter(|v| !v.is_empty()).unwrap_or_else(|| default.into());
        let first = tool.split_whitespace().next().unwrap_or_default().to_owned();
        let found = if first.contains('/') { Path::new(&first).is_file() } else { on_path(&first) };
        if !found {
            problems.push(format!("{what} (`{tool}`) is not installed: apt-get install build-essential"));
        }
    }
    if !on_path("make") {
        problems.push("`make` (CMake's generator) is not installed: apt-get install build-essential".into());
    }
    problems
}

/// Whether a file name is one of those clang-sys loads (`libclang.so`,
/// `libclang-14.so.1`, `libclang.so.13`; not `libclang-cpp`).
fn is_libclang(name: &str) -> bool {
    (name.starts_with("libclang.so") || name.starts_with("libclang-"))
        && !name.starts_with("libclang-cpp")
        && name.contains(".so")
}

/// The libclang files in `dir`.
fn libclangs_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    rd.filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(is_libclang))
        .collect()
}

/// The folders clang-sys searches (`/usr/lib*`, `/usr/lib*/*`,
/// `/usr/lib*/*/*`, the same under `/usr/local`, and `llvm-config
/// --prefix`'s `lib`), or only `LIBCLANG_PATH` when it is set.
fn libclang_dirs() -> Vec<PathBuf> {
    println!("cargo:rerun-if-env-changed=LIBCLANG_PATH");
    if let Some(p) = env::var_os("LIBCLANG_PATH").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() { p.parent().map(Path::to_path_buf).into_iter().collect() } else { vec![p] };
    }
    let mut dirs = Vec::new();
    if let Ok(out) =
        Command::new(env::var("LLVM_CONFIG_PATH").unwrap_or_else(|_| "llvm-config".into())).arg("--prefix").output()
        && out.status.success()
    {
        let prefix = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        dirs.extend([prefix.join("lib"), prefix.join("lib64")]);
    }
    let subdirs = |d: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(d)
            .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_dir()).collect())
            .unwrap_or_default()
    };
    for root in ["/usr", "/usr/local"] {
        for lib in subdirs(Path::new(root))
            .into_iter()
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("lib")))
        {
            for d1 in subdirs(&lib) {
                dirs.extend(subdirs(&d1));
                dirs.push(d1);
            }
            dirs.push(lib);
        }
    }
    dirs
}

/// A libclang for bindgen, and clang's resource headers beside it
/// (`stdbool.h`: without them bindgen fails on IREE's headers).
fn check_libclang() -> Result<(), String> {
    let set = env::var_os("LIBCLANG_PATH").filter(|p| !p.is_empty());
    let found: Vec<PathBuf> = libclang_dirs().iter().flat_map(|d| libclangs_in(d)).collect();
    if found.is_empty() {
        return Err(match set {
            Some(p) => format!(
                "bindgen needs libclang, but LIBCLANG_PATH = {} holds none: apt-get install libclang1-14 \
                 libclang-common-14-dev and set LIBCLANG_PATH=/usr/lib/llvm-14/lib (or unset it)",
                PathBuf::from(p).display()
            ),
            None => "bindgen needs libclang, which is not installed: apt-get install libclang1-14 \
                     libclang-common-14-dev (elsewhere, set LIBCLANG_PATH to the folder of libclang.so)"
                .into(),
        });
    }
    println!("cargo:rerun-if-env-changed=BINDGEN_EXTRA_CLANG_ARGS");
    if env::var_os("BINDGEN_EXTRA_CLANG_ARGS").is_some() {
        return Ok(()); // the user points clang at its headers
    }
    // clang's resource folder, `lib/clang/VERSION/include`: relative to
    // where libclang is loaded from, or where the distribution's clang
    // looks by itself (Debian's finds /usr/lib/llvm-N/lib/clang/… from a
    // libclang anywhere). Lenient on purpose: a false alarm would stop a
    // build that works; only no headers anywhere is reported.
    let mut roots: Vec<PathBuf> = found.iter().filter_map(|p| p.parent().map(Path::to_path_buf)).collect();
    roots.extend(roots.clone().iter().map(|d| d.join("../lib")));
    roots.extend(["/usr/lib", "/usr/lib64", "/usr/local/lib"].map(PathBuf::from));
    if let Ok(rd) = std::fs::read_dir("/usr/lib") {
        roots.extend(
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("llvm-")))
                .map(|p| p.join("lib")),
        );
    }
    let has_headers = roots.iter().any(|r| {
        std::fs::read_dir(r.join("clang"))
            .map(|rd| rd.filter_map(Result::ok).any(|v| v.path().join("include/stdbool.h").is_file()))
            .unwrap_or(false)
    });
    if has_headers {
        return Ok(());
    }
    let version = found
        .iter()
        .filter_map(|p| p.file_name()?.to_str()?.strip_prefix("libclang-")?.split('.').next()?.parse::<u32>().ok())
        .max()
        .unwrap_or(14);
    Err(format!(
        "bindgen needs clang's resource headers (stdbool.h) beside libclang ({}): apt-get install \
         libclang-common-{version}-dev",
        found[0].display()
    ))
}
