//! Reading IREE `.vmfb` module files without a runtime: the module's name
//! and version, its exports with their calling conventions and reflection
//! attributes, its imports, dependencies and types.
//!
//! A `.vmfb` is a stored (uncompressed) ZIP whose first entry holds a
//! 4-byte little-endian size prefix and a FlatBuffer with file identifier
//! `IREE` (the entries after it hold the executables); a bare
//! size-prefixed FlatBuffer is read too. The size prefix is trusted, not
//! the ZIP entry size (IREE writes ZIP64 entries whose sizes do not cover
//! the prefix). The signature of export *i* is
//! `function_signatures[exported_functions[i].internal_ordinal]`. The ZIP
//! container is checked whole ([`zip`]): its directory, every entry's
//! bounds and every stored entry's CRC-32, so a truncated or bit-flipped
//! file is an error here rather than a crash in a runtime that trusts it.
//!
//! [`Module::parse`] reads everything it returns eagerly and zero-copy
//! (names and attribute values borrow from the file): every offset is
//! bounds-checked, so a truncated or corrupted file is a [`VmfbError`] with
//! the byte offset, never a panic.
//!
//! ```
//! let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../fnabi/tests/fixtures/iree/add.vmfb")).unwrap();
//! let m = fnabi_abi::vmfb::Module::parse(&bytes).unwrap();
//! assert_eq!(m.name, "module");
//! let add = m.export("add").unwrap();
//! assert_eq!(add.signature.calling_convention, Some("0rr_r"));
//! assert_eq!(
//!     add.signature.attr("iree.abi.declaration"),
//!     Some("sync func @add(%input0: tensor<4xf32>, %input1: tensor<4xf32>) -> (%output0: tensor<4xf32>)")
//! );
//! let err = fnabi_abi::vmfb::Module::parse(&bytes[..100]).unwrap_err();
//! assert_eq!(err.to_string(), "vmfb at byte 64: the module FlatBuffer is cut short (7296 bytes needed, 36 available)");
//! ```

mod flatbuf;
#[cfg(test)]
mod tests;
pub mod zip;

use crate::cconv::CallingConvention;
use crate::error::ParseError;
use crate::reflection::{Declaration, FunctionReflection, ReflectionError};
use flatbuf::{Buffer, Table};
use std::fmt;

/// The FlatBuffer file identifier of IREE bytecode modules.
pub const IDENTIFIER: &[u8; 4] = b"IREE";

/// A malformed `.vmfb` file: where and what.
///
/// ```
/// use fnabi_abi::vmfb::{Module, VmfbErrorKind};
/// let e = Module::parse(b"PNG? not a module").unwrap_err();
/// assert_eq!((e.offset(), e.kind()), (0, &VmfbErrorKind::NotAModule));
/// assert!(e.to_string().starts_with("vmfb at byte 0: not an IREE module"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VmfbError {
    offset: usize,
    kind: VmfbErrorKind,
}

