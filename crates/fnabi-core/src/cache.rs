//! Compile caches on disk, shared by the backends that compile (MLIR's
//! shared libraries, IREE's `.vmfb` modules): one compile per key across
//! threads and processes (a lock file per key, atomic renames), entries
//! checked on load (size and content hash recorded beside the artifact; a
//! truncated or corrupted one is rebuilt, never loaded), a temporary folder
//! when the cache folder cannot be written, the default cache folder, and
//! listing and clearing.
//!
//! An entry `KEY` of a folder, for an [`ArtifactKind`] of prefix `P` and
//! extension `E`, is `PKEY.E` (the artifact: `libKEY.so`, `KEY.vmfb`),
//! `PKEY.key` (the text its key hashes) and `PKEY.sum` (`SIZE HASH` of the
//! artifact); `PKEY.lock` serializes its compiles.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

static PUBLISHED: AtomicUsize = AtomicUsize::new(0);

/// How many entries this process has published (built and stored), of
/// every kind.
pub fn published_count() -> usize {
    PUBLISHED.load(Ordering::Relaxed)
}

/// What a cache folder holds: artifacts named `{prefix}{KEY}.{extension}`.
///
/// ```
/// use fnabi_core::cache::{ArtifactKind, CacheEntry};
/// use std::path::Path;
/// assert_eq!(ArtifactKind::SHARED_LIBRARY.extension(), "so");
/// let e = CacheEntry::new(Path::new("/c"), "ab12", ArtifactKind::VMFB);
/// assert_eq!(e.artifact, Path::new("/c/ab12.vmfb"));
/// let e = CacheEntry::new(Path::new("/c"), "ab12", ArtifactKind::new("lib", "so"));
/// assert_eq!(e.artifact, Path::new("/c/libab12.so"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArtifactKind {
    prefix: &'static str,
    extension: &'static str,
}

impl ArtifactKind {
    /// Shared libraries, `libKEY.so` (the MLIR backend's).
    pub const SHARED_LIBRARY: ArtifactKind = ArtifactKind::new("lib", "so");
    /// IREE modules, `KEY.vmfb` (the IREE backend's).
    pub const VMFB: ArtifactKind = ArtifactKind::new("", "vmfb");

    /// Artifacts named `{prefix}{KEY}.{extension}`; the extension is none of
    /// `key`, `sum`, `lock` (the entry's other files).
    pub const fn new(prefix: &'static str, extension: &'static str) -> ArtifactKind {
        ArtifactKind { prefix, extension }
    }

    /// The artifacts' extension (`so`).
    pub fn extension(&self) -> &'static str {
        self.extension
    }

    fn is_artifact(&self, path: &Path) -> bool {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        name.starts_with(self.prefix) && path.extension().is_some_and(|x| x == self.extension)
    }
}

/// The default cache folder: `$FNABI_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/fnabi`, else `~/.cache/fnabi` (each backend keeps its
/// entries in a folder of its own under it: `mlir`, `iree`).
pub fn default_cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("FNABI_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("fnabi");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    home.join(".cache").join("fnabi")
}

/// FNV-1a, 128-bit: the hash of cache keys and artifacts' contents (not
/// cryptographic: it tells apart inputs, it does not resist forgery).
pub fn fnv1a_128(bytes: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    bytes.iter().fold(OFFSET, |h, &b| (h ^ u128::from(b)).wrapping_mul(PRIME))
}

