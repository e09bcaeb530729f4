//! The external functions of a module — `func.func` declarations without a
//! body, which its code calls through `_mlir_ciface_<name>` — who provides
//! each ([`Externals`]: a host function registered with fnabi, MLIR's
//! runtime utilities, or nobody), and the C glue that fnabi links into the
//! module's shared library to make them resolvable.
//!
//! ## The mechanism
//!
//! For every external function bound to a host function, the glue defines
//! `_mlir_ciface_<name>` with the exact machine-level signature of the
//! declaration (descriptor pointers as `void *`, integer-class scalars as
//! `uint64_t`, float-class ones as `double` whose low bits carry the
//! value, the result pointer first when results are packed). Each packs its
//! arguments into an array of 64-bit words and calls one uniform Rust entry,
//! `entry(ctx, words, result)`, through a **per-module slot**: a table that
//! lives in the module's own shared library (`static`, so nothing outside it
//! can interpose) and that fnabi finds with `dlsym` on that library's handle
//! (exported as `fnabi_module_v1`) and fills right after loading it
//! `RTLD_NOW | RTLD_LOCAL`, before any of its code runs. The trampolines are
//! `hidden`: calls from the module bind to them at link time, so two modules
//! that declare the same external name — each loaded locally, each with its
//! own table — call different host functions. A library whose glue has host
//! slots is loaded from a private copy of its file, so even two loads of the
//! same cached library have separate tables.
//!
//! Scalar runtime utilities that exist only under their plain names
//! (`printF32`, `printNewline`, …) get a hidden `_mlir_ciface_` shim that
//! calls the plain function; the ones the libraries export in C-interface
//! form (`printMemrefF32`, …) need nothing but the link.
//!
//! A library that fnabi did not compile has no glue: its external
//! functions are undefined symbols, and loading it (`RTLD_NOW`) fails with
//! the loader's message naming the first one and a pointer to
//! [`MlirLibrary::compile_with_host`](crate::MlirLibrary::compile_with_host)
//! — fnabi does not interpose symbols process-wide, so it never binds one
//! name for every module at once.
//!
//! The glue is part of the compile cache key; it depends only on the
//! declarations and on which of them are bound to host functions, not on
//! the host functions themselves, so the cached library is reused across
//! processes and host functions.

use crate::MlirError;
use crate::host::HostFunctions;
use crate::runtime_utils::RuntimeUtils;
use fnabi_abi::mlir::signature::FuncDecl;
use fnabi_abi::mlir::types::{ElementType, FunctionType, MlirType};
use fnabi_abi::scalar::ScalarType;
use fnabi_core::error::Error;
use std::fmt::{self, Write};
use std::path::PathBuf;

/// Version of the table the glue exports (`fnabi_module_v1`).
pub const TABLE_VERSION: u32 = 1;

/// The symbol of the table the glue exports.
pub const TABLE_SYMBOL: &str = "fnabi_module_v1";

/// Flag bit in the table: the module calls MLIR's runtime utilities (so
/// stdio is flushed around its calls).
pub(crate) const FLAG_RUNTIME_UTILS: u32 = 1;

/// Who provides an external function.
///
/// ```
/// use fnabi_mlir::{Externals, HostFunctions, Provider, RuntimeUtils, parse_functions};
/// let src = "func.func private @cb(i32) -> i32\nfunc.func private @gone(f64)";
/// let mut host = HostFunctions::new();
/// host.register("cb", |args| Ok(vec![fnabi_core::Value::Int(args.int(0)? + 1)]));
/// let ext = Externals::resolve(&parse_functions(src)?, &host, &RuntimeUtils::none())?;
/// assert_eq!(ext.all()[0].provider, Provider::Host);
/// assert!(matches!(ext.all()[1].provider, Provider::Missing { .. }));
/// # Ok::<(), fnabi_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Provider {
    /// A host function registered with fnabi.
    Host,
    /// MLIR's runtime utilities.
    Runtime {
        /// The library's file name (`libmlir_runner_utils.so.22.1`).
        library: String,
        /// Its full path, when known (not for a library loaded without its source).
        path: Option<PathBuf>,
        /// True when the library exports only the plain `<name>` and a shim
        /// forwards `_mlir_ciface_<name>` to it.
        shim: bool,
    },
    /// Nobody: the module cannot be loaded.
    Missing {
        /// Why, when there is more to say than "not registered".
        note: Option<String>,
    },
}

