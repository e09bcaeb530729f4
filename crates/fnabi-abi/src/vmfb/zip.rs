//! The ZIP container of a `.vmfb`, checked end to end: the end-of-central-
//! directory record (ZIP64 too), every central-directory entry, its local
//! header and its data inside the file, and the CRC-32 of every stored
//! entry. A truncated or bit-flipped module is an error here, before a
//! runtime sees the bytes (IREE's own loader trusts them).

use super::{VmfbError, VmfbErrorKind};

const EOCD: &[u8; 4] = b"PK\x05\x06";
const EOCD64_LOCATOR: &[u8; 4] = b"PK\x06\x07";
const EOCD64: &[u8; 4] = b"PK\x06\x06";
const CENTRAL: &[u8; 4] = b"PK\x01\x02";
const LOCAL: &[u8; 4] = b"PK\x03\x04";
const EOCD_SIZE: usize = 22;
const CENTRAL_SIZE: usize = 46;
const LOCAL_SIZE: usize = 30;

/// One checked entry of the archive.
///
/// ```
/// use fnabi_abi::vmfb::zip::{crc32, verify};
/// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../fnabi/tests/fixtures/iree/add.vmfb")).unwrap();
/// let entries = verify(&bytes).unwrap();
/// // as Python's zipfile lists them
/// assert_eq!(entries[0].name, "module.fb");
/// assert_eq!((entries[0].size, entries[0].crc32), (7292, 0x4478_55b9));
/// assert_eq!((entries[1].name, entries[1].size), ("add_linked_embedded_elf_x86_64.so", 4800));
/// let e = &entries[1];
/// assert_eq!(crc32(&bytes[e.data_offset..e.data_offset + e.size]), e.crc32);
/// assert_eq!(crc32(b"123456789"), 0xCBF4_3926); // the standard CRC-32 check value
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZipEntry<'a> {
    /// The entry's name.
    pub name: &'a str,
    /// Byte offset of its data in the file.
    pub data_offset: usize,
    /// Its stored size.
    pub size: usize,
    /// The CRC-32 recorded for it (checked for stored entries).
    pub crc32: u32,
}

fn bad(offset: usize, what: &'static str) -> VmfbError {
    VmfbError::new(offset, VmfbErrorKind::BadZip(what))
}

fn get<const N: usize>(b: &[u8], at: usize, what: &'static str) -> Result<[u8; N], VmfbError> {
    at.checked_add(N).and_then(|end| b.get(at..end)).and_then(|s| s.try_into().ok()).ok_or_else(|| {
        VmfbError::new(
            at.min(b.len()),
            VmfbErrorKind::Truncated { what, needed: N, available: b.len().saturating_sub(at) },
        )
    })
}

fn u16_at(b: &[u8], at: usize, what: &'static str) -> Result<u16, VmfbError> {
    get::<2>(b, at, what).map(u16::from_le_bytes)
}

fn u32_at(b: &[u8], at: usize, what: &'static str) -> Result<u32, VmfbError> {
    get::<4>(b, at, what).map(u32::from_le_bytes)
}

fn u64_at(b: &[u8], at: usize, what: &'static str) -> Result<u64, VmfbError> {
    get::<8>(b, at, what).map(u64::from_le_bytes)
}

fn to_usize(v: u64, at: usize, what: &'static str) -> Result<usize, VmfbError> {
    usize::try_from(v).map_err(|_| bad(at, what))
}

/// Finds the end-of-central-directory record (searching back over a
/// comment of up to 64 KiB).
fn find_eocd(b: &[u8]) -> Result<usize, VmfbError> {
    let last = b
        .len()
        .checked_sub(EOCD_SIZE)
        .ok_or_else(|| bad(b.len(), "an end-of-central-directory record at the end of the file (is it truncated?)"))?;
    let first = last.saturating_sub(u16::MAX as usize);
    (first..=last)
        .rev()
        .find(|&i| {
            &b[i..i + 4] == EOCD && i + EOCD_SIZE + usize::from(u16::from_le_bytes([b[i + 20], b[i + 21]])) == b.len()
        })
        .ok_or_else(|| bad(b.len(), "an end-of-central-directory record at the end of the file (is it truncated?)"))
}

