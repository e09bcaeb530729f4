//! The IREE VM value model, without a runtime: what a VM function takes and
//! returns. A [`Variant`] is empty, a sized value (`i8`…`i64`, `f32`,
//! `f64`) or a reference ([`VmRef`]) to a [`VmList`], a [`BufferView`] or an
//! [`OpaqueRef`]; a list has an [`ListElementType`] (any variant, one value
//! type, or one ref type). A function's register signature is its
//! [`CallingConvention`] (`0rr_rrI`).
//!
//! The model mirrors `iree_vm_variant_t`, `iree_vm_list_t` and
//! `iree_hal_buffer_view_t` so that a runtime bridge can translate it one to
//! one; it is stricter than the runtime in two places, both documented where
//! they apply: a typed list accepts only its exact element type (IREE
//! converts between value types silently), and a buffer view is always dense
//! and row-major (its payload is a C-contiguous [`Array`]).
//!
//! ```
//! use fnabi_core::vm::{CallingConvention, ListElementType, ValueType, Variant, VmList};
//! let cc: CallingConvention = "0rIIiiCID_r".parse().unwrap();
//! assert_eq!(cc.to_string(), "0rIIiiCID_r");
//! assert_eq!(cc.args().len(), 6);
//!
//! let mut s = VmList::new(ListElementType::Value(ValueType::I8));
//! s.push(Variant::I8(104)).unwrap();
//! assert!(s.push(Variant::I32(105)).is_err(), "a list<i8> holds only i8 values");
//! assert_eq!(s.to_string(), "list<i8>[i8 104]");
//! ```

use crate::array::Array;
use crate::error::{CallError, CallErrorKind, CallSide, Error};
use crate::value::Key;
pub use fnabi_abi::cconv::{CallingConvention, CconvItem, CconvType};
use fnabi_abi::scalar::DType;
use fnabi_abi::structure::{IndexPath, PathKey};
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// A VM value type (`iree_vm_value_type_t`).
///
/// ```
/// use fnabi_core::vm::{ValueType, Variant};
/// assert_eq!(ValueType::I64.name(), "i64");
/// assert!(ValueType::I8.is_integer() && !ValueType::F32.is_integer());
/// assert_eq!(Variant::F64(0.5).value_type(), Some(ValueType::F64));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ValueType {
    /// 8-bit integer.
    I8,
    /// 16-bit integer.
    I16,
    /// 32-bit integer.
    I32,
    /// 64-bit integer (also `index` on 64-bit targets).
    I64,
    /// IEEE float32.
    F32,
    /// IEEE float64.
    F64,
}

impl ValueType {
    /// The IREE name (`i8`, …, `f64`).
    pub const fn name(self) -> &'static str {
        match self {
            ValueType::I8 => "i8",
            ValueType::I16 => "i16",
            ValueType::I32 => "i32",
            ValueType::I64 => "i64",
            ValueType::F32 => "f32",
            ValueType::F64 => "f64",
        }
    }

    /// True for the integer types.
    pub const fn is_integer(self) -> bool {
        matches!(self, ValueType::I8 | ValueType::I16 | ValueType::I32 | ValueType::I64)
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The type of a VM reference.
///
/// ```
/// use fnabi_core::vm::{RefType, Variant, VmList};
/// assert_eq!(RefType::BufferView.to_string(), "!hal.buffer_view");
/// assert_eq!(RefType::Opaque("!hal.fence".into()).to_string(), "!hal.fence");
/// assert_eq!(Variant::list(VmList::variants(0)).ref_type(), Some(RefType::List));
/// assert_eq!(Variant::I32(1).ref_type(), None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RefType {
    /// `!vm.list<…>` (`!util.list` in the compiler's input).
    List,
    /// `!hal.buffer_view`.
    BufferView,
    /// Any other ref type, by its VM name (`!hal.fence`, `!hal.buffer`, …).
    Opaque(Key),
}