/// One external function of a module.
///
/// ```
/// use fnabi_mlir::{Externals, HostFunctions, RuntimeUtils, parse_functions};
/// let src = "func.func private @log(memref<?xf32>)";
/// let ext = Externals::resolve(&parse_functions(src)?, &HostFunctions::new(), &RuntimeUtils::none())?;
/// let log = &ext.all()[0];
/// assert_eq!((log.name.as_str(), log.ty.to_string()), ("log", "(memref<?xf32>) -> ()".to_string()));
/// assert!(!log.is_provided());
/// assert!(log.is_needed()); // not compiled yet: the module may call it
/// assert_eq!(log.to_string(), "@log (missing)");
/// # Ok::<(), fnabi_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct External {
    /// The symbol name, without `@`.
    pub name: String,
    /// Its declared type.
    pub ty: FunctionType,
    /// Who provides it.
    pub provider: Provider,
    /// For a missing function: whether the compiled code calls it (`None`
    /// before the module is compiled, see [`Externals::mark_references`]).
    /// A declaration that nothing calls needs no provider.
    pub referenced: Option<bool>,
}

impl External {
    /// True when someone provides it.
    pub fn is_provided(&self) -> bool {
        !matches!(self.provider, Provider::Missing { .. })
    }

    /// True when it is missing and the module calls it, or may (not compiled yet).
    pub fn is_needed(&self) -> bool {
        !self.is_provided() && self.referenced != Some(false)
    }
}

impl fmt::Display for External {
    /// `@name` and its provider: `@my_op (host function)`,
    /// `@printMemrefF32 (libmlir_runner_utils.so.22.1)`, `@other (missing)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.provider {
            Provider::Host => write!(f, "@{} (host function)", self.name),
            Provider::Runtime { library, .. } => write!(f, "@{} ({library})", self.name),
            Provider::Missing { .. } if self.referenced == Some(false) => write!(f, "@{} (unused)", self.name),
            Provider::Missing { .. } => write!(f, "@{} (missing)", self.name),
        }
    }
}

/// The external functions of a module and who provides each.
///
/// ```
/// use fnabi_mlir::{Externals, HostFunctions, RuntimeUtils, parse_functions};
/// let src = "func.func private @my_op(memref<?xf32>, f32) -> memref<?xf32>\n\
///            func.func private @other(i64)\n\
///            func.func @f() { return }";
/// let mut host = HostFunctions::new();
/// host.register("my_op", |_args| Ok(vec![]));
/// let ext = Externals::resolve(&parse_functions(src)?, &host, &RuntimeUtils::none())?;
/// assert_eq!(ext.to_string(), "provided: @my_op (host function); needs: @other");
/// assert_eq!(ext.check().unwrap_err().to_string(),
///            "the module needs @other: (i64) -> (), which no host function or runtime library provides");
/// # Ok::<(), fnabi_core::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Externals {
    items: Vec<External>,
    hint: Option<String>,
}

