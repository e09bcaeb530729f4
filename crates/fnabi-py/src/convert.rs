//! Python objects ⇄ fnabi host values: nested dicts, lists, tuples and
//! scalars map one to one; numpy arrays (and whatever `numpy.asarray` takes
//! without copying: `__array__`, the buffer protocol, `__dlpack__`) become
//! [`Array`]s that borrow the numpy memory, and result arrays become numpy
//! arrays that own fnabi's memory.

use crate::errors;
use fnabi::array::DimVec;
use fnabi::limits::MAX_DEPTH;
use fnabi::scalar::Float8;
use fnabi::structure::PathKey;
use fnabi::value::Key;
use fnabi::{Array, DType, Dict, IndexPath, Value};
use numpy::npyffi::{self, NPY_TYPES, PY_ARRAY_API, npy_intp};
use numpy::prelude::*;
use numpy::{PyArrayDescr, PyUntypedArray};
use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::{Mutex, MutexGuard, TryLockError};

/// Why an argument could not become a host value, and where (boxed: the
/// happy path moves only a pointer-sized error slot).
pub struct Fail(Box<FailKind>);

enum FailKind {
    /// A Python error to pass on as it is.
    Py(PyErr),
    /// A value fnabi cannot take, at an index path (innermost key last,
    /// built as the recursion unwinds).
    At {
        /// The path, reversed.
        rev_path: Vec<PathKey>,
        /// What is wrong.
        message: String,
        /// What would have been accepted.
        expected: Option<String>,
        /// What was given.
        got: Option<String>,
    },
}

impl From<PyErr> for Fail {
    fn from(e: PyErr) -> Self {
        Fail(Box::new(FailKind::Py(e)))
    }
}

impl Fail {
    fn at(message: impl Into<String>, expected: Option<String>, got: Option<String>) -> Fail {
        Fail(Box::new(FailKind::At { rev_path: Vec::new(), message: message.into(), expected, got }))
    }

    /// The same failure one level down: `key` goes in front of the path.
    pub fn within(mut self, key: PathKey) -> Fail {
        if let FailKind::At { rev_path, .. } = &mut *self.0 {
            rev_path.push(key);
        }
        self
    }

    /// The `fnabi.CallError` (or the Python error) this stands for.
    pub fn into_py(self, py: Python<'_>) -> PyErr {
        match *self.0 {
            FailKind::Py(e) => e,
            FailKind::At { mut rev_path, message, expected, got } => {
                rev_path.reverse();
                let path = IndexPath(rev_path).to_string();
                let at = if path.is_empty() { "the root".to_owned() } else { path.clone() };
                errors::call_error(py, path, format!("argument {at}: {message}"), expected, got)
            }
        }
    }
}

/// Slots of the dict-key cache (a power of two).
const KEY_SLOTS: usize = 256;

/// fnabi keys of Python dict keys. Keys repeat from call to call (the same
/// interned `str` objects), so their fnabi keys are cached by object
/// identity: each slot holds a strong reference to its `str`, so the
/// address cannot be reused by another object while the slot holds it.
struct KeyCache {
    slots: Vec<Option<(Py<PyString>, Key)>>,
}

impl KeyCache {
    /// The one cache, locked at a call's first dict key ([`Keep::key`]).
    fn shared(py: Python<'_>) -> &'static Mutex<KeyCache> {
        static CACHE: PyOnceLock<Mutex<KeyCache>> = PyOnceLock::new();
        CACHE.get_or_init(py, || Mutex::new(KeyCache { slots: (0..KEY_SLOTS).map(|_| None).collect() }))
    }

    /// The fnabi key of `key`, cached. (Should releasing a replaced key run
    /// Python code — a `str` subclass with `__del__` — that calls fnabi,
    /// that call finds the cache held and makes its keys without it.)
    fn key(&mut self, key: &Bound<'_, PyString>) -> PyResult<Key> {
        let addr = key.as_ptr() as usize;
        let slot = (addr >> 4 ^ addr >> 12) & (KEY_SLOTS - 1);
        if let Some(Some((k, v))) = self.slots.get(slot)
            && k.as_ptr() == key.as_ptr()
        {
            return Ok(v.clone());
        }
        let value: Key = key.to_cow()?.into();
        if let Some(s) = self.slots.get_mut(slot) {
            *s = Some((key.clone().unbind(), value.clone()));
        }
        Ok(value)
    }
}

/// What the host values of one call need from Python while they are made
/// and used: the numpy arrays they borrow memory from (the caller's and
/// those made by conversions), which must outlive the values, and the
/// dict-key cache, locked once for the whole conversion (a lock per key
/// was ~9 % of a call with a dict of 8 arrays).
pub struct Keep<'py> {
    arrays: Vec<Bound<'py, PyAny>>,
    /// Locked at the first key (a call without dict keys never locks it);
    /// `Some(None)` when another conversion holds it (another thread whose
    /// conversion let go of the GIL, or a conversion on this thread that
    /// called back into fnabi): keys are then made without it.
    keys: Option<Option<MutexGuard<'static, KeyCache>>>,
    /// Whether read-only numpy arrays are copied (for a function whose
    /// code may write its array arguments).
    copy_read_only: bool,
}

