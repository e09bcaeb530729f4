//! `iree.abi` records ⇄ SIP signatures, through the shared [`Structure`]:
//! one structured function description, written either way.
//!
//! - Leaves are numbered depth-first in record order on both sides, so raw
//!   index `i` of the SIP signature is leaf `i` of the records.
//! - Inputs: a record list is a sequence root (positional arguments). When
//!   every argument is `named` and the names are in ascending byte order,
//!   the SIP root is a dict instead: a SIP dict root binds keyword
//!   arguments, and positional ones in key order — exactly how named
//!   arguments bind. Names that are not sorted cannot keep both bindings in
//!   SIP, so those become a sequence root (positional only).
//! - Results: one result record is the SIP root itself (`_0`, or the
//!   structure of a single `slist`/`stuple`/`sdict`, which IREE returns as
//!   the function's flat results); several are a sequence root. Back from
//!   SIP, a structured root is one `slist`/`sdict` record.
//! - Leaf types travel in a [`RawSignature`]: [`raw_type_record`] maps a raw
//!   type to its record, [`record_raw_type`] back.

use super::{FunctionReflection, NdArrayType, Primitive, TypeRecord, records_to_structure, structure_to_records};
use crate::raw::{BufferType, Dim, RawSignature, RawType};
use crate::scalar::ScalarType;
use crate::sip::SipSignature;
use crate::structure::{Structure, StructureError};

/// The record of a raw ABI type: a buffer is an `ndarray` of its element
/// type and dims (`null` for dynamic ones), a scalar a primitive (unsigned
/// integers are signless `iN`), a ref object or unrecognized item `unknown`.
pub fn raw_type_record(t: &RawType) -> TypeRecord {
    let prim = |s: ScalarType| match s {
        ScalarType::F32 => Primitive::Float(32),
        ScalarType::F16 => Primitive::Float(16),
        ScalarType::F64 => Primitive::Float(64),
        ScalarType::BF16 => Primitive::BF16,
        s => Primitive::Int(8 * s.size() as u32),
    };
    match t {
        RawType::Buffer(b) => TypeRecord::NdArray(NdArrayType::new(
            TypeRecord::Primitive(prim(b.dtype())),
            Some(b.dims().iter().map(|d| d.as_static().map(u64::from)).collect()),
        )),
        RawType::Scalar(s) => TypeRecord::Primitive(prim(*s)),
        RawType::RefObject | RawType::Unrecognized => TypeRecord::Unknown,
    }
}

/// The raw ABI type of a leaf record: an `ndarray` of a known rank and a
/// primitive element is a buffer (signless integers read as signed), a
/// primitive a scalar, anything else unrecognized.
pub fn record_raw_type(r: &TypeRecord) -> RawType {
    let scalar = |p: &Primitive| -> Option<ScalarType> {
        Some(match p {
            Primitive::Float(32) => ScalarType::F32,
            Primitive::Float(16) => ScalarType::F16,
            Primitive::Float(64) => ScalarType::F64,
            Primitive::BF16 => ScalarType::BF16,
            Primitive::Int(8) => ScalarType::I8,
            Primitive::Int(16) => ScalarType::I16,
            Primitive::Int(32) => ScalarType::I32,
            Primitive::Int(64) => ScalarType::I64,
            _ => return None,
        })
    };
    let dim = |d: &Option<u64>| match d {
        None => Some(Dim::Dynamic),
        Some(n) => u32::try_from(*n).ok().filter(|n| *n <= i32::MAX as u32).map(Dim::Static),
    };
    match r {
        TypeRecord::Primitive(p) => scalar(p).map_or(RawType::Unrecognized, RawType::Scalar),
        TypeRecord::NdArray(a) => match (&*a.element, &a.dims) {
            (TypeRecord::Primitive(p), Some(dims)) => {
                let dims: Option<Vec<Dim>> = dims.iter().map(dim).collect();
                match (scalar(p), dims) {
                    (Some(s), Some(dims)) => BufferType::new(s, dims).map_or(RawType::Unrecognized, RawType::Buffer),
                    _ => RawType::Unrecognized,
                }
            }
            _ => RawType::Unrecognized,
        },
        _ => RawType::Unrecognized,
    }
}

/// True when every argument is `named` and the names ascend by bytes.
fn sorted_named(a: &[TypeRecord]) -> Option<Vec<&str>> {
    let names: Option<Vec<&str>> =
        a.iter().map(|r| if let TypeRecord::Named(k, _) = r { Some(&**k) } else { None }).collect();
    names.filter(|n| !n.is_empty() && n.windows(2).all(|w| w[0] < w[1]))
}

