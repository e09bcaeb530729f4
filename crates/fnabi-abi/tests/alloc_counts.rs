//! Heap allocations of signature parsing (issue 19, P6), counted by a
//! counting global allocator (its own test binary): none for the lexical
//! walk, the zero-copy raw reader and the SIP visitor; one for both lists
//! of an owned raw parse, at most one per list of an owned SIP parse; none
//! of their own for the human-readable form and the reference text written
//! into a caller's `String`. On the ten signatures of the `signature` bench.

use fnabi_abi::mangle::{Component, SignatureParser};
use fnabi_abi::raw::{RawSignatureReader, RawTypeRef};
use fnabi_abi::sip::{ReferenceText, SipMangler, SipReader, SipSignature, SipVisitor, StructKind};
use fnabi_abi::structure::{Key, PathKey, Structure};
use fnabi_abi::{RawSignature, RawType};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::fmt::Write as _;

#[path = "support/ten_signatures.rs"]
mod ten_signatures;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
    /// The most bytes one allocation (or reallocation) asked for.
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

struct Counting;

// SAFETY: forwards to the system allocator; only counts (per thread, so
// tests running side by side do not see each other's allocations).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        LARGEST.with(|c| c.set(c.get().max(layout.size())));
        // SAFETY: forwarded contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        LARGEST.with(|c| c.set(c.get().max(new_size)));
        // SAFETY: forwarded contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The allocations (and reallocations) `f` makes on this thread.
fn allocations<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let before = ALLOCATIONS.with(Cell::get);
    let out = f();
    (ALLOCATIONS.with(Cell::get) - before, out)
}

/// The most bytes one allocation of `f` on this thread asked for.
fn largest_allocation<T>(f: impl FnOnce() -> T) -> (usize, T) {
    LARGEST.with(|c| c.set(0));
    let out = f();
    (LARGEST.with(Cell::get), out)
}

/// A span of `body` under `tag`: its length counts the `!`.
fn span(tag: char, body: &str) -> String {
    format!("{tag}{}!{body}", body.len() + 1)
}

#[test]
fn a_hostile_list_reserves_little_before_it_fails() {
    // Lists whose items are counted before they are checked: a sequence
    // entry per two bytes (`k0k0…`, failing at its second key), a dict
    // entry per four (`K2!a…`, failing at its first value), a raw item per
    // four (`B2!x…`, failing at its first field). What the parse reserves
    // ahead stays within 1 MiB (without the cap: 80, 56 and 64 MB for texts
    // of 4 MB).
    for (tag, entry, repeats) in [('S', "k0", 2 << 20), ('D', "K2!a", 1 << 20)] {
        let sip = span('I', &span(tag, &entry.repeat(repeats))) + "R1!";
        let (largest, parsed) = largest_allocation(|| SipSignature::parse(&sip));
        assert!(parsed.is_err());
        assert!(largest <= 1 << 20, "the SIP parse reserved {largest} bytes for {tag}");
    }
    let raw = span('I', &"B2!x".repeat(1 << 20)) + "R1!";
    let (largest, parsed) = largest_allocation(|| RawSignature::parse(&raw));
    assert!(parsed.is_err());
    assert!(largest <= 1 << 20, "the raw parse reserved {largest} bytes");
    // A list past the cap still reads whole (it grows as it is checked).
    let sig = RawSignature::parse(span('I', &"S3!t6".repeat(20_000)) + "R1!").unwrap();
    assert_eq!(sig.inputs().len(), 20_000);
}

fn walk(p: SignatureParser<'_>) -> usize {
    let mut n = 0;
    for c in p {
        let c = c.unwrap();
        n += 1;
        if let Component::Span { tag, .. } = c
            && tag != b'K'
        {
            n += c.nested().map_or(0, walk);
        }
    }
    n
}

struct Count(usize);

impl SipVisitor<'_> for Count {
    fn integer_key(&mut self, _: usize) {
        self.0 += 1;
    }
    fn string_key(&mut self, _: &str) {
        self.0 += 1;
    }
    fn open(&mut self, _: StructKind) {
        self.0 += 1;
    }
    fn close(&mut self) {
        self.0 += 1;
    }
    fn leaf(&mut self, _: usize) {
        self.0 += 1;
    }
}

/// Lists of a structure with entries (each may take one allocation) and
/// its dict keys (each may take one).
/// The lists of `s` and its keys too long to be kept in place.
fn lists_and_keys(s: &Structure) -> usize {
    match s {
        Structure::Leaf(_) => 0,
        Structure::Sequence(c) => usize::from(!c.is_empty()) + c.iter().map(|(_, s)| lists_and_keys(s)).sum::<usize>(),
        Structure::Dict(c) => {
            usize::from(!c.is_empty())
                + c.iter().map(|(k, s)| usize::from(k.len() > Key::INLINE_CAP) + lists_and_keys(s)).sum::<usize>()
        }
    }
}