impl<'py> Keep<'py> {
    /// Ready for one call's conversion; `copy_read_only`: the function may
    /// write into its array arguments, so a numpy array whose memory must
    /// not be written is passed as a copy.
    pub fn new(copy_read_only: bool) -> Self {
        Keep { arrays: Vec::with_capacity(8), keys: None, copy_read_only }
    }

    /// The fnabi key of a Python dict key.
    pub fn key(&mut self, key: &Bound<'_, PyString>) -> PyResult<Key> {
        let cache = self.keys.get_or_insert_with(|| match KeyCache::shared(key.py()).try_lock() {
            Ok(cache) => Some(cache),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        });
        match cache {
            Some(cache) => cache.key(key),
            None => Ok(key.to_cow()?.into()),
        }
    }

    /// Lets go of the key cache (before the call, which runs without the
    /// GIL: other threads convert meanwhile). The arrays stay.
    pub fn release_keys(&mut self) {
        self.keys = None;
    }
}

/// The host value of a Python argument.
///
/// Arrays in the value borrow the memory of numpy arrays, each of which is
/// kept in `keep` (a strong reference: the call releases the GIL, and
/// another thread could meanwhile drop a container's last other reference
/// to one of them), for the lifetime `'a`, which the caller picks.
///
/// # Safety
/// The caller must keep `keep` (the arrays in it) alive for as long as the
/// returned value (any part of it) is used.
pub unsafe fn to_value<'py, 'a>(obj: &Bound<'py, PyAny>, keep: &mut Keep<'py>) -> Result<Value<'a>, Fail> {
    // SAFETY: forwarded to the caller.
    unsafe { value_at(obj, keep, 0) }
}