impl fmt::Display for RefType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefType::List => f.write_str("!vm.list"),
            RefType::BufferView => f.write_str("!hal.buffer_view"),
            RefType::Opaque(name) => f.write_str(name),
        }
    }
}

/// The element type of a [`VmList`].
///
/// ```
/// use fnabi_core::vm::{ListElementType, RefType, ValueType, Variant, VmList};
/// assert_eq!(ListElementType::Variant.to_string(), "?");
/// assert_eq!(ListElementType::Ref(RefType::BufferView).to_string(), "!hal.buffer_view");
/// let views = VmList::new(ListElementType::Ref(RefType::BufferView));
/// assert!(views.accepts(&Variant::None)); // a null element
/// assert!(!views.accepts(&Variant::I32(0)));
/// let floats = VmList::new(ListElementType::Value(ValueType::F32));
/// assert!(floats.accepts(&Variant::F32(1.0)) && !floats.accepts(&Variant::F64(1.0)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ListElementType {
    /// Any variant (`list<?>`): a tuple in the native ABI.
    Variant,
    /// One value type (`list<i8>`: a string, or a typed list of numbers).
    Value(ValueType),
    /// One ref type (`list<!hal.buffer_view>`); elements may also be null.
    Ref(RefType),
}

impl fmt::Display for ListElementType {
    /// The part between `list<` and `>`: `?`, `i8`, `!hal.buffer_view`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListElementType::Variant => f.write_str("?"),
            ListElementType::Value(t) => t.fmt(f),
            ListElementType::Ref(r) => r.fmt(f),
        }
    }
}

/// A VM variant: the element of a list and the unit of function arguments
/// and results.
///
/// ```
/// use fnabi_core::vm::Variant;
/// let v = Variant::I16(-3);
/// assert_eq!(v.as_i64(), Some(-3));
/// assert_eq!(v.to_string(), "i16 -3");
/// assert_eq!(Variant::F32(2.5).as_f64(), Some(2.5));
/// assert_eq!(Variant::F32(1.0).to_string(), "f32 1.0");
/// assert_eq!(Variant::None.type_description(), "none");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Variant<'a> {
    /// Empty: no value, or a null reference.
    None,
    /// An `i8` value.
    I8(i8),
    /// An `i16` value.
    I16(i16),
    /// An `i32` value.
    I32(i32),
    /// An `i64` value.
    I64(i64),
    /// An `f32` value.
    F32(f32),
    /// An `f64` value.
    F64(f64),
    /// A reference.
    Ref(VmRef<'a>),
}

