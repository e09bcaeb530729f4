//! A small, bounds-checked reader of the dynamic symbols of an ELF64 file
//! (a shared library): which functions it defines — such as the
//! `_mlir_ciface_` wrappers of MLIR-compiled code — and which it needs from
//! elsewhere. Zero-copy over `&[u8]`; every offset and size is checked, so
//! any input gives symbols or a [`ParseError`] with a byte offset, never a
//! panic. Only what dynamic symbols need is read (the ELF header, the
//! section headers, `.dynsym` and its string table).
//!
//! ```
//! # let so = std::fs::read(std::env::current_exe().unwrap()).unwrap();
//! use fnabi_mlir::elf::ElfFile;
//! let elf = ElfFile::parse(&so);
//! # let _ = elf;
//! assert!(ElfFile::parse(b"not an ELF file").is_err());
//! ```

use fnabi_core::error::{ParseError, ParseErrorKind};

/// The prefix of MLIR's C-interface wrappers.
pub const CIFACE_PREFIX: &str = "_mlir_ciface_";

/// What a symbol names (`STT_*`).
///
/// ```
/// use fnabi_mlir::elf::{ElfFile, SymbolKind};
/// # // A minimal little-endian ELF64: a .dynsym of (name, st_info, st_shndx)
/// # // symbols, each with st_value 0x1000 and st_size 16, and its .dynstr.
/// # fn tiny_elf(syms: &[(&str, u8, u16)]) -> Vec<u8> {
/// #     let (mut strtab, mut symtab) = (vec![0u8], vec![0u8; 24]);
/// #     for (n, info, shndx) in syms {
/// #         let mut e = [0u8; 24];
/// #         e[..4].copy_from_slice(&(strtab.len() as u32).to_le_bytes());
/// #         e[4] = *info;
/// #         e[6..8].copy_from_slice(&shndx.to_le_bytes());
/// #         e[8..16].copy_from_slice(&0x1000u64.to_le_bytes());
/// #         e[16..24].copy_from_slice(&16u64.to_le_bytes());
/// #         symtab.extend_from_slice(&e);
/// #         strtab.extend_from_slice(n.as_bytes());
/// #         strtab.push(0);
/// #     }
/// #     let mut f = vec![0u8; 64];
/// #     f[..6].copy_from_slice(b"\x7fELF\x02\x01"); // ELF64, little-endian
/// #     let sym_off = f.len() as u64;
/// #     f.extend_from_slice(&symtab);
/// #     let str_off = f.len() as u64;
/// #     f.extend_from_slice(&strtab);
/// #     while f.len() % 8 != 0 { f.push(0); }
/// #     let shoff = f.len() as u64;
/// #     let mut sh = vec![0u8; 3 * 64]; // [0] null, [1] .dynsym, [2] .dynstr
/// #     let mut put = |at: usize, v: &[u8]| sh[at..at + v.len()].copy_from_slice(v);
/// #     put(64 + 4, &11u32.to_le_bytes()); // SHT_DYNSYM
/// #     put(64 + 24, &sym_off.to_le_bytes());
/// #     put(64 + 32, &(symtab.len() as u64).to_le_bytes());
/// #     put(64 + 40, &2u32.to_le_bytes()); // its strings: section 2
/// #     put(64 + 56, &24u64.to_le_bytes());
/// #     put(128 + 4, &3u32.to_le_bytes()); // SHT_STRTAB
/// #     put(128 + 24, &str_off.to_le_bytes());
/// #     put(128 + 32, &(strtab.len() as u64).to_le_bytes());
/// #     f.extend_from_slice(&sh);
/// #     f[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
/// #     f[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
/// #     f[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
/// #     f
/// # }
/// // st_info: binding << 4 | type; type 1 is STT_OBJECT, 2 STT_FUNC, 6 STT_TLS
/// let so = tiny_elf(&[("table", 0x11, 5), ("f", 0x12, 5), ("tls", 0x16, 5)]);
/// let elf = ElfFile::parse(&so).unwrap();
/// let kinds: Vec<SymbolKind> = elf.dynamic_symbols().map(|s| s.unwrap().kind).collect();
/// assert_eq!(kinds, [SymbolKind::Object, SymbolKind::Func, SymbolKind::Tls]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    /// `STT_NOTYPE`.
    NoType,
    /// `STT_OBJECT`: data.
    Object,
    /// `STT_FUNC`: code.
    Func,
    /// `STT_SECTION`.
    Section,
    /// `STT_FILE`.
    File,
    /// `STT_COMMON`.
    Common,
    /// `STT_TLS`.
    Tls,
    /// Any other code.
    Other(u8),
}

