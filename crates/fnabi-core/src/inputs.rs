//! A call's arguments from their command-line forms: `--input` specs as
//! `iree-run-module` reads them, and JSON argument files with `"@FILE.npy"`.
//!
//! Files are read through an [`InputFileSystem`]: [`HostFiles`] reads the
//! host's, [`MemoryFiles`] holds them in memory (tests, fuzzing, a host that
//! has its own files), and any `Fn(&Path) -> Result<ByteBuffer, Error>` is one.
//!
//! ```
//! use fnabi_core::inputs::{InputReader, MemoryFiles};
//! let mut files = MemoryFiles::new();
//! files.insert("x.bin", 1.5f32.to_ne_bytes().repeat(2));
//! let mut reader = InputReader::new(&files);
//! for spec in ["2x2xi32=[1 2][3 4]", "2xf32=@x.bin", "(null)", "7"] {
//!     reader.push(spec).unwrap();
//! }
//! let values = reader.finish();
//! assert_eq!(values[0].as_array().unwrap().to_string(), "2x2xi32=[1 2][3 4]");
//! assert_eq!(values[1].as_array().unwrap().to_string(), "2xf32=1.5 1.5");
//! assert_eq!(values.len(), 4);
//! let e = InputReader::new(&files).push("2xf32=@y.bin").unwrap_err();
//! assert_eq!(e.to_string(), "--input 0 (2xf32=@y.bin): no such file");
//! ```

use crate::error::{Error, ErrorKind};
use crate::memory::ByteBuffer;
use crate::structure::{IndexPath, PathKey};
use crate::value::{Dict, Value};
use fnabi_abi::ParseError;
use fnabi_abi::limits::{ByteLimit, check_bytes};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Where the files named by inputs come from.
///
/// ```
/// use fnabi_core::inputs::{InputFileSystem, InputReader};
/// use fnabi_core::memory::ByteBuffer;
/// use std::path::Path;
/// // A closure is a file system: here every file holds the i32 7.
/// let fs = |_: &Path| ByteBuffer::copy_from_slice(&7i32.to_ne_bytes());
/// assert_eq!(fs.read(Path::new("any.bin")).unwrap().len(), 4);
/// let mut reader = InputReader::new(&fs);
/// reader.push("1xi32=@seven.bin").unwrap();
/// assert_eq!(reader.values()[0].as_array().unwrap().to_string(), "1xi32=7");
/// ```
pub trait InputFileSystem {
    /// The bytes of the file at `path` (at most the byte limit per file
    /// read of [`fnabi_abi::limits`]): an [`ErrorKind::Io`] naming the path
    /// when it cannot be read, [`ErrorKind::Exhausted`] when it is too large.
    fn read(&self, path: &Path) -> Result<ByteBuffer, Error>;
}

impl<F: Fn(&Path) -> Result<ByteBuffer, Error>> InputFileSystem for F {
    fn read(&self, path: &Path) -> Result<ByteBuffer, Error> {
        self(path)
    }
}

/// The host's files ([`ByteBuffer::read_file`]).
///
/// ```
/// use fnabi_core::inputs::{HostFiles, InputFileSystem, read_inputs};
/// use fnabi_core::ErrorKind;
/// let path = std::env::temp_dir().join(format!("fnabi-doc-hostfiles-{}.bin", std::process::id()));
/// std::fs::write(&path, [1u8, 2]).unwrap();
/// assert_eq!(HostFiles.read(&path).unwrap().as_bytes(), [1, 2]);
/// let values = read_inputs(&[format!("2xi8=@{}", path.display())], &HostFiles).unwrap();
/// assert_eq!(values[0].as_array().unwrap().to_string(), "2xi8=1 2");
/// std::fs::remove_file(&path).unwrap();
/// assert!(matches!(HostFiles.read(&path).unwrap_err().kind(), ErrorKind::Io { .. }));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct HostFiles;