/// Checks the whole archive: structure, bounds, that every entry is stored
/// (neither compressed nor encrypted) and its CRC-32. Returns the entries
/// in central-directory order.
pub fn verify(b: &[u8]) -> Result<Vec<ZipEntry<'_>>, VmfbError> {
    let eocd = find_eocd(b)?;
    let mut count = u64::from(u16_at(b, eocd + 10, "the end-of-central-directory record")?);
    let mut cd_size = u64::from(u32_at(b, eocd + 12, "the end-of-central-directory record")?);
    let mut cd_offset = u64::from(u32_at(b, eocd + 16, "the end-of-central-directory record")?);
    let mut cd_end_limit = eocd;
    if count == 0xffff || cd_size == 0xffff_ffff || cd_offset == 0xffff_ffff {
        let loc = eocd.checked_sub(20).ok_or_else(|| bad(eocd, "a ZIP64 end-of-central-directory locator"))?;
        if &get::<4>(b, loc, "the ZIP64 locator")? != EOCD64_LOCATOR {
            return Err(bad(loc, "a ZIP64 end-of-central-directory locator before the end record"));
        }
        let rec = to_usize(u64_at(b, loc + 8, "the ZIP64 locator")?, loc + 8, "a ZIP64 record offset inside the file")?;
        if rec.checked_add(56).is_none_or(|e| e > loc) || &get::<4>(b, rec, "the ZIP64 record")? != EOCD64 {
            return Err(bad(loc + 8, "a ZIP64 end-of-central-directory record where the locator points"));
        }
        count = u64_at(b, rec + 32, "the ZIP64 record")?;
        cd_size = u64_at(b, rec + 40, "the ZIP64 record")?;
        cd_offset = u64_at(b, rec + 48, "the ZIP64 record")?;
        cd_end_limit = rec;
    }
    let cd_start = to_usize(cd_offset, eocd + 16, "a central directory offset inside the file")?;
    let cd_end = cd_start
        .checked_add(to_usize(cd_size, eocd + 12, "a central directory size inside the file")?)
        .filter(|&e| e <= cd_end_limit)
        .ok_or_else(|| bad(eocd + 12, "a central directory inside the file, before its end record"))?;
    // Each entry takes at least 46 bytes: the count is bounded by the file.
    if count > ((cd_end - cd_start) / CENTRAL_SIZE) as u64 {
        return Err(bad(eocd + 10, "an entry count that fits the central directory"));
    }
    let mut entries = Vec::with_capacity(count as usize);
    let mut at = cd_start;
    for _ in 0..count {
        if at + CENTRAL_SIZE > cd_end || &b[at..at + 4] != CENTRAL {
            return Err(bad(at, "a central directory entry (PK\\x01\\x02)"));
        }
        let flags = u16_at(b, at + 8, "a central directory entry")?;
        let method = u16_at(b, at + 10, "a central directory entry")?;
        let recorded = u32_at(b, at + 16, "a central directory entry")?;
        let mut csize = u64::from(u32_at(b, at + 20, "a central directory entry")?);
        let mut usize_ = u64::from(u32_at(b, at + 24, "a central directory entry")?);
        let name_len = usize::from(u16_at(b, at + 28, "a central directory entry")?);
        let extra_len = usize::from(u16_at(b, at + 30, "a central directory entry")?);
        let comment_len = usize::from(u16_at(b, at + 32, "a central directory entry")?);
        let mut local = u64::from(u32_at(b, at + 42, "a central directory entry")?);
        let name_at = at + CENTRAL_SIZE;
        let next = name_at + name_len + extra_len + comment_len;
        if next > cd_end {
            return Err(bad(at + 28, "an entry name and extra field inside the central directory"));
        }
        let name = std::str::from_utf8(&b[name_at..name_at + name_len]).map_err(|_| {
            VmfbError::new(name_at, VmfbErrorKind::BadString { what: "a ZIP entry name", reason: "not UTF-8" })
        })?;
        // ZIP64: the fields set to 0xffffffff follow in the extra field 0x0001.
        let (mut x, x_end) = (name_at + name_len, name_at + name_len + extra_len);
        while x + 4 <= x_end {
            let (id, len) =
                (u16::from_le_bytes([b[x], b[x + 1]]), usize::from(u16::from_le_bytes([b[x + 2], b[x + 3]])));
            let body = x + 4;
            if body + len > x_end {
                return Err(bad(x, "an extra field inside its entry"));
            }
            if id == 1 {
                let mut f = body;
                for v in [&mut usize_, &mut csize, &mut local] {
                    if *v == 0xffff_ffff {
                        if f + 8 > body + len {
                            return Err(bad(x, "a ZIP64 extra field with every size it stands for"));
                        }
                        *v = u64_at(b, f, "a ZIP64 extra field")?;
                        f += 8;
                    }
                }
            }
            x = body + len;
        }
        let local = to_usize(local, at + 42, "a local header offset inside the file")?;
        if local.checked_add(LOCAL_SIZE).is_none_or(|e| e > cd_start) || &b[local..local + 4] != LOCAL {
            return Err(bad(at + 42, "a local file header (PK\\x03\\x04) where the central directory points"));
        }
        let data_offset = local
            + LOCAL_SIZE
            + usize::from(u16::from_le_bytes([b[local + 26], b[local + 27]]))
            + usize::from(u16::from_le_bytes([b[local + 28], b[local + 29]]));
        let size = to_usize(csize, at + 20, "an entry size inside the file")?;
        let data = data_offset
            .checked_add(size)
            .filter(|&e| e <= cd_start)
            .map(|e| &b[data_offset..e])
            .ok_or_else(|| bad(at + 20, "entry data that ends before the central directory"))?;
        // IREE's runtime reads the entries in place, so a `.vmfb` stores
        // them; a compressed or encrypted one would also go without its
        // CRC-32 check (one flipped bit of the method let any flip of the
        // FlatBuffer through to the runtime: found by the `vmfb_run` target).
        if flags & 1 != 0 {
            return Err(VmfbError::new(at + 8, VmfbErrorKind::UnsupportedZip("an encrypted entry")));
        }
        if method != 0 {
            return Err(VmfbError::new(at + 10, VmfbErrorKind::UnsupportedZip("a compressed entry")));
        }
        if csize != usize_ {
            return Err(bad(at + 20, "equal stored and original sizes for a stored entry"));
        }
        let computed = crc32(data);
        if computed != recorded {
            return Err(VmfbError::new(
                data_offset,
                VmfbErrorKind::ChecksumMismatch { entry: name.to_owned(), recorded, computed },
            ));
        }
        entries.push(ZipEntry { name, data_offset, size, crc32: recorded });
        at = next;
    }
    Ok(entries)
}

