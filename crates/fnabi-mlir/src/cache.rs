//! The compile cache's entries on disk: one compile per key across threads
//! and processes (a lock file per key, atomic renames), entries checked on
//! load (size and content hash recorded beside the library; a truncated or
//! corrupted one is rebuilt, never loaded), a temporary folder when the
//! cache folder cannot be written, and listing and clearing.
//!
//! An entry `KEY` of a folder is `libKEY.so` (the library), `libKEY.key`
//! (the text its key hashes) and `libKEY.sum` (`SIZE HASH` of the library);
//! `libKEY.lock` serializes its compiles.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

static PUBLISHED: AtomicUsize = AtomicUsize::new(0);

/// How many entries this process has published (built and stored).
pub fn published_count() -> usize {
    PUBLISHED.load(Ordering::Relaxed)
}

/// One entry of a cache folder.
#[derive(Clone, Debug)]
pub struct CacheEntry {
    /// The library.
    pub library: PathBuf,
    key_file: PathBuf,
    sum_file: PathBuf,
    lock_file: PathBuf,
}

/// An exclusive hold on an entry's lock file, released when dropped.
#[derive(Debug)]
pub struct EntryLock(File);

impl Drop for EntryLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// FNV-1a, 128-bit (the content hash of a library).
fn content_hash(bytes: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    bytes.iter().fold(OFFSET, |h, &b| (h ^ u128::from(b)).wrapping_mul(PRIME))
}

fn sum_text(bytes: &[u8]) -> String {
    format!("{} {:032x}\n", bytes.len(), content_hash(bytes))
}

impl CacheEntry {
    /// The entry `key` of folder `dir`.
    pub fn new(dir: &Path, key: &str) -> CacheEntry {
        CacheEntry {
            library: dir.join(format!("lib{key}.so")),
            key_file: dir.join(format!("lib{key}.key")),
            sum_file: dir.join(format!("lib{key}.sum")),
            lock_file: dir.join(format!("lib{key}.lock")),
        }
    }

    /// True when the entry is there for `key_text` and its library has the
    /// size and hash recorded for it.
    pub fn is_valid(&self, key_text: &str) -> bool {
        let key_ok = std::fs::read(&self.key_file).is_ok_and(|k| k == key_text.as_bytes());
        key_ok
            && match (std::fs::read(&self.library), std::fs::read_to_string(&self.sum_file)) {
                (Ok(lib), Ok(sum)) => sum == sum_text(&lib),
                _ => false,
            }
    }

    /// Waits for, then holds, the entry's lock (other threads and processes
    /// compiling the same key wait here).
    pub fn lock(&self) -> io::Result<EntryLock> {
        let f = File::options().create(true).truncate(false).write(true).open(&self.lock_file)?;
        f.lock()?;
        Ok(EntryLock(f))
    }

    /// Stores `built` (a library in a folder of the same file system) as
    /// this entry: the sum and key first, then the library, each by an
    /// atomic rename. Hold [`lock`](CacheEntry::lock) while calling.
    pub fn publish(&self, built: &Path, key_text: &str) -> io::Result<()> {
        let bytes = std::fs::read(built)?;
        let staged = |name: &str| built.with_file_name(name);
        std::fs::write(staged("sum"), sum_text(&bytes))?;
        std::fs::write(staged("key"), key_text)?;
        std::fs::rename(staged("sum"), &self.sum_file)?;
        std::fs::rename(staged("key"), &self.key_file)?;
        std::fs::rename(built, &self.library)?;
        PUBLISHED.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// `dir` when it can be created and written, else a folder under the
/// system's temporary folder, with a warning on stderr (once per process).
pub fn writable_dir(dir: &Path) -> PathBuf {
    // One probe file per call: threads of one process probe at once.
    static PROBE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let probe = |d: &Path| -> io::Result<()> {
        std::fs::create_dir_all(d)?;
        let n = PROBE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = d.join(format!(".probe-{}-{n}", std::process::id()));
        std::fs::write(&p, b"")?;
        std::fs::remove_file(&p)
    };
    match probe(dir) {
        Ok(()) => dir.to_path_buf(),
        Err(e) => {
            let user = std::env::var("USER").unwrap_or_default();
            let fallback = std::env::temp_dir().join(format!("fnabi-cache-{user}")).join("mlir");
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                eprintln!(
                    "fnabi: warning: the cache folder {} cannot be written ({e}); using {} instead",
                    dir.display(),
                    fallback.display()
                )
            });
            let _ = std::fs::create_dir_all(&fallback);
            fallback
        }
    }
}