/// What is wrong with a `.vmfb` file.
///
/// ```
/// use fnabi_abi::vmfb::{Module, VmfbErrorKind};
/// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../fnabi/tests/fixtures/iree/add.vmfb")).unwrap();
/// // flip one byte of the module's FlatBuffer: its ZIP entry's CRC-32 no longer matches
/// let mut bad = bytes.clone();
/// bad[200] ^= 1;
/// let e = Module::parse(&bad).unwrap_err();
/// assert!(matches!(e.kind(), VmfbErrorKind::ChecksumMismatch { .. }), "{e}");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VmfbErrorKind {
    /// Neither a ZIP nor a size-prefixed FlatBuffer with identifier `IREE`.
    NotAModule,
    /// The file ends before a structure it declares.
    Truncated {
        /// The structure.
        what: &'static str,
        /// Bytes it needs from its start.
        needed: usize,
        /// Bytes the file has from there.
        available: usize,
    },
    /// A ZIP feature the reader does not follow (a compressed or encrypted
    /// entry; IREE stores its entries).
    UnsupportedZip(&'static str),
    /// The FlatBuffer's file identifier is not `IREE`.
    BadIdentifier([u8; 4]),
    /// An offset or extent that points outside the FlatBuffer.
    OutOfBounds {
        /// The field being read.
        what: &'static str,
    },
    /// A malformed table or vtable.
    BadTable {
        /// The field being read.
        what: &'static str,
        /// What is wrong.
        reason: &'static str,
    },
    /// A string that is not UTF-8 or not NUL-terminated.
    BadString {
        /// The field being read.
        what: &'static str,
        /// What is wrong.
        reason: &'static str,
    },
    /// A required field is absent.
    MissingField(&'static str),
    /// A malformed ZIP container: what was expected.
    BadZip(&'static str),
    /// A ZIP entry whose bytes do not match the CRC-32 recorded for it
    /// (the file was corrupted after it was written).
    ChecksumMismatch {
        /// The entry's name.
        entry: String,
        /// The CRC-32 the archive records.
        recorded: u32,
        /// The CRC-32 of the bytes in the file.
        computed: u32,
    },
    /// An export's `internal_ordinal` names no function signature.
    BadOrdinal {
        /// The export's name.
        export: String,
        /// The ordinal.
        ordinal: u32,
        /// The number of signatures.
        signatures: usize,
    },
}

impl VmfbError {
    pub(crate) fn new(offset: usize, kind: VmfbErrorKind) -> Self {
        VmfbError { offset, kind }
    }

    /// Byte offset in the file.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// What is wrong.
    pub fn kind(&self) -> &VmfbErrorKind {
        &self.kind
    }
}

impl fmt::Display for VmfbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "vmfb at byte {}: ", self.offset)?;
        match &self.kind {
            VmfbErrorKind::NotAModule => {
                f.write_str("not an IREE module (neither a ZIP nor a size-prefixed FlatBuffer with identifier IREE)")
            }
            VmfbErrorKind::Truncated { what, needed, available } => {
                write!(f, "{what} is cut short ({needed} bytes needed, {available} available)")
            }
            VmfbErrorKind::UnsupportedZip(why) => write!(f, "unsupported ZIP: {why}"),
            VmfbErrorKind::BadZip(what) => write!(f, "malformed ZIP: expected {what}"),
            VmfbErrorKind::ChecksumMismatch { entry, recorded, computed } => write!(
                f,
                "ZIP entry {entry:?} is corrupted: its CRC-32 is {computed:08x}, the archive records {recorded:08x}"
            ),
            VmfbErrorKind::BadIdentifier(id) => {
                write!(f, "FlatBuffer identifier is {:?}, expected \"IREE\"", String::from_utf8_lossy(id))
            }
            VmfbErrorKind::OutOfBounds { what } => write!(f, "{what}: offset points outside the FlatBuffer"),
            VmfbErrorKind::BadTable { what, reason } => write!(f, "{what}: {reason}"),
            VmfbErrorKind::BadString { what, reason } => write!(f, "{what}: string {reason}"),
            VmfbErrorKind::MissingField(what) => write!(f, "{what} is missing"),
            VmfbErrorKind::BadOrdinal { export, ordinal, signatures } => write!(
                f,
                "export {export:?} has internal ordinal {ordinal} but there are {signatures} function signatures"
            ),
        }
    }
}

impl std::error::Error for VmfbError {}

/// How the module is stored.
///
/// ```
/// use fnabi_abi::vmfb::{Container, Module};
/// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../fnabi/tests/fixtures/iree/add.vmfb")).unwrap();
/// let m = Module::parse(&bytes).unwrap();
/// assert_eq!(m.container, Container::Zip { entry: "module.fb" });
/// // the FlatBuffer alone, with its 4-byte size prefix, reads as a bare module
/// let bare = &bytes[m.flatbuffer_offset - 4..m.flatbuffer_offset + m.flatbuffer_len];
/// let b = Module::parse(bare).unwrap();
/// assert_eq!((b.container, b.name), (Container::Bare, "module"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Container<'a> {
    /// A ZIP whose first entry (named here) holds the FlatBuffer.
    Zip {
        /// The first entry's name (`module.fb`).
        entry: &'a str,
    },
    /// A bare size-prefixed FlatBuffer.
    Bare,
}

/// A function signature: its calling convention and reflection attributes.
///
/// ```
/// use fnabi_abi::cconv::{CconvItem, CconvType};
/// use fnabi_abi::vmfb::Module;
/// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../fnabi/tests/fixtures/iree/add.vmfb")).unwrap();
/// let m = Module::parse(&bytes).unwrap();
/// // scale(tensor<4xf32>, f32) -> tensor<4xf32>: a ref and an f32 in, a ref out
/// let sig = &m.export("scale").unwrap().signature;
/// let cc = sig.cconv().unwrap().unwrap();
/// assert_eq!(cc.args(), &[CconvItem::Single(CconvType::Ref), CconvItem::Single(CconvType::F32)]);
/// let decl = sig.declaration().unwrap().unwrap();
/// assert_eq!((decl.name.as_str(), decl.args.len(), decl.results.len()), ("scale", 2, 1));
/// assert!(sig.reflection().is_none()); // no `iree.abi` records in this module
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Signature<'a> {
    /// The calling-convention string (`0rr_r`), when present.
    pub calling_convention: Option<&'a str>,
    /// The reflection attributes (`iree.abi`, `iree.abi.declaration`, …) in
    /// file order (IREE sorts them by key).
    pub attrs: Vec<(&'a str, &'a str)>,
}