impl Externals {
    /// Resolves the external declarations among `decls`: a registered host
    /// function first (its given type, if any, must equal the declared
    /// one), then the runtime utilities. Errors: a host function whose type
    /// differs, a name fnabi cannot bind (it must be a C-assembler-friendly
    /// `[A-Za-z_][A-Za-z0-9_$.]*`).
    pub fn resolve(decls: &[FuncDecl], host: &HostFunctions, runtime: &RuntimeUtils) -> Result<Externals, Error> {
        let mut items = Vec::new();
        for d in decls.iter().filter(|d| !d.has_body) {
            let provider = if let Some(given) = host.declared_type(&d.name) {
                if let Some(t) = given
                    && *t != d.ty
                {
                    return Err(Error::mismatch(
                        format!("type of host function @{}", d.name),
                        d.ty.to_string(),
                        t.to_string(),
                    ));
                }
                check_symbol_name(&d.name)?;
                Provider::Host
            } else if let Some(sym) = runtime.lookup(&d.name) {
                let note = if sym.ciface { None } else { shim_problem(&d.ty) };
                match note {
                    None => Provider::Runtime {
                        library: sym.library.file_name(),
                        path: Some(sym.library.path().to_path_buf()),
                        shim: !sym.ciface,
                    },
                    Some(n) => Provider::Missing {
                        note: Some(format!("{} exports only the plain function, and {n}", sym.library.file_name())),
                    },
                }
            } else {
                Provider::Missing { note: None }
            };
            items.push(External { name: d.name.clone(), ty: d.ty.clone(), provider, referenced: None });
        }
        let hint = if items.iter().any(|e| !e.is_provided()) { runtime.missing_hint() } else { None };
        Ok(Externals { items, hint })
    }

    /// Externals as recorded in a loaded library's table (see the module docs).
    pub(crate) fn from_items(items: Vec<External>) -> Externals {
        Externals { items, hint: None }
    }

    /// Every external function, in declaration order.
    pub fn all(&self) -> &[External] {
        &self.items
    }

    /// True when the module declares none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The ones nobody provides that the module calls (or may call: not
    /// compiled yet).
    pub fn missing(&self) -> impl Iterator<Item = &External> {
        self.items.iter().filter(|e| e.is_needed())
    }

    /// The ones nobody provides that the compiled module never calls.
    pub fn unused(&self) -> impl Iterator<Item = &External> {
        self.items.iter().filter(|e| !e.is_provided() && !e.is_needed())
    }

    /// Records, for each missing function, whether the compiled `library`
    /// calls it (needs its `_mlir_ciface_` symbol): a declaration nothing
    /// calls is dropped by the compiler and needs no provider.
    pub fn mark_references(&mut self, library: &std::path::Path) -> Result<(), Error> {
        let bytes = std::fs::read(library).map_err(|e| Error::io(library.display().to_string(), e))?;
        let elf = crate::elf::ElfFile::parse(&bytes)?;
        let undefined = elf.undefined_functions()?;
        for e in self.items.iter_mut().filter(|e| !e.is_provided()) {
            let sym = format!("{}{}", crate::elf::CIFACE_PREFIX, e.name);
            e.referenced = Some(undefined.binary_search(&sym.as_str()).is_ok());
        }
        Ok(())
    }

    /// The ones provided, with their providers.
    pub fn provided(&self) -> impl Iterator<Item = &External> {
        self.items.iter().filter(|e| e.is_provided())
    }

    /// The ones bound to host functions, in slot order.
    pub fn host_bound(&self) -> impl Iterator<Item = &External> {
        self.items.iter().filter(|e| e.provider == Provider::Host)
    }

    /// True when the module calls MLIR's runtime utilities.
    pub fn uses_runtime_utils(&self) -> bool {
        self.items.iter().any(|e| matches!(e.provider, Provider::Runtime { .. }))
    }

    /// An error naming every missing function (with its type), or `Ok`.
    pub fn check(&self) -> Result<(), Error> {
        let missing: Vec<String> = self
            .missing()
            .map(|e| {
                let mut s = format!("@{}: {}", e.name, e.ty);
                if let Provider::Missing { note: Some(n) } = &e.provider {
                    s.push_str(&format!(" ({n})"));
                }
                s
            })
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let mut msg =
            format!("the module needs {}, which no host function or runtime library provides", missing.join(", "));
        if let Some(h) = &self.hint {
            msg.push_str("; ");
            msg.push_str(h);
        }
        Err(MlirError::NotFound(msg).into())
    }

