//! `fnabi run` with `iree-run-module`'s habits, on MLIR code end to end
//! through the binary: `--module=`/`--function=`/`--input=` with `=`, a
//! module from stdin, raw binary inputs, `--output=@FILE`/`+FILE`, elided
//! printing, a closed pipe, and JSON inputs typed by the signature (nested
//! lists, `"@FILE.npy"` anywhere, `$args`/`$kwargs`). Files are written and
//! checked by numpy, and expected values are hand-derived or numpy's.

mod common;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

fn repo(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(p).to_str().unwrap().to_owned()
}

fn fnabi(args: &[&str]) -> (bool, String, String) {
    common::fnabi(args, "")
}

fn tmpdir(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("compat-cli-{name}"))
}

const MLP_LINE: &str = "2x3xf32=[-0.35000002 -0.88125 0][-0.42812502 -1.021875 -0.203125]\n";

#[test]
fn iree_style_flags_and_a_module_from_stdin() {
    let (m, i) = (repo("examples/mlp.mlir"), repo("examples/mlp_inputs.json"));
    let (ok, out, err) = fnabi(&["run", &format!("--module={m}"), "--function=mlp", &format!("--inputs={i}")]);
    assert!(ok, "{err}");
    assert_eq!(out, MLP_LINE);
    // `--module=-`: MLIR text from stdin.
    let src = std::fs::read_to_string(&m).unwrap();
    let (ok, out, err) = common::fnabi(["run", "--module=-", "--function=mlp", "--inputs", &i], &src);
    assert!(ok, "{err}");
    assert_eq!(out, MLP_LINE);
    let (ok, _, err) = common::fnabi(["run", "--module=-", "--inputs=-"], "");
    assert!(!ok);
    assert_eq!(err, "fnabi: error: the module and --inputs cannot both come from stdin\n");
    let (ok, _, err) = fnabi(&["run", &m, &format!("--module={m}")]);
    assert!(!ok && err.contains("cannot be used with"), "{err}");
}

#[test]
fn raw_binary_inputs() {
    let dir = tmpdir("raw");
    let bin = dir.join("ab.bin");
    // Eight little-endian f32: a = 1 2 3 4, then b = 10 20 30 40.
    let bytes: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 10.0, 20.0, 30.0, 40.0].iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(&bin, &bytes).unwrap();
    let s = repo("crates/fnabi/tests/mlir/structured.mlir");
    let a = format!("--input=4xf32=@{}", bin.display());
    let b = format!("--input=4xf32=+{}", bin.display());
    let (ok, out, err) = fnabi(&["run", &s, "--function=add_into", &a, &b]);
    assert!(ok, "{err}");
    assert_eq!(out, "4xf32=11 22 33 44\n");
    // `@` starts at the file's start again; a file too short says so.
    let (ok, out, _) = fnabi(&["run", &s, "--function=add_into", &a, &a]);
    assert!(ok);
    assert_eq!(out, "4xf32=2 4 6 8\n");
    let c = format!("--input=5xf32=+{}", bin.display());
    let (ok, _, err) = fnabi(&["run", &s, "--function=add_into", &a, &b, &c]);
    assert!(!ok);
    assert!(err.ends_with("needs 20 bytes from byte 32, but the file has 32 bytes\n"), "{err}");
}