/// What [`list`] reports of one entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedEntry {
    /// The library's path.
    pub library: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// False when its size or hash does not match what was recorded (it
    /// would be rebuilt).
    pub intact: bool,
}

/// The entries of cache folder `dir` (the `mlir` folder of a cache), sorted.
pub fn list(dir: &Path) -> io::Result<Vec<ListedEntry>> {
    let mut out = Vec::new();
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e),
    };
    for e in rd {
        let path = e?.path();
        if path.extension().is_none_or(|x| x != "so") {
            continue;
        }
        let bytes = std::fs::read(&path)?;
        let intact = std::fs::read_to_string(path.with_extension("sum")).is_ok_and(|s| s == sum_text(&bytes));
        out.push(ListedEntry { library: path, size: bytes.len() as u64, intact });
    }
    out.sort_by(|a, b| a.library.cmp(&b.library));
    Ok(out)
}

/// Removes every entry (and leftover temporary folder) of cache folder
/// `dir`; returns how many libraries were removed.
pub fn clear(dir: &Path) -> io::Result<usize> {
    let mut n = 0;
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    for e in rd {
        let path = e?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if path.is_dir() && name.starts_with("tmp-") {
            std::fs::remove_dir_all(&path)?;
        } else if name.starts_with("lib")
            && path.extension().is_some_and(|x| ["so", "key", "sum", "lock"].iter().any(|k| x == *k))
        {
            if path.extension().is_some_and(|x| x == "so") {
                n += 1;
            }
            std::fs::remove_file(&path)?;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fnabi-cache-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn entries_are_checked_listed_and_cleared() {
        let dir = scratch("entries");
        let e = CacheEntry::new(&dir, "k1");
        assert!(!e.is_valid("text"));
        let tmp = dir.join("tmp-k1");
        std::fs::create_dir(&tmp).unwrap();
        std::fs::write(tmp.join("lib.so"), b"\x7fELF library bytes").unwrap();
        {
            let _l = e.lock().unwrap();
            e.publish(&tmp.join("lib.so"), "text").unwrap();
        }
        assert!(e.is_valid("text") && !e.is_valid("other text"));
        let listed = list(&dir).unwrap();
        assert_eq!(listed, [ListedEntry { library: e.library.clone(), size: 18, intact: true }]);
        // Truncated, then corrupted with the same size: both detected.
        std::fs::write(&e.library, b"\x7fELF").unwrap();
        assert!(!e.is_valid("text"));
        assert!(!list(&dir).unwrap()[0].intact);
        std::fs::write(&e.library, b"\x7fELF library bytez").unwrap();
        assert!(!e.is_valid("text"));
        assert_eq!(clear(&dir).unwrap(), 1);
        assert!(list(&dir).unwrap().is_empty());
        assert!(!tmp.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unwritable_folder_falls_back_to_a_temporary_one() {
        let dir = scratch("unwritable");
        // A folder under a regular file can never be created (even as root).
        std::fs::write(dir.join("file"), b"").unwrap();
        let bad = dir.join("file").join("mlir");
        let got = writable_dir(&bad);
        assert_ne!(got, bad);
        assert!(got.starts_with(std::env::temp_dir()) && got.is_dir(), "{}", got.display());
        assert_eq!(writable_dir(&dir), dir);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
