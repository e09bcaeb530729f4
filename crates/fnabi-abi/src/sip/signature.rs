//! [`SipSignature`], a parsed signature owned as two structures, and [`SipMangler`].

use super::text::{PythonForm, reference_text, write_reference_text};
use super::{Build, SipReader, side_into};
use crate::error::ParseError;
use crate::limits::{MAX_DEPTH, cautious_capacity};
use crate::mangle::SignatureBuilder;
use crate::structure::{IndexPath, Key, PathKey, Structure, StructureBuilder, StructureError, StructureErrorKind};
use std::fmt::{self, Write as _};
use std::str::FromStr;

/// Long keys already made (over [`Key::INLINE_CAP`] bytes: a short key is
/// kept in place and costs nothing to make), so that a long key that
/// repeats across structs shares one allocation. Eight slots, replaced by
/// the clock (second chance) rule, so keys that keep repeating stay.
struct KeyCache<'a> {
    slots: [Option<(&'a str, Key)>; 8],
    used: [bool; 8],
    hand: usize,
}

impl<'a> KeyCache<'a> {
    fn new() -> Self {
        KeyCache { slots: Default::default(), used: [false; 8], hand: 0 }
    }

    fn get(&mut self, key: &'a str) -> Key {
        for (i, slot) in self.slots.iter().enumerate() {
            if let Some((k, shared)) = slot
                && *k == key
            {
                self.used[i] = true;
                return shared.clone();
            }
        }
        let made: Key = key.into();
        while std::mem::take(&mut self.used[self.hand]) {
            self.hand = (self.hand + 1) % self.slots.len();
        }
        self.slots[self.hand] = Some((key, made.clone()));
        self.hand = (self.hand + 1) % self.slots.len();
        made
    }
}

/// Builds [`Structure`]s: each struct's entries in one allocation of the
/// exact size (counted first; past a form the count does not skip, such as
/// a length of more than 18 digits, the count is low and the list grows),
/// each distinct long key in one; each value is written into its entry's
/// slot, pushed before the value is parsed.
struct Collector<'a> {
    /// Made at the first long key.
    keys: Option<KeyCache<'a>>,
}

impl<'a> Build<'a> for Collector<'a> {
    type Value = Structure;
    type Seq = Vec<(usize, Structure)>;
    type Dict = Vec<(Key, Structure)>;
    const COUNTS: bool = true;
    fn placeholder(&mut self) -> Structure {
        Structure::Leaf(0)
    }
    fn leaf(&mut self, raw_index: usize, out: &mut Structure) {
        *out = Structure::Leaf(raw_index);
    }
    fn open_seq(&mut self, entries: usize) -> Self::Seq {
        Vec::with_capacity(cautious_capacity::<(usize, Structure)>(entries))
    }
    fn open_dict(&mut self, entries: usize) -> Self::Dict {
        Vec::with_capacity(cautious_capacity::<(Key, Structure)>(entries))
    }
    fn seq_entry<'s>(&mut self, seq: &'s mut Self::Seq, key: usize) -> &'s mut Structure {
        // The entry is pushed as a constant and its key written after: a
        // pushed tuple is built on the stack across the (never taken) call
        // that grows the list, and copied with wide loads over its word
        // stores, which the CPU cannot forward.
        seq.push((0, Structure::Leaf(0)));
        let last = seq.len() - 1;
        let entry = &mut seq[last];
        entry.0 = key;
        &mut entry.1
    }
    fn dict_entry<'s>(&mut self, dict: &'s mut Self::Dict, key: &'a str) -> &'s mut Structure {
        // (As in `seq_entry`.)
        dict.push((Key::default(), Structure::Leaf(0)));
        let last = dict.len() - 1;
        let entry = &mut dict[last];
        if key.len() <= Key::INLINE_CAP {
            entry.0 = Key::new_inline(key);
        } else {
            entry.0 = self.keys.get_or_insert_with(KeyCache::new).get(key);
        }
        &mut entry.1
    }
    fn close_seq(&mut self, seq: Self::Seq, out: &mut Structure) {
        *out = Structure::Sequence(seq);
    }
    fn close_dict(&mut self, dict: Self::Dict, out: &mut Structure) {
        *out = Structure::Dict(dict);
    }
}

