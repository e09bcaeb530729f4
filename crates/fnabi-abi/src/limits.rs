//! The limits on what an input may ask for, in one place: every walk of a
//! nested input (signatures, structures, `iree.abi` records, declarations,
//! JSON values) is bounded by [`MAX_DEPTH`], so recursion is bounded and a
//! hostile input gets an error, never a stack overflow; and the bytes one
//! array, one call's inputs and one file read may take ([`ByteLimit`],
//! checked before anything is allocated).

/// The deepest nesting fnabi accepts anywhere a structure, record or value
/// is read or built: a path has at most this many keys, records and JSON
/// values nest at most this deep.
pub const MAX_DEPTH: usize = 128;

/// The most gap slots (sequence slots with no key, which read and write
/// `None`) that one structure may have in all. A signature can declare a
/// sequence key of two billion; without a bound, unflattening it would try
/// to build a list of two billion `None`s.
pub const MAX_GAP_SLOTS: usize = 1 << 16;

/// The most bytes a parser reserves for a list ahead of reading it (from a
/// quick count of its items, before they are checked): a list counted
/// larger still reads, growing as its items are checked, so a hostile
/// text cannot make the parser reserve many times its own size for items
/// that fail (`k0k0k0…` counts a sequence entry per two bytes). The same
/// rule as serde's cautious size hints.
pub(crate) const MAX_RESERVED_BYTES: usize = 1 << 20;

/// `count` items of `T`, or fewer when they would take more than
/// [`MAX_RESERVED_BYTES`]: the capacity to reserve for a counted list.
#[inline]
pub(crate) fn cautious_capacity<T>(count: usize) -> usize {
    count.min(MAX_RESERVED_BYTES / size_of::<T>().max(1))
}

/// The highest rank of an array fnabi reads, builds or passes (memref
/// descriptors, `.npy` files, text values); far above any real tensor.
pub const MAX_RANK: usize = 64;

/// What a byte limit bounds.
///
/// ```
/// use fnabi_abi::limits::{check_bytes, max_bytes, parse_byte_size, ByteLimit};
/// assert_eq!(ByteLimit::Call.env_var(), "FNABI_MAX_CALL_BYTES");
/// assert_eq!(ByteLimit::File.flag(), "--max-file-bytes");
/// assert_eq!(parse_byte_size("64K"), Some(64 * 1024));
/// assert!(max_bytes(ByteLimit::Array) > 0);
/// assert!(check_bytes(ByteLimit::Array, 0, || "nothing".into()).is_ok());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ByteLimit {
    /// One array fnabi allocates (a text splat, a raw input, a result).
    Array,
    /// All the input arrays of one call together.
    Call,
    /// One file read into memory (a module, `.npy`, JSON, raw bytes).
    File,
}

impl ByteLimit {
    /// The environment variable that sets this limit (bytes, or with a
    /// `K`/`M`/`G`/`T` suffix for powers of 1024).
    pub fn env_var(self) -> &'static str {
        match self {
            ByteLimit::Array => "FNABI_MAX_ARRAY_BYTES",
            ByteLimit::Call => "FNABI_MAX_CALL_BYTES",
            ByteLimit::File => "FNABI_MAX_FILE_BYTES",
        }
    }

    /// The `fnabi` command-line flag that sets this limit for one command.
    pub fn flag(self) -> &'static str {
        match self {
            ByteLimit::Array => "--max-array-bytes",
            ByteLimit::Call => "--max-call-bytes",
            ByteLimit::File => "--max-file-bytes",
        }
    }

    /// Every byte limit.
    pub const ALL: [ByteLimit; 3] = [ByteLimit::Array, ByteLimit::Call, ByteLimit::File];

    fn per(self) -> &'static str {
        match self {
            ByteLimit::Array => "per array",
            ByteLimit::Call => "per call",
            ByteLimit::File => "per file read",
        }
    }

    fn slot(self) -> &'static AtomicU64 {
        static SLOTS: [AtomicU64; 3] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
        &SLOTS[self as usize]
    }
}

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// A request for more bytes than a [`ByteLimit`] allows: refused before
/// anything is allocated.
///
/// ```
/// use fnabi_abi::limits::{check_bytes, ByteLimit};
/// // no u64 limit admits 2^64 bytes
/// let e = check_bytes(ByteLimit::Array, 1u128 << 64, || "an array of 2^61xf64".into()).unwrap_err();
/// assert_eq!((e.requested, e.kind), (1u128 << 64, ByteLimit::Array));
/// assert!(e.to_string().starts_with("an array of 2^61xf64 takes 18446744073709551616 bytes, over the limit of "));
/// assert!(e.to_string().contains("FNABI_MAX_ARRAY_BYTES"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitError {
    /// What asked (`an array of 100000000000xf32`).
    pub what: String,
    /// The bytes it asked for.
    pub requested: u128,
    /// The limit in force.
    pub limit: u64,
    /// Which limit.
    pub kind: ByteLimit,
}

