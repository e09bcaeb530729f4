//! Refusals of modules that IREE's bytecode verifier would read through a
//! null field, built by clearing one vtable entry of a real module.

use super::flatbuf::Buffer;
use super::{Module, VmfbErrorKind, slot};

/// `add.vmfb`'s module FlatBuffer as a bare size-prefixed file (what
/// `Module::parse` reads without the ZIP, so no CRC-32 to mend).
fn bare_add_module() -> Vec<u8> {
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../fnabi/tests/fixtures/iree/add.vmfb")).unwrap();
    let m = Module::parse(&bytes).unwrap();
    bytes[m.flatbuffer_offset - 4..m.flatbuffer_offset + m.flatbuffer_len].to_vec()
}

/// `bare` with field `field` of element `index` of the root's vector
/// `vector` made absent, and the element's offset. The element gets a
/// vtable of its own (a copy of its vtable with the field's entry cleared,
/// appended to the buffer): vtables are shared between tables of the same
/// layout, and a type and a signature share one in this module.
fn without_field(bare: &[u8], vector: usize, index: usize, field: usize) -> (Vec<u8>, usize) {
    let buf = Buffer::new(&bare[4..], 4);
    let root = buf.root("root").unwrap();
    let t = root.vector(vector, "vector").unwrap().table(index).unwrap();
    assert!(t.string(field, "field").unwrap().is_some(), "the field is there to clear");
    let (pos, vtable, vt_len) = t.layout();
    let mut out = bare.to_vec();
    let mut vt = bare[4 + vtable..4 + vtable + vt_len].to_vec();
    vt[4 + 2 * field..6 + 2 * field].fill(0);
    let new_vtable = out.len() - 4;
    out.extend_from_slice(&vt);
    let soffset = pos as i64 - new_vtable as i64;
    out[4 + pos..8 + pos].copy_from_slice(&i32::try_from(soffset).unwrap().to_le_bytes());
    let len = u32::try_from(out.len() - 4).unwrap();
    out[..4].copy_from_slice(&len.to_le_bytes());
    (out, t.offset())
}

#[test]
fn the_bare_module_reads_as_the_zip_does() {
    let bare = bare_add_module();
    let m = Module::parse(&bare).unwrap();
    assert_eq!(m.export("add").unwrap().signature.calling_convention, Some("0rr_r"));
    assert!(!m.types.is_empty() && !m.imports.is_empty(), "the fixture has types and imports to clear");
}

#[test]
fn a_function_signature_without_a_calling_convention_is_refused() {
    let bare = bare_add_module();
    let (bad, table) = without_field(&bare, slot::MODULE_FUNCTION_SIGNATURES, 0, slot::SIGNATURE_CALLING_CONVENTION);
    let e = Module::parse(&bad).unwrap_err();
    assert_eq!(e.kind(), &VmfbErrorKind::MissingField("a function signature's calling_convention"), "{e}");
    assert_eq!(e.offset(), table);
    assert_eq!(e.to_string(), format!("vmfb at byte {table}: a function signature's calling_convention is missing"));
}

#[test]
fn a_type_without_a_name_is_refused() {
    let bare = bare_add_module();
    let (bad, table) = without_field(&bare, slot::MODULE_TYPES, 0, slot::TYPE_FULL_NAME);
    let e = Module::parse(&bad).unwrap_err();
    assert_eq!(e.kind(), &VmfbErrorKind::MissingField("a type's full_name"), "{e}");
    assert_eq!(e.offset(), table);
}