impl FunctionReflection {
    /// The SIP signature of the same structure (see the module docs).
    ///
    /// ```
    /// use fnabi_abi::reflection::FunctionReflection;
    /// let f = FunctionReflection::parse(
    ///     r#"{"a": [["sdict", ["y", "f32"], ["x", "f32"]]], "r": [["stuple", "f32", "f32"]]}"#,
    /// ).unwrap();
    /// assert_eq!(f.to_sip().unwrap().to_string(), r#"([{"x": $1, "y": $0}]) -> [$0, $1]"#);
    /// ```
    pub fn to_sip(&self) -> Result<SipSignature, StructureError> {
        let inputs = if self.a.is_empty() {
            None
        } else {
            let s = records_to_structure(&self.a)?.structure;
            match (sorted_named(&self.a), s) {
                (Some(names), Structure::Sequence(children)) if children.len() == names.len() => Some(Structure::Dict(
                    names.into_iter().map(Into::into).zip(children.into_iter().map(|(_, c)| c)).collect(),
                )),
                (_, s) => Some(s),
            }
        };
        let results = match self.r.len() {
            0 => None,
            1 => match records_to_structure(&self.r)?.structure {
                Structure::Sequence(mut c) if c.len() == 1 => c.pop().map(|(_, s)| s),
                s => Some(s),
            },
            _ => Some(records_to_structure(&self.r)?.structure),
        };
        SipSignature::new(inputs, results)
    }

    /// The flat raw signature of the leaves, in leaf order (see
    /// [`record_raw_type`]): with [`to_sip`](Self::to_sip), the whole
    /// function described in the raw and SIP ABIs.
    pub fn to_raw(&self) -> Result<RawSignature, StructureError> {
        let leaves = |rs: &[TypeRecord]| -> Result<Vec<RawType>, StructureError> {
            Ok(records_to_structure(rs)?.leaves.into_iter().map(record_raw_type).collect())
        };
        Ok(RawSignature::new(leaves(&self.a)?, leaves(&self.r)?))
    }