impl<'a> Signature<'a> {
    /// The value of attribute `key`.
    pub fn attr(&self, key: &str) -> Option<&'a str> {
        self.attrs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// The parsed calling convention.
    pub fn cconv(&self) -> Option<Result<CallingConvention, ParseError>> {
        self.calling_convention.map(CallingConvention::parse)
    }

    /// The parsed `iree.abi` records.
    pub fn reflection(&self) -> Option<Result<FunctionReflection, ReflectionError>> {
        self.attr("iree.abi").map(FunctionReflection::parse)
    }

    /// The parsed `iree.abi.declaration`.
    pub fn declaration(&self) -> Option<Result<Declaration, ParseError>> {
        self.attr("iree.abi.declaration").map(Declaration::parse)
    }
}

/// An exported function.
///
/// ```
/// use fnabi_abi::vmfb::Module;
/// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../fnabi/tests/fixtures/iree/add.vmfb")).unwrap();
/// let m = Module::parse(&bytes).unwrap();
/// // add.mlir defines add, add_one, scale and add_i32; the compiler adds __init
/// let mut names: Vec<&str> = m.exports.iter().map(|e| e.name).collect();
/// names.sort();
/// assert_eq!(names, ["__init", "add", "add_i32", "add_one", "scale"]);
/// assert_eq!(m.export("add_i32").unwrap().signature.calling_convention, Some("0ii_i"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Export<'a> {
    /// The name (without the module prefix).
    pub name: &'a str,
    /// The index of its signature in `function_signatures`.
    pub internal_ordinal: u32,
    /// The signature.
    pub signature: Signature<'a>,
}

/// An imported function.
///
/// ```
/// use fnabi_abi::vmfb::Module;
/// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../fnabi/tests/fixtures/iree/add.vmfb")).unwrap();
/// let m = Module::parse(&bytes).unwrap();
/// // every import of a compiled module is a HAL function
/// assert!(m.imports.iter().all(|i| i.full_name.starts_with("hal.")));
/// let create = m.imports.iter().find(|i| i.full_name == "hal.fence.create").unwrap();
/// assert!(!create.is_optional());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Import<'a> {
    /// The fully qualified name (`hal.buffer_view.create`).
    pub full_name: &'a str,
    /// The expected signature, when recorded.
    pub signature: Option<Signature<'a>>,
    /// The import flags as stored (`ImportFlagBits`, bit flags: 1 required,
    /// 2 optional; an absent field reads as required).
    pub flags: u32,
}

impl Import<'_> {
    /// True when the module runs without this import (the `OPTIONAL` bit).
    pub fn is_optional(&self) -> bool {
        self.flags & 2 != 0
    }
}

/// A module this module depends on.
///
/// ```
/// use fnabi_abi::vmfb::Module;
/// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../fnabi/tests/fixtures/iree/add.vmfb")).unwrap();
/// let m = Module::parse(&bytes).unwrap();
/// let hal = m.dependencies.iter().find(|d| d.name == "hal").unwrap();
/// assert!(!hal.is_optional());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dependency<'a> {
    /// The module name (`hal`).
    pub name: &'a str,
    /// The minimum version required.
    pub minimum_version: u32,
    /// The dependency flags as stored (`ModuleDependencyFlagBits`, bit
    /// flags: 1 required, 2 optional; an absent field reads as required).
    pub flags: u32,
}

impl Dependency<'_> {
    /// True when the module loads without this dependency.
    pub fn is_optional(&self) -> bool {
        self.flags & 2 != 0
    }
}