/// A reference held by a [`Variant`].
///
/// ```
/// use fnabi_core::vm::{BufferView, Variant, VmRef};
/// use fnabi_core::Array;
/// let view = BufferView::new(Array::from_vec(&[1, 4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap()).unwrap();
/// let v = Variant::buffer_view(view);
/// assert!(matches!(&v, Variant::Ref(VmRef::BufferView(b)) if b.shape() == [1, 4]));
/// assert_eq!(v.type_description(), "buffer_view f32[1x4]");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum VmRef<'a> {
    /// A list.
    List(Box<VmList<'a>>),
    /// A buffer view (one word: its array is boxed).
    BufferView(BufferView<'a>),
    /// A reference of a type fnabi does not look into.
    Opaque(OpaqueRef),
}

impl<'a> Variant<'a> {
    /// The value type of a value variant; `None` for empty and refs.
    pub fn value_type(&self) -> Option<ValueType> {
        Some(match self {
            Variant::I8(_) => ValueType::I8,
            Variant::I16(_) => ValueType::I16,
            Variant::I32(_) => ValueType::I32,
            Variant::I64(_) => ValueType::I64,
            Variant::F32(_) => ValueType::F32,
            Variant::F64(_) => ValueType::F64,
            Variant::None | Variant::Ref(_) => return None,
        })
    }

    /// The ref type of a reference; `None` for empty and values.
    pub fn ref_type(&self) -> Option<RefType> {
        match self {
            Variant::Ref(VmRef::List(_)) => Some(RefType::List),
            Variant::Ref(VmRef::BufferView(_)) => Some(RefType::BufferView),
            Variant::Ref(VmRef::Opaque(o)) => Some(RefType::Opaque(o.type_name().clone())),
            _ => None,
        }
    }

    /// The integer of an integer variant, widened.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Variant::I8(v) => Some(v.into()),
            Variant::I16(v) => Some(v.into()),
            Variant::I32(v) => Some(v.into()),
            Variant::I64(v) => Some(v),
            _ => None,
        }
    }

    /// The number of a float variant, widened.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Variant::F32(v) => Some(v.into()),
            Variant::F64(v) => Some(v),
            _ => None,
        }
    }

    /// The list, if this is a list reference.
    pub fn as_list(&self) -> Option<&VmList<'a>> {
        match self {
            Variant::Ref(VmRef::List(l)) => Some(l),
            _ => None,
        }
    }

    /// The buffer view, if this is a buffer view reference.
    pub fn as_buffer_view(&self) -> Option<&BufferView<'a>> {
        match self {
            Variant::Ref(VmRef::BufferView(b)) => Some(b),
            _ => None,
        }
    }

    /// A list reference.
    pub fn list(list: VmList<'a>) -> Variant<'a> {
        Variant::Ref(VmRef::List(Box::new(list)))
    }

    /// A buffer view reference.
    pub fn buffer_view(view: BufferView<'a>) -> Variant<'a> {
        Variant::Ref(VmRef::BufferView(view))
    }

    /// A short description of the variant's type for messages: `i32`,
    /// `list<?>`, `buffer_view f32[1x4]`, `!hal.fence`, `none`.
    pub fn type_description(&self) -> String {
        match self {
            Variant::None => "none".into(),
            Variant::Ref(VmRef::List(l)) => format!("list<{}>", l.element_type()),
            Variant::Ref(VmRef::BufferView(b)) => format!("buffer_view {}", ShapeDisplay(b.element_type(), b.shape())),
            Variant::Ref(VmRef::Opaque(o)) => o.type_name().to_string(),
            v => v.value_type().map_or_else(String::new, |t| t.name().to_string()),
        }
    }
}

impl fmt::Display for Variant<'_> {
    /// `none`, `i32 42`, `f32 2.5` (floats as Rust debug-prints them: `1.0`, `1e300`), `bv f32[4]`, `list<?>[…]`, `!hal.fence`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Variant::None => f.write_str("none"),
            Variant::I8(v) => write!(f, "i8 {v}"),
            Variant::I16(v) => write!(f, "i16 {v}"),
            Variant::I32(v) => write!(f, "i32 {v}"),
            Variant::I64(v) => write!(f, "i64 {v}"),
            Variant::F32(v) => write!(f, "f32 {v:?}"),
            Variant::F64(v) => write!(f, "f64 {v:?}"),
            Variant::Ref(VmRef::List(l)) => l.fmt(f),
            Variant::Ref(VmRef::BufferView(b)) => write!(f, "bv {}", ShapeDisplay(b.element_type(), b.shape())),
            Variant::Ref(VmRef::Opaque(o)) => f.write_str(o.type_name()),
        }
    }
}

/// `f32[1x4]`: an element type and a shape, the form every message uses.
pub(crate) struct ShapeDisplay<'s>(pub DType, pub &'s [usize]);