/// A symbol's binding (`STB_*`).
///
/// ```
/// use fnabi_mlir::elf::{Binding, ElfFile};
/// # // A minimal little-endian ELF64: a .dynsym of (name, st_info, st_shndx)
/// # // symbols, each with st_value 0x1000 and st_size 16, and its .dynstr.
/// # fn tiny_elf(syms: &[(&str, u8, u16)]) -> Vec<u8> {
/// #     let (mut strtab, mut symtab) = (vec![0u8], vec![0u8; 24]);
/// #     for (n, info, shndx) in syms {
/// #         let mut e = [0u8; 24];
/// #         e[..4].copy_from_slice(&(strtab.len() as u32).to_le_bytes());
/// #         e[4] = *info;
/// #         e[6..8].copy_from_slice(&shndx.to_le_bytes());
/// #         e[8..16].copy_from_slice(&0x1000u64.to_le_bytes());
/// #         e[16..24].copy_from_slice(&16u64.to_le_bytes());
/// #         symtab.extend_from_slice(&e);
/// #         strtab.extend_from_slice(n.as_bytes());
/// #         strtab.push(0);
/// #     }
/// #     let mut f = vec![0u8; 64];
/// #     f[..6].copy_from_slice(b"\x7fELF\x02\x01"); // ELF64, little-endian
/// #     let sym_off = f.len() as u64;
/// #     f.extend_from_slice(&symtab);
/// #     let str_off = f.len() as u64;
/// #     f.extend_from_slice(&strtab);
/// #     while f.len() % 8 != 0 { f.push(0); }
/// #     let shoff = f.len() as u64;
/// #     let mut sh = vec![0u8; 3 * 64]; // [0] null, [1] .dynsym, [2] .dynstr
/// #     let mut put = |at: usize, v: &[u8]| sh[at..at + v.len()].copy_from_slice(v);
/// #     put(64 + 4, &11u32.to_le_bytes()); // SHT_DYNSYM
/// #     put(64 + 24, &sym_off.to_le_bytes());
/// #     put(64 + 32, &(symtab.len() as u64).to_le_bytes());
/// #     put(64 + 40, &2u32.to_le_bytes()); // its strings: section 2
/// #     put(64 + 56, &24u64.to_le_bytes());
/// #     put(128 + 4, &3u32.to_le_bytes()); // SHT_STRTAB
/// #     put(128 + 24, &str_off.to_le_bytes());
/// #     put(128 + 32, &(strtab.len() as u64).to_le_bytes());
/// #     f.extend_from_slice(&sh);
/// #     f[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
/// #     f[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
/// #     f[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
/// #     f
/// # }
/// // st_info: binding << 4 | type; binding 0 is STB_LOCAL, 1 STB_GLOBAL, 2 STB_WEAK
/// let so = tiny_elf(&[("l", 0x02, 5), ("g", 0x12, 5), ("w", 0x22, 5)]);
/// let elf = ElfFile::parse(&so).unwrap();
/// let b: Vec<Binding> = elf.dynamic_symbols().map(|s| s.unwrap().binding).collect();
/// assert_eq!(b, [Binding::Local, Binding::Global, Binding::Weak]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    /// `STB_LOCAL`.
    Local,
    /// `STB_GLOBAL`.
    Global,
    /// `STB_WEAK`.
    Weak,
    /// Any other code.
    Other(u8),
}

