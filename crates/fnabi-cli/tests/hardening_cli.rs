//! Malformed and oversized inputs on the command line (issue 18): each is
//! one line on stderr and exit status 1 — arguments that are not UTF-8,
//! requests over the byte limits, truncated or bit-flipped `.vmfb` files,
//! an ELF whose `.dynsym` links to itself.

mod common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `fnabi` with `args` and extra environment; returns (status code, stdout, stderr).
fn fnabi_env(args: &[OsString], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fnabi"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// Asserts a one-line fnabi error with status 1 that contains `needle`.
fn one_line_error((code, _, err): (i32, String, String), needle: &str) {
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("fnabi: error: ") && err.ends_with('\n'), "{err:?}");
    assert_eq!(err.lines().count(), 1, "{err:?}");
    assert!(err.contains(needle), "{err:?} lacks {needle:?}");
}

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(p)
}

#[cfg(unix)]
#[test]
fn arguments_that_are_not_utf8_are_one_line_errors() {
    use std::os::unix::ffi::OsStringExt;
    let args = vec![OsString::from("mangle"), OsString::from_vec(b"(Buffer<\xff\xfe[4]>) -> ()".to_vec())];
    one_line_error(fnabi_env(&args, &[]), r#"argument 2 is not valid UTF-8: "(Buffer<\xff\xfe[4]>) -> ()""#);
    // clap's other complaints are one line too.
    one_line_error(fnabi_env(&os(&["run", "--no-such-flag"]), &[]), "--no-such-flag");
    one_line_error(fnabi_env(&os(&["frobnicate"]), &[]), "frobnicate");
    // A missing argument is named on that line (clap lists it below).
    one_line_error(
        fnabi_env(&os(&["compile", "m.mlir"]), &[]),
        "the following required arguments were not provided: --output <LIB.so> (fnabi --help for usage)",
    );
    one_line_error(fnabi_env(&os(&["demangle"]), &[]), "not provided: <SIGNATURE> (fnabi --help");
    // Bare `fnabi` prints its help (exit status 2, as clap does).
    let (code, _, err) = fnabi_env(&[], &[]);
    assert_eq!((code, err.contains("Commands:")), (2, true), "{err}");
    // Help and version still print normally.
    let (code, out, _) = fnabi_env(&os(&["--version"]), &[]);
    assert_eq!((code, out.starts_with("fnabi ")), (0, true));
}

#[test]
fn requests_over_the_byte_limits_are_refused_before_allocating() {
    let m = repo("crates/fnabi/tests/mlir/memref_abi.mlir");
    let m = m.to_str().unwrap();
    // 400 GB asked by a 20-byte argument: refused at once by the default limit.
    one_line_error(
        fnabi_env(&os(&["run", m, "-f", "sum_f32", "-i", "100000000000xf32=1"]), &[]),
        "an array of 100000000000xf32 takes 400000000000 bytes, over the limit of",
    );
    let lim = [("FNABI_MAX_ARRAY_BYTES", "1K")];
    one_line_error(
        fnabi_env(&os(&["run", m, "-f", "sum_f32", "-i", "1000xf32=1"]), &lim),
        "takes 4000 bytes, over the limit of 1024 bytes per array (raise it with FNABI_MAX_ARRAY_BYTES",
    );
    // Under the limit, the same call runs (256 ones sum to 256).
    let (code, out, err) = fnabi_env(&os(&["run", m, "-f", "sum_f32", "-i", "256xf32=1"]), &lim);
    assert_eq!((code, out.as_str()), (0, "256\n"), "{err}");
    one_line_error(
        fnabi_env(&os(&["run", m, "-f", "sum_f32", "-i", "1000xf32=1"]), &[("FNABI_MAX_CALL_BYTES", "3999")]),
        "the call (its inputs) takes 4000 bytes, over the limit of 3999 bytes per call",
    );
    let vmfb = repo("crates/fnabi/tests/fixtures/iree/add.vmfb");
    one_line_error(
        fnabi_env(&os(&["inspect", vmfb.to_str().unwrap()]), &[("FNABI_MAX_FILE_BYTES", "100")]),
        "takes 12544 bytes, over the limit of 100 bytes per file read (raise it with FNABI_MAX_FILE_BYTES",
    );
    // The flags set the same limits, over the environment, after the
    // subcommand too.
    one_line_error(
        fnabi_env(&os(&["run", m, "-f", "sum_f32", "--max-array-bytes", "2K", "-i", "1000xf32=1"]), &lim),
        "takes 4000 bytes, over the limit of 2048 bytes per array (raise it with FNABI_MAX_ARRAY_BYTES=BYTES, e.g. 64G, fnabi's --max-array-bytes BYTES",
    );
    let (code, out, err) =
        fnabi_env(&os(&["--max-array-bytes", "4000", "run", m, "-f", "sum_f32", "-i", "1000xf32=1"]), &lim);
    assert_eq!((code, out.as_str()), (0, "1000\n"), "{err}");
    one_line_error(
        fnabi_env(&os(&["inspect", vmfb.to_str().unwrap(), "--max-file-bytes", "100"]), &[]),
        "over the limit of 100 bytes per file read",
    );
    one_line_error(
        fnabi_env(&os(&["run", m, "-f", "sum_f32", "--max-call-bytes", "lots", "-i", "1xf32=1"]), &[]),
        "not a byte size (such as 1048576, 64K, 8M or 16G)",
    );
    // A limit in the environment that is no byte size is an error, not ignored.
    one_line_error(
        fnabi_env(&os(&["run", m, "-f", "sum_f32", "-i", "1xf32=1"]), &[("FNABI_MAX_CALL_BYTES", "lots")]),
        "FNABI_MAX_CALL_BYTES=\"lots\" is not a byte size (such as 1048576, 64K, 8M or 16G)",
    );
}

#[test]
fn truncated_and_bit_flipped_vmfb_files_are_errors() {
    let bytes = std::fs::read(repo("crates/fnabi/tests/fixtures/iree/add.vmfb")).unwrap();
    let dir = common::Scratch::new("hardening-vmfb");
    let cut = dir.file("cut.vmfb", &bytes[..9408]);
    one_line_error(fnabi_env(&os(&["inspect", cut.to_str().unwrap()]), &[]), "end-of-central-directory record");
    let mut b = bytes.clone();
    b[6108] ^= 0x80;
    let flipped = dir.file("flipped.vmfb", &b);
    one_line_error(
        fnabi_env(&os(&["inspect", flipped.to_str().unwrap()]), &[]),
        r#"ZIP entry "module.fb" is corrupted: its CRC-32 is"#,
    );
    // `fnabi run` refuses it before IREE's runtime (which crashed on it).
    #[cfg(feature = "iree")]
    for m in [&cut, &flipped] {
        one_line_error(
            fnabi_env(&os(&["run", m.to_str().unwrap(), "-f", "add", "-i", "4xf32=1", "-i", "4xf32=2"]), &[]),
            "vmfb at byte",
        );
    }
}

/// Issue 18, defect 4: a `.so` whose `.dynsym` links to itself was shown
/// as "0 MLIR function(s)" with status 0.
#[test]
fn an_elf_whose_dynsym_links_to_itself_is_an_error() {
    let path = ["/usr/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/aarch64-linux-gnu/libm.so.6", "/lib64/libm.so.6"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("a libm.so.6 to corrupt (the C library's math library)");
    let mut b = std::fs::read(path).unwrap();
    let u16_at = |b: &[u8], at: usize| u16::from_le_bytes([b[at], b[at + 1]]) as usize;
    let shoff = u64::from_le_bytes(b[0x28..0x30].try_into().unwrap()) as usize;
    let shnum = u16_at(&b, 0x3c);
    let k = (0..shnum).find(|k| u32::from_le_bytes(b[shoff + k * 64 + 4..][..4].try_into().unwrap()) == 11).unwrap();
    let link = shoff + k * 64 + 40;
    let dir = common::Scratch::new("hardening-elf");
    let intact = dir.file("intact.so", &b);
    let (code, out, err) = fnabi_env(&os(&["inspect", intact.to_str().unwrap()]), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("shared library"), "{out}");
    b[link..link + 4].copy_from_slice(&(k as u32).to_le_bytes());
    let bad = dir.file("self-link.so", &b);
    one_line_error(
        fnabi_env(&os(&["inspect", bad.to_str().unwrap()]), &[]),
        "string-table link to another existing section",
    );
}

/// Several processes compiling one module into one fresh cache all succeed
/// and leave one intact entry; `fnabi cache list` shows a corrupted entry,
/// the next run rebuilds it, and `fnabi cache clear` empties the cache.
#[test]
fn the_compile_cache_across_processes_list_and_clear() {
    let cache = common::Scratch::new("hardening-cache");
    let c = cache.to_str().unwrap();
    let m = repo("crates/fnabi/tests/mlir/memref_abi.mlir");
    let children: Vec<_> = (0..4)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_fnabi"))
                .args(["run", m.to_str().unwrap(), "-f", "sum_f32", "-i", "4xf32=1 2 3 4.5"])
                .env("FNABI_CACHE_DIR", c)
                .output_async()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "10.5\n");
    }
    let env = [("FNABI_CACHE_DIR", c)];
    let (code, out, _) = fnabi_env(&os(&["cache", "list"]), &env);
    assert_eq!(code, 0);
    assert!(out.ends_with(&format!("1 library in {c}/mlir, {} bytes\n", lib_size(&cache))), "{out}");
    assert!(!out.contains("corrupt"), "{out}");
    // No temporary folder is left behind.
    let names: Vec<String> = std::fs::read_dir(cache.join("mlir"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| n.starts_with("lib")), "{names:?}");
    // Corrupt the library: listed as corrupt, rebuilt by the next run.
    let so = names.iter().find(|n| n.ends_with(".so")).unwrap();
    std::fs::write(cache.join("mlir").join(so), b"\x7fELF cut short").unwrap();
    assert!(fnabi_env(&os(&["cache", "list"]), &env).1.contains("corrupt"));
    let (code, out, err) =
        fnabi_env(&os(&["run", m.to_str().unwrap(), "-f", "sum_f32", "-i", "4xf32=1 2 3 4.5"]), &env);
    assert_eq!((code, out.as_str()), (0, "10.5\n"), "{err}");
    assert!(!fnabi_env(&os(&["cache", "list"]), &env).1.contains("corrupt"));
    let (code, out, _) = fnabi_env(&os(&["cache", "clear"]), &env);
    assert_eq!((code, out), (0, format!("removed 1 library from {c}/mlir\n")));
    assert!(fnabi_env(&os(&["cache", "list"]), &env).1.starts_with("0 libraries"));
}