    /// The C glue for these externals (see the module docs), or `None` when
    /// the module needs none: no host function, no shim, no runtime utility.
    pub fn c_glue(&self) -> Option<String> {
        if !self.items.iter().any(External::is_provided) {
            return None;
        }
        let mut c = String::new();
        c.push_str(GLUE_PRELUDE);
        let n = self.items.len();
        let flags = if self.uses_runtime_utils() { FLAG_RUNTIME_UTILS } else { 0 };
        let list = |f: &dyn Fn(&External) -> String| self.items.iter().map(f).collect::<Vec<_>>().join(",\n  ");
        let _ = write!(
            c,
            "static struct fnabi_slot fnabi_slots[{n}];\n\
             static const char *const fnabi_names[{n}] = {{\n  {}\n}};\n\
             static const char *const fnabi_types[{n}] = {{\n  {}\n}};\n\
             static const char *const fnabi_providers[{n}] = {{\n  {}\n}};\n\
             __attribute__((visibility(\"default\"))) const struct fnabi_module {TABLE_SYMBOL} = {{\n  \
             {TABLE_VERSION}, {flags}, {n}, 0, fnabi_slots, fnabi_names, fnabi_types, fnabi_providers\n}};\n\n",
            list(&|e| c_string(&e.name)),
            list(&|e| c_string(&e.ty.to_string())),
            list(&|e| match &e.provider {
                Provider::Host => c_string(""),
                Provider::Runtime { library, shim, .. } =>
                    c_string(&format!("{}{library}", if *shim { "+" } else { "" })),
                Provider::Missing { .. } => "0".into(),
            }),
        );
        c.push_str(GLUE_CALL);
        for (k, e) in self.items.iter().enumerate() {
            match &e.provider {
                Provider::Host => trampoline(&mut c, k, e),
                Provider::Runtime { shim: true, .. } => shim(&mut c, k, e),
                _ => {}
            }
        }
        Some(c)
    }

    /// What to link into the module: the glue, and the runtime libraries
    /// (linked only where used, so listing all of them is harmless and also
    /// covers functions the lowering itself calls, such as `memrefCopy`).
    pub fn link_inputs(&self, runtime: &RuntimeUtils) -> crate::compile::LinkInputs {
        crate::compile::LinkInputs {
            c_glue: self.c_glue(),
            libraries: runtime.libraries().iter().map(|l| l.path().to_path_buf()).collect(),
        }
    }
}

impl fmt::Display for Externals {
    /// One line: `provided: @a (host function), @b (libmlir_runner_utils.so.22.1); needs: @c; unused: @d`
    /// (an empty part is left out; `no external functions` when there are none).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.items.is_empty() {
            return f.write_str("no external functions");
        }
        let provided: Vec<String> = self.provided().map(|e| e.to_string()).collect();
        let missing: Vec<String> = self.missing().map(|e| format!("@{}", e.name)).collect();
        let unused: Vec<String> = self.unused().map(|e| format!("@{}", e.name)).collect();
        let mut parts = Vec::new();
        if !provided.is_empty() {
            parts.push(format!("provided: {}", provided.join(", ")));
        }
        if !missing.is_empty() {
            parts.push(format!("needs: {}", missing.join(", ")));
        }
        if !unused.is_empty() {
            parts.push(format!("unused: {}", unused.join(", ")));
        }
        f.write_str(&parts.join("; "))
    }
}

/// Names become assembler symbols (`_mlir_ciface_<name>`) of the glue.
fn check_symbol_name(name: &str) -> Result<(), Error> {
    if crate::symbol::is_bare_identifier(name) {
        Ok(())
    } else {
        Err(Error::invalid_argument(format!(
            "cannot bind a host function to @{name:?}: fnabi binds names of the form [A-Za-z_][A-Za-z0-9_$.]*"
        )))
    }
}

/// Why a runtime function exported only under its plain name cannot be
/// reached through a shim (`None`: it can): the plain and C-interface
/// signatures coincide only for scalars with at most one scalar result.
fn shim_problem(ty: &FunctionType) -> Option<String> {
    if ty.results_packed() || ty.inputs.iter().any(MlirType::is_memref) {
        return Some("its C interface differs (memref arguments or packed results)".into());
    }
    let half = ty
        .inputs
        .iter()
        .chain(&ty.results)
        .any(|t| matches!(t, MlirType::Scalar(ElementType::Scalar(ScalarType::F16 | ScalarType::BF16))));
    half.then(|| "fnabi does not forward f16/bf16 scalars to it".into())
}