/// [`to_value`] of a value inside `depth` dicts, lists and tuples: past
/// [`MAX_DEPTH`] an error (no function's structure is deeper, and a
/// Python object can nest as deep as memory allows: recursing into a
/// 10 000-deep list overflowed the stack).
///
/// # Safety
/// As [`to_value`].
unsafe fn value_at<'py, 'a>(obj: &Bound<'py, PyAny>, keep: &mut Keep<'py>, depth: usize) -> Result<Value<'a>, Fail> {
    let py = obj.py();
    if let Ok(a) = obj.cast::<PyUntypedArray>() {
        // SAFETY: forwarded to the caller.
        return unsafe { array_value(a, keep) };
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        too_deep(obj, depth)?;
        let mut out = Dict::with_capacity(d.len());
        for (k, v) in d.iter() {
            let Ok(key) = k.cast::<PyString>() else {
                let got = k.get_type().name().map(|n| n.to_string()).unwrap_or_default();
                return Err(Fail::at(
                    format!("dict keys must be str, got a key of type {got}"),
                    Some("str".into()),
                    Some(got),
                ));
            };
            let key = keep.key(key)?;
            // SAFETY: forwarded to the caller (`v` is reachable from `obj`).
            let value = unsafe { value_at(&v, keep, depth + 1) }.map_err(|f| f.within(PathKey::Name(key.clone())))?;
            out.push_unique(key, value);
        }
        return Ok(Value::Dict(out));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        too_deep(obj, depth)?;
        // SAFETY: forwarded to the caller.
        return Ok(Value::List(unsafe { sequence(l.iter(), keep, depth + 1) }?));
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        too_deep(obj, depth)?;
        // SAFETY: forwarded to the caller.
        return Ok(Value::Tuple(unsafe { sequence(t.iter(), keep, depth + 1) }?));
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(i) = obj.cast::<PyInt>() {
        return match i.extract::<i64>() {
            Ok(v) => Ok(Value::Int(v)),
            Err(e) if e.is_instance_of::<PyOverflowError>(py) => Err(Fail::at(
                format!("the int {i} does not fit in 64 signed bits"),
                Some("an int in [-2**63, 2**63)".into()),
                Some(i.to_string()),
            )),
            Err(e) => Err(e.into()),
        };
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Value::Float(f.value()));
    }
    if obj.is_none() {
        return Ok(Value::None);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::Str(s.to_cow()?.into_owned()));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Value::Bytes(b.as_bytes().to_vec()));
    }
    // A numpy scalar (np.float32(1.5), np.int64(3), np.bool_(True)) is the
    // Python scalar it holds.
    let np = numpy_module(py)?;
    if obj.is_instance(&np.getattr(pyo3::intern!(py, "generic"))?)? {
        let item = obj.call_method0(pyo3::intern!(py, "item"))?;
        if item.is_instance_of::<PyBool>() || item.is_instance_of::<PyInt>() || item.is_instance_of::<PyFloat>() {
            // SAFETY: a Python scalar borrows nothing.
            return unsafe { value_at(&item, keep, depth) };
        }
        return Err(unsupported(obj));
    }
    // Anything numpy views without copying: `__dlpack__` (PyTorch, JAX),
    // `__array__`, the buffer protocol (memoryview, bytearray, array.array).
    let asarray = if obj.hasattr(pyo3::intern!(py, "__dlpack__"))? {
        Some(np.getattr(pyo3::intern!(py, "from_dlpack"))?)
    } else if obj.hasattr(pyo3::intern!(py, "__array__"))?
        || obj.hasattr(pyo3::intern!(py, "__array_interface__"))?
        || has_buffer(obj)?
    {
        Some(np.getattr(pyo3::intern!(py, "asarray"))?)
    } else {
        None
    };
    if let Some(asarray) = asarray {
        let arr = asarray.call1((obj,))?;
        if let Ok(a) = arr.cast::<PyUntypedArray>() {
            // SAFETY: forwarded to the caller (`array_value` keeps `arr`).
            return unsafe { array_value(a, keep) };
        }
    }
    Err(unsupported(obj))
}

/// The error of a dict, list or tuple (`obj`) inside `depth` others, when
/// that is more than [`MAX_DEPTH`].
#[inline]
fn too_deep(obj: &Bound<'_, PyAny>, depth: usize) -> Result<(), Fail> {
    if depth < MAX_DEPTH {
        return Ok(());
    }
    let got = obj.get_type().name().map(|n| n.to_string()).unwrap_or_default();
    Err(Fail::at(
        format!("dicts, lists and tuples nest more than {MAX_DEPTH} levels deep here"),
        Some(format!("at most {MAX_DEPTH} levels")),
        Some(format!("a {got} at level {}", depth + 1)),
    ))
}

fn unsupported(obj: &Bound<'_, PyAny>) -> Fail {
    let got = obj.get_type().name().map(|n| n.to_string()).unwrap_or_default();
    Fail::at(
        format!(
            "a {got} cannot be passed (arrays, int, float, bool, str, bytes, None, and dicts, lists and tuples of them)"
        ),
        None,
        Some(got),
    )
}

/// Whether `obj` has the buffer protocol (`memoryview(obj)` works; the
/// limited API has no direct check before Python 3.11).
fn has_buffer(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = obj.py();
    let memoryview = py.import(pyo3::intern!(py, "builtins"))?.getattr(pyo3::intern!(py, "memoryview"))?;
    Ok(memoryview.call1((obj,)).is_ok())
}

/// The items of a list or tuple.
///
/// # Safety
/// As for [`to_value`].
unsafe fn sequence<'py, 'a>(
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    keep: &mut Keep<'py>,
    depth: usize,
) -> Result<Vec<Value<'a>>, Fail> {
    items
        .enumerate()
        // SAFETY: forwarded to the caller (the items are reachable from the sequence).
        .map(|(i, v)| unsafe { value_at(&v, keep, depth) }.map_err(|f| f.within(PathKey::Index(i))))
        .collect()
}

fn numpy_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static NUMPY: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    NUMPY.get_or_try_init(py, || py.import("numpy").map(Bound::unbind)).map(|m| m.bind(py))
}

