//! Calling public functions with `vector<…>` arguments or results: the
//! wrapper function fnabi adds to the module, which takes and returns each
//! vector as a static memref of the same shape.
//!
//! MLIR lowers a `vector<4xf32>` argument to an LLVM vector passed by value
//! in registers (split across several for wide vectors, as LLVM's own
//! legalization decides), which no C signature describes. So for each such
//! function `@f` (see [`VectorEntry`](fnabi_abi::mlir::VectorEntry)) fnabi inserts, right after its body
//! and on the same line (the user's line numbers do not move), a function
//! `@_fnabi_vector_f` whose vector arguments are `memref`s (read with
//! `vector.transfer_read`), whose vector results are new `memref`s
//! (allocated, written with `vector.transfer_write`, owned by the caller),
//! and whose other arguments and results are `@f`'s own; the host calls the
//! wrapper, typed as [`FuncDecl::ty`] says (vectors as memrefs). `i1`
//! vectors travel as bytes (`memref<…xi8>`, one per element as fnabi's bool
//! arrays hold them) and are truncated or extended in the wrapper.
//!
//! ```
//! use fnabi_abi::mlir::signature::scan_functions;
//! let src = "func.func @neg(%v: vector<4xi1>) -> vector<4xi1> {\n  %t = arith.constant dense<true> : vector<4xi1>\n  %r = arith.xori %v, %t : vector<4xi1>\n  return %r : vector<4xi1>\n}";
//! let f = &scan_functions(src).unwrap().decls[0];
//! let w = fnabi_mlir::vector_entry::wrapper(f).unwrap();
//! assert!(w.starts_with(" func.func @_fnabi_vector_neg(%a0: memref<4xi8>) -> (memref<4xi8>) {"), "{w}");
//! assert!(!w.contains('\n'));
//! ```

use crate::symbol::symbol_ref;
use fnabi_abi::mlir::signature::FuncDecl;

/// The wrapper's symbol for function `name`.
///
/// ```
/// assert_eq!(fnabi_mlir::vector_entry::wrapper_name("f"), "_fnabi_vector_f");
/// ```
pub fn wrapper_name(name: &str) -> String {
    format!("_fnabi_vector_{name}")
}

/// A vector type's shape and element: `vector<2x3xf32>` → `(["2", "3"], "f32")`.
fn vector_parts(ty: &str) -> Option<(Vec<&str>, &str)> {
    let mut rest = ty.trim().strip_prefix("vector")?.trim_start().strip_prefix('<')?.strip_suffix('>')?.trim();
    let mut dims = Vec::new();
    // Dims are digit runs each followed by `x`; the element type is the rest
    // (`index` has an `x` of its own).
    loop {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match rest[digits..].trim_start().strip_prefix('x') {
            Some(after) if digits > 0 => {
                dims.push(&rest[..digits]);
                rest = after.trim_start();
            }
            _ => break,
        }
    }
    (!rest.is_empty()).then_some((dims, rest))
}

/// `KIND<dims x element>` text (`memref<2x3xf32>`, `vector<4xi8>`).
fn shaped(kind: &str, dims: &[&str], element: &str) -> String {
    let mut t = format!("{kind}<");
    for d in dims {
        t.push_str(d);
        t.push('x');
    }
    t.push_str(element);
    t.push('>');
    t
}

/// The text of the memref a vector travels as, and the element type the
/// memref holds (`i8` for `i1`).
fn memref_of(dims: &[&str], element: &str) -> (String, String) {
    let stored = if element == "i1" { "i8" } else { element };
    (shaped("memref", dims, stored), stored.to_owned())
}

/// `vector<dims x element>` text.
fn vector_text(dims: &[&str], element: &str) -> String {
    shaped("vector", dims, element)
}

/// `[%c0, %c0]` for `rank` indices and the `in_bounds` attribute (none for 0-d).
fn indices(rank: usize) -> (String, String) {
    if rank == 0 {
        return ("[]".into(), String::new());
    }
    let idx = vec!["%c0"; rank].join(", ");
    let ib = vec!["true"; rank].join(", ");
    (format!("[{idx}]"), format!(" {{in_bounds = [{ib}]}}"))
}

/// The wrapper text for `f` (to insert right after its body), or `None`
/// when it has no vectors (or a type the wrapper cannot spell).
pub fn wrapper(f: &FuncDecl) -> Option<String> {
    let e = f.vector_entry.as_ref()?;
    let mut params = Vec::new();
    let mut body = vec!["%c0 = arith.constant 0 : index".to_owned()];
    let mut call_args = Vec::new();
    for (i, (ty, &vector)) in e.input_types.iter().zip(&e.input_vectors).enumerate() {
        if !vector {
            let read_only =
                if ty.trim_start().starts_with("tensor") { " {bufferization.writable = false}" } else { "" };
            params.push(format!("%a{i}: {ty}{read_only}"));
            call_args.push(format!("%a{i}"));
            continue;
        }
        let (dims, element) = vector_parts(ty)?;
        let (memref, stored) = memref_of(&dims, element);
        let (idx, in_bounds) = indices(dims.len());
        let pad = if stored.starts_with('i') || stored == "index" { "0" } else { "0.0" };
        params.push(format!("%a{i}: {memref}"));
        body.push(format!("%p{i} = arith.constant {pad} : {stored}"));
        let read = vector_text(&dims, &stored);
        body.push(format!("%t{i} = vector.transfer_read %a{i}{idx}, %p{i}{in_bounds} : {memref}, {read}"));
        if element == "i1" {
            body.push(format!("%v{i} = arith.trunci %t{i} : {read} to {ty}"));
            call_args.push(format!("%v{i}"));
        } else {
            call_args.push(format!("%t{i}"));
        }
    }
    let n = e.result_types.len();
    let call = format!(
        "func.call {}({}) : ({}) -> ({})",
        symbol_ref(&f.name),
        call_args.join(", "),
        e.input_types.join(", "),
        e.result_types.join(", ")
    );
    body.push(match n {
        0 => call,
        1 => format!("%r = {call}"),
        _ => format!("%r:{n} = {call}"),
    });
    let mut returns = Vec::new();
    let mut return_types = Vec::new();
    for (j, (ty, &vector)) in e.result_types.iter().zip(&e.result_vectors).enumerate() {
        let r = if n == 1 { "%r".to_owned() } else { format!("%r#{j}") };
        if !vector {
            returns.push(r);
            return_types.push(ty.clone());
            continue;
        }
        let (dims, element) = vector_parts(ty)?;
        let (memref, stored) = memref_of(&dims, element);
        let (idx, in_bounds) = indices(dims.len());
        let value = if element == "i1" {
            let wide = vector_text(&dims, &stored);
            body.push(format!("%w{j} = arith.extui {r} : {ty} to {wide}"));
            format!("%w{j}")
        } else {
            r
        };
        body.push(format!("%m{j} = memref.alloc() : {memref}"));
        body.push(format!(
            "vector.transfer_write {value}, %m{j}{idx}{in_bounds} : {}, {memref}",
            vector_text(&dims, &stored)
        ));
        returns.push(format!("%m{j}"));
        return_types.push(memref);
    }
    body.push(if returns.is_empty() {
        "return".to_owned()
    } else {
        format!("return {} : {}", returns.join(", "), return_types.join(", "))
    });
    Some(format!(
        " func.func {}({}) -> ({}) {{ {} }}",
        symbol_ref(&wrapper_name(&f.name)),
        params.join(", "),
        return_types.join(", "),
        body.join(" ")
    ))
}