/// Declarations shared by every glue file (no system header beyond
/// `stdint.h`, so no name of the module can clash with one).
const GLUE_PRELUDE: &str = r#"/* Generated by fnabi: the module's external functions (see fnabi_mlir::externals). */
#include <stdint.h>
extern void abort(void);
extern long write(int, const void *, unsigned long);

typedef void (*fnabi_entry)(const void *ctx, const uint64_t *args, void *result);
struct fnabi_slot { fnabi_entry entry; const void *ctx; };
struct fnabi_module {
  uint32_t version, flags, count, reserved;
  struct fnabi_slot *slots;
  const char *const *names, *const *types, *const *providers;
};

static void fnabi_unbound(void) {
  static const char msg[] = "fnabi: a host function of this module is not bound (load it with fnabi)\n";
  write(2, msg, sizeof msg - 1);
  abort();
}

"#;

/// After the table: the one path from a trampoline into its slot.
const GLUE_CALL: &str = r#"static inline void fnabi_call(uint32_t k, const uint64_t *args, void *result) {
  struct fnabi_slot s = fnabi_slots[k];
  if (!s.entry) fnabi_unbound();
  s.entry(s.ctx, args, result);
}

"#;

/// The machine-level C type of a trampoline parameter.
fn c_param(t: &MlirType) -> &'static str {
    match t {
        MlirType::Scalar(e) if e.is_float() => "double",
        MlirType::Scalar(_) => "uint64_t",
        _ => "void *",
    }
}

fn trampoline(c: &mut String, k: usize, e: &External) {
    let ty = &e.ty;
    let packed = ty.results_packed();
    let ret = match (packed, ty.results.first()) {
        (false, Some(MlirType::Scalar(s))) if s.is_float() => "double",
        (false, Some(_)) => "uint64_t",
        _ => "void",
    };
    let mut params: Vec<String> = Vec::new();
    if packed {
        params.push("void *result".into());
    }
    params.extend(ty.inputs.iter().enumerate().map(|(i, t)| format!("{} a{i}", c_param(t))));
    let params = if params.is_empty() { "void".to_string() } else { params.join(", ") };
    let n = ty.inputs.len().max(1);
    let _ = writeln!(c, "/* @{}: {} */", e.name, comment_safe(&ty.to_string()));
    let _ = writeln!(
        c,
        "__attribute__((visibility(\"hidden\"))) {ret} fnabi_host_{k}({params}) __asm__(\"_mlir_ciface_{}\");",
        e.name
    );
    let _ = writeln!(c, "{ret} fnabi_host_{k}({params}) {{\n  uint64_t w[{n}] = {{0}};");
    for (i, t) in ty.inputs.iter().enumerate() {
        let _ = match c_param(t) {
            "double" => writeln!(c, "  __builtin_memcpy(&w[{i}], &a{i}, 8);"),
            "uint64_t" => writeln!(c, "  w[{i}] = a{i};"),
            _ => writeln!(c, "  w[{i}] = (uint64_t)(uintptr_t)a{i};"),
        };
    }
    let _ = match ret {
        "void" if packed => writeln!(c, "  fnabi_call({k}, w, result);\n}}\n"),
        "void" => writeln!(c, "  fnabi_call({k}, w, 0);\n}}\n"),
        "double" => writeln!(
            c,
            "  uint64_t r = 0;\n  double d;\n  fnabi_call({k}, w, &r);\n  __builtin_memcpy(&d, &r, 8);\n  return d;\n}}\n"
        ),
        _ => writeln!(c, "  uint64_t r = 0;\n  fnabi_call({k}, w, &r);\n  return r;\n}}\n"),
    };
}