/// One dynamic symbol.
///
/// ```
/// use fnabi_mlir::elf::{Binding, ElfFile, SymbolKind};
/// # // A minimal little-endian ELF64: a .dynsym of (name, st_info, st_shndx)
/// # // symbols, each with st_value 0x1000 and st_size 16, and its .dynstr.
/// # fn tiny_elf(syms: &[(&str, u8, u16)]) -> Vec<u8> {
/// #     let (mut strtab, mut symtab) = (vec![0u8], vec![0u8; 24]);
/// #     for (n, info, shndx) in syms {
/// #         let mut e = [0u8; 24];
/// #         e[..4].copy_from_slice(&(strtab.len() as u32).to_le_bytes());
/// #         e[4] = *info;
/// #         e[6..8].copy_from_slice(&shndx.to_le_bytes());
/// #         e[8..16].copy_from_slice(&0x1000u64.to_le_bytes());
/// #         e[16..24].copy_from_slice(&16u64.to_le_bytes());
/// #         symtab.extend_from_slice(&e);
/// #         strtab.extend_from_slice(n.as_bytes());
/// #         strtab.push(0);
/// #     }
/// #     let mut f = vec![0u8; 64];
/// #     f[..6].copy_from_slice(b"\x7fELF\x02\x01"); // ELF64, little-endian
/// #     let sym_off = f.len() as u64;
/// #     f.extend_from_slice(&symtab);
/// #     let str_off = f.len() as u64;
/// #     f.extend_from_slice(&strtab);
/// #     while f.len() % 8 != 0 { f.push(0); }
/// #     let shoff = f.len() as u64;
/// #     let mut sh = vec![0u8; 3 * 64]; // [0] null, [1] .dynsym, [2] .dynstr
/// #     let mut put = |at: usize, v: &[u8]| sh[at..at + v.len()].copy_from_slice(v);
/// #     put(64 + 4, &11u32.to_le_bytes()); // SHT_DYNSYM
/// #     put(64 + 24, &sym_off.to_le_bytes());
/// #     put(64 + 32, &(symtab.len() as u64).to_le_bytes());
/// #     put(64 + 40, &2u32.to_le_bytes()); // its strings: section 2
/// #     put(64 + 56, &24u64.to_le_bytes());
/// #     put(128 + 4, &3u32.to_le_bytes()); // SHT_STRTAB
/// #     put(128 + 24, &str_off.to_le_bytes());
/// #     put(128 + 32, &(strtab.len() as u64).to_le_bytes());
/// #     f.extend_from_slice(&sh);
/// #     f[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
/// #     f[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
/// #     f[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
/// #     f
/// # }
/// let so = tiny_elf(&[("_mlir_ciface_f", 0x12, 5), ("malloc", 0x12, 0)]);
/// let elf = ElfFile::parse(&so).unwrap();
/// let f = elf.dynamic_symbol(1).unwrap(); // 0 is the null symbol
/// assert_eq!(f.name_str(), Some("_mlir_ciface_f"));
/// assert_eq!((f.kind, f.binding, f.defined, f.value, f.size), (SymbolKind::Func, Binding::Global, true, 0x1000, 16));
/// assert!(!elf.dynamic_symbol(2).unwrap().defined); // st_shndx 0: SHN_UNDEF
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DynSymbol<'a> {
    /// The name's bytes (not necessarily UTF-8).
    pub name: &'a [u8],
    /// What it names.
    pub kind: SymbolKind,
    /// Its binding.
    pub binding: Binding,
    /// True when this file defines it (`st_shndx != SHN_UNDEF`).
    pub defined: bool,
    /// `st_value`.
    pub value: u64,
    /// `st_size`.
    pub size: u64,
}

impl<'a> DynSymbol<'a> {
    /// The name, if it is UTF-8.
    pub fn name_str(&self) -> Option<&'a str> {
        std::str::from_utf8(self.name).ok()
    }
}