/// What a `.vmfb` file declares.
///
/// ```
/// use fnabi_abi::vmfb::Module;
/// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../fnabi/tests/fixtures/iree/add.vmfb")).unwrap();
/// let m = Module::parse(&bytes).unwrap();
/// // the ZIP's first entry starts at 64 with a 4-byte size prefix (7292, as
/// // Python's zipfile lists module.fb)
/// assert_eq!((m.flatbuffer_offset, m.flatbuffer_len), (68, 7292));
/// assert_eq!(&bytes[m.flatbuffer_offset + 4..m.flatbuffer_offset + 8], b"IREE");
/// assert!(m.types.contains(&"!hal.buffer_view"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Module<'a> {
    /// How the FlatBuffer is stored.
    pub container: Container<'a>,
    /// Byte offset of the FlatBuffer (after its size prefix) in the file.
    pub flatbuffer_offset: usize,
    /// Its size (the size prefix).
    pub flatbuffer_len: usize,
    /// The module name (`module`).
    pub name: &'a str,
    /// The module version.
    pub version: u32,
    /// The bytecode version.
    pub bytecode_version: u32,
    /// Module-level attributes.
    pub attrs: Vec<(&'a str, &'a str)>,
    /// Exported functions, in file order.
    pub exports: Vec<Export<'a>>,
    /// Imported functions, in file order.
    pub imports: Vec<Import<'a>>,
    /// Module dependencies.
    pub dependencies: Vec<Dependency<'a>>,
    /// The VM types the module uses (`!hal.buffer_view`, `!vm.list<?>`, …).
    pub types: Vec<&'a str>,
}

// Field slots (vtable indices) of IREE's `bytecode_module_def.fbs`.
mod slot {
    pub const MODULE_NAME: usize = 0;
    pub const MODULE_VERSION: usize = 1;
    pub const MODULE_ATTRS: usize = 3;
    pub const MODULE_TYPES: usize = 4;
    pub const MODULE_DEPENDENCIES: usize = 5;
    pub const MODULE_IMPORTED_FUNCTIONS: usize = 6;
    pub const MODULE_EXPORTED_FUNCTIONS: usize = 7;
    pub const MODULE_FUNCTION_SIGNATURES: usize = 8;
    pub const MODULE_BYTECODE_VERSION: usize = 13;
    pub const EXPORT_LOCAL_NAME: usize = 0;
    pub const EXPORT_INTERNAL_ORDINAL: usize = 1;
    pub const SIGNATURE_CALLING_CONVENTION: usize = 0;
    pub const SIGNATURE_ATTRS: usize = 1;
    pub const ATTR_KEY: usize = 0;
    pub const ATTR_VALUE: usize = 1;
    pub const IMPORT_FULL_NAME: usize = 0;
    pub const IMPORT_SIGNATURE: usize = 1;
    pub const IMPORT_FLAGS: usize = 2;
    pub const TYPE_FULL_NAME: usize = 0;
    pub const DEPENDENCY_NAME: usize = 0;
    pub const DEPENDENCY_MINIMUM_VERSION: usize = 1;
    pub const DEPENDENCY_FLAGS: usize = 2;
}

const ZIP_LOCAL_HEADER: &[u8; 4] = b"PK\x03\x04";

fn truncated(offset: usize, what: &'static str, needed: usize, have: usize) -> VmfbError {
    VmfbError::new(offset, VmfbErrorKind::Truncated { what, needed, available: have.saturating_sub(offset) })
}

fn le16(b: &[u8], at: usize) -> usize {
    usize::from(u16::from_le_bytes([b[at], b[at + 1]]))
}

/// Locates the FlatBuffer: (container, offset of the size prefix).
fn locate(bytes: &[u8]) -> Result<(Container<'_>, usize), VmfbError> {
    if bytes.starts_with(ZIP_LOCAL_HEADER) {
        if bytes.len() < 30 {
            return Err(truncated(0, "the ZIP local file header", 30, bytes.len()));
        }
        let flags = le16(bytes, 6);
        let method = le16(bytes, 8);
        if flags & 1 != 0 {
            return Err(VmfbError::new(6, VmfbErrorKind::UnsupportedZip("the first entry is encrypted")));
        }
        if method != 0 {
            return Err(VmfbError::new(8, VmfbErrorKind::UnsupportedZip("the first entry is compressed")));
        }
        let (name_len, extra_len) = (le16(bytes, 26), le16(bytes, 28));
        let data = 30 + name_len + extra_len;
        if bytes.len() < data {
            return Err(truncated(0, "the ZIP local file header", data, bytes.len()));
        }
        let entry = std::str::from_utf8(&bytes[30..30 + name_len]).map_err(|_| {
            VmfbError::new(30, VmfbErrorKind::BadString { what: "the ZIP entry name", reason: "not UTF-8" })
        })?;
        Ok((Container::Zip { entry }, data))
    } else if bytes.get(8..12) == Some(IDENTIFIER) {
        Ok((Container::Bare, 0))
    } else {
        Err(VmfbError::new(0, VmfbErrorKind::NotAModule))
    }
}