/// One entry of a cache folder.
///
/// The life of an entry: build in a [`StagingDir`], publish under the
/// lock, load checked, list, clear.
///
/// ```
/// use fnabi_core::cache::{self, ArtifactKind, CacheEntry, StagingDir};
/// let dir = std::env::temp_dir().join(format!("fnabi-doc-cache-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let kind = ArtifactKind::new("", "bin");
/// let entry = CacheEntry::new(&dir, "k1", kind);
/// assert!(entry.read_valid("source v1").is_none()); // not built yet
/// {
///     let _lock = entry.lock().unwrap();
///     let staging = StagingDir::new(&dir, "k1").unwrap();
///     let built = staging.path().join("out.bin");
///     std::fs::write(&built, b"artifact").unwrap();
///     entry.publish(&built, "source v1").unwrap();
/// } // the staging folder is removed, the lock released
/// assert_eq!(entry.read_valid("source v1").unwrap(), b"artifact");
/// assert!(!entry.is_valid("source v2")); // another key text: not this entry
/// let listed = cache::list(&dir, kind).unwrap();
/// assert_eq!((listed.len(), listed[0].size, listed[0].intact), (1, 8, true));
/// // a corrupted artifact is never loaded
/// std::fs::write(&entry.artifact, b"artefact").unwrap();
/// assert!(entry.read_valid("source v1").is_none());
/// assert!(!cache::list(&dir, kind).unwrap()[0].intact);
/// assert_eq!(cache::clear(&dir, kind).unwrap(), 1);
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct CacheEntry {
    /// The artifact (`libKEY.so`, `KEY.vmfb`).
    pub artifact: PathBuf,
    key_file: PathBuf,
    sum_file: PathBuf,
    lock_file: PathBuf,
}

/// An exclusive hold on an entry's lock file, released when dropped.
///
/// ```
/// use fnabi_core::cache::{ArtifactKind, CacheEntry};
/// let dir = std::env::temp_dir().join(format!("fnabi-doc-lock-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let entry = CacheEntry::new(&dir, "k", ArtifactKind::VMFB);
/// let held = entry.lock().unwrap();
/// drop(held); // released: the next compile of this key may go on
/// let _again = entry.lock().unwrap();
/// # drop(_again);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
pub struct EntryLock(File);

impl Drop for EntryLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

fn sum_text(bytes: &[u8]) -> String {
    format!("{} {:032x}\n", bytes.len(), fnv1a_128(bytes))
}

impl CacheEntry {
    /// The entry `key` of folder `dir`, holding an artifact of `kind`.
    pub fn new(dir: &Path, key: &str, kind: ArtifactKind) -> CacheEntry {
        let file = |ext: &str| dir.join(format!("{}{key}.{ext}", kind.prefix));
        CacheEntry {
            artifact: file(kind.extension),
            key_file: file("key"),
            sum_file: file("sum"),
            lock_file: file("lock"),
        }
    }

    /// True when the entry is there for `key_text` and its artifact has the
    /// size and hash recorded for it.
    pub fn is_valid(&self, key_text: &str) -> bool {
        self.read_valid(key_text).is_some()
    }

    /// The artifact's bytes when the entry is there for `key_text` and they
    /// have the size and hash recorded for them (the bytes checked are the
    /// bytes returned: nothing can change them in between).
    pub fn read_valid(&self, key_text: &str) -> Option<Vec<u8>> {
        if std::fs::read(&self.key_file).ok()? != key_text.as_bytes() {
            return None;
        }
        let bytes = std::fs::read(&self.artifact).ok()?;
        (std::fs::read_to_string(&self.sum_file).ok()? == sum_text(&bytes)).then_some(bytes)
    }

    /// Waits for, then holds, the entry's lock (other threads and processes
    /// compiling the same key wait here).
    pub fn lock(&self) -> io::Result<EntryLock> {
        let f = File::options().create(true).truncate(false).write(true).open(&self.lock_file)?;
        f.lock()?;
        Ok(EntryLock(f))
    }

