//! A minimal, zero-copy FlatBuffer reader over `&[u8]` for the `.vmfb`
//! reader: tables through their vtables, scalars, strings, vectors of
//! offsets. Every offset is bounds-checked with overflow-checked arithmetic
//! before it is followed, and every error carries the absolute byte offset
//! in the file, so a truncated or corrupted buffer is an error, never a
//! panic. Alignment is not required (values are read byte-wise).

use crate::vmfb::{VmfbError, VmfbErrorKind};

/// A FlatBuffer: its bytes and their offset in the file.
#[derive(Clone, Copy)]
pub(crate) struct Buffer<'a> {
    data: &'a [u8],
    base: usize,
}

fn error(offset: usize, kind: VmfbErrorKind) -> VmfbError {
    VmfbError::new(offset, kind)
}

impl<'a> Buffer<'a> {
    pub fn new(data: &'a [u8], base: usize) -> Self {
        Buffer { data, base }
    }

    fn abs(&self, pos: usize) -> usize {
        self.base.saturating_add(pos)
    }

    fn bytes(&self, pos: usize, n: usize, what: &'static str) -> Result<&'a [u8], VmfbError> {
        pos.checked_add(n)
            .and_then(|end| self.data.get(pos..end))
            .ok_or_else(|| error(self.abs(pos), VmfbErrorKind::OutOfBounds { what }))
    }

    fn u16_at(&self, pos: usize, what: &'static str) -> Result<u16, VmfbError> {
        let b = self.bytes(pos, 2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub fn u32_at(&self, pos: usize, what: &'static str) -> Result<u32, VmfbError> {
        let b = self.bytes(pos, 4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The position an unsigned offset stored at `pos` points to.
    fn follow(&self, pos: usize, what: &'static str) -> Result<usize, VmfbError> {
        let rel = self.u32_at(pos, what)? as usize;
        match pos.checked_add(rel) {
            Some(t) if t < self.data.len() => Ok(t),
            _ => Err(error(self.abs(pos), VmfbErrorKind::OutOfBounds { what })),
        }
    }

    /// The root table.
    pub fn root(&self, what: &'static str) -> Result<Table<'a>, VmfbError> {
        let pos = self.follow(0, what)?;
        self.table(pos, what)
    }

    /// The table at `pos`.
    pub fn table(&self, pos: usize, what: &'static str) -> Result<Table<'a>, VmfbError> {
        let soff = self.u32_at(pos, what)? as i32;
        let vtable = (pos as i64).checked_sub(i64::from(soff)).filter(|&v| v >= 0).map(|v| v as usize);
        let Some(vtable) = vtable else {
            return Err(error(self.abs(pos), VmfbErrorKind::BadTable { what, reason: "vtable offset out of bounds" }));
        };
        let vt_len = self.u16_at(vtable, what).map_err(|_| {
            error(self.abs(pos), VmfbErrorKind::BadTable { what, reason: "vtable offset out of bounds" })
        })? as usize;
        if vt_len < 4 || !vt_len.is_multiple_of(2) {
            return Err(error(self.abs(vtable), VmfbErrorKind::BadTable { what, reason: "malformed vtable size" }));
        }
        self.bytes(vtable, vt_len, what)?;
        let table_len = self.u16_at(vtable + 2, what)? as usize;
        if table_len < 4 {
            return Err(error(self.abs(vtable), VmfbErrorKind::BadTable { what, reason: "malformed table size" }));
        }
        self.bytes(pos, table_len, what)?;
        Ok(Table { buf: *self, pos, vtable, vt_len, table_len })
    }

    /// The string at `pos` (a length, the bytes, a NUL).
    fn string(&self, pos: usize, what: &'static str) -> Result<&'a str, VmfbError> {
        let n = self.u32_at(pos, what)? as usize;
        let bytes = self.bytes(pos + 4, n, what)?;
        if self.data.get(pos + 4 + n) != Some(&0) {
            return Err(error(self.abs(pos), VmfbErrorKind::BadString { what, reason: "missing NUL terminator" }));
        }
        std::str::from_utf8(bytes)
            .map_err(|_| error(self.abs(pos), VmfbErrorKind::BadString { what, reason: "not UTF-8" }))
    }
}

/// A table: its position and its vtable, both checked to lie in the buffer.
#[derive(Clone, Copy)]
pub(crate) struct Table<'a> {
    buf: Buffer<'a>,
    pos: usize,
    vtable: usize,
    vt_len: usize,
    table_len: usize,
}

impl<'a> Table<'a> {
    /// Absolute offset of the table in the file.
    pub fn offset(&self) -> usize {
        self.buf.abs(self.pos)
    }

    /// The table's position and its vtable's position and length (in the
    /// buffer): tests give a table a vtable of its own.
    #[cfg(test)]
    pub fn layout(&self) -> (usize, usize, usize) {
        (self.pos, self.vtable, self.vt_len)
    }

    /// The position of field `slot` holding `size` bytes; `None` when absent.
    fn field(&self, slot: usize, size: usize, what: &'static str) -> Result<Option<usize>, VmfbError> {
        let entry = 4 + 2 * slot;
        if entry + 2 > self.vt_len {
            return Ok(None);
        }
        let off = self.buf.u16_at(self.vtable + entry, what)? as usize;
        if off == 0 {
            return Ok(None);
        }
        if off < 4 || off + size > self.table_len {
            return Err(error(
                self.buf.abs(self.vtable + entry),
                VmfbErrorKind::BadTable { what, reason: "field outside its table" },
            ));
        }
        Ok(Some(self.pos + off))
    }

    /// A `uint32`/`int32` field, or `default`.
    pub fn u32(&self, slot: usize, default: u32, what: &'static str) -> Result<u32, VmfbError> {
        match self.field(slot, 4, what)? {
            Some(p) => self.buf.u32_at(p, what),
            None => Ok(default),
        }
    }

    /// A string field.
    pub fn string(&self, slot: usize, what: &'static str) -> Result<Option<&'a str>, VmfbError> {
        match self.field(slot, 4, what)? {
            Some(p) => {
                let t = self.buf.follow(p, what)?;
                self.buf.string(t, what).map(Some)
            }
            None => Ok(None),
        }
    }

    /// A table field.
    pub fn table(&self, slot: usize, what: &'static str) -> Result<Option<Table<'a>>, VmfbError> {
        match self.field(slot, 4, what)? {
            Some(p) => {
                let t = self.buf.follow(p, what)?;
                self.buf.table(t, what).map(Some)
            }
            None => Ok(None),
        }
    }

    /// A vector-of-offsets field (of tables or strings); empty when absent.
    pub fn vector(&self, slot: usize, what: &'static str) -> Result<Vector<'a>, VmfbError> {
        let Some(p) = self.field(slot, 4, what)? else {
            return Ok(Vector { buf: self.buf, start: 0, len: 0, what });
        };
        let v = self.buf.follow(p, what)?;
        let len = self.buf.u32_at(v, what)? as usize;
        let bytes = len.checked_mul(4).ok_or_else(|| error(self.buf.abs(v), VmfbErrorKind::OutOfBounds { what }))?;
        self.buf.bytes(v + 4, bytes, what)?;
        Ok(Vector { buf: self.buf, start: v + 4, len, what })
    }
}

/// A vector of offsets, its extent checked to lie in the buffer.
#[derive(Clone, Copy)]
pub(crate) struct Vector<'a> {
    buf: Buffer<'a>,
    start: usize,
    len: usize,
    what: &'static str,
}

impl<'a> Vector<'a> {
    pub fn len(&self) -> usize {
        self.len
    }

    /// The table element `i` (`i < len`).
    pub fn table(&self, i: usize) -> Result<Table<'a>, VmfbError> {
        let p = self.start + 4 * i;
        let t = self.buf.follow(p, self.what)?;
        self.buf.table(t, self.what)
    }
}