/// A checked view of an ELF64 file's dynamic symbol table.
///
/// ```
/// use fnabi_mlir::elf::ElfFile;
/// # // A minimal little-endian ELF64: a .dynsym of (name, st_info, st_shndx)
/// # // symbols, each with st_value 0x1000 and st_size 16, and its .dynstr.
/// # fn tiny_elf(syms: &[(&str, u8, u16)]) -> Vec<u8> {
/// #     let (mut strtab, mut symtab) = (vec![0u8], vec![0u8; 24]);
/// #     for (n, info, shndx) in syms {
/// #         let mut e = [0u8; 24];
/// #         e[..4].copy_from_slice(&(strtab.len() as u32).to_le_bytes());
/// #         e[4] = *info;
/// #         e[6..8].copy_from_slice(&shndx.to_le_bytes());
/// #         e[8..16].copy_from_slice(&0x1000u64.to_le_bytes());
/// #         e[16..24].copy_from_slice(&16u64.to_le_bytes());
/// #         symtab.extend_from_slice(&e);
/// #         strtab.extend_from_slice(n.as_bytes());
/// #         strtab.push(0);
/// #     }
/// #     let mut f = vec![0u8; 64];
/// #     f[..6].copy_from_slice(b"\x7fELF\x02\x01"); // ELF64, little-endian
/// #     let sym_off = f.len() as u64;
/// #     f.extend_from_slice(&symtab);
/// #     let str_off = f.len() as u64;
/// #     f.extend_from_slice(&strtab);
/// #     while f.len() % 8 != 0 { f.push(0); }
/// #     let shoff = f.len() as u64;
/// #     let mut sh = vec![0u8; 3 * 64]; // [0] null, [1] .dynsym, [2] .dynstr
/// #     let mut put = |at: usize, v: &[u8]| sh[at..at + v.len()].copy_from_slice(v);
/// #     put(64 + 4, &11u32.to_le_bytes()); // SHT_DYNSYM
/// #     put(64 + 24, &sym_off.to_le_bytes());
/// #     put(64 + 32, &(symtab.len() as u64).to_le_bytes());
/// #     put(64 + 40, &2u32.to_le_bytes()); // its strings: section 2
/// #     put(64 + 56, &24u64.to_le_bytes());
/// #     put(128 + 4, &3u32.to_le_bytes()); // SHT_STRTAB
/// #     put(128 + 24, &str_off.to_le_bytes());
/// #     put(128 + 32, &(strtab.len() as u64).to_le_bytes());
/// #     f.extend_from_slice(&sh);
/// #     f[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
/// #     f[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
/// #     f[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
/// #     f
/// # }
/// let so = tiny_elf(&[
///     ("_mlir_ciface_mul", 0x12, 5), // global functions this file defines
///     ("_mlir_ciface_add", 0x12, 5),
///     ("mul", 0x12, 5),
///     ("expf", 0x12, 0),             // needed from elsewhere
///     ("_mlir_ciface_local", 0x02, 5), // local: not callable
/// ]);
/// let elf = ElfFile::parse(&so).unwrap();
/// assert_eq!(elf.dynamic_symbol_count(), 6);
/// assert_eq!(elf.mlir_functions().unwrap(), ["add", "mul"]);
/// assert_eq!(elf.undefined_functions().unwrap(), ["expf"]);
/// assert!(elf.dynamic_symbol(6).is_err());
/// // cut inside the section header table: an error with an offset, not a panic
/// assert!(ElfFile::parse(&so[..so.len() - 1]).is_err());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ElfFile<'a> {
    data: &'a [u8],
    big_endian: bool,
    /// `(offset, count)` of `.dynsym`; `None` without one.
    dynsym: Option<(usize, usize)>,
    /// `(offset, size)` of its string table.
    dynstr: (usize, usize),
}

fn err(offset: usize, what: &'static str) -> ParseError {
    ParseError::new(offset, ParseErrorKind::Expected(what))
}

struct Reader<'a> {
    data: &'a [u8],
    be: bool,
}

impl Reader<'_> {
    fn bytes<const N: usize>(&self, at: usize) -> Result<[u8; N], ParseError> {
        at.checked_add(N)
            .and_then(|end| self.data.get(at..end))
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| err(at.min(self.data.len()), "more bytes (the file ends inside a header or table)"))
    }
    fn u16(&self, at: usize) -> Result<u16, ParseError> {
        let b = self.bytes::<2>(at)?;
        Ok(if self.be { u16::from_be_bytes(b) } else { u16::from_le_bytes(b) })
    }
    fn u32(&self, at: usize) -> Result<u32, ParseError> {
        let b = self.bytes::<4>(at)?;
        Ok(if self.be { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) })
    }
    fn u64(&self, at: usize) -> Result<u64, ParseError> {
        let b = self.bytes::<8>(at)?;
        Ok(if self.be { u64::from_be_bytes(b) } else { u64::from_le_bytes(b) })
    }
    /// A `(offset, size)` range that must lie inside the file.
    fn range(&self, off: u64, size: u64, at: usize, what: &'static str) -> Result<(usize, usize), ParseError> {
        let (o, s) = (usize::try_from(off).ok(), usize::try_from(size).ok());
        match (o, s) {
            (Some(o), Some(s)) if o.checked_add(s).is_some_and(|e| e <= self.data.len()) => Ok((o, s)),
            _ => Err(err(at, what)),
        }
    }
}

