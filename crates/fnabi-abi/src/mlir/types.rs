//! The MLIR types that cross a `_mlir_ciface_` boundary: scalar element
//! types, ranked memrefs with identity or `strided<…>` layouts, unranked
//! memrefs, and function types made of them; how each maps to the raw
//! function ABI ([`RawType`]) and how it is laid out in a C struct.

use crate::raw::{BufferType, Dim, RawType};
use crate::scalar::{DType, ScalarType};
use std::fmt;

/// A scalar MLIR type: a memref element or a scalar argument/result.
///
/// ```
/// use fnabi_abi::mlir::ElementType;
/// use fnabi_abi::{DType, ScalarType};
/// let i = ElementType::from_mlir_name("index").unwrap();
/// assert_eq!((i, i.size(), i.dtype()), (ElementType::Index, 8, DType::I64));
/// assert_eq!(ElementType::I1.raw_scalar(), None); // the raw ABI has no bool
/// let u = ElementType::from_mlir_name("ui16").unwrap();
/// assert_eq!(u, ElementType::Scalar(ScalarType::U16));
/// assert_eq!(u.mlir_name(), "ui16");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// `i1`: a boolean, one byte in memory, 0 or 1.
    I1,
    /// `index`: the target's pointer-sized integer (64 bits on the hosts fnabi supports).
    Index,
    /// `i8`…`i64` (signless, read as signed), `si8`…`si64`, `ui8`…`ui64`,
    /// `f16`, `bf16`, `f32`, `f64`.
    Scalar(ScalarType),
    /// `f8E4M3FN`, `f8E5M2`, `f8E4M3FNUZ`, `f8E5M2FNUZ`: one byte in memory
    /// (an `i8` once lowered to LLVM).
    Float8(crate::scalar::Float8),
    /// `complex<f32>`, `complex<f64>`: two floats, real part first (an
    /// `!llvm.struct<(f32, f32)>` once lowered to LLVM).
    Complex(crate::scalar::ComplexType),
}

impl ElementType {
    /// The host element type of arrays of this type: `i1` is `bool`, `index` is `i64`.
    pub const fn dtype(self) -> DType {
        match self {
            ElementType::I1 => DType::Bool,
            ElementType::Index => DType::I64,
            ElementType::Scalar(s) => DType::Scalar(s),
            ElementType::Float8(f) => DType::Float8(f),
            ElementType::Complex(c) => DType::Complex(c),
        }
    }

    /// Bytes of one element in memory (and of a scalar in a result struct).
    pub const fn size(self) -> usize {
        match self {
            ElementType::I1 | ElementType::Float8(_) => 1,
            ElementType::Index => 8,
            ElementType::Scalar(s) => s.size(),
            ElementType::Complex(c) => c.size(),
        }
    }

    /// True for `f16`, `bf16`, `f32`, `f64` (passed in vector registers).
    pub const fn is_float(self) -> bool {
        matches!(self, ElementType::Scalar(s) if s.is_float())
    }

    /// The MLIR spelling (`i1`, `index`, `i32`, `ui8`, `bf16`, …).
    pub const fn mlir_name(self) -> &'static str {
        match self {
            ElementType::I1 => "i1",
            ElementType::Float8(f) => f.name(),
            ElementType::Complex(c) => c.mlir_name(),
            ElementType::Index => "index",
            ElementType::Scalar(s) => match s {
                ScalarType::F32 => "f32",
                ScalarType::F16 => "f16",
                ScalarType::F64 => "f64",
                ScalarType::BF16 => "bf16",
                ScalarType::I8 => "i8",
                ScalarType::I16 => "i16",
                ScalarType::I32 => "i32",
                ScalarType::I64 => "i64",
                ScalarType::U8 => "ui8",
                ScalarType::U16 => "ui16",
                ScalarType::U32 => "ui32",
                ScalarType::U64 => "ui64",
            },
        }
    }

    /// Reads an MLIR scalar type name; `None` for anything else.
    ///
    /// ```
    /// use fnabi_abi::mlir::ElementType;
    /// use fnabi_abi::ScalarType;
    /// assert_eq!(ElementType::from_mlir_name("si16"), Some(ElementType::Scalar(ScalarType::I16)));
    /// assert_eq!(ElementType::from_mlir_name("index"), Some(ElementType::Index));
    /// assert_eq!(ElementType::from_mlir_name("i7"), None);
    /// assert_eq!(ElementType::from_mlir_name("complex<f32>"), Some(ElementType::Complex(fnabi_abi::ComplexType::C64)));
    /// ```
    pub fn from_mlir_name(name: &str) -> Option<ElementType> {
        let s = match name {
            "i1" => return Some(ElementType::I1),
            "index" => return Some(ElementType::Index),
            "f32" => ScalarType::F32,
            "f16" => ScalarType::F16,
            "f64" => ScalarType::F64,
            "bf16" => ScalarType::BF16,
            "i8" | "si8" => ScalarType::I8,
            "i16" | "si16" => ScalarType::I16,
            "i32" | "si32" => ScalarType::I32,
            "i64" | "si64" => ScalarType::I64,
            "ui8" => ScalarType::U8,
            "ui16" => ScalarType::U16,
            "ui32" => ScalarType::U32,
            "ui64" => ScalarType::U64,
            "complex<f32>" => return Some(ElementType::Complex(crate::scalar::ComplexType::C64)),
            "complex<f64>" => return Some(ElementType::Complex(crate::scalar::ComplexType::C128)),
            _ => {
                let f = crate::scalar::Float8::ALL.into_iter().find(|f| f.name() == name)?;
                return Some(ElementType::Float8(f));
            }
        };
        Some(ElementType::Scalar(s))
    }

    /// The raw ABI scalar type: `index` is `sint64`; `i1`, the 8-bit
    /// floats and the complex types have none.
    pub const fn raw_scalar(self) -> Option<ScalarType> {
        match self {
            ElementType::I1 | ElementType::Float8(_) | ElementType::Complex(_) => None,
            ElementType::Index => Some(ScalarType::I64),
            ElementType::Scalar(s) => Some(s),
        }
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mlir_name())
    }
}