impl InputFileSystem for HostFiles {
    fn read(&self, path: &Path) -> Result<ByteBuffer, Error> {
        ByteBuffer::read_file(path)
    }
}

/// The host's files, memory-mapped instead of read: a `.npy` input whose
/// data is in native byte order and aligned becomes an array over the
/// mapping, with no copy (the kernel loads pages as they are touched).
///
/// ```
/// use fnabi_core::inputs::{InputFileSystem, MappedHostFiles, read_inputs};
/// use fnabi_core::{Array, npy};
/// let path = std::env::temp_dir().join(format!("fnabi-doc-mapped-{}.npy", std::process::id()));
/// npy::save(&path, &Array::from_vec(&[3], vec![1.5f32, 2.5, 3.5]).unwrap()).unwrap();
/// // SAFETY: the file is not changed while the values read from it live.
/// let files = unsafe { MappedHostFiles::new() };
/// let values = read_inputs(&[format!("@{}", path.display())], &files).unwrap();
/// let a = values[0].as_array().unwrap();
/// assert_eq!(a.to_string(), "3xf32=1.5 2.5 3.5");
/// // The array is the mapping: its data is the file's bytes after the header.
/// assert_eq!(a.buffer().unwrap().len(), std::fs::metadata(&path).unwrap().len() as usize);
/// drop(values);
/// std::fs::remove_file(&path).unwrap();
/// // A file that cannot be mapped is an I/O error naming it.
/// let e = files.read(&path).unwrap_err();
/// assert!(matches!(e.kind(), fnabi_core::ErrorKind::Io { .. }) && e.to_string().contains("fnabi-doc-mapped"), "{e}");
/// ```
#[derive(Debug)]
pub struct MappedHostFiles(());

impl MappedHostFiles {
    /// Host files read through memory maps.
    ///
    /// # Safety
    /// No file read through it may be modified or truncated while a value
    /// read from it lives: the values' memory would change under them, and
    /// reading past a truncated end raises `SIGBUS` (the same contract as
    /// [`ByteBuffer::map_file`], or numpy's `mmap_mode`).
    pub unsafe fn new() -> MappedHostFiles {
        MappedHostFiles(())
    }
}

impl InputFileSystem for MappedHostFiles {
    fn read(&self, path: &Path) -> Result<ByteBuffer, Error> {
        // SAFETY: the files are left unchanged (`new`'s contract).
        unsafe { ByteBuffer::map_file(path) }
    }
}

/// Files held in memory, by path (a missing one is an `Io` error of kind
/// `NotFound`: "no such file").
///
/// ```
/// use fnabi_core::inputs::{InputFileSystem, MemoryFiles};
/// use fnabi_core::ErrorKind;
/// use std::path::Path;
/// let mut files = MemoryFiles::new();
/// files.insert("a.bin", vec![1, 2, 3]);
/// files.insert("a.bin", vec![4]); // replaces
/// assert_eq!(files.read(Path::new("a.bin")).unwrap().as_bytes(), [4]);
/// assert!(matches!(files.read(Path::new("b.bin")).unwrap_err().kind(), ErrorKind::Io { .. }));
/// ```
#[derive(Clone, Debug, Default)]
pub struct MemoryFiles {
    files: HashMap<PathBuf, Vec<u8>>,
}

impl MemoryFiles {
    /// No files.
    pub fn new() -> MemoryFiles {
        MemoryFiles::default()
    }

    /// Adds (or replaces) the file at `path`.
    pub fn insert(&mut self, path: impl Into<PathBuf>, bytes: impl Into<Vec<u8>>) {
        self.files.insert(path.into(), bytes.into());
    }
}