/// `.npy` files of several arrays, written by numpy one after another, read
/// as `iree-run-module` reads them: `@` the first array, `+` the next, `*`
/// all the following ones; `&` storage buffers are refused.
#[test]
fn npy_streams_and_storage_buffers() {
    let dir = tmpdir("npystream");
    let f = dir.join("ab.npy");
    common::python(&format!(
        "import numpy as np; f = open({:?}, 'wb'); np.save(f, np.float32([1, 2, 3, 4])); \
         np.save(f, np.float32([10, 20, 30, 40])); np.save(f, np.float64([0.5]))",
        f.display().to_string()
    ));
    let s = repo("crates/fnabi/tests/mlir/structured.mlir");
    let (at, next, all) =
        (format!("--input=@{}", f.display()), format!("--input=+{}", f.display()), format!("--input=*{}", f.display()));
    let (ok, out, err) = fnabi(&["run", &s, "--function=add_into", &at, &next]);
    assert_eq!((ok, out.as_str()), (true, "4xf32=11 22 33 44\n"), "{err}");
    // `*` after `@`: the two arrays that follow (one too many for add_into).
    let (ok, _, err) = fnabi(&["run", &s, "--function=add_into", &at, &all]);
    assert!(!ok && err.contains("takes 2 positional arguments but 3 were given"), "{err}");
    // `+` past the last array.
    let (ok, _, err) = fnabi(&["run", &s, "--function=add_into", &at, &next, &next, &next]);
    assert!(!ok, "{err}");
    assert!(
        err.starts_with("fnabi: error: --input 3 (+")
            && err.ends_with("): no array is left in the file (it has 424 bytes)\n"),
        "{err}"
    );
    // A cut file: the npy error at its absolute byte offset.
    let cut = dir.join("cut.npy");
    std::fs::write(&cut, &std::fs::read(&f).unwrap()[..200]).unwrap();
    let (ok, _, err) = fnabi(&["run", &s, "--function=add_into", &format!("--input=*{}", cut.display())]);
    assert!(!ok && err.contains("at byte 152: npy: header declares 118 bytes but only 46 remain"), "{err}");
    let (ok, _, err) = fnabi(&["run", &s, "--function=add_into", "--input=&4xf32", "--input=&4xf32"]);
    assert!(!ok, "{err}");
    assert_eq!(
        err,
        "fnabi: error: --input 0 (&4xf32): output storage buffers (iree-run-module's `&` inputs) are not supported: fnabi allocates every result itself\n"
    );
}