    /// Stores `built` (an artifact in a folder of the same file system) as
    /// this entry: the sum and key first, then the artifact, each by an
    /// atomic rename. Hold [`lock`](CacheEntry::lock) while calling.
    pub fn publish(&self, built: &Path, key_text: &str) -> io::Result<()> {
        let bytes = std::fs::read(built)?;
        let staged = |name: &str| built.with_file_name(name);
        std::fs::write(staged("sum"), sum_text(&bytes))?;
        std::fs::write(staged("key"), key_text)?;
        std::fs::rename(staged("sum"), &self.sum_file)?;
        std::fs::rename(staged("key"), &self.key_file)?;
        std::fs::rename(built, &self.artifact)?;
        PUBLISHED.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// Copies the file `from` into a new file `to` with permissions `mode`
/// (less the umask). `to` is created by this call (`O_EXCL`): anything
/// already there, a link planted in a shared folder included, is an error
/// and is never written through; a copy that fails midway removes `to`.
///
/// ```
/// use fnabi_core::cache::copy_to_new_file;
/// let dir = std::env::temp_dir().join(format!("fnabi-doc-copy-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("a"), b"bytes")?;
/// copy_to_new_file(&dir.join("a"), &dir.join("b"), 0o600)?;
/// assert_eq!(std::fs::read(dir.join("b"))?, b"bytes");
/// // `b` exists now: a second copy to it is refused.
/// assert!(copy_to_new_file(&dir.join("a"), &dir.join("b"), 0o600).is_err());
/// std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn copy_to_new_file(from: &Path, to: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut source = File::open(from)?;
    let mut dest = File::options().write(true).create_new(true).mode(mode).open(to)?;
    if let Err(e) = io::copy(&mut source, &mut dest) {
        let _ = std::fs::remove_file(to);
        return Err(e);
    }
    Ok(())
}

/// The name a source file gets in a staging folder, so that the tools'
/// messages and the module's locations name the user's file: its own file
/// name when that is a plain name (ASCII letters, digits, `_`, `-`, `.`; not
/// starting with `-`, so no tool reads it as a flag) ending in one of
/// `extensions` (and more than the extension) and none of `reserved` (the
/// staging folder's own files); else `input.mlir`.
///
/// ```
/// use fnabi_core::cache::staged_source_name;
/// use std::path::Path;
/// let name = |p: &str| staged_source_name(Some(Path::new(p)), &[".mlir"], &["lowered.mlir"]);
/// assert_eq!(name("/home/me/model.mlir"), "model.mlir");
/// assert_eq!(name("my model.mlir"), "input.mlir"); // a space
/// assert_eq!(name("-o.mlir"), "input.mlir"); // would read as a flag
/// assert_eq!(name("lowered.mlir"), "input.mlir"); // the pipeline's own file
/// assert_eq!(name(".mlir"), "input.mlir");
/// assert_eq!(staged_source_name(None, &[".mlir"], &[]), "input.mlir");
/// ```
pub fn staged_source_name(path: Option<&Path>, extensions: &[&str], reserved: &[&str]) -> String {
    path.and_then(Path::file_name)
        .and_then(std::ffi::OsStr::to_str)
        .filter(|n| {
            extensions.iter().any(|e| n.len() > e.len() && n.ends_with(e))
                && !n.starts_with('-')
                && n.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
                && !reserved.contains(n)
        })
        .map_or_else(|| "input.mlir".to_owned(), str::to_owned)
}

/// A uniquely named folder `tmp-KEY-…` in a cache folder, where one
/// compile writes its files before [`CacheEntry::publish`] moves its
/// artifact into place; removed (with what is left in it) when dropped.
/// [`clear`] removes those a killed process left behind.
///
/// ```
/// use fnabi_core::cache::StagingDir;
/// let parent = std::env::temp_dir();
/// let staging = StagingDir::new(&parent, "key").unwrap();
/// let path = staging.path().to_path_buf();
/// assert!(path.is_dir());
/// assert!(path.file_name().unwrap().to_str().unwrap().starts_with("tmp-key-"));
/// drop(staging);
/// assert!(!path.exists());
/// ```
#[derive(Debug)]
pub struct StagingDir(PathBuf);

impl StagingDir {
    /// A new folder for a compile of `key` in `parent`.
    pub fn new(parent: &Path, key: &str) -> io::Result<StagingDir> {
        use std::sync::atomic::AtomicU64;
        static N: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let name = format!("tmp-{key}-{}-{nanos}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
        let d = parent.join(name);
        std::fs::create_dir(&d)?;
        Ok(StagingDir(d))
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for StagingDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `dir` when it can be created and written, else a folder of the same
/// name (`mlir`, `iree`) in a private folder of this user under the
/// system's temporary folder ([`private_temp_cache`]), with a warning on
/// stderr (once per process).
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
            let name = dir.file_name().unwrap_or(std::ffi::OsStr::new("cache"));
            let fallback = private_temp_cache().join(name);
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                eprintln!(
                    "fnabi: warning: the cache folder {} cannot be written ({e}); using {} instead",
                    dir.display(),
                    fallback.display()
                )
            });
            let _ = std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
                .create(&fallback);
            fallback
        }
    }
}