/// The `ml_dtypes` numpy dtype of `bfloat16` or an 8-bit float (its
/// `ml_dtypes` name), when `ml_dtypes` is installed.
fn ml_dtypes_descr<'py>(py: Python<'py>, name: &'static str) -> PyResult<&'py Bound<'py, PyArrayDescr>> {
    static DESCRS: PyOnceLock<Vec<(&'static str, Py<PyArrayDescr>)>> = PyOnceLock::new();
    let all = DESCRS.get_or_try_init(py, || {
        let ml = py.import("ml_dtypes").map_err(|_| {
            errors::error(
                py,
                errors::Kind::Base,
                "bfloat16 and float8 arrays need the `ml_dtypes` package (pip install ml_dtypes), which is not installed",
            )
        })?;
        let names = std::iter::once("bfloat16").chain(Float8::ALL.iter().map(|f| f.npy_name()));
        names
            .map(|n| Ok::<_, PyErr>((n, PyArrayDescr::new(py, &ml.getattr(n)?)?.unbind())))
            .collect::<PyResult<Vec<_>>>()
    })?;
    let (_, d) = all
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| errors::error(py, errors::Kind::Base, format!("ml_dtypes has no dtype {name}")))?;
    Ok(d.bind(py))
}

/// The `ml_dtypes` name of a dtype numpy lacks (`bfloat16`, the 8-bit floats).
fn ml_dtypes_name(dtype: DType) -> Option<&'static str> {
    match dtype {
        DType::BF16 => Some("bfloat16"),
        DType::Float8(f) => Some(f.npy_name()),
        _ => None,
    }
}

/// The fnabi element type of a numpy dtype.
fn dtype_of(descr: &Bound<'_, PyArrayDescr>) -> Result<DType, Fail> {
    let size = descr.itemsize();
    let dt = match (descr.kind(), size) {
        (b'b', 1) => Some(DType::BOOL),
        (b'i', 1) => Some(DType::I8),
        (b'i', 2) => Some(DType::I16),
        (b'i', 4) => Some(DType::I32),
        (b'i', 8) => Some(DType::I64),
        (b'u', 1) => Some(DType::U8),
        (b'u', 2) => Some(DType::U16),
        (b'u', 4) => Some(DType::U32),
        (b'u', 8) => Some(DType::U64),
        (b'f', 2) => Some(DType::F16),
        (b'f', 4) => Some(DType::F32),
        (b'f', 8) => Some(DType::F64),
        (b'c', 8) => Some(DType::C64),
        (b'c', 16) => Some(DType::C128),
        (b'V', 1 | 2) if !descr.has_fields() => {
            // ml_dtypes' bfloat16 and 8-bit floats (user dtypes of kind 'V');
            // only when it is installed, since only then can such an array exist.
            let candidates = if size == 2 { &[DType::BF16][..] } else { &DType::FLOAT8[..] };
            candidates.iter().copied().find(|&d| {
                ml_dtypes_name(d)
                    .and_then(|n| ml_dtypes_descr(descr.py(), n).ok())
                    .is_some_and(|m| descr.is_equiv_to(m))
            })
        }
        _ => None,
    };
    dt.ok_or_else(|| {
        let name = descr.str().map(|s| s.to_string()).unwrap_or_default();
        Fail::at(
            format!("numpy dtype {name} has no fnabi element type"),
            Some("bool, int8-64, uint8-64, float16/32/64, bfloat16, float8, complex64 or complex128".into()),
            Some(name),
        )
    })
}