/// The layout of a ranked memref type.
///
/// ```
/// use fnabi_abi::mlir::{MemRefLayout, MlirType};
/// let t: MlirType = "memref<4x?xf32, strided<[?, 1], offset: 8>>".parse().unwrap();
/// let MlirType::MemRef(m) = t else { panic!("a ranked memref") };
/// assert_eq!(m.layout, MemRefLayout::Strided { strides: vec![None, Some(1)], offset: Some(8) });
/// let plain: MlirType = "memref<4xf32>".parse().unwrap();
/// assert!(matches!(plain, MlirType::MemRef(m) if m.layout == MemRefLayout::Identity));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum MemRefLayout {
    /// No layout: dense row-major, offset 0. The callee computes strides
    /// from the sizes and **ignores** the descriptor's offset and strides.
    #[default]
    Identity,
    /// `strided<[s0, s1, …], offset: o>`: each stride and the offset static
    /// (`Some`) or dynamic (`None`, `?`); dynamic ones are read from the descriptor.
    Strided {
        /// One per dim, in elements.
        strides: Vec<Option<i64>>,
        /// In elements.
        offset: Option<i64>,
    },
}

/// A ranked memref type: element type, dims, layout.
///
/// ```
/// use fnabi_abi::mlir::{ElementType, MemRefType};
/// use fnabi_abi::{Dim, ScalarType};
/// let m = MemRefType::new(ElementType::Scalar(ScalarType::F64), vec![Dim::Dynamic, Dim::Static(3)]);
/// assert_eq!(m.to_string(), "memref<?x3xf64>");
/// // allocated and aligned pointers, offset, then 2 sizes and 2 strides: 7 words
/// assert_eq!((m.rank(), m.descriptor_size()), (2, 7 * 8));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MemRefType {
    /// The element type.
    pub element: ElementType,
    /// The dims, outermost first.
    pub dims: Vec<Dim>,
    /// The layout.
    pub layout: MemRefLayout,
}

impl MemRefType {
    /// A memref with the identity layout.
    pub fn new(element: ElementType, dims: Vec<Dim>) -> Self {
        MemRefType { element, dims, layout: MemRefLayout::Identity }
    }

    /// Rank.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Bytes of its descriptor: `8 * (3 + 2 * rank)`.
    pub fn descriptor_size(&self) -> usize {
        8 * (3 + 2 * self.rank())
    }
}

impl fmt::Display for MemRefType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("memref<")?;
        for d in &self.dims {
            write!(f, "{d}x")?;
        }
        write!(f, "{}", self.element)?;
        if let MemRefLayout::Strided { strides, offset } = &self.layout {
            let opt = |v: &Option<i64>| v.map_or_else(|| "?".to_string(), |v| v.to_string());
            let s: Vec<String> = strides.iter().map(opt).collect();
            write!(f, ", strided<[{}]", s.join(", "))?;
            if *offset != Some(0) {
                write!(f, ", offset: {}", opt(offset))?;
            }
            f.write_str(">")?;
        }
        f.write_str(">")
    }
}