/// The fallback cache's root: `fnabi-cache-UID` in the system's temporary
/// folder, made with mode 0700. The temporary folder is shared by every
/// user, and a cache holds code that fnabi loads, so the folder is used
/// only when it is a real folder (no link) owned by this user that no one
/// else can write; otherwise (another user made it first, or it was
/// loosened) this process takes a folder of its own,
/// `fnabi-cache-UID-PID-N`, made fresh with mode 0700 (it then caches
/// for this process only). Decided once per process.
pub fn private_temp_cache() -> PathBuf {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| private_cache_in(&std::env::temp_dir())).clone()
}

/// [`private_temp_cache`] under the folder `tmp`.
fn private_cache_in(tmp: &Path) -> PathBuf {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    // This process's user: the owner of /proc/self (no libc call).
    let uid = std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(u32::MAX);
    let root = tmp.join(format!("fnabi-cache-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&root);
    let private =
        |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir() && m.uid() == uid && m.mode() & 0o077 == 0);
    if private(&root) {
        return root;
    }
    static N: AtomicUsize = AtomicUsize::new(0);
    loop {
        let n = N.fetch_add(1, Ordering::Relaxed);
        let own = tmp.join(format!("fnabi-cache-{uid}-{}-{n}", std::process::id()));
        // `create` fails on anything already there: the folder is ours.
        match std::fs::DirBuilder::new().mode(0o700).create(&own) {
            Ok(()) => return own,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 100 => continue,
            Err(_) => return own,
        }
    }
}

/// What [`list`] reports of one entry.
///
/// ```
/// use fnabi_core::cache::{list, ArtifactKind};
/// let dir = std::env::temp_dir().join(format!("fnabi-doc-list-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// // an artifact without its recorded sum is listed, but not intact
/// std::fs::write(dir.join("libx.so"), b"1234").unwrap();
/// let entries = list(&dir, ArtifactKind::SHARED_LIBRARY).unwrap();
/// assert_eq!(entries.len(), 1);
/// assert_eq!((entries[0].size, entries[0].intact), (4, false));
/// assert_eq!(entries[0].artifact, dir.join("libx.so"));
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedEntry {
    /// The artifact's path.
    pub artifact: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// False when its size or hash does not match what was recorded (it
    /// would be rebuilt).
    pub intact: bool,
}

/// The entries of kind `kind` in cache folder `dir` (the `mlir` or `iree`
/// folder of a cache), sorted.
pub fn list(dir: &Path, kind: ArtifactKind) -> io::Result<Vec<ListedEntry>> {
    let mut out = Vec::new();
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e),
    };
    for e in rd {
        let path = e?.path();
        if !kind.is_artifact(&path) {
            continue;
        }
        let bytes = std::fs::read(&path)?;
        let intact = std::fs::read_to_string(path.with_extension("sum")).is_ok_and(|s| s == sum_text(&bytes));
        out.push(ListedEntry { artifact: path, size: bytes.len() as u64, intact });
    }
    out.sort_by(|a, b| a.artifact.cmp(&b.artifact));
    Ok(out)
}