/// An [`Array`] over a numpy array's memory (no copy). Arrays whose bytes
/// fnabi cannot address in place (non-native byte order, strides that are
/// not whole elements, misaligned data) are first made an aligned native
/// copy by numpy, which `keep` holds.
///
/// # Safety
/// As for [`to_value`].
unsafe fn array_value<'py, 'a>(a: &Bound<'py, PyUntypedArray>, keep: &mut Keep<'py>) -> Result<Value<'a>, Fail> {
    let descr = a.dtype();
    let dtype = dtype_of(&descr)?;
    // SAFETY: a live numpy array; its flags are read, not written.
    let writeable = unsafe { (*a.as_array_ptr()).fields.flags } & npyffi::NPY_ARRAY_WRITEABLE != 0;
    if !writeable && keep.copy_read_only {
        // The code may write its arguments and this memory must not be
        // written (a read-only mapping would fault, a `bytes` object would
        // change under Python): a writable copy of the same dtype.
        let copy = numpy_module(a.py())?.call_method1(pyo3::intern!(a.py(), "array"), (a,))?;
        let c = copy.cast::<PyUntypedArray>().map_err(PyErr::from)?;
        // SAFETY: forwarded to the caller (the copy goes to `keep` there).
        return unsafe { array_value(c, keep) };
    }
    let es = dtype.size();
    let native = descr.is_native_byteorder().unwrap_or(true);
    let shape = a.shape();
    // Strides in elements (`None` when one is not a whole number of
    // elements), on the stack up to rank 8 (a `DimVec` built out of line
    // and moved was copied with wide loads over its word stores).
    let mut small = [0isize; 8];
    let large: Option<Vec<isize>>;
    let strides: Option<&[isize]> = match small.get_mut(..shape.len()) {
        Some(out) => {
            let whole = out.iter_mut().zip(a.strides()).try_for_each(|(o, &s)| {
                *o = in_elements(s, es)?;
                Some(())
            });
            whole.map(|()| &*out)
        }
        None => {
            large = a.strides().iter().map(|&s| in_elements(s, es)).collect();
            large.as_deref()
        }
    };
    let Some(strides) = strides.filter(|_| native && a.is_aligned()) else {
        // A value-preserving copy in native order (not a dtype cast).
        let py = a.py();
        let copy = numpy_module(py)?.call_method1(
            pyo3::intern!(py, "ascontiguousarray"),
            (a, descr.call_method1(pyo3::intern!(py, "newbyteorder"), ("=",))?),
        )?;
        let c = copy.cast::<PyUntypedArray>().map_err(PyErr::from)?;
        // SAFETY: forwarded to the caller (the copy goes to `keep` there).
        return unsafe { array_value(c, keep) };
    };
    // SAFETY: a live numpy array; its fields are read, not written.
    let data = unsafe { (*a.as_array_ptr()).fields.data }.cast::<u8>();
    // The bytes the array addresses, relative to element [0, …, 0].
    let (mut lo, mut hi) = (0isize, es as isize);
    let empty = shape.contains(&0);
    if !empty {
        for (&n, &s) in shape.iter().zip(a.strides()) {
            let last = (n as isize - 1) * s;
            if last < 0 { lo += last } else { hi += last }
        }
    }
    let (bytes, offset): (&'a [u8], usize) = if empty || data.is_null() {
        // No bytes, at an address aligned for any element type.
        let base = NonNull::<u64>::dangling().as_ptr().cast::<u8>();
        // SAFETY: an empty slice at a non-null, aligned address.
        (unsafe { std::slice::from_raw_parts(base, 0) }, 0)
    } else {
        let start = data.wrapping_offset(lo);
        // SAFETY: numpy guarantees that every element of the array lies in
        // its memory, which is `start..start + (hi - lo)` by the strides;
        // the array goes to `keep`, which the caller keeps alive for 'a
        // (`to_value`'s contract).
        (unsafe { std::slice::from_raw_parts(start, (hi - lo) as usize) }, (-lo) as usize)
    };
    // Into its box in place: a call's arrays are small, and moving each
    // one into its box was most of the cost of viewing it.
    let array = Array::boxed_from_bytes(dtype, shape, Some(strides), bytes, offset)
        .map_err(|e| Fail::at(e.to_string(), None, None))?;
    keep.arrays.push(a.clone().into_any());
    Ok(Value::Array(array))
}

/// A stride of `bytes` in elements of `es` bytes, `None` when it is not a
/// whole number of them: a mask and a shift, as every element size is a
/// power of two (a division per stride cost more than the rest of viewing
/// a small array's layout).
#[inline(always)]
fn in_elements(bytes: isize, es: usize) -> Option<isize> {
    if es.is_power_of_two() {
        (bytes & (es as isize - 1) == 0).then_some(bytes >> es.trailing_zeros())
    } else {
        (bytes % es as isize == 0).then_some(bytes / es as isize)
    }
}

/// Keeps a result array's memory alive for the numpy array that views it:
/// the numpy array's `base`.
#[pyclass(frozen, module = "fnabi", name = "_ResultMemory")]
pub struct ResultMemory {
    #[allow(dead_code)]
    array: Array<'static>,
}

