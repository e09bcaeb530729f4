//! Records ⇄ [`Structure`]: the reduction of an `iree.abi` record list to
//! the crate's one structure model (the tree that SIP signatures give), and
//! back where records can express it.
use crate::limits::MAX_DEPTH;

use super::TypeRecord;
use crate::structure::{Structure, StructureError, StructureErrorKind};

/// A conversion error without a path of its own (the message says what).
#[cold]
fn custom(message: impl Into<String>) -> StructureError {
    StructureError::at_root(StructureErrorKind::Custom(message.into()))
}
use crate::structure::Key;

/// The structure of a record list, with the record of each leaf.
///
/// ```
/// use fnabi_abi::reflection::FunctionReflection;
/// use fnabi_abi::Structure;
/// let f = FunctionReflection::parse(r#"{"a": [], "r": [["slist", "f32", ["ndarray", "i8", 1, 3]]], "v": 1}"#).unwrap();
/// let s = f.result_structure().unwrap();
/// assert_eq!(s.structure, Structure::Sequence(vec![
///     (0, Structure::Sequence(vec![(0, Structure::Leaf(0)), (1, Structure::Leaf(1))])),
/// ]));
/// assert_eq!(s.leaves[1].to_string(), "i8[3]");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RecordStructure<'r> {
    /// The tree; leaf `i` is the `i`-th leaf in depth-first record order
    /// (the order in which the values sit in the VM's nested lists).
    pub structure: Structure,
    /// The record of each leaf, indexed by leaf number.
    pub leaves: Vec<&'r TypeRecord>,
}

/// Reduces a record list (a function's `a` or `r`) to a [`Structure`].
///
/// The root is a sequence keyed by position. `slist`/`stuple` become
/// sequences, `sdict`/`sdict_kwargs` dicts (children sorted by key, as the
/// structure model requires; leaf numbers keep the record order), `named`
/// is its slot (the name is an argument name, see
/// [`FunctionReflection::arg_names`](super::FunctionReflection::arg_names)),
/// and a `null` slot is a gap. Every other record is a leaf: primitives,
/// `unknown`, `ndarray` (also of references) and `py_homogeneous_list`,
/// whose length is not fixed.
///
/// ```
/// use fnabi_abi::reflection::{FunctionReflection, records_to_structure};
/// use fnabi_abi::Structure;
/// let f = FunctionReflection::parse(r#"{"a": [["sdict", ["y", "f32"], ["x", "i32"]], null, ["named", "n", "i64"]], "r": []}"#).unwrap();
/// let s = records_to_structure(&f.a).unwrap();
/// assert_eq!(s.structure, Structure::Sequence(vec![
///     (0, Structure::Dict(vec![("x".into(), Structure::Leaf(1)), ("y".into(), Structure::Leaf(0))])),
///     (2, Structure::Leaf(2)),
/// ]));
/// assert_eq!(s.leaves.iter().map(|t| t.to_string()).collect::<Vec<_>>(), ["f32", "i32", "i64"]);
/// ```
pub fn records_to_structure(records: &[TypeRecord]) -> Result<RecordStructure<'_>, StructureError> {
    let mut leaves = Vec::new();
    let mut children = Vec::with_capacity(records.len());
    for (i, r) in records.iter().enumerate() {
        if let Some(s) = reduce(r, &mut leaves, 0)? {
            children.push((i, s));
        }
    }
    Ok(RecordStructure { structure: Structure::Sequence(children), leaves })
}

fn too_deep() -> StructureError {
    custom(format!("records nest deeper than {MAX_DEPTH} levels"))
}

