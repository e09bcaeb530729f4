//! The IREE VM value model, without a runtime: what a VM function takes and
//! returns. A [`Variant`] is empty, a sized value (`i8`…`i64`, `f32`,
//! `f64`) or a reference ([`VmRef`]) to a [`VmList`], a [`BufferView`] or an
//! [`OpaqueRef`]; a list has an [`ElementType`] (any variant, one value
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
//! use fnabi::vm::{CallingConvention, ElementType, ValueType, Variant, VmList};
//! let cc: CallingConvention = "0rIIiiCID_r".parse().unwrap();
//! assert_eq!(cc.to_string(), "0rIIiiCID_r");
//! assert_eq!(cc.args().len(), 6);
//!
//! let mut s = VmList::new(ElementType::Value(ValueType::I8));
//! s.push(Variant::I8(104)).unwrap();
//! assert!(s.push(Variant::I32(105)).is_err(), "a list<i8> holds only i8 values");
//! assert_eq!(s.to_string(), "list<i8>[i8 104]");
//! ```

use crate::array::Array;
use crate::error::{Error, ParseError, ParseErrorKind};
use crate::scalar::DType;
use crate::value::Key;
use std::any::Any;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// A VM value type (`iree_vm_value_type_t`).
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
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// Any variant (`list<?>`): a tuple in the native ABI.
    Variant,
    /// One value type (`list<i8>`: a string, or a typed list of numbers).
    Value(ValueType),
    /// One ref type (`list<!hal.buffer_view>`); elements may also be null.
    Ref(RefType),
}

impl fmt::Display for ElementType {
    /// The part between `list<` and `>`: `?`, `i8`, `!hal.buffer_view`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElementType::Variant => f.write_str("?"),
            ElementType::Value(t) => t.fmt(f),
            ElementType::Ref(r) => r.fmt(f),
        }
    }
}