impl fmt::Display for ShapeDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.0)?;
        for (i, d) in self.1.iter().enumerate() {
            if i > 0 {
                f.write_str("x")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

/// A VM list (`iree_vm_list_t`): an element type and the elements.
///
/// [`push`](VmList::push) checks every element against the element type:
/// a value list holds only values of exactly its type (IREE's own lists
/// convert between value types on access; fnabi refuses, so that a range
/// error is reported where it arises), a ref list holds only refs of its
/// type or empty (null) elements, a variant list holds anything.
///
/// ```
/// use fnabi_core::vm::{Variant, VmList};
/// // a string in the native ABI is a list<i8> of its bytes
/// let s = VmList::from_bytes(b"hi");
/// assert_eq!(s.to_string(), "list<i8>[i8 104, i8 105]"); // 'h' = 104, 'i' = 105
/// assert_eq!(s.to_bytes().unwrap(), b"hi");
/// // a tuple is a list<?> of anything
/// let mut t = VmList::variants(2);
/// t.push(Variant::I32(1)).unwrap();
/// t.push(Variant::list(s)).unwrap();
/// assert_eq!(t.len(), 2);
/// assert_eq!(t.get(1).and_then(Variant::as_list).map(VmList::len), Some(2));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct VmList<'a> {
    element_type: ListElementType,
    items: Vec<Variant<'a>>,
}

impl<'a> VmList<'a> {
    /// An empty list.
    pub fn new(element_type: ListElementType) -> Self {
        VmList { element_type, items: Vec::new() }
    }

    /// An empty list with room for `n` elements.
    pub fn with_capacity(element_type: ListElementType, n: usize) -> Self {
        VmList { element_type, items: Vec::with_capacity(n) }
    }

    /// An empty variant list (`list<?>`) with room for `n` elements.
    pub fn variants(n: usize) -> Self {
        VmList::with_capacity(ListElementType::Variant, n)
    }

    /// A `list<i8>` of bytes: the native ABI's string.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        VmList {
            element_type: ListElementType::Value(ValueType::I8),
            items: bytes.iter().map(|&b| Variant::I8(b as i8)).collect(),
        }
    }

    /// The element type.
    pub fn element_type(&self) -> &ListElementType {
        &self.element_type
    }

    /// Whether `v` may be an element of this list.
    pub fn accepts(&self, v: &Variant<'_>) -> bool {
        match &self.element_type {
            ListElementType::Variant => true,
            ListElementType::Value(t) => v.value_type() == Some(*t),
            ListElementType::Ref(r) => matches!(v, Variant::None) || v.ref_type().as_ref() == Some(r),
        }
    }

    /// Appends an element after checking it against the element type.
    pub fn push(&mut self, v: Variant<'a>) -> Result<(), Error> {
        if !self.accepts(&v) {
            return Err(list_element_error(self.items.len(), &self.element_type, &v));
        }
        self.items.push(v);
        Ok(())
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The element at `i`.
    pub fn get(&self, i: usize) -> Option<&Variant<'a>> {
        self.items.get(i)
    }

    /// The elements.
    pub fn items(&self) -> &[Variant<'a>] {
        &self.items
    }

    /// The elements, by value.
    pub fn into_items(self) -> Vec<Variant<'a>> {
        self.items
    }

    /// A variant list (`list<?>`) of these elements.
    pub fn from_variants(items: Vec<Variant<'a>>) -> Self {
        VmList { element_type: ListElementType::Variant, items }
    }

    /// The bytes of a `list<i8>` (a string); `None` for other lists.
    pub fn to_bytes(&self) -> Option<Vec<u8>> {
        if self.element_type != ListElementType::Value(ValueType::I8) {
            return None;
        }
        // Pushes are checked, so every element is an i8.
        self.items.iter().map(|v| if let Variant::I8(b) = v { Some(*b as u8) } else { None }).collect()
    }
}

impl fmt::Display for VmList<'_> {
    /// `list<?>[i32 1, bv f32[4]]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "list<{}>[", self.element_type)?;
        for (i, v) in self.items.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            v.fmt(f)?;
        }
        f.write_str("]")
    }
}