#[test]
fn walk_reader_and_visitor_allocate_nothing() {
    for s in ten_signatures::ten() {
        let m = s.mangled.as_bytes();
        let (n, comps) = allocations(|| walk(SignatureParser::new(m)));
        assert!(comps >= 2, "{}", s.name);
        assert_eq!(n, 0, "walk of {}", s.name);
        if s.raw {
            let (n, dims) = allocations(|| {
                let r = RawSignatureReader::new(m).unwrap();
                let mut dims = 0;
                for t in r.inputs().chain(r.results()) {
                    if let RawTypeRef::Buffer(b) = t.unwrap() {
                        dims += b.dims().count();
                    }
                }
                dims
            });
            assert_eq!(n, 0, "zero-copy read of {}", s.name);
            assert_eq!(s.mangled.contains('B'), dims > 0, "{}", s.name);
        }
        if s.sip {
            let (n, events) = allocations(|| {
                let r = SipReader::new(m).unwrap();
                let mut v = Count(0);
                r.visit_inputs(&mut v).unwrap();
                r.visit_results(&mut v).unwrap();
                v.0
            });
            assert_eq!(n, 0, "SIP visit of {}", s.name);
            assert_eq!(s.name == "empty", events == 0);
        }
    }
}

#[test]
fn owned_parses_allocate_at_most_once_per_list() {
    for s in ten_signatures::ten() {
        let m = s.mangled.as_str();
        if s.raw {
            let (n, sig) = allocations(|| RawSignature::parse(m).unwrap());
            // Both item lists in one allocation (none when both are empty),
            // and one exact-size slice per buffer above rank 6 (lower ranks
            // keep their dims in place).
            let types = sig.inputs().iter().chain(sig.results());
            let lists = usize::from(types.clone().next().is_some())
                + types.filter(|t| matches!(t, RawType::Buffer(b) if b.rank() > 6)).count();
            assert_eq!(n, lists, "{}: {n} allocations for {lists} lists", s.name);
        }
        if s.sip {
            let (n, sig) = allocations(|| SipSignature::parse(m).unwrap());
            let lists = sig.inputs().map_or(0, lists_and_keys) + sig.results().map_or(0, lists_and_keys);
            assert!(n <= lists, "{}: {n} allocations for {lists} lists and keys", s.name);
        }
    }
    // 50 leaves under 10 blocks of 3 keys each and 2 result keys make 23
    // lists; the keys (`block_3`, `attn`, `logits`) are kept in place.
    let m = ten_signatures::sip50();
    let (n, _) = allocations(|| SipSignature::parse(&m).unwrap());
    assert_eq!(n, 23);
}

#[test]
fn a_long_key_that_repeats_is_made_once() {
    let long = "a_key_of_twenty_four_b_";
    let longer = format!("{long}y"); // one byte over the inline capacity
    assert_eq!((long.len(), longer.len()), (Key::INLINE_CAP, Key::INLINE_CAP + 1));
    let mut m = SipMangler::new();
    for (i, block) in (0i64..).zip(["b0", "b1", "b2"]) {
        m.input(2 * i, &[PathKey::Name(block.into()), PathKey::Name(long.into())]).unwrap();
        m.input(2 * i + 1, &[PathKey::Name(block.into()), PathKey::Name(longer.as_str().into())]).unwrap();
    }
    let mangled = m.finish().to_mangled();
    // Four dicts, and the longer key once; the rest are kept in place.
    let (n, sig) = allocations(|| SipSignature::parse(&mangled).unwrap());
    assert_eq!(n, 4 + 1);
    let Some(Structure::Dict(blocks)) = sig.inputs() else { panic!("{sig:?}") };
    let keys: Vec<&Key> = blocks
        .iter()
        .flat_map(|(_, b)| match b {
            Structure::Dict(c) => c.iter().map(|(k, _)| k),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(keys.len(), 6);
    for pair in keys.chunks(2) {
        assert_eq!((pair[0].as_str(), pair[1].as_str()), (long, longer.as_str()));
        assert!(!pair[0].is_heap_allocated() && pair[1].is_heap_allocated());
        // Each block's longer key is the first block's, shared.
        assert_eq!(pair[1].as_ptr(), keys[1].as_ptr());
    }
}

#[test]
fn human_form_and_reference_text_allocate_nothing_of_their_own() {
    let mut out = String::with_capacity(4096);
    for s in ten_signatures::ten() {
        let m = s.mangled.as_str();
        if s.raw {
            let sig = RawSignature::parse(m).unwrap();
            out.clear();
            let (n, ()) = allocations(|| sig.write_human(&mut out));
            assert_eq!(n, 0, "write_human of {}", s.name);
            assert_eq!(out, sig.to_string());
            out.clear();
            let (n, r) = allocations(|| write!(out, "{sig}"));
            r.unwrap();
            assert_eq!(n, 0, "Display of {}", s.name);
        }
        if s.sip {
            let r = SipReader::new(m.as_bytes()).unwrap();
            out.clear();
            let (n, r) = allocations(|| {
                r.visit_inputs(&mut ReferenceText::with_writer(&mut out))?;
                r.visit_results(&mut ReferenceText::with_writer(&mut out))
            });
            r.unwrap();
            assert_eq!(n, 0, "reference text of {}", s.name);
            let sig = SipSignature::parse(m).unwrap();
            assert_eq!(out, sig.inputs_reference() + &sig.results_reference());
            out.clear();
            let (n, r) = allocations(|| {
                sig.write_inputs_reference(&mut out)?;
                sig.write_results_reference(&mut out)
            });
            r.unwrap();
            assert_eq!(n, 0, "reference text of the parsed {}", s.name);
        }
    }
}