/// A VM variant: the element of a list and the unit of function arguments
/// and results.
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
#[derive(Clone, Debug, PartialEq)]
pub enum VmRef<'a> {
    /// A list.
    List(Box<VmList<'a>>),
    /// A buffer view.
    BufferView(Box<BufferView<'a>>),
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
        Variant::Ref(VmRef::BufferView(Box::new(view)))
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
#[derive(Clone, Debug, PartialEq)]
pub struct VmList<'a> {
    element_type: ElementType,
    items: Vec<Variant<'a>>,
}

impl<'a> VmList<'a> {
    /// An empty list.
    pub fn new(element_type: ElementType) -> Self {
        VmList { element_type, items: Vec::new() }
    }

    /// An empty list with room for `n` elements.
    pub fn with_capacity(element_type: ElementType, n: usize) -> Self {
        VmList { element_type, items: Vec::with_capacity(n) }
    }

    /// An empty variant list (`list<?>`) with room for `n` elements.
    pub fn variants(n: usize) -> Self {
        VmList::with_capacity(ElementType::Variant, n)
    }

    /// A `list<i8>` of bytes: the native ABI's string.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        VmList {
            element_type: ElementType::Value(ValueType::I8),
            items: bytes.iter().map(|&b| Variant::I8(b as i8)).collect(),
        }
    }

    /// The element type.
    pub fn element_type(&self) -> &ElementType {
        &self.element_type
    }

    /// Whether `v` may be an element of this list.
    pub fn accepts(&self, v: &Variant<'_>) -> bool {
        match &self.element_type {
            ElementType::Variant => true,
            ElementType::Value(t) => v.value_type() == Some(*t),
            ElementType::Ref(r) => matches!(v, Variant::None) || v.ref_type().as_ref() == Some(r),
        }
    }

    /// Appends an element after checking it against the element type.
    pub fn push(&mut self, v: Variant<'a>) -> Result<(), Error> {
        if !self.accepts(&v) {
            return Err(Error::Mismatch {
                context: format!("element {} of a list<{}>", self.items.len(), self.element_type),
                expected: self.element_type.to_string(),
                got: v.type_description(),
            });
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
        VmList { element_type: ElementType::Variant, items }
    }

    /// The bytes of a `list<i8>` (a string); `None` for other lists.
    pub fn to_bytes(&self) -> Option<Vec<u8>> {
        if self.element_type != ElementType::Value(ValueType::I8) {
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
#[derive(Clone, Debug, PartialEq)]
pub struct BufferView<'a> {
    array: Array<'a>,
}

impl<'a> BufferView<'a> {
    /// A buffer view over a C-contiguous array (no copy); an error for any
    /// other layout (use [`BufferView::from_array`] to copy when needed).
    pub fn new(array: Array<'a>) -> Result<Self, Error> {
        if !array.is_c_contiguous() {
            return Err(Error::Mismatch {
                context: "buffer view payload".into(),
                expected: "a dense row-major array".into(),
                got: format!("strides {:?}", array.strides()),
            });
        }
        Ok(BufferView { array })
    }

    /// A buffer view of any array: shared when dense row-major, a dense
    /// copy otherwise.
    pub fn from_array(array: Array<'a>) -> Result<Self, Error> {
        if array.is_c_contiguous() {
            Ok(BufferView { array })
        } else {
            Ok(BufferView { array: array.to_contiguous()? })
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
        self.array
    }
}

/// A reference of a type fnabi does not look into (`!hal.fence`,
/// `!hal.buffer`, …): a type name and a shared, type-erased payload that a
/// runtime bridge defines. Two opaque refs are equal when they share the
/// payload.
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

/// One register type of a calling convention.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CconvType {
    /// `i`: a 32-bit integer.
    I32,
    /// `I`: a 64-bit integer.
    I64,
    /// `f`: a float32.
    F32,
    /// `F`: a float64.
    F64,
    /// `r`: a reference (or null).
    Ref,
}

impl CconvType {
    /// The cconv character.
    pub const fn code(self) -> char {
        match self {
            CconvType::I32 => 'i',
            CconvType::I64 => 'I',
            CconvType::F32 => 'f',
            CconvType::F64 => 'F',
            CconvType::Ref => 'r',
        }
    }

    fn from_code(b: u8) -> Option<CconvType> {
        Some(match b {
            b'i' => CconvType::I32,
            b'I' => CconvType::I64,
            b'f' => CconvType::F32,
            b'F' => CconvType::F64,
            b'r' => CconvType::Ref,
            _ => return None,
        })
    }

    /// A description for messages (`an i32 value (cconv i)`).
    fn describe(self) -> &'static str {
        match self {
            CconvType::I32 => "an i32 value (cconv `i`)",
            CconvType::I64 => "an i64 value (cconv `I`)",
            CconvType::F32 => "an f32 value (cconv `f`)",
            CconvType::F64 => "an f64 value (cconv `F`)",
            CconvType::Ref => "a ref or none (cconv `r`)",
        }
    }

    /// Whether a variant can be passed in a register of this type the way
    /// IREE's invoke converts list elements to registers: integers of any
    /// width that fit, floats of either width (f64 to f32 only when finite
    /// values stay finite), a reference or an empty variant for `r`.
    pub fn accepts(self, v: &Variant<'_>) -> bool {
        match self {
            CconvType::I32 => v.as_i64().is_some_and(|i| i32::try_from(i).is_ok()),
            CconvType::I64 => v.as_i64().is_some(),
            CconvType::F32 => v.as_f64().is_some_and(|x| !x.is_finite() || (x as f32).is_finite()),
            CconvType::F64 => v.as_f64().is_some(),
            CconvType::Ref => matches!(v, Variant::None | Variant::Ref(_)),
        }
    }
}

/// One item of a calling convention's argument or result list.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CconvItem {
    /// One register.
    Single(CconvType),
    /// `C…D`: a variadic segment, repeated at call time (preceded by its
    /// count).
    Variadic(Vec<CconvType>),
}