#[test]
fn outputs_to_files_are_read_by_numpy() {
    let dir = tmpdir("out");
    let s = repo("crates/fnabi/tests/mlir/structured.mlir");
    let o = dir.join("o.npy");
    let r = dir.join("r.bin");
    // split_into(x) -> (2 x, the last half of x): two leaves, both to one
    // .npy file (write, then append), as iree-run-module writes them.
    let (ok, out, err) = fnabi(&[
        "run",
        &s,
        "--function=split_into",
        "--input=4xf32=1 2 3 4",
        &format!("--output=@{}", o.display()),
        &format!("--output=+{}", o.display()),
    ]);
    assert!(ok, "{err}");
    assert_eq!(out, "");
    let got = common::python(&format!(
        "import numpy as np; f = open({:?}, 'rb'); print(np.load(f), np.load(f))",
        o.display().to_string()
    ));
    assert_eq!(got, "[2. 4. 6. 8.] [3. 4.]\n", "the README's line");
    // `+@FILE` appends too.
    let (ok, _, err) = fnabi(&[
        "run",
        &s,
        "--function=split_into",
        "--input=4xf32=1 2 3 4",
        "--output=",
        &format!("--output=+@{}", o.display()),
    ]);
    assert!(ok, "{err}");
    let got = common::python(&format!(
        "import numpy as np; f = open({:?}, 'rb'); print(np.load(f), np.load(f), np.load(f))",
        o.display().to_string()
    ));
    assert_eq!(got, "[2. 4. 6. 8.] [3. 4.] [3. 4.]\n");
    // `-` prints a leaf, an empty spec skips it, other files get raw bytes.
    let (ok, out, err) = fnabi(&[
        "run",
        &s,
        "--function=split_into",
        "--input=4xf32=1 2 3 4",
        "--output=",
        &format!("--output=@{}", r.display()),
    ]);
    assert!(ok, "{err}");
    assert_eq!(out, "");
    assert_eq!(
        common::python(&format!(
            "import numpy as np\nprint(np.fromfile({:?}, np.float32).tolist())",
            r.display().to_string()
        )),
        "[3.0, 4.0]\n"
    );
    let (ok, out, _) = fnabi(&["run", &s, "-f", "split_into", "-i", "4xf32=1 2 3 4", "--output=-", "--output="]);
    assert!(ok);
    assert_eq!(out, "[0]: 4xf32=2 4 6 8\n");
    // The number of specs must be the number of leaves, as in IREE.
    let (ok, _, err) = fnabi(&["run", &s, "-f", "split_into", "-i", "4xf32=1 2 3 4", "--output=-"]);
    assert!(!ok);
    assert_eq!(err, "fnabi: error: 1 --output(s) given, but the result has 2 leaves\n");
    let (ok, _, err) = fnabi(&["run", &s, "-f", "scale_kw", "-i", "2", "-i", "2xf32=1", "--output=-", "--output=-"]);
    assert!(!ok);
    assert_eq!(err, "fnabi: error: 2 --output(s) given, but the result has 1 leaf\n");
    let (ok, _, err) = fnabi(&["run", &s, "-f", "split_into", "-i", "4xf32=1 2 3 4", "--output=xml"]);
    assert!(!ok && err.contains("--output \"xml\": expected text or json"), "{err}");
    for spec in ["@", "+", "+@"] {
        let (ok, _, err) =
            fnabi(&["run", &s, "-f", "scale_kw", "-i", "2", "-i", "2xf32=1", &format!("--output={spec}")]);
        assert!(!ok);
        assert_eq!(err, format!("fnabi: error: --output \"{spec}\": the file name is missing ({spec}FILE)\n"));
    }
    // A file that cannot be written names the leaf (the result itself when
    // there is one) and the file.
    let nowhere = dir.join("no-such-dir").join("x.npy");
    let spec = format!("--output=@{}", nowhere.display());
    let (ok, _, err) = fnabi(&["run", &s, "-f", "scale_kw", "-i", "2", "-i", "2xf32=1", &spec]);
    assert!(
        !ok && err.starts_with(&format!("fnabi: error: cannot write the result to {}: ", nowhere.display())),
        "{err}"
    );
    let (ok, _, err) = fnabi(&["run", &s, "-f", "split_into", "-i", "4xf32=1 2 3 4", "--output=", &spec]);
    assert!(
        !ok && err.starts_with(&format!("fnabi: error: cannot write result [1] to {}: ", nowhere.display())),
        "{err}"
    );
}

#[test]
fn long_results_are_elided_but_files_get_everything() {
    let dir = tmpdir("elide");
    let s = repo("crates/fnabi/tests/mlir/structured.mlir");
    // scale_kw(x, scale) binds positionally in key order: scale, then x.
    let (ok, out, err) = fnabi(&["run", &s, "-f", "scale_kw", "-i", "2", "-i", "2000xf32=1"]);
    assert!(ok, "{err}");
    assert_eq!(out, format!("2000xf32={}2...\n", "2 ".repeat(1023)));
    for flag in ["--output-max-element-count=3", "--print-max-element-count=3", "--output_max_element_count=3"] {
        let (ok, out, _) = fnabi(&["run", &s, "-f", "scale_kw", "-i", "2", "-i", "2000xf32=1", flag]);
        assert!(ok);
        assert_eq!(out, "2000xf32=2 2 2...\n", "{flag}");
    }
    let f = dir.join("all.npy");
    let (ok, out, _) =
        fnabi(&["run", &s, "-f", "scale_kw", "-i", "2", "-i", "2000xf32=1", &format!("--output=@{}", f.display())]);
    assert!(ok);
    assert_eq!(out, "");
    let got = common::python(&format!(
        "import numpy as np\na = np.load({:?})\nprint(a.shape, a.dtype, a.sum())",
        f.display().to_string()
    ));
    assert_eq!(got, "(2000,) float32 4000.0\n");
}