/// An MLIR type that fnabi can pass across a `_mlir_ciface_` boundary.
///
/// ```
/// use fnabi_abi::mlir::MlirType;
/// let t: MlirType = "memref<2x3xi32>".parse().unwrap();
/// assert_eq!(t.to_raw().to_string(), "Buffer<sint32[2x3]>");
/// assert_eq!(t.c_layout(), (8 * (3 + 2 * 2), 8));
/// let s: MlirType = "f16".parse().unwrap();
/// assert_eq!((s.c_layout(), s.is_memref()), ((2, 2), false));
/// let u: MlirType = "memref<*xf32>".parse().unwrap();
/// assert_eq!(u.c_layout(), (16, 8)); // {rank, descriptor*}
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MlirType {
    /// A scalar, passed by value.
    Scalar(ElementType),
    /// A ranked memref, passed as a pointer to its descriptor.
    MemRef(MemRefType),
    /// `memref<*xT>`: passed as a pointer to `{rank, descriptor*}`.
    UnrankedMemRef(ElementType),
}

impl MlirType {
    /// The raw ABI type (see the [module docs](crate::mlir) for the mapping):
    /// ranked memrefs are buffers, scalars are scalars with `index` as
    /// `sint64`; `i1` (scalar or element) and unranked memrefs have no raw
    /// form and map to [`RawType::Unrecognized`].
    pub fn to_raw(&self) -> RawType {
        match self {
            MlirType::Scalar(e) => e.raw_scalar().map_or(RawType::Unrecognized, RawType::Scalar),
            MlirType::MemRef(m) => match m.element.raw_scalar() {
                Some(s) => BufferType::new(s, m.dims.iter().copied()).map_or(RawType::Unrecognized, RawType::Buffer),
                None => RawType::Unrecognized,
            },
            MlirType::UnrankedMemRef(_) => RawType::Unrecognized,
        }
    }

    /// `(size, alignment)` of this type as a field of a C result struct.
    pub fn c_layout(&self) -> (usize, usize) {
        match self {
            MlirType::Scalar(e) => (e.size(), e.size()),
            MlirType::MemRef(m) => (m.descriptor_size(), 8),
            MlirType::UnrankedMemRef(_) => (16, 8),
        }
    }

    /// True for memrefs (ranked or not).
    pub fn is_memref(&self) -> bool {
        !matches!(self, MlirType::Scalar(_))
    }
}

impl fmt::Display for MlirType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MlirType::Scalar(e) => e.fmt(f),
            MlirType::MemRef(m) => m.fmt(f),
            MlirType::UnrankedMemRef(e) => write!(f, "memref<*x{e}>"),
        }
    }
}

/// An MLIR function type: inputs and results.
///
/// ```
/// use fnabi_abi::mlir::FunctionType;
/// let t: FunctionType = "(memref<?x4xf32, strided<[?, 1], offset: ?>>, index) -> (memref<*xi1>, f32)".parse().unwrap();
/// assert_eq!(t.to_string(), "(memref<?x4xf32, strided<[?, 1], offset: ?>>, index) -> (memref<*xi1>, f32)");
/// assert_eq!(t.to_raw().to_string(), "(Buffer<float32[?x4]>, sint64) -> (Unrecognized<?>, float32)");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FunctionType {
    /// Inputs in order.
    pub inputs: Vec<MlirType>,
    /// Results in order.
    pub results: Vec<MlirType>,
}

impl FunctionType {
    /// The raw signature (each type mapped by [`MlirType::to_raw`]).
    pub fn to_raw(&self) -> crate::raw::RawSignature {
        crate::raw::RawSignature::new(
            self.inputs.iter().map(MlirType::to_raw).collect(),
            self.results.iter().map(MlirType::to_raw).collect(),
        )
    }

    /// True when the `_mlir_ciface_` wrapper returns its results through a
    /// pointer passed first: any memref result, or more than one result.
    pub fn results_packed(&self) -> bool {
        self.results.len() > 1 || self.results.iter().any(MlirType::is_memref)
    }

    /// Field offsets of the packed result struct (C rules: each field at
    /// the next multiple of its alignment) and the struct's size, a multiple
    /// of its largest alignment.
    ///
    /// ```
    /// use fnabi_abi::mlir::FunctionType;
    /// let t: FunctionType = "() -> (i32, i64)".parse().unwrap();
    /// assert_eq!(t.result_layout(), (vec![0, 8], 16));
    /// let t: FunctionType = "() -> (memref<?xf32>, index)".parse().unwrap();
    /// assert_eq!(t.result_layout(), (vec![0, 40], 48));
    /// ```
    pub fn result_layout(&self) -> (Vec<usize>, usize) {
        let mut offsets = Vec::with_capacity(self.results.len());
        let (mut end, mut max_align) = (0usize, 1usize);
        for r in &self.results {
            let (size, align) = r.c_layout();
            let at = end.next_multiple_of(align);
            offsets.push(at);
            end = at + size;
            max_align = max_align.max(align);
        }
        (offsets, end.next_multiple_of(max_align))
    }
}

impl fmt::Display for FunctionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, t) in self.inputs.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            t.fmt(f)?;
        }
        f.write_str(") -> ")?;
        f.write_str("(")?;
        for (i, t) in self.results.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            t.fmt(f)?;
        }
        f.write_str(")")
    }
}