/// A VM function's calling convention: `0` (the version), the argument
/// types, `_`, the result types; `v` stands for an empty list.
///
/// IREE also accepts an empty fragment for "no values"; fnabi reads both
/// and prints `v`. Strict where the runtime does not look: a `v` among
/// other types, an empty or nested `C…D`, an unterminated `C` and a second
/// `_` are errors.
///
/// ```
/// use fnabi::vm::{CallingConvention, CconvItem, CconvType};
/// let cc = CallingConvention::parse("0rr_rrI").unwrap();
/// assert_eq!(cc.results(), &[
///     CconvItem::Single(CconvType::Ref),
///     CconvItem::Single(CconvType::Ref),
///     CconvItem::Single(CconvType::I64),
/// ]);
/// assert_eq!(CallingConvention::parse("0v_v").unwrap().to_string(), "0v_v");
/// let e = CallingConvention::parse("0rx_r").unwrap_err();
/// assert_eq!(e.to_string(), "at byte 2: unknown type name \"x\"");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CallingConvention {
    args: Vec<CconvItem>,
    results: Vec<CconvItem>,
}

impl CallingConvention {
    /// A convention from its argument and result items.
    pub fn new(args: Vec<CconvItem>, results: Vec<CconvItem>) -> Self {
        CallingConvention { args, results }
    }