fn lib_size(cache: &Path) -> u64 {
    std::fs::read_dir(cache.join("mlir"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "so"))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum()
}

/// Starts a command with its output captured (to wait for later).
trait OutputAsync {
    fn output_async(&mut self) -> std::process::Child;
}

impl OutputAsync for Command {
    fn output_async(&mut self) -> std::process::Child {
        self.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap()
    }
}

/// A compile past its timeout is killed and reported in one line, leaves
/// nothing in the cache, and the same module compiles once the timeout
/// allows it; a timeout that is no number is refused.
#[test]
fn compiles_past_their_timeout_are_killed() {
    let cache = common::Scratch::new("hardening-timeout");
    let c = cache.to_str().unwrap();
    let m = repo("crates/fnabi/tests/mlir/memref_abi.mlir");
    let m = m.to_str().unwrap();
    let run = ["run", m, "-f", "sum_f32", "-i", "4xf32=1 2 3 4.5"];
    // 1 ms: the real mlir-opt cannot even start in that time.
    let t = std::time::Instant::now();
    let mut args = os(&run);
    args.extend(os(&["--compile-timeout", "0.001"]));
    one_line_error(
        fnabi_env(&args, &[("FNABI_CACHE_DIR", c)]),
        "did not finish within the compile timeout of 0.001 s (raise it with FNABI_COMPILE_TIMEOUT=SECONDS or --compile-timeout; 0 for none)",
    );
    assert!(t.elapsed() < std::time::Duration::from_secs(20), "{:?}", t.elapsed());
    one_line_error(fnabi_env(&os(&run), &[("FNABI_CACHE_DIR", c), ("FNABI_COMPILE_TIMEOUT", "0.001")]), "mlir-opt");
    // Nothing half-built is left (no library, no temporary folder).
    let left: Vec<_> =
        std::fs::read_dir(cache.join("mlir")).map(|d| d.map(|e| e.unwrap().file_name()).collect()).unwrap_or_default();
    assert!(left.iter().all(|n| n.to_string_lossy().ends_with(".lock")), "{left:?}");
    // The flag wins over the environment; 0 is no timeout.
    let mut args = os(&run);
    args.extend(os(&["--compile-timeout", "0"]));
    let (code, out, err) = fnabi_env(&args, &[("FNABI_CACHE_DIR", c), ("FNABI_COMPILE_TIMEOUT", "0.001")]);
    assert_eq!((code, out.as_str()), (0, "10.5\n"), "{err}");
    one_line_error(
        fnabi_env(&os(&run), &[("FNABI_CACHE_DIR", c), ("FNABI_COMPILE_TIMEOUT", "soon")]),
        "FNABI_COMPILE_TIMEOUT=\"soon\" is not a number of seconds (0 for none)",
    );
    let mut args = os(&run);
    args.extend(os(&["--compile-timeout", "soon"]));
    one_line_error(fnabi_env(&args, &[]), "not a number of seconds (0 for none)");
}