impl InputFileSystem for MemoryFiles {
    fn read(&self, path: &Path) -> Result<ByteBuffer, Error> {
        let bytes = self.files.get(path).ok_or_else(|| {
            Error::io(path.display().to_string(), std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"))
        })?;
        check_bytes(ByteLimit::File, bytes.len() as u128, || format!("the file {}", path.display()))
            .map_err(|e| Error::exhausted(e.to_string()))?;
        ByteBuffer::copy_from_slice(bytes)
    }
}

/// The most characters of an input an error message quotes.
const QUOTED_CHARS: usize = 80;

/// `spec`, or when longer than [`QUOTED_CHARS`] its start, `…` and its length.
fn excerpt(spec: &str) -> String {
    match spec.char_indices().nth(QUOTED_CHARS) {
        None => spec.to_owned(),
        Some((cut, _)) => format!("{}… [{} bytes]", &spec[..cut], spec.len()),
    }
}

/// How an error message quotes a user's text: in quotes, escaped as
/// `Debug` escapes a string, and when longer than 80 characters by its
/// start, `…` and its length (the error's offset says where it fails).
///
/// ```
/// use fnabi_core::inputs::quoted_excerpt;
/// assert_eq!(quoted_excerpt("2xf32=1 2\t3"), r#""2xf32=1 2\t3""#);
/// let long = "B3!d4".repeat(100);
/// assert_eq!(quoted_excerpt(&long), format!("\"{}…\" [500 bytes]", &long[..80]));
/// ```
pub fn quoted_excerpt(spec: &str) -> String {
    match spec.char_indices().nth(QUOTED_CHARS) {
        None => format!("{spec:?}"),
        Some((cut, _)) => format!("\"{}…\" [{} bytes]", spec[..cut].escape_debug(), spec.len()),
    }
}

/// An input that cannot be read, as one line naming it.
///
/// ```
/// use fnabi_core::inputs::{InputError, MemoryFiles, read_arguments, read_inputs};
/// use std::path::Path;
/// let files = MemoryFiles::new();
/// // The second `--input` names a file that is not there.
/// let e = read_inputs(&["1", "2xf32=@w.bin"], &files).unwrap_err();
/// assert!(matches!(&e, InputError::Input { index: 1, .. }));
/// assert_eq!(e.to_string(), "--input 1 (2xf32=@w.bin): no such file");
/// // A file of arguments that is not there.
/// let e = read_arguments(Path::new("args.json"), &files).unwrap_err();
/// assert_eq!(e.to_string(), "cannot read args.json: no such file");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// An `--input` in IREE's text form that does not parse. (The message
    /// quotes a long input's start only: the error's offset says where.)
    #[error("--input {index} {} {error}", quoted_excerpt(.spec))]
    Text {
        /// Its index among the `--input`s.
        index: usize,
        /// Its text.
        spec: String,
        /// Where and why it does not parse.
        error: ParseError,
    },
    /// Another `--input` that cannot be read: a file, a raw header, a form
    /// fnabi does not take.
    #[error("--input {index} ({}): {message}", excerpt(.spec))]
    Input {
        /// Its index among the `--input`s.
        index: usize,
        /// Its text.
        spec: String,
        /// What is wrong.
        message: String,
    },
    /// A file of arguments that cannot be read.
    #[error("cannot read {file}: {message}")]
    Read {
        /// The file (`-` for stdin).
        file: String,
        /// Why.
        message: String,
    },
    /// A file of arguments whose content is no valid set of arguments.
    #[error("{file}: {message}")]
    Arguments {
        /// The file (`-` for stdin).
        file: String,
        /// What is wrong (and where).
        message: String,
    },
}

/// A file error without the path the caller names anyway: the I/O error
/// itself, or the limit that refused it.
fn bare(e: &Error) -> String {
    match e.kind() {
        ErrorKind::Io { source, .. } => source.to_string(),
        ErrorKind::Exhausted(m) => m.clone(),
        _ => e.to_string(),
    }
}