fn attrs<'a>(t: &Table<'a>, slot: usize, what: &'static str) -> Result<Vec<(&'a str, &'a str)>, VmfbError> {
    let v = t.vector(slot, what)?;
    let mut out = Vec::with_capacity(v.len());
    for i in 0..v.len() {
        let a = v.table(i)?;
        let k = a.string(slot::ATTR_KEY, "attribute key")?.unwrap_or_default();
        let val = a.string(slot::ATTR_VALUE, "attribute value")?.unwrap_or_default();
        out.push((k, val));
    }
    Ok(out)
}

/// An error unless the FunctionSignatureDef `t` has a calling convention.
fn require_calling_convention(t: &Table<'_>, what: &'static str) -> Result<(), VmfbError> {
    match t.string(slot::SIGNATURE_CALLING_CONVENTION, "calling_convention")? {
        Some(_) => Ok(()),
        None => Err(VmfbError::new(t.offset(), VmfbErrorKind::MissingField(what))),
    }
}

fn signature<'a>(t: &Table<'a>) -> Result<Signature<'a>, VmfbError> {
    Ok(Signature {
        calling_convention: t.string(slot::SIGNATURE_CALLING_CONVENTION, "calling_convention")?,
        attrs: attrs(t, slot::SIGNATURE_ATTRS, "function signature attrs")?,
    })
}