/// A HAL buffer view: element type, shape and dense row-major bytes.
///
/// The payload is a C-contiguous [`Array`], so a host array that is already
/// dense becomes a buffer view without a copy.
///
/// ```
/// use fnabi_core::vm::BufferView;
/// use fnabi_core::Array;
/// let a = Array::from_vec(&[2, 2], vec![1u8, 2, 3, 4]).unwrap();
/// let t = a.permuted(&[1, 0]).unwrap(); // the transpose: not row-major
/// assert!(BufferView::new(t.clone()).is_err());
/// let view = BufferView::from_array(t).unwrap(); // copies to dense
/// assert_eq!(view.bytes(), &[1, 3, 2, 4]);
/// assert_eq!(view.shape(), &[2, 2]);
/// // The array stays in its box, in and out.
/// let boxed = BufferView::from_boxed(Box::new(a.clone())).unwrap().into_boxed_array();
/// assert_eq!(*boxed, a);
/// assert!(BufferView::from_boxed(Box::new(a.permuted(&[1, 0]).unwrap())).is_err());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct BufferView<'a> {
    /// Boxed: a view is one word, held in a [`VmRef`] as it is, and its
    /// array becomes a [`Value::Array`](crate::Value::Array) without being
    /// moved or allocated again.
    array: Box<Array<'a>>,
}

impl<'a> BufferView<'a> {
    /// A buffer view over a C-contiguous array (no copy); an error for any
    /// other layout (use [`BufferView::from_array`] to copy when needed).
    pub fn new(array: Array<'a>) -> Result<Self, Error> {
        Self::from_boxed(Box::new(array))
    }

    /// [`BufferView::new`] of an array already in its box.
    pub fn from_boxed(array: Box<Array<'a>>) -> Result<Self, Error> {
        if !array.is_c_contiguous() {
            return Err(Error::mismatch(
                "buffer view payload",
                "a dense row-major array",
                format!("strides {:?}", array.strides()),
            ));
        }
        Ok(BufferView { array })
    }

    /// A buffer view of any array: shared when dense row-major, a dense
    /// copy otherwise.
    pub fn from_array(array: Array<'a>) -> Result<Self, Error> {
        if array.is_c_contiguous() {
            Ok(BufferView { array: Box::new(array) })
        } else {
            Ok(BufferView { array: Box::new(array.to_contiguous()?) })
        }
    }

    /// The element type.
    pub fn element_type(&self) -> DType {
        self.array.dtype()
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        self.array.shape()
    }

    /// The dense row-major bytes.
    pub fn bytes(&self) -> &[u8] {
        // Construction guarantees C-contiguity.
        self.array.as_bytes().unwrap_or_default()
    }

    /// The payload.
    pub fn array(&self) -> &Array<'a> {
        &self.array
    }

    /// The payload, by value.
    pub fn into_array(self) -> Array<'a> {
        *self.array
    }

    /// The payload in its box (what a [`Value::Array`](crate::Value::Array) holds).
    pub fn into_boxed_array(self) -> Box<Array<'a>> {
        self.array
    }
}

/// A reference of a type fnabi does not look into (`!hal.fence`,
/// `!hal.buffer`, …): a type name and a shared, type-erased payload that a
/// runtime bridge defines. Two opaque refs are equal when they share the
/// payload.
///
/// ```
/// use fnabi_core::vm::OpaqueRef;
/// let fence = OpaqueRef::new("!hal.fence", Box::new(7u32));
/// assert_eq!(&**fence.type_name(), "!hal.fence");
/// assert_eq!(fence.payload().downcast_ref::<u32>(), Some(&7));
/// assert_eq!(fence.clone(), fence); // clones share the payload
/// assert_ne!(OpaqueRef::new("!hal.fence", Box::new(7u32)), fence);
/// ```
#[derive(Clone)]
pub struct OpaqueRef {
    inner: Arc<(Key, Box<dyn Any + Send + Sync>)>,
}

impl OpaqueRef {
    /// A reference named `type_name` holding `payload`.
    pub fn new(type_name: impl Into<Key>, payload: Box<dyn Any + Send + Sync>) -> Self {
        OpaqueRef { inner: Arc::new((type_name.into(), payload)) }
    }