/// Reads `--input`s one after the other, as `iree-run-module` reads them,
/// remembering where each file was read up to (raw files by byte offset,
/// `.npy` files, held in memory, by the offset of their next array).
///
/// ```
/// use fnabi_core::inputs::{InputReader, MemoryFiles};
/// use fnabi_core::Value;
/// let mut files = MemoryFiles::new();
/// files.insert("x.bin", [1i8, 2, 3, 4].map(|v| v as u8));
/// let mut reader = InputReader::new(&files);
/// reader.push("2xi8=@x.bin").unwrap(); // bytes 0..2
/// reader.push("2xi8=+x.bin").unwrap(); // goes on where the previous one stopped
/// reader.push("(null)").unwrap();
/// assert_eq!(reader.values().len(), 3);
/// let values = reader.finish();
/// assert_eq!(values[0].as_array().unwrap().to_string(), "2xi8=1 2");
/// assert_eq!(values[1].as_array().unwrap().to_string(), "2xi8=3 4");
/// assert_eq!(values[2], Value::None);
/// ```
pub struct InputReader<'f> {
    fs: &'f dyn InputFileSystem,
    raw: HashMap<PathBuf, usize>,
    npy: HashMap<PathBuf, (ByteBuffer, usize)>,
    count: usize,
    values: Vec<Value<'static>>,
}

impl<'f> InputReader<'f> {
    /// A reader of inputs whose files come from `fs`.
    pub fn new(fs: &'f dyn InputFileSystem) -> InputReader<'f> {
        InputReader { fs, raw: HashMap::new(), npy: HashMap::new(), count: 0, values: Vec::new() }
    }

    /// Reads the next `--input` (its index is the number pushed before):
    /// `@FILE.npy` (the file's first array), `+FILE.npy` (its next array),
    /// `*FILE.npy` (all its following arrays, one argument each), raw bytes
    /// `SHAPExTYPE=@FILE` (or `=+FILE`, continuing where the previous input
    /// from FILE ended), `(null)` (`None`), or IREE's text form
    /// (`2x3xf32=1 2 3 4 5 6`, `42`). `&` inputs (output storage) are refused.
    pub fn push(&mut self, spec: &str) -> Result<(), InputError> {
        let i = self.count;
        self.count += 1;
        let fail = |message: String| InputError::Input { index: i, spec: spec.to_owned(), message };
        if let Some(rest) = spec.strip_prefix(['@', '+', '*']) {
            if rest.is_empty() {
                return Err(fail(format!("the file name is missing ({spec}FILE.npy)")));
            }
            let path = Path::new(rest);
            let (file, mut at) = match (spec.as_bytes()[0], self.npy.get(path)) {
                (b'+' | b'*', Some((file, at))) => (file.clone(), *at),
                _ => (self.fs.read(path).map_err(|e| fail(e.to_string()))?, 0),
            };
            let all = spec.starts_with('*');
            loop {
                if all && at == file.len() {
                    break;
                }
                let (a, next) = crate::npy::read_at(&file, at).map_err(|e| {
                    if at == file.len() {
                        fail(format!("no array is left in the file (it has {at} bytes)"))
                    } else {
                        fail(e.to_string())
                    }
                })?;
                self.values.push(Value::from(a));
                at = next;
                if !all {
                    break;
                }
            }
            self.npy.insert(path.to_path_buf(), (file, at));
            return Ok(());
        }
        if spec.trim() == "(null)" {
            self.values.push(Value::None);
            return Ok(());
        }
        if spec.starts_with('&') {
            return Err(fail(
                "output storage buffers (iree-run-module's `&` inputs) are not supported: \
                 fnabi allocates every result itself"
                    .into(),
            ));
        }
        if let Some((header, body)) = spec.split_once('=') {
            let body = body.trim();
            if let Some((cont, path)) =
                body.strip_prefix('@').map(|p| (false, p)).or(body.strip_prefix('+').map(|p| (true, p)))
            {
                if path.is_empty() {
                    return Err(fail(format!("the file name is missing ({}FILE)", spec.trim_end())));
                }
                let v = self.raw_input(i, header, Path::new(path), cont)?;
                self.values.push(v);
                return Ok(());
            }
        }
        let v = crate::text::parse_value(spec).map_err(|error| InputError::Text {
            index: i,
            spec: spec.to_owned(),
            error,
        })?;
        self.values.push(v);
        Ok(())
    }

    /// A dense C-order array of the type `header` (`2x3xf32`) from the bytes
    /// of `path`, at its start or (`cont`) where the previous input stopped.
    fn raw_input(&mut self, i: usize, header: &str, path: &Path, cont: bool) -> Result<Value<'static>, InputError> {
        let bad = |message: String| InputError::Input {
            index: i,
            spec: format!("{header}={}{}", if cont { '+' } else { '@' }, path.display()),
            message,
        };
        let mut parts: Vec<&str> = header.trim().split('x').collect();
        let ty = parts.pop().unwrap_or_default();
        let dtype = crate::text::dtype_from_name(ty).ok_or_else(|| bad(format!("unknown element type {ty:?}")))?;
        let shape = parts
            .iter()
            .map(|d| d.parse::<usize>().map_err(|_| bad(format!("{d:?} is not a dimension"))))
            .collect::<Result<Vec<_>, _>>()?;
        let n = shape
            .iter()
            .try_fold(dtype.size(), |acc, &d| acc.checked_mul(d))
            .ok_or_else(|| bad("the shape is too large".into()))?;
        let start = if cont { self.raw.get(path).copied().unwrap_or(0) } else { 0 };
        let file = self.fs.read(path).map_err(|e| bad(bare(&e)))?;
        let bytes = file.as_bytes();
        let chunk = bytes
            .get(start..start.saturating_add(n))
            .ok_or_else(|| bad(format!("needs {n} bytes from byte {start}, but the file has {} bytes", bytes.len())))?;
        self.raw.insert(path.to_path_buf(), start + n);
        let buf = ByteBuffer::copy_from_slice(chunk).map_err(|e| bad(e.to_string()))?;
        Ok(Value::from(buf.array(dtype, &shape, None, 0).map_err(|e| bad(e.to_string()))?))
    }