impl<'a> Module<'a> {
    /// Reads a `.vmfb` file (see the [module docs](self)), checking its ZIP
    /// container first ([`zip::verify`]: every entry inside the file, every
    /// stored entry's CRC-32), so a truncated or corrupted file is an error.
    pub fn parse(bytes: &'a [u8]) -> Result<Module<'a>, VmfbError> {
        let m = Module::parse_unverified(bytes)?;
        if let Container::Zip { .. } = m.container {
            let entries = zip::verify(bytes)?;
            if !entries.iter().any(|e| e.data_offset + 4 == m.flatbuffer_offset) {
                return Err(VmfbError::new(0, VmfbErrorKind::BadZip("the central directory to list the first entry")));
            }
        }
        Ok(m)
    }

    /// Reads a `.vmfb` file as [`parse`](Module::parse) does, without
    /// checking the ZIP container's other entries and checksums: only the
    /// module FlatBuffer is read (bounds-checked). For callers that have
    /// verified the file otherwise.
    pub fn parse_unverified(bytes: &'a [u8]) -> Result<Module<'a>, VmfbError> {
        let (container, prefix) = locate(bytes)?;
        if bytes.len() < prefix + 4 {
            return Err(truncated(prefix, "the module FlatBuffer size prefix", 4, bytes.len()));
        }
        let len = u32::from_le_bytes([bytes[prefix], bytes[prefix + 1], bytes[prefix + 2], bytes[prefix + 3]]) as usize;
        let start = prefix + 4;
        let fb = start
            .checked_add(len)
            .and_then(|end| bytes.get(start..end))
            .ok_or_else(|| truncated(prefix, "the module FlatBuffer", len.saturating_add(4), bytes.len()))?;
        if fb.len() < 8 {
            return Err(truncated(start, "the module FlatBuffer header", 8, start + fb.len()));
        }
        let ident = [fb[4], fb[5], fb[6], fb[7]];
        if &ident != IDENTIFIER {
            return Err(VmfbError::new(start + 4, VmfbErrorKind::BadIdentifier(ident)));
        }
        let buf = Buffer::new(fb, start);
        let root = buf.root("the BytecodeModuleDef root table")?;
        let name = root
            .string(slot::MODULE_NAME, "module name")?
            .ok_or_else(|| VmfbError::new(root.offset(), VmfbErrorKind::MissingField("the module name")))?;

        let sigs_v = root.vector(slot::MODULE_FUNCTION_SIGNATURES, "function_signatures")?;
        // IREE's bytecode verifier reads the calling convention of every
        // function a call names (internal or imported) without a null
        // check: a module without one crashed it (found by the `vmfb_run`
        // fuzz target). Required here, for every signature.
        for i in 0..sigs_v.len() {
            require_calling_convention(&sigs_v.table(i)?, "a function signature's calling_convention")?;
        }
        let exports_v = root.vector(slot::MODULE_EXPORTED_FUNCTIONS, "exported_functions")?;
        let mut exports = Vec::with_capacity(exports_v.len());
        for i in 0..exports_v.len() {
            let e = exports_v.table(i)?;
            let name = e
                .string(slot::EXPORT_LOCAL_NAME, "export local_name")?
                .ok_or_else(|| VmfbError::new(e.offset(), VmfbErrorKind::MissingField("an export's local_name")))?;
            let ordinal = e.u32(slot::EXPORT_INTERNAL_ORDINAL, 0, "export internal_ordinal")?;
            if ordinal as usize >= sigs_v.len() {
                return Err(VmfbError::new(
                    e.offset(),
                    VmfbErrorKind::BadOrdinal { export: name.to_owned(), ordinal, signatures: sigs_v.len() },
                ));
            }
            let sig = signature(&sigs_v.table(ordinal as usize)?)?;
            exports.push(Export { name, internal_ordinal: ordinal, signature: sig });
        }

        let imports_v = root.vector(slot::MODULE_IMPORTED_FUNCTIONS, "imported_functions")?;
        let mut imports = Vec::with_capacity(imports_v.len());
        for i in 0..imports_v.len() {
            let t = imports_v.table(i)?;
            let full_name = t
                .string(slot::IMPORT_FULL_NAME, "import full_name")?
                .ok_or_else(|| VmfbError::new(t.offset(), VmfbErrorKind::MissingField("an import's full_name")))?;
            let s = t
                .table(slot::IMPORT_SIGNATURE, "import signature")?
                .ok_or_else(|| VmfbError::new(t.offset(), VmfbErrorKind::MissingField("an import's signature")))?;
            require_calling_convention(&s, "an import's calling_convention")?;
            let signature = Some(signature(&s)?);
            let flags = t.u32(slot::IMPORT_FLAGS, 1, "import flags")?;
            imports.push(Import { full_name, signature, flags });
        }

        let deps_v = root.vector(slot::MODULE_DEPENDENCIES, "dependencies")?;
        let mut dependencies = Vec::with_capacity(deps_v.len());
        for i in 0..deps_v.len() {
            let t = deps_v.table(i)?;
            dependencies.push(Dependency {
                name: t.string(slot::DEPENDENCY_NAME, "dependency name")?.unwrap_or_default(),
                minimum_version: t.u32(slot::DEPENDENCY_MINIMUM_VERSION, 0, "dependency minimum_version")?,
                flags: t.u32(slot::DEPENDENCY_FLAGS, 1, "dependency flags")?,
            });
        }

        let types_v = root.vector(slot::MODULE_TYPES, "types")?;
        let mut types = Vec::with_capacity(types_v.len());
        for i in 0..types_v.len() {
            // Required: IREE's bytecode verifier reads every type's name
            // without a check (a module without one crashed it, found by
            // the `vmfb_run` fuzz target).
            let t = types_v.table(i)?;
            let name = t
                .string(slot::TYPE_FULL_NAME, "type full_name")?
                .ok_or_else(|| VmfbError::new(t.offset(), VmfbErrorKind::MissingField("a type's full_name")))?;
            types.push(name);
        }

        Ok(Module {
            container,
            flatbuffer_offset: start,
            flatbuffer_len: len,
            name,
            version: root.u32(slot::MODULE_VERSION, 0, "module version")?,
            bytecode_version: root.u32(slot::MODULE_BYTECODE_VERSION, 0, "bytecode_version")?,
            attrs: attrs(&root, slot::MODULE_ATTRS, "module attrs")?,
            exports,
            imports,
            dependencies,
            types,
        })
    }

    /// The export named `name`.
    pub fn export(&self, name: &str) -> Option<&Export<'a>> {
        self.exports.iter().find(|e| e.name == name)
    }
}

/// How many leading bytes of a file [`looks_like_vmfb`] reads: the bare
/// form's identifier ends at byte 12.
pub const MAGIC_BYTES: usize = 12;

/// True when `bytes` look like a `.vmfb` (a ZIP, or a FlatBuffer with the
/// `IREE` identifier after a size prefix); for dispatch on file kinds. It
/// reads at most the first [`MAGIC_BYTES`].
pub fn looks_like_vmfb(bytes: &[u8]) -> bool {
    bytes.starts_with(ZIP_LOCAL_HEADER) || bytes.get(8..12) == Some(IDENTIFIER)
}