    /// Parses a calling-convention string.
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let b = s.as_bytes();
        match b.first() {
            Some(b'0') => {}
            Some(_) => return Err(ParseError::new(0, ParseErrorKind::Expected("calling convention version `0`"))),
            None => return Err(ParseError::new(0, ParseErrorKind::Expected("a calling convention (`0…_…`)"))),
        }
        let Some(us) = b.iter().position(|&c| c == b'_') else {
            return Err(ParseError::new(b.len(), ParseErrorKind::Expected("`_` between arguments and results")));
        };
        let args = parse_fragment(b, 1, us)?;
        let results = parse_fragment(b, us + 1, b.len())?;
        Ok(CallingConvention { args, results })
    }

    /// The argument items.
    pub fn args(&self) -> &[CconvItem] {
        &self.args
    }

    /// The result items.
    pub fn results(&self) -> &[CconvItem] {
        &self.results
    }

    /// True when an argument list is variadic.
    pub fn has_variadic_args(&self) -> bool {
        self.args.iter().any(|i| matches!(i, CconvItem::Variadic(_)))
    }

    /// Checks a flat argument list against the argument registers: the
    /// count (when not variadic) and each element's kind (see
    /// [`CconvType::accepts`]). The runtime itself reports a mismatched
    /// element as a bare `FAILED_PRECONDITION`; this names the argument.
    /// For variadic conventions only the fixed prefix is checked.
    pub fn check_args(&self, args: &[Variant<'_>]) -> Result<(), Error> {
        check_registers(("argument", "arguments"), &self.args, args, 0)
    }

    /// Checks a flat result list against the result registers.
    pub fn check_results(&self, results: &[Variant<'_>]) -> Result<(), Error> {
        check_registers(("result", "results"), &self.results, results, 0)
    }
}

/// Checks `values` against register items; `trailing` more registers at
/// the end are supplied by someone else (the fences of an async call).
pub(crate) fn check_registers(
    (what, plural): (&'static str, &'static str),
    items: &[CconvItem],
    values: &[Variant<'_>],
    trailing: usize,
) -> Result<(), Error> {
    let fixed = items.iter().take_while(|i| matches!(i, CconvItem::Single(_))).count();
    let variadic = fixed < items.len();
    let n = values.len() + trailing;
    if (!variadic && n != fixed) || (variadic && n < fixed) {
        let user = fixed.saturating_sub(trailing);
        return Err(Error::Call(crate::conventions::CallError::Arity {
            what: plural,
            expected: if variadic { format!("at least {user}") } else { user.to_string() },
            got: values.len(),
        }));
    }
    for (i, (item, v)) in items.iter().zip(values).take(fixed).enumerate() {
        if let CconvItem::Single(t) = item
            && !t.accepts(v)
        {
            return Err(Error::Mismatch {
                context: format!("VM {what} {i}"),
                expected: t.describe().into(),
                got: if v.value_type().is_some() { v.to_string() } else { v.type_description() },
            });
        }
    }
    Ok(())
}

fn parse_fragment(b: &[u8], start: usize, end: usize) -> Result<Vec<CconvItem>, ParseError> {
    let frag = &b[start..end];
    if frag == b"v" || frag.is_empty() {
        return Ok(Vec::new());
    }
    let mut items = Vec::with_capacity(frag.len());
    let mut i = start;
    while i < end {
        match b[i] {
            b'C' => {
                let seg_start = i;
                i += 1;
                let mut seg = Vec::new();
                loop {
                    match b.get(i).copied() {
                        Some(b'D') if i < end => break,
                        Some(c) if i < end => {
                            let t = CconvType::from_code(c).ok_or_else(|| bad_code(b, i))?;
                            seg.push(t);
                            i += 1;
                        }
                        _ => {
                            return Err(ParseError::new(
                                seg_start,
                                ParseErrorKind::Expected("`D` closing the variadic segment"),
                            ));
                        }
                    }
                }
                if seg.is_empty() {
                    return Err(ParseError::new(seg_start, ParseErrorKind::Expected("a type inside `C…D`")));
                }
                items.push(CconvItem::Variadic(seg));
                i += 1;
            }
            c => {
                let t = CconvType::from_code(c).ok_or_else(|| bad_code(b, i))?;
                items.push(CconvItem::Single(t));
                i += 1;
            }
        }
    }
    Ok(items)
}

fn bad_code(b: &[u8], i: usize) -> ParseError {
    match b[i] {
        b'v' => ParseError::new(i, ParseErrorKind::Expected("`v` only as the whole (empty) list")),
        b'C' => ParseError::new(i, ParseErrorKind::Expected("no nested `C` inside `C…D`")),
        b'_' => ParseError::new(i, ParseErrorKind::Expected("a single `_`")),
        c if c.is_ascii_graphic() => ParseError::new(i, ParseErrorKind::UnknownName((c as char).to_string())),
        c => ParseError::new(i, ParseErrorKind::UnknownName(format!("\\x{c:02x}"))),
    }
}

impl fmt::Display for CallingConvention {
    /// The canonical string (`v` for an empty list).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(f: &mut fmt::Formatter<'_>, items: &[CconvItem]) -> fmt::Result {
            if items.is_empty() {
                return f.write_str("v");
            }
            for item in items {
                match item {
                    CconvItem::Single(t) => write!(f, "{}", t.code())?,
                    CconvItem::Variadic(seg) => {
                        f.write_str("C")?;
                        for t in seg {
                            write!(f, "{}", t.code())?;
                        }
                        f.write_str("D")?;
                    }
                }
            }
            Ok(())
        }
        f.write_str("0")?;
        list(f, &self.args)?;
        f.write_str("_")?;
        list(f, &self.results)
    }
}

impl FromStr for CallingConvention {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CallingConvention::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cconv_strings_of_the_fixtures() {
        for s in ["0rr_r", "0r_r", "0rf_r", "0ii_i", "0v_v", "0rr_rrI", "0r_I", "0rrrr_r", "0r_iI", "0r_Ii"] {
            assert_eq!(CallingConvention::parse(s).unwrap().to_string(), s);
        }
        // Imports with variadic segments.
        for s in ["0rIIiiCID_r", "0rriiCID_v", "0rrIiiiICiDCiirIID_v", "0iICrD_i"] {
            assert_eq!(CallingConvention::parse(s).unwrap().to_string(), s);
        }
        let cc = CallingConvention::parse("0rrIiiiICiDCiirIID_v").unwrap();
        assert_eq!(cc.args().len(), 9);
        assert_eq!(
            cc.args()[8],
            CconvItem::Variadic(vec![CconvType::I32, CconvType::I32, CconvType::Ref, CconvType::I64, CconvType::I64])
        );
        assert!(cc.has_variadic_args());
        // Empty fragments read as `v`.
        assert_eq!(CallingConvention::parse("0_").unwrap().to_string(), "0v_v");
        assert_eq!(CallingConvention::parse("0_r").unwrap().to_string(), "0v_r");
    }