    /// The arguments read so far, in order.
    pub fn values(&self) -> &[Value<'static>] {
        &self.values
    }

    /// The arguments read, in order.
    pub fn finish(self) -> Vec<Value<'static>> {
        self.values
    }
}

/// The positional arguments that `--input`s stand for (see
/// [`InputReader::push`]).
///
/// ```
/// use fnabi_core::inputs::{read_inputs, MemoryFiles};
/// use fnabi_core::Value;
/// let values = read_inputs(&["2xi32=5 6", "(null)", "1.5"], &MemoryFiles::new()).unwrap();
/// assert_eq!(values[0].as_array().unwrap().to_string(), "2xi32=5 6");
/// assert_eq!(values[1], Value::None);
/// assert_eq!(values[2], Value::Float(1.5));
/// ```
pub fn read_inputs<S: AsRef<str>>(specs: &[S], fs: &dyn InputFileSystem) -> Result<Vec<Value<'static>>, InputError> {
    let mut reader = InputReader::new(fs);
    for s in specs {
        reader.push(s.as_ref())?;
    }
    Ok(reader.finish())
}

/// The arguments of the JSON file at `path` (read through `fs`): see
/// [`arguments_from_json`].
///
/// ```
/// use fnabi_core::inputs::{read_arguments, MemoryFiles};
/// use fnabi_core::Value;
/// use std::path::Path;
/// let mut files = MemoryFiles::new();
/// files.insert("call.json", r#"[1, "two"]"#);
/// let (args, kwargs) = read_arguments(Path::new("call.json"), &files).unwrap();
/// assert_eq!(args, [Value::Int(1), Value::Str("two".into())]);
/// assert!(kwargs.is_empty());
/// files.insert("bad.json", "[1,");
/// let e = read_arguments(Path::new("bad.json"), &files).unwrap_err();
/// assert!(e.to_string().starts_with("bad.json: "));
/// ```
pub fn read_arguments(
    path: &Path,
    fs: &dyn InputFileSystem,
) -> Result<(Vec<Value<'static>>, Dict<'static>), InputError> {
    let file = read_file(path, fs)?;
    arguments_from_json(file.as_bytes(), &path.display().to_string(), fs)
}

