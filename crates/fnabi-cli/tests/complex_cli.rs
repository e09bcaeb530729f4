//! `fnabi run` with complex<f32>/complex<f64> tensors (issue 14): text
//! inputs (`RE±IMj`), `.npy` inputs written by numpy (`fuzz/seeds/npy/`,
//! complex64 little-endian and complex128 big-endian), text, JSON and
//! `.npy` outputs, and the typed error of a real array for a complex one.

mod common;

use std::path::{Path, PathBuf};

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(p)
}

fn fnabi(args: &[&str]) -> (bool, String, String) {
    common::fnabi(args, "")
}

fn fixture() -> String {
    repo("crates/fnabi/tests/mlir/complex.mlir").to_str().unwrap().to_owned()
}

#[test]
fn text_and_npy_inputs() {
    // c64.npy (numpy): [1+2j, -0.5+0.25j, 3-1j]; times [0.5+0.5j, 2, -1j]
    // is, by hand (and numpy), [-0.5+1.5j, -1+0.5j, -1-3j].
    let c64 = format!("@{}", repo("fuzz/seeds/npy/c64.npy").display());
    let (ok, out, err) = fnabi(&["run", &fixture(), "-f", "cmul", "-i", &c64, "-i", "3xcf64=0.5+0.5j 2+0j 0-1j"]);
    assert!(ok, "{err}");
    assert_eq!(out, "3xcf64=-0.5+1.5j -1+0.5j -1-3j\n");
    // IREE's hex form of an element reads too: 0000803F00000040 is 1+2j.
    let (ok, out, err) =
        fnabi(&["run", &fixture(), "-f", "cmul", "-i", "1xcf64=0000803F00000040", "-i", "1xcf64=0+1j"]);
    assert!(ok, "{err}");
    assert_eq!(out, "1xcf64=-2+1j\n");
}

#[test]
fn big_endian_npy_through_complex128_and_out_as_json_and_npy() {
    // c128_big.npy (numpy, '>c16'): [[1+2j, -0-infj], [nan+0.1j, 1e-300-5e300j]].
    let big = format!("@{}", repo("fuzz/seeds/npy/c128_big.npy").display());
    let (ok, out, err) = fnabi(&["run", &fixture(), "-f", "pass128", "-i", &big]);
    assert!(ok, "{err}");
    assert_eq!(out, "2x2xcf128=[1+2j -0-INFj][NAN+0.1j 1E-300-5E+300j]\n");
    let (ok, out, err) = fnabi(&["run", &fixture(), "-f", "pass128", "-i", &big, "--output", "json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"dtype": "c128", "shape": [2, 2],
            "data": [[1.0, 2.0], [-0.0, "-inf"], ["nan", 0.1], [1e-300, -5e300]]})
    );
    let scratch = common::Scratch::new("complex-cli");
    let dir = scratch.join("npy");
    let (ok, _, err) = fnabi(&["run", &fixture(), "-f", "pass128", "-i", &big, "--npy-dir", dir.to_str().unwrap()]);
    assert!(ok, "{err}");
    let bytes = std::fs::read(dir.join("result.npy")).unwrap();
    assert!(bytes[10..].starts_with(b"{'descr': '<c16', 'fortran_order': False, 'shape': (2, 2), }"));
    let back = fnabi::npy::read(&bytes).unwrap();
    let want = fnabi::npy::read_file(repo("fuzz/seeds/npy/c128_big.npy")).unwrap();
    assert_eq!(back.to_vec::<fnabi::Complex<f64>>().unwrap()[3], want.to_vec::<fnabi::Complex<f64>>().unwrap()[3]);
    assert_eq!(fnabi::text::format_array(&back), fnabi::text::format_array(&want));
}

#[test]
fn a_real_array_for_a_complex_one_is_a_typed_error() {
    let (ok, _, err) = fnabi(&["run", &fixture(), "-f", "cmul", "-i", "2xf32=1 2", "-i", "2xcf64=1+1j 2+2j"]);
    assert!(!ok);
    assert_eq!(err, "fnabi: error: argument [0] (memref<?xcomplex<f32>>): element type: expected c64, got f32\n");
    let (ok, _, err) = fnabi(&["run", &fixture(), "-f", "cmul", "-i", "2xcf64=1+2j 3", "-i", "2xcf64=1+1j 2+2j"]);
    assert!(!ok);
    assert!(err.contains("`3` is not a complex number"), "{err}");
}

#[test]
#[cfg(feature = "iree")]
fn the_same_source_through_iree() {
    // IREE's runtime holds complex<f32>/complex<f64> as COMPLEX_FLOAT_64/128
    // buffer views: the same results as the MLIR backend, checked by hand:
    // |3+4j| = 5, |1+1j| = sqrt(2) as f32; (1+2j)(3-1j) + 1 = 6+5j.
    let c64 = format!("@{}", repo("fuzz/seeds/npy/c64.npy").display());
    let big = format!("@{}", repo("fuzz/seeds/npy/c128_big.npy").display());
    let cases: [(&[&str], &str); 4] = [
        (&["-f", "cmul", "-i", &c64, "-i", "3xcf64=0.5+0.5j 2+0j 0-1j"], "3xcf64=-0.5+1.5j -1+0.5j -1-3j\n"),
        (
            &["-f", "abs_conj", "-i", "3xcf64=3+4j -0-0j 1+1j"],
            "[0]: 3xf32=5 0 1.4142135\n[1]: 3xcf64=3-4j -0+0j 1-1j\n",
        ),
        (&["-f", "pass128", "-i", &big], "2x2xcf128=[1+2j -0-INFj][NAN+0.1j 1E-300-5E+300j]\n"),
        (&["-f", "fma0", "-i", "cf128=1+2j", "-i", "cf128=3-1j"], "cf128=6+5j\n"),
    ];
    for (args, want) in cases {
        for backend in ["mlir", "iree"] {
            let mut all = vec!["run", "--backend", backend];
            let f = fixture();
            all.push(&f);
            all.extend_from_slice(args);
            let (ok, out, err) = fnabi(&all);
            assert!(ok, "{backend} {args:?}: {err}");
            assert_eq!(out, want, "{backend} {args:?}");
        }
    }
}

#[test]
fn json_inputs_typed_and_plain() {
    // The typed form carries [re, im] pairs; a plain list of reals types as
    // x+0j; (1+0j)(0+1j) = 1j, (2.5+0j)(1-1j) = 2.5-2.5j.
    let json = r#"[[1, 2.5], {"dtype": "c64", "shape": [2], "data": [[0, 1], [1, -1]]}]"#;
    let (ok, out, err) = common::fnabi(["run", &fixture(), "-f", "cmul", "--inputs", "-"], json);
    assert!(ok, "{err}");
    assert_eq!(out, "2xcf64=0+1j 2.5-2.5j\n");
    // Pairs in a plain list would change the rank: refused.
    let (ok, _, err) = common::fnabi(["run", &fixture(), "-f", "cmul", "--inputs", "-"], "[[1, 2], [[0, 1], [1, 0]]]");
    assert!(!ok);
    assert!(err.contains("nested deeper than the array's rank"), "{err}");
}