/// A SIP signature: the structure of the inputs and of the results (`None`
/// for an empty side).
///
/// Every `SipSignature` is valid: keys ascending, raw indices unique per
/// side, depth at most [`MAX_DEPTH`], every integer within the 32-bit range
/// of the mangling. So [`to_mangled`](SipSignature::to_mangled) cannot fail.
///
/// ```
/// use fnabi_abi::SipSignature;
/// use fnabi_abi::structure::Structure;
/// let inputs = Structure::Sequence(vec![(0, Structure::Leaf(0)), (1, Structure::Leaf(1))]);
/// let sig = SipSignature::new(Some(inputs.clone()), Some(Structure::Leaf(0))).unwrap();
/// assert_eq!(sig.to_mangled(), "I12!S9!k0_0k1_1R3!_0");
/// assert_eq!(sig.to_string(), "([$0, $1]) -> $0");
/// assert_eq!(SipSignature::parse(sig.to_mangled()).unwrap(), sig);
/// assert_eq!(sig.inputs(), Some(&inputs));
///
/// // Raw index 0 twice on one side is not a valid signature.
/// let twice = Structure::Sequence(vec![(0, Structure::Leaf(0)), (1, Structure::Leaf(0))]);
/// assert!(SipSignature::new(Some(twice), None).is_err());
/// assert_eq!(SipSignature::default().to_string(), "() -> None");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SipSignature {
    inputs: Option<Structure>,
    results: Option<Structure>,
}

/// Checks what a signature needs of a structure (beyond a plan: 32-bit
/// integers); recursion is bounded by the depth check.
fn check_for_signature(s: &Structure, depth: usize) -> Result<(), StructureError> {
    let too_large = |what, value: usize| {
        Err(StructureError::at_root(StructureErrorKind::IndexTooLarge { what, value: value as u64 }))
    };
    if depth > MAX_DEPTH {
        return Err(StructureError::at_root(StructureErrorKind::TooDeep(MAX_DEPTH)));
    }
    match s {
        Structure::Leaf(i) if *i > i32::MAX as usize => too_large("raw index", *i),
        Structure::Leaf(_) => Ok(()),
        Structure::Sequence(c) => {
            for (k, s) in c {
                if *k > i32::MAX as usize {
                    return too_large("sequence key", *k);
                }
                check_for_signature(s, depth + 1).map_err(|e| e.within(PathKey::Index(*k)))?;
            }
            Ok(())
        }
        Structure::Dict(c) => {
            for (k, s) in c {
                check_for_signature(s, depth + 1).map_err(|e| e.within(PathKey::Name(k.clone())))?;
            }
            Ok(())
        }
    }
}

fn check_side(s: Option<&Structure>) -> Result<(), StructureError> {
    if let Some(s) = s {
        check_for_signature(s, 0)?;
        // Ordering and uniqueness; gap limits are the plan's business, not the signature's.
        match s.validate() {
            Err(e) if matches!(e.kind(), StructureErrorKind::TooManyGaps(_)) => {}
            r => {
                r?;
            }
        }
    }
    Ok(())
}

fn mangle_value(b: &mut SignatureBuilder, s: &Structure) {
    match s {
        Structure::Leaf(i) => {
            b.integer(b'_', *i as i32);
        }
        Structure::Sequence(c) => {
            b.nested(b'S', |b| {
                for (k, s) in c {
                    b.integer(b'k', *k as i32);
                    mangle_value(b, s);
                }
            });
        }
        Structure::Dict(c) => {
            b.nested(b'D', |b| {
                for (k, s) in c {
                    b.span(b'K', k);
                    mangle_value(b, s);
                }
            });
        }
    }
}

impl SipSignature {
    /// A signature of these sides, checked (see the type docs).
    pub fn new(inputs: Option<Structure>, results: Option<Structure>) -> Result<Self, StructureError> {
        check_side(inputs.as_ref())?;
        check_side(results.as_ref())?;
        Ok(SipSignature { inputs, results })
    }

    /// Parses a mangled SIP signature (see the module docs for what is rejected).
    ///
    /// (Inlined up to the sides: a signature with two empty sides is made
    /// in registers in the caller; returned from a call, it came back
    /// through memory and was read 16 bytes at a time over word stores,
    /// which the CPU cannot forward: a third of parsing `I1!R1!`.)
    #[inline]
    pub fn parse(mangled: impl AsRef<[u8]>) -> Result<Self, ParseError> {
        let r = SipReader::new(mangled.as_ref())?;
        if r.inputs.0.is_empty() && r.results.0.is_empty() {
            return Ok(SipSignature { inputs: None, results: None });
        }
        Self::parse_sides(r)
    }

    /// [`parse`](Self::parse) of a signature with at least one side.
    fn parse_sides(r: SipReader<'_>) -> Result<Self, ParseError> {
        let mut c = Collector { keys: None };
        // Each side is written into the signature (not returned and moved).
        let mut signature = SipSignature { inputs: None, results: None };
        side_into(r.inputs.0, r.inputs.1, &mut c, &mut signature.inputs)?;
        side_into(r.results.0, r.results.1, &mut c, &mut signature.results)?;
        Ok(signature)
    }

    /// The inputs structure (`None`: no inputs).
    pub fn inputs(&self) -> Option<&Structure> {
        self.inputs.as_ref()
    }

    /// The results structure (`None`: no results).
    pub fn results(&self) -> Option<&Structure> {
        self.results.as_ref()
    }