fn reduce<'r>(
    r: &'r TypeRecord,
    leaves: &mut Vec<&'r TypeRecord>,
    depth: usize,
) -> Result<Option<Structure>, StructureError> {
    if depth >= MAX_DEPTH {
        return Err(too_deep());
    }
    Ok(Some(match r {
        TypeRecord::Null => return Ok(None),
        TypeRecord::Named(_, t) => return reduce(t, leaves, depth + 1),
        TypeRecord::SList(ts) | TypeRecord::STuple(ts) => {
            let mut c = Vec::with_capacity(ts.len());
            for (i, t) in ts.iter().enumerate() {
                if let Some(s) = reduce(t, leaves, depth + 1)? {
                    c.push((i, s));
                }
            }
            Structure::Sequence(c)
        }
        TypeRecord::SDict(es) | TypeRecord::SDictKwargs(es) => {
            let mut c: Vec<(Key, Structure)> = Vec::with_capacity(es.len());
            for (k, t) in es {
                if let Some(s) = reduce(t, leaves, depth + 1)? {
                    c.push((k.clone(), s));
                }
            }
            c.sort_by(|a, b| a.0.cmp(&b.0));
            if c.windows(2).any(|w| w[0].0 == w[1].0) {
                return Err(custom("an sdict record repeats a key"));
            }
            Structure::Dict(c)
        }
        leaf => {
            leaves.push(leaf);
            Structure::Leaf(leaves.len() - 1)
        }
    }))
}

/// Builds the record list of a [`Structure`] (a SIP signature's inputs or
/// results, say) given the record of each leaf's raw index.
///
/// A root sequence gives one record per position (gaps are `null`), a root
/// dict gives `named` records in key order, a root leaf a single record.
/// Inner sequences become `slist` (a structure cannot say "tuple"), dicts
/// `sdict` (keys sorted). The VM layout of the result is the nested lists
/// the records describe; raw indices matter only to look up leaf records,
/// so a structure whose leaves are numbered in depth-first key order
/// round-trips through [`records_to_structure`] unchanged.
///
/// Errors: a leaf without a record, nesting deeper than [`MAX_DEPTH`].
///
/// ```
/// use fnabi_abi::reflection::{TypeRecord, structure_to_records};
/// use fnabi_abi::Structure;
/// let s = Structure::Sequence(vec![(0, Structure::Dict(vec![("a".into(), Structure::Leaf(0))])), (2, Structure::Leaf(1))]);
/// let recs = structure_to_records(&s, |i| TypeRecord::primitive(["f32", "i8"][i])).unwrap();
/// let text: Vec<_> = recs.iter().map(|r| r.to_json()).collect();
/// assert_eq!(text, [r#"["sdict", ["a", "f32"]]"#, "null", r#""i8""#]);
/// ```
pub fn structure_to_records(
    s: &Structure,
    mut leaf_record: impl FnMut(usize) -> Option<TypeRecord>,
) -> Result<Vec<TypeRecord>, StructureError> {
    match s {
        Structure::Leaf(_) => Ok(vec![build(s, &mut leaf_record, 0)?]),
        Structure::Sequence(c) => sequence_records(c, &mut leaf_record, 1),
        Structure::Dict(c) => Ok(dict_records(c, &mut leaf_record, 1)?
            .into_iter()
            .map(|(k, r)| TypeRecord::Named(k, Box::new(r)))
            .collect()),
    }
}

fn build(
    s: &Structure,
    leaf_record: &mut impl FnMut(usize) -> Option<TypeRecord>,
    depth: usize,
) -> Result<TypeRecord, StructureError> {
    if depth >= MAX_DEPTH {
        return Err(too_deep());
    }
    Ok(match s {
        Structure::Leaf(i) => {
            leaf_record(*i).ok_or_else(|| custom(format!("no type record for the leaf of raw index {i}")))?
        }
        Structure::Sequence(c) => TypeRecord::SList(sequence_records(c, leaf_record, depth + 1)?),
        Structure::Dict(c) => TypeRecord::SDict(dict_records(c, leaf_record, depth + 1)?),
    })
}

/// The records of a sequence's items at `depth` (gaps are `null`).
fn sequence_records(
    c: &[(usize, Structure)],
    leaf_record: &mut impl FnMut(usize) -> Option<TypeRecord>,
    depth: usize,
) -> Result<Vec<TypeRecord>, StructureError> {
    let mut out = Vec::with_capacity(c.len());
    for (k, child) in c {
        if *k < out.len() {
            return Err(custom(format!("structure repeats sequence key {k}")));
        }
        while out.len() < *k {
            out.push(TypeRecord::Null);
        }
        out.push(build(child, leaf_record, depth)?);
    }
    Ok(out)
}