#[test]
fn a_closed_pipe_ends_quietly_with_status_0() {
    let s = repo("crates/fnabi/tests/mlir/structured.mlir");
    // About 2 MB of text: far more than a pipe holds.
    let mut child = Command::new(env!("CARGO_BIN_EXE_fnabi"))
        .args(["run", &s, "-f", "scale_kw", "-i", "2", "-i", "1000000xf32=1", "--output-max-element-count=1000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 16];
    child.stdout.as_mut().unwrap().read_exact(&mut head).unwrap();
    assert_eq!(&head, b"1000000xf32=2 2 ");
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    // The same for the other commands' output (here: one line per input line).
    let mut child = Command::new(env!("CARGO_BIN_EXE_fnabi"))
        .args(["demangle", "--raw", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        for _ in 0..200_000 {
            if std::io::Write::write_all(&mut stdin, b"I6!S3!t6R6!B3!d4\n").is_err() {
                break;
            }
        }
    });
    let mut line = [0u8; 10];
    child.stdout.as_mut().unwrap().read_exact(&mut line).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[test]
fn json_inputs_typed_by_the_signature() {
    let dir = tmpdir("json");
    let s = repo("crates/fnabi/tests/mlir/structured.mlir");
    // affine(x, {"w": w, "b": b}) = x @ w + b, with w from a .npy file that
    // numpy writes, and the expected result computed by numpy.
    let w = dir.join("w.npy");
    common::python(&format!(
        "import numpy as np\nnp.save({:?}, np.arange(12, dtype=np.float32).reshape(4, 3) / 4)",
        w.display().to_string()
    ));
    let inputs = dir.join("in.json");
    std::fs::write(
        &inputs,
        format!(r#"[[[1, 2, 3, 4], [-1, 0.5, 0, 2]], {{"w": "@{}", "b": [0.5, 0, -1]}}]"#, w.display()),
    )
    .unwrap();
    let (ok, out, err) = fnabi(&["run", &s, "-f", "affine", "--inputs", inputs.to_str().unwrap()]);
    assert!(ok, "{err}");
    let want = common::python(&format!(
        "import numpy as np\nx = np.array([[1, 2, 3, 4], [-1, 0.5, 0, 2]], np.float32)\n\
         y = x @ np.load({:?}) + np.array([0.5, 0, -1], np.float32)\nprint(*y.ravel().tolist())",
        w.display().to_string()
    ));
    assert_eq!(out, "2x3xf32=[15.5 17.5 19][5.375 5.25 4.625]\n", "the README's line");
    let Ok(fnabi::Value::Array(got)) = fnabi::text::parse_value(out.trim()) else { panic!("{out}") };
    assert_eq!(got.shape(), [2, 3]);
    let want: Vec<f32> = want.split_whitespace().map(|t| t.parse().unwrap()).collect();
    for (g, w) in got.to_vec::<f32>().unwrap().iter().zip(&want) {
        assert!((g - w).abs() <= 1e-5 * w.abs().max(1.0), "{g} vs {w}");
    }
    // Positional and keyword arguments together: scale_kw's dict root takes
    // `scale` first by position, `x` by keyword, as a plain list.
    let (ok, out, err) = common::fnabi(
        ["run", &s, "-f", "scale_kw", "--inputs", "-"],
        r#"{"$args": [2.5], "$kwargs": {"x": [1, 2, 3]}}"#,
    );
    assert!(ok, "{err}");
    assert_eq!(out, "3xf32=2.5 5 7.5\n");
    // A bare number for a 0-d array argument, from --input and from JSON.
    let r = repo("crates/fnabi/tests/mlir/memref_abi.mlir");
    assert_eq!(fnabi(&["run", &r, "-f", "rank0_double", "--input=2.5"]).1, "f64=5\n");
    assert_eq!(common::fnabi(["run", &r, "-f", "rank0_double", "--inputs=-"], "[-0.25]").1, "f64=-0.5\n");
    // Clear errors: a ragged list, an element out of range, a missing file.
    let cases = [
        (
            r#"[[[1, 2, 3, 4], [1]], {"w": [[0,0,0],[0,0,0],[0,0,0],[0,0,0]], "b": [0, 0, 0]}]"#,
            "fnabi: error: argument [0][1]: ragged list: 1 items where [0][0] has 4\n",
        ),
        (
            r#"[[[1, 2, 3, 1e39]], {"w": [[0,0,0],[0,0,0],[0,0,0],[0,0,0]], "b": [0, 0, 0]}]"#,
            "fnabi: error: argument [0][0][3]: 1e39 is out of range for f32\n",
        ),
        (
            r#"[[[1, 2, 3, 4]], {"w": "@/nonexistent/w.npy", "b": [0, 0, 0]}]"#,
            "fnabi: error: -: at [1][\"w\"]: /nonexistent/w.npy: No such file or directory (os error 2)\n",
        ),
        (r#"{"$args": 1}"#, "fnabi: error: -: $args takes a list, got int\n"),
    ];
    for (json, want) in cases {
        let (ok, out, err) = common::fnabi(["run", &s, "-f", "affine", "--inputs", "-"], json);
        assert!(!ok && out.is_empty(), "{json}");
        assert_eq!(err, want, "{json}");
    }
}

#[test]
fn text_values_read_back() {
    let s = repo("crates/fnabi/tests/mlir/structured.mlir");
    // f32 max prints as the shortest decimal that reads back to it; 1e999 is
    // an error naming the element, not infinity.
    let (ok, out, _) = fnabi(&["run", &s, "-f", "scale_kw", "-i", "1", "-i", "2xf32=3.4028235e38 0.1"]);
    assert!(ok);
    assert_eq!(out, "2xf32=3.4028235E+38 0.1\n");
    let (ok, _, err) = fnabi(&["run", &s, "-f", "scale_kw", "-i", "1", "-i", "2xf32=1 1e999"]);
    assert!(!ok);
    assert_eq!(err, "fnabi: error: --input 1 \"2xf32=1 1e999\" at byte 8: `1e999` is out of range for f32\n");
}

/// A flag of the other backend is refused, not ignored: `--device` for
/// code that runs on the MLIR backend (`--device=cuda` ran on the CPU and
/// said nothing), `--pipeline`/`--signature` for an IREE module.
#[test]
fn flags_of_the_other_backend_are_refused() {
    let m = repo("crates/fnabi/tests/mlir/memref_abi.mlir");
    let (ok, _, err) = fnabi(&["run", &m, "-f", "sum_f32", "-i", "4xf32=1", "--device=cuda"]);
    assert!(!ok);
    assert_eq!(
        err,
        "fnabi: error: --device applies to IREE modules (.vmfb, or MLIR source with --backend iree); memref_abi.mlir runs on the MLIR backend, on this CPU\n"
            .replace("memref_abi.mlir", &m)
    );
    let (ok, out, err) = fnabi(&["run", &m, "-f", "sum_f32", "-i", "4xf32=1"]);
    assert!(ok, "{err}");
    assert_eq!(out, "4\n");
    #[cfg(feature = "iree")]
    {
        let vmfb = repo("crates/fnabi/tests/fixtures/iree/add.vmfb");
        for extra in [["--pipeline", "builtin.module()"], ["--signature", "(f32) -> f32"]] {
            let (ok, _, err) = fnabi(&["run", &vmfb, "-f", "add_one", "-i", "4xf32=1", extra[0], extra[1]]);
            assert!(!ok);
            assert!(err.contains("apply to MLIR source and libraries;") && err.contains("is an IREE module"), "{err}");
        }
        let (ok, out, err) = fnabi(&["run", &vmfb, "-f", "add_one", "-i", "4xf32=1", "--device", "local-task"]);
        assert!(ok, "{err}");
        assert_eq!(out, "4xf32=2 2 2 2\n");
    }
}