    /// The two sides.
    pub fn into_parts(self) -> (Option<Structure>, Option<Structure>) {
        (self.inputs, self.results)
    }

    /// The mangled form: keys in ascending order, as the reference mangler writes.
    pub fn to_mangled(&self) -> String {
        let mut b = SignatureBuilder::new();
        b.nested(b'I', |b| self.inputs.iter().for_each(|s| mangle_value(b, s)));
        b.nested(b'R', |b| self.results.iter().for_each(|s| mangle_value(b, s)));
        b.into_string()
    }

    /// The reference text form of the inputs (see [`ReferenceText`](super::ReferenceText)).
    pub fn inputs_reference(&self) -> String {
        reference_text(self.inputs.as_ref())
    }

    /// The reference text form of the results (see [`ReferenceText`](super::ReferenceText)).
    pub fn results_reference(&self) -> String {
        reference_text(self.results.as_ref())
    }

    /// Writes the reference text form of the inputs into `out` (no
    /// allocation of its own).
    pub fn write_inputs_reference(&self, out: &mut (impl fmt::Write + ?Sized)) -> fmt::Result {
        write_reference_text(self.inputs.as_ref(), out)
    }

    /// Writes the reference text form of the results into `out` (no
    /// allocation of its own).
    pub fn write_results_reference(&self, out: &mut (impl fmt::Write + ?Sized)) -> fmt::Result {
        write_reference_text(self.results.as_ref(), out)
    }
}

impl fmt::Display for SipSignature {
    /// The one-line Python-like form: the inputs structure in parentheses,
    /// `->`, the results structure ([`PythonForm`]); an empty inputs side is
    /// `()` and an empty results side `None` (what unflattening it gives):
    /// `([{"bar": $1, "foo": $0}, $2]) -> [$0, $1]`, `() -> None`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('(')?;
        if let Some(s) = &self.inputs {
            PythonForm(s).fmt(f)?;
        }
        f.write_str(") -> ")?;
        match &self.results {
            Some(s) => PythonForm(s).fmt(f),
            None => f.write_str("None"),
        }
    }
}

impl FromStr for SipSignature {
    type Err = ParseError;

    /// Parses the mangled form.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SipSignature::parse(s)
    }
}

/// Builds a SIP signature from `(raw index, index path)` pairs for each
/// side (the reference's `SipSignatureMangler`, strict: every conflict is an
/// error that names both paths, see [`StructureBuilder`]).
///
/// ```
/// use fnabi_abi::sip::SipMangler;
/// use fnabi_abi::structure::PathKey;
/// let mut m = SipMangler::new();
/// m.input(0, &[PathKey::Index(0)]).unwrap().input(1, &[PathKey::Index(1)]).unwrap();
/// m.result(0, &[]).unwrap();
/// assert_eq!(m.finish().to_mangled(), "I12!S9!k0_0k1_1R3!_0");
/// assert_eq!(SipMangler::new().finish().to_mangled(), "I1!R1!");
/// let e = SipMangler::new().input(-1, &[]).unwrap_err();
/// assert_eq!(e.to_string(), "at the root: raw index -1 is negative");
/// ```
#[derive(Clone, Debug, Default)]
pub struct SipMangler {
    inputs: StructureBuilder,
    results: StructureBuilder,
}

fn checked_leaf(raw_index: i64, path: &[PathKey]) -> Result<usize, StructureError> {
    let fail = |kind| Err(StructureError::new(IndexPath(path.to_vec()), kind));
    if raw_index < 0 {
        return fail(StructureErrorKind::NegativeRawIndex(raw_index));
    }
    if raw_index > i64::from(i32::MAX) {
        return fail(StructureErrorKind::IndexTooLarge { what: "raw index", value: raw_index as u64 });
    }
    for key in path {
        if let PathKey::Index(k) = key
            && *k > i32::MAX as usize
        {
            return fail(StructureErrorKind::IndexTooLarge { what: "sequence key", value: *k as u64 });
        }
    }
    Ok(raw_index as usize)
}

impl SipMangler {
    /// A mangler with both sides empty.
    pub fn new() -> Self {
        Self::default()
    }

    /// Maps input `raw_index` to `path`.
    pub fn input(&mut self, raw_index: i64, path: &[PathKey]) -> Result<&mut Self, StructureError> {
        let raw = checked_leaf(raw_index, path)?;
        self.inputs.insert(raw, path)?;
        Ok(self)
    }

    /// Maps result `raw_index` to `path`.
    pub fn result(&mut self, raw_index: i64, path: &[PathKey]) -> Result<&mut Self, StructureError> {
        let raw = checked_leaf(raw_index, path)?;
        self.results.insert(raw, path)?;
        Ok(self)
    }

    /// The signature.
    pub fn finish(self) -> SipSignature {
        SipSignature { inputs: self.inputs.finish(), results: self.results.finish() }
    }
}