/// The exact C type of a scalar (for declaring a runtime function).
fn c_exact(e: ElementType) -> &'static str {
    use ScalarType as S;
    match e {
        ElementType::I1 => "_Bool",
        ElementType::Index => "int64_t",
        // Never a scalar: the MLIR header parser refuses 8-bit float scalars.
        ElementType::Float8(_) => "uint8_t",
        // Never a scalar either: the parser refuses complex scalars.
        ElementType::Complex(c) => match c {
            fnabi_abi::ComplexType::C64 => "float _Complex",
            fnabi_abi::ComplexType::C128 => "double _Complex",
        },
        ElementType::Scalar(s) => match s {
            S::I8 => "int8_t",
            S::I16 => "int16_t",
            S::I32 => "int32_t",
            S::I64 => "int64_t",
            S::U8 => "uint8_t",
            S::U16 => "uint16_t",
            S::U32 => "uint32_t",
            S::U64 => "uint64_t",
            S::F32 => "float",
            S::F64 => "double",
            // Refused by `shim_problem`.
            S::F16 | S::BF16 => "double",
        },
    }
}

fn shim(c: &mut String, k: usize, e: &External) {
    let ty = &e.ty;
    let scalar = |t: &MlirType| match t {
        MlirType::Scalar(s) => *s,
        // Refused by `shim_problem`.
        _ => ElementType::Index,
    };
    let ret = ty.results.first().map_or("void", |t| c_exact(scalar(t)));
    let decl: Vec<&str> = ty.inputs.iter().map(|t| c_exact(scalar(t))).collect();
    let decl = if decl.is_empty() { "void".to_string() } else { decl.join(", ") };
    // Integers arrive as whole registers (LLVM does not extend them for
    // the callee); the cast lets the C compiler extend them as C requires.
    let params: Vec<String> = ty
        .inputs
        .iter()
        .enumerate()
        .map(|(i, t)| match c_exact(scalar(t)) {
            f @ ("float" | "double") => format!("{f} a{i}"),
            _ => format!("uint64_t a{i}"),
        })
        .collect();
    let params = if params.is_empty() { "void".to_string() } else { params.join(", ") };
    let args: Vec<String> =
        ty.inputs.iter().enumerate().map(|(i, t)| format!("({})a{i}", c_exact(scalar(t)))).collect();
    let name = &e.name;
    let _ = writeln!(c, "/* @{name}: {} -> the runtime's plain {name} */", comment_safe(&ty.to_string()));
    let _ = writeln!(c, "extern {ret} {name}({decl});");
    let _ = writeln!(
        c,
        "__attribute__((visibility(\"hidden\"))) {ret} fnabi_shim_{k}({params}) __asm__(\"_mlir_ciface_{name}\");"
    );
    let ret_kw = if ret == "void" { "" } else { "return " };
    let _ = writeln!(c, "{ret} fnabi_shim_{k}({params}) {{\n  {ret_kw}{name}({});\n}}\n", args.join(", "));
}

/// A C string literal: printable ASCII except `"`, `\` and `?` (trigraphs)
/// as is, everything else in octal.
fn c_string(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        if (0x20..0x7f).contains(&b) && !matches!(b, b'"' | b'\\' | b'?') {
            out.push(b as char);
        } else {
            let _ = write!(out, "\\{b:03o}");
        }
    }
    out.push('"');
    out
}