/// The bytes of the file at `path`, read through `fs`; the error names
/// the file ([`InputError::Read`]).
///
/// ```
/// use fnabi_core::inputs::{read_file, MemoryFiles};
/// use std::path::Path;
/// let mut files = MemoryFiles::new();
/// files.insert("call.json", "[1]");
/// assert_eq!(read_file(Path::new("call.json"), &files).unwrap().as_bytes(), b"[1]");
/// assert!(read_file(Path::new("none.json"), &files).unwrap_err().to_string().starts_with("cannot read none.json: "));
/// ```
pub fn read_file(path: &Path, fs: &dyn InputFileSystem) -> Result<ByteBuffer, InputError> {
    fs.read(path).map_err(|e| InputError::Read { file: path.display().to_string(), message: bare(&e) })
}

/// The arguments a JSON text stands for (`label` names it in errors):
/// `{"$args": [...], "$kwargs": {...}}` (either key may be left out) is
/// both; otherwise a list is the positional arguments, an object the keyword
/// arguments, and anything else the one argument. A string `"@FILE.npy"`
/// anywhere is that file's array, read through `fs` (`"@@…"` is a string
/// starting with `@`).
///
/// ```
/// use fnabi_core::inputs::{arguments_from_json, MemoryFiles};
/// let mut files = MemoryFiles::new();
/// files.insert("x.npy", fnabi_core::npy::to_bytes(&fnabi_core::Array::scalar(2.5f32)).unwrap());
/// let json = br#"{"$args": ["@x.npy", "@@name"], "$kwargs": {"n": 3}}"#;
/// let (args, kwargs) = arguments_from_json(json, "call.json", &files).unwrap();
/// assert_eq!(args[0].as_array().unwrap().to_string(), "f32=2.5");
/// assert_eq!(args[1], fnabi_core::Value::Str("@name".into()));
/// assert_eq!(kwargs.len(), 1);
/// let e = arguments_from_json(br#"{"$args": 1}"#, "call.json", &files).unwrap_err();
/// assert_eq!(e.to_string(), "call.json: $args takes a list, got int");
/// ```
pub fn arguments_from_json(
    bytes: &[u8],
    label: &str,
    fs: &dyn InputFileSystem,
) -> Result<(Vec<Value<'static>>, Dict<'static>), InputError> {
    let fail = |message: String| InputError::Arguments { file: label.to_owned(), message };
    let v = crate::json::from_slice(bytes).map_err(|e| fail(e.to_string()))?;
    let v = resolve_files(v, &mut Vec::new(), fs).map_err(fail)?;
    let is_call =
        matches!(&v, Value::Dict(d) if !d.is_empty() && d.keys().all(|k| &**k == "$args" || &**k == "$kwargs"));
    let d = match v {
        Value::Dict(d) if is_call => d,
        v => return Ok(crate::function::split_arguments(v)),
    };
    let mut args = Vec::new();
    let mut kwargs = Dict::new();
    for (k, v) in d.into_iter() {
        match (&*k, v) {
            ("$args", Value::List(items) | Value::Tuple(items)) => args = items,
            ("$kwargs", Value::Dict(d)) => kwargs = d,
            (k, v) => {
                let wants = if k == "$args" { "a list" } else { "an object" };
                return Err(fail(format!("{k} takes {wants}, got {}", v.kind())));
            }
        }
    }
    Ok((args, kwargs))
}

