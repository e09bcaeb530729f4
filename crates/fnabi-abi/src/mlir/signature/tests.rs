use super::*;
use crate::mlir::types::MlirType;

fn err(src: &str) -> (usize, usize, String) {
    match parse_functions(src).unwrap_err() {
        HeaderError::Syntax { line, column, message, .. } => (line, column, message),
        e => panic!("not a syntax error: {e}"),
    }
}

#[test]
fn reads_headers_and_skips_bodies() {
    let src = r#"
// func.func @in_comment() -> ()
module attributes { x = "func.func @in_string" } {
  func.func @a(%x: memref<4x?xbf16>, %y: memref<*xi1>, %z: index {llvm.noalias}) -> (memref<2xf64, strided<[?], offset: ?>>, i32) attributes {llvm.emit_c_interface, iree.reflection = {sip = "I1!R1!", sipv = 1 : i32, other = [1, 2], m = affine_map<(d0) -> (d0)>}} {
    %s = "some.op"() {text = "} not a brace"} : () -> i32  // } in a comment
    func.call @b() : () -> ()
    return
  }
  func.func nested @b()
  func.func public @"quoted name"(ui64, si8) -> memref<f32, strided<[]>>
}
"#;
    let fns = parse_functions(src).unwrap();
    assert_eq!(fns.len(), 3);
    let a = &fns[0];
    assert_eq!((a.line, a.column), (4, 3));
    assert_eq!(a.name, "a");
    assert!(a.has_body && a.emits_c_interface());
    assert_eq!(
        a.ty.to_string(),
        "(memref<4x?xbf16>, memref<*xi1>, index) -> (memref<2xf64, strided<[?], offset: ?>>, i32)"
    );
    assert_eq!(
        a.ty.to_raw().to_string(),
        "(Buffer<bfloat16[4x?]>, Unrecognized<?>, sint64) -> (Buffer<float64[2]>, sint32)"
    );
    let abi = a.abi_attributes().unwrap();
    assert_eq!(abi.sip_signature_str(), Some("I1!R1!"));
    let Some(AttrValue::Dict(r)) = a.attribute("iree.reflection") else { panic!() };
    assert_eq!(r[2], ("other".to_string(), AttrValue::Other("[1, 2]".into())));
    assert_eq!(r[3].1, AttrValue::Other("affine_map<(d0) -> (d0)>".into()));
    assert_eq!((fns[1].visibility, fns[1].has_body), (Visibility::Nested, false));
    assert_eq!(fns[2].name, "quoted name");
    assert_eq!(fns[2].ty.to_string(), "(ui64, i8) -> (memref<f32, strided<[]>>)");
    assert!(find_function(src, "zz").unwrap_err().to_string().contains("it has: a, b, quoted name"));
}