const SHT_NULL: u32 = 0;
const SHT_STRTAB: u32 = 3;
const SHT_NOBITS: u32 = 8;
const SHT_DYNSYM: u32 = 11;
const SHN_XINDEX: usize = 0xffff;

fn ranges_overlap(a: (usize, usize), b: (usize, usize)) -> bool {
    a.1 > 0 && b.1 > 0 && a.0 < b.0 + b.1 && b.0 < a.0 + a.1
}
const SECTION_HEADER_SIZE: usize = 64;
const SYMBOL_SIZE: usize = 24;

/// True when `bytes` start with the ELF magic number (`\x7fELF`): an object
/// file, shared library or executable; for dispatch on file kinds.
///
/// ```
/// assert!(fnabi_mlir::elf::looks_like_elf(b"\x7fELF\x02\x01"));
/// assert!(!fnabi_mlir::elf::looks_like_elf(b"\x93NUMPY") && !fnabi_mlir::elf::looks_like_elf(b""));
/// ```
pub fn looks_like_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF")
}

impl<'a> ElfFile<'a> {
    /// Checks the ELF header and locates `.dynsym` and its string table.
    pub fn parse(data: &'a [u8]) -> Result<ElfFile<'a>, ParseError> {
        if !looks_like_elf(data) {
            return Err(err(0, "the ELF magic number \\x7fELF"));
        }
        match data.get(4) {
            Some(2) => {}
            Some(_) => return Err(err(4, "a 64-bit ELF file (class 2)")),
            None => return Err(err(4, "the ELF class byte")),
        }
        let big_endian = match data.get(5) {
            Some(1) => false,
            Some(2) => true,
            _ => return Err(err(5, "an ELF data encoding of 1 (little-endian) or 2 (big-endian)")),
        };
        let r = Reader { data, be: big_endian };
        let shoff = r.u64(0x28)?;
        let shentsize = r.u16(0x3a)?;
        let mut shnum = u64::from(r.u16(0x3c)?);
        if shoff == 0 {
            return Err(err(0x28, "section headers (this file has none, so no dynamic symbol table is found)"));
        }
        if usize::from(shentsize) != SECTION_HEADER_SIZE {
            return Err(err(0x3a, "64-byte section headers"));
        }
        let shoff_u = usize::try_from(shoff).map_err(|_| err(0x28, "a section header offset inside the file"))?;
        if shnum == 0 {
            // Extended numbering: the count is in section 0's sh_size.
            shnum =
                r.u64(shoff_u.checked_add(32).ok_or_else(|| err(0x28, "a section header offset inside the file"))?)?;
        }
        let table_size = shnum.saturating_mul(SECTION_HEADER_SIZE as u64);
        r.range(shoff, table_size, 0x28, "a section header table inside the file")?;
        let shnum = shnum as usize; // bounded by the file size just above
        let shstrndx = usize::from(r.u16(0x3e)?);
        if shstrndx != SHN_XINDEX && shstrndx >= shnum {
            return Err(err(0x3e, "a section-name string table index naming an existing section"));
        }
        // Every section with bytes in the file lies inside it, and every
        // link names an existing section.
        for k in 1..shnum {
            let h = shoff_u + k * SECTION_HEADER_SIZE;
            let ty = r.u32(h + 4)?;
            if ty != SHT_NOBITS && ty != SHT_NULL {
                r.range(r.u64(h + 24)?, r.u64(h + 32)?, h + 24, "a section inside the file")?;
            }
            if r.u32(h + 40)? as usize >= shnum {
                return Err(err(h + 40, "a section link naming an existing section"));
            }
        }
        let mut dynsym = None;
        let mut dynstr = (0, 0);
        for k in 0..shnum {
            let h = shoff_u + k * SECTION_HEADER_SIZE;
            if r.u32(h + 4)? != SHT_DYNSYM {
                continue;
            }
            if dynsym.is_some() {
                return Err(err(h, "at most one dynamic symbol table"));
            }
            let (off, size) = r.range(r.u64(h + 24)?, r.u64(h + 32)?, h + 24, "a .dynsym inside the file")?;
            if r.u64(h + 56)? != SYMBOL_SIZE as u64 || size % SYMBOL_SIZE != 0 {
                return Err(err(h + 56, "24-byte .dynsym entries"));
            }
            let link = r.u32(h + 40)? as usize;
            if link == 0 || link >= shnum || link == k {
                return Err(err(h + 40, "a .dynsym string-table link to another existing section"));
            }
            let sh = shoff_u + link * SECTION_HEADER_SIZE;
            if r.u32(sh + 4)? != SHT_STRTAB {
                return Err(err(h + 40, "a .dynsym link to a string table (SHT_STRTAB)"));
            }
            dynstr = r.range(r.u64(sh + 24)?, r.u64(sh + 32)?, sh + 24, "a .dynstr inside the file")?;
            // A string table starts and ends with NUL (ELF gABI).
            if dynstr.1 == 0 || data[dynstr.0] != 0 || data[dynstr.0 + dynstr.1 - 1] != 0 {
                return Err(err(sh + 24, "a .dynstr that starts and ends with a NUL byte"));
            }
            // sh_info: one past the last local symbol.
            if r.u32(h + 44)? as usize > size / SYMBOL_SIZE {
                return Err(err(h + 44, "a .dynsym sh_info (first global symbol) inside the table"));
            }
            if ranges_overlap((off, size), dynstr) {
                return Err(err(h + 24, "a .dynsym that does not overlap its string table"));
            }
            dynsym = Some((off, size / SYMBOL_SIZE));
        }
        Ok(ElfFile { data, big_endian, dynsym, dynstr })
    }

    /// The contents of the section named `name` (`.fnabi_abi`), read
    /// through the section header table and its name table, every offset
    /// checked; `None` when there is no such section or it has no bytes
    /// in the file (`SHT_NOBITS`).
    pub fn section(&self, name: &str) -> Result<Option<&'a [u8]>, ParseError> {
        let r = Reader { data: self.data, be: self.big_endian };
        let shoff = usize::try_from(r.u64(0x28)?).map_err(|_| err(0x28, "a section header offset inside the file"))?;
        let shnum = usize::from(r.u16(0x3c)?);
        let shstrndx = usize::from(r.u16(0x3e)?);
        if shoff == 0 || shnum == 0 || shstrndx >= shnum {
            return Ok(None);
        }
        let header = |k: usize| shoff.checked_add(k * SECTION_HEADER_SIZE).ok_or_else(|| err(0x28, "section headers"));
        let sh = header(shstrndx)?;
        let (names, names_size) =
            r.range(r.u64(sh + 24)?, r.u64(sh + 32)?, sh + 24, "a section name table inside the file")?;
        let table = &self.data[names..names + names_size];
        for k in 0..shnum {
            let h = header(k)?;
            let at = r.u32(h)? as usize;
            let Some(rest) = table.get(at..) else { continue };
            let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
            if &rest[..end] != name.as_bytes() {
                continue;
            }
            if r.u32(h + 4)? == SHT_NOBITS {
                return Ok(None);
            }
            let (off, size) = r.range(r.u64(h + 24)?, r.u64(h + 32)?, h + 24, "a section inside the file")?;
            return Ok(Some(&self.data[off..off + size]));
        }
        Ok(None)
    }

