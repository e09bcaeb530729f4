//! JSON argument files (`--inputs`): `$args`/`$kwargs`, lists, objects and
//! `"@FILE.npy"` references anywhere, read against files held in memory.
//! Never a panic; an error is one line naming the file; what reads has no
//! `"@…"` string left but the `"@@…"` escapes (unescaped once), and every
//! reference read is the array its file holds.
//!
//! Also the typed fast path (`typed_arguments_from_json`, for parameters
//! chosen by the text's length): when it reads the text, what it gives is
//! exactly what the general path and coercion give.
//!
//! The input: the JSON text, then a NUL, then the files `0`, `1`, …
//! separated by `\n--file--\n`.
#![no_main]
use fnabi::coerce::{InputParam, InputType, coerce_arguments};
use fnabi::inputs::{arguments_from_json, typed_arguments_from_json};
use fnabi::{DType, Value};
use libfuzzer_sys::fuzz_target;

mod files;

/// Every string in `v` (arrays are leaves).
fn strings<'v>(v: &'v Value<'_>, out: &mut Vec<&'v str>) {
    match v {
        Value::Str(s) => out.push(s),
        Value::List(items) | Value::Tuple(items) => items.iter().for_each(|x| strings(x, out)),
        Value::Dict(d) => d.iter().for_each(|(_, x)| strings(x, out)),
        _ => {}
    }
}

/// Parameter lists for the typed path: arrays of several element types,
/// ranks fixed and not, by position and by name (`x`, `y`, `z`).
fn params(choice: usize) -> Vec<InputParam> {
    let array = |name: &str, dtype, rank: Option<usize>| InputParam {
        name: Some(name.into()),
        ty: InputType::Array { dtype, dims: rank.map(|r| vec![None; r]) },
    };
    match choice % 4 {
        0 => vec![array("x", DType::F32, None)],
        1 => vec![array("x", DType::I8, Some(2)), array("y", DType::Bool, Some(1))],
        2 => vec![
            array("x", DType::F64, Some(1)),
            InputParam { name: Some("y".into()), ty: InputType::Any },
            array("z", DType::U64, None),
        ],
        _ => vec![array("x", DType::C64, Some(1)), array("y", DType::F8E4M3FN, Some(0)), array("z", DType::F16, None)],
    }
}

fuzz_target!(|data: &[u8]| {
    let (json, files) = files::text_and_files(data);
    let params = params(json.len());
    if let Some(typed) = typed_arguments_from_json(json, &files, &params) {
        let general = arguments_from_json(json, "args.json", &files).expect("the general path reads it too");
        let general = coerce_arguments(general.0, general.1, &params).expect("and types it");
        assert_eq!(typed, general);
    }
    match arguments_from_json(json, "args.json", &files) {
        Ok((args, kwargs)) => {
            // The same text without its files: every string it has is
            // either left as it is, or (`@@…`) unescaped once.
            let plain = fnabi::json::from_slice(json).expect("it parsed with files");
            let mut before = Vec::new();
            strings(&plain, &mut before);
            let mut after = Vec::new();
            for v in args.iter().chain(kwargs.iter().map(|(_, v)| v)) {
                strings(v, &mut after);
            }
            let mut expected: Vec<String> = before
                .iter()
                .filter(|s| !s.starts_with('@') || s.starts_with("@@"))
                .map(|s| s.strip_prefix('@').filter(|_| s.starts_with("@@")).unwrap_or(s).to_owned())
                .collect();
            // `{"$kwargs": …, "$args": …}`: positional arguments come first.
            after.sort_unstable();
            expected.sort_unstable();
            assert_eq!(after, expected);
            for v in args.iter().chain(kwargs.iter().map(|(_, v)| v)) {
                if let Value::Array(a) = v {
                    let n: usize = a.shape().iter().product();
                    assert_eq!(a.nbytes(), n * a.dtype().size());
                }
            }
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.starts_with("args.json: "), "{msg}");
            // One line, unless it echoes a string of the input (a file name)
            // that has a line break itself.
            let echoes_break = fnabi::json::from_slice(json).is_ok_and(|v| {
                let mut all = Vec::new();
                strings(&v, &mut all);
                all.iter().any(|s| s.contains('\n'))
            });
            assert!(!msg.contains('\n') || echoes_break, "not one line: {msg:?}");
        }
    }
});