/// MLIR's code does not check what `malloc` returns: a result whose size
/// comes from the inputs (an outer product: 1.2 MB of input asks for 80 GB)
/// was written through a null pointer (SIGSEGV). fnabi's allocation glue
/// holds each of the module's allocations to the per-array limit and to the
/// allocator's answer: with runtime checks (`fnabi run`'s default) the call
/// is a one-line error; without them the process aborts, saying what was
/// asked. Sizes from the source: m*n*4 bytes plus MLIR's 64-byte pad.
#[test]
fn allocations_of_compiled_code_are_bounded() {
    let m = repo("crates/fnabi/tests/mlir/alloc.mlir");
    let m = m.to_str().unwrap();
    let lim = [("FNABI_MAX_ARRAY_BYTES", "1M")];
    let small = ["run", m, "-i", "2xf32=1 2", "-i", "3xf32=1 2 3"];
    let (code, out, err) = fnabi_env(&os(&small), &lim);
    assert_eq!((code, out.as_str()), (0, "2x3xf32=[1 2 3][2 4 6]\n"), "{err}");
    let large = ["run", m, "-i", "1000xf32=1", "-i", "2000xf32=1"];
    one_line_error(
        fnabi_env(&os(&large), &lim),
        "@outer: memory exhausted: an allocation of the compiled code takes 8000064 bytes, over the limit of 1048576 bytes per array (raise it with FNABI_MAX_ARRAY_BYTES=BYTES",
    );
    // The flag sets the limit the module is loaded with.
    let (code, _, err) = fnabi_env(
        &os(&[&large[..], &["--max-array-bytes", "8000064", "--output-max-element-count", "1"]].concat()),
        &lim,
    );
    assert_eq!(code, 0, "{err}");
    // Without runtime checks there is no call to return to: abort, with
    // the reason on stderr (not a segfault).
    let unchecked = [&large[..], &["--no-runtime-verification"]].concat();
    let out = Command::new(env!("CARGO_BIN_EXE_fnabi")).args(unchecked).envs(lim).output().unwrap();
    use std::os::unix::process::ExitStatusExt;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), Some(6), "{err}");
    assert!(
        err.contains("fnabi: memory exhausted: the compiled code asked for 8000064 bytes, over the limit of 1048576 bytes per array"),
        "{err}"
    );
    // Within the limit, more than the allocator can give (an address space
    // of 4 GiB; the request is 80 GB): the allocator's null is the error.
    let in_4_gib = |extra: &str| {
        let script = format!("ulimit -v 4194304 && exec \"$0\" run '{m}' -i 100000xf32=1 -i 200000xf32=1 {extra}");
        let out = Command::new("sh")
            .args(["-c", &script, env!("CARGO_BIN_EXE_fnabi")])
            .env("FNABI_MAX_ARRAY_BYTES", "1T")
            .output()
            .unwrap();
        (out.status, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (status, err) = in_4_gib("");
    assert_eq!(status.code(), Some(1), "{err}");
    assert_eq!(
        err,
        "fnabi: error: @outer: memory exhausted: the compiled code asked for 80000000064 bytes, which the allocator could not give\n"
    );
    // The same null without runtime checks: abort, with the reason.
    let (status, err) = in_4_gib("--no-runtime-verification");
    assert_eq!(status.signal(), Some(6), "{err}");
    assert!(
        err.contains(
            "fnabi: memory exhausted: the compiled code asked for 80000000064 bytes, which the allocator could not give"
        ),
        "{err}"
    );
    // A module with an allocator of its own keeps it (fnabi's glue beside
    // it was a second `malloc`: the link failed).
    let dir = common::Scratch::new("hardening-own-allocator");
    let ll = dir.file(
        "own.ll",
        b"@buf = internal global [64 x i8] zeroinitializer\n\
          define ptr @malloc(i64 %n) {\n  ret ptr @buf\n}\n\
          define i64 @first(i64 %x) {\n  %p = call ptr @malloc(i64 8)\n  store i64 %x, ptr %p\n  %v = load i64, ptr %p\n  ret i64 %v\n}\n",
    );
    let run = ["run", ll.to_str().unwrap(), "-f", "first", "-i", "7", "--signature", "(i64) -> i64"];
    let (code, out, err) = fnabi_env(&os(&run), &[]);
    assert_eq!((code, out.as_str()), (0, "7\n"), "{err}");
    // Likewise its own `puts` beside the runtime-check glue's.
    let ll = dir.file(
        "own_puts.ll",
        b"@n = internal global i64 0\ndefine i32 @puts(ptr %s) {\n  store i64 1, ptr @n\n  ret i32 0\n}\n\
          declare void @abort()\ndefine i64 @check(i64 %x) {\n  %c = icmp slt i64 %x, 0\n  br i1 %c, label %bad, label %ok\n\
          bad:\n  %r = call i32 @puts(ptr null)\n  call void @abort()\n  unreachable\nok:\n  ret i64 %x\n}\n",
    );
    let run = ["run", ll.to_str().unwrap(), "-f", "check", "-i", "5", "--signature", "(i64) -> i64"];
    let (code, out, err) = fnabi_env(&os(&run), &[]);
    assert_eq!((code, out.as_str()), (0, "5\n"), "{err}");
    // A guarded call that prints more than the report holds (4 KiB) before
    // it aborts: the report is cut, not written past its buffer (the room
    // left wrapped around to SIZE_MAX at the 5th line of 999 bytes).
    let line = "x".repeat(999);
    let ll = dir.file(
        "long_report.ll",
        format!(
            "@s = private constant [1000 x i8] c\"{line}\\00\"\ndeclare i32 @puts(ptr)\ndeclare void @abort()\n\
             define i64 @noisy(i64 %x) {{\n  %c = icmp slt i64 %x, 0\n  br i1 %c, label %bad, label %ok\nbad:\n\
             {}  call void @abort()\n  unreachable\nok:\n  ret i64 %x\n}}\n",
            (0..8).map(|i| format!("  %r{i} = call i32 @puts(ptr @s)\n")).collect::<String>()
        ),
    );
    let run = ["run", ll.to_str().unwrap(), "-f", "noisy", "-i", "-1", "--signature", "(i64) -> i64", "--verbose"];
    let (code, _, err) = fnabi_env(&os(&run), &[]);
    assert_eq!(code, 1, "{err}");
    // The summary line repeats the report's first line (999 bytes); the
    // report is at most 4 KiB.
    assert!(err.starts_with("fnabi: error: @noisy: ") && err.contains(&line) && err.len() < 5300, "{}", err.len());
}