    /// Number of dynamic symbols (including the null symbol 0).
    pub fn dynamic_symbol_count(&self) -> usize {
        self.dynsym.map_or(0, |(_, n)| n)
    }

    /// Dynamic symbol `i`.
    pub fn dynamic_symbol(&self, i: usize) -> Result<DynSymbol<'a>, ParseError> {
        let (off, n) = self.dynsym.ok_or_else(|| err(0, "a dynamic symbol table"))?;
        if i >= n {
            return Err(err(off, "a symbol index inside .dynsym"));
        }
        let r = Reader { data: self.data, be: self.big_endian };
        let at = off + i * SYMBOL_SIZE;
        let name_off = r.u32(at)? as usize;
        let info = r.bytes::<1>(at + 4)?[0];
        let shndx = r.u16(at + 6)?;
        let (value, size) = (r.u64(at + 8)?, r.u64(at + 16)?);
        let (so, ss) = self.dynstr;
        let strtab = &self.data[so..so + ss];
        let name = strtab
            .get(name_off..)
            .and_then(|s| s.iter().position(|&b| b == 0).map(|end| &s[..end]))
            .ok_or_else(|| err(at, "a symbol name that is NUL-terminated inside .dynstr"))?;
        let kind = match info & 0xf {
            0 => SymbolKind::NoType,
            1 => SymbolKind::Object,
            2 => SymbolKind::Func,
            3 => SymbolKind::Section,
            4 => SymbolKind::File,
            5 => SymbolKind::Common,
            6 => SymbolKind::Tls,
            k => SymbolKind::Other(k),
        };
        let binding = match info >> 4 {
            0 => Binding::Local,
            1 => Binding::Global,
            2 => Binding::Weak,
            b => Binding::Other(b),
        };
        Ok(DynSymbol { name, kind, binding, defined: shndx != 0, value, size })
    }

    /// Every dynamic symbol after the null symbol, in table order.
    pub fn dynamic_symbols(&self) -> impl Iterator<Item = Result<DynSymbol<'a>, ParseError>> + '_ {
        (1..self.dynamic_symbol_count()).map(|i| self.dynamic_symbol(i))
    }

    /// The MLIR functions the file defines: the names of its global
    /// `_mlir_ciface_NAME` function symbols, without the prefix, sorted.
    pub fn mlir_functions(&self) -> Result<Vec<&'a str>, ParseError> {
        let mut out = Vec::new();
        for s in self.dynamic_symbols() {
            let s = s?;
            if s.defined
                && s.kind == SymbolKind::Func
                && s.binding != Binding::Local
                && let Some(n) = s.name_str().and_then(|n| n.strip_prefix(CIFACE_PREFIX))
            {
                out.push(n);
            }
        }
        out.sort_unstable();
        Ok(out)
    }

    /// The names of the functions the file needs from elsewhere (undefined
    /// global or weak function/untyped symbols), sorted.
    pub fn undefined_functions(&self) -> Result<Vec<&'a str>, ParseError> {
        let mut out = Vec::new();
        for s in self.dynamic_symbols() {
            let s = s?;
            if !s.defined
                && matches!(s.kind, SymbolKind::Func | SymbolKind::NoType)
                && s.binding != Binding::Local
                && let Some(n) = s.name_str().filter(|n| !n.is_empty())
            {
                out.push(n);
            }
        }
        out.sort_unstable();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal little-endian ELF64 with a .dynsym of `syms` (name, info, shndx).
    pub(crate) fn tiny_elf(syms: &[(&str, u8, u16)]) -> Vec<u8> {
        let mut strtab = vec![0u8];
        let mut names = Vec::new();
        for (n, _, _) in syms {
            names.push(strtab.len() as u32);
            strtab.extend_from_slice(n.as_bytes());
            strtab.push(0);
        }
        let mut symtab = vec![0u8; SYMBOL_SIZE];
        for ((_, info, shndx), name) in syms.iter().zip(&names) {
            let mut e = [0u8; SYMBOL_SIZE];
            e[..4].copy_from_slice(&name.to_le_bytes());
            e[4] = *info;
            e[6..8].copy_from_slice(&shndx.to_le_bytes());
            e[8..16].copy_from_slice(&0x1000u64.to_le_bytes());
            symtab.extend_from_slice(&e);
        }
        let mut f = vec![0u8; 64];
        f[..4].copy_from_slice(b"\x7fELF");
        f[4] = 2;
        f[5] = 1;
        let sym_off = f.len();
        f.extend_from_slice(&symtab);
        let str_off = f.len();
        f.extend_from_slice(&strtab);
        while !f.len().is_multiple_of(8) {
            f.push(0);
        }
        let shoff = f.len();
        let mut sh = vec![0u8; 3 * 64];
        // [1] .dynsym -> link 2
        sh[64 + 4..64 + 8].copy_from_slice(&SHT_DYNSYM.to_le_bytes());
        sh[64 + 24..64 + 32].copy_from_slice(&(sym_off as u64).to_le_bytes());
        sh[64 + 32..64 + 40].copy_from_slice(&(symtab.len() as u64).to_le_bytes());
        sh[64 + 40..64 + 44].copy_from_slice(&2u32.to_le_bytes());
        sh[64 + 56..64 + 64].copy_from_slice(&24u64.to_le_bytes());
        // [2] .dynstr
        sh[128 + 4..128 + 8].copy_from_slice(&3u32.to_le_bytes());
        sh[128 + 24..128 + 32].copy_from_slice(&(str_off as u64).to_le_bytes());
        sh[128 + 32..128 + 40].copy_from_slice(&(strtab.len() as u64).to_le_bytes());
        f.extend_from_slice(&sh);
        f[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        f[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        f[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
        f
    }

    #[test]
    fn lists_defined_and_undefined_functions() {
        let f = tiny_elf(&[
            ("_mlir_ciface_b", 0x12, 7),
            ("_mlir_ciface_a", 0x12, 7),
            ("a", 0x12, 7),
            ("_mlir_ciface_host", 0x12, 0),
            ("malloc", 0x12, 0),
            ("_mlir_ciface_data", 0x11, 7),
            ("_mlir_ciface_local", 0x02, 7),
        ]);
        let e = ElfFile::parse(&f).unwrap();
        assert_eq!(e.dynamic_symbol_count(), 8);
        assert_eq!(e.mlir_functions().unwrap(), ["a", "b"]);
        assert_eq!(e.undefined_functions().unwrap(), ["_mlir_ciface_host", "malloc"]);
        let s = e.dynamic_symbol(1).unwrap();
        assert_eq!((s.kind, s.binding, s.defined, s.value), (SymbolKind::Func, Binding::Global, true, 0x1000));
        assert!(e.dynamic_symbol(8).is_err());
    }

    #[test]
    fn every_truncation_and_corruption_is_an_error() {
        let f = tiny_elf(&[("_mlir_ciface_x", 0x12, 7)]);
        for n in 0..f.len() {
            let r = ElfFile::parse(&f[..n]).and_then(|e| e.mlir_functions().map(|v| v.len()));
            assert!(r.is_err(), "truncated to {n} bytes");
            assert!(r.unwrap_err().offset() <= f.len());
        }
        let e = |f: &[u8]| ElfFile::parse(f).unwrap_err().to_string();
        let mut g = f.clone();
        g[4] = 1;
        assert_eq!(e(&g), "at byte 4: expected a 64-bit ELF file (class 2)");
        let mut g = f.clone();
        g[0x3a] = 40;
        assert_eq!(e(&g), "at byte 58: expected 64-byte section headers");
        let mut g = f.clone();
        g[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(e(&g).contains("section header table inside the file"));
        // Issue 18, defect 4: a .dynsym linked to itself was read as an
        // empty symbol table ("0 MLIR functions").
        let dynsym_link = f.len() - 2 * 64 + 40;
        let mut g = f.clone();
        g[dynsym_link..dynsym_link + 4].copy_from_slice(&1u32.to_le_bytes());
        assert!(e(&g).contains("string-table link to another existing section"), "{}", e(&g));
        // Linked to a section that is no string table (the null section 0 is
        // refused already; make section 2 a PROGBITS).
        let mut g = f.clone();
        let strtab_type = f.len() - 64 + 4;
        g[strtab_type..strtab_type + 4].copy_from_slice(&1u32.to_le_bytes());
        assert!(e(&g).contains("link to a string table"), "{}", e(&g));
        // A link past the section table, in any section.
        let mut g = f.clone();
        g[f.len() - 64 + 40..f.len() - 64 + 44].copy_from_slice(&9u32.to_le_bytes());
        assert!(e(&g).contains("section link naming an existing section"), "{}", e(&g));
        // A section that reaches past the end of the file.
        let mut g = f.clone();
        g[f.len() - 64 + 32..f.len() - 64 + 40].copy_from_slice(&1000u64.to_le_bytes());
        assert!(e(&g).contains("a section inside the file"), "{}", e(&g));
        // sh_info past the table, and a string table without its NUL ends.
        let mut g = f.clone();
        g[dynsym_link + 4..dynsym_link + 8].copy_from_slice(&9u32.to_le_bytes());
        assert!(e(&g).contains("sh_info"), "{}", e(&g));
        let mut g = f.clone();
        let last_str = f.len() - 3 * 64 - 1;
        assert_eq!(g[last_str], 0);
        let str_end = (0..last_str + 1).rev().find(|&i| g[i] == b'x').unwrap() + 1;
        g[str_end] = b'y';
        assert!(e(&g).contains("NUL byte"), "{}", e(&g));
        // A name offset past the string table.
        let mut g = f.clone();
        g[64 + 24..64 + 28].copy_from_slice(&1000u32.to_le_bytes());
        assert!(ElfFile::parse(&g).unwrap().mlir_functions().unwrap_err().to_string().contains("NUL-terminated"));
    }
}
