//! Plain host values (what JSON files and the Python package give) typed
//! by a function's parameters (`fnabi::coerce::coerce_arguments`): never a
//! panic; an array made from plain values has the parameter's dtype and
//! rank; everything else passes unchanged.
//!
//! The input: a first byte below 0x80 picks one of the real signatures
//! below, and the rest is the arguments as JSON (`$args`/`$kwargs`, a list,
//! an object); from 0x80 on, the rest is a raw signature (mangled or human
//! form, whose buffers are the parameters), a NUL, then the JSON.
#![no_main]
use fnabi::coerce::{InputParam, InputType, coerce_arguments};
use fnabi::inputs::{MemoryFiles, arguments_from_json};
use fnabi::{DType, Dim, RawSignature, RawType, Value};
use libfuzzer_sys::fuzz_target;

fn array(dtype: DType, dims: &[Option<usize>]) -> InputType {
    InputType::Array { dtype, dims: Some(dims.to_vec()) }
}

fn positional(types: Vec<InputType>) -> Vec<InputParam> {
    types.into_iter().map(|ty| InputParam { name: None, ty }).collect()
}

/// Parameters of functions of the repo, as their backends type them.
fn real(i: u8) -> Vec<InputParam> {
    let f32 = DType::F32;
    match i % 7 {
        // examples/mlp.mlir `mlp`: [x, {b1, b2, w1, w2}] (its `sip` signature).
        0 => positional(vec![
            array(f32, &[None, Some(4)]),
            InputType::Dict(vec![
                ("b1".into(), array(f32, &[Some(8)])),
                ("b2".into(), array(f32, &[Some(3)])),
                ("w1".into(), array(f32, &[Some(4), Some(8)])),
                ("w2".into(), array(f32, &[Some(8), Some(3)])),
            ]),
        ]),
        // fixtures/iree/nested.vmfb `nested_deep`: ({a: [f32[4], f32[4]], b: {c: f32[4]}}, alpha: f32).
        1 => vec![
            InputParam {
                name: None,
                ty: InputType::Dict(vec![
                    ("a".into(), InputType::Sequence(vec![array(f32, &[Some(4)]), array(f32, &[Some(4)])])),
                    ("b".into(), InputType::Dict(vec![("c".into(), array(f32, &[Some(4)]))])),
                ]),
            },
            InputParam { name: Some("alpha".into()), ty: InputType::Any },
        ],
        // fixtures/iree/dynamic.vmfb `dyn_add`.
        2 => positional(vec![array(f32, &[None, Some(4)]), array(f32, &[None, Some(4)])]),
        // tests/mlir `not_mask(memref<?xi1>)`.
        3 => positional(vec![array(DType::BOOL, &[None])]),
        // tests/mlir `reverse(tensor<2xi16>, tensor<?xui8>, tensor<3xui32>, tensor<ui64>)`.
        4 => positional(vec![
            array(DType::I16, &[Some(2)]),
            array(DType::U8, &[None]),
            array(DType::U32, &[Some(3)]),
            array(DType::U64, &[]),
        ]),
        // tests/mlir `above(tensor<?xf16>, f16)`, `neg_bf16` as a 0-d array.
        5 => positional(vec![array(DType::F16, &[None]), InputType::Any, array(DType::BF16, &[])]),
        // The 8-bit floats of the coerce docs, by keyword; a rank left open.
        _ => vec![
            InputParam { name: Some("x".into()), ty: array(DType::F8E4M3FN, &[Some(2)]) },
            InputParam { name: Some("y".into()), ty: InputType::Array { dtype: DType::F8E5M2FNUZ, dims: None } },
            InputParam { name: Some("z".into()), ty: array(DType::I64, &[None, None, None]) },
        ],
    }
}