    /// The records of a SIP signature whose leaf types come from `raw`
    /// (raw input `i` types the leaf `$i`, likewise for results).
    ///
    /// Records describe the same tree (keys, nesting, the type at every
    /// index path), but number their leaves IREE's way, depth-first with
    /// dict keys in order: a SIP signature that assigns its raw indices in
    /// another order (`{"a": $1, "b": $0}`) comes back renumbered, because a
    /// record list cannot express a permutation of its slots.
    ///
    /// ```
    /// use fnabi_abi::reflection::FunctionReflection;
    /// use fnabi_abi::{RawSignature, SipSignature};
    /// let sip = SipSignature::parse("I21!D17!K6!scale_1K2!x_0R3!_0").unwrap();
    /// let raw = RawSignature::parse_human("(Buffer<float32[?]>, float32) -> (Buffer<float32[?]>)").unwrap();
    /// let f = FunctionReflection::from_sip(&sip, &raw).unwrap();
    /// assert_eq!(
    ///     f.to_json(),
    ///     r#"{"a": [["named", "scale", "f32"], ["named", "x", ["ndarray", "f32", 1, null]]], "r": [["ndarray", "f32", 1, null]], "v": 1}"#
    /// );
    /// ```
    pub fn from_sip(sip: &SipSignature, raw: &RawSignature) -> Result<FunctionReflection, StructureError> {
        fn leaf(side: &[RawType]) -> impl FnMut(usize) -> Option<TypeRecord> + '_ {
            move |i| side.get(i).map(raw_type_record)
        }
        // A dict input root is a list of named arguments.
        let a = match sip.inputs() {
            None => Vec::new(),
            Some(s) => structure_to_records(s, leaf(raw.inputs()))?,
        };
        let r = match sip.results() {
            None => Vec::new(),
            Some(s @ Structure::Leaf(_)) => structure_to_records(s, leaf(raw.results()))?,
            // A structured result root is one `slist`/`sdict` record (IREE
            // returns its slots as the flat results; the host gets the list
            // or dict the SIP root describes).
            Some(s) => structure_to_records(&Structure::Sequence(vec![(0, s.clone())]), leaf(raw.results()))?,
        };
        Ok(FunctionReflection { a, r, v: Some(1) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_records_round_trip() {
        let raw = RawSignature::parse_human(
            "(Buffer<float32[?x4]>, Buffer<bfloat16[]>, sint8, float64, Buffer<sint64[2x3]>) -> (RefObject<?>)",
        )
        .unwrap();
        let recs: Vec<String> = raw.inputs().iter().map(|t| raw_type_record(t).to_json()).collect();
        assert_eq!(
            recs,
            [
                r#"["ndarray", "f32", 2, null, 4]"#,
                r#"["ndarray", "bf16", 0]"#,
                r#""i8""#,
                r#""f64""#,
                r#"["ndarray", "i64", 2, 2, 3]"#
            ]
        );
        for t in raw.inputs() {
            assert_eq!(record_raw_type(&raw_type_record(t)), *t);
        }
        assert_eq!(raw_type_record(&raw.results()[0]), TypeRecord::Unknown);
        assert_eq!(record_raw_type(&TypeRecord::Unknown), RawType::Unrecognized);
        // Unsigned types are signless in records and read back as signed.
        assert_eq!(
            record_raw_type(&raw_type_record(&RawType::Scalar(ScalarType::U16))),
            RawType::Scalar(ScalarType::I16)
        );
    }

    #[test]
    fn fixture_records_to_sip_and_back() {
        // nested_deep from the IREE fixtures.
        let json = r#"{"a": [["sdict", ["a", ["slist", ["ndarray", "f32", 1, 4], ["ndarray", "f32", 1, 4]]], ["b", ["sdict", ["c", ["ndarray", "f32", 1, 4]]]]], ["named", "alpha", "f32"]], "r": [["ndarray", "f32", 1, 4], ["sdict", ["s", ["ndarray", "f32", 1, 4]], ["t", ["stuple", ["ndarray", "f32", 1, 4], ["ndarray", "f32", 1, 4]]]]], "v": 1}"#;
        let f = FunctionReflection::parse(json).unwrap();
        let sip = f.to_sip().unwrap();
        assert_eq!(sip.to_string(), r#"([{"a": [$0, $1], "b": {"c": $2}}, $3]) -> [$0, {"s": $1, "t": [$2, $3]}]"#);
        let raw = f.to_raw().unwrap();
        assert_eq!(
            raw.to_string(),
            "(Buffer<float32[4]>, Buffer<float32[4]>, Buffer<float32[4]>, float32) -> \
             (Buffer<float32[4]>, Buffer<float32[4]>, Buffer<float32[4]>, Buffer<float32[4]>)"
        );
        // Back: the same tree, except what SIP cannot say (the argument name
        // of a positional slot, tuple vs list, several results vs one list).
        let back = FunctionReflection::from_sip(&sip, &raw).unwrap();
        assert_eq!(
            back.to_json(),
            r#"{"a": [["sdict", ["a", ["slist", ["ndarray", "f32", 1, 4], ["ndarray", "f32", 1, 4]]], ["b", ["sdict", ["c", ["ndarray", "f32", 1, 4]]]]], "f32"], "r": [["slist", ["ndarray", "f32", 1, 4], ["sdict", ["s", ["ndarray", "f32", 1, 4]], ["t", ["slist", ["ndarray", "f32", 1, 4], ["ndarray", "f32", 1, 4]]]]]], "v": 1}"#
        );
        assert_eq!(back.to_sip().unwrap(), sip);
    }

    #[test]
    fn named_arguments_become_a_dict_root_when_sorted() {
        let f = FunctionReflection::parse(r#"{"a": [["named", "b", "f32"], ["named", "c", "i32"]], "r": ["f32"]}"#)
            .unwrap();
        assert_eq!(f.to_sip().unwrap().to_string(), r#"({"b": $0, "c": $1}) -> $0"#);
        let f = FunctionReflection::parse(r#"{"a": [["named", "c", "f32"], ["named", "b", "i32"]], "r": []}"#).unwrap();
        assert_eq!(f.to_sip().unwrap().to_string(), "([$0, $1]) -> None");
        let f = FunctionReflection::parse(r#"{"a": [], "r": []}"#).unwrap();
        assert_eq!(f.to_sip().unwrap().to_mangled(), "I1!R1!");
    }

    #[test]
    fn a_single_structured_result_is_the_result_root() {
        let f = FunctionReflection::parse(r#"{"a": [], "r": [["sdict", ["y", "f32"], ["x", "i64"]]]}"#).unwrap();
        assert_eq!(f.to_sip().unwrap().to_string(), r#"() -> {"x": $1, "y": $0}"#);
    }
}