#[test]
fn abi_attributes_merge_and_conflict() {
    let f = |attrs: &str| parse_functions(&format!("func.func @f() attributes {{{attrs}}}")).unwrap().remove(0);
    let a = f(r#"fv = "1", f = "I1!R1!", iree.reflection = {fv = 1, f = "I1!R1!"}"#).abi_attributes().unwrap();
    assert_eq!(a.raw_version(), Some(1));
    let e = f(r#"fv = "1", f = "I1!R1!", iree.reflection = {f = "I4!B1!R1!"}"#).abi_attributes().unwrap_err();
    assert!(e.to_string().contains("given twice with different values"), "{e}");
    let e = f(r#"iree.reflection = "x""#).abi_attributes().unwrap_err();
    assert_eq!(e.to_string(), "ABI attributes: iree.reflection is not a dictionary");
    let e = f(r#"sip = [1]"#).abi_attributes().unwrap_err();
    assert_eq!(e.to_string(), "ABI attributes: attribute sip is not a string or an integer");
    let a = f(r#"s = "\22q\5C\n", b = true, n = -7 : i64, u"#);
    assert_eq!(a.attribute("s"), Some(&AttrValue::Str("\"q\\\n".into())));
    assert_eq!(a.attribute("b"), Some(&AttrValue::Int(1)));
    assert_eq!(a.attribute("n"), Some(&AttrValue::Int(-7)));
    assert_eq!(a.attribute("u"), Some(&AttrValue::Unit));
}

#[test]
fn errors_have_line_and_column() {
    assert_eq!(
        err("module {\n  func.func @f(%a: vector<4xf32>)\n}"),
        (2, 20, "unsupported type `vector` (fnabi passes tensor<…>, memref<…>, memref<*x…>, i1, i8, i16, i32, i64, index, f16, bf16, f32, f64 and si/ui integers)".into())
    );
    assert_eq!(
        err("func.func @f(memref<4xf32, affine_map<(d0) -> (d0)>>)").2,
        "affine_map memref layouts are not supported (use strided<[…], offset: …>)"
    );
    assert_eq!(
        err("func.func @f(memref<4xf32, 1>)").2,
        "memref memory spaces other than 0 are not supported (host memory only)"
    );
    assert!(parse_functions("func.func @f(memref<4xf32, 0>)").is_ok());
    assert_eq!(err("func.func @f(memref<4xf7>)").2, "unsupported memref element type `f7`");
    assert_eq!(err("func.func @f(memref<4>)").2, "expected `x` after a memref dimension, found `>)`");
    assert_eq!(err("func.func @f(memref<4x>)").2, "expected a memref element type, found `>)`");
    assert_eq!(
        err("func.func @f(memref<4xf32, strided<[1, 1]>>)").2,
        "strided layout has 2 strides for a rank-1 memref"
    );
    assert_eq!(err("func.func @f(memref<99999999999xf32>)").2, "dimension exceeds 2147483647");
    assert_eq!(err("func.func @f(i32 i32)").2, "expected `,` or `)` in the argument list, found `i32)`");
    assert_eq!(err("func.func f()").2, "expected `@`, found `f()`");
    assert_eq!(err("func.func @f() {\n  %0 = \"x\n}"), (2, 8, "string literal is not terminated on its line".into()));
    assert_eq!(err("func.func @f() {\n  { ").0, 1);
    assert_eq!(err("func.func @f() attributes {a = \"\\q\"}").2, "unknown escape in string literal");
    assert_eq!(err("func.func @f() attributes {a = [1)}").2, "unbalanced `)`");
    let deep = format!("func.func @f() {}", "{".repeat(MAX_NESTING + 1));
    assert!(err(&deep).2.contains("nest deeper"));
    let deep = format!("func.func @f() attributes {}", "{a = ".repeat(MAX_NESTING + 1));
    assert!(err(&deep).2.contains("nest deeper"));
}

#[test]
fn tensors_read_as_their_bufferized_memrefs() {
    let t: FunctionType = "(tensor<?x4xf32>, tensor<i1>, tensor<*xf16>, f32) -> tensor<2xbf16>".parse().unwrap();
    assert_eq!(t.to_string(), "(memref<?x4xf32>, memref<i1>, memref<*xf16>, f32) -> (memref<2xbf16>)");
    assert_eq!(
        err("func.func @f(%a: tensor<4xf32, #sparse>)").2,
        "tensor encodings (sparse tensors, …) are not supported"
    );
    assert_eq!(err("func.func @f(%a: tensor<4xf7>)").2, "unsupported tensor element type `f7`");
}

/// MLIR takes space (and comments) around a shape's `x`, as `mlir-opt`
/// does (it prints them without): the same types.
#[test]
fn space_around_shape_x_reads_as_mlir_reads_it() {
    let spaced: FunctionType =
        "(tensor<4 x ? x f32>, memref<* x i8>, memref<2 x\n 3xi32, strided<[3, 1]>>) -> tensor<1 x // one\n i1>"
            .parse()
            .unwrap();
    let plain: FunctionType =
        "(tensor<4x?xf32>, memref<*xi8>, memref<2x3xi32, strided<[3, 1]>>) -> tensor<1xi1>".parse().unwrap();
    assert_eq!(spaced, plain);
    let f = &scan_functions("func.func @v(%v: vector<2 x 3 x f32>) -> vector<6 x i8> {\n}").unwrap().decls[0];
    assert_eq!(f.ty.to_string(), "(memref<2x3xf32>) -> (memref<6xi8>)");
    // Still an error: no `x` at all.
    assert_eq!(err("func.func @f(%a: tensor<4 f32>)").2, "expected `x` after a tensor dimension, found `f32>)`");
}

#[test]
fn lenient_scan_skips_untypable_functions_and_marks_tensor_arguments_read_only() {
    let src = "func.func @v(%a: vector<4xf32>) -> vector<4xf32> {\n  return %a : vector<4xf32>\n}\n\
               func.func private @pv(%a: vector<4xf32>) { }\n\
               func.func @sv(%a: vector<[4]xf32>) { }\n\
               func.func @t(%a: tensor<4xf32>, %b: tensor<?xi8> {foo}, %c: tensor<2xf32> {}, \
               %d: tensor<2xf32> {bufferization.writable = true}, %s: f32) -> tensor<4xf32> { }\n\
               func.func private @p(%a: tensor<4xf32>) { }\n\
               func.func @decl(tensor<4xf32>)\n";
    assert!(parse_functions(src).is_err());
    let s = scan_functions(src).unwrap();
    let names: Vec<&str> = s.decls.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["v", "t", "p", "decl"]);
    // A public vector function is read with its vectors as static memrefs;
    // a private one and a scalable vector are left out, saying why.
    assert_eq!(s.decls[0].ty.to_string(), "(memref<4xf32>) -> (memref<4xf32>)");
    let e = s.decls[0].vector_entry.as_ref().unwrap();
    assert_eq!((e.input_vectors.as_slice(), e.result_vectors.as_slice()), (&[true][..], &[true][..]));
    assert_eq!(&src[e.body_end - 2..e.body_end + 1], "\n}\n");
    assert!(s.decls[1..].iter().all(|d| d.vector_entry.is_none()));
    let skipped: Vec<(&str, String)> = s.skipped.iter().map(|(n, e)| (n.as_str(), e.to_string())).collect();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert!(skipped[0].0 == "pv" && skipped[0].1.contains("public functions with a body only"), "{skipped:?}");
    assert!(skipped[1].0 == "sv" && skipped[1].1.contains("scalable vectors"), "{skipped:?}");
    let out = s.read_only_source(src);
    assert!(out.contains(
        "@t(%a: tensor<4xf32> {bufferization.writable = false}, %b: tensor<?xi8> {bufferization.writable = false, foo}, \
         %c: tensor<2xf32> {bufferization.writable = false}, %d: tensor<2xf32> {bufferization.writable = true}, %s: f32)"
    ), "{out}");
    assert!(out.contains("@p(%a: tensor<4xf32>)") && out.contains("@decl(tensor<4xf32>)"), "{out}");
    assert_eq!(out.lines().count(), src.lines().count());
    // What the compiled functions cannot write: the vector (the wrapper
    // reads it), the tensors marked read-only (not `%d`, declared
    // writable); nothing of a function that is not compiled so.
    let read_only: Vec<&[bool]> = s.decls.iter().map(|d| d.read_only_inputs.as_slice()).collect();
    assert_eq!(read_only, [&[true][..], &[true, true, true, false, false], &[false], &[false]]);
    let m = parse_functions("func.func @m(%a: memref<4xf32>, %b: tensor<4xf32> {bufferization.writable = false}) { }")
        .unwrap();
    assert_eq!(m[0].read_only_inputs, [false, true]);
}

#[test]
fn function_type_strings() {
    let t: FunctionType = "(memref<2x3xf32, strided<[1, 2]>>) -> memref<*xi8>".parse().unwrap();
    assert_eq!(t.to_string(), "(memref<2x3xf32, strided<[1, 2]>>) -> (memref<*xi8>)");
    assert!(t.results_packed());
    assert!(!"(f32) -> f32".parse::<FunctionType>().unwrap().results_packed());
    assert!("(f32) -> f32 x".parse::<FunctionType>().is_err());
    assert!("(f32)".parse::<FunctionType>().is_err());
    assert_eq!(
        "memref<?xf32, strided<[-2], offset: 5>>".parse::<MlirType>().unwrap().to_string(),
        "memref<?xf32, strided<[-2], offset: 5>>"
    );
    assert!("i32 i32".parse::<MlirType>().is_err());
}

#[test]
fn complex_elements() {
    let src = "func.func @c(%a: tensor<?xcomplex<f32>>, %b: memref<2x?xcomplex<f64>>) -> tensor<complex<f64>>";
    let f = &parse_functions(src).unwrap()[0];
    assert_eq!(f.ty.to_string(), "(memref<?xcomplex<f32>>, memref<2x?xcomplex<f64>>) -> (memref<complex<f64>>)");
    // The raw ABI has no complex type code.
    assert_eq!(f.ty.to_raw().to_string(), "(Unrecognized<?>, Unrecognized<?>) -> (Unrecognized<?>)");
    let MlirType::MemRef(m) = &f.ty.inputs[0] else { panic!("a memref") };
    assert_eq!((m.element.size(), m.element.dtype()), (8, crate::scalar::DType::C64));
    assert_eq!(
        err("func.func @s(%x: complex<f64>)"),
        (1, 18, "a complex scalar (`complex<f64>`) is not supported: pass it as a 0-d tensor<complex<f64>> or memref<complex<f64>>".into())
    );
    assert_eq!(
        err("func.func @h(%x: tensor<4xcomplex<f16>>)"),
        (1, 35, "unsupported complex element `complex<f16>` (fnabi passes complex<f32> and complex<f64>)".into())
    );
    assert_eq!(err("func.func @u(%x: memref<4xcomplex<f32>)").2, "expected `>` closing the memref type, found `)`");
}