/// What [`arguments_from_json`] followed by
/// [`coerce_arguments`](crate::coerce::coerce_arguments) give for the
/// parameters `params`, read on a fast path: an argument that a parameter
/// types as an array is read from its nested lists of numbers straight
/// into the array's elements, with no [`Value`] per element (a JSON list
/// of a million numbers costs the array's bytes, not a million values).
/// Every other argument is read and typed as the general path does.
///
/// `None` when the text needs the general path: anything the fast path
/// does not take as it is (an empty list, a ragged one, a number that is
/// no valid element, invalid JSON...) — the general path then reads the
/// text again and reports the error, if there is one. So the result, when
/// there is one, is exactly the general path's.
///
/// ```
/// use fnabi_core::coerce::{InputParam, InputType};
/// use fnabi_core::inputs::{typed_arguments_from_json, MemoryFiles};
/// use fnabi_core::DType;
/// let x = InputParam { name: Some("x".into()), ty: InputType::Array { dtype: DType::F32, dims: None } };
/// let (args, kwargs) = typed_arguments_from_json(b"[[[1, 2], [3, 4.5]]]", &MemoryFiles::new(), &[x.clone()]).unwrap();
/// assert_eq!(args[0].as_array().unwrap().to_string(), "2x2xf32=[1 2][3 4.5]");
/// assert!(kwargs.is_empty());
/// let (_, kwargs) = typed_arguments_from_json(br#"{"x": [1, 2]}"#, &MemoryFiles::new(), &[x.clone()]).unwrap();
/// assert_eq!(kwargs.get("x").unwrap().as_array().unwrap().to_string(), "2xf32=1 2");
/// // Ragged: the general path explains.
/// assert!(typed_arguments_from_json(b"[[[1, 2], [3]]]", &MemoryFiles::new(), &[x]).is_none());
/// ```
pub fn typed_arguments_from_json(
    bytes: &[u8],
    fs: &dyn InputFileSystem,
    params: &[crate::coerce::InputParam],
) -> Option<(Vec<Value<'static>>, Dict<'static>)> {
    typed_json::typed_arguments(bytes, fs, params)
}

/// Replaces every string `"@FILE.npy"` inside `v` by the array in FILE.
fn resolve_files(
    v: Value<'static>,
    path: &mut Vec<PathKey>,
    fs: &dyn InputFileSystem,
) -> Result<Value<'static>, String> {
    let mut within = |key: PathKey, item: Value<'static>| {
        path.push(key);
        let r = resolve_files(item, path, fs);
        path.pop();
        r
    };
    Ok(match v {
        Value::Str(s) if s.starts_with("@@") => Value::Str(s[1..].to_owned()),
        Value::Str(s) if s.starts_with('@') => {
            let file = Path::new(&s[1..]);
            let a = fs.read(file).and_then(|b| crate::npy::read_buffer(&b)).map_err(|e| {
                let at = if path.is_empty() { String::new() } else { format!("at {}: ", IndexPath(path.clone())) };
                format!("{at}{e}")
            })?;
            Value::from(a)
        }
        Value::List(items) => Value::List(
            items.into_iter().enumerate().map(|(i, x)| within(PathKey::Index(i), x)).collect::<Result<_, _>>()?,
        ),
        Value::Tuple(items) => Value::Tuple(
            items.into_iter().enumerate().map(|(i, x)| within(PathKey::Index(i), x)).collect::<Result<_, _>>()?,
        ),
        Value::Dict(d) => {
            let mut out = Dict::with_capacity(d.len());
            for (k, x) in d.into_iter() {
                let x = within(PathKey::Name(k.clone()), x)?;
                out.push_unique(k, x);
            }
            Value::Dict(out)
        }
        other => other,
    })
}

mod typed_json;

#[cfg(test)]
mod tests;