/// The slice-by-8 tables of the reflected CRC-32 (polynomial 0xEDB88320).
const TABLES: [[u32; 256]; 8] = {
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut j = 1;
    while j < 8 {
        let mut i = 0;
        while i < 256 {
            let p = t[j - 1][i];
            t[j][i] = (p >> 8) ^ t[0][(p & 0xff) as usize];
            i += 1;
        }
        j += 1;
    }
    t
};

/// The CRC-32 (ISO-HDLC, as ZIP uses it) of `data`.
pub fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    let mut chunks = data.chunks_exact(8);
    for ch in &mut chunks {
        let lo = u32::from_le_bytes([ch[0], ch[1], ch[2], ch[3]]) ^ c;
        let hi = u32::from_le_bytes([ch[4], ch[5], ch[6], ch[7]]);
        c = TABLES[7][(lo & 0xff) as usize]
            ^ TABLES[6][((lo >> 8) & 0xff) as usize]
            ^ TABLES[5][((lo >> 16) & 0xff) as usize]
            ^ TABLES[4][(lo >> 24) as usize]
            ^ TABLES[3][(hi & 0xff) as usize]
            ^ TABLES[2][((hi >> 8) & 0xff) as usize]
            ^ TABLES[1][((hi >> 16) & 0xff) as usize]
            ^ TABLES[0][(hi >> 24) as usize];
    }
    for &byte in chunks.remainder() {
        c = TABLES[0][((c ^ u32::from(byte)) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_the_standard_check_values() {
        // The CRC catalogue's check value, and zlib.crc32 of the others.
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"The quick brown fox jumps over the lazy dog"), 0x414f_a339);
    }
}