/// Removes every entry of kind `kind` (and leftover temporary folder) of
/// cache folder `dir`; returns how many artifacts were removed.
pub fn clear(dir: &Path, kind: ArtifactKind) -> io::Result<usize> {
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
        } else if name.starts_with(kind.prefix)
            && path.extension().is_some_and(|x| [kind.extension, "key", "sum", "lock"].iter().any(|k| x == *k))
        {
            if kind.is_artifact(&path) {
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

    fn scratch(name: &str) -> crate::scratch::Scratch {
        crate::scratch::Scratch::new(&format!("cache-test-{name}"))
    }

    #[test]
    fn fnv_reference_values() {
        assert_eq!(fnv1a_128(b""), 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d);
        assert_eq!(fnv1a_128(b"a"), 0xd228_cb69_6f1a_8caf_7891_2b70_4e4a_8964);
    }

    #[test]
    fn entries_are_checked_listed_and_cleared() {
        let dir = scratch("entries");
        let e = CacheEntry::new(&dir, "k1", ArtifactKind::SHARED_LIBRARY);
        assert!(!e.is_valid("text"));
        let tmp = dir.join("tmp-k1");
        std::fs::create_dir(&tmp).unwrap();
        std::fs::write(tmp.join("lib.so"), b"\x7fELF library bytes").unwrap();
        {
            let _l = e.lock().unwrap();
            e.publish(&tmp.join("lib.so"), "text").unwrap();
        }
        assert!(e.is_valid("text") && !e.is_valid("other text"));
        let listed = list(&dir, ArtifactKind::SHARED_LIBRARY).unwrap();
        assert_eq!(listed, [ListedEntry { artifact: e.artifact.clone(), size: 18, intact: true }]);
        assert!(list(&dir, ArtifactKind::VMFB).unwrap().is_empty());
        // Truncated, then corrupted with the same size: both detected.
        std::fs::write(&e.artifact, b"\x7fELF").unwrap();
        assert!(!e.is_valid("text"));
        assert!(!list(&dir, ArtifactKind::SHARED_LIBRARY).unwrap()[0].intact);
        std::fs::write(&e.artifact, b"\x7fELF library bytez").unwrap();
        assert!(!e.is_valid("text"));
        // Another kind's entries in the same folder are left alone.
        let v = CacheEntry::new(&dir, "k2", ArtifactKind::VMFB);
        std::fs::write(tmp.join("m.vmfb"), b"PK\x03\x04 module").unwrap();
        v.publish(&tmp.join("m.vmfb"), "vmfb text").unwrap();
        assert_eq!(v.artifact, dir.join("k2.vmfb"));
        assert_eq!(clear(&dir, ArtifactKind::SHARED_LIBRARY).unwrap(), 1);
        assert!(list(&dir, ArtifactKind::SHARED_LIBRARY).unwrap().is_empty());
        assert!(v.is_valid("vmfb text"));
        assert_eq!(clear(&dir, ArtifactKind::VMFB).unwrap(), 1);
        assert!(std::fs::read_dir(&dir).unwrap().next().is_none());
        assert!(!tmp.exists());
    }

    #[test]
    fn an_unwritable_folder_falls_back_to_a_temporary_one() {
        let dir = scratch("unwritable");
        // A folder under a regular file can never be created (even as root).
        std::fs::write(dir.join("file"), b"").unwrap();
        let bad = dir.join("file").join("iree");
        let got = writable_dir(&bad);
        assert_ne!(got, bad);
        assert!(got.starts_with(std::env::temp_dir()) && got.is_dir(), "{}", got.display());
        assert!(got.ends_with("iree"), "{}", got.display());
        assert_eq!(writable_dir(&dir), *dir);
        let mode = |p: &Path| std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(p).unwrap().permissions());
        assert_eq!(mode(got.parent().unwrap()) & 0o777, 0o700);
        assert_eq!(mode(&got) & 0o777, 0o700);
    }

    /// The shared temporary folder's fallback cache is used only when it is
    /// this user's own private folder; one that anyone may write, or a link,
    /// is passed over for a fresh folder of this process.
    #[test]
    fn the_fallback_cache_is_private() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let uid = std::fs::metadata("/proc/self").unwrap().uid();
        let tmp = scratch("private-cache");
        let root = tmp.join(format!("fnabi-cache-{uid}"));
        // Made fresh: the root itself, mode 0700.
        assert_eq!(private_cache_in(&tmp), root);
        assert_eq!(std::fs::metadata(&root).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(private_cache_in(&tmp), root);
        // Loosened: not used (and not changed).
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).unwrap();
        let own = private_cache_in(&tmp);
        assert_ne!(own, root);
        assert!(own.file_name().unwrap().to_str().unwrap().starts_with(&format!("fnabi-cache-{uid}-")));
        assert_eq!(std::fs::metadata(&own).unwrap().permissions().mode() & 0o777, 0o700);
        assert_ne!(private_cache_in(&tmp), own, "each fresh folder is new");
        // A link to a private folder: not used either.
        std::fs::remove_dir(&root).unwrap();
        let elsewhere = tmp.join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &root).unwrap();
        assert_ne!(private_cache_in(&tmp), root);
    }
}