/// Text safe inside a C comment.
fn comment_safe(s: &str) -> String {
    s.replace("*/", "* /")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_functions;

    fn decls(src: &str) -> Vec<FuncDecl> {
        parse_functions(src).unwrap()
    }

    #[test]
    fn resolution_order_and_errors() {
        let src = "func.func private @h(memref<?xf32>, f32) -> (memref<?xf32>, index)\n\
                   func.func private @m(i32) -> i32\n\
                   func.func @body() { return }";
        let mut host = HostFunctions::new();
        host.register("h", |_| Ok(vec![]));
        host.register("unused", |_| Ok(vec![]));
        let e = Externals::resolve(&decls(src), &host, &RuntimeUtils::none()).unwrap();
        assert_eq!(e.all().len(), 2);
        assert_eq!(e.host_bound().map(|x| x.name.as_str()).collect::<Vec<_>>(), ["h"]);
        assert_eq!(e.missing().map(|x| x.name.as_str()).collect::<Vec<_>>(), ["m"]);
        assert!(!e.uses_runtime_utils());
        assert_eq!(e.to_string(), "provided: @h (host function); needs: @m");
        let msg = e.check().unwrap_err().to_string();
        assert_eq!(msg, "the module needs @m: (i32) -> (i32), which no host function or runtime library provides");

        // A given type must equal the declaration.
        let mut typed = HostFunctions::new();
        typed.register_typed("m", "(i64) -> i64".parse().unwrap(), |_| Ok(vec![]));
        let err = Externals::resolve(&decls(src), &typed, &RuntimeUtils::none()).unwrap_err().to_string();
        assert_eq!(err, "type of host function @m: expected (i32) -> (i32), got (i64) -> (i64)");
        typed.register_typed("m", "(i32) -> i32".parse().unwrap(), |_| Ok(vec![]));
        let ok = Externals::resolve(&decls(src), &typed, &RuntimeUtils::none()).unwrap();
        assert_eq!(ok.host_bound().count(), 1);

        // Names that cannot be assembler symbols.
        let mut weird = HostFunctions::new();
        weird.register("a b", |_| Ok(vec![]));
        let err = Externals::resolve(&decls("func.func private @\"a b\"()"), &weird, &RuntimeUtils::none());
        assert!(err.unwrap_err().to_string().contains("[A-Za-z_][A-Za-z0-9_$.]*"));

        let none = Externals::resolve(&decls("func.func @f() { return }"), &host, &RuntimeUtils::none()).unwrap();
        assert!(none.is_empty() && none.check().is_ok() && none.c_glue().is_none());
        assert_eq!(none.to_string(), "no external functions");
    }

    #[test]
    fn glue_trampolines_have_machine_level_signatures() {
        let src = "func.func private @h(memref<?xf32>, f32, i8, memref<*xi1>) -> (memref<?xf32>, index)\n\
                   func.func private @s(bf16, i64) -> f16\n\
                   func.func private @v()\n\
                   func.func private @\"x.y$z\"(index) -> ui8";
        let mut host = HostFunctions::new();
        for n in ["h", "s", "v", "x.y$z"] {
            host.register(n, |_| Ok(vec![]));
        }
        let e = Externals::resolve(&decls(src), &host, &RuntimeUtils::none()).unwrap();
        let c = e.c_glue().unwrap();
        assert!(c.contains(
            "__attribute__((visibility(\"hidden\"))) void fnabi_host_0(void *result, void * a0, double a1, uint64_t a2, \
             void * a3) __asm__(\"_mlir_ciface_h\");"
        ));
        assert!(c.contains("  __builtin_memcpy(&w[1], &a1, 8);\n  w[2] = a2;\n  w[3] = (uint64_t)(uintptr_t)a3;"));
        assert!(c.contains("double fnabi_host_1(double a0, uint64_t a1) {"), "{c}");
        assert!(c.contains("void fnabi_host_2(void) {\n  uint64_t w[1] = {0};\n  fnabi_call(2, w, 0);"));
        assert!(c.contains("uint64_t fnabi_host_3(uint64_t a0) __asm__(\"_mlir_ciface_x.y$z\");"));
        assert!(c.contains("\"(memref<\\077xf32>, f32, i8, memref<*xi1>) -> (memref<\\077xf32>, index)\""));
        assert!(c.contains("fnabi_module_v1 = {\n  1, 0, 4, 0,"));
    }

    #[test]
    fn strings_and_shim_rules() {
        assert_eq!(c_string("a\"b\\c?\n"), "\"a\\042b\\134c\\077\\012\"");
        assert_eq!(comment_safe("a*/b"), "a* /b");
        let t = |s: &str| s.parse::<FunctionType>().unwrap();
        assert_eq!(shim_problem(&t("(f32, i64) -> ()")), None);
        assert_eq!(shim_problem(&t("() -> f64")), None);
        assert!(shim_problem(&t("(memref<*xf32>) -> ()")).unwrap().contains("C interface differs"));
        assert!(shim_problem(&t("() -> (i32, i32)")).unwrap().contains("C interface differs"));
        assert!(shim_problem(&t("(f16) -> ()")).unwrap().contains("f16/bf16"));
        assert!(check_symbol_name("_ok.name$1").is_ok());
        assert!(check_symbol_name("1bad").is_err());
        assert!(check_symbol_name("").is_err());
    }
}