    /// The VM type name (`!hal.fence`).
    pub fn type_name(&self) -> &Key {
        &self.inner.0
    }

    /// The payload.
    pub fn payload(&self) -> &(dyn Any + Send + Sync) {
        &*self.inner.1
    }
}

impl PartialEq for OpaqueRef {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl fmt::Debug for OpaqueRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OpaqueRef({})", self.type_name())
    }
}

// ---- calling conventions ---------------------------------------------------

/// Whether a variant can be passed in a register of type `t` the way IREE's
/// invoke converts list elements to registers: integers of any width that
/// fit, floats of either width (f64 to f32 only when finite values stay
/// finite), a reference or an empty variant for `r`.
pub fn register_accepts(t: CconvType, v: &Variant<'_>) -> bool {
    match t {
        CconvType::I32 => v.as_i64().is_some_and(|i| i32::try_from(i).is_ok()),
        CconvType::I64 => v.as_i64().is_some(),
        CconvType::F32 => v.as_f64().is_some_and(|x| !x.is_finite() || (x as f32).is_finite()),
        CconvType::F64 => v.as_f64().is_some(),
        CconvType::Ref => matches!(v, Variant::None | Variant::Ref(_)),
    }
}

/// Checks a flat argument list against a convention's argument registers:
/// the count (when not variadic) and each element's kind (see
/// [`register_accepts`]). The runtime itself reports a mismatched element as
/// a bare `FAILED_PRECONDITION`; this names the argument. For variadic
/// conventions only the fixed prefix is checked.
pub fn check_args(cc: &CallingConvention, args: &[Variant<'_>]) -> Result<(), Error> {
    check_registers(CallSide::Argument, cc.args(), args, 0)
}

/// Checks a flat result list against a convention's result registers.
pub fn check_results(cc: &CallingConvention, results: &[Variant<'_>]) -> Result<(), Error> {
    check_registers(CallSide::Result, cc.results(), results, 0)
}

/// A list element that its list's element type does not accept.
#[cold]
fn list_element_error(index: usize, element_type: &ListElementType, v: &Variant<'_>) -> Error {
    let kind = CallError::value_kind(element_type.to_string(), v.type_description());
    CallError::new(CallSide::Value, IndexPath(vec![PathKey::Index(index)]), kind)
        .with_note(format_args!("list<{element_type}>"))
        .into()
}

/// A VM value that register `i` of `side` does not accept.
#[cold]
fn register_error(side: CallSide, i: usize, expected: impl fmt::Display, v: &Variant<'_>) -> Error {
    let got = if v.value_type().is_some() { v.to_string() } else { v.type_description() };
    let kind = CallError::value_kind(expected.to_string(), got);
    CallError::new(side, IndexPath(vec![PathKey::Index(i)]), kind).with_note("VM register").into()
}

/// Checks `values` against register items; `trailing` more registers at
/// the end are supplied by someone else (the fences of an async call).
pub(crate) fn check_registers(
    side: CallSide,
    items: &[CconvItem],
    values: &[Variant<'_>],
    trailing: usize,
) -> Result<(), Error> {
    let fixed = items.iter().take_while(|i| matches!(i, CconvItem::Single(_))).count();
    let variadic = fixed < items.len();
    let n = values.len() + trailing;
    if (!variadic && n != fixed) || (variadic && n < fixed) {
        let user = fixed.saturating_sub(trailing);
        let kind = CallErrorKind::Arity { expected: user, at_least: variadic, got: values.len() };
        return Err(CallError::new(side, IndexPath::root(), kind).into());
    }
    for (i, (item, v)) in items.iter().zip(values).take(fixed).enumerate() {
        if let CconvItem::Single(t) = item
            && !register_accepts(*t, v)
        {
            return Err(register_error(side, i, t.description(), v));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_checks() {
        let cc = CallingConvention::parse("0rif_I").unwrap();
        let bv = Variant::buffer_view(BufferView::new(Array::from_vec(&[2], vec![1.0f32, 2.0]).unwrap()).unwrap());
        assert!(check_args(&cc, &[bv.clone(), Variant::I64(7), Variant::F64(2.5)]).is_ok());
        assert!(check_args(&cc, &[Variant::None, Variant::I8(7), Variant::F32(2.5)]).is_ok());
        let e = check_args(&cc, &[bv.clone(), Variant::I64(1 << 40), Variant::F64(2.5)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "argument [1] (VM register): expected an i32 value (cconv `i`), got i64 1099511627776"
        );
        let e = check_args(&cc, &[Variant::I32(1), Variant::I32(1), Variant::F64(2.5)]).unwrap_err();
        assert_eq!(e.to_string(), "argument [0] (VM register): expected a ref or none (cconv `r`), got i32 1");
        let e = check_args(&cc, &[bv.clone(), Variant::I32(1), bv.clone()]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "argument [2] (VM register): expected an f32 value (cconv `f`), got buffer_view f32[2]"
        );
        let e = check_args(&cc, &[bv.clone(), Variant::I32(1), Variant::F64(1e300)]).unwrap_err();
        assert!(e.to_string().starts_with("argument [2] (VM register): expected an f32 value"), "{e}");
        let e = check_args(&cc, &[bv]).unwrap_err();
        assert_eq!(e.to_string(), "wrong number of arguments: expected 3, got 1");
        assert!(check_results(&cc, &[Variant::I32(3)]).is_ok());
        let v = CallingConvention::parse("0rCiD_v").unwrap();
        assert!(check_args(&v, &[Variant::None, Variant::I32(1), Variant::I32(2)]).is_ok());
        assert_eq!(
            check_args(&v, &[]).unwrap_err().to_string(),
            "wrong number of arguments: expected at least 1, got 0"
        );
    }

    #[test]
    fn typed_lists_check_their_elements() {
        let mut l = VmList::new(ListElementType::Ref(RefType::BufferView));
        assert!(l.push(Variant::None).is_ok());
        let e = l.push(Variant::I32(1)).unwrap_err();
        assert_eq!(e.to_string(), "value [1] (list<!hal.buffer_view>): expected !hal.buffer_view, got i32");
        let fence = OpaqueRef::new("!hal.fence", Box::new(3u32));
        let mut f = VmList::new(ListElementType::Ref(RefType::Opaque("!hal.fence".into())));
        f.push(Variant::Ref(VmRef::Opaque(fence.clone()))).unwrap();
        assert_eq!(f.get(0), Some(&Variant::Ref(VmRef::Opaque(fence.clone()))));
        assert_ne!(fence, OpaqueRef::new("!hal.fence", Box::new(3u32)));
        assert_eq!(fence.payload().downcast_ref::<u32>(), Some(&3));
        let mut v = VmList::variants(2);
        v.push(Variant::list(VmList::from_bytes(b"hi"))).unwrap();
        v.push(Variant::Ref(VmRef::Opaque(fence))).unwrap();
        assert_eq!(v.to_string(), "list<?>[list<i8>[i8 104, i8 105], !hal.fence]");
        assert_eq!(v.get(0).unwrap().as_list().unwrap().to_bytes().unwrap(), b"hi");
        assert_eq!(v.to_bytes(), None);
    }

    #[test]
    fn buffer_views_are_dense() {
        let a = Array::from_vec(&[2, 3], (0..6).collect::<Vec<i32>>()).unwrap();
        let t = a.permuted(&[1, 0]).unwrap();
        assert!(BufferView::new(t.clone()).is_err());
        let bv = BufferView::from_array(t).unwrap();
        assert_eq!(bv.shape(), &[3, 2]);
        assert_eq!(bv.element_type(), DType::I32);
        let expect: Vec<u8> = [0i32, 3, 1, 4, 2, 5].iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(bv.bytes(), &expect[..]);
        assert_eq!(Variant::buffer_view(bv).type_description(), "buffer_view i32[3x2]");
    }
}