    #[test]
    fn cconv_errors_have_offsets() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 0, "expected a calling convention (`0…_…`)"),
            ("1r_r", 0, "expected calling convention version `0`"),
            ("0rr", 3, "expected `_` between arguments and results"),
            ("0rx_r", 2, "unknown type name \"x\""),
            ("0vr_r", 1, "expected `v` only as the whole (empty) list"),
            ("0r_r_r", 4, "expected a single `_`"),
            ("0Cr_r", 1, "expected `D` closing the variadic segment"),
            ("0CD_r", 1, "expected a type inside `C…D`"),
            ("0CCrDD_r", 2, "expected no nested `C` inside `C…D`"),
            ("0r_\u{1}", 3, "unknown type name \"\\\\x01\""),
        ];
        for (s, off, msg) in cases {
            let e = CallingConvention::parse(s).unwrap_err();
            assert_eq!((e.offset(), e.kind().to_string()), (*off, msg.to_string()), "{s:?}");
        }
    }

    #[test]
    fn register_checks() {
        let cc = CallingConvention::parse("0rif_I").unwrap();
        let bv = Variant::buffer_view(BufferView::new(Array::from_vec(&[2], vec![1.0f32, 2.0]).unwrap()).unwrap());
        assert!(cc.check_args(&[bv.clone(), Variant::I64(7), Variant::F64(2.5)]).is_ok());
        assert!(cc.check_args(&[Variant::None, Variant::I8(7), Variant::F32(2.5)]).is_ok());
        let e = cc.check_args(&[bv.clone(), Variant::I64(1 << 40), Variant::F64(2.5)]).unwrap_err();
        assert_eq!(e.to_string(), "VM argument 1: expected an i32 value (cconv `i`), got i64 1099511627776");
        let e = cc.check_args(&[Variant::I32(1), Variant::I32(1), Variant::F64(2.5)]).unwrap_err();
        assert_eq!(e.to_string(), "VM argument 0: expected a ref or none (cconv `r`), got i32 1");
        let e = cc.check_args(&[bv.clone(), Variant::I32(1), bv.clone()]).unwrap_err();
        assert_eq!(e.to_string(), "VM argument 2: expected an f32 value (cconv `f`), got buffer_view f32[2]");
        let e = cc.check_args(&[bv.clone(), Variant::I32(1), Variant::F64(1e300)]).unwrap_err();
        assert!(e.to_string().starts_with("VM argument 2: expected an f32 value"), "{e}");
        let e = cc.check_args(&[bv]).unwrap_err();
        assert_eq!(e.to_string(), "wrong number of arguments: expected 3, got 1");
        assert!(cc.check_results(&[Variant::I32(3)]).is_ok());
        let v = CallingConvention::parse("0rCiD_v").unwrap();
        assert!(v.check_args(&[Variant::None, Variant::I32(1), Variant::I32(2)]).is_ok());
        assert_eq!(v.check_args(&[]).unwrap_err().to_string(), "wrong number of arguments: expected at least 1, got 0");
    }

    #[test]
    fn typed_lists_check_their_elements() {
        let mut l = VmList::new(ElementType::Ref(RefType::BufferView));
        assert!(l.push(Variant::None).is_ok());
        let e = l.push(Variant::I32(1)).unwrap_err();
        assert_eq!(e.to_string(), "element 1 of a list<!hal.buffer_view>: expected !hal.buffer_view, got i32");
        let fence = OpaqueRef::new("!hal.fence", Box::new(3u32));
        let mut f = VmList::new(ElementType::Ref(RefType::Opaque("!hal.fence".into())));
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