impl std::fmt::Display for LimitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} takes {} bytes, over the limit of {} bytes {} (raise it with {}=BYTES, e.g. 64G, fnabi's {} BYTES, or fnabi::limits::set_max_bytes)",
            self.what,
            self.requested,
            self.limit,
            self.kind.per(),
            self.kind.env_var(),
            self.kind.flag()
        )
    }
}

impl std::error::Error for LimitError {}

/// Reads `12345`, `64K`, `8M`, `16G`, `1T` (powers of 1024).
pub fn parse_byte_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, shift) = match t.as_bytes().last()?.to_ascii_uppercase() {
        b'K' => (&t[..t.len() - 1], 10),
        b'M' => (&t[..t.len() - 1], 20),
        b'G' => (&t[..t.len() - 1], 30),
        b'T' => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(1u64 << shift)
}

/// The default of every byte limit: half the machine's physical memory
/// (`MemTotal` of `/proc/meminfo`), or 8 GiB where that cannot be read.
pub fn default_max_bytes() -> u64 {
    static DEFAULT: OnceLock<u64> = OnceLock::new();
    *DEFAULT.get_or_init(|| {
        std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| {
                let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
                let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
                Some(kb.saturating_mul(1024) / 2)
            })
            .filter(|&b| b > 0)
            .unwrap_or(8 << 30)
    })
}

/// The limit in force: the one set by [`set_max_bytes`], else the
/// environment variable's ([`ByteLimit::env_var`]), else
/// [`default_max_bytes`]. An environment variable that is not a byte size
/// is ignored here; [`env_error`] names it (the CLI refuses to start).
pub fn max_bytes(kind: ByteLimit) -> u64 {
    let set = kind.slot().load(Ordering::Relaxed);
    if set != 0 {
        return set;
    }
    std::env::var(kind.env_var())
        .ok()
        .and_then(|v| parse_byte_size(&v))
        .filter(|&b| b > 0)
        .unwrap_or_else(default_max_bytes)
}

/// The first byte-limit environment variable that is set but is not a
/// positive byte size ([`parse_byte_size`]), with its value.
///
/// (`fnabi` tests it: `crates/fnabi-cli/tests/hardening_cli.rs`.)
pub fn env_error() -> Option<String> {
    ByteLimit::ALL.iter().find_map(|k| {
        let v = std::env::var_os(k.env_var())?;
        let ok = v.to_str().and_then(parse_byte_size).is_some_and(|b| b > 0);
        (!ok).then(|| format!("{}={:?} is not a byte size (such as 1048576, 64K, 8M or 16G)", k.env_var(), v))
    })
}

/// Sets a limit for this process (`None`: back to the environment
/// variable or the default).
pub fn set_max_bytes(kind: ByteLimit, bytes: Option<u64>) {
    kind.slot().store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// `Ok` when `requested` bytes fit `kind`'s limit; else the error saying
/// what asked, the limit and how to raise it.
pub fn check_bytes(kind: ByteLimit, requested: u128, what: impl FnOnce() -> String) -> Result<(), LimitError> {
    let limit = max_bytes(kind);
    if requested <= u128::from(limit) { Ok(()) } else { Err(LimitError { what: what(), requested, limit, kind }) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_sizes_and_limits() {
        assert_eq!(parse_byte_size("4096"), Some(4096));
        assert_eq!(parse_byte_size("64k"), Some(64 << 10));
        assert_eq!(parse_byte_size("16G"), Some(16 << 30));
        assert_eq!(parse_byte_size("x"), None);
        assert_eq!(parse_byte_size("99999999999T"), None);
        assert!(default_max_bytes() >= 1 << 20);
        set_max_bytes(ByteLimit::File, Some(100));
        assert_eq!(max_bytes(ByteLimit::File), 100);
        assert!(check_bytes(ByteLimit::File, 100, || unreachable!()).is_ok());
        let e = check_bytes(ByteLimit::File, 101, || "the file x".into()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the file x takes 101 bytes, over the limit of 100 bytes per file read (raise it with FNABI_MAX_FILE_BYTES=BYTES, e.g. 64G, fnabi's --max-file-bytes BYTES, or fnabi::limits::set_max_bytes)"
        );
        set_max_bytes(ByteLimit::File, None);
        assert_ne!(max_bytes(ByteLimit::File), 100);
    }
}
