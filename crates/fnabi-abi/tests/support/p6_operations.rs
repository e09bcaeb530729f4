//! The operations of issue 19's P6 rows on one signature, shared by the
//! `signature` bench (crates/fnabi, group `p6`) and the `signature_timing`
//! example that runs beside IREE's C++ parser: each mirrors one operation
//! of `bench/iree-signature/driver.cc`.

use fnabi_abi::Dim;
use fnabi_abi::RawSignature;
use fnabi_abi::mangle::{Component, SignatureParser};
use fnabi_abi::raw::{RawSignatureReader, RawTypeRef};
use fnabi_abi::sip::{ReferenceText, SipReader, SipSignature, SipVisitor, StructKind};
use fnabi_abi::structure::Structure;

/// Every component of `bytes` (at absolute offset `base`), descending into
/// spans except dict keys (`K`, whose content is a name, not components);
/// stops at the first error. (A span's parts, not a parser, go down the
/// recursion: a copied parser is written a field at a time and read back
/// whole, which stalls the CPU.)
#[inline(never)]
pub fn walk(bytes: &[u8], base: usize) -> usize {
    let mut n = 0;
    for c in SignatureParser::with_offset(bytes, base) {
        let Ok(c) = c else { break };
        n += 1;
        if let Component::Span { tag, content, content_offset, .. } = c
            && tag != b'K'
        {
            n += walk(content, content_offset);
        }
    }
    n
}

/// Reads every item and dim of both sides without allocating.
pub fn raw_read(mangled: &str) -> i64 {
    let r = RawSignatureReader::new(mangled.as_bytes()).unwrap();
    let mut acc = 0i64;
    for t in r.inputs().chain(r.results()) {
        match t.unwrap() {
            RawTypeRef::Buffer(b) => {
                acc += i64::from(b.dtype.code());
                for d in b.dims() {
                    acc += match d {
                        Dim::Static(n) => i64::from(n),
                        Dim::Dynamic => -1,
                    };
                }
            }
            RawTypeRef::Scalar(s) => acc += i64::from(s.code()),
            RawTypeRef::RefObject | RawTypeRef::Unrecognized => acc += 1,
        }
    }
    acc
}

/// `RawSignature::parse`, then its human-readable form into `out`.
pub fn raw_human(mangled: &str, out: &mut String) -> usize {
    out.clear();
    RawSignature::parse(mangled).unwrap().write_human(out);
    out.len()
}

/// The human-readable form into `out` straight from the mangled text.
pub fn raw_human_zero_copy(mangled: &str, out: &mut String) -> usize {
    out.clear();
    RawSignatureReader::new(mangled.as_bytes()).unwrap().write_human(out).unwrap();
    out.len()
}

/// Sums what it is told, so no event is optimized away.
#[derive(Default)]
pub struct Count(pub usize);

impl SipVisitor<'_> for Count {
    fn integer_key(&mut self, key: usize) {
        self.0 += key;
    }
    fn string_key(&mut self, key: &str) {
        self.0 += key.len();
    }
    fn open(&mut self, kind: StructKind) {
        self.0 += 1 + kind as usize;
    }
    fn close(&mut self) {
        self.0 += 1;
    }
    fn leaf(&mut self, raw_index: usize) {
        self.0 += raw_index;
    }
}

/// Both sides into a [`Count`].
pub fn sip_visit(mangled: &str) -> usize {
    let r = SipReader::new(mangled.as_bytes()).unwrap();
    let mut v = Count::default();
    r.visit_inputs(&mut v).unwrap();
    r.visit_results(&mut v).unwrap();
    v.0
}

/// The reference text of both sides into `ins` and `outs`.
pub fn sip_text(mangled: &str, ins: &mut String, outs: &mut String) -> usize {
    let r = SipReader::new(mangled.as_bytes()).unwrap();
    ins.clear();
    r.visit_inputs(&mut ReferenceText::with_writer(&mut *ins)).unwrap();
    outs.clear();
    r.visit_results(&mut ReferenceText::with_writer(&mut *outs)).unwrap();
    ins.len() + outs.len()
}

/// `SipSignature::parse`, dropped.
pub fn sip_parse(mangled: &str) -> usize {
    usize::from(SipSignature::parse(mangled).unwrap().inputs().is_some())
}

/// The lists of an owned signature, in bytes: one size per non-empty list.
pub struct ListSizes(Vec<usize>);

impl ListSizes {
    /// The one list of both sides' items of `sig` (when not empty) and the
    /// dims of its buffers of a rank above six (the ones kept out of place).
    pub fn of_raw(sig: &RawSignature) -> Self {
        let (inputs, results) = (sig.inputs(), sig.results());
        let mut out = Vec::new();
        out.extend((!inputs.is_empty() || !results.is_empty()).then_some(size_of_val(inputs) + size_of_val(results)));
        for t in inputs.iter().chain(results) {
            if let fnabi_abi::RawType::Buffer(b) = t
                && b.dims().len() > 6
            {
                out.push(size_of_val(b.dims()));
            }
        }
        ListSizes(out)
    }

    /// The non-empty lists of both sides of `sig`.
    pub fn of(sig: &SipSignature) -> Self {
        fn add(s: &Structure, out: &mut Vec<usize>) {
            match s {
                Structure::Leaf(_) => {}
                Structure::Sequence(c) => {
                    out.extend((!c.is_empty()).then_some(size_of_val(c.as_slice())));
                    c.iter().for_each(|(_, s)| add(s, out));
                }
                Structure::Dict(c) => {
                    out.extend((!c.is_empty()).then_some(size_of_val(c.as_slice())));
                    c.iter().for_each(|(_, s)| add(s, out));
                }
            }
        }
        let mut out = Vec::new();
        sig.inputs().into_iter().chain(sig.results()).for_each(|s| add(s, &mut out));
        ListSizes(out)
    }

    /// The allocations that an owned parse allocating once per list cannot
    /// avoid: each list's bytes, all alive together (in `held`, emptied
    /// again), then freed; nothing written into them. With the reading of
    /// the text (the SIP visit, the zero-copy raw read), the floor of any
    /// such parse (issue 19).
    pub fn allocate(&self, held: &mut Vec<Vec<u8>>) -> usize {
        held.extend(self.0.iter().map(|&bytes| Vec::with_capacity(bytes)));
        let n = std::hint::black_box(&mut *held).len();
        held.clear();
        n
    }
}