/// numpy's type number of a dtype (`None` for bfloat16 and the 8-bit
/// floats, which numpy lacks: see [`ml_dtypes_name`]).
fn typenum(dtype: DType) -> Option<NPY_TYPES> {
    Some(match dtype {
        DType::Bool => NPY_TYPES::NPY_BOOL,
        DType::I8 => NPY_TYPES::NPY_BYTE,
        DType::U8 => NPY_TYPES::NPY_UBYTE,
        DType::I16 => NPY_TYPES::NPY_SHORT,
        DType::U16 => NPY_TYPES::NPY_USHORT,
        DType::I32 => NPY_TYPES::NPY_INT,
        DType::U32 => NPY_TYPES::NPY_UINT,
        DType::I64 if size_of::<std::ffi::c_long>() == 8 => NPY_TYPES::NPY_LONG,
        DType::U64 if size_of::<std::ffi::c_long>() == 8 => NPY_TYPES::NPY_ULONG,
        DType::I64 => NPY_TYPES::NPY_LONGLONG,
        DType::U64 => NPY_TYPES::NPY_ULONGLONG,
        DType::F16 => NPY_TYPES::NPY_HALF,
        DType::F32 => NPY_TYPES::NPY_FLOAT,
        DType::F64 => NPY_TYPES::NPY_DOUBLE,
        DType::C64 => NPY_TYPES::NPY_CFLOAT,
        DType::C128 => NPY_TYPES::NPY_CDOUBLE,
        DType::BF16 | DType::Float8(_) => return None,
    })
}

/// A numpy array that owns `a` (no copy): its memory is released once, when
/// the last numpy reference to it (or to a view of it) dies.
fn array_to_py<'py>(py: Python<'py>, a: Array<'static>) -> PyResult<Bound<'py, PyAny>> {
    let descr: *mut npyffi::PyArray_Descr = match typenum(a.dtype()) {
        // SAFETY: numpy's C API, with the GIL held; returns a new reference.
        Some(t) => unsafe { PY_ARRAY_API.PyArray_DescrFromType(py, t as i32) },
        None => ml_dtypes_descr(py, ml_dtypes_name(a.dtype()).unwrap_or("bfloat16"))?.clone().into_dtype_ptr(),
    };
    let es = a.dtype().size() as npy_intp;
    let mut dims: DimVec<npy_intp> = a.shape().iter().map(|&n| n as npy_intp).collect();
    let mut strides: DimVec<npy_intp> = a.strides().iter().map(|&s| s as npy_intp * es).collect();
    let data = a.as_ptr().cast_mut().cast::<c_void>();
    let flags = if a.is_writable() { npyffi::NPY_ARRAY_WRITEABLE } else { 0 };
    let nd = dims.len() as i32;
    let owner = Bound::new(py, ResultMemory { array: a })?;
    // SAFETY: numpy's C API with the GIL held. `descr` is a new reference,
    // which the call steals; dims and strides (in bytes) describe exactly
    // the elements of the fnabi array, which lie in its storage (checked
    // when the array was built), and `data` stays valid while `owner` (set
    // as the array's base, which steals that reference) lives.
    unsafe {
        let arr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            npyffi::get_type_object(py, npyffi::NpyTypes::PyArray_Type),
            descr,
            nd,
            dims.as_mut_ptr(),
            strides.as_mut_ptr(),
            data,
            flags,
            std::ptr::null_mut(),
        );
        let arr = Bound::from_owned_ptr_or_err(py, arr)?;
        if PY_ARRAY_API.PyArray_SetBaseObject(py, arr.as_ptr().cast(), owner.into_ptr()) != 0 {
            return Err(PyErr::fetch(py));
        }
        Ok(arr)
    }
}

/// The Python object of a result value.
pub fn to_py<'py>(py: Python<'py>, v: Value<'static>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::None => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(f) => PyFloat::new(py, f).into_any(),
        Value::Str(s) => PyString::new(py, &s).into_any(),
        Value::Bytes(b) => PyBytes::new(py, &b).into_any(),
        Value::List(items) => {
            let items = items.into_iter().map(|v| to_py(py, v)).collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Tuple(items) => {
            let items = items.into_iter().map(|v| to_py(py, v)).collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, items)?.into_any()
        }
        Value::Dict(d) => {
            let out = PyDict::new(py);
            for (k, v) in d {
                out.set_item(PyString::new(py, &k), to_py(py, v)?)?;
            }
            out.into_any()
        }
        Value::Array(a) => array_to_py(py, *a)?,
    })
}