/// The parameters a raw signature's inputs give (as the MLIR backend types them).
fn from_raw(sig: &RawSignature) -> Vec<InputParam> {
    positional(
        sig.inputs()
            .iter()
            .map(|t| match t {
                RawType::Buffer(b) => InputType::Array {
                    dtype: DType::Scalar(b.dtype()),
                    dims: Some(
                        b.dims()
                            .iter()
                            .map(|d| if let Dim::Static(n) = d { Some(*n as usize) } else { None })
                            .collect(),
                    ),
                },
                _ => InputType::Any,
            })
            .collect(),
    )
}

/// Checks `after` (what `before` coerced to) against `ty`.
fn check(ty: &InputType, before: &Value<'_>, after: &Value<'_>) {
    let same = |a: &Value<'_>, b: &Value<'_>| fnabi::json::to_string(a) == fnabi::json::to_string(b);
    match (ty, before, after) {
        (_, Value::Array(_), _) => assert!(same(before, after), "an array passes unchanged"),
        (InputType::Array { dtype, dims }, _, Value::Array(a)) => {
            assert_eq!(a.dtype(), *dtype);
            if let Some(d) = dims {
                assert_eq!(a.shape().len(), d.len(), "{:?}", a.shape());
            }
            assert!(!matches!(before, Value::Str(_) | Value::None | Value::Dict(_) | Value::Bytes(_)));
        }
        (InputType::Sequence(items), Value::List(b) | Value::Tuple(b), Value::List(a) | Value::Tuple(a)) => {
            assert_eq!(std::mem::discriminant(before), std::mem::discriminant(after));
            assert_eq!(a.len(), b.len());
            for (i, (x, y)) in b.iter().zip(a).enumerate() {
                check(items.get(i).unwrap_or(&InputType::Any), x, y);
            }
        }
        (InputType::Dict(entries), Value::Dict(b), Value::Dict(a)) => {
            assert_eq!(a.len(), b.len());
            for ((kb, x), (ka, y)) in b.iter().zip(a.iter()) {
                assert_eq!(kb, ka);
                let t = entries.iter().find(|(k, _)| k == kb).map_or(&InputType::Any, |(_, t)| t);
                check(t, x, y);
            }
        }
        _ => assert!(same(before, after), "{ty:?}: {before:?} became {after:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    fnabi::limits::set_max_bytes(fnabi::limits::ByteLimit::Array, Some(1 << 16));
    let Some((&mode, rest)) = data.split_first() else { return };
    let (params, json) = if mode < 0x80 {
        (real(mode), rest)
    } else {
        let i = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        let Ok(text) = std::str::from_utf8(&rest[..i]) else { return };
        let Ok(sig) = text.parse::<RawSignature>().or_else(|_| RawSignature::parse_human(text)) else { return };
        (from_raw(&sig), rest.get(i + 1..).unwrap_or_default())
    };
    let Ok((args, kwargs)) = arguments_from_json(json, "args.json", &MemoryFiles::new()) else { return };
    match coerce_arguments(args.clone(), kwargs.clone(), &params) {
        Ok((a, k)) => {
            assert_eq!(a.len(), args.len());
            for (i, (before, after)) in args.iter().zip(&a).enumerate() {
                check(params.get(i).map_or(&InputType::Any, |p| &p.ty), before, after);
            }
            assert_eq!(k.len(), kwargs.len());
            for ((kb, before), (ka, after)) in kwargs.iter().zip(k.iter()) {
                assert_eq!(kb, ka);
                let p = params.iter().find(|p| p.name.as_ref() == Some(kb));
                check(p.map_or(&InputType::Any, |p| &p.ty), before, after);
            }
        }
        Err(e) => {
            // A typed call error at the argument's index path (or a request
            // over the byte limit), in one line.
            let msg = e.to_string();
            match e.kind() {
                fnabi::ErrorKind::Call(c) => {
                    assert_eq!(c.side, fnabi::CallSide::Argument, "{msg}");
                    assert!(msg.starts_with("argument "), "{msg}");
                }
                fnabi::ErrorKind::Exhausted(_) => {}
                other => panic!("not a call error: {other:?}"),
            }
            assert!(!msg.contains('\n'), "{msg:?}");
        }
    }
});