/// The `(key, record)` pairs of a dict's values at `depth`, in key order.
fn dict_records(
    c: &[(Key, Structure)],
    leaf_record: &mut impl FnMut(usize) -> Option<TypeRecord>,
    depth: usize,
) -> Result<Vec<(Key, TypeRecord)>, StructureError> {
    let mut sorted: Vec<&(Key, Structure)> = c.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    sorted.into_iter().map(|(k, child)| Ok((k.clone(), build(child, leaf_record, depth)?))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reflection::FunctionReflection;

    #[test]
    fn nested_deep_reduces_like_its_sip_tree() {
        let f = FunctionReflection::parse(r#"{"a": [["sdict", ["a", ["slist", ["ndarray", "f32", 1, 4], ["ndarray", "f32", 1, 4]]], ["b", ["sdict", ["c", ["ndarray", "f32", 1, 4]]]]], ["named", "alpha", "f32"]], "r": [["ndarray", "f32", 1, 4], ["sdict", ["s", ["ndarray", "f32", 1, 4]], ["t", ["stuple", ["ndarray", "f32", 1, 4], ["ndarray", "f32", 1, 4]]]]], "v": 1}"#).unwrap();
        let a = f.arg_structure().unwrap();
        let leaves: Vec<String> = a.structure.leaves().map(|(p, i)| format!("{p}={i}")).collect();
        assert_eq!(leaves, [r#"[0]["a"][0]=0"#, r#"[0]["a"][1]=1"#, r#"[0]["b"]["c"]=2"#, "[1]=3"]);
        assert_eq!(a.leaves[3].to_string(), "f32");
        let r = f.result_structure().unwrap();
        let leaves: Vec<String> = r.structure.leaves().map(|(p, i)| format!("{p}={i}")).collect();
        assert_eq!(leaves, ["[0]=0", r#"[1]["s"]=1"#, r#"[1]["t"][0]=2"#, r#"[1]["t"][1]=3"#]);
        // And back: the same structure (tuples become lists, names stay).
        let recs = structure_to_records(&a.structure, |i| a.leaves.get(i).map(|t| (*t).clone())).unwrap();
        assert_eq!(records_to_structure(&recs).unwrap().structure, a.structure);
        let back: Vec<String> = recs.iter().map(|t| t.to_string()).collect();
        assert_eq!(back, ["{a: [f32[4], f32[4]], b: {c: f32[4]}}", "f32"]);
    }

    #[test]
    fn dict_roots_become_named_records_and_errors() {
        let s = Structure::Dict(vec![("b".into(), Structure::Leaf(1)), ("a".into(), Structure::Leaf(0))]);
        let recs = structure_to_records(&s, |_| Some(TypeRecord::Unknown)).unwrap();
        assert_eq!(recs.iter().map(|r| r.to_string()).collect::<Vec<_>>(), ["a: unknown", "b: unknown"]);
        assert_eq!(structure_to_records(&Structure::Leaf(0), |_| Some(TypeRecord::Null)).unwrap(), [TypeRecord::Null]);
        let e = structure_to_records(&s, |i| (i == 0).then_some(TypeRecord::Unknown)).unwrap_err();
        assert_eq!(e.to_string(), "no type record for the leaf of raw index 1");
        let dup = Structure::Sequence(vec![(1, Structure::Leaf(0)), (1, Structure::Leaf(1))]);
        assert!(structure_to_records(&dup, |_| Some(TypeRecord::Unknown)).is_err());
        let inner_dup = Structure::Sequence(vec![(0, dup)]);
        assert!(structure_to_records(&inner_dup, |_| Some(TypeRecord::Unknown)).is_err());
        let mut deep = Structure::Leaf(0);
        for _ in 0..MAX_DEPTH + 1 {
            deep = Structure::Sequence(vec![(0, deep)]);
        }
        assert!(structure_to_records(&deep, |_| Some(TypeRecord::Unknown)).is_err());
        let mut deep_rec = TypeRecord::Unknown;
        for _ in 0..MAX_DEPTH + 1 {
            deep_rec = TypeRecord::SList(vec![deep_rec]);
        }
        assert!(records_to_structure(std::slice::from_ref(&deep_rec)).is_err());
        let dup_keys = TypeRecord::SDict(vec![("k".into(), TypeRecord::Unknown), ("k".into(), TypeRecord::Unknown)]);
        assert!(records_to_structure(&[dup_keys]).is_err());
    }
}
